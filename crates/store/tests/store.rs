//! Store behaviour against real SQLite files.

use resplab_results::{fixture, HostInfo, LatencyUs, RunRecord};
use resplab_stats::hist::LatencyHistogram;
use resplab_store::{Check, NewExperiment, NewTrial, RoundState, Store, StoreError};
use std::collections::BTreeMap;

fn record(ops: f64) -> RunRecord {
    let mut h = LatencyHistogram::new();
    for i in 1..100u64 {
        h.record(i * 1_000);
    }
    let latency_us = LatencyUs {
        mean: 50.0,
        p50: 50.0,
        p90: 90.0,
        p99: 99.0,
        p99_9: 99.0,
        max: 99.0,
    };
    fixture::run_record(fixture::summary(1000, ops, latency_us, (1, 1), &h))
}

fn experiment(name: &str, hash: &str) -> NewExperiment {
    NewExperiment {
        name: name.into(),
        seed: 7,
        rounds: 2,
        order_kind: "rmit".into(),
        primary_metric: "ops_per_sec".into(),
        margin: Some(0.02),
        definition_hash: hash.into(),
        spec_text: "[experiment]\n".into(),
        spec_json: serde_json::json!({"name": name}),
        variants: vec![
            ("a".into(), serde_json::json!({})),
            ("b".into(), serde_json::json!({})),
        ],
        workloads: vec![("w".into(), serde_json::json!({}))],
    }
}

fn trial(exp: i64, variant: &str, round: u32, attempt: u32, ok: bool, ops: f64) -> NewTrial {
    NewTrial {
        experiment_id: exp,
        variant: variant.into(),
        workload: "w".into(),
        round,
        attempt,
        position: 0,
        started_at_unix_ms: 1,
        finished_at_unix_ms: 2,
        run: record(ops),
        server_info: BTreeMap::new(),
        server_cpu_sec: Some(0.5),
        checks: vec![Check {
            name: "errors".into(),
            passed: ok,
            detail: "0 errors".into(),
        }],
        host: HostInfo {
            hostname: "h".into(),
            ..HostInfo::default()
        },
        command: None,
        phase: None,
        evidence: Vec::new(),
    }
}

#[test]
fn migrations_set_user_version_and_reopen_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let store = Store::open(&path).unwrap();
    assert_eq!(
        store.schema_version().unwrap(),
        resplab_store::schema::current_version()
    );
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(
        store.schema_version().unwrap(),
        resplab_store::schema::current_version()
    );
}

/// A database written before the metric list was open (schema 2: no unit or direction
/// per row, no command outputs) is migrated in place and its metrics read as before.
#[test]
fn a_schema_2_database_is_migrated_and_stays_readable() {
    use resplab_results::import::StoredSource as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let mut store = Store::open(&path).unwrap();
    let id = store.register_experiment(&experiment("old", "h")).unwrap();
    for round in 0..2 {
        for (v, ops) in [("a", 100.0), ("b", 110.0)] {
            let mut t = trial(id, v, round, 0, true, ops);
            t.position = u32::from(v == "b");
            store.insert_trial(&t).unwrap();
        }
    }
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "ALTER TABLE metrics DROP COLUMN unit; ALTER TABLE metrics DROP COLUMN direction;
         DROP TABLE trial_outputs; ALTER TABLE trials DROP COLUMN phase_id; DROP TABLE phases;
         DROP TABLE sequential_looks; DROP TABLE sequential_stops; DROP TABLE history_points;
         DROP TABLE history_confirmations;
         DROP TABLE profiles;
         DELETE FROM schema_migrations WHERE version >= 3;
         PRAGMA user_version = 2;",
    )
    .unwrap();
    drop(conn);
    let mut store = Store::open(&path).unwrap();
    assert_eq!(
        store.schema_version().unwrap(),
        resplab_store::schema::current_version()
    );
    // A store from before runs until decided has no looks and no stop.
    assert!(store.looks(id).unwrap().is_empty());
    assert_eq!(store.sequential_stop(id).unwrap(), None);
    // Nor profiles.
    assert!(store.profiles(id).unwrap().is_empty());
    let obs = store.observations("old").unwrap();
    assert!(obs
        .iter()
        .all(|o| o.unit.is_none() && o.direction.is_none()));
    let loaded = store.load("old", None).unwrap();
    let ops = loaded
        .iter()
        .find(|o| o.metric.name == "ops_per_sec" && &*o.label == "b")
        .unwrap();
    assert_eq!(ops.metric.unit, "ops/s");
    assert_eq!(
        ops.metric.direction,
        resplab_results::sample::Direction::HigherIsBetter
    );
    assert_eq!(ops.value, 110.0);
}

