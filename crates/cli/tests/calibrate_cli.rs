//! `resplab calibrate` end to end against real redis-server instances (started fresh for
//! every trial by the experiment runner), and what `experiment run` makes of the result.

use assert_cmd::Command;
use serde_json::Value;

fn resplab() -> Command {
    let mut c = Command::cargo_bin("resplab").expect("binary built");
    c.timeout(std::time::Duration::from_secs(180));
    c
}

#[test]
fn a_short_calibration_gives_noise_a_monotone_budget_table_and_an_aa_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = resplab()
        .args(["calibrate", "--budget", "14s", "--durations", "0.2s,0.4s"])
        .args(["--warmup", "0s", "-c", "4", "--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cal: Value = serde_json::from_slice(&out.stdout).unwrap();
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
    let out = resplab()
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
    let out = resplab()
        .args(["report", "calibration:latest", "-o"])
        .arg(&html)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<svg") && page.contains("predicted MDE"),
        "{page}"
    );
    let plans = cal["table"].as_array().unwrap();
    assert_eq!(page.matches("<tr><td>").count(), plans.len());
    assert!(page.contains("A/A check"), "{page}");
    let md = dir.path().join("cal.md");
    let out = resplab()
        .args(["report", "calibration:1", "-o"])
        .arg(&md)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("](cal-plots/budget.svg)"), "{text}");
    assert!(dir.path().join("cal-plots/budget.svg").is_file());
    let out = resplab()
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
        (&["--server", ""], "--server: expected a command"),
        (
            &["--experiment", "x.toml", "--workload", "w", "-c", "4"],
            "-c/--clients cannot be used together with --experiment",
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (args, want) in cases {
        resplab()
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

/// A deliberately biased A/A set-up: one `resplab serve` per round whose first 0.7 s run
/// 100 % slower (`--cold-ms`), and `order = "fixed"`, so copy `a` always meets the cold
/// server and `a-again` the warm one. The A/A comparison must claim a difference (the
/// truth is about +100 % for `a-again`); with the order randomized or the server warm it
/// would not, so this fails when either the knob or the fixed order stops working.
#[test]
fn a_fixed_order_with_a_cold_server_is_caught_by_the_aa_comparison() {
    let bin = assert_cmd::cargo::cargo_bin("resplab");
    let bin = bin.display();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("biased.toml");
    std::fs::write(
        &file,
        format!(
            r#"
[experiment]
name = "biased-aa"
rounds = 6
order = "fixed"

[server]
command = "{bin} serve --port {{port}} --cold-ms 700 --cold-slowdown 100"
per = "round"

[[variant]]
name = "a"
server = "none"

[[variant]]
name = "a-again"
server = "none"

[[workload]]
name = "set"
run = "{bin} bench -p {{port}} -t set -c 20 --test-time 0.5 -q --json -"
format = "resplab"
"#
        ),
    )
    .unwrap();
    let db = dir.path().join("r.db");
    resplab()
        .args(["experiment", "run"])
        .arg(&file)
        .arg("--db")
        .arg(&db)
        .assert()
        .success();
    let out = resplab()
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
    let bin = assert_cmd::cargo::cargo_bin("resplab");
    let bin = bin.display();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("biased.toml");
    std::fs::write(
        &file,
        format!(
            r#"
[experiment]
name = "biased"
order = "fixed"
warmup = "0s"

[server]
command = "{bin} serve --port {{port}} --cold-ms 500 --cold-slowdown 100"
per = "round"

[[variant]]
name = "a"
server = "none"

[[variant]]
name = "b"
server = "none"

[[workload]]
name = "set"
tests = "set"
clients = 20
"#
        ),
    )
    .unwrap();
    let db = dir.path().join("r.db");
    let out = resplab()
        .args(["calibrate", "--experiment"])
        .arg(&file)
        .args([
            "--workload",
            "set",
            "--budget",
            "10s",
            "--durations",
            "0.3s",
        ])
        .args(["--format", "json", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cal: Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = &cal["noise"][0];
    assert_eq!(n["aa_verdict"], "DIFFERENT", "{cal:#}");
    assert!(n["aa_ci_low_pct"].as_f64().unwrap() > 10.0, "{n:#}");
    let why = cal["biased"].as_str().expect("the set-up is called biased");
    assert!(
        why.contains("order = \"fixed\"") && why.contains("per = \"round\""),
        "{why}"
    );
    assert!(cal["target"].as_str().unwrap().contains("one per round"));
}
