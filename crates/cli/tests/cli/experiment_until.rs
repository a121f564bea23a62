//! Runs until decided (`until = "decided"`, `--until-decided`) against `resplab serve`:
//! an A/A run never ends "different", a known 10 % slowdown stops before its round limit
//! with the right sign, a killed run resumes its sequence, and bad limits are one-line
//! errors with exit code 2.
//!
//! The primary metric is the server's CPU time per request: `--slowdown 10` spins 10 %
//! more per batch of work, which that metric sees whatever else the machine runs, while
//! throughput on a busy shared machine can swing by a factor of ten between rounds.

use crate::common::{kill_9_once_stored, run_in};
use resplab_store::Store;
use std::path::Path;
use std::time::Duration;

/// [`crate::common::serve_pair_file`] with `limits` (the run's limits) in
/// `[experiment]`, 50 clients and a pipeline of 16.
fn file(dir: &Path, name: &str, slowdown: u32, limits: &str) -> std::path::PathBuf {
    crate::common::serve_pair_file(dir, name, slowdown, limits, "clients = 50\npipeline = 16")
}

fn stop_of(db: &Path, name: &str) -> resplab_store::StopRow {
    let s = Store::open(db).unwrap();
    let info = s.find_experiment(name).unwrap().unwrap();
    s.sequential_stop(info.id)
        .unwrap()
        .expect("a stop is stored")
}

#[test]
fn an_aa_run_ends_equivalent_or_undecided_never_different() {
    let _alone = crate::common::alone();
    let dir = tempfile::tempdir().unwrap();
    let f = file(dir.path(), "aa", 0, "max_rounds = 20");
    let (code, out, err) = run_in(
        &["experiment", "run", f.to_str().unwrap(), "--db", "r.db"],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("verdict (server_cpu_us_per_op, run until decided"),
        "{out}"
    );
    assert!(!out.contains("SLOWER") && !out.contains("FASTER"), "{out}");
    assert!(
        out.contains("EQUIVALENT within ±20.0 %") || out.contains("undecided"),
        "{out}"
    );
    assert!(out.contains("sensitivity: could detect"), "{out}");
    let stop = stop_of(&dir.path().join("r.db"), "aa");
    assert!(["decided", "max_rounds"].contains(&stop.reason.as_str()));
    // Every look is stored, and the progress showed the interval narrowing.
    let s = Store::open(&dir.path().join("r.db")).unwrap();
    let looks = s
        .looks(s.find_experiment("aa").unwrap().unwrap().id)
        .unwrap();
    assert_eq!(looks.len(), stop.rounds as usize);
    // A look after every round; from the first bounded one on (the third, for the
    // default spending rule), the line says how wide the interval was before.
    assert!(err.contains("look after 3 rounds"), "{err}");
    if stop.rounds > 4 {
        assert!(
            err.contains("look after 5 rounds") && err.contains(", was ±"),
            "{err}"
        );
    }
    // The default rule, said on the verdict's rule line.
    assert!(
        out.contains("rule: until decided: group-sequential test"),
        "{out}"
    );
    assert!(out.contains("O'Brien-Fleming-type"), "{out}");
}

