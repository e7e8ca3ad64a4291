# Sourced by the compose scripts: the engine, the compose command, the project and the images compose uses.
# LOCAL_IMAGES=auto (default) builds and uses the humanpass-local/* stand-ins (deploy/local-images) unless the
# upstream images are already in the engine (e.g. after `docker compose pull`); 1 always, 0 never.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
bash scripts/compose/engine.sh start
COMPOSE_CMD="$(bash scripts/compose/engine.sh compose-cmd)"
export COMPOSE_CMD COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-humanpass}"
export HUMANPASS_STACK_FILE="${HUMANPASS_STACK_FILE:-.run/compose-stack.json}"
UPSTREAM_IMAGES=(postgres:16-alpine nats:2.10-alpine nginx:1.27-alpine otel/opentelemetry-collector:0.113.0
  jaegertracing/all-in-one:1.62.0 node:26-bookworm-slim)
local_images="${LOCAL_IMAGES:-auto}"
if [ "$local_images" = auto ]; then
  local_images=0
  for image in "${UPSTREAM_IMAGES[@]}"; do docker image inspect "$image" >/dev/null 2>&1 || local_images=1; done
fi
if [ "$local_images" = 1 ]; then
  eval "$(bash deploy/local-images/build.sh)"
fi
compose() { $COMPOSE_CMD "$@"; }
