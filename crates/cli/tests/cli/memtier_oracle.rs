//! The oracle test of `resplab memtier`: the memtier command lines of
//! `tests/memtier/lines.txt`, each run through `resplab memtier` against a real
//! redis-server, must make the server see what the real memtier_benchmark made it see
//! for the same line (`tests/memtier/facts.json`, recorded by `bench/vs_memtier.py
//! --record` with a local memtier_benchmark build; memtier is in no package CI can
//! install): the same commands in the same proportions (INFO commandstats, within 5
//! points), the same number of connections (INFO stats `total_connections_received`;
//! resplab opens one control connection per run on top, for the server's INFO), for a
//! line with `-n` the same number of each command, and a `--json-out-file` with every
//! key memtier's had.
//!
//! Lines are shortened as the script shortens them: server appended, `--test-time 1`,
//! `-n 200` when a line gives no length.

use resplab_testkit::redis::RedisServer;
use resplab_workload::memtier::{parse_reading, Invocation};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

#[test]
fn resplab_memtier_makes_the_server_see_what_memtier_made_it_see() {
    let _lane = crate::common::shared();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/memtier");
    let facts: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("facts.json")).unwrap()).unwrap();
    let facts = facts["lines"].as_array().unwrap();
    let lines = lines(&dir.join("lines.txt"));
    assert!(lines.len() >= 50, "{} lines", lines.len());
    assert_eq!(
        facts.len(),
        lines.len(),
        "facts.json is out of date: run bench/vs_memtier.py --record"
    );
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (chunk_lines, chunk_facts) in lines.chunks(10).zip(facts.chunks(10)) {
        let server = RedisServer::start().expect("redis-server (installed by scripts/setup.sh)");
        let mut client = server.client().unwrap();
        for (line, fact) in chunk_lines.iter().zip(chunk_facts) {
            assert_eq!(
                fact["line"].as_str(),
                Some(line.as_str()),
                "facts.json is out of date"
            );
            if let Err(e) = check(line, fact, server.port(), &mut client, tmp.path()) {
                failures.push(format!("{line}: {e}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} lines differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// One line through `resplab memtier`, compared with memtier's facts.
fn check(
    line: &str,
    fact: &Value,
    port: u16,
    client: &mut resplab_testkit::client::Client,
    tmp: &Path,
) -> Result<(), String> {
    client.cmd(&["FLUSHALL"]).map_err(|e| e.to_string())?;
    client
        .cmd(&["CONFIG", "RESETSTAT"])
        .map_err(|e| e.to_string())?;
    let json = tmp.join("out.json");
    let args = shorten(line, port);
    // Lines name their files (monitor.txt) relative to the folder of lines.txt.
    let out = Command::new(crate::common::BIN)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/memtier"))
        .arg("memtier")
        .args(&args)
        .arg(format!("--json-out-file={}", json.display()))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(format!(
            "exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let (connections, calls) = crate::common::oracle::server_facts(client)?;
    let runs = run_count(&args);
    let want_conns = fact["connections"].as_u64().unwrap_or(0);
    if connections.saturating_sub(runs) != want_conns {
        return Err(format!(
            "{connections} connections ({runs} control), memtier {want_conns}"
        ));
    }
    let want: BTreeMap<String, u64> = serde_json::from_value(fact["calls"].clone()).unwrap();
    crate::common::oracle::compare_shares("memtier", &want, &calls)?;
    if is_counted(&args) {
        for (cmd, n) in &want {
            let got = calls.get(cmd).copied().unwrap_or(0);
            // resplab checks each new connection with a PING before the load.
            let slack = if cmd == "ping" { connections } else { 0 };
            if got < *n || got > n + slack {
                return Err(format!("{got} {cmd} calls, memtier {n}"));
            }
        }
    }
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap())
        .map_err(|e| format!("--json-out-file is not JSON: {e}"))?;
    check_keys(&fact["json_keys"], &doc)
}

/// Every key memtier's JSON had at the top, in its first result section and in its
/// `Totals`.
fn check_keys(keys: &Value, doc: &Value) -> Result<(), String> {
    let list = |v: &Value| -> Vec<String> { serde_json::from_value(v.clone()).unwrap_or_default() };
    let top = list(&keys["top"]);
    for k in &top {
        if doc.get(k).is_none() {
            return Err(format!("--json-out-file lacks \"{k}\""));
        }
    }
    let Some(section) = top
        .iter()
        .find(|k| *k != "configuration" && *k != "run information")
    else {
        return Ok(());
    };
    for (keys, obj) in [
        (&keys["section"], &doc[section]),
        (&keys["totals"], &doc[section]["Totals"]),
    ] {
        for k in list(keys) {
            if obj.get(&k).is_none() {
                return Err(format!("--json-out-file lacks \"{k}\" in \"{section}\""));
            }
        }
    }
    Ok(())
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// The line as run: `--test-time 1`, `-n 200` when no length is given, the server.
fn shorten(line: &str, port: u16) -> Vec<String> {
    let words = crate::common::oracle::shell_words(line);
    let mut out = Vec::new();
    let mut has_length = false;
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        if w == "--test-time" {
            out.extend(["--test-time".to_string(), "1".to_string()]);
            i += 2;
            has_length = true;
            continue;
        }
        if w.starts_with("--test-time=") {
            out.push("--test-time=1".into());
            i += 1;
            has_length = true;
            continue;
        }
        if w == "-n"
            || w == "--requests"
            || w.starts_with("--requests=")
            || (w.starts_with("-n") && w.len() > 2)
        {
            has_length = true;
        }
        out.push(w.clone());
        i += 1;
    }
    if !has_length {
        out.extend(["-n".to_string(), "200".to_string()]);
    }
    out.extend([
        "-s".into(),
        "127.0.0.1".into(),
        "-p".into(),
        port.to_string(),
    ]);
    out
}

fn plan(args: &[String]) -> Box<resplab_workload::memtier::MemtierPlan> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/memtier");
    match parse_reading(args, &|file| std::fs::read_to_string(dir.join(file))).unwrap() {
        Invocation::Run(p) => p,
        other => panic!("{other:?}"),
    }
}

fn run_count(args: &[String]) -> u64 {
    u64::from(plan(args).run_count)
}

/// A line with `-n`: every count is exact.
fn is_counted(args: &[String]) -> bool {
    matches!(
        plan(args).length,
        resplab_workload::memtier::RunLength::RequestsPerClient(_)
    ) && plan(args).rate_limit_per_connection.is_none()
}
