#!/usr/bin/env python3
"""Real A/A runs until decided, RMIT and duet alternating (BENCHMARKS.md section 25).

Each experiment has two identical `resplab serve --work-ns 2000` variants, SET with 8
clients, pipeline 8, one client thread, 0.6 s trials after 0.2 s of warm-up, primary
metric `server_cpu_us_per_op`, run until decided with a short `max_time` and no
margin, so an A/A run stops early only on a false positive. Seeds 1..N; the methods
alternate (rmit 1, duet 1, rmit 2, duet 2, ...) so the machine's load falls on both
alike. The stopping rule is the experiment file's default (`until_rule` unset) unless
RULE is given. For each run it prints the method, the load average at its start, how
it stopped and its verdict line; at the end, per method, the count of runs that stopped
"different" with its 95 % Clopper-Pearson interval.

With SLOWDOWN (a percentage), variant b runs `--slowdown SLOWDOWN` instead: a known
slowdown, which should stop SLOWER.

From the stored rounds it then prints, per method, what a fixed-sample paired t test
at the last round and naive peeking (that test after every round from the third) would
have claimed, and how heavy-tailed the rounds were.

usage: bench/until_aa.py RESPLAB N MAX_TIME_SEC OUT_DIR [METHODS] [RULE] [SLOWDOWN]
       METHODS: "rmit,duet" (the default), "rmit" or "duet"
       bench/until_aa.py --rounds DB   (the stored rounds' report alone)
"""
import math, os, re, sqlite3, subprocess, sys

# The workload the sequential and duet checks share.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "set_workload.toml")) as f:
    SET_WORKLOAD = f.read()


def experiment(name, order, seed, max_time, resplab, rule, slowdown):
    rule_line = f'until_rule = "{rule}"\n' if rule else ""
    extra = f" --slowdown {slowdown}" if slowdown else ""
    return f"""[experiment]
name = "{name}"
order = "{order}"
seed = {seed}
until = "decided"
max_time = "{max_time}s"
{rule_line}test_time = "0.6s"
warmup = "0.2s"
primary_metric = "server_cpu_us_per_op"

[[variant]]
name = "a"
server = "{resplab} serve --port {{port}} --work-ns 2000"

[[variant]]
name = "b"
server = "{resplab} serve --port {{port}} --work-ns 2000{extra}"

""" + SET_WORKLOAD


