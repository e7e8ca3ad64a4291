#!/usr/bin/env bash
# CI's Docker engine and tools (CI runs as root on Debian): docker-compose, debootstrap (the stand-in images' base,
# where no image registry answers) and docker-registry (make test-release's registry) when missing; an engine that
# already answers, else Debian's docker.io (installed when missing) started with its own data root
# (DOCKER_DATA_ROOT, e.g. a cache kept between CI runs), recording that it did so, so that `stop` stops only an
# engine this script started.
# `make compose-up` never does any of this: on a user's machine the engine is theirs (docs/deploy.md).
#   .ci/docker-engine.sh start | stop
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
STATE="$ROOT/.run/docker"
PIDFILE="$STATE/dockerd.pid"

answers() { timeout 5 docker info >/dev/null 2>&1; }

apt_install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null 2>&1 || {
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null
  }
}

start() {
  if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null; then
    echo "docker engine: installing Debian's docker-compose …"
    apt_install docker-compose
  fi
  command -v debootstrap >/dev/null || apt_install debootstrap
  # The image registry make test-release pushes to (a process on loopback; no registry image can be pulled here).
  command -v docker-registry >/dev/null || apt_install docker-registry
  if answers; then
    echo "docker engine: already answering ($(docker version -f '{{.Server.Version}}' 2>/dev/null))"
    return 0
  fi
  if ! command -v dockerd >/dev/null; then
    echo "docker engine: none answers and dockerd is missing; installing Debian's docker.io …"
    apt_install docker.io iptables
  fi
  local data="${DOCKER_DATA_ROOT:-$STATE/data}"
  mkdir -p "$data" "$STATE/exec"
  echo "docker engine: starting dockerd (data root $data) …"
  setsid dockerd --data-root "$data" --exec-root "$STATE/exec" --pidfile "$PIDFILE" \
    --host unix:///var/run/docker.sock >"$STATE/dockerd.log" 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    if answers; then
      touch "$STATE/started-here"
      echo "docker engine: ready ($(docker version -f '{{.Server.Version}}'))"
      return 0
    fi
    sleep 1
  done
  echo "docker engine: dockerd did not answer within 60 s; its log:" >&2
  tail -n 30 "$STATE/dockerd.log" >&2
  return 1
}

stop() {
  if [ ! -f "$STATE/started-here" ] || [ ! -f "$PIDFILE" ]; then
    echo "docker engine: not started by CI; left running"
    return 0
  fi
  local pid
  pid="$(cat "$PIDFILE")"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 30); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
  done
  rm -f "$STATE/started-here"
  echo "docker engine: stopped (pid $pid)"
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 64 ;;
esac