/// A command workload's trial keeps the metrics its output carried, each with its own
/// unit and direction, and the command's output.
#[test]
fn command_trials_store_open_metrics_and_output() {
    use resplab_results::import::StoredSource as _;
    let mut store = Store::open_in_memory().unwrap();
    let id = store.register_experiment(&experiment("cmd", "h")).unwrap();
    for (v, ns) in [("a", 1500.0), ("b", 1200.0)] {
        let mut t = trial(id, v, 0, 0, true, 0.0);
        t.position = u32::from(v == "b");
        t.command = Some(resplab_store::CommandTrial {
            metrics: vec![resplab_store::MetricRow {
                command: "Get-2".into(),
                name: "ns/op".into(),
                unit: "ns/op".into(),
                direction: "lower_is_better".into(),
                value: ns,
            }],
            command: "./bench.test -test.bench .".into(),
            exit_code: Some(0),
            stdout: b"BenchmarkGet-2 10 1500 ns/op\n".to_vec(),
            stderr: Vec::new(),
        });
        let tid = store.insert_trial(&t).unwrap();
        let out = store.trial_output(tid).unwrap().unwrap();
        assert_eq!(out.command, "./bench.test -test.bench .");
        assert_eq!(out.exit_code, Some(0));
    }
    let loaded = store.load("cmd", None).unwrap();
    // Only the command's own rows: nothing derived from the (empty) run record.
    assert_eq!(loaded.len(), 2, "{loaded:?}");
    let o = &loaded[0];
    assert_eq!(&*o.workload, "w:Get-2");
    assert_eq!(o.metric.name, "ns/op");
    assert_eq!(
        o.metric.direction,
        resplab_results::sample::Direction::LowerIsBetter
    );
}

#[test]
fn newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    drop(Store::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", 99).unwrap();
    drop(conn);
    match Store::open(&path) {
        Err(StoreError::TooNew { found: 99, .. }) => {}
        other => panic!("expected TooNew, got {other:?}"),
    }
}

#[test]
fn register_is_idempotent_and_detects_conflicts() {
    let mut store = Store::open_in_memory().unwrap();
    let id = store.register_experiment(&experiment("e", "h1")).unwrap();
    assert_eq!(
        store.register_experiment(&experiment("e", "h1")).unwrap(),
        id
    );
    assert!(matches!(
        store.register_experiment(&experiment("e", "h2")),
        Err(StoreError::Conflict { .. })
    ));
}

