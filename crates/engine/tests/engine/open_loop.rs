//! Open loop: the schedule is kept, and latency is timed from the intended send time.

use crate::common::*;
use resplab_engine::{Arrivals, Budget, OpenLoop, StopToken};
use resplab_results::LoadModel;
use resplab_testkit::fake::{FakeServer, Script, Stall};
use resplab_testkit::redis::RedisServer;
use resplab_workload::TestName;
use std::time::Duration;

const MS: u64 = 1_000_000;

/// One connection, at most one request in flight, 200 requests/s (one every 5 ms), and a
/// server that stalls for 100 ms before every 200th reply (about once a second).
///
/// During each stall about 20 requests come due. They cannot be sent (the one request
/// allowed in flight is stuck), so they wait in the client and go out in a burst after
/// the stall, where the server answers them at once. Timed from the intended send time
/// their latencies spread from about 100 ms down to 5 ms; timed from the actual send
/// (service time) only the one stuck request shows the stall. A load generator that
/// timed latency from the actual send, as closed-loop tools do, would report about 2
/// slow requests instead of about 20.
#[test]
fn a_stall_shows_in_latency_but_not_in_service_time() {
    let fake = FakeServer::start(Script {
        stall: Some(Stall {
            every: 200,
            duration: Duration::from_millis(100),
        }),
        ..Script::default()
    })
    .unwrap();
    let mut cfg = tcp_config(fake.port());
    cfg.clients = 1;
    cfg.pipeline = 1;
    cfg.budget = Budget::Duration(Duration::from_millis(2300));
    cfg.open_loop = Some(OpenLoop {
        rate_per_sec: 200.0,
        arrivals: Arrivals::Constant,
    });
    let wl = tests_workload(&[TestName::Set], None, 0);
    let rec = run_quiet(&cfg, &wl);
    let set = &rec.commands["SET"];
    let ol = rec.open_loop.as_ref().expect("open-loop stats");
    assert!(matches!(rec.load_model, LoadModel::OpenLoop { .. }));
    assert!((440..=462).contains(&set.requests), "{}", set.requests);

    // Two stalls, ~10 requests each scheduled in the first half of the stall.
    let slow = count_at_least(&set.histogram, 50 * MS);
    assert!(
        slow >= 12,
        "only {slow} requests >= 50 ms from the intended time"
    );
    assert!(set.latency_us.p99 >= 60_000.0, "{:?}", set.latency_us);
    assert!(set.latency_us.max >= 95_000.0, "{:?}", set.latency_us);

    let slow_service = count_at_least(&ol.service_time_histogram, 50 * MS);
    // The stuck request of each stall (2), plus slack for a busy test machine.
    assert!(
        (1..=5).contains(&slow_service),
        "{slow_service} slow service times"
    );
    assert!(
        ol.service_time_us.p99 < set.latency_us.p99 / 2.0,
        "service {:?} latency {:?}",
        ol.service_time_us,
        set.latency_us
    );

    // The requests held back by the cap waited in the client: that is send lag.
    assert!(ol.send_lag_us.max >= 80_000.0, "{:?}", ol.send_lag_us);
    assert!(ol.generator_behind);
    assert!(rec.warnings.iter().any(|w| w.kind() == "schedule_lag"));
    assert_eq!(ol.send_lag_limit_us, 250.0);
}

#[test]
fn a_constant_rate_is_kept() {
    let server = RedisServer::start().unwrap();
    let mut cfg = tcp_config(server.port());
    cfg.threads = 2;
    cfg.clients = 4;
    cfg.pipeline = 8;
    cfg.budget = Budget::Duration(Duration::from_millis(1000));
    cfg.open_loop = Some(OpenLoop {
        rate_per_sec: 2000.0,
        arrivals: Arrivals::Constant,
    });
    let wl = tests_workload(&[TestName::Set], Some(1000), 0);
    let rec = run_quiet(&cfg, &wl);
    let ol = rec.open_loop.as_ref().unwrap();
    // Exactly the intended times in [0, 1 s): 2000, split over 4 connections.
    assert_eq!(rec.commands["SET"].requests + ol.unsent, 2000);
    assert_eq!(ol.unsent, 0);
    // Generous: the test machine may be busy with other work.
    assert!(ol.send_lag_us.p50 < 5000.0, "{:?}", ol.send_lag_us);
    assert!(
        (0.99..1.3).contains(&rec.duration_sec),
        "{}",
        rec.duration_sec
    );
    assert_eq!(hist_count(&ol.send_lag_histogram), 2000);
}

