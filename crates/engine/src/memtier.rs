//! A memtier_benchmark command line ([`resplab_workload::memtier::MemtierPlan`]) as the
//! engine's [`RunConfig`]: where to connect and how, and memtier's run shape in the
//! engine's terms.
//!
//! The counts translate exactly: memtier's `-t` threads × `-c` clients per thread are
//! the engine's threads and connections (which it spreads evenly over the threads, as
//! memtier does), and `-n` requests per client become that many requests per connection
//! (the engine splits a request budget exactly over the connections).
//!
//! `--rate-limiting N` caps each connection at N requests per second in memtier, which
//! keeps sending from the connection as a closed loop and times each request from its
//! actual send. resplab runs it as its open loop at N × connections requests per second
//! on a constant schedule: the server sees the same rate, but latency is timed from each
//! request's intended send time, so a stall shows in the figures instead of being
//! hidden by the client waiting (no coordinated omission).

use crate::config::{
    Arrivals, Budget, ConnectJitter, Credentials, OpenLoop, Protocol, Ramp, Renew, RunConfig,
    Target, TlsOptions,
};
use crate::error::EngineError;
use crate::uri;
use resplab_workload::memtier::{self as mt, MemtierPlan, RunLength};
use std::path::PathBuf;
use std::time::Duration;

/// The engine configuration of a memtier plan (its seed is the plan's workload seed).
///
/// # Errors
/// A `--uri` that does not parse, or a combination [`RunConfig::validate`] refuses.
pub fn run_config(plan: &MemtierPlan) -> Result<RunConfig, EngineError> {
    let c = &plan.connection;
    let mut config = RunConfig::new(target(c));
    config.credentials = c.authenticate.as_deref().map(credentials);
    config.db = c.select_db;
    config.tls = c.tls.as_ref().map(tls);
    if let Some(u) = &c.uri {
        apply_uri(&mut config, u)?;
    }
    config.protocol = match c.protocol {
        mt::Protocol::Resp2 => Protocol::Resp2,
        mt::Protocol::Resp3 => Protocol::Resp3,
    };
    config.cluster = c.cluster;
    if let Some(secs) = c.connect_timeout_sec {
        config.connect_timeout = Duration::from_secs(secs);
    }
    let connections = plan.connections();
    config.threads = plan.threads;
    config.clients = u32::try_from(connections).unwrap_or(u32::MAX);
    config.pipeline = plan.pipeline;
    config.budget = match plan.length {
        RunLength::RequestsPerClient(n) => Budget::Requests(n.saturating_mul(connections)),
        RunLength::Seconds(s) => Budget::Duration(Duration::from_secs(s)),
    };
    config.open_loop = plan.rate_limit_per_connection.map(|r| OpenLoop {
        rate_per_sec: r as f64 * connections as f64,
        arrivals: Arrivals::Constant,
    });
    config.seed = plan.workload.seed;
    if let resplab_workload::WorkloadKind::Mix(m) = &plan.workload.kind {
        if let Some(w) = &m.wait {
            // A WAIT the server cannot satisfy blocks for its whole timeout: give it
            // that long before calling it lost.
            let blocked = Duration::from_millis(w.timeout_ms_max) + Duration::from_secs(5);
            config.request_timeout = config.request_timeout.max(blocked);
        }
    }
    config.renew = plan.life.reconnect_interval.map(|every| Renew {
        every,
        after_last: false,
    });
    config.ramp = plan.life.staircase.map(|s| Ramp {
        start: s.start,
        step: s.step,
        every: Duration::from_secs(s.step_sec),
    });
    config.connect_jitter = (plan.life.jitter_max_us > 0).then(|| ConnectJitter {
        min: Duration::from_micros(plan.life.jitter_min_us),
        max: Duration::from_micros(plan.life.jitter_max_us),
    });
    config.validate()?;
    Ok(config)
}