#[test]
fn trials_are_stored_once_and_invalid_rounds_do_not_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let mut store = Store::open(&path).unwrap();
    let id = store.register_experiment(&experiment("e", "h")).unwrap();
    // round 0 valid; round 1 attempt 0 has an invalid trial, attempt 1 valid
    store
        .insert_trial(&trial(id, "a", 0, 0, true, 100.0))
        .unwrap();
    store
        .insert_trial(&trial(id, "b", 0, 0, true, 110.0))
        .unwrap();
    store
        .insert_trial(&trial(id, "a", 1, 0, false, 1.0))
        .unwrap();
    assert!(matches!(
        store.insert_trial(&trial(id, "a", 1, 0, true, 1.0)),
        Err(StoreError::DuplicateTrial { .. })
    ));
    let st = store.status("e").unwrap();
    assert_eq!(
        st.rounds,
        vec![
            RoundState::Valid { attempt: 0 },
            RoundState::Incomplete {
                attempt: 0,
                missing: 1
            }
        ]
    );
    store
        .insert_trial(&trial(id, "b", 1, 0, true, 2.0))
        .unwrap();
    assert_eq!(
        store.status("e").unwrap().rounds[1],
        RoundState::Invalid { attempt: 0 }
    );
    store
        .insert_trial(&trial(id, "b", 1, 1, true, 120.0))
        .unwrap();
    store
        .insert_trial(&trial(id, "a", 1, 1, true, 105.0))
        .unwrap();
    drop(store);

    let store = Store::open(&path).unwrap();
    let st = store.status("e").unwrap();
    assert_eq!(st.trials_stored, 6);
    assert_eq!(st.trials_invalid, 1);
    assert_eq!(st.valid_rounds(), 2);
    let obs: Vec<_> = store
        .observations("e")
        .unwrap()
        .into_iter()
        .filter(|o| o.command == "all" && o.metric == "ops_per_sec")
        .map(|o| (o.variant, o.round, o.attempt, o.value))
        .collect();
    assert_eq!(
        obs,
        vec![
            ("a".to_string(), 0, 0, 100.0),
            ("b".to_string(), 0, 0, 110.0),
            ("b".to_string(), 1, 1, 120.0),
            ("a".to_string(), 1, 1, 105.0),
        ]
    );
    let server_cost = store
        .observations("e")
        .unwrap()
        .into_iter()
        .find(|o| o.metric == "server_cpu_us_per_op")
        .unwrap();
    assert!((server_cost.value - 500.0).abs() < 1e-9);

    // Histograms are stored as raw V2 bytes that decode back.
    let first = store.trials(st.info.id).unwrap()[0].id;
    let bytes = store.histogram(first, "SET", "latency").unwrap().unwrap();
    use base64::Engine as _;
    let text = base64::engine::general_purpose::STANDARD.encode(bytes);
    let h = LatencyHistogram::from_base64(&text).unwrap();
    assert_eq!(h.count(), 99);
    assert_eq!(store.run_record(first).unwrap().totals.ops_per_sec, 100.0);

    let csv = store.export_csv("e").unwrap();
    assert!(csv.starts_with("experiment,workload,variant,round"));
    assert!(csv.contains("e,w,a,1,0,0,false,false,all,ops_per_sec,1\n"));
    let json = store.export_json("e").unwrap();
    assert_eq!(json["trials"].as_array().unwrap().len(), 6);
    assert_eq!(json["trials"][2]["counted"], false);
    assert_eq!(json["trials"][0]["metrics"]["all"]["ops_per_sec"], 100.0);
}

#[test]
fn unknown_names_and_experiments_are_reported() {
    let mut store = Store::open_in_memory().unwrap();
    let id = store.register_experiment(&experiment("e", "h")).unwrap();
    let err = store
        .insert_trial(&trial(id, "zzz", 0, 0, true, 1.0))
        .unwrap_err();
    assert!(err.to_string().contains("variant named `zzz`"), "{err}");
    let err = store.status("nope").unwrap_err();
    assert!(
        err.to_string().contains("no experiment named `nope`"),
        "{err}"
    );
    assert_eq!(store.list_experiments().unwrap().len(), 1);
}

#[test]
fn stored_experiments_feed_compare_paired_by_round() {
    use resplab_results::import::StoredSource;
    use resplab_results::sample::Direction;
    let mut store = Store::open_in_memory().unwrap();
    let id = store.register_experiment(&experiment("e", "h")).unwrap();
    for r in 0..2 {
        store
            .insert_trial(&trial(id, "a", r, 0, true, 100.0))
            .unwrap();
        store
            .insert_trial(&trial(id, "b", r, 0, true, 90.0))
            .unwrap();
    }
    let obs = store.load("e", None).unwrap();
    let ops: Vec<_> = obs
        .iter()
        .filter(|o| o.metric.name == "ops_per_sec")
        .map(|o| {
            (
                o.label.to_string(),
                o.workload.to_string(),
                o.round,
                o.trial,
                o.value,
            )
        })
        .collect();
    assert_eq!(
        ops,
        vec![
            ("a".into(), "w".into(), Some(0), 0, 100.0),
            ("b".into(), "w".into(), Some(0), 0, 90.0),
            ("a".into(), "w".into(), Some(1), 1, 100.0),
            ("b".into(), "w".into(), Some(1), 1, 90.0),
        ]
    );
    let m = &obs
        .iter()
        .find(|o| o.metric.name == "p99_us")
        .unwrap()
        .metric;
    assert_eq!(m.direction, Direction::LowerIsBetter);
    assert_eq!(obs[0].origin.file.as_ref(), "db:e");
    assert!(store.load("missing", None).is_err());
}

