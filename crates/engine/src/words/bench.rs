//! All the words of one load run together (`resplab bench`'s flags, as given) and the
//! one function that turns them into what the run needs: the engine's [`RunConfig`]
//! (target, credentials, TLS, load, shard and seed) and the [`WorkloadSpec`].

use super::connect::resolve_connection;
use super::load::{resolve_load, resolve_start};
use super::workload::{resolve_workload, spec_from_base64, WorkloadWords};
use super::WordsError;
use crate::{RunConfig, Target};
use resplab_results::ShardInfo;
use resplab_workload::WorkloadSpec;
use std::path::PathBuf;
use std::time::Duration;

/// The words of one load run as the user gave them, and `resplab bench`'s flags: each
/// field is the flag of the same name, its text unparsed (`None`, `false` or empty: not
/// given). The default gives none of them, not the command line's defaults.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BenchWords {
    // ---- target ----
    /// Server host name or address. With no target at all, a throwaway redis-server is
    /// started on a free loopback port.
    #[arg(short = 'h', long, help_heading = "Target")]
    pub host: Option<String>,
    /// Server port (1-65535).
    #[arg(short = 'p', long, help_heading = "Target")]
    pub port: Option<String>,
    /// Unix socket path (overrides host and port).
    #[arg(short = 's', long, help_heading = "Target")]
    pub socket: Option<PathBuf>,
    /// Server URI: redis://[user[:password]@]host[:port][/db], or rediss://… for TLS.
    #[arg(short = 'u', long, help_heading = "Target")]
    pub uri: Option<String>,
    /// Password for AUTH (also read from REDISCLI_AUTH). Never printed or stored.
    #[arg(
        short = 'a',
        long,
        env = "REDISCLI_AUTH",
        hide_env_values = true,
        help_heading = "Target"
    )]
    pub password: Option<String>,
    /// ACL user name for AUTH.
    #[arg(long, help_heading = "Target")]
    pub user: Option<String>,
    /// Database number to SELECT (alias --dbnum).
    #[arg(long, alias = "dbnum", help_heading = "Target")]
    pub select: Option<String>,
    /// Protocol version: 2, or 3 (negotiated with HELLO 3).
    #[arg(long, default_value = "2", help_heading = "Target")]
    pub resp: String,
    /// Wire protocol: resp, or respb (the binary encoding, to a RESPB port such as
    /// `resplab serve --respb-port`; RESP2 set-up, no TLS, no cluster mode).
    #[arg(
        long,
        default_value = "resp",
        value_name = "resp|respb",
        help_heading = "Target"
    )]
    pub protocol: String,
    // ---- TLS ----
    /// Connect with TLS (also implied by rediss://). The server's certificate is verified
    /// against --cacert/--cacertdir, or the system's CA certificates.
    #[arg(long, help_heading = "TLS")]
    pub tls: bool,
    /// PEM file of CA certificates to trust.
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    pub cacert: Option<PathBuf>,
    /// Folder of PEM CA certificates to trust.
    #[arg(long, value_name = "DIR", help_heading = "TLS")]
    pub cacertdir: Option<PathBuf>,
    /// Client certificate (PEM) for mutual TLS; needs --key.
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    pub cert: Option<PathBuf>,
    /// Private key (PEM) of --cert.
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    pub key: Option<PathBuf>,
    /// Server name to send and verify (default: the host).
    #[arg(long, value_name = "NAME", help_heading = "TLS")]
    pub sni: Option<String>,
    /// Accept any server certificate (no verification). Said in the output and stored in
    /// the result.
    #[arg(long, help_heading = "TLS")]
    pub insecure: bool,
    /// TLS versions to offer, comma-separated: TLSv1.2, TLSv1.3 (default both).
    #[arg(long, value_name = "LIST", help_heading = "TLS")]
    pub tls_protocols: Option<String>,
    /// TLS cipher suites to offer, comma-separated rustls names (e.g.
    /// TLS13_AES_128_GCM_SHA256).
    #[arg(long, value_name = "LIST", help_heading = "TLS")]
    pub tls_ciphersuites: Option<String>,

    // ---- cluster ----
    /// The target is a Redis Cluster node (alias --cluster-mode): read the topology
    /// (CLUSTER SHARDS, or CLUSTER SLOTS), send each request to the master of its key's
    /// slot, follow MOVED and ASK. Each of the -c clients connects to every master, so
    /// every master has -c connections. Without this flag a target that says
    /// cluster_enabled:1 is run in cluster mode anyway; with it, one that does not is
    /// an error.
    #[arg(long, alias = "cluster-mode", help_heading = "Cluster")]
    pub cluster: bool,
    /// Cluster: send read-only commands (GET, MGET, LRANGE, …) to replicas after
    /// READONLY, each client to one replica of the key's master.
    #[arg(long, help_heading = "Cluster")]
    pub read_from_replicas: bool,
    /// Cluster: wait up to DURATION (500ms, 5s, 1m) for every master to say
    /// cluster_state:ok and agree on the slot map; then the run is refused (exit 2),
    /// naming the node and its state.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "5s",
        help_heading = "Cluster"
    )]
    pub cluster_wait: String,
    /// Exit with code 3 when more than PCT percent of the requests failed (the results
    /// are written and printed first). Default: failures are reported only.
    #[arg(long, value_name = "PCT", help_heading = "Output")]
    pub max_error_rate: Option<String>,

    /// redis-server binary for the throwaway server (default: redis-server from PATH).
    #[arg(long, help_heading = "Target")]
    pub server_bin: Option<PathBuf>,

    // ---- load ----
    /// Total number of requests per test (default 100000 when --test-time is not given).
    #[arg(short = 'n', long, help_heading = "Load")]
    pub requests: Option<String>,
    /// Seconds each test runs (instead of -n).
    #[arg(long, help_heading = "Load")]
    pub test_time: Option<String>,
    /// Seconds of load before measuring starts; excluded from every result.
    #[arg(long, default_value = "0", help_heading = "Load")]
    pub warmup: String,
    /// Number of connections in total, spread over the threads.
    #[arg(short = 'c', long, default_value = "50", help_heading = "Load")]
    pub clients: String,
    /// Requests in flight per connection.
    #[arg(short = 'P', long, default_value = "1", help_heading = "Load")]
    pub pipeline: String,
    /// Worker threads, each with its own event loop.
    #[arg(long, default_value = "1", help_heading = "Load")]
    pub threads: String,
    /// Close each connection and open a new one after N requests (its pipeline drains
    /// first; the connect time is in no latency).
    #[arg(long, value_name = "N", help_heading = "Load")]
    pub reconnect_every: Option<String>,
    /// Open loop: offered load in requests per second (latency is timed from each
    /// request's intended send time). Without it the load is closed loop.
    #[arg(long, help_heading = "Load")]
    pub rate: Option<String>,
    /// Open-loop arrivals: constant or poisson.
    #[arg(long, default_value = "constant", help_heading = "Load")]
    pub arrivals: String,
    /// Master seed of every random stream (default: drawn at random, printed and stored).
    #[arg(long, help_heading = "Load")]
    pub seed: Option<String>,

    // ---- workload ----
    #[command(flatten)]
    pub workload: WorkloadWords,

    // ---- scale-out ----
    /// Generator I of N (counted from 1): N processes with the same flags are one
    /// workload. Each runs its share of -c, -n and --rate (unless --per-shard), walks its
    /// own slice of the key range under sequential key patterns, and derives its own seed
    /// from --seed. Merge the N results with `resplab merge`.
    #[arg(long, value_name = "I/N", help_heading = "Scale-out")]
    pub shard: Option<String>,
    /// With --shard: -c, -n and --rate are per shard instead of totals across shards.
    #[arg(long, requires = "shard", help_heading = "Scale-out")]
    pub per_shard: bool,
    /// Begin the load at this wall-clock time (connections are made first): seconds since
    /// the Unix epoch, an RFC 3339 time, or +SECONDS from now. Each generator records its
    /// clock's offset from the server's (TIME) so the merge can say how far apart the
    /// starts were.
    #[arg(long, value_name = "TIME", help_heading = "Scale-out")]
    pub start_at: Option<String>,
    /// The workload as base64 JSON (as `resplab experiment` sends it to remote
    /// generators), instead of the workload flags.
    #[arg(long, hide = true)]
    pub workload_spec: Option<String>,
}

