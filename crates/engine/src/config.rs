//! [`RunConfig`]: the typed, validated description of one load run.
//!
//! The command line (or an experiment file) is resolved into a `RunConfig` by the `cli`
//! crate; the engine never sees a raw flag. Every field has a type that rules out most
//! nonsense (a [`Target`] is a TCP address or a socket path, a [`Budget`] is a request
//! count or a duration, never both), and [`RunConfig::validate`] checks the ranges that
//! types cannot express. [`crate::run`] validates again before it starts, so a config
//! built by hand cannot bypass the checks.
//!
//! Credentials are held in [`Credentials`], whose `Debug` output is redacted and which is
//! not serializable. [`RunConfig::to_public_json`] is the form that goes into result files:
//! it says whether authentication was used, never with what.

use crate::error::EngineError;
use serde_json::json;
use std::fmt;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// Where the server listens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A TCP address; `host` is a name or an IP address.
    Tcp { host: String, port: u16 },
    /// A Unix domain socket.
    Unix { path: PathBuf },
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Target::Tcp { host, port } => write!(f, "{host}:{port}"),
            Target::Unix { path } => write!(f, "unix:{}", path.display()),
        }
    }
}

/// TLS settings of the connections (`--tls`, `rediss://`). Verification is on unless
/// `insecure`; with no CA given, the system's CA certificates are trusted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// `--cacert`: PEM file of CA certificates to trust.
    pub ca_file: Option<PathBuf>,
    /// `--cacertdir`: folder of PEM CA certificates.
    pub ca_dir: Option<PathBuf>,
    /// `--cert`/`--key`: client certificate chain and key (mutual TLS).
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    /// `--sni`: the server name sent and verified (default: the host).
    pub sni: Option<String>,
    /// `--insecure`: accept any server certificate.
    pub insecure: bool,
    /// `--tls-protocols`: `TLSv1.2`, `TLSv1.3` (empty: both).
    pub protocols: Vec<String>,
    /// `--tls-ciphersuites`: rustls suite names (empty: rustls' defaults).
    pub ciphersuites: Vec<String>,
}

/// User name and password for `AUTH` (or `HELLO 3 AUTH`). Never printed or serialized.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// ACL user; `None` authenticates as the default user with a password only.
    pub user: Option<String>,
    /// The password.
    pub password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Credentials { <redacted> }")
    }
}

/// The protocol version spoken after connecting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Protocol {
    /// RESP2; no handshake beyond `AUTH`/`SELECT`.
    #[default]
    Resp2,
    /// RESP3, negotiated with `HELLO 3` (carrying `AUTH` when credentials are given).
    Resp3,
}

/// The wire format of the connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Wire {
    /// RESP (version 2 or 3, see [`Protocol`]).
    #[default]
    Resp,
    /// RESPB, the binary encoding (`--protocol respb`): the handshake, then every request
    /// as a RESPB frame on mux id 0, replies in RESPB's reply encoding. RESP2 only, no TLS,
    /// no cluster mode.
    Respb,
}

impl Wire {
    /// `"resp"` or `"respb"`.
    pub fn name(self) -> &'static str {
        match self {
            Wire::Resp => "resp",
            Wire::Respb => "respb",
        }
    }
}

/// How much load each phase of the workload runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// This many requests per phase (`-n`), split exactly over the connections.
    Requests(u64),
    /// This long per phase (`--test-time`), measured part only (warm-up comes on top).
    Duration(Duration),
}

/// Arrival process of an open-loop schedule: the workload crate's, the one type for
/// bench flags, experiment files and the engine's schedules.
pub use resplab_workload::Arrivals;

/// Open-loop load: a global schedule of intended send times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpenLoop {
    /// Requests per second over all connections.
    pub rate_per_sec: f64,
    pub arrivals: Arrivals,
}

/// What to do when a connection drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReconnectPolicy {
    /// Wait before the first attempt; doubled after each failed attempt.
    pub initial_backoff: Duration,
    /// Longest wait between attempts.
    pub max_backoff: Duration,
    /// Without a successful reconnect for this long, the server counts as lost and the
    /// run ends with its partial results.
    pub give_up_after: Duration,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            initial_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(500),
            give_up_after: Duration::from_secs(5),
        }
    }
}

