//! `resplab calibrate` end to end against real redis-server instances (started fresh for
//! every trial by the experiment runner), and what `experiment run` makes of the result.

use crate::common::{alone, command_within, shared};
use serde_json::Value;
use std::time::Duration;

/// Longest a single `resplab` call may take.
const LIMIT: Duration = Duration::from_secs(180);

// The tests that assert a timing effect take the machine alone: the one comparing a
// prediction with later measurements (a neighbour test loading the cores for part of it
// would change the noise between the two), the two that must see a cold server's order
// effect (a neighbour's load on two cores widened their intervals past it) and the one
// that holds a budget to the second. The others share.

/// Runs `resplab ARGS --db DB`, which must succeed, and returns what it printed as JSON.
fn json_of(args: &[&str], db: &std::path::Path) -> Value {
    let out = command_within(LIMIT)
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap();
    crate::common::assert_ok(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `resplab calibrate` of SET with 4 clients, one generator thread and no warm-up, for
/// `budget` over trials of `durations`, into `db`; what it printed as JSON. One thread,
/// as the experiment files these tests run afterwards (their `threads` default), so that
/// the calibration is found for their workload whatever calibrate's default.
fn calibrate_set(budget: &str, durations: &str, db: &std::path::Path) -> Value {
    json_of(
        &[
            "calibrate",
            "--budget",
            budget,
            "--durations",
            durations,
            "--warmup",
            "0s",
            "-c",
            "4",
            "--threads",
            "1",
            "--format",
            "json",
        ],
        db,
    )
}

/// `resplab experiment run FILE --db DB`, which must succeed.
fn run_experiment(file: &std::path::Path, db: &std::path::Path) {
    command_within(LIMIT)
        .args(["experiment", "run"])
        .arg(file)
        .arg("--db")
        .arg(db)
        .assert()
        .success();
}

/// `resplab report WHICH -o OUT --db DB`, which must succeed; the report's text.
fn report_to(which: &str, out: &std::path::Path, db: &std::path::Path) -> String {
    command_within(LIMIT)
        .args(["report", which, "-o"])
        .arg(out)
        .arg("--db")
        .arg(db)
        .assert()
        .success();
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn a_short_calibration_gives_noise_a_monotone_budget_table_and_an_aa_verdict() {
    // Alone, with room to spare: both lengths must fit six rounds in the budget, and a
    // loaded machine stretches each round's set-up.
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let cal = calibrate_set("24s", "0.2s,0.4s", &db);
    let noise = cal["noise"].as_array().unwrap();
    assert_eq!(noise.len(), 2, "{cal:#}");
    for n in noise {
        assert!(n["pairs"].as_u64().unwrap() >= 6, "{n:#}");
        assert!(n["sd_log_ratio"].as_f64().unwrap() > 0.0);
        assert!(n["median"].as_f64().unwrap() > 0.0);
        assert!(!n["aa_verdict"].as_str().unwrap().is_empty());
    }
    let b = cal["noise_b"].as_f64().unwrap();
    assert!((0.0..=0.5).contains(&b), "{b}");
    // The table: more rounds or longer trials never predict a larger MDE, and cost more.
    let table = cal["table"].as_array().unwrap();
    assert!(table.len() >= 16);
    let row = |p: &Value| {
        (
            p["rounds"].as_u64().unwrap(),
            p["trial_sec"].as_f64().unwrap(),
            p["mde_pct"].as_f64().unwrap(),
            p["wall_sec"].as_f64().unwrap(),
        )
    };
    for p in table {
        for q in table {
            let (r1, t1, m1, w1) = row(p);
            let (r2, t2, m2, w2) = row(q);
            if r1 <= r2 && t1 <= t2 {
                assert!(m1 >= m2 - 1e-9, "{p} vs {q}");
                assert!(w1 <= w2 + 1e-9, "{p} vs {q}");
            }
        }
    }
    if let Some(c) = cal["cheapest"].as_object() {
        assert!(c["mde_pct"].as_f64().unwrap() <= cal["target_mde_pct"].as_f64().unwrap());
    }
    // Stored, with the A/A experiments it ran.
    let store = resplab_store::Store::open(&db).unwrap();
    assert_eq!(store.calibrations().unwrap().len(), 1);
    for n in noise {
        store
            .experiment(n["experiment"].as_str().unwrap())
            .expect("the A/A experiment is stored");
    }

    // An experiment with the same workload shape is told what its plan can detect, and
    // warned that it cannot reach a margin far below that.
    let file = dir.path().join("exp.toml");
    std::fs::write(
        &file,
        r#"
[experiment]
name = "uses-calibration"
rounds = 6
test_time = "0.2s"
warmup = "0s"
margin = 0.0001

[[variant]]
name = "a"

[[variant]]
name = "b"
server = "redis-server --port {port} --bind 127.0.0.1 --save '' --appendonly no --dir {dir} --hz 20"

[[workload]]
name = "set"
tests = "set"
clients = 4
pipeline = 1
"#,
    )
    .unwrap();
    let out = command_within(LIMIT)
        .args(["experiment", "run"])
        .arg(&file)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("workload set: 6 rounds x 0.2 s trials: MDE about"),
        "{err}"
    );
    assert!(err.contains("on this machine (calibration 1,"), "{err}");
    assert!(
        err.contains("this plan cannot show equivalence within the margin of ±0.01%"),
        "{err}"
    );

    // The calibration as its own report: HTML with the budget plot inline, Markdown with
    // it beside; an unknown id names what is stored.
    let html = dir.path().join("cal.html");
    let page = report_to("calibration:latest", &html, &db);
    assert!(
        page.contains("<svg") && page.contains("predicted MDE"),
        "{page}"
    );
    let plans = cal["table"].as_array().unwrap();
    assert_eq!(page.matches("<tr><td>").count(), plans.len());
    assert!(page.contains("A/A check"), "{page}");
    assert!(
        page.contains("No resplab calibrate --validate run of this host is stored"),
        "{page}"
    );
    let md = dir.path().join("cal.md");
    let text = report_to("calibration:1", &md, &db);
    assert!(text.contains("](cal-plots/budget.svg)"), "{text}");
    assert!(dir.path().join("cal-plots/budget.svg").is_file());
    let out = command_within(LIMIT)
        .args(["report", "calibration:99", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no such calibration") && err.contains("stored: 1"),
        "{err}"
    );
}

#[test]
fn bad_flags_name_themselves() {
    let _shared = shared();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--budget", "0s"],
            "--budget: expected a duration above zero",
        ),
        (&["--budget", "soon"], "--budget:"),
        (
            &["--durations", ",,"],
            "--durations: expected at least one trial length",
        ),
        (
            &["--target-mde=-1"],
            "--target-mde: expected a percentage above 0",
        ),
        (
            &["--target-mde", "0"],
            "--target-mde: expected a percentage above 0",
        ),
        (&["--budget", "2s"], "--budget 2 s: too short for 6 rounds"),
        (&["--address", "nohost"], "--address: expected HOST:PORT"),
        (
            &["--durations", "1s,0.5s,1s"],
            "--durations: expected each trial length once, found 1 s twice",
        ),
        (&["--tls"], "--address"),
        (&["--user", "bob"], "--address"),
        (
            &["--address", "127.0.0.1:1", "--password-env", "RESPLAB_NO_SUCH_VAR_1"],
            "--password-env RESPLAB_NO_SUCH_VAR_1: the environment variable RESPLAB_NO_SUCH_VAR_1 is not set",
        ),
        (&["--server", ""], "--server: expected a command"),
        (
            &["--experiment", "x.toml", "--workload", "w", "-c", "4"],
            "-c/--clients cannot be used together with --experiment",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cmd.toml"),
        "[experiment]\nname = \"c\"\n\n[[variant]]\nname = \"a\"\nserver = \"none\"\n\n\
         [[variant]]\nname = \"b\"\nserver = \"none\"\n\n[[workload]]\nname = \"w\"\n\
         run = \"true\"\n",
    )
    .unwrap();
    let command_workload: (&[&str], &str) = (
        &["--experiment", "cmd.toml", "--workload", "w"],
        "--workload w: a command workload (`run = …`) decides its own length",
    );
    for (args, want) in cases.iter().chain([&command_workload]) {
        command_within(LIMIT)
            .current_dir(dir.path())
            .arg("calibrate")
            .args(*args)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(*want));
    }
    assert!(
        !dir.path().join("resplab.db").exists(),
        "nothing is created"
    );
}

/// A biased A/A experiment file in `dir`: two copies of one variant (`server = "none"`)
/// sharing one `resplab serve` per round that runs 100 % slower for its first `cold_ms`,
/// in a fixed order, so the first copy always meets the cold server. `experiment` and
/// `workload` are the lines of those tables that differ between the tests.
fn biased_file(
    dir: &std::path::Path,
    experiment: &str,
    cold_ms: u32,
    workload: &str,
) -> std::path::PathBuf {
    let bin = assert_cmd::cargo::cargo_bin("resplab");
    let file = dir.join("biased.toml");
    std::fs::write(
        &file,
        format!(
            "[experiment]\n{experiment}\norder = \"fixed\"\n\n[server]\n\
             command = \"{} serve --port {{port}} --cold-ms {cold_ms} --cold-slowdown 100\"\n\
             per = \"round\"\n\n[[variant]]\nname = \"a\"\nserver = \"none\"\n\n\
             [[variant]]\nname = \"a-again\"\nserver = \"none\"\n\n\
             [[workload]]\nname = \"set\"\n{workload}\n",
            bin.display()
        ),
    )
    .unwrap();
    file
}

/// A deliberately biased A/A set-up: one `resplab serve` per round whose first 0.7 s run
/// 100 % slower (`--cold-ms`), and `order = "fixed"`, so copy `a` always meets the cold
/// server and `a-again` the warm one. The A/A comparison must claim a difference (the
/// truth is about +100 % for `a-again`); with the order randomized or the server warm it
/// would not, so this fails when either the knob or the fixed order stops working.
#[test]
fn a_fixed_order_with_a_cold_server_is_caught_by_the_aa_comparison() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("resplab");
    let file = biased_file(
        dir.path(),
        "name = \"biased-aa\"\nrounds = 6",
        700,
        &format!(
            "run = \"{} bench -p {{port}} -t set -c 20 --test-time 0.5 -q --json -\"\nformat = \"resplab\"",
            bin.display()
        ),
    );
    let db = dir.path().join("r.db");
    run_experiment(&file, &db);
    let out = command_within(LIMIT)
        .args(["compare", "db:biased-aa", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "ops_per_sec")
        .unwrap_or_else(|| panic!("no ops_per_sec row: {v}"));
    let (lo, effect) = (
        row["ci_low_pct"].as_f64().unwrap(),
        row["effect_pct"].as_f64().unwrap(),
    );
    assert!(
        lo > 0.0 && effect > 30.0,
        "the A/A comparison should find a-again faster (the order effect): {row}"
    );
}

/// `resplab calibrate` checks a set-up as the user runs it: given an experiment file whose
/// order is fixed and whose one server per round starts cold, its A/A verdict says the
/// set-up is biased and names both causes. With the order randomized the cold start
/// would fall on either copy and the A/A comparison would not claim a difference.
#[test]
fn calibrate_finds_a_fixed_order_with_a_cold_server_biased() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let file = biased_file(
        dir.path(),
        "name = \"biased\"\nwarmup = \"0s\"",
        500,
        "tests = \"set\"\nclients = 20",
    );
    let db = dir.path().join("r.db");
    let file = file.display().to_string();
    let cal = json_of(
        &[
            "calibrate",
            "--experiment",
            &file,
            "--workload",
            "set",
            "--budget",
            "15s",
            "--durations",
            "0.3s",
            "--format",
            "json",
        ],
        &db,
    );
    let n = &cal["noise"][0];
    // DIFFERENT means the interval excludes 0; the cold start's effect is tens of
    // percent, so the estimate is large as well (the interval's width varies with load).
    assert_eq!(n["aa_verdict"], "DIFFERENT", "{cal:#}");
    assert!(n["aa_ci_low_pct"].as_f64().unwrap() > 0.0, "{n:#}");
    assert!(n["aa_effect_pct"].as_f64().unwrap() > 20.0, "{n:#}");
    let why = cal["biased"].as_str().expect("the set-up is called biased");
    assert!(
        why.contains("order = \"fixed\"") && why.contains("per = \"round\""),
        "{why}"
    );
    assert!(cal["target"].as_str().unwrap().contains("one per round"));
}

