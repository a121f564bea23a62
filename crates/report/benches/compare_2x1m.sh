#!/bin/sh
# Times `resplab compare` on two files of 1,000,000 plain numbers each, for every style.
# Usage: crates/report/benches/compare_2x1m.sh [path/to/resplab]   (default: release build)
set -eu
BIN=${1:-target/release/resplab}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
awk 'BEGIN { srand(7); for (i = 0; i < 1000000; i++) printf "%.3f\n", 100000 + 2000 * (rand() + rand() + rand() - 1.5) }' > "$DIR/a.txt"
awk 'BEGIN { srand(8); for (i = 0; i < 1000000; i++) printf "%.3f\n",  99000 + 2000 * (rand() + rand() + rand() - 1.5) }' > "$DIR/b.txt"
for style in resplab ministat benchstat; do
    start=$(date +%s.%N)
    "$BIN" compare --style "$style" "$DIR/a.txt" "$DIR/b.txt" > /dev/null
    end=$(date +%s.%N)
    echo "$style: $(echo "$end - $start" | bc) s for 2 x 1,000,000 values"
done
