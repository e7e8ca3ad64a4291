#!/usr/bin/env bash
# make images: builds the six service images the way the prod overlay pins them, from the Dockerfile, each tagged
# <REGISTRY>/<service>:<VERSION> and <REGISTRY>/<service>:<VERSION>-<commit>, labelled with both (OCI labels
# org.opencontainers.image.version/revision), and writes a CycloneDX SBOM of each image's Node packages
# (CycloneDX's cyclonedx-npm run inside the image, on what it installed) to .run/images/. With PUSH=1 it pushes
# them and prints the values.env lines of the prod overlay (IMAGE_…=<repository>:<VERSION>@sha256:<digest>): a
# digest exists only once a registry holds the image, so without PUSH it prints the local image ids, which no
# cluster can pull by.
#   VERSION   default: package.json's version        REGISTRY  default: registry.humanpass.example/humanpass
#   NODE_IMAGE  the Dockerfile's base (default: its ARG; a local stand-in where no registry answers)
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "images: $*" >&2; }

VERSION="${VERSION:-$(node -p 'require("./package.json").version')}"
REGISTRY="${REGISTRY:-registry.humanpass.example/humanpass}"
REVISION="$(git rev-parse HEAD)"
COMMIT="$(git rev-parse --short=12 HEAD)"
# An image built from uncommitted changes must not pass for the commit: its revision says so.
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  REVISION="$REVISION-dirty"
  COMMIT="$COMMIT-dirty"
  say "the working tree has uncommitted changes: tagging ${COMMIT}"
fi
NODE_IMAGE="${NODE_IMAGE:-$(sed -n 's/^ARG NODE_IMAGE=//p' Dockerfile)}"
# A release is built on the base it names, never silently on another: where the engine neither has nor can pull it,
# stop and say how to name one.
if ! docker image inspect "$NODE_IMAGE" >/dev/null 2>&1 && ! docker pull -q "$NODE_IMAGE" >/dev/null 2>&1; then
  say "the base image ${NODE_IMAGE} is neither in the engine nor pullable; set NODE_IMAGE to a Node $(cut -d. -f1 .node-version) image you have (deploy/local-images/build.sh builds a stand-in, humanpass-local/node:<major>)"
  exit 1
fi
SERVICES=(verifier chain-indexer attestations-api agent-auth payment-gateway webhooks)
# Pinned: the SBOM's shape is part of what a release hands over.
CYCLONEDX_NPM_VERSION=6.0.1
out=.run/images
mkdir -p "$out"

for service in "${SERVICES[@]}"; do
  say "building ${service} ${VERSION} (${COMMIT}) on ${NODE_IMAGE}"
  docker build -q \
    --build-arg SERVICE="$service" --build-arg VERSION="$VERSION" --build-arg REVISION="$REVISION" \
    --build-arg NODE_IMAGE="$NODE_IMAGE" \
    -t "$REGISTRY/$service:$VERSION" -t "$REGISTRY/$service:$VERSION-$COMMIT" . >/dev/null
  # CycloneDX's own npm tool, not `npm sbom`: npm refuses to describe a tree with an edge it calls invalid, and ours
  # has two it tolerates at install (the root's ajv override; utf-8-validate 6 hoisted where an old ws asks for 5 as
  # an optional peer), which --ignore-npm-errors lets through, the versions installed recorded as they are. As root
  # in a throwaway container (npx wants a writable cache, kept in a volume between images); the image is untouched.
  docker run --rm --user 0 --entrypoint npx -w /app -v humanpass-sbom-npm-cache:/tmp/npm \
    -e npm_config_cache=/tmp/npm -e npm_config_update_notifier=false "$REGISTRY/$service:$VERSION" \
    --yes "@cyclonedx/cyclonedx-npm@${CYCLONEDX_NPM_VERSION}" --omit dev --ignore-npm-errors \
    --output-format JSON --output-file - >"$out/$service-$VERSION.cdx.json" 2>"$out/$service-$VERSION.cdx.log"
done

say "SBOMs (CycloneDX, the Node packages of each image; not the base image's Debian packages): $out/*-$VERSION.cdx.json"
for service in "${SERVICES[@]}"; do
  key="IMAGE_$(echo "$service" | tr 'a-z-' 'A-Z_')"
  if [ "${PUSH:-0}" = 1 ]; then
    docker push -q "$REGISTRY/$service:$VERSION" >/dev/null
    docker push -q "$REGISTRY/$service:$VERSION-$COMMIT" >/dev/null
    digest="$(docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$REGISTRY/$service:$VERSION" |
      grep -m1 "^$REGISTRY/$service@" | cut -d@ -f2)"
    echo "$key=$REGISTRY/$service:$VERSION@$digest"
  else
    echo "# $key: $REGISTRY/$service:$VERSION is image $(docker image inspect --format '{{.Id}}' "$REGISTRY/$service:$VERSION") (PUSH=1 pushes it and prints its digest)"
  fi
done
if [ "${PUSH:-0}" = 1 ]; then echo "RELEASE=$VERSION"; fi
