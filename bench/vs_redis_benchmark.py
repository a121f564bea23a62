#!/usr/bin/env python3
"""resplab bench against redis-benchmark, side by side on the same redis-server.

For each workload line the two tools run alternately (A B A B ...), each run against the
same freshly started redis-server. The server is pinned to one CPU and the client to
another (taskset). For every run the script records throughput (from the tool's
redis-benchmark-style --csv output) and the client's CPU time (user + system, from the
kernel's rusage of the child process), and prints per-line medians and the ratios
resplab / redis-benchmark.

With --tls both tools connect to the server's TLS port (certificates made with openssl
for the run, verified against their CA by both tools).

With --cluster M each run gets a fresh local Redis Cluster of M masters (all pinned to the
server CPU), formed with redis-cli --cluster create, and both tools run with --cluster and
-r 100000 (so keys spread over the slots). The connection counts are made equal: resplab's
-c is per master (each client connects to every master), redis-benchmark's -c is the
total, so redis-benchmark gets -c clients x M.

With memtier_benchmark on PATH (or MEMTIER=/path/to/memtier_benchmark) it runs as a
third tool in the same rotation: one thread, the same connections (-c; with --cluster,
--cluster-mode and -c per master as resplab), the same pipeline and value size (-d 3,
redis-benchmark's default), random keys over 100000 (--key-pattern R:R), requests per
connection = total / connections; its throughput is its "Totals" line.

Usage: [MEMTIER=PATH] bench/vs_redis_benchmark.py [--reps N] [--resplab PATH] [--server-cpu N]
       [--client-cpu N] [--scale F] [--only TEXT] [--tls] [--cluster M]
"""

import argparse
import csv
import io
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

