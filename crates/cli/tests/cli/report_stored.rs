//! `resplab report` on a fixed stored experiment, built through the store API with
//! seeded synthetic run records: the Markdown and every SVG are snapshot-tested; the HTML
//! and file inputs are checked for their content; bad inputs fail with a message.

use crate::common::command;

use resplab_results::fixture::{self, Rng};
use resplab_results::{
    CpuTime, HostInfo, LatencyUs, LoadModel, RunRecord, SecondSample, Summary, ToolInfo,
};
use resplab_stats::hist::LatencyHistogram;
use resplab_store::{Check, NewExperiment, NewTrial, Store};
use std::collections::BTreeMap;
use std::path::Path;

const VARIANTS: [&str; 2] = ["appendonly-no", "appendfsync-always"];
const ROUNDS: u32 = 6;

fn summary(rng: &mut Rng, ops: f64, lat_us: f64) -> Summary {
    let mut h = LatencyHistogram::new();
    for i in 0..2000u64 {
        let mut us = lat_us * (0.3 * rng.normal()).exp();
        if i % 400 == 0 {
            us *= 6.0;
        }
        h.record_n((us * 1000.0).max(1.0) as u64, 3);
    }
    let latency_us = LatencyUs::from_histogram(&h);
    fixture::summary((ops * 2.0) as u64, ops, latency_us, (100, 200), &h)
}

fn record(variant: usize, workload: usize, round: u32, attempt: u32) -> RunRecord {
    let mut rng = Rng::new(
        100 * workload as u64 + 10 * variant as u64 + u64::from(round) + 31 * u64::from(attempt),
    );
    let factor = if variant == 0 { 1.0 } else { 0.7 };
    let drift = 1.0 - 0.01 * f64::from(round);
    let mut commands = BTreeMap::new();
    let mut total_ops = 0.0;
    let names: &[&str] = if workload == 0 {
        &["SET"]
    } else {
        &["SET", "GET"]
    };
    for (i, c) in names.iter().enumerate() {
        let base = if i == 0 { 100_000.0 } else { 130_000.0 };
        let cf = if i == 0 {
            factor
        } else {
            1.0 - (1.0 - factor) * 0.2
        };
        let ops = base * cf * drift * (1.0 + 0.01 * rng.normal());
        total_ops += ops / names.len() as f64;
        commands.insert(c.to_string(), summary(&mut rng, ops, 70.0 / cf));
    }
    let totals = summary(&mut rng, total_ops, 70.0 / factor);
    let series = (1..=5)
        .map(|s| SecondSample {
            t_sec: f64::from(s),
            requests: total_ops as u64,
            errors: 0,
            ops_per_sec: total_ops * (1.0 + 0.02 * rng.normal()),
            latency_us: LatencyUs {
                p99: totals.latency_us.p99 * (1.0 + 0.05 * rng.normal()),
                ..totals.latency_us.clone()
            },
            unix_ms: None,
            histogram: None,
        })
        .collect();
    let mut server = BTreeMap::new();
    server.insert("redis_version".into(), "7.0.15".into());
    server.insert("redis_mode".into(), "standalone".into());
    RunRecord {
        tool: ToolInfo {
            name: "resplab".into(),
            version: "0.1.0".into(),
            git_revision: None,
        },
        started_at_unix_ms: 1_700_000_000_000,
        config: serde_json::json!({"tests": names.join(","), "clients": 8}),
        seed: 9000 + u64::from(round),
        load_model: LoadModel::ClosedLoop {
            clients: 8,
            pipeline: 1,
        },
        server,
        host: fixture::host("fixture-host", "Fixture CPU", None),
        warmup_sec: 0.2,
        duration_sec: 2.0,
        commands,
        series,
        client_cpu: CpuTime {
            user_sec: 0.2,
            system_sec: 0.1,
        },
        ..fixture::run_record(totals)
    }
}

/// A fresh directory holding the fixture experiment's store, `fixture.db`.
fn fixture_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    build_store(&dir.path().join("fixture.db"));
    dir
}

/// `resplab` run in `dir`.
fn in_dir(dir: &tempfile::TempDir) -> assert_cmd::Command {
    let mut c = command();
    c.current_dir(dir.path());
    c
}

