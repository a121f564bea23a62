//! `resplab memtier`'s command-generation options end to end against a real
//! redis-server: WAITs among the SETs (`--wait-ratio`, with the timeout the server
//! honours) and SCAN cursor following (`--scan-incremental-iteration`, memtier's
//! `SCAN 0` and `SCAN <cursor>` rows). What the server sees for these lines next to
//! the real memtier_benchmark is the oracle test's (`memtier_oracle.rs`).

use resplab_testkit::redis::RedisServer;
use serde_json::Value;

/// Runs `line` (memtier's words, quoted as in a shell) against `server` in `dir`;
/// returns its `--json-out-file`.
fn memtier(server: &RedisServer, line: &str, dir: &std::path::Path) -> Value {
    let port = server.port().to_string();
    let words = crate::common::oracle::shell_words(line);
    let mut all = vec![
        "memtier",
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "--hide-histogram",
    ];
    all.extend(words.iter().map(String::as_str));
    all.push("--json-out-file=out.json");
    let (code, _, stderr) = crate::common::run_in(&all, dir);
    assert_eq!(code, 0, "{line}: {stderr}");
    serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap()
}

#[test]
fn waits_ask_the_server_for_replicas_with_the_drawn_timeout() {
    let _lane = crate::common::shared();
    let redis = RedisServer::start().expect("redis-server (installed by scripts/setup.sh)");
    let dir = tempfile::tempdir().unwrap();
    let doc = memtier(
        &redis,
        "-t 1 -c 2 -n 40 --ratio 1:1 --wait-ratio 1:1 --num-slaves 1-1 --wait-timeout 5-5",
        dir.path(),
    );
    let all = &doc["ALL STATS"];
    let count = |row: &str| all[row]["Count"].as_u64().unwrap_or(0);
    assert_eq!(count("Sets") + count("Gets") + count("Waits"), 80, "{all}");
    // A WAIT first, then one after every second SET: 16 SETs, 15 GETs and 9 WAITs a
    // connection in its 40 requests (memtier's sequence W S G S, then W G S G S).
    assert_eq!(
        (count("Sets"), count("Gets"), count("Waits")),
        (32, 30, 18),
        "{all}"
    );
    // No replica answers: each WAIT 1 5 returns after its 5 ms.
    let min = all["Waits"]["Min Latency"].as_f64().unwrap();
    assert!(min >= 5.0, "a WAIT returned after {min} ms");
    assert_eq!(doc["configuration"]["wait-ratio"], "1:1");
    assert_eq!(doc["configuration"]["num-slaves"], "1:1");
}

#[test]
fn scan_follows_its_cursor_in_rows_of_its_own() {
    let _lane = crate::common::shared();
    let redis = RedisServer::start().expect("redis-server (installed by scripts/setup.sh)");
    let dir = tempfile::tempdir().unwrap();
    // 1,000 keys: a SCAN with COUNT 100 needs about ten steps to finish.
    let fill = "-t 1 -c 1 --ratio 1:0 --key-pattern P:P --key-maximum 999 -n 1000";
    memtier(&redis, fill, dir.path());
    let scan = "-t 1 -c 2 -n 200 --command=\"SCAN 0 COUNT 100\" --scan-incremental-iteration";
    let doc = memtier(
        &redis,
        &format!("{scan} --scan-incremental-max-iterations 3"),
        dir.path(),
    );
    let all = &doc["ALL STATS"];
    // Each iteration: SCAN 0, then three continuations, then it starts again.
    assert_eq!(all["Scan 0s"]["Count"], 100, "{all}");
    assert_eq!(all["Scan <cursor>s"]["Count"], 300, "{all}");
    // Without a limit an iteration ends when the cursor comes back to 0: about ten
    // continuations for each SCAN 0.
    let doc = memtier(&redis, &scan.replace("-c 2", "-c 1"), dir.path());
    let all = &doc["ALL STATS"];
    let first = all["Scan 0s"]["Count"].as_u64().unwrap();
    let next = all["Scan <cursor>s"]["Count"].as_u64().unwrap();
    assert!(first + next == 200 && next >= 7 * first, "{first} {next}");
}