LINES = [
    # (label, test name, clients, pipeline, requests)
    ("SET  -c 50 -P 1", "set", 50, 1, 200_000),
    ("GET  -c 50 -P 1", "get", 50, 1, 200_000),
    ("SET  -c 50 -P 16", "set", 50, 16, 2_000_000),
    ("PING_MBULK -c 50 -P 64", "ping_mbulk", 50, 64, 5_000_000),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_certs():
    """A CA and a server certificate for 127.0.0.1 and localhost, in a temporary folder."""
    d = tempfile.mkdtemp(prefix="resplab-bench-tls-")
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run = lambda *a: subprocess.run(list(a), cwd=d, check=True,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run("openssl", "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=bench CA")
    run("openssl", "req", *ec, "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=localhost")
    with open(os.path.join(d, "ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext")
    return d


def start_server(cpu, certs=None):
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="resplab-bench-")
    cmd = ["taskset", "-c", str(cpu), "redis-server", "--port", str(port),
           "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
           "--dir", workdir, "--logfile", os.path.join(workdir, "server.log")]
    tls_port = None
    if certs:
        tls_port = free_port()
        cmd += ["--tls-port", str(tls_port),
                "--tls-cert-file", os.path.join(certs, "server.pem"),
                "--tls-key-file", os.path.join(certs, "server.key"),
                "--tls-ca-cert-file", os.path.join(certs, "ca.pem"),
                "--tls-auth-clients", "no"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return proc, (tls_port or port), workdir
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("redis-server did not start")


def start_cluster(cpu, masters):
    """M cluster nodes on free ports (bus ports chosen too), formed into one cluster."""
    procs, ports, dirs = [], [], []
    for _ in range(masters):
        port, bus = free_port(), free_port()
        workdir = tempfile.mkdtemp(prefix="resplab-bench-cluster-")
        cmd = ["taskset", "-c", str(cpu), "redis-server", "--port", str(port),
               "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
               "--cluster-port", str(bus), "--dir", workdir,
               "--logfile", os.path.join(workdir, "server.log")]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        ports.append(port)
        dirs.append(workdir)
    deadline = time.time() + 10
    for port in ports:
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        break
            except OSError:
                pass
            if time.time() > deadline:
                sys.exit("a cluster node did not start")
            time.sleep(0.05)
    subprocess.run(["redis-cli", "--cluster", "create"] + [f"127.0.0.1:{p}" for p in ports]
                   + ["--cluster-yes"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        states = [subprocess.run(["redis-cli", "-p", str(p), "cluster", "info"],
                                 capture_output=True, text=True).stdout for p in ports]
        if all("cluster_state:ok" in st for st in states):
            return procs, ports[0], dirs
        time.sleep(0.1)
    sys.exit("the cluster did not reach cluster_state:ok")


def stop_server(proc, workdir):
    proc.terminate()
    proc.wait()
    shutil.rmtree(workdir, ignore_errors=True)


def timed(cmd):
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        outfile = os.open(timed.outpath, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(outfile, 1)
        os.dup2(devnull, 2)
        os.execvp(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    with open(timed.outpath) as f:
        out = f.read()
    if code != 0:
        sys.exit(f"{' '.join(cmd)} exited with {code}")
    return out, usage.ru_utime + usage.ru_stime


timed.outpath = os.path.join(tempfile.gettempdir(), f"resplab-bench-{os.getpid()}.out")


def rps_from_csv(text):
    # redis-benchmark --cluster prints the masters it found before the CSV rows.
    text = "\n".join(line for line in text.splitlines() if line.startswith('"'))
    rows = list(csv.reader(io.StringIO(text)))
    data = [r for r in rows if r and r[0] != "test"]
    if len(data) != 1:
        sys.exit(f"expected one CSV result row, got: {text!r}")
    return float(data[0][1])


def memtier_rps(text):
    for line in text.splitlines():
        if line.startswith("Totals"):
            return float(line.split()[1])
    sys.exit(f"no Totals line in memtier_benchmark's output: {text[-500:]!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--resplab", default="target/release/resplab")
    ap.add_argument("--server-cpu", type=int, default=0)
    ap.add_argument("--client-cpu", type=int, default=1)
    ap.add_argument("--only", default="",
                    help="run only the workload lines whose label contains this text")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply request counts (e.g. 0.1 for a quick look)")
    ap.add_argument("--tls", action="store_true",
                    help="both tools over TLS (verified against a CA made for the run)")
    ap.add_argument("--cluster", type=int, default=0, metavar="M",
                    help="against a fresh local cluster of M masters (SET/GET at -P 16)")
    args = ap.parse_args()
    lines = LINES
    if args.cluster:
        lines = [("cluster SET -c 50 -P 16", "set", 50, 16, 2_000_000),
                 ("cluster GET -c 50 -P 16", "get", 50, 16, 2_000_000)]
    memtier = os.environ.get("MEMTIER") or shutil.which("memtier_benchmark")
    certs = make_certs() if args.tls else None
    tls_flags = ["--tls", "--cacert", os.path.join(certs, "ca.pem")] if certs else []
    for tool in ("redis-benchmark", "redis-server", "taskset", args.resplab):
        if not shutil.which(tool) and not os.path.exists(tool):
            sys.exit(f"{tool} not found (apt-get install redis-server redis-tools util-linux; "
                     "cargo build --release)")

    if certs:
        print("both tools over TLS (redis-server's TLS port, certificates verified)")
    print(f"server pinned to CPU {args.server_cpu}, client to CPU {args.client_cpu}; "
          f"{args.reps} repetitions per tool, interleaved; medians shown")
    if args.cluster:
        print(f"a fresh {args.cluster}-master cluster per run; resplab -c per master, "
              f"redis-benchmark -c x {args.cluster} (the same connections)")
    header = (f"{'workload':<24} {'rb ops/s':>11} {'resplab ops/s':>14} {'ratio':>6} "
              f"{'rb us/req':>10} {'resplab us/req':>15} {'ratio':>6}")
    if memtier:
        print(f"memtier_benchmark: {memtier}")
        header += f" {'mt ops/s':>10} {'mt us/req':>10} {'rl/mt':>6}"
    else:
        print("memtier_benchmark: not found (give MEMTIER=PATH); redis-benchmark only")
    print(header)
    results = []
    for label, test, clients, pipeline, requests in lines:
        if args.only and args.only not in label:
            continue
        n = max(1000, int(requests * args.scale))
        common = ["-t", test, "-P", str(pipeline), "-n", str(n), "--csv"]
        if args.cluster:
            common += ["--cluster", "-r", "100000"]
        rb, rl, mt = ({"rps": [], "cpu": []}, {"rps": [], "cpu": []},
                      {"rps": [], "cpu": []})
        for rep in range(args.reps):
            order = [("rb", rb), ("rl", rl)] + ([("mt", mt)] if memtier else [])
            # Rotate the order each repetition so no tool always goes first.
            shift = rep % len(order)
            order = order[shift:] + order[:shift]
            for name, acc in order:
                if args.cluster:
                    servers, port, workdirs = start_cluster(args.server_cpu, args.cluster)
                else:
                    server, port, workdir = start_server(args.server_cpu, certs)
                    servers, workdirs = [server], [workdir]
                rb_clients = clients * max(1, args.cluster)
                try:
                    if name == "mt":
                        cmd = ["taskset", "-c", str(args.client_cpu), memtier,
                               "-s", "127.0.0.1", "-p", str(port), "-t", "1",
                               "-c", str(clients), "--pipeline", str(pipeline),
                               "-d", "3", "--key-pattern", "R:R", "--key-maximum", "100000",
                               "--ratio", "1:0" if test == "set" else "0:1",
                               "-n", str(max(1, n // clients)), "--hide-histogram"]
                        if certs:
                            cmd += ["--tls", "--cacert", os.path.join(certs, "ca.pem")]
                        if args.cluster:
                            cmd += ["--cluster-mode"]
                    elif name == "rb":
                        cmd = ["taskset", "-c", str(args.client_cpu), "redis-benchmark",
                               "-p", str(port), "-c", str(rb_clients)] + tls_flags + common
                    else:
                        cmd = ["taskset", "-c", str(args.client_cpu), args.resplab, "bench",
                               "-p", str(port), "-c", str(clients), "--no-progress",
                               "--seed", str(rep + 1)] + tls_flags + common
                    out, cpu = timed(cmd)
                finally:
                    for server, workdir in zip(servers, workdirs):
                        stop_server(server, workdir)
                if name == "mt":
                    sent = max(1, n // clients) * clients
                    acc["rps"].append(memtier_rps(out))
                    acc["cpu"].append(cpu * 1e6 / sent)
                else:
                    acc["rps"].append(rps_from_csv(out))
                    acc["cpu"].append(cpu * 1e6 / n)
        rb_rps, rl_rps = statistics.median(rb["rps"]), statistics.median(rl["rps"])
        rb_cpu, rl_cpu = statistics.median(rb["cpu"]), statistics.median(rl["cpu"])
        line = (f"{label:<24} {rb_rps:>11.0f} {rl_rps:>14.0f} {rl_rps / rb_rps:>6.2f} "
                f"{rb_cpu:>10.3f} {rl_cpu:>15.3f} {rl_cpu / rb_cpu:>6.2f}")
        if memtier:
            mt_rps, mt_cpu = statistics.median(mt["rps"]), statistics.median(mt["cpu"])
            line += f" {mt_rps:>10.0f} {mt_cpu:>10.3f} {rl_cpu / mt_cpu:>6.2f}"
        print(line)
        results.append((label, rb, rl, mt))
    print("\nall runs (ops/s; client CPU us per request):")
    for label, rb, rl, mt in results:
        extra = (f" | memtier {[round(x) for x in mt['rps']]} {[round(x, 3) for x in mt['cpu']]}"
                 if mt["rps"] else "")
        print(f"  {label}: rb {[round(x) for x in rb['rps']]} {[round(x, 3) for x in rb['cpu']]}"
              f" | resplab {[round(x) for x in rl['rps']]} {[round(x, 3) for x in rl['cpu']]}"
              + extra)


if __name__ == "__main__":
    main()
