#!/usr/bin/env python3
"""The cost of sampling on the counted numbers (ops/s and the server's CPU µs per
request, `server_cpu_us_per_op`): the demo experiment (examples/demo.toml:
no persistence against appendfsync always, SET load) run without [profile], with
[profile] trials = "extra" (the default) and with trials = "counted", in alternating
order (N O E C, then C E O N reversed, ...), each run a fresh database. Prints every
run's median ops/s of the counted trials per variant, and the median over runs of each
mode against the runs without profiles.

usage: bench/profile_overhead.py [RESPLAB] [REPS] [ROUNDS]
"""
import os, sqlite3, statistics, subprocess, sys, tempfile

binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/resplab"
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 4

MODES = {
    "none": "",
    "extra": "[profile]\ntrials = \"extra\"\n",
    "counted": "[profile]\ntrials = \"counted\"\n",
}

def experiment(mode):
    demo = open("examples/demo.toml").read()
    demo = demo.replace("rounds = 6", f"rounds = {rounds}")
    return demo.replace("[[variant]]", MODES[mode] + "\n[[variant]]", 1)

def run(mode, work, n):
    spec = os.path.join(work, f"{mode}-{n}.toml")
    db = os.path.join(work, f"{mode}-{n}.db")
    open(spec, "w").write(experiment(mode))
    subprocess.run([binary, "experiment", "run", spec, "--db", db], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = sqlite3.connect(db).execute(
        "SELECT v.name, m.name, m.value FROM metrics m JOIN trials t ON m.trial_id = t.id "
        "JOIN variants v ON t.variant_id = v.id "
        "WHERE m.name IN ('ops_per_sec', 'server_cpu_us_per_op') AND m.command = 'all' "
        "AND t.valid = 1").fetchall()
    out = {}
    for v, metric, x in rows:
        out.setdefault(f"{v} {metric}", []).append(x)
    return {k: statistics.median(xs) for k, xs in out.items()}

results = {m: [] for m in MODES}
with tempfile.TemporaryDirectory() as work:
    order = list(MODES)
    for n in range(reps):
        for mode in (order if n % 2 == 0 else order[::-1]):
            r = run(mode, work, n)
            results[mode].append(r)
            print(mode, n, {k: round(x, 2) for k, x in sorted(r.items())}, flush=True)

print("\nmedian over runs of each run's median of its counted trials:")
base = {}
for mode, runs in results.items():
    for v in sorted(runs[0]):
        med = statistics.median(r[v] for r in runs)
        if mode == "none":
            base[v] = med
        print(f"  {mode:8} {v:42} {med:10.2f}  {100 * (med / base[v] - 1):+6.2f} % vs none")
