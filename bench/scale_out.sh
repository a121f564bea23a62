#!/bin/sh
# Scale-out on one machine: 1, 2 and 4 local shards (`resplab bench --shard I/N`, one
# common --start-at) against one redis-server, merged with `resplab merge`. Same total
# load each time (-c connections split among the shards, SET:GET 1:1, pipeline P).
# The shard counts alternate within each repetition (1 2 4, then 2 4 1, then 4 1 2, ...).
# Printed per shard count, medians of RUNS: merged ops/s, client CPU per request (all
# shards together), start spread on the server's clock, and the wall time of the merge.
#
# With PER_SHARD=1 the connections are per shard (--per-shard): each added shard adds
# load, so the merged throughput shows whether shards add up.
#
# Usage: [PER_SHARD=1] bench/scale_out.sh [path/to/resplab] [runs] [seconds] [clients]
#        [pipeline]
#        (defaults target/release/resplab, 5 runs of 3 s, 32 connections, pipeline 16;
#        server pinned to CPU 0, every shard to CPU 1; needs redis-server and taskset)
set -eu
. "$(dirname "$0")/wait_for_ping.sh"
BIN=${1:-target/release/resplab}
RUNS=${2:-5}
SECS=${3:-3}
CLIENTS=${4:-32}
PIPE=${5:-16}
EXTRA=""
[ "${PER_SHARD:-0}" = 1 ] && EXTRA="--per-shard"
DIR=$(mktemp -d)
cleanup() { kill "$(cat "$DIR/pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$DIR"; }
trap cleanup EXIT
echo "load: $(uptime | sed 's/.*load average: //')"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
taskset -c 0 redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$DIR" > /dev/null 2>&1 &
echo $! > "$DIR/pid"
wait_for_ping "$PORT" redis-server

one() { # one N REP: N shards, results in $DIR/N-REP.*
    n=$1; rep=$2
    start=$(python3 -c 'import time; print(f"{time.time() + 1.5:.3f}")')
    k=1
    while [ "$k" -le "$n" ]; do
        taskset -c 1 "$BIN" bench -p "$PORT" --shard "$k/$n" --start-at "$start" --seed 7 \
            -c "$CLIENTS" -P "$PIPE" --ratio 1:1 --key-maximum 99999 --test-time "$SECS" \
            $EXTRA --no-progress --json "$DIR/$n-$rep-$k.json" > /dev/null 2>&1 &
        k=$((k + 1))
    done
    wait_shards
    t0=$(python3 -c 'import time; print(time.time())')
    "$BIN" merge "$DIR/$n-$rep-"*.json -o "$DIR/$n-$rep.merged" > /dev/null
    t1=$(python3 -c 'import time; print(time.time())')
    python3 - "$DIR/$n-$rep.merged" "$t0" "$t1" >> "$DIR/$n.rows" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
cpu = sum(s["client_cpu"]["user_sec"] + s["client_cpu"]["system_sec"] for s in m["shards"])
print(m["totals"]["ops_per_sec"], cpu * 1e6 / m["totals"]["requests"],
      m["config"]["merge"]["start_spread_ms"], (float(sys.argv[3]) - float(sys.argv[2])) * 1e3)
PY
}

wait_shards() {
    # every background job but the server
    for p in $(jobs -p); do
        [ "$p" = "$(cat "$DIR/pid")" ] || wait "$p"
    done
}

rep=1
while [ "$rep" -le "$RUNS" ]; do
    case $((rep % 3)) in
        1) order="1 2 4" ;;
        2) order="2 4 1" ;;
        *) order="4 1 2" ;;
    esac
    for n in $order; do one "$n" "$rep"; done
    rep=$((rep + 1))
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf "%-7s %14s %18s %16s %12s\n" shards "merged ops/s" "client us/request" "start spread ms" "merge ms"
for n in 1 2 4; do
    ops=$(cut -d' ' -f1 "$DIR/$n.rows" | median)
    cpu=$(cut -d' ' -f2 "$DIR/$n.rows" | median)
    spread=$(cut -d' ' -f3 "$DIR/$n.rows" | median)
    merge=$(cut -d' ' -f4 "$DIR/$n.rows" | median)
    printf "%-7s %14.0f %18.3f %16.2f %12.1f\n" "$n" "$ops" "$cpu" "$spread" "$merge"
done
echo "ops/s of each run (1, 2, 4 shards):"
for n in 1 2 4; do echo "  $n: $(cut -d' ' -f1 "$DIR/$n.rows" | tr '\n' ' ')"; done
