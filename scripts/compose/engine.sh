#!/usr/bin/env bash
# Makes a Docker engine answer on the default socket: uses one that already answers, else installs Debian's
# docker.io when dockerd is missing and starts dockerd with its own data root (.run/docker/data, or
# DOCKER_DATA_ROOT, e.g. a cache kept between CI runs), recording that it did so (`engine.sh stop` stops only an
# engine this script started). Also makes a compose command available:
# `docker compose` (v2) where it exists, else Debian's docker-compose 1.29.
#   engine.sh start | stop | compose-cmd
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
STATE="$ROOT/.run/docker"
PIDFILE="$STATE/dockerd.pid"

answers() { timeout 5 docker info >/dev/null 2>&1; }

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi; }

apt_install() {
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null 2>&1 || {
    as_root apt-get update -q >/dev/null
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/dev/null
  }
}

start() {
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
  # setsid: the engine outlives the make that started it, until `make compose-down`.
  as_root setsid dockerd --data-root "$data" --exec-root "$STATE/exec" --pidfile "$PIDFILE" \
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
    echo "docker engine: not started by this checkout; left running"
    return 0
  fi
  local pid
  pid="$(cat "$PIDFILE")"
  as_root kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 30); do
    as_root kill -0 "$pid" 2>/dev/null || break
    sleep 1
  done
  rm -f "$STATE/started-here"
  echo "docker engine: stopped (pid $pid)"
}

compose_cmd() {
  if docker compose version >/dev/null 2>&1; then
    echo "docker compose"
    return 0
  fi
  command -v docker-compose >/dev/null || apt_install docker-compose
  echo "docker-compose"
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  compose-cmd) compose_cmd ;;
  *) echo "usage: $0 start|stop|compose-cmd" >&2; exit 64 ;;
esac
