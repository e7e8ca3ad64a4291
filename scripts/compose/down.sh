#!/usr/bin/env bash
# make compose-down: removes the stack's containers, network and volumes. The engine is the user's: left running.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
if timeout 10 docker info >/dev/null 2>&1; then
  if docker compose version >/dev/null 2>&1; then COMPOSE_CMD="docker compose"; else COMPOSE_CMD="docker-compose"; fi
  # With the cluster's file too, so that its NATS nodes' volumes go as well when `CLUSTER=1` started it.
  COMPOSE_FILE="docker-compose.yml:docker-compose.cluster.yml" $COMPOSE_CMD -p "${COMPOSE_PROJECT_NAME:-humanpass}" down --volumes --remove-orphans --timeout 20
fi
rm -f "${HUMANPASS_STACK_FILE:-.run/compose-stack.json}"
