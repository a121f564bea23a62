//! End-to-end tests of `resplab compare` in its default style: stored experiments
//! (`db:NAME --db PATH`) paired by round, file inputs, `--paired`, exit codes.

use resplab_results::{
    ConnectionStats, CpuTime, HostInfo, LatencyUs, LoadModel, RunEnd, RunRecord, Summary, ToolInfo,
};
use resplab_stats::hist::LatencyHistogram;
use resplab_store::{Check, NewExperiment, NewTrial, Store};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn run_record(ops: f64, p99_us: f64) -> RunRecord {
    let mut h = LatencyHistogram::new();
    h.record(50_000);
    let totals = Summary {
        requests: 10_000,
        errors: 0,
        ops_per_sec: ops,
        latency_us: LatencyUs {
            mean: p99_us / 2.0,
            p50: p99_us / 2.0,
            p90: p99_us * 0.9,
            p99: p99_us,
            p99_9: p99_us * 1.1,
            max: p99_us * 1.2,
        },
        bytes_in: 1,
        bytes_out: 1,
        histogram: h.to_base64(),
        error_kinds: BTreeMap::new(),
    };
    let mut commands = BTreeMap::new();
    commands.insert("SET".to_string(), totals.clone());
    RunRecord {
        schema_version: 1,
        tool: ToolInfo {
            name: "resplab".into(),
            version: "0".into(),
            git_revision: None,
        },
        started_at_unix_ms: 0,
        config: serde_json::json!({}),
        seed: 1,
        load_model: LoadModel::ClosedLoop {
            clients: 1,
            pipeline: 1,
        },
        server: BTreeMap::new(),
        host: HostInfo::default(),
        warmup_sec: 0.0,
        duration_sec: 1.0,
        totals,
        commands,
        open_loop: None,
        series: Vec::new(),
        connections: ConnectionStats::default(),
        client_cpu: CpuTime {
            user_sec: 0.1,
            system_sec: 0.1,
        },
        end: RunEnd::Completed,
        warnings: Vec::new(),
    }
}

/// Stores experiment `name` with 8 rounds of two variants on two workloads; the variant
/// has `ratio` times the baseline's throughput, round-to-round drift shared by both.
fn store_experiment(path: &Path, name: &str, ratio: f64) {
    let mut store = Store::open(path).unwrap();
    let rounds = 8u32;
    let id = store
        .register_experiment(&NewExperiment {
            name: name.into(),
            seed: 7,
            rounds,
            order_kind: "rmit".into(),
            primary_metric: "ops_per_sec".into(),
            margin: None,
            definition_hash: format!("hash-{name}"),
            spec_text: "[experiment]\n".into(),
            spec_json: serde_json::json!({ "name": name }),
            variants: vec![
                ("base".into(), serde_json::json!({})),
                ("tuned".into(), serde_json::json!({})),
            ],
            workloads: vec![
                ("set".into(), serde_json::json!({})),
                ("get".into(), serde_json::json!({})),
            ],
        })
        .unwrap();
    for round in 0..rounds {
        let drift = 1.0 + 0.03 * f64::from((round * 5) % 7) / 7.0;
        // The variant runs first in odd rounds, as a randomized order would.
        let order: [(&str, f64); 2] = if round % 2 == 0 {
            [("base", 1.0), ("tuned", ratio)]
        } else {
            [("tuned", ratio), ("base", 1.0)]
        };
        for (w, scale) in [("set", 100_000.0), ("get", 120_000.0)] {
            for (position, (variant, r)) in order.iter().enumerate() {
                let jitter = 1.0 + 0.002 * f64::from((round * 3 + position as u32) % 5);
                store
                    .insert_trial(&NewTrial {
                        experiment_id: id,
                        variant: (*variant).into(),
                        workload: w.into(),
                        round,
                        attempt: 0,
                        position: position as u32,
                        started_at_unix_ms: 1,
                        finished_at_unix_ms: 2,
                        run: run_record(scale * drift * r * jitter, 200.0 / (drift * r)),
                        server_info: BTreeMap::new(),
                        server_cpu_sec: Some(0.5),
                        checks: vec![Check {
                            name: "errors".into(),
                            passed: true,
                            detail: "0 errors".into(),
                        }],
                        host: HostInfo::default(),
                    })
                    .unwrap();
            }
        }
    }
}

fn resplab(args: &[&str], dir: &Path) -> (String, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_resplab"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn stored_experiment_is_compared_paired_by_round() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    store_experiment(&db, "tune", 1.04);
    let db_s = db.to_str().unwrap();
    let (out, err, code) = resplab(&["compare", "db:tune", "--db", db_s], dir.path());
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("baseline: base\n"), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with("set ") && l.contains("ops_per_sec"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("8 pairs"), "{line}");
    assert!(line.contains("FASTER"), "{line}");
    assert!(line.contains("  +4."), "{line}");
    // Latency went down by the same ratio: faster too, by the metric's direction.
    let p99 = out
        .lines()
        .find(|l| l.starts_with("get ") && l.contains("p99_us"))
        .unwrap();
    assert!(p99.contains("FASTER"), "{p99}");
    // Several rows: q-values; two workloads: the geomean of the primary metric.
    assert!(out.lines().nth(1).unwrap().contains("  q  "), "{out}");
    assert!(out.contains("tuned ops_per_sec (ops/s) ↑: +4."), "{out}");
    assert!(out.contains("bootstrap CI"), "{out}");
    assert!(!out.contains("not_interleaved"), "{out}");

    // JSON carries the design and the summary.
    let (json, _, code) = resplab(
        &["compare", "db:tune", "--db", db_s, "--format", "json"],
        dir.path(),
    );
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["metric"] == "ops_per_sec")
        .all(|r| r["paired"] == true && r["test"] == "signed_rank"));
    assert_eq!(v["summaries"][0]["workloads"], 2);

    // The regression gate, with the tuned build as the baseline, fires.
    let (_, _, code) = resplab(
        &[
            "compare",
            "db:tune",
            "--db",
            db_s,
            "--baseline",
            "tuned",
            "--fail-on-regression",
            "2",
        ],
        dir.path(),
    );
    assert_eq!(code, 1);
}

#[test]
fn missing_database_or_experiment_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    let (_, err, code) = resplab(&["compare", "db:nope", "--db", "absent.db"], dir.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("absent.db"), "{err}");
    assert!(!dir.path().join("absent.db").exists());
    let db = dir.path().join("r.db");
    store_experiment(&db, "tune", 1.0);
    let (_, err, code) = resplab(
        &["compare", "db:other", "--db", db.to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("other"), "{err}");
}
