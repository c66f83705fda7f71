#!/usr/bin/env bash
# The order API over HTTP: placements/s and p50/p99 with wrk at 1, 16 and 64
# concurrent clients against ./local up (the whole local stack: API handler, sweep and consumer
# schedules, embedded Redis and MariaDB), then the same wrk command against RawPlaceServer, the
# raw-SQL ceiling of the same placement transaction; prints both and the ratio.
#
# Then (PHASES "busy") close lag while the API is busy: wrk at BUSY_CLIENTS (64) for BUSY (30 s)
# against ./local up with timeoutSeconds BUSY_TIMEOUT_S (10; with 3 most payers came too late, their
# prepay answered 409 or WeChat's 400 time_expire), so orders placed in the first 20 s expire while
# later ones are still being placed, while BusyPayer (BUSY_PAYERS threads, 32) pays one in
# BUSY_PAY_EVERY (4) placed orders over HTTP as a user would: prepay on the API, pay on the WeChat
# Pay simulator, which notifies POST /wechatpay/notify. After BUSY_TAIL_S (15 s) for the last to
# close, the closer's close_lag_ms summary is read from /metrics, and BusyCheck reads the stack's
# MariaDB: placed, paid, closed, the close lag (closed_at - expire_at) of the TIMEOUT closes, and
# FAILED (exit 1) unless every order ended CLOSED or PAID exactly once (PAID exactly when WeChat
# took the money; DESIGN.md's invariants over the schema).
#
#   ./local bench --api-wrk                     (or infra/bench/api-wrk.sh)
#   DURATION=20s CLIENTS="1 16 64" WARMUP=10s PHASES="api busy" ./local bench --api-wrk
#   BUSY_JFR=bench-results/busy.jfr PHASES=busy ./local bench --api-wrk   (a JFR profile of the stack during it)
#
# Output: bench-results/api-wrk/{otc,raw}-c<N>.txt (wrk's own reports), busy.txt (with
# busy-payer.log, busy-server.log), summary.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-15s}
WARMUP=${WARMUP:-10s}
CLIENTS=${CLIENTS:-"1 16 64"}
OUT=${OUT:-bench-results/api-wrk}
OTC_PORT=${OTC_PORT:-18080}
RAW_PORT=${RAW_PORT:-18081}
PHASES=${PHASES:-"api busy"}
BUSY=${BUSY:-30s}
BUSY_CLIENTS=${BUSY_CLIENTS:-64}
BUSY_TIMEOUT_S=${BUSY_TIMEOUT_S:-10}
BUSY_TAIL_S=${BUSY_TAIL_S:-15}
BUSY_PAY_EVERY=${BUSY_PAY_EVERY:-4}
BUSY_PAYERS=${BUSY_PAYERS:-32}
LUA=infra/bench/wrk/place-order.lua
command -v wrk >/dev/null || { echo "wrk not found (apt-get install wrk)" >&2; exit 2; }
mkdir -p "$OUT"

server_pid=""
stop_server() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
trap stop_server EXIT

await_ready() { # log file, pattern
  for _ in $(seq 1 600); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$server_pid" 2>/dev/null || { echo "server died, see $1" >&2; exit 1; }
    sleep 1
  done
  echo "server not ready after 600 s, see $1" >&2
  exit 1
}

measure() { # label, base url
  local label=$1 url=$2
  RUN_ID=$(printf '%06d' $((RANDOM * 30 % 1000000))) \
    wrk -t 2 -c 16 -d "$WARMUP" -s "$LUA" "$url" >"$OUT/$label-warmup.txt"
  for c in $CLIENTS; do
    local t=$((c < 2 ? 1 : 2))
    echo "load before $label c=$c: $(cut -d' ' -f1-3 /proc/loadavg)" >"$OUT/$label-c$c.txt"
    RUN_ID=$(printf '%06d' $((RANDOM * 30 % 1000000))) \
      wrk -t "$t" -c "$c" -d "$DURATION" --latency -s "$LUA" "$url" >>"$OUT/$label-c$c.txt"
    echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/$label-c$c.txt"
  done
}