/// The fixture experiment in `db`. Round 2 has an invalid first attempt (a failed check)
/// that was rerun.
fn build_store(db: &Path) {
    let mut store = Store::open(db).unwrap();
    let spec_text = "[experiment]\nname = \"fixture\"\nrounds = 6\nprimary_metric = \"ops_per_sec\"\nmargin = 0.05\n";
    let id = store
        .register_experiment(&NewExperiment {
            name: "fixture".into(),
            seed: 77,
            rounds: ROUNDS,
            order_kind: "rmit".into(),
            primary_metric: "ops_per_sec".into(),
            margin: Some(0.05),
            definition_hash: "fixture-1".into(),
            spec_text: spec_text.into(),
            spec_json: serde_json::json!({
                "name": "fixture",
                "variants": [
                    {"name": "appendonly-no", "server": "redis-server --appendonly no"},
                    {"name": "appendfsync-always", "server": "redis-server --appendonly yes --appendfsync always"}
                ]
            }),
            variants: VARIANTS
                .iter()
                .map(|v| (v.to_string(), serde_json::json!({})))
                .collect(),
            workloads: vec![
                ("set".into(), serde_json::json!({})),
                ("suite".into(), serde_json::json!({})),
            ],
        })
        .unwrap();
    for round in 0..ROUNDS {
        let attempts = if round == 2 { 2 } else { 1 };
        for attempt in 0..attempts {
            let mut position = 0;
            let order: [usize; 2] = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for w in 0..2 {
                for v in order {
                    let ok = !(round == 2 && attempt == 0 && v == 1 && w == 0);
                    store
                        .insert_trial(&NewTrial {
                            experiment_id: id,
                            variant: VARIANTS[v].into(),
                            workload: ["set", "suite"][w].into(),
                            round,
                            attempt,
                            position,
                            started_at_unix_ms: 1,
                            finished_at_unix_ms: 2,
                            run: record(v, w, round, attempt),
                            server_info: BTreeMap::new(),
                            server_cpu_sec: Some(0.5 + 0.1 * v as f64),
                            checks: vec![Check {
                                name: "errors".into(),
                                passed: ok,
                                detail: if ok {
                                    "0 errors".into()
                                } else {
                                    "12 errors (limit 0)".into()
                                },
                            }],
                            host: HostInfo::default(),
                            command: None,
                            phase: None,
                            evidence: Vec::new(),
                        })
                        .unwrap();
                    position += 1;
                }
            }
        }
    }
    store.set_state(id, "finished").unwrap();
}

#[test]
fn stored_experiment_markdown_and_svgs_match_their_snapshots() {
    let _lane = crate::common::shared();
    let dir = fixture_dir();
    in_dir(&dir)
        .args([
            "report",
            "fixture",
            "--db",
            "fixture.db",
            "-o",
            "out/fixture.md",
        ])
        .assert()
        .success()
        .stdout(predicates::str::contains("fixture.md"));
    let md = std::fs::read_to_string(dir.path().join("out/fixture.md")).unwrap();
    insta::assert_snapshot!("stored_fixture_markdown", md);
    let plots = dir.path().join("out/fixture-plots");
    let mut names: Vec<String> = std::fs::read_dir(&plots)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // set, suite, suite:GET, suite:SET × five plots, and the summary's forest plot
    assert_eq!(names.len(), 21, "{names:?}");
    for n in &names {
        assert!(
            md.contains(&format!("](fixture-plots/{n})")),
            "{n} is linked"
        );
        let svg = std::fs::read_to_string(plots.join(n)).unwrap();
        insta::assert_snapshot!(format!("stored_svg_{}", n.trim_end_matches(".svg")), svg);
    }
}

