//! `resplab track` and `resplab history` end to end: real runs of `resplab bench`
//! against `resplab serve` made slower half way (`--delay-us`), synthetic imports with
//! a known shift, a host boundary, the gate's exit codes, and bad input.

use crate::common::{resplab, text, Serve};
use serde_json::Value;
use std::path::Path;

fn run(args: &[&str]) -> (i32, String) {
    let out = resplab(args);
    (out.status.code().unwrap_or(-1), text(&out))
}

fn history_json(db: &Path, series: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "history",
        series,
        "--db",
        db.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = resplab(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn line<'a>(h: &'a Value, workload: &str, metric: &str) -> &'a Value {
    h["lines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["workload"] == workload && l["metric"] == metric)
        .unwrap_or_else(|| panic!("no line {workload} {metric} in {h}"))
}

/// Eight runs against a server holding each reply 2 ms, eight against one holding it
/// 4 ms (a sleep, not a busy wait, so that the shift survives a busy machine): the
/// history of throughput changes at the ninth point, between the commits either side,
/// and the gate fails on it.
#[test]
fn real_runs_against_a_slower_server_show_the_change_and_fail_the_gate() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let db_s = db.to_str().unwrap();
    for (half, delay_us) in [(0, "2000"), (1, "4000")] {
        let serve = Serve::start(&["--delay-us", delay_us]);
        for k in 0..8 {
            let i = half * 8 + k;
            let file = dir.path().join(format!("run{i}.json"));
            let (code, out) = run(&[
                "bench",
                "-p",
                &serve.port.to_string(),
                "-t",
                "set",
                "-n",
                "2000",
                "-c",
                "4",
                "--no-progress",
                "--json",
                file.to_str().unwrap(),
            ]);
            assert_eq!(code, 0, "{out}");
            let commit = format!("c{i:02}");
            let when = (1_764_000_000 + 3600 * i).to_string();
            let (code, out) = run(&[
                "track",
                "real",
                "--db",
                db_s,
                "--commit",
                &commit,
                "--when",
                &when,
                "--tag",
                "branch=main",
                file.to_str().unwrap(),
            ]);
            assert_eq!(code, 0, "{out}");
        }
    }
    let h = history_json(&db, "real", &["--metric", "ops_per_sec"]);
    assert_eq!(h["points"], 16);
    let ops = line(&h, "ALL", "ops_per_sec");
    assert_eq!(ops["segments"].as_array().unwrap().len(), 1, "{ops}");
    let changes = ops["segments"][0]["change_points"].as_array().unwrap();
    let at8 = changes
        .iter()
        .find(|c| c["index"] == 8)
        .unwrap_or_else(|| panic!("no change at point 8: {ops}"));
    assert_eq!(at8["commit_before"], "c07");
    assert_eq!(at8["commit_after"], "c08");
    assert_eq!(at8["is_regression"], true);
    assert!(at8["effect_pct"].as_f64().unwrap() < -25.0, "{at8}");
    let (code, out) = run(&[
        "history",
        "real",
        "--db",
        db_s,
        "--metric",
        "ops_per_sec",
        "--gate",
        "10",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("resplab: gate: ALL ops_per_sec: regression"),
        "{out}"
    );
}

/// `go test -bench` files of a known series: flat at 1000 ns/op for 10 points, then
/// 1200; the lower-is-better metric makes the shift a regression of 20 %.
fn track_gobench(db: &Path, series: &str, values: &[f64], first_commit: usize) {
    let dir = db.parent().unwrap();
    for (k, v) in values.iter().enumerate() {
        let i = first_commit + k;
        let file = dir.join(format!("{series}{i}.txt"));
        std::fs::write(&file, format!("BenchmarkGet-2   \t 1000\t {v} ns/op\n")).unwrap();
        let (code, out) = run(&[
            "track",
            series,
            "--db",
            db.to_str().unwrap(),
            "--commit",
            &format!("v{i}"),
            "--when",
            &(1_764_000_000 + 60 * i).to_string(),
            file.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{out}");
    }
}

fn wobble(level: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| level + [0.0, 4.0, -3.0, 2.0, -1.0][i % 5])
        .collect()
}

#[test]
fn a_synthetic_shift_is_found_where_it_is_and_gated_by_size() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let mut values = wobble(1000.0, 10);
    values.extend(wobble(1200.0, 10));
    track_gobench(&db, "go", &values, 0);
    let h = history_json(&db, "go", &[]);
    let get = line(&h, "Get-2", "ns/op");
    let changes = get["segments"][0]["change_points"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{get}");
    assert_eq!(changes[0]["index"], 10);
    assert_eq!(
        (
            changes[0]["commit_before"].as_str(),
            changes[0]["commit_after"].as_str()
        ),
        (Some("v9"), Some("v10"))
    );
    let db_s = db.to_str().unwrap();
    assert_eq!(run(&["history", "go", "--db", db_s, "--gate", "15"]).0, 1);
    assert_eq!(run(&["history", "go", "--db", db_s, "--gate", "25"]).0, 0);
    let (code, csv) = run(&["history", "go", "--db", db_s, "--format", "csv"]);
    assert_eq!(code, 0);
    assert_eq!(
        csv.lines().filter(|l| l.contains(",regression,")).count(),
        1,
        "{csv}"
    );
    let (_, txt) = run(&["history", "go", "--db", db_s]);
    assert!(txt.contains("<- regression +2"), "{txt}");
    let md = dir.path().join("go.md");
    let (code, out) = run(&[
        "report",
        "history:go",
        "--db",
        db_s,
        "-o",
        md.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    let page = std::fs::read_to_string(&md).unwrap();
    assert!(
        page.contains("![Get-2 ns/op](go-plots/01-Get-2-ns_op.svg)"),
        "{page}"
    );
    assert!(page.contains("- point 11: regression +2"), "{page}");
    let svg = std::fs::read_to_string(dir.path().join("go-plots/01-Get-2-ns_op.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    let (code, out) = run(&["report", "history:none", "--db", db_s]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("no series named `none`"), "{out}");
}

/// A flat series has no change point and passes any gate.
#[test]
fn a_flat_series_has_no_change_point() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    track_gobench(&db, "flat", &wobble(500.0, 20), 0);
    let h = history_json(&db, "flat", &[]);
    let get = line(&h, "Get-2", "ns/op");
    assert!(
        get["segments"][0]["change_points"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{get}"
    );
    assert_eq!(
        run(&[
            "history",
            "flat",
            "--db",
            db.to_str().unwrap(),
            "--gate",
            "0"
        ])
        .0,
        0
    );
}

#[test]
fn bad_input_is_one_line_exit_2_and_stores_nothing() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let db_s = db.to_str().unwrap();
    track_gobench(&db, "s", &[100.0, 101.0], 0);
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"x\": 1}\n").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["history", "nope", "--db", db_s],
            "no series named `nope`",
        ),
        (
            vec!["track", "s", "--db", db_s, bad.to_str().unwrap()],
            "bad.json",
        ),
        (
            vec![
                "track",
                "s",
                "--db",
                db_s,
                "--when",
                "yesterday",
                bad.to_str().unwrap(),
            ],
            "--when",
        ),
        (
            vec![
                "track",
                "s",
                "--db",
                db_s,
                "--tag",
                "novalue",
                bad.to_str().unwrap(),
            ],
            "--tag",
        ),
        (
            vec!["track", "s", "--db", db_s, "--experiment-name", "none"],
            "none",
        ),
        (vec!["history", "s", "--db", db_s, "--gate=-1"], "--gate"),
    ];
    for (args, says) in cases {
        let out = resplab(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!(history_json(&db, "s", &[])["points"], 2);
    let missing = dir.path().join("missing.db");
    let (code, out) = run(&["history", "s", "--db", missing.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(!missing.exists());
}

/// Stores a one-variant experiment `name` of three rounds at `ops` ops/s on workload
/// `set`; its definition differs from its siblings' by its name only.
fn store_experiment(db: &Path, name: &str, ops: f64) {
    use resplab_results::{fixture, HostInfo, LatencyUs};
    use resplab_store::{Check, NewExperiment, NewTrial, Store};
    let mut store = Store::open(db).unwrap();
    let id = store
        .register_experiment(&NewExperiment {
            name: name.into(),
            seed: 7,
            rounds: 3,
            order_kind: "rmit".into(),
            primary_metric: "ops_per_sec".into(),
            margin: None,
            definition_hash: format!("hash-{name}"),
            spec_text: "[experiment]\n".into(),
            spec_json: serde_json::json!({ "name": name, "rounds": 3 }),
            variants: vec![("base".into(), serde_json::json!({}))],
            workloads: vec![("set".into(), serde_json::json!({}))],
        })
        .unwrap();
    let mut h = resplab_stats::hist::LatencyHistogram::new();
    h.record(50_000);
    for round in 0..3u32 {
        let value = ops * (1.0 + 0.003 * f64::from(round));
        let latency = LatencyUs {
            mean: 50.0,
            p50: 50.0,
            p90: 60.0,
            p99: 70.0,
            p99_9: 80.0,
            max: 90.0,
        };
        store
            .insert_trial(&NewTrial {
                experiment_id: id,
                variant: "base".into(),
                workload: "set".into(),
                round,
                attempt: 0,
                position: 0,
                started_at_unix_ms: 1,
                finished_at_unix_ms: 2,
                run: fixture::run_record(fixture::summary(10_000, value, latency, (1, 1), &h)),
                server_info: std::collections::BTreeMap::new(),
                server_cpu_sec: Some(0.5),
                evidence: Vec::new(),
                checks: vec![Check {
                    name: "errors".into(),
                    passed: true,
                    detail: "0 errors".into(),
                }],
                host: HostInfo::default(),
                command: None,
                phase: None,
            })
            .unwrap();
    }
}

/// Twelve nightly experiments, the last five 20 % slower: tracked by name, one segment
/// (the definitions differ by name only), one regression at the eighth point.
#[test]
fn stored_experiments_are_tracked_and_their_shift_found() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let db_s = db.to_str().unwrap();
    for i in 0..12 {
        let name = format!("night{i}");
        store_experiment(&db, &name, if i < 7 { 100_000.0 } else { 80_000.0 });
        let (code, out) = run(&[
            "track",
            "nights",
            "--db",
            db_s,
            "--experiment-name",
            &name,
            "--commit",
            &format!("n{i}"),
            "--when",
            &(1_764_000_000 + 86_400 * i).to_string(),
        ]);
        assert_eq!(code, 0, "{out}");
    }
    let h = history_json(&db, "nights", &["--metric", "ops_per_sec"]);
    let set = line(&h, "set", "ops_per_sec");
    assert_eq!(set["segments"].as_array().unwrap().len(), 1, "{set}");
    let changes = set["segments"][0]["change_points"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{set}");
    assert_eq!(changes[0]["index"], 7);
    assert_eq!(changes[0]["commit_after"], "n7");
    assert!(
        (changes[0]["effect_pct"].as_f64().unwrap() + 20.0).abs() < 1.0,
        "{set}"
    );
}
