#!/usr/bin/env bash
# Runs the test suite against real, separately installed servers instead of the embedded ones:
# Debian's mariadb-server (12: MariaDB 10.11) and redis-server (12: Redis 7.0), started here on loopback
# ports with a throwaway data dir, the way a developer's or a user's own servers would be.
#
#   infra/external-servers.sh test [MAVEN ARGS]   start the servers if needed, then run the README's test
#                                                 command against them (default ARGS: verify)
#   infra/external-servers.sh start | stop | env  start them, stop them, print the OTC_* variables
#   infra/external-servers.sh install             apt-get install mariadb-server redis-server (root)
#
# Nothing here runs in .ci/run's default path: `OTC_CI_EXTERNAL=1 bash .ci/run` opts in.
# Ports, data dir and zone: OTC_EXT_MYSQL_PORT (33306), OTC_EXT_REDIS_PORT (36379), OTC_EXT_DIR
# (${TMPDIR:-/tmp}/otc-external), OTC_EXT_SERVER_TZ (Asia/Shanghai: the servers run in the zone of the
# users' hosts, so a bug that only UTC hides shows here too). Only loopback addresses are used.
set -euo pipefail
cd "$(dirname "$0")/.."

mysql_port="${OTC_EXT_MYSQL_PORT:-33306}"
redis_port="${OTC_EXT_REDIS_PORT:-36379}"
dir="${OTC_EXT_DIR:-${TMPDIR:-/tmp}/otc-external}"
server_tz="${OTC_EXT_SERVER_TZ:-Asia/Shanghai}"
# A throwaway account on a loopback-only server whose data dir is deleted by `stop`.
user=otc
password=otc-external-test

need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "external-servers: $1 not found; install Debian's mariadb-server and redis-server" \
      "(infra/external-servers.sh install, as root)" >&2
    exit 2
  fi
}

mysql_up() {
  mariadb-admin --no-defaults --protocol=tcp -h127.0.0.1 -P"$mysql_port" -u"$user" -p"$password" \
    ping >/dev/null 2>&1
}

redis_up() {
  [[ "$(redis-cli -h 127.0.0.1 -p "$redis_port" ping 2>/dev/null)" == PONG ]]
}

start_mysql() {
  mysql_up && return 0
  need mariadbd
  need mariadb-install-db
  need mariadb
  local as_root=()
  [[ "$(id -u)" == 0 ]] && as_root=(--user=root)
  if [[ ! -d "$dir/mysql/data/mysql" ]]; then
    mkdir -p "$dir/mysql/data" "$dir/mysql/tmp"
    mariadb-install-db --no-defaults --datadir="$dir/mysql/data" --skip-test-db \
      --auth-root-authentication-method=socket "${as_root[@]}" >"$dir/mysql/install.log" 2>&1
  fi
  # Stock settings except: loopback only, our port, and max_connections 500 (the suite opens a small
  # pool per test class, more than the default 151 when classes overlap). No --default-time-zone: the
  # server keeps the zone of its host (TZ below), and the application must not care.
  TZ="$server_tz" nohup mariadbd --no-defaults --datadir="$dir/mysql/data" --tmpdir="$dir/mysql/tmp" \
    --port="$mysql_port" --bind-address=127.0.0.1 --socket="$dir/mysql/mysqld.sock" \
    --pid-file="$dir/mysql/mysqld.pid" --log-error="$dir/mysql/error.log" --skip-name-resolve \
    --max-connections=500 "${as_root[@]}" >/dev/null 2>&1 &
  for _ in $(seq 1 120); do
    if mariadb --no-defaults --socket="$dir/mysql/mysqld.sock" -uroot -e 'SELECT 1' >/dev/null 2>&1; then
      break
    fi
    sleep 0.5
  done
  mariadb --no-defaults --socket="$dir/mysql/mysqld.sock" -uroot -e "
    CREATE USER IF NOT EXISTS '$user'@'127.0.0.1' IDENTIFIED BY '$password';
    GRANT ALL PRIVILEGES ON *.* TO '$user'@'127.0.0.1' WITH GRANT OPTION;" ||
    { echo "external-servers: MariaDB did not start, see $dir/mysql/error.log" >&2; exit 1; }
  echo "external-servers: MariaDB $(mariadb --no-defaults --socket="$dir/mysql/mysqld.sock" -uroot -B -N \
    -e 'SELECT CONCAT(VERSION(), " (time_zone ", @@time_zone, ", system ", @@system_time_zone, ")")' |
    sed 's/[[:space:]]*$//') \
    on 127.0.0.1:$mysql_port" >&2
}

start_redis() {
  redis_up && return 0
  need redis-server
  need redis-cli
  mkdir -p "$dir/redis"
  # Persistence off: test data is disposable.
  TZ="$server_tz" redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no \
    --dir "$dir/redis" --daemonize yes --pidfile "$dir/redis/redis.pid" --logfile "$dir/redis/redis.log"
  for _ in $(seq 1 40); do
    redis_up && break
    sleep 0.25
  done
  redis_up || { echo "external-servers: Redis did not start, see $dir/redis/redis.log" >&2; exit 1; }
  echo "external-servers: Redis $(redis-cli -h 127.0.0.1 -p "$redis_port" info server |
    sed -n 's/^redis_version:\(.*\)\r$/\1/p') on 127.0.0.1:$redis_port" >&2
}

stop_all() {
  if [[ -f "$dir/redis/redis.pid" ]]; then
    redis-cli -h 127.0.0.1 -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
  fi
  if [[ -f "$dir/mysql/mysqld.pid" ]]; then
    mariadb-admin --no-defaults --socket="$dir/mysql/mysqld.sock" -uroot shutdown >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

print_env() {
  echo "OTC_REDIS_URI=redis://127.0.0.1:$redis_port"
  echo "OTC_MYSQL_URL=jdbc:mysql://127.0.0.1:$mysql_port/"
  echo "OTC_MYSQL_USER=$user"
  echo "OTC_MYSQL_PASSWORD=$password"
}

case "${1:-}" in
  install)
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q mariadb-server redis-server
    ;;
  start)
    start_mysql
    start_redis
    ;;
  stop)
    stop_all
    ;;
  env)
    print_env
    ;;
  test)
    shift
    start_mysql
    start_redis
    [[ $# -eq 0 ]] && set -- verify
    env $(print_env) ./mvnw -B -ntp "$@"
    ;;
  *)
    sed -n '2,14p' "$0" >&2
    exit 2
    ;;
esac