/// `--validate` results are stored as a calibration of their own (never taken for a
/// workload's noise), have a report of their own, and show as the error-rate checks in
/// the report of any calibration of the same host. K = 2 is far too few for the rates to
/// mean anything; the test is about what is kept and shown, so either exit code is fine.
#[test]
fn validate_results_are_stored_and_reported() {
    let _shared = shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let v = crate::common::validation(
        &[
            "--validate-k",
            "2",
            "--validate-rounds",
            "6",
            "--durations",
            "0.1s",
            "--budget",
            "70s",
        ],
        &db,
    );
    let id = v["id"].as_i64().expect("the validation's id");
    assert_eq!(v["false_positives"]["k"], 2, "{v:#}");
    assert_eq!(v["power"]["k"], 2, "{v:#}");
    assert_eq!(v["coordinated_omission"].as_array().unwrap().len(), 2);
    // The slowed experiments' noise, pooled as the A/A experiments' is.
    let slowed = v["slowed_sd_log_ratio"].as_f64().expect("the slowed noise");
    assert!(slowed.is_finite() && slowed >= 0.0, "{v:#}");
    // And the power that noise predicts at the injected effect.
    let expected = v["expected_power"].as_f64().expect("the expected power");
    assert!((0.0..=1.0).contains(&expected), "{v:#}");

    // Its own report: the checks as a table.
    let md = dir.path().join("val.md");
    let text = report_to(&format!("calibration:{id}"), &md, &db);
    assert!(text.starts_with(&format!("# Validation {id}")), "{text}");
    for needle in [
        "## Error-rate checks",
        "| false positives | ",
        "| power | ",
        "| coverage | ",
        "| coordinated omission p99 | ",
        "noise of the slowed experiments: sd(ratio) ",
        "power the slowed experiments' own noise predicts at the ",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }

    // A calibration of the same host shows them; the validation is not its noise.
    calibrate_set("8s", "0.2s", &db);
    let html = dir.path().join("cal.html");
    let page = report_to("calibration:latest", &html, &db);
    assert!(page.contains("<h2>Error-rate checks</h2>"), "{page}");
    assert!(
        page.contains(&format!("(calibration {id})")),
        "the checks name the validation they come from: {page}"
    );
    assert!(page.contains("<td>false positives</td>"), "{page}");
    assert!(page.contains("<h2>Budget</h2>"), "{page}");
}

