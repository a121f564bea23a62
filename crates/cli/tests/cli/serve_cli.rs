//! `resplab serve` end to end: the real binary serving `resplab bench`, redis-cli and
//! `resplab experiment`, with each fault knob counted correctly by the load generator.

use crate::common::{Serve, BIN};
use serde_json::Value;
use std::process::Command;

fn bench(port: u16, args: &[&str]) -> (Value, i32) {
    let out = Command::new(BIN)
        .args([
            "bench",
            "-p",
            &port.to_string(),
            "--no-progress",
            "--json",
            "-",
        ])
        .args(args)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().unwrap_or(-1))
}

#[test]
fn the_whole_bench_catalog_and_redis_cli_run_against_it() {
    let _alone = crate::common::alone();
    let s = Serve::start(&["--threads", "2"]);
    let (rec, code) = bench(s.port, &["-n", "2000", "-c", "8"]);
    assert_eq!(code, 0);
    assert_eq!(rec["totals"]["errors"], 0, "{:#}", rec["totals"]);
    assert!(rec["commands"].as_object().unwrap().len() >= 20);
    assert_eq!(rec["connections"]["protocol_errors"], 0);
    // RESP3 and pipelining.
    let (rec, code) = bench(
        s.port,
        &[
            "-t",
            "set,get,lrange",
            "-n",
            "3000",
            "--resp",
            "3",
            "-P",
            "16",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(rec["totals"]["errors"], 0);
    // redis-cli, as a person would use it.
    let cli = |args: &[&str]| {
        let out = Command::new("redis-cli")
            .args(["-p", &s.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli is installed (apt-get install redis-tools)");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(cli(&["SET", "k", "v"]), "OK");
    assert_eq!(cli(&["GET", "k"]), "v");
    assert_eq!(cli(&["ZADD", "z", "1", "a"]), "1");
    assert_eq!(cli(&["-3", "ZRANGE", "z", "0", "-1", "WITHSCORES"]), "a\n1");
    assert!(cli(&["NOSUCH"]).starts_with("ERR unknown command"));
}

#[test]
fn dropped_connections_and_garbage_are_counted_and_survived() {
    let _alone = crate::common::alone();
    let s = Serve::start(&["--drop-every", "100"]);
    let (rec, code) = bench(s.port, &["-t", "get", "-n", "5000", "-c", "4"]);
    assert_eq!(code, 0, "{:#}", rec["end"]);
    let get = &rec["commands"]["GET"];
    assert!(
        rec["connections"]["reconnects"].as_u64().unwrap() >= 10,
        "{:#}",
        rec["connections"]
    );
    assert!(
        get["error_kinds"]["connection_lost"].as_u64().unwrap() >= 10,
        "{get:#}"
    );
    assert_eq!(rec["connections"]["protocol_errors"], 0);

    let s = Serve::start(&["--garbage-every", "50"]);
    let (rec, code) = bench(s.port, &["-t", "get", "-n", "3000", "-c", "2"]);
    assert_eq!(code, 0, "{:#}", rec["end"]);
    assert!(
        rec["connections"]["protocol_errors"].as_u64().unwrap() >= 10,
        "{:#}",
        rec["connections"]
    );

    // Knobs change under load: CONFIG SET turns the fault off.
    let out = Command::new("redis-cli")
        .args([
            "-p",
            &s.port.to_string(),
            "CONFIG",
            "SET",
            "garbage-every",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "OK");
    let (rec, _) = bench(s.port, &["-t", "get", "-n", "3000", "-c", "2"]);
    assert_eq!(rec["connections"]["protocol_errors"], 0);
}

/// A 150 ms stall every second, measured open loop: latency from the intended send time
/// shows it in the tail; the closed-loop service time hides most of it.
#[test]
fn stalls_show_in_open_loop_latency() {
    let _alone = crate::common::alone();
    let s = Serve::start(&["--stall", "150", "--stall-every", "1"]);
    let (rec, _) = bench(
        s.port,
        &[
            "-t",
            "get",
            "--rate",
            "2000",
            "--test-time",
            "2.5",
            "-c",
            "4",
        ],
    );
    let max_ms = rec["totals"]["latency_us"]["max"].as_f64().unwrap() / 1e3;
    let p999_ms = rec["totals"]["latency_us"]["p99_9"].as_f64().unwrap() / 1e3;
    assert!((120.0..400.0).contains(&max_ms), "max {max_ms} ms");
    assert!(p999_ms > 50.0, "p99.9 {p999_ms} ms");
    let p50_ms = rec["totals"]["latency_us"]["p50"].as_f64().unwrap() / 1e3;
    assert!(p50_ms < 20.0, "p50 {p50_ms} ms");
}

/// Two servers that differ by exactly a known amount: `--slowdown 20` makes the server
/// 1/1.2 as fast at saturation, whatever its base cost; the experiment's (99 %) interval
/// for the throughput effect contains −16.7 %. `--work-ns 2000` makes the server, not
/// the client, the bottleneck by far, so saturation is what each trial measures.
#[test]
fn a_known_slowdown_is_found_by_an_experiment() {
    let _alone = crate::common::alone();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("exp.toml");
    std::fs::write(
        &file,
        format!(
            r#"
[experiment]
name = "known-slowdown"
rounds = 8
test_time = "0.6s"
warmup = "0.2s"
# One client thread drives the server to saturation (where the slowdown is exact).
client_cpu_limit = 1.0

[[variant]]
name = "base"
server = "{BIN} serve --port {{port}} --work-ns 2000"

[[variant]]
name = "slower"
server = "{BIN} serve --port {{port}} --work-ns 2000 --slowdown 20"

[[workload]]
name = "set"
tests = "set"
clients = 50
pipeline = 16
threads = 1
"#
        ),
    )
    .unwrap();
    let db = dir.path().join("r.db");
    let out = Command::new(BIN)
        .args(["experiment", "run"])
        .arg(&file)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    crate::common::assert_ok(&out);
    let out = Command::new(BIN)
        .args(["compare", "db:known-slowdown", "--db"])
        .arg(&db)
        // 99 %: the test asks whether the truth is inside, and should not fail one run
        // in twenty by design.
        .args(["--format", "json", "-c", "99"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "ops_per_sec" && r["workload"] == "set")
        .unwrap();
    let (lo, hi) = (
        row["ci_low_pct"].as_f64().unwrap(),
        row["ci_high_pct"].as_f64().unwrap(),
    );
    let truth = (1.0 / 1.2 - 1.0) * 100.0;
    assert!(
        lo <= truth && truth <= hi,
        "[{lo}, {hi}] should contain {truth}"
    );
}

/// How many of this process's open descriptors a child inherits (those without
/// close-on-exec), from `/proc/self/fdinfo`.
fn inherited_descriptors() -> u64 {
    const CLOEXEC: u64 = 0o2_000_000;
    let Ok(dir) = std::fs::read_dir("/proc/self/fdinfo") else {
        return 3;
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .filter_map(|info| {
            let flags = info.lines().find_map(|l| l.strip_prefix("flags:"))?;
            u64::from_str_radix(flags.trim(), 8).ok()
        })
        .filter(|flags| flags & CLOEXEC == 0)
        .count() as u64
}

/// User plus system CPU of process `pid` so far, in clock ticks (from `/proc/PID/stat`).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc readable");
    let after = &stat[stat.rfind(')').expect("a stat line") + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15; the state (field 3) comes first after ")".
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

/// At its file-descriptor limit the server answers each new client
/// `-ERR max number of clients reached` and closes it, as Redis does; it stays idle (it
/// used to retry `accept` in a tight loop, a whole core, leaving the clients unanswered
/// in the backlog) and keeps serving the clients it has, and takes new ones once some
/// leave.
#[test]
fn at_the_descriptor_limit_new_clients_are_refused_and_the_server_stays_idle() {
    use std::io::{ErrorKind, Read, Write};
    use std::net::TcpStream;
    use std::time::{Duration, Instant};
    let _alone = crate::common::alone();
    // 32 descriptors of its own, whatever the test process hands down: descriptors
    // inherited from the caller (a jobserver's pipes under cargo, a CI runner's) count
    // against the server's limit too.
    let nofile = 32 + inherited_descriptors().saturating_sub(3);
    let mut prlimit = Command::new("prlimit");
    prlimit.args([&format!("--nofile={nofile}:{nofile}"), BIN]);
    let s = Serve::start_with(prlimit, &[]);
    let pid = s.child.id();
    // More clients than descriptors; the backlog takes them all.
    let clients: Vec<TcpStream> = (0..40)
        .map(|_| TcpStream::connect(("127.0.0.1", s.port)).expect("connects"))
        .collect();
    // Sort them as the server answers: refused (told so, closed) or held (silent).
    // Done once no refusal has come for half a second (after the first, or 5 s).
    let (mut held, mut refused, mut closed_silently) = (clients, 0, 0);
    let (t0, mut last_change) = (Instant::now(), Instant::now());
    while (refused == 0 && t0.elapsed() < Duration::from_secs(5))
        || last_change.elapsed() < Duration::from_millis(500)
    {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the server never settled"
        );
        std::thread::sleep(Duration::from_millis(50));
        let mut silent = Vec::new();
        for mut c in held {
            c.set_nonblocking(true).unwrap();
            let mut b = [0u8; 64];
            match c.read(&mut b) {
                Err(e) if e.kind() == ErrorKind::WouldBlock => silent.push(c),
                Ok(n) => {
                    let mut said = b[..n].to_vec();
                    c.set_nonblocking(false).unwrap();
                    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    let _ = c.read_to_end(&mut said);
                    // A close with nothing said was seen once in a whole-suite run and
                    // is not explained; it is counted apart, and must stay the exception.
                    // (`read_to_end` may meet a reset after the refusal: what was read
                    // counts.)
                    if said.is_empty() {
                        closed_silently += 1;
                    } else {
                        assert_eq!(
                            String::from_utf8_lossy(&said),
                            "-ERR max number of clients reached\r\n"
                        );
                        refused += 1;
                    }
                    last_change = Instant::now();
                }
                // A reset is a close without the refusal too (seen once in a
                // whole-suite run): counted apart with them.
                Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                    closed_silently += 1;
                    last_change = Instant::now();
                }
                Err(e) => panic!("a client got {e}"),
            }
        }
        held = silent;
    }
    assert!(refused > 0, "no client was refused ({} held)", held.len());
    assert!(
        closed_silently < refused,
        "{closed_silently} clients were closed without the refusal ({refused} refused)"
    );
    assert!(held.len() >= 10, "only {} clients held", held.len());
    // Idle at the limit: next to no CPU over two seconds (a spinning acceptor takes
    // every tick it can get).
    let before = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(2));
    let used = cpu_ticks(pid) - before;
    assert!(used < 10, "the idle server used {used} ticks of CPU in 2 s");
    let ping = |c: &mut TcpStream| -> Vec<u8> {
        c.set_nonblocking(false).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(b"PING\r\n").unwrap();
        let mut b = vec![0u8; 64];
        let n = c.read(&mut b).unwrap_or(0);
        b.truncate(n);
        b
    };
    // The clients it holds are served.
    assert_eq!(ping(&mut held[0]), b"+PONG\r\n");
    // Room again once clients leave.
    held.truncate(1);
    let t0 = Instant::now();
    loop {
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).expect("connects");
        std::thread::sleep(Duration::from_millis(50));
        if ping(&mut c) == b"+PONG\r\n" {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "no room after clients left"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
