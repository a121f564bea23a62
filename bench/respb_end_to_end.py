#!/usr/bin/env python3
"""RESP against RESPB end to end: resplab bench against one resplab serve process.

One `resplab serve --respb-port` (release build) serves both protocols for the whole run.
For every workload line (the protocol lab's shapes: small GET, 50-byte SET, 1 KB SET and a
mix) at every pipeline depth, resplab bench runs alternately over RESP and over RESPB
(RESP, RESPB, RESP, RESPB, ...), the same flags otherwise, for --rounds rounds. The
server is pinned to one CPU and the client to another (taskset).

Per run it records
  - ops/s: the run's totals.ops_per_sec (closed loop);
  - server CPU per request: serve's used_cpu_user + used_cpu_sys (INFO cpu, asked on the
    RESP port before and after the run, so warm-up and set-up included) over the run's
    requests plus the warm-up's (estimated at the measured rate);
  - client CPU per request: the run's client_cpu (user + system) over its requests;
  - bytes on the wire per request: the commands' bytes_out + bytes_in (application
    bytes, no TCP/IP headers) over the requests.
Each round pairs its RESP and RESPB runs; the table gives each protocol's median and the
median of the paired ratios RESPB/RESP with a distribution-free interval for that median
from order statistics (the widest-needed pair of order statistics whose coverage is at
least 95 %, or the full range and its coverage when there are too few rounds for 95 %).

GET reads 100,000 keys of its own (8-byte values), written once before the first run.
The mixed line is GET, SET (32 bytes), DEL and MGET of three keys in equal parts: the
protocol lab's mix without its JSON, Bloom and search commands, which serve does not have.

Usage: bench/respb_end_to_end.py [--quick] [--rounds N] [--time SEC] [--clients N]
       [--server-cpu N] [--client-cpu N] [--resplab PATH] [--json FILE]
"""

import argparse
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time

WORKLOADS = [
    # (label, bench flags). GET reads keys of its own, preloaded with 8-byte values once,
    # so that what it finds does not depend on which runs came before.
    ("GET small", ["--command", "GET g:__key__", "--key-maximum", "100000"]),
    ("SET 50 B", ["-t", "set", "-d", "50", "-r", "100000"]),
    ("SET 1 KB", ["-t", "set", "-d", "1024", "-r", "100000"]),
    (
        "mixed",
        [
            "--command", "GET __key__",
            "--command", "SET __key__ __data__",
            "--command", "DEL __key__",
            "--command", "MGET __key__ __key__ __key__",
            "-d", "32",
            "--key-maximum", "100000",
        ],
    ),
]