/// `compare db:NAME` and `report NAME` give the same geomean and interval: the same
/// workloads (a multi-command workload once, by its aggregate) and the same seed.
#[test]
fn compare_and_report_agree_on_the_geomean() {
    let _lane = crate::common::shared();
    let dir = fixture_dir();
    let out = in_dir(&dir)
        .args([
            "compare",
            "db:fixture",
            "--db",
            "fixture.db",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let summaries = json["summaries"].as_array().expect("summaries");
    let s = summaries
        .iter()
        .find(|s| s["variant"] == "appendfsync-always")
        .expect("a geomean for appendfsync-always");
    assert_eq!(s["workloads"], 2, "{s}");
    let line = format!(
        "over 2 workloads: {:+.2}% [{:+.2}%, {:+.2}%]",
        s["effect_pct"].as_f64().unwrap(),
        s["ci_low_pct"].as_f64().unwrap(),
        s["ci_high_pct"].as_f64().unwrap()
    );
    in_dir(&dir)
        .args(["report", "fixture", "--db", "fixture.db", "-o", "r.md"])
        .assert()
        .success();
    let md = std::fs::read_to_string(dir.path().join("r.md")).unwrap();
    assert!(md.contains(&line), "{line} in\n{md}");
}

#[test]
fn stored_experiment_html_is_one_file_with_every_section() {
    let _lane = crate::common::shared();
    let dir = fixture_dir();
    in_dir(&dir)
        .args(["report", "db:fixture", "--db", "fixture.db"])
        .assert()
        .success();
    let html = std::fs::read_to_string(dir.path().join("fixture-report.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), 21);
    for want in [
        "Summary",
        "Workload suite:GET",
        "SLOWER",
        "Experiment file",
        "fixture-host",
        "7.0.15",
        "redis-server --appendonly yes --appendfsync always",
        "left out: round 2 attempt 0, appendfsync-always on set: check errors failed (12 errors (limit 0))",
        "closed loop (8 connections x pipeline 1",
    ] {
        assert!(html.contains(&want.replace('\'', "&#39;")), "missing {want}");
    }
    assert!(!html.contains("<script"));
}

#[test]
fn result_files_make_a_report_too() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["report".to_string()];
    for (v, label) in VARIANTS.iter().enumerate() {
        for round in 0..6 {
            let name = format!("{label}-{round}.json");
            let r = record(v, 0, round, 0);
            std::fs::write(dir.path().join(&name), serde_json::to_string(&r).unwrap()).unwrap();
            args.push(format!("{label}={name}"));
        }
    }
    args.extend([
        "--format".into(),
        "md".into(),
        "-o".into(),
        "files.md".into(),
    ]);
    in_dir(&dir).args(&args).assert().success();
    let md = std::fs::read_to_string(dir.path().join("files.md")).unwrap();
    assert!(md.contains("## Workload ALL"), "{md}");
    assert!(md.contains("6+6"), "unpaired trials: {md}");
    assert!(
        md.contains("not\\_interleaved") || md.contains("not_interleaved"),
        "{md}"
    );
    assert!(dir
        .path()
        .join("files-plots/02-all-latency-spectrum.svg")
        .exists());
}

#[test]
fn unknown_experiment_and_missing_db_are_errors_that_say_so() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    in_dir(&dir)
        .args(["report", "nope", "--db", "missing.db"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("missing.db: no such file"));
    assert!(
        !dir.path().join("missing.db").exists(),
        "no database is created"
    );
    // A mistyped result file is a missing file, not an unknown experiment.
    in_dir(&dir)
        .args(["report", "results/run1.json"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "results/run1.json: cannot read: No such file",
        ));
    build_store(&dir.path().join("fixture.db"));
    in_dir(&dir)
        .args(["report", "nope", "--db", "fixture.db"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no experiment named `nope`"));
    in_dir(&dir)
        .args([
            "report",
            "fixture",
            "--db",
            "fixture.db",
            "--metric",
            "bogus",
        ])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "expected observations of metric `bogus`",
        ));
}

/// `report -o` under a path that cannot be a folder, and `experiment export -o` into a
/// folder that does not exist, fail with the flag and the path named, before any work,
/// and leave nothing behind.
#[test]
fn an_unwritable_output_path_is_named() {
    let _lane = crate::common::shared();
    let dir = fixture_dir();
    in_dir(&dir)
        .args(["report", "fixture", "--db", "fixture.db"])
        .args(["-o", "fixture.db/r.html"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "-o fixture.db/r.html: cannot create the folder fixture.db",
        ));
    in_dir(&dir)
        .args(["experiment", "export", "fixture", "--db", "fixture.db"])
        .args(["--format", "csv", "-o", "gone/x.csv"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("-o gone/x.csv"))
        .stderr(predicates::str::contains("the folder gone does not exist"));
    assert!(!dir.path().join("gone").exists());
}
