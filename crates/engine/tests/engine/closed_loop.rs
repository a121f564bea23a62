//! Closed-loop runs against a real redis-server.

use crate::common::*;
use resplab_engine::{
    run, Budget, Credentials, EngineError, Progress, Protocol, RunConfig, StopToken, Target,
};
use resplab_results::RunEnd;
use resplab_testkit::redis::RedisServer;
use resplab_workload::TestName;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

#[test]
fn set_get_counts_are_exact() {
    let server = RedisServer::start().unwrap();
    let mut cfg = tcp_config(server.port());
    cfg.clients = 10;
    cfg.budget = Budget::Requests(1000);
    let wl = tests_workload(&[TestName::Set, TestName::Get], None, 1);
    let rec = run_quiet(&cfg, &wl);
    assert_eq!(rec.end, RunEnd::Completed);
    let set = &rec.commands["SET"];
    let get = &rec.commands["GET"];
    assert_eq!(set.requests, 1000);
    assert_eq!(get.requests, 1000);
    assert_eq!(set.errors + get.errors, 0);
    assert_eq!(rec.totals.requests, 2000);
    assert_eq!(hist_count(&set.histogram), 1000);
    assert_eq!(hist_count(&rec.totals.histogram), 2000);
    // "+OK\r\n" for every SET; "$3\r\nxxx\r\n" for every GET of the one key written.
    assert_eq!(set.bytes_in, 5 * 1000);
    assert_eq!(get.bytes_in, 9 * 1000);
    // SET key:__rand_int__ xxx, without -r the placeholder stays literal.
    let one_set = "*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$3\r\nxxx\r\n".len() as u64;
    assert_eq!(set.bytes_out, one_set * 1000);
    assert!(set.ops_per_sec > 0.0 && rec.duration_sec > 0.0);
    assert!(set.latency_us.p50 > 0.0 && set.latency_us.max >= set.latency_us.p99);
    assert_eq!(rec.connections.opened, 20);
    assert!(rec.load_model.is_closed_loop());
    assert!(rec.server.contains_key("redis_version"), "{:?}", rec.server);
    assert!(rec.host.cores >= 1);
    assert_eq!(rec.config["clients"], 10);
    let json = serde_json::to_string(&rec).unwrap();
    let back: resplab_results::RunRecord = serde_json::from_str(&json).unwrap();
    assert_eq!(back.commands.keys().collect::<Vec<_>>(), ["GET", "SET"]);
    assert_eq!(back.totals.histogram, rec.totals.histogram);
    assert_eq!(back.series.len(), rec.series.len());
}

#[test]
fn pipelining_over_threads_keeps_counts_exact() {
    let server = RedisServer::start().unwrap();
    let mut cfg = tcp_config(server.port());
    cfg.threads = 2;
    cfg.clients = 7;
    cfg.pipeline = 16;
    cfg.budget = Budget::Requests(10_001);
    let wl = tests_workload(&[TestName::PingMbulk, TestName::Incr], None, 1);
    let rec = run_quiet(&cfg, &wl);
    assert_eq!(rec.commands["PING_MBULK"].requests, 10_001);
    assert_eq!(rec.commands["INCR"].requests, 10_001);
    assert_eq!(rec.totals.errors, 0);
    let mut c = server.client().unwrap();
    let v = c.cmd(&["GET", "counter:__rand_int__"]).unwrap().as_text();
    assert_eq!(v.as_deref(), Some("10001"));
    assert_eq!(rec.config["pipeline"], 16);
}

fn keys_after_run(server: &RedisServer, threads: u32, seed: u64) -> BTreeSet<String> {
    let mut c = server.client().unwrap();
    c.cmd(&["FLUSHALL"]).unwrap();
    let mut cfg = tcp_config(server.port());
    cfg.threads = threads;
    cfg.clients = 4;
    cfg.pipeline = 4;
    cfg.budget = Budget::Requests(400);
    let wl = tests_workload(&[TestName::Set], Some(1_000_000), seed);
    let rec = run_quiet(&cfg, &wl);
    assert_eq!(rec.commands["SET"].requests, 400);
    c.cmd(&["KEYS", "*"])
        .unwrap()
        .as_text_list()
        .into_iter()
        .collect()
}

#[test]
fn the_seed_fixes_the_command_stream() {
    let server = RedisServer::start().unwrap();
    let a = keys_after_run(&server, 1, 7);
    let b = keys_after_run(&server, 2, 7);
    let c = keys_after_run(&server, 1, 8);
    assert!(a.len() > 350, "{} keys", a.len());
    assert_eq!(a, b, "same seed, same keys, whatever the thread count");
    assert_ne!(a, c, "another seed, other keys");
}

