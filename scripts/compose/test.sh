#!/usr/bin/env bash
# make test-compose: the whole stack in containers as its own compose project (humanpass-test, ports 2xxxx on
# 127.0.0.1, so it runs beside `make up` and `make compose-up`), 2 replicas of every service, then the fault suite
# (tools/stack/src/compose-test/faults.compose.test.ts): the demo, one test per fault under a workload (each asking
# Prometheus for the alert it should raise), one test per invariant. The project is removed again whatever the outcome (KEEP_STACK=1 leaves it up to look at).
set -euo pipefail
export COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-humanpass-test}"
export HUMANPASS_STACK_FILE=".run/compose-test-stack.json"
# Below Linux's ephemeral range (32768-60999): no test server on a free port, nor any outgoing connection, can hold
# one of them when compose binds it.
export POSTGRES_PORT=25432 NATS_PORT=24222 NATS_MONITOR_PORT=28222 DEVNET_PORT=28545 OTLP_GRPC_PORT=24317 \
  OTLP_HTTP_PORT=24318 JAEGER_UI_PORT=26686 VERIFIER_PORT=28080 ATTESTATIONS_API_PORT=28081 AGENT_AUTH_PORT=28082 \
  CHAIN_INDEXER_PORT=28083 PAYMENT_GATEWAY_PORT=24021 WEBHOOKS_PORT=28084 FACILITATOR_PORT=24022 PROMETHEUS_PORT=29090
# The workload and the checks come from one address, through one proxy: no rate limit in their way.
export RATE_LIMIT_MAX=1000000
# The indexer's backlog one block per range: many commits, so the kill during its backfill lands between two.
export CHAIN_INDEXER_BLOCK_RANGE=1
export VERIFIER_HOST_URL=http://127.0.0.1:28080 AGENT_AUTH_PUBLIC_URL=http://127.0.0.1:28082 PAYMENT_GATEWAY_PUBLIC_URL=http://127.0.0.1:24021
source "$(dirname "$0")/env.sh"
# The alert rules with every `for:` at 5 s, so that an alert fires while the fault that should raise it lasts.
mkdir -p .run
npm run -s observability -w @humanpass/deploy-validate -- rules-with-for .run/compose-test-alerts.yml 5s
export PROMETHEUS_RULES_FILE="$PWD/.run/compose-test-alerts.yml"
cleanup() {
  [ "${KEEP_STACK:-0}" = 1 ] && return 0
  compose down --volumes --remove-orphans --timeout 10 >/dev/null 2>&1 || true
  rm -f "$HUMANPASS_STACK_FILE"
}
trap cleanup EXIT
compose down --volumes --remove-orphans --timeout 10 >/dev/null 2>&1 || true
REPLICAS="${REPLICAS:-2}" bash scripts/compose/up.sh
npx vitest run --project compose --reporter=verbose
