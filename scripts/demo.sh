#!/usr/bin/env bash
# The demo: installs prerequisites when missing, builds resplab, and runs a small A/B
# experiment (examples/demo.toml): two real redis-server variants, appendonly off versus
# an append-only file fsynced after every write, each started fresh for every trial on a
# free loopback port, in six randomized interleaved rounds. It ends with the verdict and
# the full comparison of the stored trials, and writes an HTML report with plots; the
# result database is ./demo-out/demo.db, the report ./demo-out/demo.html.
set -euo pipefail
cd "$(dirname "$0")/.."
RESPLAB_SETUP_BROWSER="${RESPLAB_SETUP_BROWSER:-0}" bash scripts/setup.sh
cargo build --release --locked -q -p resplab-cli
resplab="${CARGO_TARGET_DIR:-target}/release/resplab"
out=demo-out
mkdir -p "$out"
rm -f "$out/demo.db"
"$resplab" experiment run examples/demo.toml --db "$out/demo.db"
"$resplab" compare db:demo --db "$out/demo.db"
"$resplab" report demo --db "$out/demo.db" -o "$out/demo.html"
echo "demo: report written to $out/demo.html"
