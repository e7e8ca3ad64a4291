#!/usr/bin/env bash
# Installs node_modules from the lock file when they are missing or older than the lock.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=node_modules/.humanpass-installed
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ]; then
  echo "deps: npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error
  touch "$stamp"
fi