/// memtier's `"configuration"` object of `--json-out-file`: its options with memtier's
/// keys and value forms. A password is never written: `"authenticate"` says only
/// whether credentials were given.
pub fn configuration(plan: &MemtierPlan) -> serde_json::Value {
    let c = &plan.connection;
    let e = &plan.echo;
    let tls = c.tls.clone().unwrap_or_default();
    let flag = |b: bool| if b { "true" } else { "false" };
    let (requests, test_time) = match plan.length {
        RunLength::RequestsPerClient(n) => (n, 0),
        RunLength::Seconds(s) => (0, s),
    };
    use serde_json::{json, Value};
    let protocol = match c.protocol {
        mt::Protocol::Resp2 => "redis",
        mt::Protocol::Resp3 => "resp3",
    };
    let uri = c.uri.as_deref().map(uri::redact).unwrap_or_default();
    let auth = if c.authenticate.is_some() {
        "(given, not recorded)"
    } else {
        ""
    };
    let pairs: Vec<(&str, Value)> = vec![
        ("server", json!(c.host)),
        ("port", json!(c.port)),
        ("uri", json!(uri)),
        ("unix socket", json!(c.unix_socket)),
        ("address family", json!("Unspecified")),
        ("protocol", json!(protocol)),
        ("out_file", json!(plan.output.out_file)),
        ("tls", json!(flag(c.tls.is_some()))),
        ("cert", json!(tls.cert)),
        ("key", json!(tls.key)),
        ("cacert", json!(tls.cacert)),
        ("tls_skip_verify", json!(flag(tls.skip_verify))),
        ("sni", json!(tls.sni)),
        ("client_stats", Value::Null),
        ("run_count", json!(plan.run_count)),
        ("debug", json!(0)),
        ("requests", json!(requests)),
        (
            "rate_limit",
            json!(plan.rate_limit_per_connection.unwrap_or(0)),
        ),
        ("clients", json!(plan.clients_per_thread)),
        ("threads", json!(plan.threads)),
        ("test_time", json!(test_time)),
        ("ratio", json!(e.ratio)),
        ("pipeline", json!(plan.pipeline)),
        ("data_size", json!(e.data_size)),
        ("data_offset", json!(0)),
        ("random_data", json!(flag(e.random_data))),
        ("data_size_range", json!(e.data_size_range)),
        ("data_size_list", json!(e.data_size_list)),
        ("data_size_pattern", json!(e.data_size_pattern)),
        ("expiry_range", json!(e.expiry_range)),
        ("data_import", Value::Null),
        ("data_verify", json!("false")),
        ("verify_only", json!("false")),
        ("generate_keys", json!("false")),
        ("key_prefix", json!(e.key_prefix)),
        ("key_minimum", json!(e.key_minimum)),
        ("key_maximum", json!(e.key_maximum)),
        ("key_pattern", json!(e.key_pattern)),
        ("key_stddev", json!(e.key_stddev)),
        ("key_median", json!(e.key_median)),
        ("key_zipf_exp", json!(e.key_zipf_exp)),
        (
            "reconnect_interval",
            json!(plan.life.reconnect_interval.unwrap_or(0)),
        ),
        (
            "connection_timeout",
            json!(c.connect_timeout_sec.unwrap_or(0)),
        ),
        (
            "thread_conn_start_min_jitter_micros",
            json!(plan.life.jitter_min_us),
        ),
        (
            "thread_conn_start_max_jitter_micros",
            json!(plan.life.jitter_max_us),
        ),
        ("multi_key_get", json!(e.multi_key_get)),
        ("authenticate", json!(auth)),
        ("select-db", json!(c.select_db.unwrap_or(0))),
        ("no-expiry", json!("false")),
        ("wait-ratio", json!(e.wait_ratio)),
        ("num-slaves", json!(e.num_slaves)),
        ("wait-timeout", json!(e.wait_timeout)),
        ("print-all-runs", json!(flag(plan.output.print_all_runs))),
    ];
    let mut pairs = pairs;
    if let Some(s) = plan.life.staircase {
        pairs.push(("clients_start", json!(s.start)));
        pairs.push(("clients_step", json!(s.step)));
        pairs.push(("step_duration", json!(s.step_sec)));
    }
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn target(c: &mt::Connection) -> Target {
    match &c.unix_socket {
        Some(path) => Target::Unix {
            path: PathBuf::from(path),
        },
        None => Target::Tcp {
            host: c.host.clone(),
            port: c.port,
        },
    }
}

/// `-a PASSWORD` or `-a USER:PASSWORD` (memtier splits at the first colon).
fn credentials(text: &str) -> Credentials {
    match text.split_once(':') {
        Some((user, password)) => Credentials {
            user: Some(user.to_string()),
            password: password.to_string(),
        },
        None => Credentials {
            user: None,
            password: text.to_string(),
        },
    }
}

fn tls(t: &mt::Tls) -> TlsOptions {
    TlsOptions {
        ca_file: t.cacert.as_ref().map(PathBuf::from),
        cert: t.cert.as_ref().map(PathBuf::from),
        key: t.key.as_ref().map(PathBuf::from),
        sni: t.sni.clone(),
        insecure: t.skip_verify,
        protocols: t.protocols.clone(),
        ..TlsOptions::default()
    }
}

/// `-u redis://user:password@host:port/db` (or `rediss://`): what the URI names
/// replaces the other options, as in memtier.
fn apply_uri(config: &mut RunConfig, text: &str) -> Result<(), EngineError> {
    let u = uri::parse(text).map_err(|e| EngineError::InvalidConfig {
        field: "--uri",
        expected: format!("{} ({})", uri::URI_FORM, e.why),
        found: e.shown,
    })?;
    config.target = Target::Tcp {
        host: u.host.clone(),
        port: u.port,
    };
    if let (user, Some(password)) = u.user_password() {
        config.credentials = Some(Credentials { user, password });
    }
    if u.db.is_some() {
        config.db = u.db;
    }
    if u.tls && config.tls.is_none() {
        config.tls = Some(TlsOptions::default());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use resplab_workload::memtier::{parse, Invocation};

    fn config(line: &str) -> RunConfig {
        let argv: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        let Invocation::Run(plan) = parse(&argv).unwrap() else {
            panic!()
        };
        run_config(&plan).unwrap()
    }

    #[test]
    fn memtier_counts_become_engine_totals() {
        let c = config("-s 127.0.0.1 -p 7001 -t 3 -c 10 -n 500 --pipeline 4");
        assert_eq!(c.target.to_string(), "127.0.0.1:7001");
        assert_eq!((c.threads, c.clients, c.pipeline), (3, 30, 4));
        assert_eq!(c.budget, Budget::Requests(15_000));
        assert!(c.open_loop.is_none());
        let c = config("-t 2 -c 5 --test-time 7 --rate-limiting 100");
        assert_eq!(c.budget, Budget::Duration(Duration::from_secs(7)));
        assert_eq!(c.open_loop.unwrap().rate_per_sec, 1000.0);
    }

    #[test]
    fn connection_words() {
        let c = config("-a alice:pw:x --select-db 2 -P resp3 --connection-timeout 3");
        let cred = c.credentials.unwrap();
        assert_eq!(cred.user.as_deref(), Some("alice"));
        assert_eq!(cred.password, "pw:x");
        assert_eq!(c.db, Some(2));
        assert_eq!(c.protocol, Protocol::Resp3);
        assert_eq!(c.connect_timeout, Duration::from_secs(3));
        let c = config("-S /tmp/r.sock -a pw");
        assert_eq!(c.target.to_string(), "unix:/tmp/r.sock");
        assert!(c.credentials.unwrap().user.is_none());
        let c = config("-s ignored -u rediss://bob:pw@10.0.0.1:7000/4");
        assert_eq!(c.target.to_string(), "10.0.0.1:7000");
        assert_eq!(c.db, Some(4));
        assert!(c.tls.is_some());
        let c = config("--tls --tls-skip-verify --sni name --cacert ca.pem");
        let t = c.tls.unwrap();
        assert!(t.insecure);
        assert_eq!(t.sni.as_deref(), Some("name"));
    }
}
