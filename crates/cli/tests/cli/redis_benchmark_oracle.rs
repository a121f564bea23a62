//! The oracle test of `resplab redis-benchmark`: every line of
//! `tests/redis_benchmark/lines.txt`, shortened, runs through the installed
//! redis-benchmark and through `resplab redis-benchmark`, each against a redis-server
//! just flushed and with its statistics reset; the server must see the same commands in
//! the same proportions (INFO commandstats, within 5 points) and the same number of
//! connections (INFO stats `total_connections_received`: redis-benchmark's connection
//! for `CONFIG GET` stands against resplab's control connection for `INFO`). Every
//! line's output must also be the layout the line asks for.
//!
//! redis-benchmark comes with redis-server in Debian's redis-tools (scripts/setup.sh
//! installs both); the test fails, saying so, where it is missing.

use crate::common::oracle::{compare_shares, server_facts, shell_words};
use resplab_testkit::redis::RedisServer;
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// The most requests a shortened line makes per test.
const MAX_REQUESTS: u64 = 2000;

#[test]
fn resplab_redis_benchmark_makes_the_server_see_what_redis_benchmark_made_it_see() {
    let _lane = crate::common::shared();
    let found = Command::new("redis-benchmark").arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "redis-benchmark is not installed (scripts/setup.sh installs redis-tools)"
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/redis_benchmark/lines.txt");
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(lines.len() >= 20, "{} lines", lines.len());
    let server = RedisServer::start().expect("redis-server (installed by scripts/setup.sh)");
    let mut client = server.client().unwrap();
    let mut failures = Vec::new();
    for line in lines {
        if let Err(e) = check(line, server.port(), &mut client) {
            failures.push(format!("{line}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} lines differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Lines that need a server of their own: a password (`-a`, `--user`) and a Unix
/// socket (`-s`, which overrides the port the test appends, as in redis-benchmark).
#[test]
fn authenticated_and_unix_socket_lines_match_too() {
    let _lane = crate::common::shared();
    let mut failures = Vec::new();
    let auth = RedisServer::start_with(&["--requirepass", "s3cret"], false)
        .expect("redis-server (installed by scripts/setup.sh)");
    let mut client = auth.client().unwrap();
    client.cmd(&["AUTH", "s3cret"]).unwrap();
    for line in [
        "-a s3cret -t set,get -n 2000 -c 5",
        "--user default -a s3cret -t incr,lpush -n 2000 -c 3 -P 4",
        "-a s3cret --dbnum 2 -n 1000 -c 2 sadd s __rand_int__",
    ] {
        if let Err(e) = check(line, auth.port(), &mut client) {
            failures.push(format!("{line}: {e}"));
        }
    }
    let unix =
        RedisServer::start_with_socket().expect("redis-server (installed by scripts/setup.sh)");
    let socket = unix.socket_path().unwrap().display().to_string();
    let mut client = unix.client().unwrap();
    for line in [
        format!("-s {socket} -t set,get -n 2000 -c 5"),
        format!("-s {socket} -t ping_mbulk,hset -n 2000 -c 4 --threads 2 -q"),
    ] {
        if let Err(e) = check(&line, unix.port(), &mut client) {
            failures.push(format!("{line}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One line through both tools.
fn check(
    line: &str,
    port: u16,
    client: &mut resplab_testkit::client::Client,
) -> Result<(), String> {
    let (stdin, args) = shorten(line, port);
    let (real_conns, real_calls, real_out) = run(client, "redis-benchmark", &[], &args, &stdin)?;
    let (mut conns, mut calls, out) = run(
        client,
        crate::common::BIN,
        &["redis-benchmark"],
        &args,
        &stdin,
    )?;
    if !real_calls.contains_key("xadd") && is_default_suite(&args) {
        // redis-benchmark 7.0 has no XADD test; 7.2 and valkey-benchmark run it in the
        // default suite, as resplab does: its connections and calls are left out.
        conns -= clients(&args);
        calls.remove("xadd");
    }
    if conns != real_conns {
        return Err(format!("{conns} connections, redis-benchmark {real_conns}"));
    }
    compare_shares("redis-benchmark", &real_calls, &calls)?;
    check_layout(&args, &out)?;
    let (titles, real_titles) = (titles(&out), titles(&real_out));
    if titles.is_empty() || titles != real_titles {
        return Err(format!(
            "tests titled {titles:?}, redis-benchmark {real_titles:?}"
        ));
    }
    Ok(())
}

/// Runs `program` with the line against a flushed server with fresh statistics: the
/// connections the server received, the calls of each command and the standard output.
fn run(
    client: &mut resplab_testkit::client::Client,
    program: &str,
    first: &[&str],
    args: &[String],
    stdin: &str,
) -> Result<(u64, BTreeMap<String, u64>, String), String> {
    client.cmd(&["FLUSHALL"]).map_err(|e| e.to_string())?;
    client
        .cmd(&["CONFIG", "RESETSTAT"])
        .map_err(|e| e.to_string())?;
    let mut child = Command::new(program)
        .args(first)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{program}: {e}"))?;
    let mut pipe = child.stdin.take().unwrap();
    pipe.write_all(stdin.as_bytes()).unwrap();
    drop(pipe);
    let out = child.wait_with_output().unwrap();
    if !out.status.success() {
        return Err(format!(
            "{program} exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let (conns, calls) = server_facts(client)?;
    Ok((
        conns,
        calls,
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ))
}

/// The tests' titles in the order printed, whatever the layout (redis-benchmark's
/// progress lines, which end in a carriage return, left out). The default suite's
/// `XADD`, which redis-benchmark 7.0 lacks, is left out too.
fn titles(out: &str) -> Vec<String> {
    out.split(['\n', '\r'])
        .filter_map(|l| {
            let l = l.trim();
            let title = if let Some(t) = l.strip_prefix("====== ") {
                t.strip_suffix(" ======")
            } else if l.contains(" requests per second, p50=") {
                l.split(": ").next()
            } else if l.starts_with('"') && !l.starts_with("\"test\"") {
                l.split("\",\"").next().map(|t| t.trim_start_matches('"'))
            } else {
                None
            };
            title.map(str::to_string)
        })
        .filter(|t| t != "XADD")
        .collect()
}

/// No `-t` and no command: the default suite.
fn is_default_suite(args: &[String]) -> bool {
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-t" => return false,
            a if !a.starts_with('-') => return false,
            a if resplab_workload::redis_benchmark::takes_value(a) => i += 2,
            _ => i += 1,
        }
    }
    true
}

/// `-c`, or redis-benchmark's 50.
fn clients(args: &[String]) -> u64 {
    args.iter()
        .position(|a| a == "-c")
        .and_then(|i| args.get(i + 1))
        .map_or(50, |c| c.parse().unwrap())
}

/// The output is the layout the line asks for: CSV's header, `-q`'s lines, or the full
/// text's blocks.
fn check_layout(args: &[String], out: &str) -> Result<(), String> {
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let ok = if has("--csv") {
        out.starts_with("\"test\",\"rps\",")
    } else if has("-q") {
        out.lines()
            .all(|l| l.contains(" requests per second, p50="))
    } else {
        out.starts_with("====== ")
            && out.contains("Latency by percentile distribution:")
            && out.contains("Cumulative distribution of latencies:")
            && out.contains("  throughput summary: ")
    };
    if ok && !out.is_empty() {
        Ok(())
    } else {
        Err(format!("not the layout the line asks for:\n{out}"))
    }
}

/// The line as run: at most [`MAX_REQUESTS`] requests a test, the server's port, and
/// what `stdin=WORD` feeds to standard input.
fn shorten(line: &str, port: u16) -> (String, Vec<String>) {
    let mut words = shell_words(line);
    let stdin = match words.first().and_then(|w| w.strip_prefix("stdin=")) {
        Some(s) => {
            let s = s.to_string();
            words.remove(0);
            s
        }
        None => String::new(),
    };
    let mut out = vec!["-p".to_string(), port.to_string()];
    let mut has_n = false;
    let mut i = 0;
    while i < words.len() {
        if words[i] == "-n" && i + 1 < words.len() {
            let n: u64 = words[i + 1].parse().unwrap();
            out.extend(["-n".to_string(), n.min(MAX_REQUESTS).to_string()]);
            has_n = true;
            i += 2;
            continue;
        }
        out.push(words[i].clone());
        i += 1;
    }
    if !has_n {
        out.splice(2..2, ["-n".to_string(), MAX_REQUESTS.to_string()]);
    }
    (stdin, out)
}
