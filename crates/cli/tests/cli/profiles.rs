//! Profiles in experiments against real servers: `[profile]` samples the server's stacks
//! with perf during extra, uncounted trials (or the counted ones), folded and stored per
//! trial; the demo's `appendfsync always` variant spends its extra time under fsync; a
//! perf that cannot run gives one notice and the experiment still completes.

use crate::common::{run_db, text};
use resplab_store::{ProfileRow, Store};

fn redis(extra: &str) -> String {
    format!("redis-server --port {{port}} --bind 127.0.0.1 --save '' {extra} --dir {{dir}}")
}

/// The demo's two variants (examples/demo.toml) with SET load and a `[profile]` table.
fn demo(rounds: u32, profile: &str) -> String {
    format!(
        r#"
[experiment]
name = "prof"
rounds = {rounds}
test_time = "2s"
warmup = "100ms"
seed = 3
client_cpu_limit = 1.0

[profile]
{profile}

[[variant]]
name = "appendonly-no"
server = "{}"

[[variant]]
name = "appendfsync-always"
server = "{}"

[[workload]]
name = "set"
tests = "set"
clients = 4
"#,
        redis("--appendonly no"),
        redis("--appendonly yes --appendfsync always"),
    )
}

fn run(file_text: &str) -> (tempfile::TempDir, std::path::PathBuf, String, bool) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("e.toml");
    std::fs::write(&file, file_text).unwrap();
    let db = dir.path().join("r.db");
    let o = run_db(&["experiment", "run", file.to_str().unwrap()], &db, &[]);
    (dir, db, text(&o), o.status.success())
}

fn stored(db: &std::path::Path) -> (usize, Vec<ProfileRow>) {
    let s = Store::open(db).unwrap();
    let id = s.experiment("prof").unwrap().id;
    (s.trials(id).unwrap().len(), s.profiles(id).unwrap())
}

/// Samples whose stack has a frame naming fsync or fdatasync.
fn fsync_samples(rows: &[ProfileRow], variant: &str) -> (u64, u64) {
    let mut hit = 0;
    let mut all = 0;
    for r in rows.iter().filter(|r| r.variant == variant) {
        for line in r.folded.lines() {
            let (stack, n) = line.rsplit_once(' ').unwrap();
            let n: u64 = n.parse().unwrap();
            all += n;
            if stack.split(';').any(|f| f.contains("fsync")) {
                hit += n;
            }
        }
    }
    (hit, all)
}

fn needs_perf() {
    let found = std::process::Command::new("perf").arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "these tests need perf (Debian: apt-get install linux-perf; scripts/setup.sh installs it)"
    );
}

#[test]
fn appendfsync_always_spends_its_extra_time_under_fsync_in_uncounted_trials() {
    let _lane = crate::common::shared();
    needs_perf();
    let (dir, db, out, ok) = run(&demo(2, "frequency = 1999"));
    assert!(ok, "{out}");
    assert!(!out.contains("profiles:"), "{out}");
    let (trials, rows) = stored(&db);
    // Extra trials are never counted: 2 rounds × 2 variants of counted trials only.
    assert_eq!(trials, 4, "{out}");
    assert_eq!(rows.len(), 4, "{rows:#?}");
    for r in &rows {
        assert!(!r.is_counted());
        assert!(r.requests > 0, "{r:?}");
        assert_eq!(r.sampling, "perf record -F 1999 -e cpu-clock -g");
        let sum: u64 = r
            .folded
            .lines()
            .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
            .sum();
        assert_eq!(sum, r.samples);
    }
    let (base_hits, base_all) = fsync_samples(&rows, "appendonly-no");
    let (var_hits, var_all) = fsync_samples(&rows, "appendfsync-always");
    assert!(
        var_hits > 0,
        "no fsync frames in appendfsync-always ({var_all} samples)"
    );
    // Far smaller in the baseline, per sample.
    let base_share = base_hits as f64 / base_all.max(1) as f64;
    let var_share = var_hits as f64 / var_all.max(1) as f64;
    assert!(
        base_share * 10.0 < var_share,
        "fsync share: baseline {base_share:.4}, variant {var_share:.4}"
    );
    // The HTML report: flame graphs inline without script, the changed-functions table,
    // and where the profiles came from.
    let html = dir.path().join("r.html");
    let o = run_db(&["report", "prof", "-o", html.to_str().unwrap()], &db, &[]);
    crate::common::assert_ok(&o);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("id=\"profiles\""), "no profiles section");
    assert!(page.contains("extra trials that were sampled and not counted"));
    assert!(page.contains("Differential flame graph of appendfsync-always"));
    assert!(page.contains("class=\"flame\""));
    assert!(
        !page.contains("<script"),
        "the report's policy forbids scripts"
    );
    assert!(page.contains("fdatasync") || page.contains("fsync"));
    let md = dir.path().join("r.md");
    let o = run_db(&["report", "prof", "-o", md.to_str().unwrap()], &db, &[]);
    crate::common::assert_ok(&o);
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("| function | self base |"), "{md}");
}

#[test]
fn the_counted_trials_can_be_the_sampled_ones() {
    let _lane = crate::common::shared();
    needs_perf();
    let (_dir, db, out, ok) = run(&demo(1, "trials = \"counted\"\nfrequency = 199"));
    assert!(ok, "{out}");
    let (trials, rows) = stored(&db);
    assert_eq!(trials, 2, "{out}");
    assert_eq!(rows.len(), 2, "{rows:#?}");
    assert!(rows.iter().all(ProfileRow::is_counted));
    assert!(rows
        .iter()
        .all(|r| r.sampling.starts_with("perf record -F 199 ")));
}