/// Connections closed and opened again after a number of requests (memtier's
/// `--reconnect-interval`, redis-benchmark's `-k 0`, bench's `--reconnect-every`).
///
/// A connection sends at most `every` requests on one socket: at the boundary it stops
/// filling its pipeline, waits for the replies, closes the socket and opens a new one
/// (with the configuration's `AUTH`/`SELECT`/`HELLO` set-up), then goes on. Requests are
/// timed from their send on the new socket, so the connect and set-up time is in no
/// latency, as in memtier_benchmark and redis-benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Renew {
    /// Requests per socket (at least 1).
    pub every: u64,
    /// Also open a new connection after a connection's last request, unless it is the
    /// last connection of the phase to finish (redis-benchmark's `-k 0`, which opens a
    /// fresh client after every reply but the run's last). `false`: a connection whose
    /// budget is spent stays as it is (memtier).
    pub after_last: bool,
}

/// A random pause between opening one connection of a worker thread and the next, before
/// the load starts (memtier's `--thread-conn-start-min-jitter-micros` and
/// `--thread-conn-start-max-jitter-micros`): uniform from `min` to `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectJitter {
    pub min: Duration,
    pub max: Duration,
}

/// A staircase ramp-up (memtier's `--clients-start`, `--clients-step`,
/// `--step-duration`): each worker thread opens `start` connections before the load
/// starts and `step` more every `every`, up to its share of the run's connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ramp {
    /// Connections per thread at the start.
    pub start: u32,
    /// Connections per thread added at each step.
    pub step: u32,
    /// Time between steps.
    pub every: Duration,
}

/// How long a run waits by default for a cluster to be ready (`--cluster-wait`).
pub const DEFAULT_CLUSTER_WAIT: Duration = Duration::from_secs(5);

/// Everything the engine needs to run a workload against a server.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    pub target: Target,
    pub credentials: Option<Credentials>,
    /// `Some`: connections speak TLS.
    pub tls: Option<TlsOptions>,
    /// `SELECT` this database after connecting (None: stay on the server's default).
    pub db: Option<u32>,
    pub protocol: Protocol,
    /// RESP or RESPB.
    pub wire: Wire,
    /// Worker threads, each with its own event loop (at most `clients`).
    pub threads: u32,
    /// Connections in total, spread as evenly as possible over the threads.
    pub clients: u32,
    /// Most requests in flight per connection.
    pub pipeline: u32,
    pub budget: Budget,
    /// Load before each phase's measured part that is not recorded.
    pub warmup: Duration,
    /// `Some` for open loop; `None` for closed loop.
    pub open_loop: Option<OpenLoop>,
    /// The master seed every random stream is derived from.
    pub seed: u64,
    /// Limit for establishing a connection and its set-up.
    pub connect_timeout: Duration,
    /// A request without a reply for this long counts as an error and resets its
    /// connection (a server that stops answering cannot hang a run).
    pub request_timeout: Duration,
    pub reconnect: ReconnectPolicy,
    /// Wall-clock time at which the load begins (`--start-at`): connections are made
    /// first, then the run waits for this moment, so that several generator processes
    /// start together. `None`: start as soon as the connections are ready.
    pub start_at: Option<SystemTime>,
    /// Keep each series interval's histogram and wall-clock time in the record (shard
    /// runs, so that their series merge exactly).
    pub series_histograms: bool,
    /// `--cluster`: the target must be a Redis Cluster node (the run fails otherwise).
    /// Without it, cluster mode is still used when the target says `cluster_enabled:1`.
    pub cluster: bool,
    /// `--read-from-replicas`: cluster mode sends read-only commands to replicas (after
    /// `READONLY`), spreading the clients over each master's replicas.
    pub read_from_replicas: bool,
    /// Cluster mode: how long the set-up waits for every master to say
    /// `cluster_state:ok` and agree on the slot map before the run is refused.
    pub cluster_wait: Duration,
    /// Progress reports carry each command's replies, errors and latency histogram
    /// ([`crate::CommandProgress`]), for a live metrics endpoint. Off by default: the
    /// workers then copy no per-command histogram ten times a second.
    pub progress_commands: bool,
    /// Every connection sends `CLIENT TRACKING on` after its set-up (redis-benchmark's
    /// `--enable-tracking`); invalidation pushes that arrive are skipped, as any push.
    pub client_tracking: bool,
    /// `Some`: every connection is closed and opened again after a number of requests.
    pub renew: Option<Renew>,
    /// `Some`: a random pause between opening a thread's connections.
    pub connect_jitter: Option<ConnectJitter>,
    /// `Some`: connections are added in steps during the run.
    pub ramp: Option<Ramp>,
}

