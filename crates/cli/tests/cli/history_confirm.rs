//! `resplab history --confirm` end to end: a series whose points were measured by a
//! stored experiment against `resplab serve`, with a known drop between two commits; the
//! A/B of those commits' servers — `resplab serve` against `resplab serve --delay-us
//! 300` (replies held back: a regression that needs no CPU, so it shows on a busy
//! machine) — confirms it, the gate fails on it, and a second `--confirm` does not
//! measure it again; the same drop with one server for both commits is not confirmed and
//! does not fail the gate; bad input is one line, exit 2, with nothing stored.

use crate::common::{resplab, text, BIN};
use resplab_results::history::{TrackedPoint, TrackedValue};
use resplab_store::Store;
use std::path::Path;

fn run(args: &[&str]) -> (i32, String) {
    let out = resplab(args);
    (out.status.code().unwrap_or(-1), text(&out))
}

/// Runs the experiment `nightly` once (2 short rounds of two variants against `resplab
/// serve`) so that its definition is stored, then appends a series `name` of 24 points
/// said to be measured by it (its variant `main`): ops/s 100,000 up to commit c11,
/// 50,000 from c12.
fn series_with_a_drop(dir: &Path, name: &str) -> String {
    let db = dir.join("h.db");
    let toml = dir.join("nightly.toml");
    std::fs::write(
        &toml,
        format!(
            "[experiment]\nname = \"nightly\"\nrounds = 2\ntest_time = \"300ms\"\nwarmup = \"0s\"\n\
             [[variant]]\nname = \"main\"\nserver = \"{BIN} serve --port {{port}}\"\n\
             [[variant]]\nname = \"again\"\nserver = \"{BIN} serve --port {{port}}\"\n\
             [[workload]]\nname = \"get\"\ntests = \"get\"\nclients = 4\nthreads = 1\n"
        ),
    )
    .unwrap();
    if !db.exists() {
        let (code, out) = run(&[
            "experiment",
            "run",
            toml.to_str().unwrap(),
            "-q",
            "--db",
            db.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{out}");
    }
    let store = Store::open(&db).unwrap();
    for i in 0..24i64 {
        let level = if i < 12 { 100_000.0 } else { 50_000.0 };
        let p = TrackedPoint {
            id: 0,
            measured_at_unix_ms: 1_764_000_000_000 + 86_400_000 * i,
            commit: Some(format!("c{i:02}")),
            host_fingerprint: "h".into(),
            host: serde_json::Value::Null,
            config_fingerprint: "c".into(),
            tags: Vec::new(),
            source: "db:nightly".into(),
            values: vec![TrackedValue {
                workload: "main/get".into(),
                metric: "ops_per_sec".into(),
                unit: "ops/s".into(),
                direction: "higher_is_better".into(),
                value: level * (1.0 + 0.003 * ((i * 7 % 5) as f64 - 2.0)),
                trials: 2,
            }],
        };
        store.append_history(name, &p).unwrap();
    }
    db.to_str().unwrap().to_string()
}

#[test]
fn a_real_regression_is_confirmed_stored_and_gated() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = series_with_a_drop(dir.path(), "nightly");
    let before = format!("c11={BIN} serve --port {{port}}");
    let after = format!("c12={BIN} serve --port {{port}} --delay-us 300");
    let confirm = [
        "history",
        "nightly",
        "--db",
        &db,
        "--confirm",
        "--server-for",
        &before,
        "--server-for",
        &after,
        "--max-time",
        "60s",
        "--gate",
        "5",
    ];
    let (code, out) = run(&confirm);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("resplab: confirming main/get ops_per_sec -50.0 % (c11 → c12)"),
        "{out}"
    );
    assert!(
        out.contains("(c11 → c12, mean 99950 → 50012) — confirmed by A/B: -"),
        "{out}"
    );
    assert!(
        out.contains("resplab: gate: main/get ops_per_sec: regression -50.0 %"),
        "{out}"
    );
    let store = Store::open(Path::new(&db)).unwrap();
    let stored = store.confirmations("nightly").unwrap();
    assert_eq!(stored.len(), 1);
    assert!(
        stored[0].confirmed && stored[0].decision == "lower",
        "{stored:?}"
    );
    assert!(stored[0].effect_pct < -5.0, "{stored:?}");
    let experiments = store.list_experiments().unwrap().len();
    // Confirmed once: a second --confirm measures nothing, and the plain gate sees it.
    let (code, out) = run(&confirm);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("every change point of nightly is confirmed or rejected already"),
        "{out}"
    );
    assert_eq!(store.list_experiments().unwrap().len(), experiments);
    let (code, out) = run(&[
        "history", "nightly", "--db", &db, "--gate", "5", "--format", "csv",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(",regression,") && out.contains(",confirmed,"),
        "{out}"
    );
}

#[test]
fn a_change_the_servers_do_not_show_is_not_confirmed_and_passes_the_gate() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = series_with_a_drop(dir.path(), "flat");
    let (code, out) = run(&[
        "history",
        "flat",
        "--db",
        &db,
        "--confirm",
        "--server",
        &format!("{BIN} serve --port {{port}} --name {{commit}}"),
        "--max-time",
        "15s",
        "--gate",
        "5",
    ]);
    // `--name` is not a flag of serve: the A/B fails, nothing is confirmed, exit 2.
    assert_eq!(code, 2, "{out}");
    let store = Store::open(Path::new(&db)).unwrap();
    assert!(store.confirmations("flat").unwrap().is_empty());
    let same = format!("{BIN} serve --port {{port}}");
    let (code, out) = run(&[
        "history",
        "flat",
        "--db",
        &db,
        "--confirm",
        "--server-for",
        &format!("c11={same}"),
        "--server-for",
        &format!("c12={same}"),
        "--max-time",
        "15s",
        "--gate",
        "5",
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("— NOT confirmed by A/B: "), "{out}");
    let stored = store.confirmations("flat").unwrap();
    assert!(stored.len() == 1 && !stored[0].confirmed, "{stored:?}");
}

#[test]
fn bad_input_is_one_line_exit_2_and_stores_nothing() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = series_with_a_drop(dir.path(), "nightly");
    let points = || {
        Store::open(Path::new(&db))
            .unwrap()
            .history("nightly")
            .unwrap()
            .len()
    };
    let cases: [(&[&str], &str); 5] = [
        (
            &[
                "history",
                "nope",
                "--confirm",
                "--server",
                "x {port} {commit}",
            ],
            "no series named `nope`",
        ),
        (
            &["history", "nightly", "--confirm"],
            "--confirm: expected the servers to measure",
        ),
        (
            &[
                "history",
                "nightly",
                "--confirm",
                "--server",
                "x --port 1 {commit}",
            ],
            "--server: expected a command with {port}",
        ),
        (
            &[
                "history",
                "nightly",
                "--confirm",
                "--server",
                "x --port {port}",
            ],
            "--server: expected {commit}",
        ),
        (
            &[
                "history",
                "nightly",
                "--confirm",
                "--server-for",
                "c11=x --port {port}",
            ],
            "--server-for: no server for commit `c12`",
        ),
    ];
    for (args, want) in cases {
        let mut args = args.to_vec();
        args.extend(["--db", &db]);
        let out = resplab(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let store = Store::open(Path::new(&db)).unwrap();
    assert_eq!(points(), 24);
    assert!(store.confirmations("nightly").unwrap().is_empty());
    assert_eq!(store.list_experiments().unwrap().len(), 1);
}