#[test]
fn a_perf_that_cannot_run_gives_one_notice_and_the_experiment_completes() {
    let _lane = crate::common::shared();
    let (_dir, db, out, ok) = run(&demo(2, "perf = \"/nonexistent/perf\""));
    assert!(ok, "{out}");
    let notices: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("/nonexistent/perf"))
        .collect();
    assert_eq!(notices.len(), 1, "{out}");
    assert!(
        notices[0].contains("not installed") && notices[0].contains("linux-perf"),
        "{out}"
    );
    let (trials, rows) = stored(&db);
    assert_eq!(trials, 4, "{out}");
    assert!(rows.is_empty());
}

#[test]
fn a_known_cost_in_a_named_function_tops_the_changed_functions_table() {
    let _lane = crate::common::shared();
    needs_perf();
    let serve = |extra: &str| format!("{} serve --port {{port}} {extra}", crate::common::BIN);
    let file_text = format!(
        r#"
[experiment]
name = "prof"
rounds = 1
test_time = "1s"
seed = 4
client_cpu_limit = 1.0

[profile]
frequency = 999

[[variant]]
name = "plain"
server = "{}"

[[variant]]
name = "slow-set"
server = "{}"

[[workload]]
name = "w"
tests = "set,get"
clients = 2
"#,
        serve(""),
        serve("--slow-command SET --slow-command-ns 50000"),
    );
    let (dir, db, out, ok) = run(&file_text);
    assert!(ok, "{out}");
    let md = dir.path().join("r.md");
    let o = run_db(&["report", "prof", "-o", md.to_str().unwrap()], &db, &[]);
    crate::common::assert_ok(&o);
    let md = std::fs::read_to_string(&md).unwrap();
    let table = md
        .split("Functions whose share changed most, slow-set against plain")
        .nth(1)
        .unwrap_or_else(|| panic!("no changed-functions table:\n{md}"));
    // The header, the alignment rule, then the top entry.
    let top = table
        .lines()
        .filter(|l| l.starts_with('|'))
        .nth(2)
        .unwrap_or_else(|| panic!("an empty table:\n{table}"));
    assert!(
        top.contains("slow_command_cost"),
        "top entry: {top}\n{table}"
    );
    // Its self share grew: a positive change per 1,000 requests.
    let cells: Vec<&str> = top.split('|').map(str::trim).collect();
    assert!(cells[4].contains('+'), "{top}");
}

#[test]
fn bench_profile_writes_the_started_servers_folded_stacks() {
    let _lane = crate::common::shared();
    needs_perf();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("set.folded");
    let args = [
        "bench",
        "-t",
        "set",
        "-n",
        "30000",
        "-c",
        "4",
        "-q",
        "--profile",
    ];
    let o = crate::common::command()
        .args(args)
        .arg(&file)
        .output()
        .unwrap();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(out.contains("samples of the server's stacks in"), "{out}");
    let folded = std::fs::read_to_string(&file).unwrap();
    let parsed = resplab_report::profile::Folded::parse("set.folded", &folded).unwrap();
    assert!(parsed.samples() > 0, "{folded}");
    assert!(
        folded.lines().all(|l| l.starts_with("redis-server")),
        "{folded}"
    );
    // Where perf cannot run: one line, and the run's results all the same.
    let o = crate::common::command()
        .args(args)
        .arg(&file)
        .env("RESPLAB_PERF", "/nonexistent/perf")
        .output()
        .unwrap();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let said: Vec<&str> = out.lines().filter(|l| l.contains("--profile")).collect();
    assert_eq!(said.len(), 1, "{out}");
    assert!(said[0].contains("not installed"), "{out}");
    assert!(out.contains("SET"), "{out}");
}

#[test]
fn bench_profile_of_a_target_it_did_not_start_needs_its_pid() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.folded");
    let o = crate::common::command()
        .args(["bench", "-p", "1", "-t", "set", "-n", "10", "--profile"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--profile-pid"), "{}", text(&o));
}

#[test]
fn a_kill_9_during_an_extra_trial_loses_that_profile_only_and_resume_completes() {
    let _lane = crate::common::shared();
    needs_perf();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("e.toml");
    std::fs::write(&file, demo(2, "frequency = 999")).unwrap();
    let db = dir.path().join("r.db");
    let mut child = crate::common::spawn_experiment(&file, &db);
    let trials = |db: &std::path::Path| {
        Store::open(db)
            .ok()
            .and_then(|s| Some(s.trials(s.experiment("prof").ok()?.id).ok()?.len()))
            .unwrap_or(0)
    };
    // The first counted trial is stored; its extra trial (2 s) is under way.
    crate::common::kill_9_once_stored(
        &mut child,
        || trials(&db),
        1,
        std::time::Duration::from_secs(60),
        std::time::Duration::from_millis(1000),
    );
    let (_, rows) = stored(&db);
    assert!(
        rows.is_empty(),
        "a profile of an interrupted trial: {rows:#?}"
    );
    let o = run_db(&["experiment", "resume", "prof"], &db, &[]);
    crate::common::assert_ok(&o);
    let (trials, rows) = stored(&db);
    assert_eq!(trials, 4);
    // The interrupted extra trial is not redone; every stored profile is whole.
    assert_eq!(rows.len(), 3, "{rows:#?}");
    for r in &rows {
        let folded = resplab_report::profile::Folded::parse("stored", &r.folded).unwrap();
        assert_eq!(folded.samples(), r.samples);
    }
}
