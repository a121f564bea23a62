//! Bad input to `resplab experiment`: placed TOML errors with suggestions, a server
//! that does not start (command and output shown), and stored trials kept.

use crate::common::run_in;

#[test]
fn unknown_key_is_placed_with_a_suggestion() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("e.toml"),
        "[experiment]\nname = \"x\"\nrouns = 3\n",
    )
    .unwrap();
    let (code, _, err) = run_in(&["experiment", "run", "e.toml"], dir.path());
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "e.toml:3:1: key `experiment.rouns`: unknown key `rouns`; did you mean `rounds`?"
        ),
        "{err}"
    );
}

#[test]
fn dry_run_prints_the_plan() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/demo.toml");
    let (code, out, err) = run_in(&["experiment", "run", file, "--dry-run"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.matches("round ").count(), 12, "{out}");
    assert!(out.contains("estimated duration:"), "{out}");
    assert!(!dir.path().join("resplab.db").exists());
}

#[test]
fn server_that_does_not_start_shows_command_and_output_and_keeps_trials() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("e.toml"),
        r#"
[experiment]
name = "broken"
rounds = 2
requests = 500
order = "abba"

[[variant]]
name = "good"

[[variant]]
name = "bad"
server = "redis-server --port {port} --save '' --no-such-directive yes"

[[workload]]
name = "ping"
tests = "ping_inline"
clients = 2
"#,
    )
    .unwrap();
    let (code, _, err) = run_in(&["experiment", "run", "e.toml", "--db", "r.db"], dir.path());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--no-such-directive"), "{err}");
    assert!(err.contains("last lines of its output"), "{err}");
    assert!(err.to_lowercase().contains("bad directive"), "{err}");
    // abba puts `good` first in round 1: its trial was stored and survives
    let (code, out, _) = run_in(
        &["experiment", "status", "broken", "--db", "r.db"],
        dir.path(),
    );
    assert_eq!(code, 0);
    assert!(out.contains("trials stored: 1"), "{out}");
    let (code, out, _) = run_in(&["experiment", "list", "--db", "r.db"], dir.path());
    assert_eq!(code, 0);
    assert!(out.contains("broken") && out.contains("failed"), "{out}");
}

#[test]
fn failing_and_slow_hooks_stop_the_run_with_their_output() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let exp = |hook: &str, timeout: &str| {
        format!(
            r#"
[experiment]
name = "hooks"
rounds = 1
requests = 200

[[variant]]
name = "a"
[variant.hooks]
before_trial = "{hook}"
timeout = "{timeout}"

[[variant]]
name = "b"

[[workload]]
name = "w"
tests = "ping_inline"
clients = 1
"#
        )
    };
    // `experiment run NAME.toml --db DB` of `text`, which must exit 2: its stderr.
    let refused = |name: &str, text: String, db: &str| {
        let file = format!("{name}.toml");
        std::fs::write(dir.path().join(&file), text).unwrap();
        let (code, _, err) = run_in(&["experiment", "run", &file, "--db", db], dir.path());
        assert_eq!(code, 2, "{err}");
        err
    };
    let err = refused(
        "fail",
        exp("echo boom-$RESPLAB_VARIANT; exit 3", "5s"),
        "f.db",
    );
    assert!(err.contains("before_trial hook"), "{err}");
    assert!(err.contains("boom-a"), "{err}");
    let err = refused("slow", exp("echo started; sleep 5", "300ms"), "s.db");
    assert!(err.contains("timed out after 0.3 s"), "{err}");
    assert!(err.contains("started"), "{err}");
}

/// A setting that differs between the variants without being declared (here: `hz`, set
/// by a config file only variant b reads) is named at the end of the run; declared
/// settings (`--appendonly`, `--hz` in both commands) are not.
#[test]
fn undeclared_config_differences_are_named() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.conf"), "hz 50\n").unwrap();
    let conf = dir.path().join("b.conf").display().to_string();
    let exp = format!(
        r#"
[experiment]
name = "cfg"
rounds = 1
test_time = "200ms"
warmup = "0s"

[[variant]]
name = "a"
server = "redis-server --port {{port}} --bind 127.0.0.1 --save '' --appendonly no --dir {{dir}}"

[[variant]]
name = "b"
server = "redis-server {conf} --port {{port}} --bind 127.0.0.1 --save '' --appendonly no --dir {{dir}}"

[[workload]]
name = "ping"
tests = "ping_mbulk"
clients = 2
"#
    );
    std::fs::write(dir.path().join("e.toml"), exp).unwrap();
    let (code, _, err) = run_in(&["experiment", "run", "e.toml", "--db", "r.db"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("config check: WARNING"), "{err}");
    assert!(err.contains("  b: hz is `50` (baseline `10`)"), "{err}");
    assert!(!err.contains("appendonly is"), "{err}");
}

/// `--rounds 0` is refused as `rounds = 0` in the file is, and an `insecure = true`
/// variant is warned about as bench's `--insecure` is.
#[test]
fn zero_rounds_are_refused_and_insecure_variants_are_named() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("e.toml"),
        r#"
[experiment]
name = "x"
rounds = 2

[[variant]]
name = "a"
address = "127.0.0.1:1"
tls = true
insecure = true

[[variant]]
name = "b"
address = "127.0.0.1:2"

[[workload]]
name = "get"
tests = "get"
"#,
    )
    .unwrap();
    let (code, _, err) = run_in(
        &["experiment", "run", "e.toml", "--rounds", "0"],
        dir.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--rounds: expected at least 1, found 0"),
        "{err}"
    );
    assert!(!dir.path().join("resplab.db").exists());
    let (code, _, err) = run_in(&["experiment", "run", "e.toml", "--dry-run"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "WARNING: variant `a`: insecure = true: the server's TLS certificate is not verified"
        ),
        "{err}"
    );
    assert!(!err.contains("variant `b`"), "{err}");
}
