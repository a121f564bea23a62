//! Dropped connections, dead servers and malformed replies: counted, never a panic or a
//! hang.

use crate::common::*;
use resplab_engine::{run, Budget, Progress, ReconnectPolicy, StopToken};
use resplab_results::RunEnd;
use resplab_testkit::fake::{FakeServer, Script, Stall};
use resplab_testkit::redis::RedisServer;
use resplab_workload::TestName;
use std::time::{Duration, Instant};

/// Fails unless `rec` counts requests in a second that began after `t_sec`.
fn assert_load_after(rec: &resplab_results::RunRecord, t_sec: f64) {
    let late: u64 = rec
        .series
        .iter()
        .filter(|s| s.t_sec > t_sec)
        .map(|s| s.requests)
        .sum();
    assert!(late > 0, "{:?}", rec.series);
}

fn fake_config(server: &FakeServer, requests: u64) -> resplab_engine::RunConfig {
    let mut cfg = tcp_config(server.port());
    cfg.clients = 1;
    cfg.budget = Budget::Requests(requests);
    cfg.request_timeout = Duration::from_millis(500);
    cfg
}

#[test]
fn reconnects_after_client_kill() {
    let server = RedisServer::start().unwrap();
    let mut cfg = tcp_config(server.port());
    cfg.clients = 4;
    cfg.pipeline = 4;
    cfg.budget = Budget::Duration(Duration::from_millis(1200));
    let wl = tests_workload(&[TestName::Set], Some(1000), 0);
    let killer = {
        let mut c = server.client().unwrap();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(500));
            c.cmd(&["CLIENT", "KILL", "TYPE", "normal"])
                .unwrap()
                .as_int()
        })
    };
    let rec = run_quiet(&cfg, &wl);
    let killed = killer.join().unwrap().unwrap();
    assert_eq!(killed, 4, "the four load connections were killed");
    assert_eq!(rec.end, RunEnd::Completed);
    assert!(rec.connections.reconnects >= 4, "{:?}", rec.connections);
    // The server answered every reconnect at once: it was never unreachable.
    assert_eq!(rec.connections.unreachable_sec, 0.0);
    assert!(rec.connections.outages.is_empty());
    assert_eq!(rec.connections.opened, 4);
    let set = &rec.commands["SET"];
    assert!(set.requests > 100);
    // Whatever was in flight when the connections died is counted, not lost silently.
    assert_eq!(
        set.errors,
        set.error_kinds.get("connection_lost").copied().unwrap_or(0)
    );
    assert!(rec.warnings.iter().any(|w| w.kind() == "reconnects"));
    // Load went on after the kill.
    assert_load_after(&rec, 1.0);
}

#[test]
fn a_server_killed_mid_run_ends_it_with_partial_results() {
    let mut server = RedisServer::start().unwrap();
    let mut cfg = tcp_config(server.port());
    cfg.budget = Budget::Duration(Duration::from_secs(30));
    cfg.reconnect = ReconnectPolicy {
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(100),
        give_up_after: Duration::from_millis(800),
    };
    let wl = tests_workload(&[TestName::Set, TestName::Get], None, 0);
    let stop = StopToken::new();
    let t0 = Instant::now();
    let rec = std::thread::scope(|s| {
        let h = s.spawn(|| run(&cfg, &wl, &stop, &mut |_: &Progress| {}));
        std::thread::sleep(Duration::from_millis(400));
        server.kill();
        h.join().unwrap()
    })
    .expect("a lost server is a result, not an error");
    assert!(t0.elapsed() < Duration::from_secs(6), "{:?}", t0.elapsed());
    let RunEnd::ServerLost { message } = &rec.end else {
        panic!("expected ServerLost, got {:?}", rec.end);
    };
    assert!(message.contains("127.0.0.1"), "{message}");
    assert!(rec.commands["SET"].requests > 0);
    assert!(!rec.commands.contains_key("GET"));
    assert!(rec.duration_sec > 0.2);
}

