use super::*;
use crate::spec::{MixSpec, WorkloadKind};

fn plan(line: &str) -> MemtierPlan {
    match parse(&words(line)).unwrap() {
        Invocation::Run(p) => *p,
        other => panic!("{other:?}"),
    }
}

fn err(line: &str) -> String {
    parse(&words(line)).unwrap_err().to_string()
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

#[test]
fn defaults_are_memtiers() {
    let p = plan("");
    assert_eq!((p.threads, p.clients_per_thread), (4, 50));
    assert_eq!(p.connections(), 200);
    assert_eq!(p.length, RunLength::RequestsPerClient(10_000));
    assert_eq!(p.pipeline, 1);
    assert_eq!(p.run_count, 1);
    assert_eq!(p.connection.host, "localhost");
    assert_eq!(p.connection.port, 6379);
    assert_eq!(p.output.percentiles, vec![50.0, 99.0, 99.9]);
    assert_eq!(p.workload.seed, CONSTANT_SEED);
    assert_eq!(p.workload.kind, WorkloadKind::Mix(MixSpec::default()));
    assert!(!p.arbitrary_commands);
}

#[test]
fn counts_are_per_thread_and_per_client() {
    // The seed-004 style line: 320 connections of 10,000 requests each.
    let p = plan("--threads 32 --clients 10 --requests 10000");
    assert_eq!(p.connections(), 320);
    assert_eq!(p.length, RunLength::RequestsPerClient(10_000));
    let p = plan("-t 2 -c 3 --test-time=5");
    assert_eq!(p.connections(), 6);
    assert_eq!(p.length, RunLength::Seconds(5));
}

#[test]
fn the_last_value_wins() {
    let p = plan("--key-minimum 5 --key-minimum=7 -t 1 -t 3 --ratio 1:1 --ratio 0:1");
    match &p.workload.kind {
        WorkloadKind::Mix(m) => {
            assert_eq!(m.keys.minimum, 7);
            assert_eq!(m.ratio, Ratio { set: 0, get: 1 });
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.threads, 3);
    assert_eq!(p.echo.ratio, "0:1");
}

#[test]
fn command_ratio_and_pattern_belong_to_the_command_before() {
    let p = plan(
        "--command=SET__key__ --command-ratio 2 --command=GET --command-key-pattern=S --key-prefix k:",
    );
    // (templates without spaces keep the test's word split simple)
    let WorkloadKind::Commands(c) = &p.workload.kind else {
        panic!("{:?}", p.workload.kind)
    };
    assert_eq!(c.commands[0].ratio, 2);
    assert_eq!(c.commands[0].key_pattern, KeyPattern::Random);
    assert_eq!(c.commands[1].ratio, 1);
    assert_eq!(c.commands[1].key_pattern, KeyPattern::Sequential);
    assert_eq!(c.keys.prefix, "k:");
    assert!(p.arbitrary_commands);
    assert!(err("--command-ratio 2").contains("applies to the --command before it"));
}

#[test]
fn values_keys_and_outputs() {
    let p = plan(
        "--data-size-range=10-20 --key-pattern S:G --key-maximum 99 --key-zipf-exp 0.5 \
         --hide-histogram --print-percentiles 50,90,99.99 --json-out-file j.json -o out.txt \
         --hdr-file-prefix h -x 3 --print-all-runs --distinct-client-seed --randomize",
    );
    let WorkloadKind::Mix(m) = &p.workload.kind else {
        panic!()
    };
    assert_eq!(m.values, ValueSize::Range { min: 10, max: 20 });
    assert_eq!(
        (m.set_pattern, m.get_pattern),
        (KeyPattern::Sequential, KeyPattern::Gaussian)
    );
    assert_eq!(m.keys.maximum, 99);
    assert_eq!(p.echo.data_size_range, "10:20");
    // memtier echoes the data size it was given: none, with a range.
    assert_eq!(p.echo.data_size, 0);
    assert_eq!(plan("-d 100").echo.data_size, 100);
    assert_eq!(plan("").echo.data_size, 32);
    assert!(p.output.hide_histogram && p.output.print_all_runs);
    assert_eq!(p.output.percentiles, vec![50.0, 90.0, 99.99]);
    assert_eq!(p.output.out_file.as_deref(), Some("out.txt"));
    assert_eq!(p.run_count, 3);
    assert!(p.distinct_client_seed && p.randomize);
}

#[test]
fn connection_options() {
    let p = plan(
        "-s 127.0.0.1 -p 7000 -a user:pw --select-db 3 --tls --cacert ca.pem --tls-skip-verify \
         --sni example --cluster-mode -P resp3 --connection-timeout 2 --reconnect-on-error \
         --rate-limiting 100 --pipeline 8",
    );
    let c = &p.connection;
    assert_eq!((c.host.as_str(), c.port), ("127.0.0.1", 7000));
    assert_eq!(c.authenticate.as_deref(), Some("user:pw"));
    assert_eq!(c.select_db, Some(3));
    let tls = c.tls.as_ref().unwrap();
    assert_eq!(tls.cacert.as_deref(), Some("ca.pem"));
    assert!(tls.skip_verify);
    assert!(c.cluster && c.reconnect_on_error);
    assert_eq!(c.protocol, Protocol::Resp3);
    assert_eq!(c.connect_timeout_sec, Some(2));
    assert_eq!(p.rate_limit_per_connection, Some(100));
    assert_eq!(p.pipeline, 8);
    assert!(err("--cacert x").contains("need --tls"));
}

#[test]
fn default_valued_options_are_accepted_and_the_rest_refused_with_why() {
    plan(
        "--data-offset 0 --wait-ratio 1:0 --data-size-pattern R --command-stats-breakdown command",
    );
    for (line, why) in [
        ("--data-import f", "import"),
        ("--statsd-host h", "StatsD"),
        ("--multi-key-get 2", "multi get not implemented for redis"),
        ("-P memcache_text", "RESP only"),
        ("-4", "address family"),
    ] {
        let e = err(line);
        assert!(e.contains("is not supported by resplab memtier"), "{e}");
        assert!(e.contains(why), "{line}: {e}");
    }
}

#[test]
fn wait_ratio_puts_waits_among_the_mix_sets() {
    let wait = |line: &str| match plan(line).workload.kind {
        WorkloadKind::Mix(m) => m.wait,
        other => panic!("{other:?}"),
    };
    let w = wait("--wait-ratio 10:1 --num-slaves 3-1 --wait-timeout=10-50").unwrap();
    assert_eq!((w.sets, w.waits, w.sets_per_wait()), (10, 1, 11));
    assert_eq!((w.replicas_min, w.replicas_max), (1, 3));
    assert_eq!((w.timeout_ms_min, w.timeout_ms_max), (10, 50));
    // memtier's defaults: WAIT 0 0.
    let w = wait("--wait-ratio 1:1").unwrap();
    assert_eq!((w.replicas_max, w.timeout_ms_max), (0, 0));
    // No WAIT: a ratio without one, or --command lines (memtier skips its WAIT step).
    assert_eq!(wait("--wait-ratio 5:0"), None);
    assert_eq!(wait("--num-slaves 1-2"), None);
    let p = plan("--command=PING --wait-ratio 1:1");
    assert!(p.arbitrary_commands);
    // Echoed as memtier echoes them.
    let p = plan("--wait-ratio 2:1 --num-slaves 1-2 --wait-timeout 5-9");
    assert_eq!(
        (
            p.echo.wait_ratio.as_str(),
            p.echo.num_slaves.as_str(),
            p.echo.wait_timeout.as_str()
        ),
        ("2:1", "1:2", "5-9")
    );
    let e = plan("");
    assert_eq!(
        (e.echo.wait_ratio.as_str(), e.echo.wait_timeout.as_str()),
        ("0:0", "0-0")
    );
    // memtier's refusals.
    assert!(err("--wait-ratio 0:0").contains("invalid --wait-ratio '0:0'"));
    assert!(err("--wait-ratio 1").contains("SETS:WAITS"));
    assert!(err("--num-slaves 0-0").contains("invalid --num-slaves '0-0'"));
    assert!(err("--wait-timeout 5").contains("MIN-MAX"));
    assert!(err("--wait-ratio 1:1 --cluster-mode").contains("does not support --wait-ratio"));
}

#[test]
fn multi_key_get_runs_only_where_memtier_does() {
    // memtier aborts at the first GET of a redis-protocol mix with it; a mix of SETs
    // only and --command lines never get there.
    assert!(err("--multi-key-get 3").contains("multi get not implemented for redis yet"));
    assert!(err("--ratio 1:1 --multi-key-get=2").contains("MGET __key__ __key__"));
    assert_eq!(plan("--ratio 1:0 --multi-key-get 3").echo.multi_key_get, 3);
    assert!(plan("--command=PING --multi-key-get 3").arbitrary_commands);
    assert!(err("--multi-key-get 0").contains("invalid --multi-key-get '0'"));
    assert!(err("--ratio 1:0 --multi-key-get 2 --cluster-mode").contains("does not support"));
}

#[test]
fn expiry_range_gives_the_mix_sets_a_time_to_live() {
    let mix = |line: &str| match plan(line).workload.kind {
        WorkloadKind::Mix(m) => m,
        other => panic!("{other:?}"),
    };
    let e = mix("--expiry-range 10-100").expiry.unwrap();
    assert_eq!((e.min_sec, e.max_sec), (10, 100));
    // memtier swaps a range given high to low, and echoes it with a colon.
    let p = plan("--expiry-range=100-10");
    assert_eq!(p.echo.expiry_range, "10:100");
    assert_eq!(plan("").echo.expiry_range, "0:0");
    // Commands get no time to live from it (memtier's --command sends what it says).
    let p = plan("--command=PING --expiry-range 1-5");
    let WorkloadKind::Commands(_) = p.workload.kind else {
        panic!()
    };
    assert_eq!(p.echo.expiry_range, "1:5");
    for bad in ["0-0", "10", "a-5", "5-", "1:5", "-5"] {
        let e = err(&format!("--expiry-range={bad}"));
        assert!(
            e.starts_with(&format!("invalid --expiry-range '{bad}'")),
            "{e}"
        );
        assert!(e.contains("maximum of at least 1"), "{e}");
    }
}

#[test]
fn data_size_pattern_spreads_a_range_over_the_keys() {
    let values = |line: &str| match plan(line).workload.kind {
        WorkloadKind::Mix(m) => m.values,
        WorkloadKind::Commands(c) => c.values,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        values("--data-size-range 10-20 --data-size-pattern S --key-maximum 99"),
        ValueSize::ByKey { min: 10, max: 20 }
    );
    assert_eq!(
        values("--data-size-range 10-20 --data-size-pattern R"),
        ValueSize::Range { min: 10, max: 20 }
    );
    // Without a range memtier ignores the pattern.
    assert_eq!(
        values("-d 7 --data-size-pattern S"),
        ValueSize::Fixed { bytes: 7 }
    );
    assert_eq!(plan("--data-size-pattern S").echo.data_size_pattern, "S");
    // memtier sizes each __data__ of a command as if its key were 0.
    assert_eq!(
        values("--command=PING --data-size-range 10-20 --data-size-pattern S"),
        ValueSize::Fixed { bytes: 10 }
    );
    assert!(
        err("--command=PING --data-size-range 10-20 --data-size-pattern S --key-minimum 1")
            .contains("as if its key were 0")
    );
    assert!(
        err("--data-size-range 1-2 --data-size-pattern S --key-minimum 5 --key-maximum 5")
            .contains("expected --key-maximum above --key-minimum (found 5-5)")
    );
    assert!(err("--data-size-pattern s").starts_with("invalid --data-size-pattern 's'"));
    assert!(err("-d 5 --data-size-range 1-2").contains("--data-size cannot be used with"));
    assert!(err("--data-size-list 1:1 --data-size-range 1-2")
        .contains("--data-size-list cannot be used with --data-size-range"));
}

#[test]
fn bad_values_name_the_option() {
    assert_eq!(
        err("--threads 0"),
        "invalid --threads '0': expected a whole number from 1 to 1024"
    );
    assert!(err("--ratio 1-2").starts_with("invalid --ratio '1-2'"));
    assert!(err("--print-percentiles 50,x").starts_with("invalid --print-percentiles"));
    assert!(err("-P http").contains("redis, resp2 or resp3"));
    assert!(err("-n 5 --test-time 5").contains("mutually exclusive"));
    assert!(err("--key-minimum 9 --key-maximum 3").contains("--key-minimum"));
    assert_eq!(
        err("-t 1024 -c 100000"),
        "-t 1024 × -c 100000 is 102400000 connections: expected at most 100000 (memtier counts -c per thread)"
    );
}

#[test]
fn help_and_version() {
    assert_eq!(parse(&words("-t 2 --help")).unwrap(), Invocation::Help);
    assert_eq!(parse(&words("-v")).unwrap(), Invocation::Version);
}

#[test]
fn every_option_of_the_table_is_handled_or_refused() {
    // Each option with a plausible value either parses or is refused by name: none
    // falls through to "not handled".
    for name in args::names() {
        let line = format!("--{name}={}", sample_value(name));
        let line = if args::takes_value(name) {
            line
        } else {
            format!("--{name}")
        };
        let extra = if name.starts_with("command-") {
            vec!["--command=PING".to_string(), line]
        } else if matches!(
            name,
            "cert" | "key" | "cacert" | "sni" | "tls-protocols" | "tls-skip-verify"
        ) {
            vec!["--tls".to_string(), line]
        } else {
            vec![line]
        };
        if let Err(e) = parse(&extra) {
            assert!(!e.to_string().contains("not handled"), "{name}: {e}");
        }
    }
}

fn sample_value(name: &str) -> &'static str {
    match name {
        "ratio" | "wait-ratio" => "1:1",
        "key-pattern" => "R:R",
        "command-key-pattern" | "data-size-pattern" | "monitor-pattern" => "R",
        "data-size-range" | "expiry-range" | "num-slaves" | "wait-timeout" => "1-2",
        "data-size-list" => "10:1",
        "protocol" => "redis",
        "command-stats-breakdown" => "command",
        "print-percentiles" | "key-stddev" | "key-median" => "1",
        "key-zipf-exp" => "0.5",
        "command" => "PING",
        _ => "1",
    }
}

#[test]
fn all_keys_counts_as_memtier() {
    let p = plan("-n allkeys --key-maximum 1000 --key-minimum 1");
    assert_eq!(p.length, RunLength::RequestsPerClient(999));
    assert!(p.all_keys);
    let p = plan("--key-pattern P:P -n allkeys --key-maximum 9999 -t 2 -c 5");
    assert_eq!(p.length, RunLength::RequestsPerClient(1000));
    assert!(!plan("-n allkeys -n 5").all_keys);
}

#[test]
fn monitor_input_fills_the_placeholders_of_command() {
    let file = "OK\n1.0 [0 127.0.0.1:1] \"set\" \"a\" \"1\"\n1.1 [0 lua] \"HGET\" \"h\" \"f\"\n";
    let read = |path: &str| -> std::io::Result<String> {
        match path {
            "m.txt" => Ok(file.to_string()),
            "bad.txt" => Ok("1.0 [0 x:1] \"GET\" \"k\n".to_string()),
            _ => Err(std::io::Error::from(std::io::ErrorKind::NotFound)),
        }
    };
    let run = |line: &str| match parse_reading(&words(line), &read) {
        Ok(Invocation::Run(p)) => Ok(p),
        Ok(other) => panic!("{other:?}"),
        Err(e) => Err(e.to_string()),
    };
    let p = run("--monitor-input=m.txt --command=__monitor_line@__ --command=__monitor_line2__ --monitor-pattern r").unwrap();
    let WorkloadKind::Commands(c) = &p.workload.kind else {
        panic!("{:?}", p.workload.kind)
    };
    let replay = c.commands[0].replay.as_ref().unwrap();
    assert!(replay.random && replay.lines.len() == 2);
    assert_eq!(c.commands[1].template, "\"HGET\" \"h\" \"f\"");
    assert_eq!(p.command_names(), ["HGET", "SET"]);
    p.compile().unwrap();
    let e = run("--monitor-input=bad.txt --command=__monitor_line1__").unwrap_err();
    assert!(
        e.starts_with("--monitor-input bad.txt:1: expected a MONITOR line"),
        "{e}"
    );
    let e = run("--monitor-input=none.txt --command=__monitor_line1__").unwrap_err();
    assert!(e.contains("none.txt: cannot be read"), "{e}");
    let e = run("--command=__monitor_line1__").unwrap_err();
    assert!(e.contains("needs --monitor-input"), "{e}");
    let e = run("--monitor-input=m.txt --command=__monitor_line3__").unwrap_err();
    assert!(e.contains("__monitor_line1__ to __monitor_line2__"), "{e}");
    let e = run("--monitor-input=m.txt --monitor-pattern=X").unwrap_err();
    assert!(e.contains("invalid --monitor-pattern 'X'"), "{e}");
    let e = run("--monitor-input=m.txt --cluster-mode").unwrap_err();
    assert!(e.contains("does not support --monitor-input"), "{e}");
}

#[test]
fn scan_incremental_iteration_follows_the_one_scan_command() {
    let line = |extra: &str| {
        let mut w = vec!["--command=SCAN 0 COUNT 10".to_string()];
        w.extend(words(extra));
        parse(&w)
    };
    let Ok(Invocation::Run(p)) =
        line("--scan-incremental-iteration --scan-incremental-max-iterations 5")
    else {
        panic!()
    };
    let WorkloadKind::Commands(c) = &p.workload.kind else {
        panic!()
    };
    assert_eq!(c.commands[0].follow_cursor, Some(5));
    assert_eq!(p.command_names(), ["SCAN 0", "SCAN <cursor>"]);
    let w = p.compile().unwrap();
    assert_eq!(w.phases()[0].commands, ["SCAN 0", "SCAN <cursor>"]);
    assert!(w.generator(0, 0).follows_cursor());
    // Without the flag the maximum changes nothing.
    let Ok(Invocation::Run(p)) = line("--scan-incremental-max-iterations 5") else {
        panic!()
    };
    assert_eq!(p.command_names(), ["SCAN"]);
    let e = |extra: &str| line(extra).unwrap_err().to_string();
    assert!(e("--scan-incremental-iteration --pipeline 2").contains("needs --pipeline 1"));
    assert!(e("--scan-incremental-iteration --command=PING").contains("exactly one --command"));
    assert!(err("--scan-incremental-iteration").contains("exactly one --command"));
    assert!(err("--scan-incremental-iteration --command=PING").contains("a SCAN command"));
    assert!(err("--scan-incremental-iteration --command=SCAN").contains("needs a cursor"));
    assert!(e("--scan-incremental-iteration --cluster-mode").contains("--cluster-mode"));
    let e = parse(&[
        "--command=SCAN 0 MATCH __key__".to_string(),
        "--scan-incremental-iteration".to_string(),
    ])
    .unwrap_err();
    assert!(e.to_string().contains("placeholders"), "{e}");
}

#[test]
fn connection_life_options() {
    let p = plan("--reconnect-interval 7 --thread-conn-start-min-jitter-micros 10 --thread-conn-start-max-jitter-micros=50");
    assert_eq!(p.life.reconnect_interval, Some(7));
    assert_eq!((p.life.jitter_min_us, p.life.jitter_max_us), (10, 50));
    assert_eq!(plan("").life, super::super::ConnectionLife::default());
    // memtier's refusals: a zero interval, cluster mode, a minimum above the maximum.
    assert!(err("--reconnect-interval 0").contains("greater than zero"));
    assert!(err("--reconnect-interval x").contains("--reconnect-interval"));
    assert!(err("--reconnect-interval 5 --cluster-mode").contains("--cluster-mode"));
    let e = err("--thread-conn-start-min-jitter-micros 20");
    assert!(e.contains("cannot be greater than"), "{e}");
}

#[test]
fn staircase_options_follow_memtiers_rules() {
    let p = plan("-c 10 --clients-start 2 --clients-step 3 --step-duration 5 --test-time 30");
    let s = p.life.staircase.unwrap();
    assert_eq!((s.start, s.step, s.step_sec), (2, 3, 5));
    for (line, says) in [
        (
            "--clients-start 2 --test-time 5",
            "must all be specified together",
        ),
        (
            "--clients-start 2 --clients-step 1 --step-duration 1 -n 100",
            "--requests cannot be used",
        ),
        (
            "--clients-start 2 --clients-step 1 --step-duration 1",
            "--test-time is required",
        ),
        (
            "-c 4 --clients-start 4 --clients-step 1 --step-duration 1 --test-time 5",
            "must be less than --clients (4)",
        ),
        ("--clients-start 0", "greater than zero"),
        (
            "--clients-start 1 --clients-step 1 --step-duration 1 --test-time 5 --cluster-mode",
            "--cluster-mode",
        ),
    ] {
        let e = err(line);
        assert!(e.contains(says), "{line}: {e}");
    }
}
