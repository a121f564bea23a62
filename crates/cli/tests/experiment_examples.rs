//! Every example in examples/ runs against real redis-server with tiny budgets
//! (`--smoke`), and the README demo runs in full and ends in a verdict.

use std::process::Command;
use std::time::{Duration, Instant};

fn examples_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"))
}

fn run(args: &[&str], dir: &std::path::Path) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_resplab"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_example_smoke_runs() {
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
        let (ok, out, err) = run(&args, dir.path());
        assert!(ok, "{name}:\n{out}\n{err}");
        assert!(out.contains("verdict ("), "{name}: {out}");
        let status = format!("{name}-smoke");
        let (ok, out, _) = run(
            &["experiment", "status", &status, "--db", "smoke.db"],
            dir.path(),
        );
        assert!(ok && out.contains("rounds valid: 2/2"), "{name}: {out}");
    }
}

#[test]
fn the_demo_ends_in_a_verdict_well_under_two_minutes() {
    let dir = tempfile::tempdir().unwrap();
    let file = examples_dir().join("demo.toml");
    let started = Instant::now();
    let (ok, out, err) = run(
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
    assert!(ok, "{out}\n{err}");
    // fsync after every write is far slower than no persistence on any disk
    assert!(
        out.contains("set / appendfsync-always vs baseline: SLOWER"),
        "{out}\n{err}"
    );
    assert!(took < Duration::from_secs(90), "the demo took {took:?}");
}