#[test]
fn a_request_budget_with_poisson_arrivals() {
    let server = RedisServer::start().unwrap();
    let mut cfg = tcp_config(server.port());
    cfg.clients = 3;
    cfg.budget = Budget::Requests(300);
    cfg.open_loop = Some(OpenLoop {
        rate_per_sec: 1000.0,
        arrivals: Arrivals::Poisson,
    });
    let wl = tests_workload(&[TestName::PingMbulk], None, 0);
    let rec = run_quiet(&cfg, &wl);
    assert_eq!(rec.commands["PING_MBULK"].requests, 300);
    // 300 arrivals at 1000/s take about 0.3 s.
    assert!(
        (0.15..0.7).contains(&rec.duration_sec),
        "{}",
        rec.duration_sec
    );
    let LoadModel::OpenLoop { arrivals, .. } = &rec.load_model else {
        panic!("{:?}", rec.load_model);
    };
    assert_eq!(arrivals, "poisson");
}

#[test]
fn warmup_requests_are_sent_but_not_recorded() {
    let server = RedisServer::start().unwrap();
    let mut cfg = tcp_config(server.port());
    cfg.clients = 2;
    cfg.pipeline = 4;
    cfg.warmup = Duration::from_millis(300);
    cfg.budget = Budget::Duration(Duration::from_millis(700));
    cfg.open_loop = Some(OpenLoop {
        rate_per_sec: 1000.0,
        arrivals: Arrivals::Constant,
    });
    let wl = tests_workload(&[TestName::Incr], None, 0);
    let rec = run_quiet(&cfg, &wl);
    let ol = rec.open_loop.as_ref().unwrap();
    // Intended times j ms for j in 0..1000: the first 300 are warm-up, 700 are measured.
    assert_eq!(rec.commands["INCR"].requests + ol.unsent, 700);
    let mut c = server.client().unwrap();
    let sent: u64 = c
        .cmd(&["GET", "counter:__rand_int__"])
        .unwrap()
        .as_text()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        sent,
        1000 - ol.unsent,
        "warm-up requests reached the server"
    );
}

#[test]
fn progress_carries_each_command_with_its_latencies() {
    let server = RedisServer::start().unwrap();
    let mut cfg = tcp_config(server.port());
    cfg.threads = 2;
    cfg.progress_commands = true;
    cfg.budget = Budget::Duration(Duration::from_millis(2500));
    cfg.open_loop = Some(OpenLoop {
        rate_per_sec: 4000.0,
        arrivals: Arrivals::Constant,
    });
    let wl = tests_workload(&[TestName::Set, TestName::Get], None, 1);
    let mut seen: Vec<resplab_engine::Progress> = Vec::new();
    let record =
        resplab_engine::run(&cfg, &wl, &StopToken::new(), &mut |p| seen.push(p.clone())).unwrap();
    let told: Vec<_> = seen.iter().filter(|p| !p.warming_up).collect();
    assert!(told.len() >= 4, "{} progress reports", told.len());
    for p in &told {
        assert_eq!(p.commands.len(), 1, "one command per phase");
        let c = &p.commands[0];
        // Counts and latencies come from the same snapshots.
        assert_eq!(c.latency.count(), c.requests, "{}", c.name);
        assert!(c.requests > 0);
        assert!(c.requests <= record.commands[&c.name].requests);
    }
    // Within a phase the figures only grow.
    for w in told.windows(2) {
        if w[0].phase == w[1].phase {
            assert!(w[1].commands[0].requests >= w[0].commands[0].requests);
        }
    }
}
