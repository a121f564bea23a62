//! Scale-out end to end: N `resplab bench --shard I/N` processes against one real
//! redis-server, started together with `--start-at`, and `resplab merge` of their results.

use crate::common::{resplab, text, BIN};
use resplab_stats::hist::LatencyHistogram;
use resplab_testkit::redis::RedisServer;
use serde_json::Value;
use std::process::{Command, Stdio};

fn histogram(v: &Value) -> LatencyHistogram {
    LatencyHistogram::from_base64(v["histogram"].as_str().unwrap()).unwrap()
}

/// Four shards writing with the parallel key pattern: together they write every key of
/// the range once (so their slices do not overlap), and the merge is exact.
#[test]
fn four_local_shards_merge_into_one_exact_result() {
    let _lane = crate::common::shared();
    let server = RedisServer::start().unwrap();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = (1..=4)
        .map(|i| dir.path().join(format!("s{i}.json")).display().to_string())
        .collect();
    let children: Vec<_> = (1..=4)
        .map(|i| {
            let shard = format!("{i}/4");
            Command::new(BIN)
                .args(["bench", "-p", &port, "--no-progress", "--shard", &shard])
                .args(["--start-at", "+2", "--seed", "11", "-c", "8", "-n", "4000"])
                .args(["--ratio", "1:0", "--key-pattern", "P:P"])
                .args(["--key-minimum", "0", "--key-maximum", "3999"])
                .args(["--json", &files[i - 1]])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        crate::common::assert_ok(&out);
    }
    // 4 shards x 2 connections x 500 requests, each stream on its own 500 keys.
    let mut client = server.client().unwrap();
    assert_eq!(client.cmd(&["DBSIZE"]).unwrap().as_int(), Some(4000));

    let merged_path = dir.path().join("merged.json").display().to_string();
    let mut args = vec!["merge", "-o", merged_path.as_str()];
    args.extend(files.iter().map(String::as_str));
    let out = resplab(&args);
    crate::common::assert_ok(&out);
    let table = text(&out);
    assert!(table.contains("merged from 4 of 4 shards"), "{table}");
    // How far apart the shards began, as the merge recorded it.
    assert!(table.contains(" ms apart ("), "{table}");
    assert!(table.contains("shard 4/4 on"), "{table}");

    let shards: Vec<Value> = files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect();
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(&merged_path).unwrap()).unwrap();
    let sum: u64 = shards
        .iter()
        .map(|s| s["totals"]["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, 4000);
    assert_eq!(merged["totals"]["requests"].as_u64(), Some(sum));
    assert_eq!(merged["load_model"]["clients"].as_u64(), Some(8));
    assert_eq!(merged["seed"].as_u64(), Some(11));
    // Each shard derived a seed of its own.
    let mut seeds: Vec<u64> = shards.iter().map(|s| s["seed"].as_u64().unwrap()).collect();
    seeds.sort_unstable();
    seeds.dedup();
    assert_eq!(seeds.len(), 4);

    // The merged histogram is the union of the shards' histograms, count for count.
    let mut union = LatencyHistogram::new();
    for s in &shards {
        union.merge(&histogram(&s["totals"]));
    }
    let m = histogram(&merged["totals"]);
    assert_eq!(m.count(), union.count());
    assert_eq!(m.as_hdr(), union.as_hdr());
    for p in [50.0, 90.0, 99.0, 99.9, 100.0] {
        assert_eq!(m.percentile_ns(p), union.percentile_ns(p));
    }
    // The series adds up to the whole run.
    let in_series: u64 = merged["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(in_series, 4000);
    // Every shard measured the server's clock, so the spread is on the server's clock.
    let spread = &merged["config"]["merge"];
    assert!(
        spread["start_spread_ms"].as_f64().unwrap() >= 0.0,
        "{spread}"
    );
    assert!(
        spread["start_spread_basis"]
            .as_str()
            .unwrap()
            .contains("server clock"),
        "{spread}"
    );
    for s in &shards {
        assert!(
            s["shard"]["clock_offset_ms"].as_f64().is_some(),
            "{}",
            s["shard"]
        );
        assert!(s["series"][0]["histogram"].is_string());
    }
    // The merged result is a result like any other: compare reads it.
    let out = resplab(&["compare", &files[0], &merged_path]);
    assert!(out.status.code() != Some(2), "{}", text(&out));
}

#[test]
fn shards_that_do_not_belong_together_are_refused() {
    let _lane = crate::common::shared();
    let server = RedisServer::start().unwrap();
    let port = server.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| -> String {
        let path = dir.path().join(name).display().to_string();
        let mut args = vec!["bench", "-p", &port, "--no-progress", "-t", "ping_mbulk"];
        args.extend_from_slice(&["-n", "200", "-c", "2", "--json", &path]);
        args.extend_from_slice(extra);
        let out = resplab(&args);
        crate::common::assert_ok(&out);
        path
    };
    let a = run("a.json", &["--shard", "1/2", "--seed", "5"]);
    let b = run("b.json", &["--shard", "2/2", "--seed", "6"]);
    let plain = run("plain.json", &[]);

    let out = resplab(&["merge", &a, &b]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("master seed"), "{}", text(&out));

    let out = resplab(&["merge", &a, &plain]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("not a shard result"), "{}", text(&out));

    let out = resplab(&["merge", &a]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("shard(s) 2/2 missing"),
        "{}",
        text(&out)
    );
    let out = resplab(&["merge", "--partial", &a]);
    crate::common::assert_ok(&out);

    let out = resplab(&["merge", &a, &a]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("both shard 1/2"), "{}", text(&out));

    // The output may not be one of the inputs: the shard would be lost.
    let before = std::fs::read(&a).unwrap();
    let out = resplab(&["merge", "--partial", &a, "-o", &a]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("not one of the inputs"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read(&a).unwrap(),
        before,
        "the input shard was changed"
    );

    // --per-node against a single server says there are no per-node rows.
    let out = resplab(&[
        "bench",
        "-p",
        &port,
        "--no-progress",
        "-t",
        "ping_mbulk",
        "-n",
        "100",
        "--per-node",
    ]);
    crate::common::assert_ok(&out);
    assert!(
        text(&out).contains("--per-node: the target is not a cluster"),
        "{}",
        text(&out)
    );

    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{\n  \"schema_version\": 1,\n  oops\n}").unwrap();
    let out = resplab(&["merge", &a, junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("junk.json:3:"), "{}", text(&out));

    // Bad shard flags name the flag.
    for (args, want) in [
        (vec!["--shard", "3/2", "--seed", "1"], "--shard"),
        (vec!["--shard", "1/2"], "--seed (or --start-at)"),
        (
            vec!["--shard", "1/4", "--seed", "1", "-c", "2"],
            "at least one connection per shard",
        ),
        (vec!["--start-at", "soon"], "--start-at"),
    ] {
        let mut all = vec!["bench", "-p", &port, "--no-progress", "-n", "10"];
        all.extend(args);
        let out = resplab(&all);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(want), "{want}: {}", text(&out));
    }
}

/// A start time that has passed: the run starts at once and says it began late.
#[test]
fn a_start_time_in_the_past_is_reported() {
    let _lane = crate::common::shared();
    let server = RedisServer::start().unwrap();
    let port = server.port().to_string();
    let past = format!(
        "{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            - 60
    );
    let out = resplab(&[
        "bench",
        "-p",
        &port,
        "--no-progress",
        "-t",
        "ping_mbulk",
        "-n",
        "100",
        "-c",
        "1",
        "--start-at",
        &past,
        "--json",
        "-",
    ]);
    crate::common::assert_ok(&out);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let kinds: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"start_late"), "{kinds:?}");
}

/// The Kubernetes Indexed Job in examples/k8s: its shape, and its command line, run as
/// written by four local "pods" against a real redis-server, merged.
#[test]
fn the_kubernetes_indexed_job_manifest_runs_as_written() {
    let _lane = crate::common::shared();
    use yaml_rust2::YamlLoader;
    let manifest = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/k8s/resplab-shards.yaml"
    ));
    let docs = YamlLoader::load_from_str(manifest).expect("the manifest is YAML");
    let job = &docs[0];
    assert_eq!(job["apiVersion"].as_str(), Some("batch/v1"));
    assert_eq!(job["kind"].as_str(), Some("Job"));
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    let completions = spec["completions"].as_i64().unwrap();
    assert_eq!(spec["parallelism"].as_i64(), Some(completions));
    let container = &spec["template"]["spec"]["containers"][0];
    let command: Vec<&str> = container["command"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(command, ["sh", "-c"]);
    let script = container["args"][0].as_str().unwrap();
    let mut env: Vec<(String, String)> = container["env"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["value"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let shards: i64 = env
        .iter()
        .find(|(k, _)| k == "SHARDS")
        .map(|(_, v)| v.parse().unwrap())
        .unwrap();
    assert_eq!(shards, completions);

    // Four local pods against a real server: only the connection and time change.
    let server = RedisServer::start().unwrap();
    let start = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3;
    for (k, v) in env.iter_mut() {
        match k.as_str() {
            "REDIS_HOST" => *v = "127.0.0.1".into(),
            "REDIS_PORT" => *v = server.port().to_string(),
            "START_AT" => *v = start.to_string(),
            "TEST_TIME" => *v = "1".into(),
            _ => {}
        }
    }
    let bin_dir = std::path::Path::new(BIN)
        .parent()
        .unwrap()
        .display()
        .to_string();
    let path = format!("{bin_dir}:{}", std::env::var("PATH").unwrap_or_default());
    let pods: Vec<_> = (0..completions)
        .map(|i| {
            Command::new("sh")
                .arg("-c")
                .arg(script)
                .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .env("JOB_COMPLETION_INDEX", i.to_string())
                .env("PATH", &path)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (i, pod) in pods.into_iter().enumerate() {
        let out = pod.wait_with_output().unwrap();
        assert!(out.status.success(), "pod {i}: {}", text(&out));
        // What kubectl logs would show is the result alone.
        let v: Value = serde_json::from_slice(&out.stdout).expect("the pod's output is its result");
        assert_eq!(v["shard"]["index"].as_i64(), Some(i as i64));
        let f = dir.path().join(format!("shard-{i}.json"));
        std::fs::write(&f, &out.stdout).unwrap();
        files.push(f.display().to_string());
    }
    let mut args = vec!["merge", "-o", "-"];
    args.extend(files.iter().map(String::as_str));
    let out = resplab(&args);
    crate::common::assert_ok(&out);
    let merged: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        merged["shards"].as_array().unwrap().len(),
        completions as usize
    );
    assert_eq!(merged["load_model"]["clients"].as_u64(), Some(200));
}
