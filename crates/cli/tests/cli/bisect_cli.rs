//! `resplab bisect` against a git repository made by the test: every commit holds a
//! `cost` file (nanoseconds of work per command) that its server, `resplab serve
//! --work-ns`, reads, and a `build.sh` that fails where a commit is marked broken.
//! The cost steps are large (100 µs → 400 µs, so the server's work decides the rate) and
//! the trials short, so each measured pair is decided different in a few rounds; 10
//! rounds at most, as a candidate's side at its own level may stay open at the limit and
//! still classify it (docs/bisect.md), where more rounds only cost time.

use crate::common::{run_db, BIN};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One commit of the made repository: its cost and whether its build fails.
#[derive(Clone, Copy)]
struct Rev {
    cost_ns: u64,
    broken: bool,
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git is installed (scripts/setup.sh installs it)");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A repository with one commit per entry of `revs`; the commit ids, oldest first.
fn make_repo(dir: &Path, revs: &[Rev]) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "lab@example.invalid"]);
    git(dir, &["config", "user.name", "lab"]);
    let serve = format!(
        "#!/bin/sh\nexec '{BIN}' serve --port \"$1\" --work-ns \"$(cat \"$(dirname \"$0\")/cost\")\"\n"
    );
    std::fs::write(dir.join("serve.sh"), serve).unwrap();
    std::fs::write(
        dir.join("build.sh"),
        "if [ -e broken ]; then echo 'does not compile' >&2; exit 1; fi\necho built > built.txt\n",
    )
    .unwrap();
    std::fs::write(dir.join(".gitignore"), "built.txt\n").unwrap();
    let mut ids = Vec::new();
    for (i, r) in revs.iter().enumerate() {
        std::fs::write(dir.join("cost"), format!("{}\n", r.cost_ns)).unwrap();
        std::fs::write(dir.join("notes"), format!("change {i}\n")).unwrap();
        if r.broken {
            std::fs::write(dir.join("broken"), "").unwrap();
        } else {
            let _ = std::fs::remove_file(dir.join("broken"));
        }
        git(dir, &["add", "-A"]);
        git(
            dir,
            &[
                "commit",
                "-q",
                "-m",
                &format!("change {i}: cost {} ns", r.cost_ns),
            ],
        );
        ids.push(git(dir, &["rev-parse", "HEAD"]));
    }
    ids
}

fn revs(costs: &[u64]) -> Vec<Rev> {
    costs
        .iter()
        .map(|&cost_ns| Rev {
            cost_ns,
            broken: false,
        })
        .collect()
}

/// The experiment file of the measured pairs: short trials, two clients.
fn experiment_file(dir: &Path) -> PathBuf {
    let path = dir.join("bisect.toml");
    std::fs::write(
        &path,
        "[experiment]\nname = \"cost\"\nrounds = 6\ntest_time = \"300ms\"\nclient_cpu_limit = 1.0\nprimary_metric = \"p50_us\"\n\n\
         [[variant]]\nname = \"a\"\n\n[[variant]]\nname = \"b\"\n\n\
         [[workload]]\nname = \"get\"\ntests = \"get\"\nclients = 1\n",
    )
    .unwrap();
    path
}

/// The words of a bisect of `repo` from `good` to `bad` with the test's build, server
/// and experiment file (`file`), 10 rounds at most per measurement.
fn bisect_args<'a>(repo: &'a Path, good: &'a str, bad: &'a str, file: &'a Path) -> Vec<&'a str> {
    vec![
        "bisect",
        "--repo",
        repo.to_str().unwrap(),
        "--good",
        good,
        "--bad",
        bad,
        "--build",
        "sh build.sh",
        "--server",
        "sh {src}/serve.sh {port}",
        "--experiment",
        file.to_str().unwrap(),
        "--max-rounds",
        "10",
    ]
}

