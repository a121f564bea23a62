//! A real two-variant experiment against redis-server, killed with SIGKILL in the
//! middle and resumed: the killed run's server dies with it, and every planned trial
//! ends up stored exactly once.

use resplab_store::Store;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

const EXP: &str = r#"
[experiment]
name = "kill-resume"
rounds = 4
test_time = "400ms"
seed = 11

[[variant]]
name = "a"
server = "redis-server --port {port} --bind 127.0.0.1 --save '' --appendonly no --dir OWN_DIR --hz 10"

[[variant]]
name = "b"
server = "redis-server --port {port} --bind 127.0.0.1 --save '' --appendonly no --dir OWN_DIR --hz 50"

[[workload]]
name = "set"
tests = "set"
clients = 4
"#;

/// The pids of processes that a killed resplab (pid `parent`) left behind: servers
/// whose working directory carries that pid, or is `own_dir` (the variants set their
/// own `--dir`, and redis-server moves there, away from the runner's directory).
fn orphans_of(parent: u32, own_dir: &Path) -> Vec<String> {
    let marker = std::env::temp_dir()
        .join(format!("resplab-exp-{parent}-"))
        .display()
        .to_string();
    let own = own_dir.display().to_string();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.parse::<u32>().ok()?;
            let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
            let cwd = cwd.display().to_string();
            let ours = cwd.starts_with(&marker) || cwd == own;
            ours.then_some(name)
        })
        .collect()
}

fn stored(db: &Path) -> usize {
    crate::common::stored_trials(db, |n| n == "kill-resume")
}

#[test]
fn kill_9_mid_run_then_resume_stores_every_trial_once() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("exp.toml");
    let own_dir = dir.path().join("server-b-data");
    std::fs::create_dir(&own_dir).unwrap();
    std::fs::write(
        &file,
        EXP.replace("OWN_DIR", &own_dir.display().to_string()),
    )
    .unwrap();
    let db = dir.path().join("r.db");

    let mut child = crate::common::spawn_experiment(&file, &db);
    let pid = child.id();
    // Mid-trial: the fourth trial is running when the kill comes.
    crate::common::kill_9_once_stored(
        &mut child,
        || stored(&db),
        3,
        Duration::from_secs(60),
        Duration::from_millis(200),
    );
    // The server of the trial in progress dies with the runner (its parent-death
    // signal): none is left for the resume to find.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut left = orphans_of(pid, &own_dir);
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        left = orphans_of(pid, &own_dir);
    }
    for p in &left {
        let _ = Command::new("kill").args(["-9", p]).status();
    }
    assert!(
        left.is_empty(),
        "servers outlived the killed runner: {left:?}"
    );
    let before = stored(&db);
    assert!(
        (3..8).contains(&before),
        "{before} trials stored at the kill"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_resplab"))
        .args(["experiment", "resume", "kill-resume", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "resume failed: {stderr}");
    assert!(
        stderr.contains(&format!("{before} already stored")),
        "{stderr}"
    );
    assert!(!stderr.contains("stopped server pid"), "{stderr}");
    let still = orphans_of(pid, &own_dir);
    for p in &still {
        let _ = Command::new("kill").args(["-9", p]).status();
    }
    assert!(
        still.is_empty(),
        "servers of the killed run still running: {still:?}"
    );

    let store = Store::open(&db).unwrap();
    let info = store.experiment("kill-resume").unwrap();
    assert_eq!(info.state, "finished");
    let trials = store.trials(info.id).unwrap();
    assert_eq!(trials.len(), 8, "{trials:#?}");
    let mut cells: Vec<(u32, String)> = trials
        .iter()
        .map(|t| (t.round, t.variant.clone()))
        .collect();
    cells.sort();
    cells.dedup();
    assert_eq!(
        cells.len(),
        8,
        "a (round, variant) is missing or duplicated"
    );
    assert!(trials.iter().all(|t| t.valid && t.attempt == 0));
    // positions within each round are the plan's 0 and 1
    for r in 0..4 {
        let mut p: Vec<u32> = trials
            .iter()
            .filter(|t| t.round == r)
            .map(|t| t.position)
            .collect();
        p.sort();
        assert_eq!(p, [0, 1]);
    }
    // every stored trial has its run record, server INFO-derived CPU time and histograms
    let t = &trials[0];
    assert!(store.run_record(t.id).unwrap().totals.requests > 0);
    assert!(t.server_cpu_sec.is_some());
    assert!(store.histogram(t.id, "all", "latency").unwrap().is_some());
    let csv = Command::new(env!("CARGO_BIN_EXE_resplab"))
        .args([
            "experiment",
            "export",
            "kill-resume",
            "--format",
            "csv",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert!(csv.status.success());
    let text = String::from_utf8_lossy(&csv.stdout);
    assert_eq!(
        text.lines()
            .filter(|l| l.contains(",all,ops_per_sec,"))
            .count(),
        8
    );
}
