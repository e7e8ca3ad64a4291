#!/usr/bin/env bash
# Installs node_modules from the lock file when they are missing, older than the lock or installed by a Node of
# another ABI (native addons are built for one), and a compose command.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=node_modules/.humanpass-installed
abi="node-abi $(node -p process.versions.modules)"
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ "$(cat "$stamp")" != "$abi" ]; then
  echo "deps: npm ci ($(node -v))" >&2
  npm ci --no-audit --no-fund --loglevel=error
  echo "$abi" >"$stamp"
fi
# `make lint` has compose itself read docker-compose.yml: Debian's docker-compose (1.29) unless a compose exists.
if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null; then
  echo "deps: installing Debian's docker-compose" >&2
  bash scripts/compose/engine.sh compose-cmd >/dev/null ||
    echo "deps: could not install docker-compose; the deploy validation will say what it misses" >&2
fi
