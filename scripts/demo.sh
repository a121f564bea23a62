#!/usr/bin/env bash
# The demo: installs prerequisites when missing, builds resplab, and runs a small A/B
# experiment with two real redis-server variants against throwaway servers it starts
# itself, ending in a verdict.
set -euo pipefail
cd "$(dirname "$0")/.."
RESPLAB_SETUP_BROWSER=0 bash scripts/setup.sh
cargo build --release --locked -q
exec ./target/release/resplab bench -t set,get -n 100000 -c 50
