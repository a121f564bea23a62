#!/usr/bin/env bash
# The test command: installs prerequisites when missing, then checks formatting and lints
# and runs the whole test suite (unit, property, integration against real redis-server,
# cross-checks against real ministat and benchstat).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PATH="$PATH:${GOBIN:-$HOME/go/bin}"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked --profile ci
