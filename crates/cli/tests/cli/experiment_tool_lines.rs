//! Workloads given as a memtier_benchmark or redis-benchmark line (`memtier = "…"`,
//! `redis_benchmark = "…"`): run by resplab's engine with the tool's counting, stored
//! with full histograms like any workload, and refused at the file's line when they ask
//! for what belongs to the variant or the experiment.

use crate::common::run_in;

const FILE: &str = r#"
[experiment]
name = "lines"
rounds = 1

[[variant]]
name = "a"

[[variant]]
name = "b"

[[workload]]
name = "mt"
memtier = "--ratio 1:4 -t 1 -c 2 -n 500 -d 100 --key-maximum 1000"

[[workload]]
name = "rb"
redis_benchmark = "-t set,get -d 100 -P 4 -n 2000 -c 4"
"#;

#[test]
fn tool_lines_run_with_the_tools_counting_and_keep_their_histograms() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("e.toml"), FILE).unwrap();
    let (code, out, err) = run_in(&["experiment", "run", "e.toml", "--db", "e.db"], dir.path());
    assert_eq!(code, 0, "{out}{err}");
    let export = crate::common::resplab(&[
        "experiment",
        "export",
        "lines",
        "--db",
        &dir.path().join("e.db").to_string_lossy(),
        "--format",
        "json",
    ]);
    crate::common::assert_ok(&export);
    let v: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    let trials = v["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 4);
    for t in trials {
        let m = &t["metrics"];
        let requests = |c: &str| m[c]["requests"].as_f64().unwrap_or(-1.0);
        match t["workload"].as_str().unwrap() {
            // memtier: 1 thread × 2 clients × 500 requests, SET:GET 1:4.
            "mt" => {
                assert_eq!(requests("all"), 1000.0, "{m}");
                assert_eq!((requests("SET"), requests("GET")), (200.0, 800.0), "{m}");
            }
            // redis-benchmark: 2000 requests per test.
            "rb" => assert_eq!((requests("SET"), requests("GET")), (2000.0, 2000.0), "{m}"),
            other => panic!("{other}"),
        }
    }
    // The full histograms of SET, GET and all of each of the four trials, one value per
    // request.
    let store = resplab_store::Store::open(&dir.path().join("e.db")).unwrap();
    let info = store.experiment("lines").unwrap();
    for t in store.trials(info.id).unwrap() {
        for command in ["SET", "GET", "all"] {
            let bytes = store
                .histogram(t.id, command, "latency")
                .unwrap()
                .unwrap_or_else(|| panic!("trial {}: no {command} histogram", t.id));
            let h = resplab_stats::hist::LatencyHistogram::from_base64(&base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                bytes,
            ))
            .unwrap();
            let want = match (t.workload.as_str(), command) {
                ("mt", "SET") => 200,
                ("mt", "GET") => 800,
                ("mt", _) => 1000,
                (_, "all") => 4000,
                _ => 2000,
            };
            assert_eq!(h.count(), want, "trial {} {command}", t.id);
        }
    }
    // The stored definitions read back through the lines' parsers.
    let (code, out, err) = run_in(
        &["experiment", "status", "lines", "--db", "e.db"],
        dir.path(),
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("workloads: mt, rb"), "{out}");
}

#[test]
fn lines_that_ask_for_the_variants_or_the_experiments_part_are_refused_at_their_line() {
    let _lane = crate::common::shared();
    for (workload, says) in [
        (
            "memtier = \"--server 10.0.0.1 -n 10\"",
            "e.toml:12:11: key `workload[0].memtier`: invalid memtier '--server 10.0.0.1 -n 10': expected no connection options",
        ),
        (
            "redis_benchmark = \"-t set -q\"",
            "e.toml:12:19: key `workload[0].redis_benchmark`: invalid redis_benchmark '-t set -q': expected no -q",
        ),
        (
            "redis_benchmark = \"-e\"",
            "-e is not supported by resplab redis-benchmark",
        ),
        (
            "redis_benchmark = \"-t set\"\nclients = 4",
            "e.toml:13:11: key `workload[0].clients`: `clients` cannot go with `redis_benchmark`",
        ),
        (
            "memtier = \"-n 10\"\nredis_benchmark = \"-n 10\"",
            "key `workload[0].redis_benchmark`: give either memtier or redis_benchmark, not both",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let file = format!(
            "[experiment]\nname = \"bad\"\n\n[[variant]]\nname = \"a\"\n\n[[variant]]\nname = \"b\"\n\n[[workload]]\nname = \"w\"\n{workload}\n"
        );
        std::fs::write(dir.path().join("e.toml"), file).unwrap();
        let (code, _, err) = run_in(&["experiment", "run", "e.toml", "--db", "e.db"], dir.path());
        assert_eq!(code, 2, "{workload}: {err}");
        assert!(err.contains(says), "{workload}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}