/// A server that dies during a time-bound run and is still down when the time is up:
/// the run did not complete. Its end says for how long the target was unreachable, and
/// the rate over the time it could be reached is given apart from the whole-window one.
#[test]
fn a_server_dead_until_the_end_of_the_test_time_is_not_a_completed_run() {
    let mut server = RedisServer::start().unwrap();
    let mut cfg = tcp_config(server.port());
    cfg.clients = 8;
    cfg.budget = Budget::Duration(Duration::from_millis(2500));
    let wl = tests_workload(&[TestName::Set], None, 0);
    let stop = StopToken::new();
    let rec = std::thread::scope(|s| {
        let h = s.spawn(|| run(&cfg, &wl, &stop, &mut |_: &Progress| {}));
        std::thread::sleep(Duration::from_millis(1000));
        server.kill();
        h.join().unwrap()
    })
    .unwrap();
    let RunEnd::ServerLost { message } = &rec.end else {
        panic!("expected ServerLost, got {:?}", rec.end);
    };
    assert!(message.contains("was unreachable for"), "{message}");
    assert!(message.contains("to the end"), "{message}");
    let c = &rec.connections;
    assert!(
        (1.0..2.0).contains(&c.unreachable_sec),
        "unreachable for about 1.5 s: {c:?}"
    );
    assert_eq!(c.outages.len(), 1, "{c:?}");
    assert!(!c.outages[0].recovered);
    let up_rate = c
        .ops_per_sec_while_reachable
        .expect("given when there was an outage");
    assert!(
        up_rate > 1.4 * rec.totals.ops_per_sec,
        "{up_rate} vs {}",
        rec.totals.ops_per_sec
    );
    assert!(rec.warnings.iter().any(|w| w.kind() == "unreachable"));
}

/// A server that goes away and comes back: the run reaches its budget, but its end says
/// it saw an outage, when and for how long.
#[test]
fn a_server_that_comes_back_leaves_an_outage_on_record() {
    let mut server = RedisServer::start().unwrap();
    let mut cfg = tcp_config(server.port());
    cfg.clients = 8;
    cfg.budget = Budget::Duration(Duration::from_millis(3000));
    cfg.reconnect = ReconnectPolicy {
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(50),
        give_up_after: Duration::from_secs(5),
    };
    let wl = tests_workload(&[TestName::Set], None, 0);
    let stop = StopToken::new();
    let rec = std::thread::scope(|s| {
        let h = s.spawn(|| run(&cfg, &wl, &stop, &mut |_: &Progress| {}));
        std::thread::sleep(Duration::from_millis(800));
        server.kill();
        std::thread::sleep(Duration::from_millis(700));
        server.restart().unwrap();
        h.join().unwrap()
    })
    .unwrap();
    let RunEnd::Unreachable {
        unreachable_sec,
        message,
    } = &rec.end
    else {
        panic!("expected Unreachable, got {:?}", rec.end);
    };
    assert!((0.5..2.0).contains(unreachable_sec), "{unreachable_sec}");
    assert!(message.contains("was unreachable for"), "{message}");
    let c = &rec.connections;
    assert_eq!(c.outages.len(), 1, "{c:?}");
    assert!(c.outages[0].recovered);
    assert!((0.5..1.5).contains(&c.outages[0].start_sec), "{c:?}");
    assert!(c.reconnects >= 8);
    // Load went on after the server came back.
    assert_load_after(&rec, 2.5);
}

#[test]
fn garbage_replies_are_protocol_errors() {
    let fake = FakeServer::start(Script {
        garbage_every: Some(50),
        ..Script::default()
    })
    .unwrap();
    let mut cfg = fake_config(&fake, 300);
    cfg.pipeline = 8;
    let wl = tests_workload(&[TestName::Set], None, 0);
    let t0 = Instant::now();
    let rec = run_quiet(&cfg, &wl);
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert_eq!(rec.end, RunEnd::Completed);
    let set = &rec.commands["SET"];
    assert!(
        rec.connections.protocol_errors >= 3,
        "{:?}",
        rec.connections
    );
    assert_eq!(rec.connections.reconnects, rec.connections.protocol_errors);
    let lost = set.error_kinds["protocol_error"];
    assert!(lost >= rec.connections.protocol_errors);
    // Every request either got a reply or was counted as lost to a reset.
    assert_eq!(set.requests + lost, 300);
}

#[test]
fn truncated_replies_and_closes_are_survived() {
    let fake = FakeServer::start(Script {
        truncate_at: Some(20),
        ..Script::default()
    })
    .unwrap();
    let cfg = fake_config(&fake, 100);
    let wl = tests_workload(&[TestName::Get], None, 0);
    let rec = run_quiet(&cfg, &wl);
    let get = &rec.commands["GET"];
    // Each connection answers 19 requests, then half a reply and a close: the 20th
    // request of each of the five connections is lost.
    assert_eq!(get.requests, 95);
    assert_eq!(get.error_kinds["connection_lost"], 5);
    assert!(rec.connections.reconnects >= 4, "{:?}", rec.connections);

    let fake = FakeServer::start(Script {
        close_after: Some(30),
        ..Script::default()
    })
    .unwrap();
    let rec = run_quiet(&fake_config(&fake, 100), &wl);
    let get = &rec.commands["GET"];
    let lost = get.error_kinds.get("connection_lost").copied().unwrap_or(0);
    assert_eq!(get.requests + lost, 100);
    assert!(
        get.requests >= 90 && rec.connections.reconnects >= 3,
        "{rec:?}"
    );
}

