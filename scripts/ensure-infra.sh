#!/usr/bin/env bash
# Makes sure Postgres and NATS (JetStream) answer at DATABASE_URL / NATS_URL. Starts local ones from installed
# binaries (installing Debian's packages when missing and we are root), or containers where a Docker engine runs.
# What this script starts is recorded under .run/ so `make down` stops exactly that.
set -euo pipefail
cd "$(dirname "$0")/.."
RUN_DIR="$PWD/.run"
mkdir -p "$RUN_DIR"

DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
NATS_URL="${NATS_URL:-nats://127.0.0.1:4222}"

hostport() { # URL -> "host port"
  node -e 'const u=new URL(process.argv[1]); console.log(u.hostname, u.port || process.argv[2])' "$1" "$2"
}
read -r PG_HOST PG_PORT <<<"$(hostport "$DATABASE_URL" 5432)"
read -r NATS_HOST NATS_PORT <<<"$(hostport "$NATS_URL" 4222)"

answers() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
say() { printf 'infra: %s\n' "$*" >&2; }
is_root() { [ "$(id -u)" = 0 ]; }
docker_ok() { command -v docker >/dev/null && docker info >/dev/null 2>&1; }

apt_install() {
  if ! is_root || ! command -v apt-get >/dev/null; then
    say "cannot install $* (need root and apt-get). Install it yourself, or point $1 at a running server."
    exit 1
  fi
  say "installing $* with apt-get"
  if ! apt-get install -y -q "$@" >/dev/null 2>&1; then
    apt-get update -q >/dev/null 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null
  fi
}

pg_bin() {
  local b
  for b in "$(command -v "$1" 2>/dev/null)" /usr/lib/postgresql/*/bin/"$1"; do
    [ -n "$b" ] && [ -x "$b" ] && { echo "$b"; return 0; }
  done
  return 1
}

start_postgres() {
  if docker_ok; then
    say "starting Postgres in Docker on $PG_PORT"
    docker run -d --rm --name humanpass-postgres -e POSTGRES_HOST_AUTH_METHOD=trust -p "$PG_PORT:5432" postgres:16-alpine >/dev/null
    echo "docker:humanpass-postgres" >"$RUN_DIR/postgres.started"
    return
  fi
  pg_bin initdb >/dev/null || apt_install postgresql
  local initdb pgctl data="$RUN_DIR/postgres" as=()
  initdb="$(pg_bin initdb)"; pgctl="$(pg_bin pg_ctl)"
  if is_root; then
    id postgres >/dev/null 2>&1 || useradd --system --home-dir "$data" postgres
    as=(runuser -u postgres --)
  fi
  if [ ! -f "$data/PG_VERSION" ]; then
    mkdir -p "$data"; is_root && chown postgres "$data"
    say "initdb into $data"
    "${as[@]}" "$initdb" -D "$data" -U postgres --auth=trust >/dev/null
  fi
  say "starting Postgres on 127.0.0.1:$PG_PORT (data in $data)"
  "${as[@]}" "$pgctl" -D "$data" -l "$data/server.log" -w \
    -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k /tmp -c max_connections=300" start >/dev/null
  echo "pg_ctl:$data" >"$RUN_DIR/postgres.started"
}

nats_server_bin() {
  local bin
  bin="$(command -v nats-server || true)"; [ -z "$bin" ] && [ -x /usr/sbin/nats-server ] && bin=/usr/sbin/nats-server
  if [ -z "$bin" ]; then apt_install nats-server; bin="$(command -v nats-server || echo /usr/sbin/nats-server)"; fi
  echo "$bin"
}

start_nats() {
  if docker_ok; then
    say "starting NATS in Docker on $NATS_PORT"
    docker run -d --rm --name humanpass-nats -p "$NATS_PORT:4222" nats:2.10-alpine -js >/dev/null
    echo "docker:humanpass-nats" >"$RUN_DIR/nats.started"
    return
  fi
  local bin
  bin="$(nats_server_bin)"
  mkdir -p "$RUN_DIR/nats"
  say "starting NATS with JetStream on 127.0.0.1:$NATS_PORT (store in $RUN_DIR/nats)"
  setsid nohup "$bin" -a 127.0.0.1 -p "$NATS_PORT" -js -sd "$RUN_DIR/nats" -l "$RUN_DIR/nats/server.log" \
    -P "$RUN_DIR/nats/server.pid" >/dev/null 2>&1 &
  echo "pid:$RUN_DIR/nats/server.pid" >"$RUN_DIR/nats.started"
}

wait_for() { # name host port
  for _ in $(seq 1 100); do answers "$2" "$3" && return 0; sleep 0.2; done
  say "$1 did not come up at $2:$3"; exit 1
}

if answers "$PG_HOST" "$PG_PORT"; then say "Postgres answers at $PG_HOST:$PG_PORT"; else
  [ "$PG_HOST" = 127.0.0.1 ] || [ "$PG_HOST" = localhost ] || { say "Postgres does not answer at $PG_HOST:$PG_PORT"; exit 1; }
  start_postgres; wait_for Postgres "$PG_HOST" "$PG_PORT"
fi
if answers "$NATS_HOST" "$NATS_PORT"; then say "NATS answers at $NATS_HOST:$NATS_PORT"; else
  [ "$NATS_HOST" = 127.0.0.1 ] || [ "$NATS_HOST" = localhost ] || { say "NATS does not answer at $NATS_HOST:$NATS_PORT"; exit 1; }
  start_nats; wait_for NATS "$NATS_HOST" "$NATS_PORT"
fi
# make up runs a nats-server of its own with the committed users, and tests start their own: the binary, whatever
# NATS answers at NATS_URL.
if [ -n "${HUMANPASS_NEEDS_NATS_SERVER:-}" ]; then nats_server_bin >/dev/null; fi
