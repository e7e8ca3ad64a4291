#!/usr/bin/env bash
# make test-compose-cluster: the stack in containers with NATS as a 3-node JetStream cluster and every stream at 3
# replicas (docker-compose.yml + docker-compose.cluster.yml), one replica of each service, as its own compose project
# (humanpass-cluster-test, ports 1xxxx on 127.0.0.1 and its own subnet, so it runs beside make test-compose, make up
# and make compose-up); then tools/stack/src/compose-test/nats-cluster.compose.test.ts: NATS leaders killed and a
# node paused under a workload, each fault's figures logged, then the compose test's invariants. The project is
# removed again whatever the outcome (KEEP_STACK=1 leaves it up to look at).
set -euo pipefail
export COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-humanpass-cluster-test}"
export COMPOSE_FILE="docker-compose.yml:docker-compose.cluster.yml"
export HUMANPASS_STACK_FILE=".run/compose-cluster-test-stack.json"
export COMPOSE_SUBNET="${COMPOSE_SUBNET:-172.30.78.0/24}"
# Below Linux's ephemeral range (32768-60999), as make test-compose's: no test server on a free port can hold one.
export POSTGRES_PORT=15432 NATS_PORT=14222 NATS_MONITOR_PORT=18222 DEVNET_PORT=18545 OTLP_GRPC_PORT=14317 \
  OTLP_HTTP_PORT=14318 JAEGER_UI_PORT=17686 VERIFIER_PORT=18080 ATTESTATIONS_API_PORT=18081 AGENT_AUTH_PORT=18082 \
  CHAIN_INDEXER_PORT=18083 PAYMENT_GATEWAY_PORT=14021 WEBHOOKS_PORT=18084 FACILITATOR_PORT=14022 PROMETHEUS_PORT=19090
# The workload comes from one address, through one proxy: no rate limit in its way.
export RATE_LIMIT_MAX=1000000
export VERIFIER_HOST_URL=http://127.0.0.1:18080 AGENT_AUTH_PUBLIC_URL=http://127.0.0.1:18082 PAYMENT_GATEWAY_PUBLIC_URL=http://127.0.0.1:14021
source "$(dirname "$0")/env.sh"
mkdir -p .run
cleanup() {
  [ "${KEEP_STACK:-0}" = 1 ] && return 0
  compose down --volumes --remove-orphans --timeout 10 >/dev/null 2>&1 || true
  rm -f "$HUMANPASS_STACK_FILE"
}
trap cleanup EXIT
compose down --volumes --remove-orphans --timeout 10 >/dev/null 2>&1 || true
REPLICAS="${REPLICAS:-1}" bash scripts/compose/up.sh
npx vitest run --project compose-cluster --reporter=verbose
