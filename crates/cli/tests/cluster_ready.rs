//! Before measuring a cluster, `resplab bench` waits for every master to be ready
//! (`--cluster-wait`) and refuses a cluster that does not get there; `--max-error-rate`
//! turns failed requests into exit code 3.

mod common;

use common::{resplab, text};
use resplab_results::RunRecord;
use resplab_testkit::cluster::RedisCluster;
use resplab_testkit::redis::RedisServer;

fn record(path: &std::path::Path) -> RunRecord {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// One cluster at a time: forming several at once on a small machine slows each
/// other's gossip down.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn a_cluster_started_at_once_with_the_bench_gives_no_clusterdown() {
    let _serial = serial();
    let c = RedisCluster::start_unsettled(3).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let port = c.master(0).port().to_string();
    let o = resplab(&[
        "bench",
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
        "--no-progress",
        "--max-error-rate",
        "0",
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let r = record(&json);
    assert_eq!(r.totals.errors, 0, "{:?}\n{out}", r.commands);
    for (name, s) in &r.commands {
        assert!(!s.error_kinds.contains_key("CLUSTERDOWN"), "{name}: {out}");
        assert_eq!(s.requests, 20000, "{name}");
    }
    assert_eq!(r.cluster.as_ref().map(|c| c.masters), Some(3));
}

#[test]
fn a_cluster_with_a_failed_master_is_refused_naming_it() {
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
    let s = RedisServer::start().unwrap();
    let mut client = s.client().unwrap();
    client.cmd(&["SET", "word", "not a number"]).unwrap();
    let port = s.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
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