#[test]
fn calibrations_are_stored_and_the_newest_matching_one_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("r.db")).unwrap();
    let new = |host: &str, key: &str, v: f64| resplab_store::NewCalibration {
        hostname: host.into(),
        target: "redis-server".into(),
        workload_key: key.into(),
        workload_name: "set".into(),
        metric: "ops_per_sec".into(),
        result: serde_json::json!({ "sd": v }),
    };
    let a = store.insert_calibration(&new("h", "k1", 1.0)).unwrap();
    let b = store.insert_calibration(&new("h", "k1", 2.0)).unwrap();
    store.insert_calibration(&new("other", "k1", 3.0)).unwrap();
    assert!(b > a);
    let got = store
        .latest_calibration("h", "k1", "ops_per_sec")
        .unwrap()
        .unwrap();
    assert_eq!(got.id, b);
    assert_eq!(got.result["sd"], 2.0);
    assert!(store
        .latest_calibration("h", "k2", "ops_per_sec")
        .unwrap()
        .is_none());
    assert_eq!(store.calibrations().unwrap().len(), 3);
    let e = store.calibration(999).unwrap_err().to_string();
    assert!(e.contains("no calibration named `999`"), "{e}");
}

/// Client CPU is compared per request, like server CPU; raw CPU seconds and, for
/// time-bound trials, the request count get no verdict row (they stay exported).
#[test]
fn cpu_is_compared_per_request_and_restated_figures_are_left_out() {
    use resplab_results::import::StoredSource;
    let mut store = Store::open_in_memory().unwrap();
    let mut exp = experiment("e", "h");
    exp.spec_json = serde_json::json!({
        "name": "e",
        "workloads": [{ "name": "w", "budget": { "test_time": 1.0 } }]
    });
    let id = store.register_experiment(&exp).unwrap();
    for r in 0..2 {
        // b served 6x fewer requests with the same CPU seconds: 6x the CPU per request.
        let a = trial(id, "a", r, 0, true, 600.0);
        let mut b = trial(id, "b", r, 0, true, 100.0);
        b.run.totals.requests = 1000 / 6;
        store.insert_trial(&a).unwrap();
        store.insert_trial(&b).unwrap();
    }
    let obs = store.load("e", None).unwrap();
    let names: std::collections::BTreeSet<&str> =
        obs.iter().map(|o| o.metric.name.as_str()).collect();
    for gone in ["client_cpu_sec", "server_cpu_sec", "requests"] {
        assert!(
            !names.contains(gone),
            "{gone} has no verdict row: {names:?}"
        );
    }
    let per_op = |label: &str| {
        obs.iter()
            .find(|o| o.metric.name == "client_cpu_us_per_op" && &*o.label == label)
            .map(|o| o.value)
            .unwrap()
    };
    assert!((per_op("a") - 200.0).abs() < 1e-9, "0.2 s / 1000 requests");
    assert!((per_op("b") / per_op("a") - 1000.0 / 166.0).abs() < 1e-9);
    // Still exported.
    let csv = store.export_csv("e").unwrap();
    assert!(csv.contains("client_cpu_sec"));
    // A request budget keeps `requests` (it is then what the trial was asked for, and
    // its errors may differ).
    let mut exp2 = experiment("e2", "h2");
    exp2.spec_json = serde_json::json!({
        "name": "e2",
        "workloads": [{ "name": "w", "budget": { "requests": 1000 } }]
    });
    let id2 = store.register_experiment(&exp2).unwrap();
    for r in 0..2 {
        store
            .insert_trial(&trial(id2, "a", r, 0, true, 100.0))
            .unwrap();
        store
            .insert_trial(&trial(id2, "b", r, 0, true, 90.0))
            .unwrap();
    }
    let obs = store.load("e2", None).unwrap();
    assert!(obs.iter().any(|o| o.metric.name == "requests"));
}
