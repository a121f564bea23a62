//! `resplab bench` against a real local Redis Cluster: routing by slot, every catalog
//! test, a live slot migration under load, reads from replicas, and what the result
//! says about each node. Before measuring a cluster it waits for every master to be
//! ready (`--cluster-wait`) and refuses a cluster that does not get there;
//! `--max-error-rate` turns failed requests into exit code 3.

use crate::common::{resplab, text};
use resplab_results::RunRecord;
use resplab_testkit::cluster::RedisCluster;
use resplab_testkit::redis::RedisServer;
use std::time::Duration;

/// One cluster at a time: each test starts 3 to 6 servers, and several clusters
/// forming at once on a small machine slow each other's gossip down.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn record(path: &std::path::Path) -> RunRecord {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// `resplab bench ARGS --no-progress --json JSON`, which must succeed: the record it
/// wrote and what it printed.
fn bench_record(json: &std::path::Path, args: &[&str]) -> (RunRecord, String) {
    let json_arg = json.to_str().unwrap();
    let all: Vec<&str> = std::iter::once("bench")
        .chain(args.iter().copied())
        .chain(["--no-progress", "--json", json_arg])
        .collect();
    let o = resplab(&all);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    (record(json), out)
}

/// A scratch directory (removed on drop) and the path of the result file `r.json` in it.
fn scratch_json() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    (dir, json)
}

fn dbsize(s: &RedisServer) -> i64 {
    s.client()
        .unwrap()
        .cmd(&["DBSIZE"])
        .unwrap()
        .as_int()
        .unwrap()
}