impl RunConfig {
    /// A closed-loop configuration with redis-benchmark's defaults: 50 connections,
    /// one thread, no pipelining, 100 000 requests per phase, no warm-up.
    pub fn new(target: Target) -> Self {
        RunConfig {
            target,
            credentials: None,
            tls: None,
            db: None,
            protocol: Protocol::Resp2,
            wire: Wire::Resp,
            threads: 1,
            clients: 50,
            pipeline: 1,
            budget: Budget::Requests(100_000),
            warmup: Duration::ZERO,
            open_loop: None,
            seed: 0,
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            reconnect: ReconnectPolicy::default(),
            start_at: None,
            series_histograms: false,
            cluster: false,
            read_from_replicas: false,
            cluster_wait: DEFAULT_CLUSTER_WAIT,
            progress_commands: false,
            client_tracking: false,
            renew: None,
            connect_jitter: None,
            ramp: None,
        }
    }

    /// Threads actually used: never more than there are connections.
    pub fn effective_threads(&self) -> u32 {
        self.threads.min(self.clients).max(1)
    }

    /// Checks ranges and combinations that the types cannot express.
    ///
    /// # Errors
    /// [`EngineError::InvalidConfig`] naming the field, its value and what was expected.
    pub fn validate(&self) -> Result<(), EngineError> {
        fn bad(field: &'static str, expected: &str, found: impl fmt::Display) -> EngineError {
            EngineError::InvalidConfig {
                field,
                expected: expected.to_string(),
                found: found.to_string(),
            }
        }
        if self.threads == 0 || self.threads > 1024 {
            return Err(bad("threads", "1 to 1024", self.threads));
        }
        if self.clients == 0 || self.clients > 100_000 {
            return Err(bad("clients", "1 to 100000", self.clients));
        }
        if self.pipeline == 0 || self.pipeline > 1_000_000 {
            return Err(bad("pipeline", "1 to 1000000", self.pipeline));
        }
        match self.budget {
            Budget::Requests(0) => return Err(bad("requests", "at least 1", 0)),
            Budget::Duration(d) if d.is_zero() => {
                return Err(bad("test time", "more than 0 seconds", "0"))
            }
            _ => {}
        }
        if let Some(ol) = &self.open_loop {
            if !(ol.rate_per_sec.is_finite() && ol.rate_per_sec > 0.0) {
                return Err(bad(
                    "rate",
                    "a positive number of requests per second",
                    ol.rate_per_sec,
                ));
            }
            if ol.rate_per_sec > 1e9 {
                return Err(bad(
                    "rate",
                    "at most 1e9 requests per second",
                    ol.rate_per_sec,
                ));
            }
        }
        if let Target::Tcp { host, .. } = &self.target {
            if host.is_empty() {
                return Err(bad("host", "a host name or IP address", "an empty string"));
            }
        }
        for (field, d) in [
            ("connect timeout", self.connect_timeout),
            ("request timeout", self.request_timeout),
        ] {
            if d.is_zero() {
                return Err(bad(field, "more than 0 seconds", "0"));
            }
        }
        if self.wire == Wire::Respb {
            let with = if self.protocol == Protocol::Resp3 {
                Some("RESP3 (--resp 3)")
            } else if self.tls.is_some() {
                Some("TLS (--tls)")
            } else if self.cluster || self.read_from_replicas {
                Some("cluster mode (--cluster)")
            } else {
                None
            };
            if let Some(with) = with {
                return Err(bad(
                    "protocol",
                    "resp for that (RESPB here is plain TCP or a Unix socket, RESP2 set-up, one server)",
                    format!("respb with {with}"),
                ));
            }
        }
        self.validate_connection_life()?;
        if self.reconnect.give_up_after.is_zero() || self.reconnect.initial_backoff.is_zero() {
            return Err(bad(
                "reconnect policy",
                "a non-zero backoff and give-up time",
                format!("{:?}", self.reconnect),
            ));
        }
        Ok(())
    }

