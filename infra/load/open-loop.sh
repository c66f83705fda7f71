#!/usr/bin/env bash
# Open-loop load on the order API with Gatling (infra/load): a fresh ./local up, then OpenLoopBench:
# the first minute after start, the capacity search (the arrival rate at which placement p99 passes
# 100 ms), placement and close-lag percentiles at 25/50/75/90% of it, the steady state again. Orders
# expire 5 s after placement, so closes run at the placement rate; 1 in 4 is paid (prepay on the API,
# pay on the WeChat Pay simulator, which notifies the webhook), 1 in 10 cancelled.
#
#   ./local bench --open-loop [OpenLoopBench options, e.g. --rates 100,200,300 --seconds 30]
#
# OPEN_LOOP_UP_ARGS adds flags to ./local up (e.g. "--prime-seconds 0": the first minute of a stack
# that was not primed).
#
# OPEN_LOOP_JFR=FILE records the stack's JVM with JFR (settings=profile) for OPEN_LOOP_JFR_SECONDS (95:
# the client warm-up and the first minute, with its 15 s of closes) from the moment it is ready.
#
# Output in OUT (bench-results/open-loop): open-loop.md (the tables and targets), open-loop.png
# (the plot), gatling/ (Gatling's HTML report of every step), server.log. Exit 1 when an order of a
# step ended wrong (the end-state check), 2 when the stack did not start.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-bench-results/open-loop}
PORT=${PORT:-18090}
mkdir -p "$OUT"

echo "building infra/local and infra/load ..." >&2
./mvnw -q -B -pl infra/local,infra/load -am package -DskipTests -Djacoco.skip=true \
  -Dspotbugs.skip=true -Dspotless.check.skip=true -Dmdep.analyze.skip=true >"$OUT/build.log" 2>&1 ||
  { echo "build failed, see $OUT/build.log" >&2; exit 2; }
touch infra/local/target/runtime-classpath.txt # ./local need not rebuild what was just built

server_pid=""
stop_server() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid"
    wait "$server_pid" 2>/dev/null || true
  fi
}
trap stop_server EXIT

echo "starting ./local up on port $PORT ..." >&2
# shellcheck disable=SC2086 # OPEN_LOOP_UP_ARGS is a list of flags
./local up --port "$PORT" ${OPEN_LOOP_UP_ARGS:-} >"$OUT/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do
  grep -q '^ready' "$OUT/server.log" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { echo "./local up died, see $OUT/server.log" >&2; exit 2; }
  sleep 1
done
grep -q '^ready' "$OUT/server.log" || { echo "./local up not ready, see $OUT/server.log" >&2; exit 2; }
sim=$(awk '$1 == "WeChat" && $2 == "Pay" { print $3; exit }' "$OUT/server.log")
jdbc=$(awk '$1 == "JDBC" && $2 == "URL" { print $3; exit }' "$OUT/server.log")
user=$(awk '$1 == "JDBC" && $2 == "URL" { gsub(/\)/, "", $NF); print $NF; exit }' "$OUT/server.log")

if [[ -n "${OPEN_LOOP_JFR:-}" ]]; then
  # ./local execs java, so $server_pid is the stack's JVM
  jcmd "$server_pid" JFR.start name=open-loop settings=profile \
    duration="${OPEN_LOOP_JFR_SECONDS:-95}s" filename="$(realpath -m "$OPEN_LOOP_JFR")" >"$OUT/jfr.log" 2>&1
fi

# Gatling writes its run log through a private view of java.lang.String
java -XX:+UseParallelGC --add-opens java.base/java.lang=ALL-UNNAMED \
  -cp "infra/load/target/classes:$(cat infra/load/target/runtime-classpath.txt)" \
  io.ordertimeout.load.OpenLoopBench --api "http://127.0.0.1:$PORT" --sim "$sim" --jdbc "$jdbc" \
  --user "$user" --out "$OUT" --stack-pid "$server_pid" "$@"