busy() { # base url of a fresh ./local up, its server log
  local url=$1 log=$2 run pay_dir sim jdbc user payer_pid rc
  run=$(printf '%06d' $((RANDOM * 30 % 1000000)))
  pay_dir="$OUT/busy-pay"
  rm -rf "$pay_dir" && mkdir -p "$pay_dir"
  sim=$(awk '$1 == "WeChat" && $2 == "Pay" { print $3; exit }' "$log")
  jdbc=$(awk '$1 == "JDBC" && $2 == "URL" { print $3; exit }' "$log")
  user=$(awk '$1 == "JDBC" && $2 == "URL" { gsub(/\)/, "", $NF); print $NF; exit }' "$log")
  # the payers run beside wrk in their own JVM: BusyPayer pays one in PAY_EVERY placed orders over
  # HTTP (prepay on the API, pay on the WeChat Pay simulator, which notifies the webhook), and at
  # the end checks the stack's MariaDB (BusyCheck)
  java -XX:+UseParallelGC -cp "infra/bench/target/classes:$(cat infra/local/target/runtime-classpath.txt)" \
    io.ordertimeout.bench.BusyPayer --api "$url" --sim "$sim" --dir "$pay_dir" --prefix "w$run" \
    --jdbc "$jdbc" --user "$user" --threads "$BUSY_PAYERS" >"$OUT/busy-payer.log" 2>&1 &
  payer_pid=$!
  local waited=0
  until grep -q '^busy-payer ready' "$OUT/busy-payer.log"; do
    if ((waited++ >= 120)) || ! kill -0 "$payer_pid" 2>/dev/null; then
      echo "BusyPayer did not start, see $OUT/busy-payer.log" >&2
      return 1
    fi
    sleep 0.5
  done
  if [[ -n "${BUSY_JFR:-}" ]]; then
    # the stack's JVM (./local execs java, so $server_pid is it), profiled from here to the check
    jcmd "$server_pid" JFR.start name=busy settings=profile >"$OUT/busy-jfr.log" 2>&1
  fi
  {
    echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    RUN_ID=$run TIMEOUT_S=$BUSY_TIMEOUT_S PAY_EVERY=$BUSY_PAY_EVERY PAY_DIR=$pay_dir \
      wrk -t 2 -c "$BUSY_CLIENTS" -d "$BUSY" --latency -s "$LUA" "$url"
    echo "load after wrk: $(cut -d' ' -f1-3 /proc/loadavg)"
    touch "$pay_dir/stop"
    sleep "$BUSY_TAIL_S"
    echo "close lag (otc_close_lag_ms, ms) from $url/metrics, ${BUSY_TAIL_S} s after the last placement:"
    curl -s "$url/metrics" | grep -E '^otc_close_lag_ms|^otc_orders_placed|^otc_orders_closed|^otc_orders_paid|^otc_payment'
    echo "load after tail: $(cut -d' ' -f1-3 /proc/loadavg)"
    if [[ -n "${BUSY_JFR:-}" ]]; then
      jcmd "$server_pid" JFR.stop name=busy filename="$BUSY_JFR" >>"$OUT/busy-jfr.log" 2>&1
      echo "JFR of the stack from wrk's start to here: $BUSY_JFR"
    fi
    touch "$pay_dir/check"
    rc=0
    wait "$payer_pid" || rc=$?
    echo "payers (1 in $BUSY_PAY_EVERY placed orders, $BUSY_PAYERS threads; run w$run):"
    grep -v '^busy-payer ready' "$OUT/busy-payer.log"
    echo "load after check: $(cut -d' ' -f1-3 /proc/loadavg)"
  } >"$OUT/busy.txt"
  return "$rc"
}

