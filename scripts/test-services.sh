#!/usr/bin/env bash
# Makes sure the real servers the test suite uses are installed and running: PostgreSQL and Redis from Debian's
# packages (installed when missing), a PostgreSQL role for the tests, and a Redis instance of our own on port 6399.
# Prints the environment the tests read (eval it: eval "$(bash scripts/test-services.sh)").
set -euo pipefail

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"

packages=()
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || packages+=(postgresql)
command -v redis-server >/dev/null 2>&1 || packages+=(redis-server)
if [ ${#packages[@]} -gt 0 ]; then
  echo "installing ${packages[*]} from Debian" >&2
  $sudo_cmd apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${packages[@]}" >&2
fi

# PostgreSQL: the Debian cluster, started if it is down; a superuser role the tests use to create a database each.
if command -v pg_lsclusters >/dev/null 2>&1; then
  read -r version cluster port status _ < <(pg_lsclusters --no-header | head -n 1)
  if [ "$status" != "online" ]; then
    $sudo_cmd pg_ctlcluster "$version" "$cluster" start >&2
  fi
else
  port=5432
fi
for _ in $(seq 1 50); do
  pg_isready -q -h 127.0.0.1 -p "$port" && break
  sleep 0.2
done
$sudo_cmd su postgres -c "psql -q -p $port -tc \"select 1 from pg_roles where rolname = 'switchboard'\" | grep -q 1 || psql -q -p $port -c \"create role switchboard login superuser password 'switchboard'\"" >&2

# Redis: our own throwaway instance (no persistence), so tests never touch a Redis someone else uses.
redis_port=6399
if ! redis-cli -p "$redis_port" ping >/dev/null 2>&1; then
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
    --pidfile /tmp/switchboard-test-redis.pid --logfile /tmp/switchboard-test-redis.log >&2
  for _ in $(seq 1 50); do
    redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
fi

echo "export SWITCHBOARD_TEST_POSTGRES_URL=postgres://switchboard:switchboard@127.0.0.1:${port}/postgres"
echo "export SWITCHBOARD_TEST_REDIS_URL=redis://127.0.0.1:${redis_port}"
