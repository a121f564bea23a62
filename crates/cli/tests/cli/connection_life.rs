//! Connections with a life of their own, end to end against a real redis-server:
//! `resplab bench --reconnect-every` renews each connection after N requests, and a
//! memtier staircase (`--clients-start`, `--clients-step`, `--step-duration`) adds each
//! thread's connections in steps. What the server counts is the check: INFO stats
//! `total_connections_received` (resplab's control connection included).

use crate::common::oracle::server_facts;
use resplab_testkit::redis::RedisServer;
use serde_json::Value;

fn server() -> (RedisServer, resplab_testkit::client::Client) {
    let server = RedisServer::start().expect("redis-server (installed by scripts/setup.sh)");
    let mut client = server.client().unwrap();
    client.cmd(&["CONFIG", "RESETSTAT"]).unwrap();
    (server, client)
}

#[test]
fn bench_reconnect_every_renews_each_connection_after_n_requests() {
    let _lane = crate::common::shared();
    let (redis, mut client) = server();
    let port = redis.port().to_string();
    let out = crate::common::resplab(&[
        "bench",
        "-p",
        &port,
        "-t",
        "set",
        "-n",
        "300",
        "-c",
        "3",
        "-P",
        "4",
        "--reconnect-every",
        "20",
        "--no-progress",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rec: Value = serde_json::from_slice(&out.stdout).unwrap();
    // 100 requests per connection, 20 per socket: 4 renewals each, none after the last.
    assert_eq!(rec["connections"]["renewed"], 12, "{}", rec["connections"]);
    assert_eq!(rec["config"]["renew"]["every_requests"], 20);
    let (conns, calls) = server_facts(&mut client).unwrap();
    assert_eq!(
        conns,
        3 * 5 + 1,
        "3 connections x 5 sockets, and the control one"
    );
    assert_eq!(calls.get("set"), Some(&300));
    // A renewed socket sends no PING: only the three first sockets prove the server
    // (and the control connection checks it once).
    assert_eq!(calls.get("ping").copied().unwrap_or(0), 3 + 1);

    let bad = crate::common::resplab(&["bench", "-p", &port, "--reconnect-every", "0"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--reconnect-every"));
}

#[test]
fn a_memtier_staircase_adds_connections_every_step() {
    let _lane = crate::common::alone();
    let (redis, mut client) = server();
    let dir = tempfile::tempdir().unwrap();
    let port = redis.port().to_string();
    let (code, _, stderr) = crate::common::run_in(
        &[
            "memtier",
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "-t",
            "2",
            "-c",
            "3",
            "--clients-start",
            "1",
            "--clients-step",
            "1",
            "--step-duration",
            "1",
            "--test-time",
            "3",
            "--hide-histogram",
            "--json-out-file=out.json",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    let (conns, _) = server_facts(&mut client).unwrap();
    // 2 threads: 1 connection each, then 2 at 1 s, 3 at 2 s; and the control one.
    assert_eq!(conns, 2 * 3 + 1);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out.json")).unwrap())
            .unwrap();
    let all = &doc["ALL STATS"];
    for (sec, total) in [("0", 2), ("1", 4), ("2", 6)] {
        assert_eq!(all["Active Clients"][sec]["Total clients"], total, "{sec}");
    }
    assert_eq!(doc["configuration"]["clients_start"], 1);
    let series = all["Totals"]["Time-Serie"].as_object().unwrap();
    assert!(series.len() >= 3, "{series:?}");
}
