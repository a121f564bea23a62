//! Duet runs (`order = "duet"`) against `resplab serve`: both variants measured at
//! once, each server with its generator on its own CPU set, the sets swapped every
//! round; the stored facts show the swap, the shared start and the paired intervals; an
//! A/A duet finds nothing, a known 10 % slowdown is found slower; what a duet cannot run
//! is refused in one line with exit code 2.
//!
//! The primary metric is the server's CPU time per request, as in the tests of runs
//! until decided: on a busy shared machine throughput swings with whatever else runs.

use crate::common::{kill_9_once_stored, run_in, spawn_experiment, BIN};
use resplab_store::Store;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A duet of two `resplab serve` variants, the second with `--slowdown PCT`, run until
/// decided within `max_rounds`; `extra` goes into `[experiment]`.
fn file(dir: &Path, name: &str, slowdown: u32, max_rounds: u32, extra: &str) -> PathBuf {
    crate::common::serve_pair_file(
        dir,
        name,
        slowdown,
        &format!("max_rounds = {max_rounds}\norder = \"duet\"\n{extra}"),
        "clients = 8\npipeline = 8",
    )
}

/// One stored trial's duet facts: round, variant, CPU set, partner, shared start, the
/// wall-clock ends of its intervals, whether every interval kept its histogram, and the
/// detail of its `duet_start` check.
#[derive(Debug)]
struct Stored {
    round: u32,
    variant: String,
    cpus: String,
    partner: String,
    start_at: String,
    run: resplab_results::RunRecord,
    histograms: bool,
    start_check: Option<(bool, String)>,
}

fn stored(db: &Path, name: &str) -> Vec<Stored> {
    let s = Store::open(db).unwrap();
    let id = s.find_experiment(name).unwrap().unwrap().id;
    let mut out = Vec::new();
    for t in s.trials(id).unwrap() {
        let info = s.server_info(t.id).unwrap();
        let facts = info.get("resplab").cloned().unwrap_or_default();
        let fact = |k: &str| facts.get(k).cloned().unwrap_or_default();
        let run = s.run_record(t.id).unwrap();
        out.push(Stored {
            round: t.round,
            variant: t.variant.clone(),
            cpus: fact("duet_cpus"),
            partner: fact("duet_partner"),
            start_at: fact("duet_start_at_unix_ms"),
            histograms: !run.series.is_empty()
                && run
                    .series
                    .iter()
                    .all(|x| x.histogram.is_some() && x.unix_ms.is_some()),
            run,
            start_check: t
                .checks
                .iter()
                .find(|c| c.name == "duet_start")
                .map(|c| (c.passed, c.detail.clone())),
        });
    }
    out
}

#[test]
fn an_aa_duet_swaps_cpu_sets_pairs_intervals_and_finds_nothing() {
    let _alone = crate::common::alone();
    let dir = tempfile::tempdir().unwrap();
    // Ten rounds at most: what is checked is how the rounds are run and stored, and that
    // an A/A run claims no difference, which a run until decided keeps at any length.
    let f = file(dir.path(), "aa", 0, 10, "");
    let (code, out, err) = run_in(
        &["experiment", "run", f.to_str().unwrap(), "--db", "r.db"],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("SLOWER") && !out.contains("FASTER"), "{out}");
    assert!(
        out.contains("EQUIVALENT within ±20.0 %") || out.contains("undecided"),
        "{out}"
    );
    // The first look comes after round 3, and on a quiet machine an A/A duet is
    // EQUIVALENT within ±20 % there or soon after: three rounds show the swap.
    let trials = stored(&dir.path().join("r.db"), "aa");
    assert!(trials.len() >= 6, "{trials:?}");
    let base_cpus = |round: u32| {
        trials
            .iter()
            .find(|t| t.round == round && t.variant == "base")
            .map(|t| t.cpus.clone())
            .unwrap()
    };
    // The baseline's CPU set alternates round by round.
    assert_ne!(base_cpus(0), base_cpus(1), "{trials:?}");
    assert_eq!(base_cpus(0), base_cpus(2), "{trials:?}");
    let (mut paired, mut started_together) = (0, 0);
    for pair in trials.chunks(2) {
        let [a, b] = pair else { panic!("{pair:?}") };
        assert_eq!(a.round, b.round, "a round's two trials are stored together");
        assert_ne!(a.variant, b.variant);
        assert_eq!(
            (a.partner.as_str(), b.partner.as_str()),
            (b.variant.as_str(), a.variant.as_str())
        );
        assert!(!a.cpus.is_empty() && a.cpus != b.cpus, "{pair:?}");
        assert!(
            !a.start_at.is_empty() && a.start_at == b.start_at,
            "{pair:?}"
        );
        // The intervals pair by their wall-clock ends. An arm starved of its CPU for a
        // moment closes one long interval where its partner closes several, so not
        // every interval finds a partner; most do.
        assert!(a.histograms && b.histograms, "{pair:?}");
        paired += resplab_results::duet::pair_intervals(&a.run, &b.run).len();
        let (passed, detail) = a.start_check.clone().expect("a duet_start check");
        assert!(detail.contains("ms apart"), "{detail}");
        started_together += usize::from(passed);
    }
    // 0.6 s trials keep 0.1 s intervals: six a side.
    let rounds = trials.len() / 2;
    assert!(paired >= 3 * rounds, "{paired} pairs in {rounds} rounds");
    assert!(
        started_together * 2 > rounds,
        "{started_together} of {rounds} rounds"
    );
}