/// Runs the bisect of `repo` from `good` to `bad` as JSON.
fn bisect(
    dir: &Path,
    repo: &Path,
    good: &str,
    bad: &str,
    extra: &[&str],
) -> (i32, serde_json::Value, String) {
    let file = experiment_file(dir);
    let mut args = bisect_args(repo, good, bad, &file);
    args.extend_from_slice(&["--format", "json"]);
    args.extend_from_slice(extra);
    let out = run_db(&args, &dir.join("lab.db"), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap_or(-1), json, stderr)
}

/// The ids of each step's commits.
fn steps(json: &serde_json::Value) -> Vec<Vec<String>> {
    json["steps"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|s| {
            s["commits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["id"].as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn names_the_commit_that_changed_the_cost_and_a_rerun_reuses_everything() {
    let _lane = crate::common::shared();
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let mut costs = vec![100_000; 14];
    for c in costs.iter_mut().skip(9) {
        *c = 400_000;
    }
    let ids = make_repo(&repo, &revs(&costs));
    let (code, json, err) = bisect(tmp.path(), &repo, &ids[0], "main", &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json["conclusion"], "culprit", "{json:#}\n{err}");
    assert_eq!(steps(&json), vec![vec![ids[9].clone()]], "{err}");
    assert_eq!(
        json["steps"][0]["commits"][0]["subject"],
        "change 9: cost 400000 ns"
    );
    assert!(
        json["effect"]["mean"].as_f64().unwrap() > 0.0,
        "a higher median latency"
    );
    let tested = json["tested"].as_array().unwrap();
    assert!(tested.len() >= 3, "{json:#}");
    for t in tested {
        let name = t["experiment"].as_str().unwrap();
        let listed = run_db(
            &["experiment", "status", name],
            &tmp.path().join("lab.db"),
            &[],
        );
        assert!(
            listed.status.success(),
            "each pair is a stored experiment: {name}"
        );
    }
    assert!(tmp
        .path()
        .join("lab-bisect")
        .join("worktrees")
        .join(&ids[9])
        .join("built.txt")
        .exists());

    let (code, again, err) = bisect(tmp.path(), &repo, &ids[0], "main", &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(steps(&again), steps(&json));
    assert!(!err.contains("built "), "nothing is built again: {err}");
    assert!(!err.contains("  round "), "no trial runs again: {err}");
    assert!(err.contains(", stored)"), "{err}");
}

#[test]
fn a_commit_that_does_not_build_is_skipped() {
    let _lane = crate::common::shared();
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let mut revs = revs(&[
        0, 0, 0, 0, 100_000, 100_000, 100_000, 100_000, 100_000, 100_000, 100_000, 100_000, 100_000,
    ]);
    revs[6].broken = true;
    let ids = make_repo(&repo, &revs);
    let (code, json, err) = bisect(tmp.path(), &repo, &ids[0], &ids[12], &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(steps(&json), vec![vec![ids[4].clone()]], "{json:#}\n{err}");
    let skipped: Vec<&str> = json["tested"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["class"] == "skipped")
        .map(|t| t["commit"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, vec![ids[6].as_str()], "{json:#}");
    assert!(err.contains("build fails at"), "{err}");
}

#[test]
fn two_changes_in_the_range_are_reported_as_two() {
    let _lane = crate::common::shared();
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let costs: Vec<u64> = (0..14)
        .map(|i| match i {
            0..=3 => 30_000,
            4..=9 => 120_000,
            _ => 400_000,
        })
        .collect();
    let ids = make_repo(&repo, &revs(&costs));
    let (code, json, err) = bisect(tmp.path(), &repo, &ids[0], &ids[13], &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json["conclusion"], "steps", "{json:#}\n{err}");
    assert_eq!(
        steps(&json),
        vec![vec![ids[4].clone()], vec![ids[10].clone()]],
        "{json:#}\n{err}"
    );
}

/// Exit code 2 and one error line, the last on standard error (after the progress
/// lines, if any), that starts with `expected`.
fn refused(
    dir: &Path,
    repo: &Path,
    good: &str,
    bad: &str,
    build: &str,
    server: &str,
    expected: &str,
) {
    let db = dir.join("lab.db");
    let out = run_db(
        &[
            "bisect",
            "--repo",
            repo.to_str().unwrap(),
            "--good",
            good,
            "--bad",
            bad,
            "--build",
            build,
            "--server",
            server,
            "--workload",
            "get",
            "--test-time",
            "100ms",
        ],
        &db,
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{expected}: {err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("resplab:")).collect();
    assert_eq!(errors.len(), 1, "one error line: {err}");
    assert_eq!(
        err.lines().last(),
        errors.first().copied(),
        "the error comes last: {err}"
    );
    assert!(
        errors[0].starts_with(&format!("resplab: {expected}")),
        "expected `{expected}`, found: {err}"
    );
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    let _lane = crate::common::shared();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let repo = dir.join("repo");
    let ids = make_repo(&repo, &revs(&[100_000; 4]));
    let server = "sh {src}/serve.sh {port}";
    let (good, bad) = (ids[0].as_str(), ids[3].as_str());
    refused(
        dir,
        &repo,
        good,
        bad,
        "true",
        "sh {src}/serve.sh",
        "--server: `sh {src}/serve.sh` has no {port}",
    );
    refused(
        dir,
        &repo,
        "nosuchrev",
        bad,
        "true",
        server,
        "--good: unknown revision `nosuchrev`",
    );
    refused(
        dir,
        &repo,
        good,
        "v9.9",
        "true",
        server,
        "--bad: unknown revision `v9.9`",
    );
    refused(dir, &repo, good, good, "true", server, "--bad: ");
    refused(dir, &repo, bad, good, "true", server, "--good: ");
    refused(
        dir,
        &repo,
        good,
        bad,
        "exit 1",
        server,
        "--build: the build command fails at --good",
    );
    std::fs::write(repo.join("cost"), "5\n").unwrap();
    refused(dir, &repo, good, bad, "true", server, "--repo: ");
    let nothing = dir.join("not-a-repo");
    std::fs::create_dir_all(&nothing).unwrap();
    refused(dir, &nothing, good, bad, "true", server, "--repo: ");
}

#[test]
fn a_bisect_killed_with_sigkill_continues_when_run_again() {
    let _lane = crate::common::shared();
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let costs: Vec<u64> = (0..13)
        .map(|i| if i >= 7 { 400_000 } else { 100_000 })
        .collect();
    let ids = make_repo(&repo, &revs(&costs));
    let file = experiment_file(tmp.path());
    let db = tmp.path().join("lab.db");
    let mut child = Command::new(BIN)
        .args(bisect_args(&repo, &ids[0], &ids[12], &file))
        .arg("--db")
        .arg(&db)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The kill comes inside the first candidate's measurement, once it has stored one
    // whole round (the candidate, good and bad), however many rounds good against bad
    // took before it.
    let first = format!("{}-vs-{}-{}", &ids[6][..10], &ids[0][..10], &ids[12][..10]);
    crate::common::kill_9_once_stored(
        &mut child,
        || crate::common::stored_trials(&db, |n| n.contains(&first)),
        3,
        std::time::Duration::from_secs(240),
        std::time::Duration::from_millis(100),
    );
    let before = crate::common::stored_trials(&db, |_| true);
    let (code, json, err) = bisect(tmp.path(), &repo, &ids[0], &ids[12], &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(steps(&json), vec![vec![ids[7].clone()]], "{json:#}\n{err}");
    assert!(
        err.contains(", stored)"),
        "good against bad is reused: {err}"
    );
    for built_before in [&ids[0], &ids[12], &ids[6]] {
        let line = format!("built {}", &built_before[..10]);
        assert!(!err.contains(&line), "{line} again: {err}");
    }
    // The candidate measured when the kill came continues from its stored rounds.
    let lines: Vec<&str> = err.lines().collect();
    let at = lines.iter().position(|l| l.contains(&first));
    let next = at.and_then(|i| lines.get(i + 1)).copied().unwrap_or("");
    assert!(
        next.starts_with("  round ") && !next.starts_with("  round 1 "),
        "the measurement in progress continues from its stored rounds: {err}"
    );
    assert!(
        crate::common::stored_trials(&db, |_| true) >= before,
        "nothing stored is lost"
    );
}
