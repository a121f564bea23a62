#!/bin/sh
# Real A/A duets (BENCHMARKS.md section 20): N runs until decided of two identical
# `resplab serve --work-ns 2000` variants, no margin, max_time as given, seeds 1..N;
# prints each run's verdict line.
# usage: bench/duet_aa.sh RESPLAB N MAX_TIME OUT_DIR
set -eu
resplab=$1 n=$2 max_time=$3 out=$4
mkdir -p "$out"
i=1
while [ "$i" -le "$n" ]; do
    cat > "$out/aa$i.toml" <<TOML
[experiment]
name = "aa$i"
order = "duet"
seed = $i
until = "decided"
max_time = "$max_time"
test_time = "0.6s"
warmup = "0.2s"
primary_metric = "server_cpu_us_per_op"

[[variant]]
name = "a"
server = "$resplab serve --port {port} --work-ns 2000"

[[variant]]
name = "b"
server = "$resplab serve --port {port} --work-ns 2000"

TOML
    cat "$(dirname "$0")/set_workload.toml" >> "$out/aa$i.toml"
    load=$(cut -d' ' -f1 /proc/loadavg)
    verdict=$("$resplab" experiment run "$out/aa$i.toml" --db "$out/aa.db" 2>/dev/null | grep 'vs baseline:' | tail -1)
    echo "aa$i load=$load $verdict"
    i=$((i + 1))
done