#[test]
fn a_stored_run_keeps_its_rule_when_read_back() {
    let _alone = crate::common::alone();
    let dir = tempfile::tempdir().unwrap();
    let f = file(
        dir.path(),
        "cs",
        0,
        "max_rounds = 7\nuntil_rule = \"anytime\"",
    );
    let (code, out, err) = run_in(
        &["experiment", "run", f.to_str().unwrap(), "--db", "r.db"],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("rule: until decided: Lai's confidence sequence"),
        "{out}"
    );
    // A comparison of the stored run reads its rule back from the stored plan.
    let (code, out, err) = run_in(&["compare", "db:cs", "--db", "r.db"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Lai's confidence sequence"), "{out}");
    assert!(!out.contains("group-sequential"), "{out}");
}

#[test]
fn a_ten_percent_slowdown_stops_early_and_slower() {
    let _alone = crate::common::alone();
    let dir = tempfile::tempdir().unwrap();
    let f = file(dir.path(), "slow", 10, "max_rounds = 120");
    let (code, out, err) = run_in(
        &["experiment", "run", f.to_str().unwrap(), "--db", "r.db"],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let stop = stop_of(&dir.path().join("r.db"), "slow");
    assert_eq!(stop.reason, "decided", "{out}");
    assert!(stop.rounds < 120, "{out}");
    assert!(out.contains("set / other vs baseline: SLOWER: +"), "{out}");
    assert!(
        out.contains(&format!(
            "sequential run: stopped after {} rounds in",
            stop.rounds
        )),
        "{out}"
    );
}

#[test]
fn a_killed_run_resumes_its_sequence() {
    let _alone = crate::common::alone();
    let dir = tempfile::tempdir().unwrap();
    let f = file(
        dir.path(),
        "resumed",
        0,
        "max_rounds = 8\nmax_time = \"5m\"",
    );
    let db = dir.path().join("r.db");
    let mut child = crate::common::spawn_experiment(&f, &db);
    let looks = |db: &Path| -> usize {
        Store::open(db)
            .ok()
            .and_then(|s| {
                let info = s.find_experiment("resumed").ok()??;
                Some(s.looks(info.id).ok()?.len())
            })
            .unwrap_or(0)
    };
    kill_9_once_stored(
        &mut child,
        || looks(&db),
        3,
        Duration::from_secs(120),
        Duration::from_millis(300),
    );
    let before = Store::open(&db).unwrap();
    let id = before.find_experiment("resumed").unwrap().unwrap().id;
    let elapsed = before.sequential_elapsed(id).unwrap();
    assert!(before.sequential_stop(id).unwrap().is_none());
    drop(before);
    let (code, out, err) = crate::common::resume("resumed", &db, dir.path());
    assert_eq!(code, 0, "{err}");
    let stop = stop_of(&db, "resumed");
    assert!(stop.elapsed_sec > elapsed, "{stop:?} after {elapsed}");
    assert!(stop.rounds <= 8 && stop.rounds >= 3, "{stop:?}");
    assert!(out.contains("run until decided"), "{out}");
}

fn bad(limits: &str, extra: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let f = file(dir.path(), "bad", 0, limits);
    let mut args = vec!["experiment", "run", f.to_str().unwrap(), "--dry-run"];
    args.extend_from_slice(extra);
    let (code, _, err) = run_in(&args, dir.path());
    assert!(!dir.path().join("resplab.db").exists());
    (code, err)
}

#[test]
fn bad_limits_are_one_line_errors() {
    let _lane = crate::common::shared();
    let (code, err) = bad("", &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "bad.toml:4:9: key `experiment.until`: until = \"decided\" needs a limit: \
             max_rounds, max_time or both"
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let (code, err) = bad("max_time = \"1s\"", &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("key `experiment.max_time`: expected at least one round's time"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let (code, err) = bad("max_rounds = 2", &[]);
    assert_eq!(code, 2);
    assert!(err.contains("expected at least 3 rounds"), "{err}");
    let (code, err) = bad("max_rounds = 5\nuntil_rule = \"anytime\"", &[]);
    assert_eq!(code, 2);
    assert!(err.contains("expected at least 6 rounds"), "{err}");
    let (code, err) = bad("max_rounds = 20\nuntil_rule = \"sometimes\"", &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "bad.toml:6:14: key `experiment.until_rule`: expected one of \"spending\", \
             \"spending-pocock\", \"anytime\", found \"sometimes\""
        ),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let (code, err) = bad("max_rounds = 20", &["--max-time", "1s"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("resplab: --max-time: expected at least one round's time"),
        "{err}"
    );
}

#[test]
fn an_unknown_until_and_flags_without_a_limit_are_refused() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("u.toml");
    std::fs::write(
        &f,
        "[experiment]\nname = \"u\"\nuntil = \"done\"\n\n[[variant]]\nname = \"a\"\n",
    )
    .unwrap();
    let (code, _, err) = run_in(&["experiment", "run", "u.toml"], dir.path());
    assert_eq!(code, 2);
    assert!(
        err.contains("u.toml:3:9: key `experiment.until`: expected \"rounds\" or \"decided\", found \"done\""),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    std::fs::write(
        &f,
        "[experiment]\nname = \"u\"\n\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n\
         [[workload]]\nname = \"w\"\ntests = \"set\"\n",
    )
    .unwrap();
    let (code, _, err) = run_in(
        &[
            "experiment",
            "run",
            "u.toml",
            "--until-decided",
            "--dry-run",
        ],
        dir.path(),
    );
    assert_eq!(code, 2);
    assert_eq!(
        err.trim(),
        "resplab: --until-decided: needs a limit: --max-time, --max-rounds or both"
    );
    let (code, _, err) = run_in(
        &[
            "experiment",
            "run",
            "u.toml",
            "--max-time",
            "10m",
            "--dry-run",
        ],
        dir.path(),
    );
    assert_eq!(code, 2);
    assert!(
        err.starts_with("resplab: --max-time: applies only to a run until decided"),
        "{err}"
    );
    let (code, out, err) = run_in(
        &[
            "experiment",
            "run",
            "u.toml",
            "--until-decided",
            "--max-time",
            "10m",
            "--dry-run",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("until decided"), "{out}");
}
