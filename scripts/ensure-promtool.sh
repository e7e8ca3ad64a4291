#!/usr/bin/env bash
# Prints the path of a `promtool` (Prometheus' rule checker and rule unit tester), fetching one when none is found:
# PROMTOOL when set, else the machine's own, else the one unpacked under .run/prometheus, else Debian's `prometheus`
# package downloaded with `apt-get download` and unpacked there with `dpkg-deb -x`. Unpacking rather than installing
# needs no root and starts no Prometheus server (the package's service would listen on :9090).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'promtool: %s\n' "$*" >&2; }
local_bin="$PWD/.run/prometheus/usr/bin/promtool"

if [ -n "${PROMTOOL:-}" ]; then
  [ -x "$PROMTOOL" ] || { say "PROMTOOL=$PROMTOOL is not an executable"; exit 1; }
  echo "$PROMTOOL"; exit 0
fi
if command -v promtool >/dev/null; then command -v promtool; exit 0; fi
if [ -x "$local_bin" ]; then echo "$local_bin"; exit 0; fi

if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
  say "not found, and this machine has no apt-get/dpkg-deb to fetch Debian's prometheus package."
  say "Install promtool yourself (it comes with every Prometheus release) and put it on PATH, or set PROMTOOL."
  exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
say "fetching Debian's prometheus package (apt-get download) into .run/prometheus"
# apt's sandbox user cannot write to a directory mktemp made for root: the download is done as the caller instead.
if ! (cd "$work" && apt-get download -q -o APT::Sandbox::User=root prometheus >/dev/null 2>"$work/err"); then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -q >/dev/null 2>&1 || true
    (cd "$work" && apt-get download -q -o APT::Sandbox::User=root prometheus >/dev/null 2>"$work/err") ||
      { cat "$work/err" >&2; say "apt-get download prometheus failed"; exit 1; }
  else
    cat "$work/err" >&2
    say "apt-get download prometheus failed (an apt-get update as root may be needed first)"
    exit 1
  fi
fi
mkdir -p .run/prometheus
dpkg-deb -x "$work"/prometheus_*.deb .run/prometheus
"$local_bin" --version >/dev/null
echo "$local_bin"
