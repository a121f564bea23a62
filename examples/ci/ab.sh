#!/usr/bin/env bash
# A/B of two server builds with resplab, for CI: is HEAD slower than BASE?
#
#   examples/ci/ab.sh [options] BASE_SERVER_CMD HEAD_SERVER_CMD
#
# Each command starts one server and must contain {port} (resplab fills in a free loopback
# port for every trial; {dir} is a fresh directory). The two are run as an experiment of
# interleaved rounds until its verdict is decided or --max-time is reached, then:
#
#   OUT/verdict.txt   what `resplab experiment run` printed (the verdict per workload)
#   OUT/report.md     the Markdown report (plots as SVG files in OUT/report-files)
#   OUT/summary.md    the verdict and the comparison table, short enough for a job summary;
#                     appended to $GITHUB_STEP_SUMMARY when that is set
#   OUT/ab.db         every trial (`resplab compare db:ab --db OUT/ab.db` reads it again)
#
# Exit codes are resplab's: 0 no regression decided beyond --threshold; 1 HEAD was decided
# slower than BASE by more than --threshold percent; 2 bad usage or a failed run. The
# report is written before the script exits, whatever the verdict.
#
# Options (defaults in brackets):
#   --out DIR          where the files go [resplab-ab]; must not hold an ab.db already
#   --threshold PCT    the regression that fails the gate, percent [5]
#   --margin PCT       differences provably within ±PCT are called equivalent [2]
#   --max-time DUR     the run's time limit (e.g. 90s, 10m) [5m]
#   --metric NAME      the metric decided on (ops_per_sec, p99_us, ...) [ops_per_sec]
#   --tests LIST       redis-benchmark tests of the workload [get,set]
#   --clients N        connections [8]     --pipeline N   requests in flight each [1]
#   --threads N        load-generator threads [2]
#   --test-time DUR    measured time per trial [1s]
# The resplab binary is $RESPLAB, else `resplab` on PATH.
set -euo pipefail

usage() {
  echo "usage: ab.sh [--out DIR] [--threshold PCT] [--margin PCT] [--max-time DUR] [--metric NAME] [--tests LIST] [--clients N] [--pipeline N] [--threads N] [--test-time DUR] BASE_SERVER_CMD HEAD_SERVER_CMD" >&2
}
fail() {
  echo "ab.sh: $*" >&2
  exit 2
}

out=resplab-ab threshold=5 margin=2 max_time=5m metric=ops_per_sec
tests=get,set clients=8 pipeline=1 threads=2 test_time=1s
servers=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out | --threshold | --margin | --max-time | --metric | --tests | --clients | --pipeline | --threads | --test-time)
      [ $# -ge 2 ] || fail "$1: expected a value after it"
      name=${1#--}
      printf -v "${name//-/_}" '%s' "$2"
      shift 2
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    --*) usage; fail "$1: unknown option" ;;
    *)
      servers+=("$1")
      shift
      ;;
  esac
done
[ ${#servers[@]} -eq 2 ] || { usage; fail "expected two server commands (BASE and HEAD), found ${#servers[@]}"; }
for i in 0 1; do
  case "${servers[$i]}" in
    *'{port}'*) ;;
    *) fail "$([ "$i" = 0 ] && echo BASE || echo HEAD)_SERVER_CMD: expected a command with {port} in it, found \"${servers[$i]}\"" ;;
  esac
done
for n in threshold margin; do
  [[ ${!n} =~ ^[0-9]+([.][0-9]+)?$ ]] || fail "--$n: expected a percentage, found \"${!n}\""
done
resplab=${RESPLAB:-resplab}
command -v "$resplab" >/dev/null 2>&1 || fail "resplab not found (set RESPLAB or put it on PATH)"
mkdir -p "$out"
[ ! -e "$out/ab.db" ] || fail "--out $out: already holds ab.db from an earlier run; give a fresh directory"

# A TOML basic string: backslashes and double quotes escaped.
toml_string() {
  local s=${1//\\/\\\\}
  printf '"%s"' "${s//\"/\\\"}"
}

cat >"$out/ab.toml" <<TOML
# Written by examples/ci/ab.sh: BASE against HEAD, interleaved rounds until decided.
[experiment]
name = "ab"
test_time = $(toml_string "$test_time")
warmup = "200ms"
order = "rmit"
primary_metric = $(toml_string "$metric")
margin = $(awk -v m="$margin" 'BEGIN { print m / 100 }')

[[variant]]
name = "base"
server = $(toml_string "${servers[0]}")

[[variant]]
name = "head"
server = $(toml_string "${servers[1]}")

[[workload]]
name = "ab"
tests = $(toml_string "$tests")
clients = $clients
pipeline = $pipeline
threads = $threads
TOML

code=0
"$resplab" experiment run "$out/ab.toml" --db "$out/ab.db" -q \
  --until-decided --max-time "$max_time" --fail-on-regression "$threshold" \
  >"$out/verdict.txt" || code=$?
cat "$out/verdict.txt"
case $code in
  0 | 1) ;;
  *)
    echo "ab.sh: the experiment failed (exit $code); what it stored is in $out/ab.db" >&2
    exit 2
    ;;
esac

"$resplab" report ab --db "$out/ab.db" -o "$out/report.md" >/dev/null
{
  echo "## resplab A/B: base vs head"
  echo
  if [ $code = 1 ]; then
    echo "**Regression:** head was decided slower than base by more than $threshold % ($metric)."
  else
    echo "No regression beyond $threshold % was decided ($metric)."
  fi
  echo
  echo '```'
  cat "$out/verdict.txt"
  echo '```'
  echo
  "$resplab" compare db:ab --db "$out/ab.db" --format markdown
} >"$out/summary.md"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi
echo "ab.sh: report in $out/report.md, summary in $out/summary.md" >&2
exit $code
