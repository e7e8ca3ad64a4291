#!/usr/bin/env bash
# Stops the Postgres and NATS that ensure-infra.sh started, and nothing else.
set -uo pipefail
cd "$(dirname "$0")/.."
RUN_DIR="$PWD/.run"
for name in postgres nats; do
  f="$RUN_DIR/$name.started"
  [ -f "$f" ] || continue
  how="$(cat "$f")"
  case "$how" in
    docker:*) docker stop "${how#docker:}" >/dev/null 2>&1 ;;
    pg_ctl:*)
      data="${how#pg_ctl:}"; pgctl="$(command -v pg_ctl || ls /usr/lib/postgresql/*/bin/pg_ctl | head -1)"
      if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$pgctl" -D "$data" -m fast stop >/dev/null; else "$pgctl" -D "$data" -m fast stop >/dev/null; fi ;;
    pid:*) pidfile="${how#pid:}"; [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null ;;
  esac
  rm -f "$f"
  echo "infra: stopped $name"
done
