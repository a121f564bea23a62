//! `resplab redis-benchmark` beyond the oracle's lines: refusals and usage errors (exit
//! 2, one line, before any load), the names it answers to, `-I` holding idle
//! connections, `-l` looping until stopped, and `resplab bench` pointing to the mode.

use resplab_testkit::client::Reply;
use resplab_testkit::redis::RedisServer;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn refused_and_malformed_options_exit_2_with_one_line() {
    let _lane = crate::common::shared();
    for (args, says) in [
        (&["-k", "2"][..], "invalid value '2' for -k"),
        (&["-e"][..], "-e is not supported"),
        (&["--sequential"][..], "--sequential is not supported"),
        (&["--nope"][..], "unknown option '--nope'"),
        (&["-c"][..], "-c needs a value"),
        (&["-p", "1", "-c", "0"][..], "-c"),
        (&["-p", "1", "-t", "nosuch"][..], "nosuch"),
    ] {
        let mut all = vec!["redis-benchmark"];
        all.extend_from_slice(args);
        let out = crate::common::resplab(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn links_named_after_the_tools_run_the_mode() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let out = crate::common::resplab(&["install-links", dir.path().to_str().unwrap()]);
    crate::common::assert_ok(&out);
    for name in ["redis-benchmark", "valkey-benchmark"] {
        let out = Command::new(dir.path().join(name))
            .arg("--version")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("redis-benchmark command lines"),
            "{name}: {text}"
        );
    }
}

#[test]
fn bench_points_to_the_mode_for_redis_benchmark_options() {
    let _lane = crate::common::shared();
    let out = crate::common::resplab(&["bench", "-p", "1", "--enable-tracking"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("run `resplab redis-benchmark …`"), "{err}");
}

#[test]
fn idle_mode_holds_its_connections_until_stopped() {
    let _lane = crate::common::shared();
    let server = RedisServer::start().expect("redis-server (installed by scripts/setup.sh)");
    let mut client = server.client().unwrap();
    let port = server.port().to_string();
    let child = spawn(&["-p", &port, "-I", "-c", "7"]);
    // The test's own connection and the seven idle ones.
    wait_for(|| connected(&mut client) >= 8, "7 idle connections");
    let calls = info(&mut client, "commandstats");
    assert!(
        !calls.contains("cmdstat_get") && !calls.contains("cmdstat_set"),
        "{calls}"
    );
    let out = interrupt(child);
    crate::common::assert_ok(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Creating 7 idle connections"));
    wait_for(
        || connected(&mut client) == 1,
        "the idle connections closed",
    );
}

#[test]
fn loop_mode_runs_the_tests_again_until_stopped() {
    let _lane = crate::common::shared();
    let server = RedisServer::start().expect("redis-server (installed by scripts/setup.sh)");
    let mut client = server.client().unwrap();
    let port = server.port().to_string();
    let child = spawn(&["-p", &port, "-l", "-q", "-t", "set", "-n", "200", "-c", "2"]);
    wait_for(
        || set_calls(&info(&mut client, "commandstats")) >= 600,
        "three rounds of the SET test",
    );
    let out = interrupt(child);
    crate::common::assert_ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().filter(|l| l.starts_with("SET: ")).count() >= 2,
        "{text}"
    );
}

fn spawn(args: &[&str]) -> Child {
    Command::new(crate::common::BIN)
        .arg("redis-benchmark")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Sends SIGINT (Ctrl-C) and collects the output.
fn interrupt(child: Child) -> std::process::Output {
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    child.wait_with_output().unwrap()
}

fn wait_for(mut done: impl FnMut() -> bool, what: &str) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "waited for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn info(client: &mut resplab_testkit::client::Client, section: &str) -> String {
    match client.cmd(&["INFO", section]).unwrap() {
        Reply::Bulk(Some(b)) => String::from_utf8_lossy(&b).into_owned(),
        other => panic!("INFO replied {other:?}"),
    }
}

fn connected(client: &mut resplab_testkit::client::Client) -> u64 {
    info(client, "clients")
        .lines()
        .find_map(|l| l.strip_prefix("connected_clients:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

fn set_calls(stats: &str) -> u64 {
    stats
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_set:calls="))
        .and_then(|r| r.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
