//! End-to-end tests of `resplab compare` in its default style: stored experiments
//! (`db:NAME --db PATH`) paired by round, file inputs, `--paired`, exit codes.

use crate::common::run_in;

use resplab_results::{fixture, HostInfo, LatencyUs, RunRecord};
use resplab_stats::hist::LatencyHistogram;
use resplab_store::{Check, NewExperiment, NewTrial, Store};
use std::collections::BTreeMap;
use std::path::Path;

fn run_record(ops: f64, p99_us: f64) -> RunRecord {
    let mut h = LatencyHistogram::new();
    h.record(50_000);
    let latency_us = LatencyUs {
        mean: p99_us / 2.0,
        p50: p99_us / 2.0,
        p90: p99_us * 0.9,
        p99: p99_us,
        p99_9: p99_us * 1.1,
        max: p99_us * 1.2,
    };
    fixture::run_record(fixture::summary(10_000, ops, latency_us, (1, 1), &h))
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
                        command: None,
                        phase: None,
                        evidence: Vec::new(),
                    })
                    .unwrap();
            }
        }
    }
}

#[test]
fn stored_experiment_is_compared_paired_by_round() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    store_experiment(&db, "tune", 1.04);
    let db_s = db.to_str().unwrap();
    let (code, out, err) = run_in(&["compare", "db:tune", "--db", db_s], dir.path());
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
    assert!(
        out.contains("signed-rank interval of the 8 rounds' geometric means"),
        "{out}"
    );
    assert!(!out.contains("not_interleaved"), "{out}");

    // JSON carries the design and the summary.
    let (code, json, _) = run_in(
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
    let g = &v["summaries"][0];
    let verdict = g["verdict"]
        .as_str()
        .expect("a geomean with an interval has a verdict");
    let (lo, hi) = (
        g["ci_low_pct"].as_f64().unwrap(),
        g["ci_high_pct"].as_f64().unwrap(),
    );
    if lo > 0.0 {
        assert_eq!(verdict, "faster", "{g}");
    } else if hi < 0.0 {
        assert_eq!(verdict, "slower", "{g}");
    } else {
        assert!(verdict == "equivalent" || verdict == "inconclusive", "{g}");
    }

    // The regression gate, with the tuned build as the baseline, fires.
    let (code, _, _) = run_in(
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
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run_in(&["compare", "db:nope", "--db", "absent.db"], dir.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("absent.db"), "{err}");
    assert!(!dir.path().join("absent.db").exists());
    let db = dir.path().join("r.db");
    store_experiment(&db, "tune", 1.0);
    let (code, _, err) = run_in(
        &["compare", "db:other", "--db", db.to_str().unwrap()],
        dir.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("other"), "{err}");
}

/// Writes one plain-number file per trial: round k of the baseline and of the variant
/// share a large drift, the variant is 1 % higher.
fn drifting_files(dir: &Path, rounds: usize) -> Vec<String> {
    let mut args = vec!["compare".to_string()];
    for (label, ratio) in [("base", 1.0), ("new", 1.01)] {
        for k in 0..rounds {
            let drift = 1.0 + 0.2 * ((k * 7) % 5) as f64;
            let jitter = 1.0 + 0.0005 * (k % 3) as f64;
            let name = format!("{label}{k}.txt");
            std::fs::write(
                dir.join(&name),
                format!("{}\n", 1000.0 * drift * ratio * jitter),
            )
            .unwrap();
            args.push(format!("{label}={name}"));
        }
    }
    args
}

#[test]
fn paired_files_pair_the_ith_file_of_each_label() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let args = drifting_files(dir.path(), 8);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    // Unpaired, the drift hides the 1 % shift.
    let (code, out, _) = run_in(&argv, dir.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("8+8"), "{out}");
    assert!(out.contains("INCONCLUSIVE"), "{out}");
    assert!(out.contains("not_interleaved"), "{out}");
    // Paired by file index, it shows.
    let mut paired = argv.clone();
    paired.push("--paired");
    let (code, out, _) = run_in(&paired, dir.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("8 pairs"), "{out}");
    assert!(out.contains("HIGHER"), "{out}");
    assert!(!out.contains("not_interleaved"), "{out}");
    // One file fewer for the variant: a note, and seven pairs.
    let mut shorter = paired[..paired.len() - 2].to_vec();
    shorter.push("--paired");
    let (code, out, _) = run_in(&shorter, dir.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("7 pairs"), "{out}");
    assert!(
        out.contains("different numbers of files (base: 8, new: 7)"),
        "{out}"
    );
    assert!(out.contains("unmatched_rounds"), "{out}");
}