/// A load run's words, validated.
#[derive(Debug)]
pub struct BenchPlan {
    /// `None`: no target was given (the caller starts a throwaway server).
    pub target: Option<Target>,
    pub config: RunConfig,
    pub spec: WorkloadSpec,
    /// `--shard`: this generator's place among N, and the flags as given.
    pub shard: Option<ShardInfo>,
    /// `--max-error-rate`: the share of failed requests (percent) above which the run
    /// exits with code 3.
    pub max_error_pct: Option<f64>,
}

impl BenchPlan {
    /// The plan's workload, restricted to this generator's shard if any.
    ///
    /// # Errors
    /// A workload the generator cannot run (or split into this shard).
    pub fn workload(&self) -> Result<resplab_workload::Workload, resplab_workload::WorkloadError> {
        let workload = resplab_workload::Workload::new(&self.spec)?;
        match &self.shard {
            Some(s) => workload.with_shard(u64::from(s.index), u64::from(s.count)),
            None => Ok(workload),
        }
    }
}

impl BenchWords {
    /// Resolves the words into a validated configuration and workload.
    ///
    /// # Errors
    /// A [`WordsError`] naming the flag, the value and what was expected.
    pub fn resolve(&self) -> Result<BenchPlan, WordsError> {
        let a = self;
        let conn = resolve_connection(a)?;
        let mut load = resolve_load(a)?;
        let start = resolve_start(a, &mut load)?;
        let spec = match &a.workload_spec {
            Some(encoded) => spec_from_base64(&a.workload, encoded, start.seed)?,
            None => resolve_workload(&a.workload, start.seed)?,
        };

        let mut config = RunConfig::new(conn.target.clone().unwrap_or(Target::Tcp {
            host: "127.0.0.1".into(),
            port: 6379,
        }));
        config.credentials = conn.credentials;
        config.tls = conn.tls;
        config.db = conn.db;
        config.protocol = conn.protocol;
        config.wire = conn.wire;
        config.threads = load.threads;
        config.clients = load.clients;
        config.pipeline = load.pipeline;
        config.budget = load.budget;
        config.warmup = load.warmup;
        config.open_loop = load.open_loop;
        config.renew = load.renew;
        config.seed = start.seed;
        config.start_at = start
            .start_at_ms
            .map(|ms| std::time::UNIX_EPOCH + Duration::from_micros((ms.max(0.0) * 1e3) as u64));
        config.series_histograms = start.shard.is_some();
        config.cluster = a.cluster || a.read_from_replicas;
        config.read_from_replicas = a.read_from_replicas;
        if !a.cluster_wait.is_empty() {
            config.cluster_wait = super::parse_duration(&a.cluster_wait)
                .map_err(|e| super::flag_error("--cluster-wait", &a.cluster_wait, e))?;
        }
        let max_error_pct = a
            .max_error_rate
            .as_deref()
            .map(|v| super::number("--max-error-rate", v, 0.0, 100.0))
            .transpose()?;
        config.validate()?;
        Ok(BenchPlan {
            target: conn.target,
            config,
            spec,
            shard: start.shard,
            max_error_pct,
        })
    }
}
