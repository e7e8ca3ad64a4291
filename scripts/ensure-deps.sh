#!/usr/bin/env bash
# Installs node_modules from the lock file when they are missing, older than the lock or installed by a Node of
# another ABI (native addons are built for one).
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=node_modules/.humanpass-installed
abi="node-abi $(node -p process.versions.modules)"
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ "$(cat "$stamp")" != "$abi" ]; then
  echo "deps: npm ci ($(node -v))" >&2
  npm ci --no-audit --no-fund --loglevel=error
  echo "$abi" >"$stamp"
fi