if [[ "${SUMMARY_ONLY:-0}" != 1 && " $PHASES " == *" busy "* ]]; then
  # the payers' classes; built before the stack starts, so no build competes with it
  ./mvnw -q -B -o -pl infra/bench -am compile -Djacoco.skip=true -Dspotbugs.skip=true \
    -Dspotless.check.skip=true -Denforcer.skip=true >"$OUT/busy-build.log" 2>&1 ||
    { echo "building infra/bench failed, see $OUT/busy-build.log" >&2; exit 1; }
  echo "busy scenario: starting ./local up on port $OTC_PORT ..." >&2
  ./local up --port "$OTC_PORT" >"$OUT/busy-server.log" 2>&1 &
  server_pid=$!
  await_ready "$OUT/busy-server.log" '^ready'
  busy_rc=0
  busy "http://127.0.0.1:$OTC_PORT" "$OUT/busy-server.log" || busy_rc=$?
  stop_server
  cat "$OUT/busy.txt"
  [[ $busy_rc == 0 ]] || { echo "busy scenario: the end-state check FAILED (see above)" >&2; exit 1; }
fi

if [[ "${SUMMARY_ONLY:-0}" != 1 && " $PHASES " == *" api "* ]]; then
  # SUMMARY_ONLY=1: only re-print the table from $OUT
  echo "starting ./local up on port $OTC_PORT ..." >&2
  ./local up --port "$OTC_PORT" >"$OUT/otc-server.log" 2>&1 &
  server_pid=$!
  await_ready "$OUT/otc-server.log" '^ready'
  measure otc "http://127.0.0.1:$OTC_PORT"
  stop_server

  echo "starting RawPlaceServer on port $RAW_PORT ..." >&2
  MAVEN_OPTS="${MAVEN_OPTS:-} -XX:+UseParallelGC" ./mvnw -q -B -pl infra/bench -am verify \
    -DskipTests -Djacoco.skip=true -Dspotbugs.skip=true -Dspotless.check.skip=true \
    -Dmdep.analyze.skip=true -Denforcer.skip=true -Pbench -DOTC_LOG_LEVEL=WARN \
    -Dbench.main=RawPlaceServer -Dbench.args="--port $RAW_PORT" >"$OUT/raw-server.log" 2>&1 &
  server_pid=$!
  await_ready "$OUT/raw-server.log" '^raw-place ready'
  measure raw "http://127.0.0.1:$RAW_PORT"
  stop_server
fi

# wrk prints latency with a unit (us, ms, s): normalise to ms
field() { # file, awk program printing one value
  awk "$2" "$1"
}
to_ms() {
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n; else if (v ~ /s$/) n *= 1000; printf "%.1f", n }'
}
[[ " $PHASES " == *" api "* ]] || exit 0
{
  echo "| clients | otc placements/s | otc p50 ms | otc p99 ms | otc non-2xx | raw-SQL placements/s | raw p50 ms | raw p99 ms | raw non-2xx | otc / raw | load (before/after, 1-min) |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  for c in $CLIENTS; do
    row="| $c"
    for label in otc raw; do
      f="$OUT/$label-c$c.txt"
      rps=$(field "$f" '/^Requests\/sec:/ { printf "%.0f", $2 }')
      p50=$(to_ms "$(field "$f" '$1 == "50%" { print $2 }')")
      p99=$(to_ms "$(field "$f" '$1 == "99%" { print $2 }')")
      bad=$(field "$f" '/Non-2xx/ { print $NF; found = 1 } END { if (!found) print 0 }')
      row="$row | $rps | $p50 | $p99 | $bad"
      eval "${label}_rps=$rps"
    done
    ratio=$(awk -v a="$otc_rps" -v b="$raw_rps" 'BEGIN { printf "%.0f%%", (b > 0 ? 100 * a / b : 0) }')
    loads=$(awk '/^load before/ { b = $(NF-2) } /^load after/ { a = $(NF-2) } END { print b "/" a }' "$OUT/otc-c$c.txt")
    loadr=$(awk '/^load before/ { b = $(NF-2) } /^load after/ { a = $(NF-2) } END { print b "/" a }' "$OUT/raw-c$c.txt")
    echo "$row | $ratio | otc $loads, raw $loadr |"
  done
} | tee "$OUT/summary.md"
echo "wrk reports: $OUT/{otc,raw}-c<N>.txt; wrk -t min(c,2) -c N -d $DURATION --latency -s $LUA (after $WARMUP warm-up at 16)"
