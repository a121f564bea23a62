#!/usr/bin/env bash
# Installs what resplab's demo and test suite need on a fresh Debian machine, and nothing
# when it is already there: redis-server and redis-tools (the server under test and
# redis-benchmark), go (the client-library example), openssh (the scale-out test's ssh
# generators), prometheus (promtool checks the live metrics text, and a real prometheus
# scrapes a running bench), linux-perf (the hardware counters of a trial's server),
# ministat and benchstat
# (the tools `compare` is cross-checked against), Debian's chromium (the headless
# browser the HTML report test opens; RESPLAB_SETUP_BROWSER=0 skips it), and a Rust
# toolchain check. Safe to run again.
set -euo pipefail

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v redis-benchmark >/dev/null 2>&1 || need_apt+=(redis-tools)
command -v ministat >/dev/null 2>&1 || need_apt+=(ministat)
# prometheus (with promtool): the --metrics-addr tests
{ command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; } || need_apt+=(prometheus)
# openssl: the TLS tests make X.509 v1 certificates the way users do
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
# go: examples/client-library.toml builds a Go benchmark (and benchstat, below, is one)
command -v go >/dev/null 2>&1 || need_apt+=(golang-go)
# perf: the experiment counts a started server's instructions and cycles with perf stat
command -v perf >/dev/null 2>&1 || need_apt+=(linux-perf)
# sshd and ssh: the scale-out test runs generators through ssh to this machine.
[ -x /usr/sbin/sshd ] || need_apt+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need_apt+=(openssh-client)
if [ "${RESPLAB_SETUP_BROWSER:-1}" = 1 ]; then
  command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! command -v benchstat >/dev/null 2>&1 && [ ! -x "${GOBIN:-$HOME/go/bin}/benchstat" ]; then
  if command -v go >/dev/null 2>&1; then
    echo "setup: installing benchstat" >&2
    go install golang.org/x/perf/cmd/benchstat@latest
  else
    echo "setup: go is missing, so benchstat cannot be installed (compare cross-checks need it)" >&2
  fi
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo is missing: install Rust from https://rustup.rs first" >&2
  exit 2
fi
