//! The flags of `resplab bench`, in redis-benchmark's and memtier_benchmark's vocabulary.
//!
//! Flags are only parsed here, and handed once to the engine's one conversion of a
//! run's words ([`resplab_engine::words`]), so nothing below the CLI sees a raw string.

use clap::{ArgAction, Args};
use resplab_engine::words::{self, bench::BenchPlan, bench::BenchWords};
use std::path::PathBuf;

/// One load run against a Redis-compatible server.
#[derive(Debug, Args)]
#[command(
    disable_help_flag = true,
    after_help = "Exit codes: 0 the run completed; 2 bad input, an unreachable target, an interrupted run or a server lost during the run; 3 the run completed but the target could not be reached for part of it (the record says when)."
)]
pub struct BenchArgs {
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,

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
    pub workload: crate::args::WorkloadArgs,

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

    // ---- output ----
    /// Write the full result (schema in docs/json.md) to FILE, or - for stdout.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub json: Option<String>,
    /// Print redis-benchmark's CSV layout instead of the table.
    #[arg(long, help_heading = "Output")]
    pub csv: bool,
    /// Print redis-benchmark's quiet layout instead of the table.
    #[arg(short = 'q', long, help_heading = "Output")]
    pub quiet: bool,
    /// Write HdrHistogram percentile files PREFIX_<COMMAND>.hgrm.
    #[arg(long, value_name = "PREFIX", help_heading = "Output")]
    pub hdr_out: Option<String>,
    /// Serve live metrics (Prometheus text format) at http://HOST:PORT/metrics while the
    /// run goes on: requests, errors and latency per command, the phase and its rate.
    #[arg(long, value_name = "HOST:PORT", help_heading = "Output")]
    pub metrics_addr: Option<String>,
    /// Sample the server's stacks with perf record during the run (499 Hz, cpu-clock,
    /// frame pointers; perf from RESPLAB_PERF or the PATH) and write them folded to FILE,
    /// as `resplab profile diff` reads them. The server must be one this run starts (no
    /// target given) or named by --profile-pid.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub profile: Option<std::path::PathBuf>,
    /// The pid of the server --profile samples, for a target this run does not start.
    #[arg(
        long,
        value_name = "PID",
        requires = "profile",
        help_heading = "Output"
    )]
    pub profile_pid: Option<u32>,
    /// Never show the live progress line.
    #[arg(long, help_heading = "Output")]
    pub no_progress: bool,
    /// Cluster: print one table row per node (requests it answered, latency,
    /// redirections it sent).
    #[arg(long, help_heading = "Output")]
    pub per_node: bool,
}

impl BenchArgs {
    /// The flags resolved once: the run's plan (its cluster wait included) and
    /// `--max-error-rate`, the share of failed requests (percent) above which the run
    /// exits with code 3.
    ///
    /// # Errors
    /// A [`resplab_engine::words::WordsError`] naming the flag, the value and what was
    /// expected.
    pub fn resolve(&self) -> anyhow::Result<(BenchPlan, Option<f64>)> {
        let mut plan = self.words().resolve()?;
        plan.config.cluster_wait = resplab_experiment::words::parse_duration(&self.cluster_wait)
            .map_err(|e| words::flag_error("--cluster-wait", &self.cluster_wait, e))?;
        let max_error_pct = self
            .max_error_rate
            .as_deref()
            .map(|v| words::number("--max-error-rate", v, 0.0, 100.0))
            .transpose()?;
        Ok((plan, max_error_pct))
    }

    /// The run's words as given on the command line.
    fn words(&self) -> BenchWords {
        let a = self;
        BenchWords {
            host: a.host.clone(),
            port: a.port.clone(),
            socket: a.socket.clone(),
            uri: a.uri.clone(),
            password: a.password.clone(),
            user: a.user.clone(),
            select: a.select.clone(),
            resp: a.resp.clone(),
            protocol: a.protocol.clone(),
            tls: a.tls,
            cacert: a.cacert.clone(),
            cacertdir: a.cacertdir.clone(),
            cert: a.cert.clone(),
            key: a.key.clone(),
            sni: a.sni.clone(),
            insecure: a.insecure,
            tls_protocols: a.tls_protocols.clone(),
            tls_ciphersuites: a.tls_ciphersuites.clone(),
            cluster: a.cluster,
            read_from_replicas: a.read_from_replicas,
            server_bin: a.server_bin.clone(),
            requests: a.requests.clone(),
            test_time: a.test_time.clone(),
            warmup: a.warmup.clone(),
            clients: a.clients.clone(),
            pipeline: a.pipeline.clone(),
            threads: a.threads.clone(),
            reconnect_every: a.reconnect_every.clone(),
            rate: a.rate.clone(),
            arrivals: a.arrivals.clone(),
            seed: a.seed.clone(),
            shard: a.shard.clone(),
            per_shard: a.per_shard,
            start_at: a.start_at.clone(),
            workload_spec: a.workload_spec.clone(),
            ..a.workload.words()
        }
    }
}