def beta_cdf(x, a, b):
    """The regularized incomplete beta I_x(a, b), by its continued fraction (the
    modified Lentz method)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - beta_cdf(1 - x, b, a)
    tiny = 1e-300
    f, c, d = 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            num = 1.0
        elif i % 2 == 0:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + num * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + num / c
        c = c if abs(c) > tiny else tiny
        f *= c * d
        if abs(1.0 - c * d) < 1e-12:
            break
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log(1 - x)) / a
    return front * (f - 1.0)


def beta_quantile(p, a, b):
    """Quantile of Beta(a, b) by bisection on its CDF."""
    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if beta_cdf(mid, a, b) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def t_rejects(xs, alpha=0.05):
    """The fixed-sample two-sided paired t test at level alpha on the log ratios xs."""
    n = len(xs)
    if n < 2:
        return False
    m = sum(xs) / n
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    if var <= 0:
        return False
    t = m / math.sqrt(var / n)
    df = n - 1
    return beta_cdf(df / (df + t * t), df / 2, 0.5) < alpha


def log_ratios(db, name):
    """The per-round log ratios b/a of the primary metric of stored experiment name."""
    c = sqlite3.connect(db)
    rows = c.execute(
        """SELECT t.round, v.name, m.value FROM trials t
           JOIN variants v ON v.id = t.variant_id
           JOIN experiments e ON e.id = t.experiment_id
           JOIN metrics m ON m.trial_id = t.id
           WHERE e.name = ? AND t.valid = 1 AND m.name = 'server_cpu_us_per_op'
             AND m.command = 'all' ORDER BY t.round""",
        (name,)).fetchall()
    by_round = {}
    for r, v, x in rows:
        by_round.setdefault(r, {})[v] = x
    return [math.log(d["b"] / d["a"]) for _, d in sorted(by_round.items())
            if d.get("a", 0) > 0 and d.get("b", 0) > 0]


def rounds_report(db):
    """Per method, from the stored rounds: the fixed-sample t test at the last round,
    naive peeking (that test after every round from the third), the median rounds and
    spread, and how heavy the tails were (rounds more than 3 MADs from the median)."""
    c = sqlite3.connect(db)
    names = [r[0] for r in c.execute("SELECT name FROM experiments ORDER BY id")]
    by_method = {}
    for name in names:
        method = re.sub(r"[0-9]+$", "", name)
        by_method.setdefault(method, []).append(log_ratios(db, name))
    for method, runs in by_method.items():
        fixed = sum(t_rejects(d) for d in runs)
        peek = sum(any(t_rejects(d[:k]) for k in range(3, len(d) + 1)) for d in runs)
        sds, far, total = [], 0, 0
        for d in runs:
            if len(d) >= 3:
                med = sorted(d)[len(d) // 2]
                mad = sorted(abs(x - med) for x in d)[len(d) // 2] * 1.4826
                m = sum(d) / len(d)
                sds.append(math.sqrt(sum((x - m) ** 2 for x in d) / (len(d) - 1)))
                far += sum(abs(x - med) > 3 * mad for x in d) if mad > 0 else 0
                total += len(d)
        sds.sort()
        rounds = sorted(len(d) for d in runs)
        print(f"{method}: {len(runs)} runs, rounds median {rounds[len(rounds) // 2]} "
              f"(min {rounds[0]}, max {rounds[-1]}); fixed-sample t test at the last "
              f"round rejected {fixed}, naive peeking from round 3 rejected {peek}; "
              f"sd of a round's log ratio median {sds[len(sds) // 2]:.3f}; "
              f"{far} of {total} rounds more than 3 MADs from their run's median")


def clopper_pearson(k, n):
    lo = 0.0 if k == 0 else beta_quantile(0.025, k, n - k + 1)
    hi = 1.0 if k == n else beta_quantile(0.975, k + 1, n - k)
    return lo, hi


def main():
    if sys.argv[1] == "--rounds":
        rounds_report(sys.argv[2])
        return
    resplab, n, max_time, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    methods = (sys.argv[5] if len(sys.argv) > 5 else "rmit,duet").split(",")
    rule = sys.argv[6] if len(sys.argv) > 6 and sys.argv[6] != "-" else None
    slowdown = sys.argv[7] if len(sys.argv) > 7 else None
    os.makedirs(out, exist_ok=True)
    db = os.path.join(out, "until_aa.db")
    tally = {m: [0, 0] for m in methods}
    for seed in range(1, n + 1):
        for method in methods:
            name = f"{method}{seed}"
            path = os.path.join(out, name + ".toml")
            with open(path, "w") as f:
                f.write(experiment(name, method, seed, max_time, resplab, rule, slowdown))
            load = open("/proc/loadavg").read().split()[0]
            run = subprocess.run([resplab, "experiment", "run", path, "--db", db],
                                 capture_output=True, text=True)
            lines = run.stdout.splitlines()
            verdict = next((l.strip() for l in lines if "vs baseline:" in l), "no verdict")
            stop = next((l.strip() for l in lines if "sequential run:" in l), "")
            different = bool(re.search(r": (SLOWER|FASTER|HIGHER|LOWER):", verdict))
            tally[method][0] += int(different)
            tally[method][1] += 1
            print(f"{name} load={load} exit={run.returncode} | {stop} | {verdict}", flush=True)
    for method, (k, total) in tally.items():
        lo, hi = clopper_pearson(k, total)
        print(f"{method}: {k} of {total} stopped different "
              f"({100 * k / max(total, 1):.1f} %, 95 % CI {100 * lo:.1f}-{100 * hi:.1f} %)")
    rounds_report(db)


if __name__ == "__main__":
    main()
