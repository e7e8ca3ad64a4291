#!/usr/bin/env bash
# make test-release: `make images PUSH=1` against a registry (RELEASE_TEST_REGISTRY, else a docker-registry process
# on loopback), checked by tools/stack/src/release/images.release.test.ts. The images build on the Dockerfile's Node
# image, or on the local stand-in when no registry answers for it (scripts/compose/env.sh decides, as for compose).
set -euo pipefail
source "$(dirname "$0")/compose/env.sh"
npx vitest run --project release --reporter=verbose
