#!/usr/bin/env python3
"""resplab memtier against the real memtier_benchmark: what the server sees, and CPU.

Runs wherever memtier_benchmark is on PATH (or MEMTIER=/path/to/memtier_benchmark) and
redis-server is installed. Every run gets a fresh redis-server on a free loopback port.

Modes:

  --record FILE   runs each line of crates/cli/tests/memtier/lines.txt with the real
                  memtier_benchmark and writes the facts the server saw (INFO
                  commandstats calls per command, INFO stats total_connections_received)
                  and the keys of memtier's --json-out-file to FILE (the fixture
                  crates/cli/tests/memtier/facts.json, checked by the test
                  memtier_oracle.rs without memtier).
  (default)       runs each line with both tools and prints, per line, the command
                  shares and connection counts side by side.
  --cpu           client CPU per request (user + system time of the tool's process from
                  the kernel's rusage, divided by the requests the server counted) of
                  `resplab memtier` and memtier_benchmark on the same lines, alternating
                  A B A B, --reps times each; prints medians and the ratio.

Lines are shortened the same way as in the test: -s/-p appended, --test-time becomes 1,
a line without -n or --test-time gets -n 200.

Usage: [MEMTIER=PATH] bench/vs_memtier.py [--record FILE | --cpu] [--resplab PATH]
       [--reps N] [--only TEXT]
"""

import argparse
import json
import os
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINES = os.path.join(ROOT, "crates/cli/tests/memtier/lines.txt")
# Commands a tool sends to set itself up or that this script sends; not the workload.
SETUP = {"info", "config|resetstat", "config", "hello", "auth", "select",
         "cluster|slots", "cluster|nodes", "cluster", "command", "client|setname",
         "readonly", "flushall"}