/// The budget table predicts what a follow-up experiment of that plan measures: the MDE
/// predicted for 20 rounds of 0.2 s trials is within a factor 1.5 of the MDE that two
/// follow-up A/A experiments of exactly that plan give (their per-round log ratios
/// pooled, so that one experiment's luck in its few rounds does not decide the test).
///
/// On a shared machine a burst of interference during the calibration or during the
/// follow-ups moves one side by more than that (seen once in seven runs here: 1.78), so
/// a miss is measured again, up to three times: a prediction that is wrong by more than
/// ×1.5 misses every time, an unlucky minute does not.
#[test]
fn the_budget_prediction_matches_the_mde_of_follow_up_experiments() {
    let _alone = alone();
    let mut seen = Vec::new();
    for attempt in 0..3 {
        let (predicted, measured) = predicted_and_followed_up(attempt);
        let ratio = predicted / measured;
        eprintln!("predicted {predicted:.2} %, measured {measured:.2} %, ratio {ratio:.2}");
        seen.push(format!(
            "predicted {predicted:.2} %, follow-ups {measured:.2} %"
        ));
        if (1.0 / 1.5..=1.5).contains(&ratio) {
            return;
        }
    }
    panic!(
        "the MDE predicted for 20 x 0.2 s missed the follow-ups' by more than x1.5 three times: {}",
        seen.join("; ")
    );
}