    /// [`Renew`] and [`ConnectJitter`]: a positive interval, not in cluster mode (whose
    /// connections to every node follow the routing, not a count), and a jitter whose
    /// minimum is not above its maximum.
    fn validate_connection_life(&self) -> Result<(), EngineError> {
        let bad = |field: &'static str, expected: &str, found: String| EngineError::InvalidConfig {
            field,
            expected: expected.to_string(),
            found,
        };
        if let Some(r) = self.renew {
            if r.every == 0 {
                return Err(bad("reconnect interval", "at least 1 request", "0".into()));
            }
            if self.cluster || self.read_from_replicas {
                return Err(bad(
                    "reconnect interval",
                    "a single server (cluster mode keeps its connections to every node)",
                    format!("every {} requests with cluster mode", r.every),
                ));
            }
        }
        if let Some(r) = self.ramp {
            self.validate_ramp(r)?;
        }
        if let Some(j) = self.connect_jitter {
            if j.min > j.max {
                return Err(bad(
                    "connection start jitter",
                    "a minimum not above the maximum",
                    format!("{} µs to {} µs", j.min.as_micros(), j.max.as_micros()),
                ));
            }
        }
        Ok(())
    }

    /// A staircase needs a test time, a single server, and room to climb: steps of at
    /// least one connection, at least one second apart (memtier counts whole seconds),
    /// starting below the connections per thread.
    fn validate_ramp(&self, r: Ramp) -> Result<(), EngineError> {
        let bad = |expected: &str, found: String| EngineError::InvalidConfig {
            field: "staircase",
            expected: expected.to_string(),
            found,
        };
        let shown = format!(
            "start {} step {} every {} s",
            r.start,
            r.step,
            r.every.as_secs_f64()
        );
        if r.start == 0 || r.step == 0 || r.every < Duration::from_secs(1) {
            return Err(bad(
                "a start and step of at least 1 connection, steps at least 1 s apart",
                shown,
            ));
        }
        if !matches!(self.budget, Budget::Duration(_)) {
            return Err(bad(
                "a test time (a staircase runs for a time, not a request count)",
                shown,
            ));
        }
        if self.cluster || self.read_from_replicas {
            return Err(bad("a single server (not cluster mode)", shown));
        }
        let per_thread = self.clients / self.effective_threads();
        if u64::from(r.start) * u64::from(self.effective_threads()) >= u64::from(self.clients) {
            return Err(bad(
                &format!("a start below the connections per thread ({per_thread})"),
                shown,
            ));
        }
        Ok(())
    }

    /// The configuration as it goes into result files: everything but the credentials
    /// (only whether there were any).
    pub fn to_public_json(&self) -> serde_json::Value {
        let target = match &self.target {
            Target::Tcp { host, port } => json!({"kind": "tcp", "host": host, "port": port}),
            Target::Unix { path } => json!({"kind": "unix", "path": path.display().to_string()}),
        };
        let budget = match self.budget {
            Budget::Requests(n) => json!({"requests": n}),
            Budget::Duration(d) => json!({"test_time_sec": d.as_secs_f64()}),
        };
        let load = match &self.open_loop {
            None => json!({"kind": "closed_loop"}),
            Some(ol) => json!({
                "kind": "open_loop",
                "rate_per_sec": ol.rate_per_sec,
                "arrivals": ol.arrivals.as_str(),
            }),
        };
        let mut out = json!({
            "target": target,
            "auth": self.credentials.is_some(),
            "db": self.db,
            "resp": match self.protocol { Protocol::Resp2 => 2, Protocol::Resp3 => 3 },
            "protocol": self.wire.name(),
            "threads": self.effective_threads(),
            "clients": self.clients,
            "pipeline": self.pipeline,
            "budget": budget,
            "warmup_sec": self.warmup.as_secs_f64(),
            "load": load,
            "seed": self.seed,
            "connect_timeout_sec": self.connect_timeout.as_secs_f64(),
            "request_timeout_sec": self.request_timeout.as_secs_f64(),
            "reconnect": {
                "initial_backoff_ms": self.reconnect.initial_backoff.as_secs_f64() * 1e3,
                "max_backoff_ms": self.reconnect.max_backoff.as_secs_f64() * 1e3,
                "give_up_after_sec": self.reconnect.give_up_after.as_secs_f64(),
            },
        });
        let start_at = self
            .start_at
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        if let (Some(at), Some(obj)) = (start_at, out.as_object_mut()) {
            obj.insert("start_at_unix_ms".into(), (at.as_millis() as u64).into());
        }
        if let (Some(r), Some(obj)) = (self.renew, out.as_object_mut()) {
            obj.insert(
                "renew".into(),
                json!({"every_requests": r.every, "after_last": r.after_last}),
            );
        }
        if let (Some(r), Some(obj)) = (self.ramp, out.as_object_mut()) {
            obj.insert(
                "staircase".into(),
                json!({"start_per_thread": r.start, "step_per_thread": r.step, "step_sec": r.every.as_secs_f64()}),
            );
        }
        if let (Some(j), Some(obj)) = (self.connect_jitter, out.as_object_mut()) {
            obj.insert(
                "connect_jitter_us".into(),
                json!({"min": j.min.as_micros() as u64, "max": j.max.as_micros() as u64}),
            );
        }
        if let (true, Some(obj)) = (self.client_tracking, out.as_object_mut()) {
            obj.insert("client_tracking".into(), true.into());
        }
        if let (true, Some(obj)) = (self.cluster || self.read_from_replicas, out.as_object_mut()) {
            obj.insert(
                "cluster".into(),
                json!({
                    "requested": self.cluster,
                    "read_from_replicas": self.read_from_replicas,
                    "wait_sec": self.cluster_wait.as_secs_f64(),
                }),
            );
        }
        if let (Some(t), Some(obj)) = (&self.tls, out.as_object_mut()) {
            obj.insert(
                "tls".into(),
                json!({
                    "ca_file": t.ca_file.as_ref().map(|p| p.display().to_string()),
                    "ca_dir": t.ca_dir.as_ref().map(|p| p.display().to_string()),
                    "client_certificate": t.cert.is_some(),
                    "sni": t.sni,
                    "insecure": t.insecure,
                    "protocols": t.protocols,
                    "ciphersuites": t.ciphersuites,
                }),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> RunConfig {
        RunConfig::new(Target::Tcp {
            host: "127.0.0.1".into(),
            port: 6379,
        })
    }

    #[test]
    fn defaults_are_valid() {
        cfg().validate().unwrap();
    }

    #[test]
    fn out_of_range_values_name_the_field() {
        let mut c = cfg();
        c.pipeline = 0;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("pipeline") && e.contains("1 to 1000000"), "{e}");
        let mut c = cfg();
        c.open_loop = Some(OpenLoop {
            rate_per_sec: f64::NAN,
            arrivals: Arrivals::Constant,
        });
        assert!(c.validate().unwrap_err().to_string().contains("rate"));
        let mut c = cfg();
        c.budget = Budget::Requests(0);
        assert!(c.validate().is_err());
    }

    #[test]
    fn respb_refuses_resp3_tls_and_cluster() {
        let mut c = cfg();
        c.wire = Wire::Respb;
        c.validate().unwrap();
        assert_eq!(c.to_public_json()["protocol"], "respb");
        let mut r3 = c.clone();
        r3.protocol = Protocol::Resp3;
        let mut tls = c.clone();
        tls.tls = Some(TlsOptions::default());
        let mut cl = c.clone();
        cl.cluster = true;
        for (bad, word) in [(r3, "RESP3"), (tls, "TLS"), (cl, "cluster")] {
            let e = bad.validate().unwrap_err().to_string();
            assert!(e.contains("respb with") && e.contains(word), "{e}");
        }
    }

    #[test]
    fn secrets_never_leave() {
        let mut c = cfg();
        c.credentials = Some(Credentials {
            user: Some("alice".into()),
            password: "hunter2-secret".into(),
        });
        let text = format!("{c:?} {}", c.to_public_json());
        assert!(!text.contains("hunter2-secret"), "{text}");
        assert!(!text.contains("alice"), "{text}");
        assert_eq!(c.to_public_json()["auth"], true);
    }

    #[test]
    fn renewals_and_jitter_are_checked_and_recorded() {
        let mut c = cfg();
        c.renew = Some(Renew {
            every: 10,
            after_last: false,
        });
        c.connect_jitter = Some(ConnectJitter {
            min: Duration::from_micros(5),
            max: Duration::from_micros(9),
        });
        c.validate().unwrap();
        let j = c.to_public_json();
        assert_eq!(j["renew"]["every_requests"], 10);
        assert_eq!(j["connect_jitter_us"]["max"], 9);
        let mut zero = c.clone();
        zero.renew = Some(Renew {
            every: 0,
            after_last: false,
        });
        assert!(zero.validate().is_err());
        let mut cluster = c.clone();
        cluster.cluster = true;
        let e = cluster.validate().unwrap_err().to_string();
        assert!(e.contains("reconnect interval"), "{e}");
        c.connect_jitter = Some(ConnectJitter {
            min: Duration::from_micros(10),
            max: Duration::from_micros(9),
        });
        assert!(c.validate().unwrap_err().to_string().contains("jitter"));
    }

    #[test]
    fn threads_never_exceed_clients() {
        let mut c = cfg();
        c.clients = 2;
        c.threads = 8;
        assert_eq!(c.effective_threads(), 2);
    }

    #[test]
    fn target_display() {
        assert_eq!(cfg().target.to_string(), "127.0.0.1:6379");
        let t = Target::Unix {
            path: "/tmp/r.sock".into(),
        };
        assert_eq!(t.to_string(), "unix:/tmp/r.sock");
    }
}
