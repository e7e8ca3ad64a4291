#!/usr/bin/env bash
# make compose-up: on the Docker engine that answers (scripts/compose/env.sh: upstream images pulled, local
# stand-ins when no registry answers), `compose up` of the whole stack with REPLICAS (default 1) of every service,
# and the URLs once all of them are ready.
set -euo pipefail
# CLUSTER=1: NATS as a 3-node JetStream cluster, every stream at 3 replicas (docker-compose.cluster.yml).
if [ "${CLUSTER:-0}" = 1 ]; then export COMPOSE_FILE="docker-compose.yml:docker-compose.cluster.yml"; fi
source "$(dirname "$0")/env.sh"
replicas="${REPLICAS:-1}"
scale=()
for service in verifier chain-indexer attestations-api agent-auth payment-gateway webhooks; do
  scale+=(--scale "$service=$replicas")
done
start=$(date +%s)
echo "compose: building the images and starting the stack ($COMPOSE_CMD, project $COMPOSE_PROJECT_NAME, $replicas replica(s) per service) …"
# COMPOSE_NO_BUILD=1 starts with the images already built (quicker reruns while only the host's side changes).
# The devnet first: its `npm ci` layer is the one the six services then share, building side by side.
if [ "${COMPOSE_NO_BUILD:-0}" != 1 ]; then
  compose build devnet >&2
  compose build --parallel verifier chain-indexer attestations-api agent-auth payment-gateway webhooks >&2
fi
built=$(date +%s)
compose up -d --no-build "${scale[@]}"
node --conditions=@humanpass/source tools/stack/src/compose-stack.ts
echo "compose: images built in $((built - start)) s, stack ready $(( $(date +%s) - built )) s after that"
