//! The CI recipe of examples/ci: its shell version, `ab.sh`, run against two real server
//! builds — `resplab serve` as it is and `resplab serve --delay-us 300`, which holds every
//! reply back 300 µs (a regression of known sign that needs no CPU, so it shows on a busy
//! machine too; `--slowdown`'s spinning can make a lightly loaded server answer faster) —
//! fails with the report written; an A/A passes; bad commands are refused. The workflow
//! calls the script only with options the script takes.

use crate::common::BIN;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn ci_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/ci"))
}

/// Runs `ab.sh` with a short GET workload and `args` in `dir`, resplab being this build.
fn ab(dir: &Path, args: &[&str]) -> Output {
    Command::new("bash")
        .arg(ci_dir().join("ab.sh"))
        .args([
            "--tests",
            "get",
            "--clients",
            "4",
            "--threads",
            "1",
            "--test-time",
            "500ms",
        ])
        .args(args)
        .current_dir(dir)
        .env("RESPLAB", BIN)
        .env("GITHUB_STEP_SUMMARY", dir.join("step-summary.md"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn serve(extra: &str) -> String {
    format!("{BIN} serve --port {{port}} {extra}")
}

#[test]
fn a_regression_fails_the_script_with_the_report_written() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let base = serve("");
    let head = serve("--delay-us 300");
    let o = ab(
        dir.path(),
        &["--out", "out", "--max-time", "60s", &base, &head],
    );
    let text = crate::common::text(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.contains("head vs baseline: SLOWER"), "{text}");
    assert!(
        text.contains("more than --fail-on-regression 5 %"),
        "{text}"
    );
    let out = dir.path().join("out");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("head"), "{report}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("**Regression:**"), "{summary}");
    assert!(summary.contains("| ab | ops_per_sec"), "{summary}");
    let posted = std::fs::read_to_string(dir.path().join("step-summary.md")).unwrap();
    assert_eq!(posted, summary);
}

#[test]
fn an_a_a_run_passes() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let s = serve("");
    let o = ab(dir.path(), &["--out", "out", "--max-time", "20s", &s, &s]);
    let text = crate::common::text(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    let summary = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(summary.contains("No regression beyond 5 %"), "{summary}");
    assert!(dir.path().join("out/report.md").is_file());
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["redis-server --port 1", "x {port}"],
            "BASE_SERVER_CMD: expected a command with {port} in it",
        ),
        (&["a {port}"], "expected two server commands"),
        (
            &["--threshold", "x", "a {port}", "b {port}"],
            "--threshold: expected a percentage",
        ),
        (
            &["--bogus", "1", "a {port}", "b {port}"],
            "--bogus: unknown option",
        ),
    ];
    for (args, want) in cases {
        let o = ab(dir.path(), args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let last = err.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("ab.sh: ") && last.contains(want),
            "{args:?}: {err}"
        );
    }
    assert!(!dir.path().join("resplab-ab/ab.db").exists());
}

#[test]
fn the_workflow_runs_the_script_on_pull_requests_with_options_it_takes() {
    let _lane = crate::common::shared();
    use yaml_rust2::YamlLoader;
    let text = std::fs::read_to_string(ci_dir().join("resplab-ab.yml")).unwrap();
    let docs = YamlLoader::load_from_str(&text).expect("the workflow is YAML");
    let wf = &docs[0];
    assert!(!wf["on"]["pull_request"].is_badvalue(), "{text}");
    let steps = wf["jobs"]["ab"]["steps"].as_vec().expect("the job's steps");
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    assert!(
        runs.iter()
            .any(|r| r.contains("base") && r.contains("head") && r.contains("$BUILD")),
        "both checkouts are built: {runs:?}"
    );
    let checkouts: Vec<&str> = steps
        .iter()
        .filter_map(|s| s["with"]["ref"].as_str())
        .collect();
    assert_eq!(checkouts, ["${{ github.event.pull_request.base.sha }}"]);
    let call = runs
        .iter()
        .find(|r| r.contains("examples/ci/ab.sh"))
        .expect("a step runs examples/ci/ab.sh");
    let usage = String::from_utf8(
        Command::new("bash")
            .arg(ci_dir().join("ab.sh"))
            .arg("--help")
            .output()
            .unwrap()
            .stderr,
    )
    .unwrap();
    let options: Vec<&str> = call
        .split_whitespace()
        .filter(|w| w.starts_with("--"))
        .collect();
    assert!(options.len() >= 4, "{call}");
    for o in options {
        assert!(
            usage.contains(&format!("[{o} ")),
            "ab.sh does not take {o}: {usage}"
        );
    }
    let env = &wf["env"];
    for var in [
        "THRESHOLD",
        "MARGIN",
        "MAX_TIME",
        "BUILD",
        "SERVER_BIN",
        "SERVER_ARGS",
    ] {
        assert!(env[var].as_str().is_some(), "env {var} is set: {text}");
    }
    assert!(env["SERVER_ARGS"].as_str().unwrap().contains("{port}"));
    let upload = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/upload-artifact"))
        })
        .expect("the report is kept as an artifact");
    assert_eq!(upload["if"].as_str(), Some("always()"));
}

/// The gate `ab.sh` relies on reads the interval of a run until decided; a fixed number
/// of rounds is refused before any trial, pointing to `compare`'s gate.
#[test]
fn the_experiment_gate_needs_a_run_until_decided() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fixed.toml");
    std::fs::write(
        &file,
        format!(
            "[experiment]\nname = \"fixed\"\nrounds = 6\ntest_time = \"300ms\"\n\
             [[variant]]\nname = \"a\"\nserver = \"{BIN} serve --port {{port}}\"\n\
             [[variant]]\nname = \"b\"\nserver = \"{BIN} serve --port {{port}}\"\n\
             [[workload]]\nname = \"get\"\ntests = \"get\"\n"
        ),
    )
    .unwrap();
    let db = dir.path().join("x.db");
    for (flag, want) in [
        ("5", "--fail-on-regression: expected a run until decided"),
        ("x", "--fail-on-regression"),
    ] {
        let o = crate::common::run_db(
            &[
                "experiment",
                "run",
                file.to_str().unwrap(),
                "--fail-on-regression",
                flag,
            ],
            &db,
            &[],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
    }
    let (code, out) = {
        let o = crate::common::run_db(&["experiment", "list"], &db, &[]);
        (o.status.code(), crate::common::text(&o))
    };
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("fixed"), "nothing was registered: {out}");
}
