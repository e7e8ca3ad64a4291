#!/usr/bin/env bash
# make compose-down: removes the stack's containers, network and volumes, then stops the engine if compose-up
# started it (scripts/compose/engine.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
if timeout 5 docker info >/dev/null 2>&1; then
  COMPOSE_CMD="$(bash scripts/compose/engine.sh compose-cmd)"
  $COMPOSE_CMD -p "${COMPOSE_PROJECT_NAME:-humanpass}" down --volumes --remove-orphans --timeout 20
fi
rm -f "${HUMANPASS_STACK_FILE:-.run/compose-stack.json}"
bash scripts/compose/engine.sh stop