CPU_LINES = [
    "-t 1 -c 50 --ratio 1:10 --test-time 5",
    "-t 1 -c 50 --ratio 1:1 --pipeline 16 --test-time 5",
    "-t 1 -c 10 --command=\"HSET __key__ f __data__\" --command=\"HGET __key__ f\" --test-time 5",
    # The HSET/HGET line's SET:GET twin: the same 10 connections, the mix's commands.
    "-t 1 -c 10 --ratio 1:1 --test-time 5",
    # The command-generation options: WAITs among the SETs, MONITOR replay, SCAN cursors.
    "-t 1 -c 10 --ratio 1:1 --wait-ratio 1:1 --test-time 5",
    "-t 1 -c 10 --monitor-input=monitor.txt --command=__monitor_line@__ --test-time 5",
    "-t 1 -c 10 --command=\"SCAN 0 COUNT 100\" --scan-incremental-iteration --test-time 5",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_lines():
    out = []
    with open(LINES) as f:
        for raw in f:
            line = raw.strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


def shorten(line, port):
    """The line as run: server appended, --test-time 1, -n 200 when no length is given."""
    words = shlex.split(line)
    out, i, has_length = [], 0, False
    while i < len(words):
        w = words[i]
        if w in ("--test-time",):
            out += [w, "1"]
            i += 2
            has_length = True
            continue
        if w.startswith("--test-time="):
            out.append("--test-time=1")
            i += 1
            has_length = True
            continue
        if w in ("-n", "--requests") or w.startswith("--requests=") or (w.startswith("-n") and len(w) > 2):
            has_length = True
        out.append(w)
        i += 1
    if not has_length:
        out += ["-n", "200"]
    return out + ["-s", "127.0.0.1", "-p", str(port)]


class Server:
    """A fresh redis-server, and one connection to it opened before the tool runs (so
    the server's connection count after CONFIG RESETSTAT is the tool's alone)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="resplab-vs-memtier-")
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir, "--databases", "16"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                self.sock = socket.create_connection(("127.0.0.1", self.port))
                break
            except OSError:
                time.sleep(0.02)
        self.buf = b""
        self.cmd("FLUSHALL")
        self.cmd("CONFIG", "RESETSTAT")

    def cmd(self, *args):
        req = b"*%d\r\n" % len(args) + b"".join(
            b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in args)
        self.sock.sendall(req)
        return self.reply()

    def reply(self):
        while b"\r\n" not in self.buf:
            self.buf += self.sock.recv(65536)
        head, self.buf = self.buf.split(b"\r\n", 1)
        if head[:1] == b"$":
            n = int(head[1:])
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(65536)
            body, self.buf = self.buf[:n], self.buf[n + 2:]
            return body.decode()
        return head.decode()

    def facts(self):
        info = self.cmd("INFO", "everything")
        calls, conns = {}, 0
        for row in info.splitlines():
            if row.startswith("total_connections_received:"):
                conns = int(row.split(":")[1])
            if row.startswith("cmdstat_"):
                name, rest = row[len("cmdstat_"):].split(":", 1)
                calls[name] = int(rest.split(",")[0].split("=")[1])
        workload = {k: v for k, v in calls.items() if k not in SETUP}
        return {"connections": conns, "calls": workload}

    def stop(self):
        self.sock.close()
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def run_tool(argv):
    """Runs a tool in the folder of lines.txt (where the files its lines name, such as
    monitor.txt, are); returns (exit code, client CPU seconds, stderr)."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         cwd=os.path.dirname(LINES))
    _, err = p.communicate()
    return p.returncode, 0.0, err.decode(errors="replace")


def json_keys(path):
    with open(path) as f:
        doc = json.load(f)
    section = next((k for k in doc if k.endswith("STATS") or k.endswith("RESULTS")), None)
    keys = {"top": sorted(k for k in doc if k in ("configuration", "run information", section))}
    if section:
        keys["section"] = sorted(doc[section].keys())
        keys["totals"] = sorted(doc[section]["Totals"].keys())
    return keys


def observe(tool_argv, line):
    """One line through one tool against a fresh server: what the server saw."""
    srv = Server()
    try:
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.json")
            argv = tool_argv + shorten(line, srv.port) + ["--json-out-file=" + out]
            code, _, err = run_tool(argv)
            facts = srv.facts()
            facts["exit"] = code
            if code == 0 and os.path.exists(out):
                facts["json_keys"] = json_keys(out)
            elif code != 0:
                facts["stderr"] = err.strip().splitlines()[-1:] if err.strip() else []
            return facts
    finally:
        srv.stop()


def shares(calls):
    total = sum(calls.values()) or 1
    return {k: 100.0 * v / total for k, v in calls.items()}


def record(memtier, path, only):
    facts = []
    for line in read_lines():
        if only and only not in line:
            continue
        f = observe([memtier], line)
        f["line"] = line
        facts.append(f)
        print(f"{f['connections']:4d} conns  {json.dumps(f['calls'])}  {line}", flush=True)
    with open(path, "w") as out:
        json.dump({"tool": version(memtier), "lines": facts}, out, indent=1, sort_keys=True)
        out.write("\n")


def version(memtier):
    p = subprocess.run([memtier, "--version"], capture_output=True, text=True)
    return (p.stdout or p.stderr).strip().splitlines()[0]


def compare(memtier, resplab, only):
    bad = 0
    for line in read_lines():
        if only and only not in line:
            continue
        m = observe([memtier], line)
        r = observe([resplab, "memtier"], line)
        sm, sr = shares(m["calls"]), shares(r["calls"])
        worst = max((abs(sm.get(k, 0) - sr.get(k, 0)) for k in set(sm) | set(sr)), default=0)
        ok = worst <= 5 and m["connections"] == r["connections"] - 1
        bad += not ok
        print(f"{'ok ' if ok else 'BAD'} conns {m['connections']}/{r['connections'] - 1}"
              f" share diff {worst:4.1f}  {line}", flush=True)
    print(f"{bad} lines differ (resplab's count excludes its one control connection)")
    return bad


def cpu_run(argv):
    """(client CPU seconds, requests the server counted) of one run."""
    srv = Server()
    try:
        before = os.times()
        p = subprocess.run(argv + ["-s", "127.0.0.1", "-p", str(srv.port), "--hide-histogram"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           cwd=os.path.dirname(LINES))
        after = os.times()
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        reqs = sum(srv.facts()["calls"].values())
        if p.returncode != 0:
            sys.exit(f"{argv[0]} failed ({p.returncode})")
        return cpu, reqs
    finally:
        srv.stop()


def cpu(memtier, resplab, reps, only):
    for line in CPU_LINES:
        if only and only not in line:
            continue
        words = shlex.split(line)
        per = {"memtier": [], "resplab": []}
        for _ in range(reps):
            for name, argv in (("memtier", [memtier] + words), ("resplab", [resplab, "memtier"] + words)):
                c, n = cpu_run(argv)
                per[name].append(1e6 * c / max(n, 1))
        m, r = statistics.median(per["memtier"]), statistics.median(per["resplab"])
        print(f"{line}\n  memtier_benchmark {m:.2f} us/request, resplab memtier {r:.2f} us/request,"
              f" ratio {r / m:.2f} (medians of {reps}; all: memtier {per['memtier']}, resplab {per['resplab']})",
              flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record")
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--resplab", default=os.path.join(ROOT, "target/release/resplab"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only")
    a = ap.parse_args()
    memtier = os.environ.get("MEMTIER") or shutil.which("memtier_benchmark")
    if not memtier:
        sys.exit("memtier_benchmark is not on PATH (or set MEMTIER=/path/to/memtier_benchmark)")
    if not shutil.which("redis-server"):
        sys.exit("redis-server is not installed")
    if a.record:
        record(memtier, a.record, a.only)
    elif a.cpu:
        cpu(memtier, a.resplab, a.reps, a.only)
    else:
        sys.exit(1 if compare(memtier, a.resplab, a.only) else 0)


if __name__ == "__main__":
    main()