#[test]
fn paired_files_with_several_values_each_fall_back_to_unpaired() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in [("a.txt", "1\n2\n3\n4\n"), ("b.txt", "2\n3\n4\n5\n")] {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    let (code, out, _) = run_in(&["compare", "--paired", "a.txt", "b.txt"], dir.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("repeated_rounds"), "{out}");
    assert!(out.contains("4+4"), "{out}");
}

/// `--fail-on-regression` never passes on nothing: an empty file, one input, the same
/// file twice, inputs that share no workload and metric, and plain numbers without a
/// direction each exit 2 with the reason; a direction given by flag lets the gate judge.
#[test]
fn the_regression_gate_cannot_pass_on_nothing() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("empty.txt"), "").unwrap();
    std::fs::write(p.join("a.txt"), "10\n11\n12\n10\n11\n").unwrap();
    // 47.6 % lower: a regression when higher is better.
    std::fs::write(p.join("b.txt"), "5\n5.5\n6\n5.2\n5.8\n").unwrap();
    let csv = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../results/tests/fixtures/redis-benchmark/default-suite.csv"
    );
    let gate = ["compare", "--fail-on-regression", "5"];
    for (inputs, reason) in [
        (vec!["empty.txt", "a.txt"], "`empty.txt` holds no values"),
        (vec!["a.txt"], "only the baseline `a.txt` has values"),
        (
            vec!["a.txt", "a.txt"],
            "only the baseline `a.txt` has values",
        ),
        (vec!["a.txt", csv], "shares no workload and metric"),
        (vec!["a.txt", "b.txt"], "plain numbers have no direction"),
    ] {
        let args: Vec<&str> = gate.iter().copied().chain(inputs.iter().copied()).collect();
        let (code, out, err) = run_in(&args, p);
        assert_eq!(code, 2, "{inputs:?}: {out}{err}");
        assert!(err.contains("nothing to judge"), "{inputs:?}: {err}");
        assert!(err.contains(reason), "{inputs:?}: {err}");
    }
    let judged = |flag: &str| {
        let args: Vec<&str> = gate
            .iter()
            .copied()
            .chain([flag, "a.txt", "b.txt"])
            .collect();
        run_in(&args, p).0
    };
    assert_eq!(judged("--higher-is-better"), 1);
    assert_eq!(judged("--lower-is-better"), 0);
    // A significance level outside (0, 1) is refused, naming the flag.
    for alpha in ["2", "0", "NaN", "1"] {
        let (code, _, err) = run_in(
            &[
                "compare",
                "--style",
                "benchstat",
                "--alpha",
                alpha,
                "a.txt",
                "b.txt",
            ],
            p,
        );
        assert_eq!(code, 2, "{alpha}: {err}");
        assert!(
            err.contains("--alpha: expected a significance level"),
            "{err}"
        );
    }
}

/// One value a side: no test can run, so no p-value is printed (it used to read
/// `p = 1.000`), and a slowdown's MDE, where there is one, is a decrease.
#[test]
fn one_value_a_side_prints_no_p_value() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("a.txt"), "100\n").unwrap();
    std::fs::write(p.join("b.txt"), "120\n").unwrap();
    let (code, out, err) = run_in(&["compare", "a.txt", "b.txt"], p);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("1.000"), "{out}");
    let row = out
        .lines()
        .find(|l| l.contains("+20.00%"))
        .unwrap_or_else(|| panic!("no row: {out}"));
    assert!(row.contains("  -  "), "the p column is empty: {row}");
    let (_, json, _) = run_in(&["compare", "--format", "json", "a.txt", "b.txt"], p);
    assert!(json.contains("\"p_value\": null"), "{json}");

    // A clear slowdown over scattered rounds: the MDE beside it is below zero.
    std::fs::write(p.join("c.txt"), "100\n100\n100\n100\n100\n100\n100\n100\n").unwrap();
    std::fs::write(p.join("d.txt"), "20\n40\n10\n32\n14\n26\n12\n38\n").unwrap();
    let (code, out, err) = run_in(
        &[
            "compare",
            "--higher-is-better",
            "--format",
            "json",
            "c.txt",
            "d.txt",
        ],
        p,
    );
    assert_eq!(code, 0, "{out}{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let row = &json["rows"][0];
    let (effect, mde) = (
        row["effect_pct"].as_f64().unwrap(),
        row["mde_pct"].as_f64().unwrap(),
    );
    assert!(effect < -50.0 && (-100.0..0.0).contains(&mde), "{row}");
}