/// One calibration and two follow-up A/A experiments of 20 rounds x 0.2 s: the MDE the
/// budget table predicts for that plan and the one the follow-ups' pooled rounds give.
fn predicted_and_followed_up(attempt: u64) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let cal = calibrate_set("30s", "0.2s", &db);
    let (rounds, trial) = (20u32, 0.2);
    let predicted = cal["table"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["rounds"] == rounds && (r["trial_sec"].as_f64().unwrap() - trial).abs() < 1e-9)
        .and_then(|r| r["mde_pct"].as_f64())
        .unwrap_or_else(|| panic!("no plan of {rounds} x {trial} s: {cal:#}"));

    let mut variances = Vec::new();
    for i in 0..2 {
        let name = format!("follow-up-{i}");
        let file = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &file,
            format!(
                r#"
[experiment]
name = "{name}"
rounds = {rounds}
test_time = "{trial}s"
warmup = "0s"
seed = {seed}

[[variant]]
name = "a"

[[variant]]
name = "b"

[[workload]]
name = "set"
tests = "set"
clients = 4
"#,
                seed = 7 + i + 10 * attempt
            ),
        )
        .unwrap();
        run_experiment(&file, &db);
        let store = resplab_store::Store::open(&db).unwrap();
        let obs = store.observations(&name).unwrap();
        let value = |v: &str, r: u32| {
            obs.iter()
                .find(|o| {
                    o.variant == v
                        && o.round == r
                        && o.command == resplab_store::read::ALL_COMMANDS
                        && o.metric == "ops_per_sec"
                })
                .map(|o| o.value)
        };
        let d: Vec<f64> = (0..rounds)
            .filter_map(|r| Some((value("b", r)? / value("a", r)?).ln()))
            .collect();
        assert!(d.len() >= 18, "{name}: {} paired rounds", d.len());
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        variances.push(d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (d.len() - 1) as f64);
    }
    let sd = (variances.iter().sum::<f64>() / variances.len() as f64).sqrt();
    let measured = resplab_stats::budget::mde_pct(
        rounds as usize,
        sd,
        &resplab_stats::power::PowerSpec::default(),
    )
    .unwrap();
    (predicted, measured)
}

