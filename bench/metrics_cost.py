#!/usr/bin/env python3
"""Client CPU per request of `resplab bench` without and with `--metrics-addr`,
side by side: pairs in alternating order (A B, B A, ...), the endpoint scraped once a
second, server pinned to CPU 0 and client to CPU 1. Prints each run and the medians.

usage: bench/metrics_cost.py [RESPLAB] [PAIRS]
"""
import json, os, socket, statistics, subprocess, sys, tempfile, threading, time, urllib.request

binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/resplab"
pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 10

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def scrape(port, stop):
    while not stop.is_set():
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=1).read()
        except OSError:
            pass
        stop.wait(1.0)

def run(server_port, with_endpoint, work):
    out = os.path.join(work, "r.json")
    args = ["taskset", "-c", "1", binary, "bench", "-p", str(server_port), "-t", "get",
            "-r", "10000", "-c", "8", "--rate", "20000", "--test-time", "6", "-q",
            "--no-progress", "--json", out]
    stop = threading.Event()
    if with_endpoint:
        mport = free_port()
        args += ["--metrics-addr", f"127.0.0.1:{mport}"]
        t = threading.Thread(target=scrape, args=(mport, stop)); t.start()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    stop.set()
    r = json.load(open(out))
    cpu = r["client_cpu"]["user_sec"] + r["client_cpu"]["system_sec"]
    return 1e6 * cpu / r["totals"]["requests"]

with tempfile.TemporaryDirectory() as work:
    port = free_port()
    server = subprocess.Popen(["taskset", "-c", "0", "redis-server", "--port", str(port),
                               "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                               "--dir", work], stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    try:
        without, with_ = [], []
        for i in range(pairs):
            order = [False, True] if i % 2 == 0 else [True, False]
            for arm in order:
                (with_ if arm else without).append(run(port, arm, work))
            print(f"pair {i+1}: without {without[-1]:.2f} us/req, with {with_[-1]:.2f} us/req", flush=True)
        ratios = [b / a for a, b in zip(without, with_)]
        print(f"median without {statistics.median(without):.2f} us/req, with {statistics.median(with_):.2f} us/req; "
              f"median of pair ratios {statistics.median(ratios):.3f}; pairs higher with the endpoint: "
              f"{sum(r > 1 for r in ratios)} of {pairs}")
    finally:
        server.terminate()
