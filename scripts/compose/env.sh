# Sourced by the compose scripts: checks that a Docker engine and a compose command answer (installing neither),
# then picks the images compose uses. By default the upstream images, pulled first (`compose pull`); when no
# registry answers, the humanpass-local/* stand-ins (deploy/local-images), said in one line. LOCAL_IMAGES=1 goes
# straight to the stand-ins, LOCAL_IMAGES=0 never falls back to them.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
if ! timeout 10 docker info >/dev/null 2>&1; then
  echo "compose: no Docker engine answers (docker info failed). Install and start Docker Desktop, Docker Engine or Podman's Docker-compatible socket (docs/deploy.md, \"Docker compose\"), then run this again." >&2
  exit 1
fi
if docker compose version >/dev/null 2>&1; then
  COMPOSE_CMD="docker compose"
elif command -v docker-compose >/dev/null; then
  COMPOSE_CMD="docker-compose"
else
  echo "compose: no compose command (docker compose or docker-compose): install the Docker Compose plugin, then run this again." >&2
  exit 1
fi
export COMPOSE_CMD COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-humanpass}"
export HUMANPASS_STACK_FILE="${HUMANPASS_STACK_FILE:-.run/compose-stack.json}"
compose() { $COMPOSE_CMD "$@"; }

# The third-party images of docker-compose.yml, and the Node image our own images build on (the Dockerfile's).
pull_upstream() {
  compose pull -q postgres nats proxy otel-collector jaeger prometheus &&
    docker pull -q "${NODE_IMAGE:-$(sed -n 's/^ARG NODE_IMAGE=//p' Dockerfile)}"
}
# Once per make target: test.sh sources this, then runs up.sh, which sources it again.
if [ -z "${COMPOSE_IMAGES_CHOSEN:-}" ]; then
  case "${LOCAL_IMAGES:-}" in
    1) eval "$(bash deploy/local-images/build.sh)" ;;
    0) pull_upstream >/dev/null ;;
    *)
      if ! pull_upstream >/dev/null 2>&1; then
        echo "compose: no image registry answered (compose pull failed); using the local stand-ins of deploy/local-images (LOCAL_IMAGES=1 skips the pull)" >&2
        eval "$(bash deploy/local-images/build.sh)"
      fi
      ;;
  esac
  export COMPOSE_IMAGES_CHOSEN=1
fi
