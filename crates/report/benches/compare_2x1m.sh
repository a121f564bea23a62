#!/bin/sh
# Times `resplab compare` on two files of 1,000,000 values each, for every style, side by
# side with the real ministat and benchstat on the same values: RUNS alternating runs
# (resplab, peer, resplab, peer, ...), median wall-clock seconds, median CPU (user +
# system) seconds and median peak resident memory (max RSS). The machine's load average
# is printed first: on a shared machine the wall time includes waiting for a core, the
# CPU time and the memory do not.
#
# ministat reads the plain files; benchstat reads the same values written as
# `go test -bench` lines (`BenchmarkX 1 <value> ns/op`), which resplab's benchstat style
# is also given, so both parse the same input.
#
# Usage: crates/report/benches/compare_2x1m.sh [path/to/resplab] [runs]
#        (default: target/release/resplab, 5 runs; needs /usr/bin/time; ministat and
#        benchstat from PATH or ~/go/bin, skipped with a note when missing)
set -eu
BIN=${1:-target/release/resplab}
RUNS=${2:-5}
PATH="$PATH:${GOBIN:-$HOME/go/bin}"
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
awk 'BEGIN { srand(7); for (i = 0; i < 1000000; i++) printf "%.3f\n", 100000 + 2000 * (rand() + rand() + rand() - 1.5) }' > "$DIR/a.txt"
awk 'BEGIN { srand(8); for (i = 0; i < 1000000; i++) printf "%.3f\n",  99000 + 2000 * (rand() + rand() + rand() - 1.5) }' > "$DIR/b.txt"
for f in a b; do
    awk '{ printf "BenchmarkX 1 %s ns/op\n", $1 }' "$DIR/$f.txt" > "$DIR/$f.bench"
done
echo "load: $(uptime | sed 's/.*load average: //')"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# run NAME CMD...: one timed run appended to $DIR/NAME.times
run() {
    name=$1
    shift
    /usr/bin/time -f "%e %U %S %M" -o "$DIR/t" "$@" > /dev/null
    cat "$DIR/t" >> "$DIR/$name.times"
}

report() {
    name=$1
    [ -s "$DIR/$name.times" ] || return 0
    wall=$(awk '{ print $1 }' "$DIR/$name.times" | median)
    cpu=$(awk '{ print $2 + $3 }' "$DIR/$name.times" | median)
    mem=$(awk '{ print $4 }' "$DIR/$name.times" | median)
    echo "$name: median of $RUNS: ${wall} s wall, ${cpu} s CPU, $((mem / 1024)) MB max RSS ($((mem * 1024 / 2000000)) bytes per value)"
}

have_ministat=$(command -v ministat || true)
have_benchstat=$(command -v benchstat || true)
i=0
while [ "$i" -lt "$RUNS" ]; do
    run resplab "$BIN" compare --style resplab "$DIR/a.txt" "$DIR/b.txt"
    run resplab-ministat "$BIN" compare --style ministat "$DIR/a.txt" "$DIR/b.txt"
    if [ -n "$have_ministat" ]; then run ministat ministat "$DIR/a.txt" "$DIR/b.txt"; fi
    run resplab-benchstat "$BIN" compare --style benchstat "$DIR/a.bench" "$DIR/b.bench"
    if [ -n "$have_benchstat" ]; then run benchstat benchstat "$DIR/a.bench" "$DIR/b.bench"; fi
    i=$((i + 1))
done
for name in resplab resplab-ministat ministat resplab-benchstat benchstat; do
    report "$name"
done
[ -n "$have_ministat" ] || echo "ministat: not installed (apt-get install ministat)"
[ -n "$have_benchstat" ] || echo "benchstat: not installed (go install golang.org/x/perf/cmd/benchstat@latest)"