def info_cpu(port):
    """serve's used_cpu_user + used_cpu_sys in seconds, from INFO cpu on its RESP port."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"*2\r\n$4\r\nINFO\r\n$3\r\ncpu\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            head, _, rest = data.partition(b"\r\n")
            if head.startswith(b"$") and len(rest) >= int(head[1:]):
                break
    total = 0.0
    for line in data.decode(errors="replace").splitlines():
        k, _, v = line.partition(":")
        if k in ("used_cpu_user", "used_cpu_sys"):
            total += float(v)
    return total


def start_serve(resplab, cpu):
    p = subprocess.Popen(
        ["taskset", "-c", str(cpu), resplab, "serve", "--port", "0", "--respb-port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    port = respb = None
    for _ in range(2):
        line = p.stdout.readline()
        if "listening on 127.0.0.1:" in line:
            port = int(line.split("listening on 127.0.0.1:")[1].split()[0])
        if "RESPB on 127.0.0.1:" in line:
            respb = int(line.split("RESPB on 127.0.0.1:")[1].split()[0])
    if port is None or respb is None:
        p.kill()
        sys.exit("serve did not print its ports")
    return p, port, respb


def one_run(a, port, resp_port, protocol, flags, pipeline):
    before = info_cpu(resp_port)
    cmd = ["taskset", "-c", str(a.client_cpu), a.resplab, "bench", "-p", str(port),
           "--protocol", protocol, "-c", str(a.clients), "-P", str(pipeline),
           "--test-time", str(a.time), "--warmup", str(a.warmup), "--no-progress",
           "--json", "-", "-q"] + flags
    out = subprocess.run(cmd, capture_output=True, text=True)
    after = info_cpu(resp_port)
    if out.returncode != 0:
        sys.exit(f"bench failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr}")
    rec = json.loads(out.stdout)
    req = rec["totals"]["requests"]
    if rec["totals"]["errors"]:
        sys.exit(f"errors in {' '.join(cmd)}: {rec['totals']}")
    cmds = rec["commands"].values()
    wire = sum(c["bytes_in"] + c["bytes_out"] for c in cmds)
    cpu = rec["client_cpu"]
    # The server's CPU covers the warm-up too: divide by every request it served.
    served = req / max(rec["duration_sec"], 1e-9) * (rec["duration_sec"] + a.warmup)
    return {
        "ops": rec["totals"]["ops_per_sec"],
        "server_us": (after - before) / served * 1e6,
        "client_us": (cpu["user_sec"] + cpu["system_sec"]) / req * 1e6,
        "bytes": wire / req,
    }


def median_interval(xs):
    """The sample median and an order-statistics interval for the population median."""
    xs = sorted(xs)
    n = len(xs)
    best = (xs[0], xs[-1], 1 - 2 * 0.5 ** n)
    for k in range(1, n // 2 + 1):
        # [x(k), x(n+1-k)] covers the median with probability 1 - 2 P(Bin(n, 1/2) < k).
        tail = sum(math.comb(n, i) for i in range(k)) / 2 ** n
        cover = 1 - 2 * tail
        if cover >= 0.95:
            best = (xs[k - 1], xs[n - k], cover)
    return statistics.median(xs), best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 rounds of 0.3 s, pipelines 1 and 16")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--time", type=float, default=1.0, help="measured seconds per run")
    ap.add_argument("--warmup", type=float, default=0.2)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--pipelines", default="1,16,64")
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--resplab", default="target/release/resplab")
    ap.add_argument("--json", help="write every run's numbers here")
    a = ap.parse_args()
    if a.quick:
        a.rounds, a.time, a.warmup, a.pipelines = 2, 0.3, 0.1, "1,16"
    pipelines = [int(p) for p in a.pipelines.split(",")]
    load_before = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    serve, resp_port, respb_port = start_serve(a.resplab, a.server_cpu)
    runs = []
    try:
        preload = subprocess.run(
            ["taskset", "-c", str(a.client_cpu), a.resplab, "bench", "-p", str(resp_port),
             "--command", "SET g:__key__ __data__", "-d", "8", "--command-key-pattern", "S",
             "--key-maximum", "100000", "-n", "100000", "-P", "64", "-c", "1", "-q",
             "--no-progress"], capture_output=True, text=True)
        if preload.returncode != 0:
            sys.exit(f"preload failed: {preload.stderr}")
        for pipeline in pipelines:
            for label, flags in WORKLOADS:
                for rnd in range(a.rounds):
                    for proto, port in (("resp", resp_port), ("respb", respb_port)):
                        r = one_run(a, port, resp_port, proto, flags, pipeline)
                        r.update(workload=label, pipeline=pipeline, round=rnd, protocol=proto)
                        runs.append(r)
                        print(f"# {label:9} -P {pipeline:<3} round {rnd} {proto:5} "
                              f"{r['ops']:>10.0f} ops/s", file=sys.stderr)
    finally:
        serve.kill()
        serve.wait()
    load_after = os.getloadavg()
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "started": started, "loadavg_before": load_before,
                       "loadavg_after": load_after, "runs": runs}, f, indent=1)
    print(f"rounds {a.rounds}, {a.time} s measured + {a.warmup} s warm-up per run, "
          f"-c {a.clients}, serve --threads 1 on CPU {a.server_cpu}, bench --threads 1 on "
          f"CPU {a.client_cpu}")
    print(f"started {started}; load average (1, 5, 15 min) {load_before[0]:.2f} "
          f"{load_before[1]:.2f} {load_before[2]:.2f} before, {load_after[0]:.2f} "
          f"{load_after[1]:.2f} {load_after[2]:.2f} after ({os.cpu_count()} CPUs)")
    print()
    print("| workload | -P | metric | RESP | RESPB | RESPB/RESP (median of paired ratios) | interval |")
    print("|---|---:|---|---:|---:|---:|---|")
    metrics = [("ops", "ops/s", "{:.0f}"), ("server_us", "server CPU µs/req", "{:.2f}"),
               ("client_us", "client CPU µs/req", "{:.2f}"), ("bytes", "wire bytes/req", "{:.1f}")]
    for pipeline in pipelines:
        for label, _ in WORKLOADS:
            sel = [r for r in runs if r["workload"] == label and r["pipeline"] == pipeline]
            by = {(r["round"], r["protocol"]): r for r in sel}
            for key, name, fmt in metrics:
                resp = [by[(i, "resp")][key] for i in range(a.rounds)]
                respb = [by[(i, "respb")][key] for i in range(a.rounds)]
                ratios = [b / r for r, b in zip(resp, respb) if r > 0]
                med, (lo, hi, cover) = median_interval(ratios)
                print(f"| {label} | {pipeline} | {name} | {fmt.format(statistics.median(resp))} "
                      f"| {fmt.format(statistics.median(respb))} | {med:.3f} "
                      f"| [{lo:.3f}, {hi:.3f}] ({cover * 100:.1f} %) |")


if __name__ == "__main__":
    main()
