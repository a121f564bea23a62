//! Every example in examples/ runs against real redis-server with tiny budgets
//! (`--smoke`), and the README demo runs in full and ends in a verdict.

use crate::common::run_in;

use std::time::{Duration, Instant};

fn examples_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"))
}

#[test]
fn every_example_smoke_runs() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    for (name, extra) in [
        ("overhead-sweep", vec![]),
        ("redis-benchmark-suite", vec!["--requests", "300"]),
        ("memtier-patterns", vec![]),
        ("demo", vec![]),
        ("external-redis-benchmark", vec![]),
    ] {
        let file = examples_dir().join(format!("{name}.toml"));
        let file = file.to_string_lossy().into_owned();
        let mut args = vec![
            "experiment",
            "run",
            &file,
            "--smoke",
            "-q",
            "--db",
            "smoke.db",
        ];
        args.extend(extra);
        let (code, out, err) = run_in(&args, dir.path());
        assert!(code == 0, "{name}:\n{out}\n{err}");
        assert!(out.contains("verdict ("), "{name}: {out}");
        let status = format!("{name}-smoke");
        let (code, out, _) = run_in(
            &["experiment", "status", &status, "--db", "smoke.db"],
            dir.path(),
        );
        assert!(
            code == 0 && out.contains("rounds valid: 2/2"),
            "{name}: {out}"
        );
    }
}

#[test]
fn the_demo_ends_in_a_verdict_well_under_two_minutes() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = examples_dir().join("demo.toml");
    let started = Instant::now();
    let (code, out, err) = run_in(
        &[
            "experiment",
            "run",
            &file.to_string_lossy(),
            "-q",
            "--db",
            "demo.db",
        ],
        dir.path(),
    );
    let took = started.elapsed();
    assert!(code == 0, "{out}\n{err}");
    // fsync after every write is far slower than no persistence on any disk
    assert!(
        out.contains("set / appendfsync-always vs baseline: SLOWER"),
        "{out}\n{err}"
    );
    assert!(took < Duration::from_secs(90), "the demo took {took:?}");
}
