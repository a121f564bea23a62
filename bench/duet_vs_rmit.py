#!/usr/bin/env python3
"""Duet against RMIT on the same wall-time budget (BENCHMARKS.md section 20).

Runs A/A experiments of two identical redis-server variants, alternating the two
methods (duet, rmit, duet, rmit, ...), each a run until decided with no margin and
the same max_time, so both spend the same wall time (an A/A comparison is decided
only by a false positive). From each stored experiment it takes the per-round log
ratio of the primary metric and of ops_per_sec and reports the 95 % t-interval
half-width of their mean, with the run's verdict line.

usage: bench/duet_vs_rmit.py RESPLAB PAIRS MAX_TIME_SEC OUT_DIR
"""
import json, math, os, sqlite3, subprocess, sys

T975 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31,
        9: 2.26, 10: 2.23, 12: 2.18, 15: 2.13, 20: 2.09, 25: 2.06, 30: 2.04, 40: 2.02}

# The workload the sequential and duet checks share.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "set_workload.toml")) as f:
    SET_WORKLOAD = f.read()


def t975(df):
    keys = sorted(k for k in T975 if k <= df)
    return T975[keys[-1]] if keys else float("inf")


def experiment(name, order, max_time):
    return f"""
[experiment]
name = "{name}"
order = "{order}"
until = "decided"
max_time = "{max_time}s"
test_time = "1s"
warmup = "0.2s"
primary_metric = "server_cpu_us_per_op"

[[variant]]
name = "a"
server = "redis-server --port {{port}} --save '' --appendonly no"

[[variant]]
name = "b"
server = "redis-server --port {{port}} --save '' --appendonly no"

""" + SET_WORKLOAD


def log_ratios(db, name, metric):
    c = sqlite3.connect(db)
    rows = c.execute(
        """SELECT t.round, v.name, m.value FROM trials t
           JOIN variants v ON v.id = t.variant_id
           JOIN experiments e ON e.id = t.experiment_id
           JOIN metrics m ON m.trial_id = t.id
           WHERE e.name = ? AND t.valid = 1 AND m.name = ? AND m.command = 'all'""",
        (name, metric)).fetchall()
    by_round = {}
    for r, v, x in rows:
        by_round.setdefault(r, {})[v] = x
    return [math.log(d["b"] / d["a"]) for d in by_round.values()
            if d.get("a", 0) > 0 and d.get("b", 0) > 0]


def half_width(xs):
    n = len(xs)
    if n < 2:
        return float("nan"), n
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return t975(n - 1) * sd / math.sqrt(n) * 100, n


def main():
    resplab, pairs, max_time, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    os.makedirs(out, exist_ok=True)
    db = os.path.join(out, "r.db")
    results = []
    for i in range(pairs):
        for order in ("duet", "rmit"):
            name = f"{order}{i}"
            path = os.path.join(out, name + ".toml")
            with open(path, "w") as f:
                f.write(experiment(name, order, max_time))
            with open("/proc/loadavg") as f:
                load = f.read().split()[0]
            p = subprocess.run([resplab, "experiment", "run", path, "--db", db],
                               capture_output=True, text=True)
            verdict = [l.strip() for l in p.stdout.splitlines() if "vs baseline:" in l][-1:]
            row = {"name": name, "order": order, "load": load, "rc": p.returncode,
                   "verdict": verdict[0] if verdict else p.stderr.strip()[-200:]}
            for metric in ("server_cpu_us_per_op", "ops_per_sec"):
                hw, n = half_width(log_ratios(db, name, metric))
                row[metric] = round(hw, 2)
                row["rounds"] = n
            results.append(row)
            print(json.dumps(row), flush=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)


main()
