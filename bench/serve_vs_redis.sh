#!/bin/sh
# Throughput of `resplab serve` (one thread) against redis-server on the same CPU: SET and
# GET at pipeline 1 and 16, 50 connections, driven by `resplab bench` pinned to another
# CPU. For each line the two servers alternate (redis, serve, redis, serve, ...), each
# started fresh; medians of RUNS runs and the ratio serve / redis are printed.
#
# Usage: bench/serve_vs_redis.sh [path/to/resplab] [runs] [seconds]
#        (default target/release/resplab, 5 runs of 3 s; server on CPU 0, client on
#        CPU 1; needs redis-server and taskset)
set -eu
. "$(dirname "$0")/wait_for_ping.sh"
BIN=${1:-target/release/resplab}
RUNS=${2:-5}
SECS=${3:-3}
DIR=$(mktemp -d)
cleanup() { kill "$(cat "$DIR/pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$DIR"; }
trap cleanup EXIT
echo "load: $(uptime | sed 's/.*load average: //')"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start() { # start KIND PORT
    if [ "$1" = redis ]; then
        taskset -c 0 redis-server --port "$2" --bind 127.0.0.1 --save '' --appendonly no \
            --dir "$DIR" > /dev/null 2>&1 &
    else
        taskset -c 0 "$BIN" serve --port "$2" > /dev/null 2>&1 &
    fi
    echo $! > "$DIR/pid"
    wait_for_ping "$2" "server $1"
}

stop() { kill "$(cat "$DIR/pid")" 2>/dev/null || true; wait "$(cat "$DIR/pid")" 2>/dev/null || true; }

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for test in set get; do
    for p in 1 16; do
        : > "$DIR/redis"; : > "$DIR/serve"
        r=0
        while [ "$r" -lt "$RUNS" ]; do
            for kind in redis serve; do
                pt=$(port)
                start "$kind" "$pt"
                ops=$(taskset -c 1 "$BIN" bench -p "$pt" -t "$test" -c 50 -P "$p" --test-time "$SECS" \
                      --no-progress --json - 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["ops_per_sec"])')
                echo "$ops" >> "$DIR/$kind"
                stop
            done
            r=$((r + 1))
        done
        a=$(median < "$DIR/redis"); b=$(median < "$DIR/serve")
        echo "$test -P $p: redis-server $a ops/s, resplab serve $b ops/s, ratio $(python3 -c "print(round($b/$a, 3))") (medians of $RUNS)"
    done
done