#[test]
fn error_replies_are_counted_per_kind() {
    let fake = FakeServer::start(Script {
        error_every: Some(10),
        ..Script::default()
    })
    .unwrap();
    let mut cfg = fake_config(&fake, 200);
    cfg.pipeline = 5;
    let wl = tests_workload(&[TestName::Set], None, 0);
    let rec = run_quiet(&cfg, &wl);
    let set = &rec.commands["SET"];
    assert_eq!(set.requests, 200);
    assert_eq!(set.errors, 20);
    assert_eq!(set.error_kinds["ERR"], 20);
    assert_eq!(rec.totals.errors, 20);
    assert!(rec.warnings.iter().any(|w| w.kind() == "errors"));
    assert_eq!(rec.connections.reconnects, 0);
}

#[test]
fn a_silent_server_times_out_instead_of_hanging() {
    let fake = FakeServer::start(Script {
        stall: Some(Stall {
            every: 25,
            duration: Duration::from_millis(1500),
        }),
        ..Script::default()
    })
    .unwrap();
    let mut cfg = fake_config(&fake, 60);
    cfg.request_timeout = Duration::from_millis(200);
    let wl = tests_workload(&[TestName::PingMbulk], None, 0);
    let t0 = Instant::now();
    let rec = run_quiet(&cfg, &wl);
    assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
    let ping = &rec.commands["PING_MBULK"];
    assert!(ping.error_kinds["timeout"] >= 1, "{ping:?}");
    assert!(rec.connections.reconnects >= 1);
    assert_eq!(ping.requests + ping.errors, 60);
}

#[test]
fn redirections_are_classified() {
    let fake = FakeServer::start(Script {
        error_every: Some(4),
        error_line: Some("MOVED 3999 127.0.0.1:6381".into()),
        ..Script::default()
    })
    .unwrap();
    let rec = run_quiet(
        &fake_config(&fake, 100),
        &tests_workload(&[TestName::Get], None, 0),
    );
    let get = &rec.commands["GET"];
    assert_eq!(get.requests, 100);
    assert_eq!(get.error_kinds["MOVED"], 25);
    assert_eq!(get.errors, 25);

    let fake = FakeServer::start(Script {
        error_every: Some(5),
        error_line: Some("ASK 3999 127.0.0.1:6381".into()),
        ..Script::default()
    })
    .unwrap();
    let rec = run_quiet(
        &fake_config(&fake, 100),
        &tests_workload(&[TestName::Get], None, 0),
    );
    assert_eq!(rec.commands["GET"].error_kinds["ASK"], 20);
}

/// A stopped process still completes TCP handshakes (the kernel does it), so only an
/// answer proves a reconnect worked. A server frozen with SIGSTOP must end the run as
/// lost, not keep it waiting or "reconnecting" forever.
#[test]
fn a_frozen_server_is_lost_not_waited_for() {
    let server = RedisServer::start().unwrap();
    let mut cfg = tcp_config(server.port());
    cfg.clients = 2;
    cfg.budget = Budget::Requests(100_000_000);
    cfg.request_timeout = Duration::from_millis(300);
    cfg.connect_timeout = Duration::from_millis(300);
    cfg.reconnect = ReconnectPolicy {
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(100),
        give_up_after: Duration::from_millis(700),
    };
    let wl = tests_workload(&[TestName::PingMbulk], None, 0);
    let stop = StopToken::new();
    let t0 = Instant::now();
    let rec = std::thread::scope(|s| {
        let h = s.spawn(|| run(&cfg, &wl, &stop, &mut |_: &Progress| {}));
        std::thread::sleep(Duration::from_millis(300));
        server.signal("STOP").unwrap();
        let rec = h.join().unwrap();
        server.signal("CONT").unwrap();
        rec
    })
    .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
    assert!(
        matches!(rec.end, RunEnd::ServerLost { .. }),
        "{:?}",
        rec.end
    );
    let ping = &rec.commands["PING_MBULK"];
    assert!(ping.requests > 0);
    assert!(ping.error_kinds["timeout"] >= 1, "{:?}", ping.error_kinds);
}

/// Something that accepts connections but never answers: the run cannot start, and the
/// error says so in words, not as "Resource temporarily unavailable".
#[test]
fn a_listener_that_never_answers_is_named_as_such() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut cfg = tcp_config(port);
    cfg.connect_timeout = Duration::from_millis(700);
    let wl = tests_workload(&[TestName::Get], None, 0);
    let e = run(&cfg, &wl, &StopToken::new(), &mut |_: &Progress| {}).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("no reply to PING within 0.7 s"), "{text}");
    assert!(!text.contains("temporarily unavailable"), "{text}");
    drop(listener);
}