#[test]
fn every_catalog_test_routes_by_slot_with_no_error_and_per_node_results() {
    let _lane = crate::common::shared();
    let _serial = serial();
    let c = RedisCluster::start(3, 0).unwrap();
    let (_dir, json) = scratch_json();
    let port = c.master(0).port().to_string();
    let o = resplab(&[
        "bench",
        "-p",
        &port,
        "-t",
        "ping,set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100,mset,mget,xadd",
        "-r",
        "100000",
        "-n",
        "2000",
        "-c",
        "4",
        "-P",
        "8",
        "--no-progress",
        "--per-node",
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("cluster (detected"), "{out}");
    assert!(out.contains("3 masters, 0 replicas"), "{out}");
    let r = record(&json);
    for (name, s) in &r.commands {
        assert_eq!(s.errors, 0, "{name}: {:?}\n{out}", s.error_kinds);
        assert_eq!(s.requests, 2000, "{name}");
    }
    let cl = r.cluster.as_ref().expect("a cluster summary");
    assert_eq!(
        (cl.masters, cl.replicas, cl.connections_per_master),
        (3, 0, 4)
    );
    // Every request went straight to its slot's master.
    assert_eq!(cl.moved + cl.ask, 0, "{cl:?}");
    assert_eq!(r.nodes.len(), 3, "{:?}", r.nodes.keys());
    let node_requests: u64 = r.nodes.values().map(|n| n.summary.requests).sum();
    assert_eq!(node_requests, r.totals.requests);
    for (name, n) in &r.nodes {
        assert_eq!(n.role, "master");
        assert!(n.summary.requests > 3000, "{name}: {}", n.summary.requests);
        assert!(!n.summary.histogram.is_empty());
        assert!(out.contains(&format!("{name} master")), "{out}");
    }
    // Keys landed on every master, MSET's ten keys of a request on one.
    for m in 0..3 {
        assert!(dbsize(c.master(m)) > 100, "master {m}");
    }
}

#[test]
fn a_live_slot_migration_loses_no_request() {
    let _lane = crate::common::shared();
    let _serial = serial();
    let c = RedisCluster::start(3, 0).unwrap();
    let (_dir, json) = scratch_json();
    let port = c.master(0).port().to_string();
    // 300 keys in about 300 slots; the migration below moves master 0's slots that hold
    // them, one key per MIGRATE with a pause, so that requests meet slots mid-move
    // (ASK) and already moved (MOVED).
    let keys: Vec<String> = (1..=300).map(|i| format!("memtier-{i}")).collect();
    let mut slots: Vec<u16> = Vec::new();
    for k in &keys {
        let s = c.key_slot(k).unwrap();
        if c.owner_of(s).unwrap() == 0 && !slots.contains(&s) {
            slots.push(s);
        }
    }
    assert!(slots.len() > 50, "{}", slots.len());
    let child = std::process::Command::new(crate::common::BIN)
        .args([
            "bench",
            "-p",
            &port,
            "--ratio",
            "1:1",
            "--key-maximum",
            "300",
            "--test-time",
            "4",
            "-c",
            "4",
            "-P",
            "4",
            "--no-progress",
            "--json",
            json.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let mut moved_keys = 0;
    for s in &slots {
        moved_keys += c
            .migrate_slot(*s, 0, 1, 1, Duration::from_millis(15))
            .unwrap();
    }
    let o = child.wait_with_output().unwrap();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(moved_keys > 0);
    for s in &slots {
        assert_eq!(c.owner_of(*s).unwrap(), 1);
    }
    let r = record(&json);
    assert_eq!(r.totals.errors, 0, "{:?}\n{out}", r.commands);
    let cl = r.cluster.as_ref().unwrap();
    assert!(cl.moved > 0, "{cl:?}\n{out}");
    assert!(cl.ask > 0, "{cl:?}\n{out}");
    // The redirections were sent by master 0, whose slots moved.
    let m0 = r.nodes[&c.master(0).addr()].clone();
    assert_eq!(m0.moved + m0.ask, cl.moved + cl.ask);
    // After the move, master 1 answers for the moved keys.
    assert!(r.nodes[&c.master(1).addr()].summary.requests > 0);
}

#[test]
fn reads_go_to_replicas_and_a_single_server_is_not_a_cluster() {
    let _lane = crate::common::shared();
    let _serial = serial();
    let c = RedisCluster::start(3, 1).unwrap();
    let (dir, json) = scratch_json();
    let port = c.master(1).port().to_string();
    let (r, out) = bench_record(
        &json,
        &[
            "-p",
            &port,
            "--cluster-mode",
            "--read-from-replicas",
            "-t",
            "set,get",
            "-r",
            "10000",
            "-n",
            "3000",
            "-c",
            "3",
        ],
    );
    assert_eq!(r.totals.errors, 0, "{out}");
    let cl = r.cluster.as_ref().unwrap();
    assert_eq!((cl.masters, cl.replicas), (3, 3));
    assert!(cl.read_from_replicas);
    let replica_reads: u64 = r
        .nodes
        .values()
        .filter(|n| n.role == "replica")
        .map(|n| n.summary.requests)
        .sum();
    let master_requests: u64 = r
        .nodes
        .values()
        .filter(|n| n.role == "master")
        .map(|n| n.summary.requests)
        .sum();
    // Every GET went to a replica, every SET to a master.
    assert_eq!(replica_reads, 3000, "{:?}", r.nodes);
    assert_eq!(master_requests, 3000);
    assert_eq!(r.nodes.values().filter(|n| n.role == "replica").count(), 3);

    // Open loop: the schedule is kept per client across its node connections.
    let json2 = dir.path().join("open.json");
    let (r, out) = bench_record(
        &json2,
        &[
            "-p", &port, "--ratio", "1:3", "--rate", "3000", "-n", "3000", "-c", "4",
        ],
    );
    assert_eq!(r.totals.requests, 3000, "{out}");
    assert_eq!(r.totals.errors, 0, "{out}");
    assert!(r.open_loop.is_some());
    assert_eq!(
        r.nodes.values().filter(|n| n.summary.requests > 0).count(),
        3,
        "masters only without --read-from-replicas: {:?}",
        r.nodes.keys()
    );

    // --cluster against a plain server is refused, naming the flag.
    let single = RedisServer::start().unwrap();
    let o = resplab(&[
        "bench",
        "-p",
        &single.port().to_string(),
        "--cluster",
        "-t",
        "ping",
        "-n",
        "10",
        "--no-progress",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("is not a Redis Cluster node"),
        "{}",
        text(&o)
    );
}

#[test]
fn a_tls_cluster_with_an_acl_user_on_every_node() {
    let _lane = crate::common::shared();
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let files = resplab_testkit::tls::TlsFiles::generate(&dir.path().join("pki")).unwrap();
    let c = RedisCluster::start_tls(3, 0, &files).unwrap();
    let password = "cluster-secret-4711";
    for n in c.nodes() {
        crate::common::add_acl_user(n, "bench", password);
    }
    let json = dir.path().join("r.json");
    let tls_port = c.tls_port(0).unwrap().to_string();
    let ca = files.ca.display().to_string();
    let o = std::process::Command::new(crate::common::BIN)
        .args([
            "bench",
            "--tls",
            "--cacert",
            &ca,
            "-p",
            &tls_port,
            "--cluster",
            "--user",
            "bench",
            "-t",
            "set,get,mset",
            "-r",
            "10000",
            "-n",
            "3000",
            "-c",
            "2",
            "-P",
            "4",
            "--no-progress",
            "--per-node",
            "--json",
            json.to_str().unwrap(),
        ])
        .env("REDISCLI_AUTH", password)
        .output()
        .unwrap();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let r = record(&json);
    assert_eq!(r.totals.errors, 0, "{out}");
    assert_eq!(r.totals.requests, 9000);
    // Every node was reached over TLS: the nodes are named by their TLS ports.
    let mut names: Vec<String> = r.nodes.keys().cloned().collect();
    names.sort();
    let mut want: Vec<String> = (0..3)
        .map(|m| format!("127.0.0.1:{}", c.tls_port(m).unwrap()))
        .collect();
    want.sort();
    assert_eq!(names, want);
    assert!(r.config["tls"].is_object());
    let raw = std::fs::read_to_string(&json).unwrap();
    assert!(!raw.contains(password) && !out.contains(password));
}

/// A master killed mid-run: the outage names that master (not the seed node, nor the
/// nodes that answer CLUSTERDOWN once the cluster has marked it failed), and no
/// throughput figure counts the CLUSTERDOWN error replies as served requests.
#[test]
fn a_master_killed_mid_run_is_named_and_error_replies_are_not_throughput() {
    let _lane = crate::common::shared();
    let _serial = serial();
    let c = RedisCluster::start(3, 0).unwrap();
    // Let the survivors mark the dead master failed within a second, so that they
    // answer CLUSTERDOWN for the rest of the run.
    for m in 0..3 {
        c.master(m)
            .client()
            .unwrap()
            .cmd(&["CONFIG", "SET", "cluster-node-timeout", "300"])
            .unwrap();
    }
    let (_dir, json) = scratch_json();
    let seed = c.master(0).port().to_string();
    let dead = c.master(1).addr();
    let child = std::process::Command::new(crate::common::BIN)
        .args([
            "bench",
            "-p",
            &seed,
            "--cluster",
            "-t",
            "set",
            "-r",
            "100000",
            "-c",
            "6",
            "--test-time",
            "4",
            "--no-progress",
            "--per-node",
            "--json",
            json.to_str().unwrap(),
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    c.master(1).signal("KILL").unwrap();
    let o = child.wait_with_output().unwrap();
    let out = text(&o);
    let r = record(&json);
    let seed_addr = c.master(0).addr();
    assert!(out.contains(&format!("{dead} was unreachable")), "{out}");
    assert!(
        !out.contains(&format!("{seed_addr} was unreachable")),
        "{out}"
    );
    let outages = &r.connections.outages;
    assert!(!outages.is_empty(), "{out}");
    assert!(
        outages
            .iter()
            .all(|o| o.node.as_deref() == Some(dead.as_str())),
        "{outages:?}"
    );
    // The survivors answered CLUSTERDOWN once the dead master was marked failed.
    let down = r
        .totals
        .error_kinds
        .get("CLUSTERDOWN")
        .copied()
        .unwrap_or(0);
    assert!(down > 0, "{:?}\n{out}", r.totals.error_kinds);
    let lost: u64 = ["connection_lost", "protocol_error", "timeout"]
        .iter()
        .filter_map(|k| r.totals.error_kinds.get(*k))
        .sum();
    let error_replies = r.totals.errors - lost;
    let served = (r.totals.requests - error_replies) as f64;
    let rate = r.totals.ops_per_sec;
    assert!(
        (rate * r.duration_sec - served).abs() <= 1.0 + 1e-6 * served,
        "ops/s {rate} over {} s, served {served}, requests {}",
        r.duration_sec,
        r.totals.requests
    );
    let up = r.duration_sec - r.connections.unreachable_sec;
    let reachable = r.connections.ops_per_sec_while_reachable.unwrap();
    assert!(
        (reachable * up - served).abs() <= 1.0 + 1e-6 * served,
        "{reachable} over {up} s, served {served}"
    );
}

#[test]
fn a_cluster_started_at_once_with_the_bench_gives_no_clusterdown() {
    let _lane = crate::common::shared();
    let _serial = serial();
    let c = RedisCluster::start_unsettled(3).unwrap();
    let (_dir, json) = scratch_json();
    let port = c.master(0).port().to_string();
    let (r, out) = bench_record(
        &json,
        &[
            "-p",
            &port,
            "--cluster",
            "--cluster-wait",
            "30s",
            "-t",
            "set,get",
            "-r",
            "10000",
            "-n",
            "20000",
            "-c",
            "4",
            "--max-error-rate",
            "0",
        ],
    );
    assert_eq!(r.totals.errors, 0, "{:?}\n{out}", r.commands);
    for (name, s) in &r.commands {
        assert!(!s.error_kinds.contains_key("CLUSTERDOWN"), "{name}: {out}");
        assert_eq!(s.requests, 20000, "{name}");
    }
    assert_eq!(r.cluster.as_ref().map(|c| c.masters), Some(3));
}

#[test]
fn a_cluster_with_a_failed_master_is_refused_naming_it() {
    let _lane = crate::common::shared();
    let _serial = serial();
    let c = RedisCluster::start(3, 0).unwrap();
    c.master(2).signal("KILL").unwrap();
    let port = c.master(0).port().to_string();
    let started = std::time::Instant::now();
    let o = resplab(&[
        "bench",
        "-p",
        &port,
        "--cluster-wait",
        "1s",
        "-t",
        "get",
        "-n",
        "1000",
        "--no-progress",
    ]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    let dead = format!("127.0.0.1:{} cannot be reached", c.master(2).port());
    assert!(out.contains("the cluster is not ready after"), "{out}");
    assert!(out.contains(&dead), "{out}");
    assert!(out.contains("--cluster-wait"), "{out}");
    // The other masters were fine: only the dead one is named.
    for m in 0..2 {
        let alive = format!("127.0.0.1:{} ", c.master(m).port());
        assert!(!out.contains(&alive), "{out}");
    }
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
}

#[test]
fn max_error_rate_exits_3_when_exceeded_and_0_when_not() {
    let _lane = crate::common::shared();
    let s = RedisServer::start().unwrap();
    let mut client = s.client().unwrap();
    client.cmd(&["SET", "word", "not a number"]).unwrap();
    let port = s.port().to_string();
    let (_dir, json) = scratch_json();
    // Half the requests fail: INCR of a string, beside a PING that cannot.
    let run = |max: &str| {
        resplab(&[
            "bench",
            "-p",
            &port,
            "--command",
            "INCR word",
            "--command",
            "PING",
            "--command-ratio",
            "1",
            "--command-ratio",
            "1",
            "-n",
            "2000",
            "-c",
            "2",
            "--no-progress",
            "--max-error-rate",
            max,
            "--json",
            json.to_str().unwrap(),
        ])
    };
    let o = run("10");
    let out = text(&o);
    assert_eq!(o.status.code(), Some(3), "{out}");
    assert!(out.contains("more than --max-error-rate 10 %"), "{out}");
    // Everything measured is written first.
    let r = record(&json);
    assert!(r.totals.errors > 500, "{:?}", r.totals);
    let o = run("75");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for bad in ["-1", "101", "ten"] {
        let flag = format!("--max-error-rate={bad}");
        let o = resplab(&["bench", "-p", &port, &flag]);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(2), "{bad}: {out}");
        assert!(out.contains("--max-error-rate"), "{out}");
    }
    let o = resplab(&["bench", "-p", &port, "--cluster-wait", "soon"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(out.contains("--cluster-wait"), "{out}");
}
