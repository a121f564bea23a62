//! `resplab bench` end to end: the real binary against a real redis-server started on a
//! free loopback port, and every kind of bad input.

use crate::common::command_within;
use resplab_testkit::redis::RedisServer;
use serde_json::Value;
use std::time::Duration;

/// Longest a single `resplab` call may take.
const LIMIT: Duration = Duration::from_secs(120);

/// Runs `resplab bench ARGS` (killed after [`LIMIT`]).
fn bench(args: &[&str]) -> std::process::Output {
    command_within(LIMIT)
        .arg("bench")
        .args(args)
        .output()
        .unwrap()
}

/// Runs a bench with `--json -` against `server` and returns the record.
fn bench_json(server: &RedisServer, args: &[&str]) -> Value {
    let port = server.port().to_string();
    let out = command_within(LIMIT)
        .args(["bench", "-p", &port, "--no-progress", "--json", "-"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON record")
}

#[test]
fn bad_input_exits_2_naming_flag_value_and_expectation() {
    let _lane = crate::common::shared();
    let cases: &[(&[&str], &str)] = &[
        (
            &["-t", "sett"],
            "invalid -t test name 'sett': expected one of",
        ),
        (
            &["--ratio", "1-10"],
            "invalid --ratio '1-10': expected SET:GET",
        ),
        (&["--key-pattern", "R:Q"], "--key-pattern"),
        (&["--data-size-list", "32:x"], "--data-size-list"),
        (&["--data-size-range", "9-3"], "--data-size-range"),
        (
            &["-p", "70000"],
            "invalid value '70000' for --port: expected a whole number from 1 to 65535",
        ),
        (&["-p", "0"], "--port"),
        (&["-u", "http://x"], "--uri"),
        (&["-u", "redis://h:99999"], "--uri"),
        (
            &["-n", "10", "--test-time", "1"],
            "-n/--requests cannot be used together with --test-time",
        ),
        (&["-c", "0"], "-c/--clients"),
        (&["-P", "abc"], "-P/--pipeline"),
        (&["--rate=-5"], "--rate"),
        (&["--rate", "0"], "--rate"),
        (&["--arrivals", "poisson"], "--arrivals"),
        (
            &["--resp", "4"],
            "invalid value '4' for --resp: expected 2 or 3",
        ),
        (&["--user", "bob"], "--user"),
        (
            &["-t", "set", "--ratio", "1:1"],
            "cannot be used together with -t/--tests",
        ),
        (&["--command", "GET \"unterminated"], "--command"),
        (&["--command-ratio", "2"], "need --command"),
        (
            &["-d", "10", "--data-size-range", "1-5"],
            "cannot be used together",
        ),
        (&["--seed", "x"], "--seed"),
    ];
    for (args, expected) in cases {
        let out = command_within(LIMIT)
            .arg("bench")
            .args(*args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let _lane = crate::common::shared();
    let out = bench(&["--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn json_record_has_the_documented_schema() {
    let _lane = crate::common::shared();
    let server = RedisServer::start().unwrap();
    let rec = bench_json(
        &server,
        &["-t", "set,get", "-n", "3000", "-c", "10", "--seed", "7"],
    );
    // Warnings depend on the machine's load (a busy client is warned about): their
    // entries are left out of the shape, the array itself stays.
    let shape: String = shape_of(&rec)
        .lines()
        .filter(|l| !l.starts_with(".warnings[]"))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!("bench_json_shape", shape);
    assert_eq!(rec["schema_version"], 1);
    assert_eq!(rec["seed"], 7);
    assert_eq!(rec["config"]["seed"], 7);
    assert_eq!(rec["load_model"]["kind"], "closed_loop");
    for cmd in ["SET", "GET"] {
        let s = &rec["commands"][cmd];
        assert_eq!(s["requests"], 3000, "{cmd}");
        assert_eq!(s["errors"], 0, "{cmd}");
        assert!(s["ops_per_sec"].as_f64().unwrap() > 0.0);
        assert!(s["latency_us"]["p50"].as_f64().unwrap() > 0.0);
        assert!(s["histogram"].as_str().unwrap().starts_with("HISTF"));
        let h =
            resplab_stats::hist::LatencyHistogram::from_base64(s["histogram"].as_str().unwrap())
                .unwrap();
        assert_eq!(h.count(), 3000);
    }
    assert_eq!(rec["totals"]["requests"], 6000);
    assert!(rec["server"]["redis_version"].is_string());
    let mut c = server.client().unwrap();
    assert_eq!(
        c.cmd(&["DBSIZE"]).unwrap().as_int(),
        Some(1),
        "SET key:__rand_int__ without -r"
    );
}

/// The JSON's structure with values replaced by their types, arrays by their first element.
fn shape_of(v: &Value) -> String {
    fn walk(v: &Value, path: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    // Keys below these are data (server INFO fields, command names,
                    // error kinds), not schema.
                    let p = if ["server", "commands", "error_kinds"]
                        .contains(&path.rsplit('.').next().unwrap_or(""))
                    {
                        format!("{path}.*")
                    } else {
                        format!("{path}.{k}")
                    };
                    walk(v, &p, out);
                }
            }
            Value::Array(a) => {
                out.push(format!("{path}: array"));
                if let Some(first) = a.first() {
                    walk(first, &format!("{path}[]"), out);
                }
            }
            Value::String(_) => out.push(format!("{path}: string")),
            Value::Number(_) => out.push(format!("{path}: number")),
            Value::Bool(_) => out.push(format!("{path}: bool")),
            Value::Null => out.push(format!("{path}: null")),
        }
    }
    let mut out = Vec::new();
    walk(v, "", &mut out);
    out.sort();
    out.dedup();
    out.join("\n")
}

#[test]
fn csv_and_quiet_layouts_match_redis_benchmark() {
    let _lane = crate::common::shared();
    let server = RedisServer::start().unwrap();
    let port = server.port().to_string();
    let out = bench(&[
        "-p",
        &port,
        "-t",
        "set,lrange_100",
        "-n",
        "1000",
        "-c",
        "5",
        "--csv",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"");
    let titles: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split("\",\"").next().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "\"SET",
            "\"LPUSH (needed to benchmark LRANGE)",
            "\"LRANGE_100 (first 100 elements)"
        ]
    );
    for l in &lines[1..] {
        let fields: Vec<&str> = l.split(',').collect();
        assert_eq!(fields.len(), 8, "{l}");
        for f in &fields[1..] {
            let n = f.trim_matches('"');
            assert!(n.parse::<f64>().is_ok(), "{l}");
            let decimals = n.split('.').nth(1).unwrap().len();
            assert!(decimals == 2 || decimals == 3, "{l}");
        }
    }
    let out = bench(&[
        "-p",
        &port,
        "-t",
        "ping_inline,get",
        "-n",
        "1000",
        "-c",
        "5",
        "-q",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    let re_like = |l: &str, name: &str| {
        let rest = l.strip_prefix(&format!("{name}: ")).unwrap();
        let (rps, p50) = rest.split_once(" requests per second, p50=").unwrap();
        assert!(rps.parse::<f64>().is_ok() && p50.ends_with(" msec"), "{l}");
    };
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    re_like(lines[0], "PING_INLINE");
    re_like(lines[1], "GET");
}

#[test]
fn hdr_out_writes_percentile_files() {
    let _lane = crate::common::shared();
    let server = RedisServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("lat");
    let port = server.port().to_string();
    let out = command_within(LIMIT)
        .args([
            "bench",
            "-p",
            &port,
            "-t",
            "get",
            "-n",
            "2000",
            "-c",
            "4",
            "--hdr-out",
        ])
        .arg(&prefix)
        .output()
        .unwrap();
    crate::common::assert_ok(&out);
    for name in ["lat_GET.hgrm", "lat_TOTAL.hgrm"] {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert!(
            text.starts_with("       Value     Percentile TotalCount 1/(1-Percentile)"),
            "{text}"
        );
        assert!(text.contains("Total count    =         2000]"), "{text}");
    }
}

#[test]
fn password_from_flag_env_and_uri_never_appears_in_output() {
    let _lane = crate::common::shared();
    let secret = "s3cret-Pa55";
    let server = RedisServer::start_with(&["--requirepass", secret], false).unwrap();
    let port = server.port().to_string();
    // Without a password the server refuses: a clear error, exit 2.
    let out = bench(&["-p", &port, "-t", "get", "-n", "10", "-c", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let uri = format!("redis://:{secret}@127.0.0.1:{port}/3");
    // redis-cli's lone-password form: the word before the @ is the password.
    let lone = format!("redis://{secret}@127.0.0.1:{port}/3");
    for args in [
        vec![
            "-p".to_string(),
            port.clone(),
            "-a".to_string(),
            secret.to_string(),
        ],
        vec!["-u".to_string(), uri],
        vec!["-u".to_string(), lone],
    ] {
        let out = command_within(LIMIT)
            .arg("bench")
            .args(&args)
            .args(["-t", "set", "-n", "200", "-c", "2", "--json", "-"])
            .output()
            .unwrap();
        crate::common::assert_ok(&out);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!all.contains(secret), "password leaked: {all}");
        let rec: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(rec["config"]["auth"], true);
    }
    let out = command_within(LIMIT)
        .env("REDISCLI_AUTH", secret)
        .args([
            "bench", "-p", &port, "-t", "get", "-n", "100", "-c", "1", "--json", "-",
        ])
        .output()
        .unwrap();
    crate::common::assert_ok(&out);
    assert!(!String::from_utf8_lossy(&out.stdout).contains(secret));
    // The URI selected database 3: the SET key lives there.
    let mut c = server.client().unwrap();
    c.cmd(&["AUTH", secret]).unwrap();
    c.cmd(&["SELECT", "3"]).unwrap();
    assert_eq!(
        c.cmd(&["EXISTS", "key:__rand_int__"]).unwrap().as_int(),
        Some(1)
    );
}

#[test]
fn select_resp3_and_unix_socket() {
    let _lane = crate::common::shared();
    let server = RedisServer::start_with_socket().unwrap();
    let sock = server.socket_path().unwrap().to_path_buf();
    let out = command_within(LIMIT)
        .args([
            "bench",
            "--no-progress",
            "-t",
            "set,get",
            "-n",
            "500",
            "-c",
            "3",
            "--resp",
            "3",
            "--select",
            "5",
            "--json",
            "-",
            "-s",
        ])
        .arg(&sock)
        .output()
        .unwrap();
    crate::common::assert_ok(&out);
    let rec: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rec["config"]["resp"], 3);
    assert_eq!(rec["config"]["target"]["kind"], "unix");
    assert_eq!(rec["commands"]["GET"]["errors"], 0);
    let mut c = server.client().unwrap();
    c.cmd(&["SELECT", "5"]).unwrap();
    assert_eq!(c.cmd(&["DBSIZE"]).unwrap().as_int(), Some(1));
}

#[test]
fn memtier_mix_and_arbitrary_commands() {
    let _lane = crate::common::shared();
    let server = RedisServer::start().unwrap();
    let rec = bench_json(
        &server,
        &[
            "--ratio",
            "1:4",
            "--key-pattern",
            "S:R",
            "--key-maximum",
            "99",
            "--key-prefix",
            "k:",
            "-n",
            "5000",
            "-c",
            "5",
            "--data-size-range",
            "10-20",
        ],
    );
    let sets = rec["commands"]["SET"]["requests"].as_u64().unwrap();
    let gets = rec["commands"]["GET"]["requests"].as_u64().unwrap();
    assert_eq!(sets + gets, 5000);
    assert_eq!(sets, 1000, "1:4 sends one SET per five requests");
    let mut c = server.client().unwrap();
    let keys = c.cmd(&["KEYS", "*"]).unwrap().as_text_list();
    assert!(!keys.is_empty() && keys.len() <= 100);
    assert!(keys.iter().all(|k| k.starts_with("k:")), "{keys:?}");
    let len = c.cmd(&["STRLEN", &keys[0]]).unwrap().as_int().unwrap();
    assert!((10..=20).contains(&len));

    let rec = bench_json(
        &server,
        &[
            "--command",
            "HSET __key__ f __data__",
            "--command",
            "HGET __key__ f",
            "--command-ratio",
            "1",
            "--command-ratio",
            "3",
            "--key-prefix",
            "h:",
            "--key-maximum",
            "50",
            "-n",
            "4000",
            "-c",
            "4",
        ],
    );
    let names: Vec<&String> = rec["commands"].as_object().unwrap().keys().collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(rec["totals"]["requests"], 4000);
    assert_eq!(rec["totals"]["errors"], 0);
    assert_eq!(
        c.cmd(&["TYPE", "h:1"]).unwrap().as_text().as_deref(),
        Some("hash")
    );
}

#[test]
fn the_same_seed_sends_the_same_commands() {
    let _lane = crate::common::shared();
    let keys_after = |seed: &str| {
        let server = RedisServer::start().unwrap();
        bench_json(
            &server,
            &[
                "-t", "set", "-r", "100000", "-n", "300", "-c", "1", "--seed", seed,
            ],
        );
        let mut keys = server
            .client()
            .unwrap()
            .cmd(&["KEYS", "*"])
            .unwrap()
            .as_text_list();
        keys.sort();
        keys
    };
    let a = keys_after("42");
    assert!(
        a.len() > 250,
        "random keys from a range of 100000: {}",
        a.len()
    );
    assert_eq!(a, keys_after("42"));
    assert_ne!(a, keys_after("43"));
}

#[test]
fn open_loop_run_reports_service_time_and_send_lag() {
    let _lane = crate::common::shared();
    let server = RedisServer::start().unwrap();
    let rec = bench_json(
        &server,
        &[
            "-t",
            "get",
            "--rate",
            "2000",
            "--arrivals",
            "poisson",
            "--test-time",
            "1",
            "-c",
            "4",
            "--seed",
            "1",
        ],
    );
    assert_eq!(rec["load_model"]["kind"], "open_loop");
    assert_eq!(rec["load_model"]["arrivals"], "poisson");
    let n = rec["commands"]["GET"]["requests"].as_u64().unwrap();
    assert!(
        (1500..=2500).contains(&n),
        "about 2000 requests in one second: {n}"
    );
    let ol = &rec["open_loop"];
    assert!(ol["service_time_us"]["p50"].as_f64().unwrap() > 0.0);
    assert!(ol["send_lag_us"]["p99_9"].is_number());
    assert!(ol["generator_behind"].is_boolean());
}

/// Open loop sleeps between sends instead of polling without blocking: 500 requests a
/// second cost a small share of a core, not all of it (it was about 100 % when the
/// worker polled through the last millisecond before every send, which at this rate
/// and four connections is all the time). The bound is generous for a busy machine.
#[test]
fn open_loop_at_a_low_rate_leaves_the_core_idle() {
    let _lane = crate::common::shared();
    let server = RedisServer::start().unwrap();
    let rec = bench_json(
        &server,
        &["-t", "get", "--rate", "500", "--test-time", "2", "-c", "4"],
    );
    let n = rec["commands"]["GET"]["requests"].as_u64().unwrap();
    assert!((900..=1100).contains(&n), "about 1000 requests: {n}");
    let cpu = &rec["client_cpu"];
    let busy = cpu["user_sec"].as_f64().unwrap() + cpu["system_sec"].as_f64().unwrap();
    let wall = rec["duration_sec"].as_f64().unwrap();
    assert!(
        busy < 0.3 * wall,
        "client CPU {busy:.2} s over {wall:.2} s at 500 requests/s"
    );
}

#[test]
fn no_target_starts_a_throwaway_server_and_says_so() {
    let _lane = crate::common::shared();
    let out = bench(&["-t", "ping_mbulk", "-n", "2000", "-c", "4"]);
    crate::common::assert_ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("started a throwaway redis-server on 127.0.0.1:"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("closed loop"), "{text}");
    assert!(text.contains("PING_MBULK"), "{text}");

    let out = bench(&[
        "-t",
        "get",
        "-n",
        "10",
        "--server-bin",
        "/nonexistent/redis-server",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("apt-get install redis-server"));
}

#[test]
fn unreachable_server_is_a_clear_error() {
    let _lane = crate::common::shared();
    let port = resplab_testkit::free_port().unwrap().to_string();
    let out = bench(&["-p", &port, "-t", "get", "-n", "10"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
}

/// With RESP3 and client-side caching on, the server interleaves invalidation pushes
/// (`>2 invalidate [key]`) with the replies: they are skipped, and every request still
/// gets its own reply (no protocol error, no reconnect, nothing lost).
#[test]
fn resp3_push_messages_are_skipped() {
    let _lane = crate::common::shared();
    let server = RedisServer::start().unwrap();
    let rec = bench_json(
        &server,
        &[
            "--resp",
            "3",
            "--command",
            "CLIENT TRACKING on",
            "--command",
            "GET __key__",
            "--command",
            "SET __key__ __data__",
            "--key-maximum",
            "10",
            "-n",
            "3000",
            "-c",
            "1",
            "-P",
            "4",
        ],
    );
    assert_eq!(rec["totals"]["requests"], 3000, "{}", rec["totals"]);
    assert_eq!(rec["totals"]["errors"], 0, "{}", rec["totals"]);
    assert_eq!(
        rec["connections"]["protocol_errors"], 0,
        "{}",
        rec["connections"]
    );
    assert_eq!(
        rec["connections"]["reconnects"], 0,
        "{}",
        rec["connections"]
    );
    // The server does send pushes here: with the skip taken out of the engine this
    // run reports about 200 protocol errors and as many reconnects.
}

/// An output path that cannot be written fails at once, naming the flag and the folder,
/// before any request is sent: a long run is never lost to a typo in `--json`.
#[test]
fn an_unwritable_output_path_fails_before_measuring() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir");
    for (flag, value) in [
        ("--json", missing.join("r.json")),
        ("--hdr-out", missing.join("h")),
    ] {
        let started = std::time::Instant::now();
        let out = command_within(LIMIT)
            .args(["bench", "-t", "get", "--test-time", "30", "--no-progress"])
            .arg(flag)
            .arg(&value)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{err}");
        assert!(err.contains("does not exist"), "{err}");
        assert!(!err.contains("throwaway"), "no server is started: {err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
    }
    // A good path leaves the record; a failed run leaves no empty file behind.
    let port = resplab_testkit::free_port().unwrap().to_string();
    let json = dir.path().join("r.json");
    let out = command_within(LIMIT)
        .args(["bench", "-p", &port, "-t", "get", "-n", "10", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!json.exists(), "no empty record is left by a failed run");
}

/// A server that goes away for a while during a run: the record and the table say for
/// how long and give both rates; the exit code (3) tells scripts the run is not clean.
#[test]
fn an_outage_mid_run_exits_3_and_is_on_record() {
    let _lane = crate::common::shared();
    let mut server = RedisServer::start().unwrap();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("resplab"))
        .args(["bench", "-p", &port, "-t", "set", "--test-time", "3"])
        .args(["--no-progress", "-c", "4", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(900));
    server.kill();
    std::thread::sleep(std::time::Duration::from_millis(700));
    server.restart().unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("completed with an outage"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("over the whole"), "{text}");
    let rec: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(rec["end"]["reason"], "unreachable");
    let unreachable = rec["connections"]["unreachable_sec"].as_f64().unwrap();
    assert!((0.4..2.0).contains(&unreachable), "{unreachable}");
    assert!(
        rec["connections"]["ops_per_sec_while_reachable"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

/// Runs `resplab ARGS` under `sh -c "ulimit ...; exec resplab ..."`.
fn under_ulimit(ulimit: &str, args: &str) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("resplab");
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit {ulimit} && exec {} {args}", bin.display()))
        .env_remove("REDISCLI_AUTH")
        .output()
        .unwrap()
}

/// More connections than the soft open-file limit allows: the limit is raised up to the
/// hard limit; past the hard limit the run is refused before connecting, with the number
/// of files needed.
#[test]
fn connections_beyond_the_open_file_limit() {
    let _lane = crate::common::shared();
    let server = RedisServer::start().unwrap();
    let port = server.port();
    let out = under_ulimit(
        "-Sn 200",
        &format!("bench -p {port} -c 300 -n 3000 -t get -q --no-progress"),
    );
    crate::common::assert_ok(&out);
    let out = under_ulimit(
        "-n 200",
        &format!("bench -p {port} -c 300 -n 3000 -t get -q --no-progress"),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("-c/--clients 300: 366 open files are needed"),
        "{err}"
    );
    assert!(err.contains("hard limit of this process is 200"), "{err}");
}

/// `-c` above redis-server's default of 10000 clients: the throwaway server is started
/// with room for all of them.
#[test]
fn the_throwaway_server_takes_every_connection() {
    let _lane = crate::common::shared();
    let needed = 10_100 + 200;
    let hard = std::fs::read_to_string("/proc/self/limits")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(4).map(str::to_string))
        .unwrap_or_default();
    assert!(
        hard == "unlimited" || hard.parse::<u64>().unwrap_or(0) >= needed,
        "this test needs a hard open-file limit of at least {needed}, found {hard}: raise it (ulimit -Hn, or LimitNOFILE for a service)"
    );
    let out = command_within(LIMIT)
        .args([
            "bench",
            "-c",
            "10100",
            "-n",
            "20200",
            "-t",
            "ping_mbulk",
            "-q",
        ])
        .args(["--no-progress"])
        .output()
        .unwrap();
    crate::common::assert_ok(&out);
}

/// No target and no redis-server on the machine: the reference server stands in, and
/// the output says so (asking for a server binary by name still fails when it is not
/// there).
#[test]
fn without_redis_server_the_reference_server_stands_in() {
    let _lane = crate::common::shared();
    let empty = tempfile::tempdir().unwrap();
    let out = command_within(LIMIT)
        .env("PATH", empty.path())
        .args([
            "bench",
            "-t",
            "set,get",
            "-n",
            "2000",
            "-q",
            "--no-progress",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("no redis-server installed: started resplab's reference server"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("GET:"));
}

/// However a URI is malformed, the error names --uri and never shows its userinfo: a `/`
/// or an unencoded `@` in the password, a lone password, a bad port or database.
#[test]
fn malformed_uris_never_echo_their_password() {
    let _lane = crate::common::shared();
    for (uri, secret) in [
        ("redis://bob:p/q-77@127.0.0.1:notaport", "p/q-77"),
        ("redis://bob:pa@ss-77@127.0.0.1:0", "ss-77"),
        ("redis://SECRET-77@127.0.0.1:99999", "SECRET-77"),
        ("redis://bob:hunter-77@127.0.0.1:1/x", "hunter-77"),
        ("redis://SECRET-77@[::1", "SECRET-77"),
        ("http://bob:hunter-77@127.0.0.1:1", "hunter-77"),
    ] {
        let out = bench(&["-u", uri, "-t", "get", "-n", "10"]);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(2), "{uri}: {all}");
        assert!(all.contains("--uri"), "{uri}: {all}");
        assert!(!all.contains(secret), "{uri}: password shown: {all}");
    }
}
