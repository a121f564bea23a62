#!/bin/sh
# Times `resplab compare` on two files of 1,000,000 plain numbers each, for every style:
# five runs per style, median wall-clock and median CPU (user + system) seconds. The
# machine's load average is printed first: on a shared machine the wall time includes
# waiting for a core, the CPU time does not.
# Usage: crates/report/benches/compare_2x1m.sh [path/to/resplab] [runs]
#        (default: target/release/resplab, 5 runs; needs /usr/bin/time)
set -eu
BIN=${1:-target/release/resplab}
RUNS=${2:-5}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
awk 'BEGIN { srand(7); for (i = 0; i < 1000000; i++) printf "%.3f\n", 100000 + 2000 * (rand() + rand() + rand() - 1.5) }' > "$DIR/a.txt"
awk 'BEGIN { srand(8); for (i = 0; i < 1000000; i++) printf "%.3f\n",  99000 + 2000 * (rand() + rand() + rand() - 1.5) }' > "$DIR/b.txt"
echo "load: $(uptime | sed 's/.*load average: //')"
for style in resplab ministat benchstat; do
    : > "$DIR/times"
    i=0
    while [ "$i" -lt "$RUNS" ]; do
        /usr/bin/time -f "%e %U %S" -o "$DIR/t" "$BIN" compare --style "$style" "$DIR/a.txt" "$DIR/b.txt" > /dev/null
        cat "$DIR/t" >> "$DIR/times"
        i=$((i + 1))
    done
    wall=$(awk '{ print $1 }' "$DIR/times" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    cpu=$(awk '{ print $2 + $3 }' "$DIR/times" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    echo "$style: median of $RUNS: ${wall} s wall, ${cpu} s CPU for 2 x 1,000,000 values"
done