#[test]
fn unix_socket_resp3_auth_and_select() {
    let server = RedisServer::start_with(&["--requirepass", "s3cret-pw"], true).unwrap();
    let mut cfg = tcp_config(0);
    cfg.target = Target::Unix {
        path: server.socket_path().unwrap().to_path_buf(),
    };
    cfg.protocol = Protocol::Resp3;
    cfg.credentials = Some(Credentials {
        user: None,
        password: "s3cret-pw".into(),
    });
    cfg.db = Some(3);
    cfg.clients = 2;
    cfg.budget = Budget::Requests(200);
    let wl = tests_workload(&[TestName::Set, TestName::Get], Some(1000), 3);
    let rec = run_quiet(&cfg, &wl);
    assert_eq!(rec.commands["SET"].requests, 200);
    assert_eq!(rec.totals.errors, 0);
    assert!(rec.server.contains_key("redis_version"));
    let json = serde_json::to_string(&rec).unwrap();
    assert!(!json.contains("s3cret-pw"));
    let mut c = server.client().unwrap();
    c.cmd(&["AUTH", "s3cret-pw"]).unwrap();
    c.cmd(&["SELECT", "3"]).unwrap();
    assert!(c.cmd(&["DBSIZE"]).unwrap().as_int().unwrap() > 100);
    c.cmd(&["SELECT", "0"]).unwrap();
    assert_eq!(c.cmd(&["DBSIZE"]).unwrap().as_int(), Some(0));

    // RESP2 with AUTH works too; a wrong password is refused before anything runs.
    cfg.protocol = Protocol::Resp2;
    run_quiet(&cfg, &wl);
    cfg.credentials = Some(Credentials {
        user: None,
        password: "wrong-pw-value".into(),
    });
    let err = run(&cfg, &wl, &StopToken::new(), &mut |_: &Progress| {}).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, EngineError::Handshake { .. }), "{text}");
    assert!(!text.contains("wrong-pw-value"), "{text}");
}

#[test]
fn test_time_with_warmup() {
    let server = RedisServer::start().unwrap();
    let mut cfg = tcp_config(server.port());
    cfg.clients = 2;
    cfg.budget = Budget::Duration(Duration::from_millis(1200));
    cfg.warmup = Duration::from_millis(300);
    let wl = tests_workload(&[TestName::PingMbulk], None, 0);
    let mut calls = Vec::new();
    let t0 = Instant::now();
    let rec = run(&cfg, &wl, &StopToken::new(), &mut |p: &Progress| {
        calls.push(p.clone())
    })
    .unwrap();
    let wall = t0.elapsed().as_secs_f64();
    assert!(
        wall >= 1.5,
        "warm-up plus test time take at least 1.5 s, took {wall}"
    );
    assert!(
        (1.15..1.6).contains(&rec.duration_sec),
        "measured {} s",
        rec.duration_sec
    );
    assert_eq!(rec.warmup_sec, 0.3);
    let ping = &rec.commands["PING_MBULK"];
    assert!(ping.requests > 100);
    // A run shorter than 10 s has a series by the tenth of a second: 1.2 s gives 12 to 13
    // points, not one or two.
    assert_eq!(rec.series_interval_sec, 0.1);
    assert!((11..=14).contains(&rec.series.len()), "{:?}", rec.series);
    assert!(
        rec.series
            .windows(2)
            .all(|w| w[1].t_sec > w[0].t_sec && w[1].t_sec - w[0].t_sec < 0.15),
        "{:?}",
        rec.series.iter().map(|s| s.t_sec).collect::<Vec<_>>()
    );
    assert_eq!(
        rec.series.iter().map(|s| s.requests).sum::<u64>(),
        ping.requests
    );
    assert!(calls.first().is_some_and(|p| p.warming_up));
    let last = calls.last().unwrap();
    assert!(!last.warming_up && last.requests > 0 && last.elapsed_sec >= 1.0);
    assert!(rec.client_cpu.total_sec() > 0.0);
}

#[test]
fn stop_token_ends_the_run_with_partial_results() {
    let server = RedisServer::start().unwrap();
    let mut cfg = tcp_config(server.port());
    cfg.budget = Budget::Duration(Duration::from_secs(60));
    let wl = tests_workload(&[TestName::Set, TestName::Get], None, 0);
    let stop = StopToken::new();
    let stopper = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            stop.stop();
        })
    };
    let t0 = Instant::now();
    let rec = run(&cfg, &wl, &stop, &mut |_: &Progress| {}).unwrap();
    stopper.join().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert_eq!(rec.end, RunEnd::Interrupted);
    assert!(rec.commands["SET"].requests > 0);
    assert!(
        !rec.commands.contains_key("GET"),
        "the second phase never started"
    );
    assert!(rec.duration_sec > 0.2 && rec.duration_sec < 3.0);
}

#[test]
fn refused_connection_is_an_error() {
    let port = resplab_testkit::free_port().unwrap();
    let cfg = tcp_config(port);
    let wl = tests_workload(&[TestName::Set], None, 0);
    let err = run(&cfg, &wl, &StopToken::new(), &mut |_: &Progress| {}).unwrap_err();
    assert!(matches!(err, EngineError::Connect { .. }), "{err}");
}

#[test]
fn invalid_config_is_refused() {
    let mut cfg = RunConfig::new(Target::Tcp {
        host: "127.0.0.1".into(),
        port: 1,
    });
    cfg.clients = 0;
    let wl = tests_workload(&[TestName::Set], None, 0);
    let err = run(&cfg, &wl, &StopToken::new(), &mut |_: &Progress| {}).unwrap_err();
    assert!(err.to_string().contains("clients"), "{err}");
}