/// `--address` reaches a running server behind TLS with an ACL user whose password comes
/// from an environment variable: the calibration runs, and the password is stored nowhere.
#[test]
fn calibrate_address_authenticates_over_tls() {
    let _shared = shared();
    let s = resplab_testkit::tls::TlsRedis::start(false).unwrap();
    let password = "cal-secret-5521";
    crate::common::add_acl_user(&s.server, "cal", password);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let ca = s.files.ca.display().to_string();
    let out = command_within(LIMIT)
        .env("RESPLAB_CAL_PW", password)
        .args([
            "calibrate",
            "--address",
            &format!("localhost:{}", s.tls_port),
            "--cacert",
            &ca,
            "--user",
            "cal",
            "--password-env",
            "RESPLAB_CAL_PW",
            "--budget",
            "10s",
            "--durations",
            "0.2s",
            "--warmup",
            "0s",
            "-c",
            "2",
            "--format",
            "json",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    let cal: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(cal["noise"][0]["pairs"].as_u64().unwrap() >= 6, "{cal:#}");
    assert!(!text.contains(password));
    let stored = std::fs::read(&db).unwrap();
    assert!(
        !stored
            .windows(password.len())
            .any(|w| w == password.as_bytes()),
        "the password is in the store"
    );
}

/// `--budget` is a hard limit, and the defaults give valid trials on a small machine:
/// a one-minute calibration with every other flag left at its default ends within the
/// minute (a trial begins only if it fits at the pace so far, and the analysis's time is
/// kept back), calibrated, with nearly every trial valid (the generator under its CPU
/// limit).
#[test]
fn a_one_minute_calibration_with_the_defaults_ends_in_time_with_valid_trials() {
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let started = std::time::Instant::now();
    let cal = json_of(&["calibrate", "--budget", "1m", "--format", "json"], &db);
    let took = started.elapsed().as_secs_f64();
    // Within a second of the budget: the process's own start and exit.
    assert!(took < 61.0, "a 1m budget took {took:.1} s");
    let noise = cal["noise"].as_array().unwrap();
    assert!(!noise.is_empty(), "{cal:#}");
    let store = resplab_store::Store::open(&db).unwrap();
    let (mut valid, mut all) = (0, 0);
    for e in store.list_experiments().unwrap() {
        for t in store.trials(e.id).unwrap() {
            all += 1;
            valid += usize::from(t.valid);
            let cpu = t.checks.iter().find(|c| c.name == "client_cpu");
            assert!(cpu.is_none_or(|c| c.passed), "{cpu:?}");
        }
    }
    // A trial stopped by the budget is the only one allowed to be invalid.
    assert!(
        all >= 24 && valid + 1 >= all,
        "{valid} of {all} trials valid"
    );
}

/// A budget that the trials' real cost overruns: the A/A experiment under way is stopped
/// when the budget runs out and calibrated from the rounds it completed, and the result
/// says so.
#[test]
fn a_budget_overrun_stops_the_experiment_under_way_and_says_so() {
    let _shared = shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let started = std::time::Instant::now();
    // The rounds are planned at a guessed 0.35 s of overhead per trial; a server that
    // takes a second to start costs more, so they cannot all fit in 30 s (of which the
    // analysis keeps a few seconds back).
    let cal = json_of(
        &[
            "calibrate",
            "--budget",
            "30s",
            "--durations",
            "1s",
            "-c",
            "4",
            "--format",
            "json",
            "--server",
            "sh -c 'sleep 1 && exec redis-server --port {port} --bind 127.0.0.1 --save \"\" --appendonly no --dir {dir}'",
        ],
        &db,
    );
    let took = started.elapsed().as_secs_f64();
    assert!(took < 31.0, "a 30 s budget took {took:.1} s");
    let note = cal["budget_note"].as_str().expect("a budget note");
    assert!(
        note.contains("budget was reached during the 1 s trials"),
        "{note}"
    );
    let noise = &cal["noise"][0];
    let pairs = noise["pairs"].as_u64().unwrap();
    assert!(
        (2..noise["rounds"].as_u64().unwrap()).contains(&pairs),
        "{noise:#}"
    );
}

/// `--method duet`: the A/A rounds run as duets (both copies at once, the CPU sets
/// swapped between rounds), and the calibration predicts duet's MDE at 10 and 30
/// minutes.
#[test]
fn a_duet_calibration_measures_duet_rounds_and_predicts_duet() {
    let _shared = shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let cal = json_of(
        &[
            "calibrate",
            "--method",
            "duet",
            "--budget",
            "30s",
            "--durations",
            "0.5s",
            "-c",
            "4",
            "--threads",
            "1",
            "--metric",
            "server_cpu_us_per_op",
            "--format",
            "json",
        ],
        &db,
    );
    assert_eq!(cal["method"], "duet", "{cal:#}");
    let methods: Vec<&str> = cal["predictions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["duet", "duet"], "{cal:#}");
    let noise = &cal["noise"][0];
    assert!(noise["pairs"].as_u64().unwrap() >= 2, "{cal:#}");
    let store = resplab_store::Store::open(&db).unwrap();
    let exp = store
        .experiment(noise["experiment"].as_str().unwrap())
        .unwrap();
    assert_eq!(exp.order_kind, "duet");
    // Each round's two trials ran at once, on the two CPU sets, swapped between rounds.
    let mut sets = std::collections::BTreeMap::new();
    for t in store.trials(exp.id).unwrap() {
        let facts = store.server_info(t.id).unwrap();
        let cpus = facts["resplab"]
            .get("duet_cpus")
            .cloned()
            .unwrap_or_default();
        sets.insert((t.round, t.variant.clone()), cpus);
    }
    let of = |r: u32, v: &str| sets.get(&(r, v.to_string())).cloned();
    assert_ne!(of(0, "a"), of(0, "a-again"), "{sets:?}");
    assert_eq!(of(0, "a"), of(1, "a-again"), "{sets:?}");
}