#[test]
fn a_ten_percent_slowdown_is_found_slower() {
    let _alone = crate::common::alone();
    let dir = tempfile::tempdir().unwrap();
    let f = file(dir.path(), "slow", 10, 120, "");
    let (code, out, err) = run_in(
        &["experiment", "run", f.to_str().unwrap(), "--db", "r.db"],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("set / other vs baseline: SLOWER: +"), "{out}");
}

#[test]
fn a_killed_duet_resumes_whole_rounds_and_compare_and_report_read_it() {
    let _alone = crate::common::alone();
    let dir = tempfile::tempdir().unwrap();
    let f = file(dir.path(), "resumed", 0, 20, "");
    // A fixed count of rounds instead of a run until decided.
    let text = std::fs::read_to_string(&f)
        .unwrap()
        .replace("until = \"decided\"\nmax_rounds = 20", "rounds = 6");
    std::fs::write(&f, text).unwrap();
    let db = dir.path().join("r.db");
    let mut child = spawn_experiment(&f, &db);
    let count = |db: &Path| crate::common::stored_trials(db, |n| n == "resumed");
    kill_9_once_stored(
        &mut child,
        || count(&db),
        2,
        Duration::from_secs(120),
        Duration::from_millis(400),
    );
    // A round is stored whole or not at all.
    assert_eq!(count(&db) % 2, 0);
    let (code, _, err) = crate::common::resume("resumed", &db, dir.path());
    assert_eq!(code, 0, "{err}");
    let trials = stored(&db, "resumed");
    for round in 0..6 {
        let pair: Vec<&Stored> = trials.iter().filter(|t| t.round == round).collect();
        assert!(
            pair.len() >= 2 && pair.len().is_multiple_of(2),
            "round {round}: {pair:?}"
        );
        assert_eq!(pair[0].start_at, pair[1].start_at);
    }
    let (code, out, err) = run_in(
        &["compare", "db:resumed", "--db", db.to_str().unwrap()],
        dir.path(),
    );
    assert!(code == 0 || code == 1, "{err}");
    assert!(out.contains("other"), "{out}");
    let (code, _, err) = run_in(
        &[
            "report",
            "resumed",
            "--db",
            db.to_str().unwrap(),
            "-o",
            "r.md",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let md = std::fs::read_to_string(dir.path().join("r.md")).unwrap();
    assert!(md.contains("Duet: paired intervals"), "{md}");
}

/// Runs a duet file rewritten by `edit`, dry or not, under `taskset -c CPUS` when
/// given: exit code and standard error.
fn refused(edit: impl Fn(String) -> String, dry: bool, cpus: Option<&str>) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let f = file(dir.path(), "bad", 0, 20, "");
    let text = edit(std::fs::read_to_string(&f).unwrap());
    std::fs::write(&f, text).unwrap();
    let mut args = vec!["experiment", "run", f.to_str().unwrap(), "--db", "r.db"];
    if dry {
        args.push("--dry-run");
    }
    let out = match cpus {
        Some(c) => Command::new("taskset")
            .args(["-c", c, BIN])
            .args(&args)
            .current_dir(dir.path())
            .output()
            .expect("taskset (util-linux) runs"),
        None => Command::new(BIN)
            .args(&args)
            .current_dir(dir.path())
            .output()
            .unwrap(),
    };
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    if let Ok(s) = Store::open(&dir.path().join("r.db")) {
        assert!(
            s.find_experiment("bad").unwrap().is_none(),
            "nothing is stored"
        );
    }
    (out.status.code().unwrap_or(-1), err)
}

#[test]
fn what_a_duet_cannot_run_is_a_one_line_error() {
    let _lane = crate::common::shared();
    let third = |t: String| {
        t + &format!("\n[[variant]]\nname = \"third\"\nserver = \"{BIN} serve --port {{port}}\"\n")
    };
    let (code, err) = refused(third, true, None);
    assert_eq!(code, 2);
    assert!(err.contains("runs exactly two variants at once"), "{err}");

    let command = |t: String| {
        let at = t.find("tests = \"set\"").unwrap();
        format!("{}run = \"true\"\nformat = \"numbers\"\n", &t[..at])
    };
    let (code, err) = refused(command, true, None);
    assert_eq!(code, 2);
    assert!(
        err.contains("cannot pin a command workload's own client"),
        "{err}"
    );

    let address = |t: String| {
        let at = t.find("name = \"other\"").unwrap();
        let (head, tail) = t.split_at(at);
        let end = tail.find("\n\n").unwrap();
        format!(
            "{head}name = \"other\"\naddress = \"127.0.0.1:1\"{}",
            &tail[end..]
        )
    };
    let (code, err) = refused(address, true, None);
    assert_eq!(code, 2);
    assert!(err.contains("cannot be pinned"), "{err}");

    let requests = |t: String| t.replace("test_time = \"0.6s\"", "requests = 1000");
    let (code, err) = refused(requests, true, None);
    assert_eq!(code, 2);
    assert!(err.contains("lasts a time (test_time)"), "{err}");

    // Machine facts are checked when the run starts, before anything is measured.
    let (code, err) = refused(|t| t, false, Some("0"));
    assert_eq!(code, 2);
    assert!(
        err.contains("needs at least two CPUs for two disjoint sets"),
        "{err}"
    );

    let overlapping = |t: String| {
        t.replace("--work-ns 2000\"", "--work-ns 2000\"\nserver_cpus = \"0\"")
            .replace("--slowdown 0\"", "--slowdown 0\"\nserver_cpus = \"0\"")
    };
    let (code, err) = refused(overlapping, false, None);
    assert_eq!(code, 2);
    assert!(err.contains("share CPU 0"), "{err}");
}
