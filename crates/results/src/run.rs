//! [`RunRecord`] and its parts: the result of one `resplab bench` run.

use crate::warning::Warning;
use resplab_stats::hist::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the run-record schema written by this build.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything one load run produced.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    /// Which program wrote the record.
    pub tool: ToolInfo,
    /// Wall-clock start of the measured part, milliseconds since the Unix epoch.
    pub started_at_unix_ms: u64,
    /// The resolved configuration, exactly as the run used it (seed included, passwords
    /// removed).
    pub config: serde_json::Value,
    /// The master seed every random stream of the run was derived from.
    pub seed: u64,
    /// Closed loop or open loop, and at which rate.
    pub load_model: LoadModel,
    /// Fields of the server's `INFO server` section (empty when the server has no INFO).
    pub server: BTreeMap<String, String>,
    /// The machine the load generator ran on.
    pub host: HostInfo,
    /// Warm-up excluded from every number below, in seconds.
    pub warmup_sec: f64,
    /// Length of the measured part, in seconds.
    pub duration_sec: f64,
    /// All requests of the run together.
    pub totals: Summary,
    /// One summary per command or test, keyed by its name (`"SET"`, `"LRANGE_100"`).
    pub commands: BTreeMap<String, Summary>,
    /// Open-loop only: service time, send lag and whether the generator kept up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<OpenLoopStats>,
    /// One entry per elapsed interval of the measured part (`series_interval_sec`).
    pub series: Vec<SecondSample>,
    /// Length of one `series` interval: 1 s, or 0.1 s for runs shorter than 10 s (whose
    /// per-second series would have one or two points).
    #[serde(default = "one_second")]
    pub series_interval_sec: f64,
    /// Connection-level events.
    pub connections: ConnectionStats,
    /// CPU time the load generator itself used during the measured part.
    pub client_cpu: CpuTime,
    /// Why the run ended.
    pub end: RunEnd,
    /// Things a reader should know before trusting the numbers, each with advice.
    pub warnings: Vec<Warning>,
    /// Present when this run was generator `index` of `count` (`resplab bench --shard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// Present when this record was merged from shard results (`resplab merge`): one
    /// entry per shard, in shard order, with its host and configuration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<MergedShard>,
    /// Present for a run against a Redis Cluster: its shape and redirections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterSummary>,
    /// Cluster runs: one summary per node that answered, keyed by `host:port`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nodes: BTreeMap<String, NodeSummary>,
}

/// What a run against a Redis Cluster saw of it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ClusterSummary {
    /// `"--cluster"` when asked for, `"detected"` when the target said
    /// `cluster_enabled:1`.
    pub mode: String,
    /// Masters and replicas at the start of the run.
    pub masters: u32,
    pub replicas: u32,
    /// `-c`: each of that many clients holds one connection to every master, so every
    /// master has this many connections.
    pub connections_per_master: u32,
    /// Read-only commands went to replicas.
    pub read_from_replicas: bool,
    /// `CLUSTER SHARDS` or `CLUSTER SLOTS`.
    pub topology_source: String,
    /// Redirections followed, over all nodes.
    pub moved: u64,
    pub ask: u64,
    pub tryagain: u64,
}

/// One cluster node's part of a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct NodeSummary {
    /// `"master"` or `"replica"`.
    pub role: String,
    /// The requests this node answered (a redirected request counts at the node whose
    /// reply ended it; its latency includes the redirection).
    #[serde(flatten)]
    pub summary: Summary,
    /// `MOVED`, `ASK` and `TRYAGAIN` replies this node sent (followed, not errors).
    pub moved: u64,
    pub ask: u64,
    pub tryagain: u64,
}

/// What a shard run records about its place among the generators of one workload.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ShardInfo {
    /// This generator, 0-based.
    pub index: u32,
    /// Generators of the workload.
    pub count: u32,
    /// The seed given on the command line; each shard's own seed is derived from it.
    pub master_seed: u64,
    /// True when `-c`, `-n` and `--rate` were per shard (`--per-shard`); false when they
    /// were totals across shards and this shard ran its share.
    pub per_shard: bool,
    /// Connections, requests (`-n`) and rate (`--rate`) as given on the command line.
    pub given_clients: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub given_requests: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub given_rate_per_sec: Option<f64>,
    /// The wall-clock start asked for (`--start-at`), ms since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at_unix_ms: Option<u64>,
    /// When this shard's load actually began (its first phase, warm-up included), by its
    /// own clock, ms since the Unix epoch.
    pub load_started_unix_ms: f64,
    /// Server clock minus this host's clock, estimated with `TIME` before the load
    /// (lowest round trip of several), in ms; `None` when the server has no `TIME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_ms: Option<f64>,
    /// The same estimate taken after the run, to show drift.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_after_ms: Option<f64>,
    /// Round trip of the `TIME` call the estimate used, in ms (the estimate's error is
    /// at most half of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_rtt_ms: Option<f64>,
}

impl ShardInfo {
    /// When the load began in the server's clock (ms since the epoch), when the offset is
    /// known.
    pub fn load_started_server_ms(&self) -> Option<f64> {
        self.clock_offset_ms.map(|o| self.load_started_unix_ms + o)
    }
}

/// One shard of a merged record.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MergedShard {
    pub shard: ShardInfo,
    /// The machine the shard ran on.
    pub host: HostInfo,
    /// The shard's configuration as it ran (its share of connections, its seed).
    pub config: serde_json::Value,
    pub started_at_unix_ms: u64,
    pub duration_sec: f64,
    /// The shard's own totals (its histogram included).
    pub totals: Summary,
    pub client_cpu: CpuTime,
    pub end: RunEnd,
}

/// Name, version and revision of the program that wrote a record.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
    /// Source revision of the build, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_revision: Option<String>,
}

impl RunRecord {
    /// A completed run of the current schema by `tool` that measured nothing: no
    /// requests, no time, closed loop with no connections, seed 0, a null config and
    /// the rest empty; callers set what they did measure.
    pub fn empty(tool: ToolInfo, started_at_unix_ms: u64) -> RunRecord {
        RunRecord {
            schema_version: SCHEMA_VERSION,
            tool,
            started_at_unix_ms,
            config: serde_json::Value::Null,
            seed: 0,
            load_model: LoadModel::ClosedLoop {
                clients: 0,
                pipeline: 0,
            },
            server: BTreeMap::new(),
            host: HostInfo::default(),
            warmup_sec: 0.0,
            duration_sec: 0.0,
            totals: Summary::default(),
            commands: BTreeMap::new(),
            open_loop: None,
            series: Vec::new(),
            series_interval_sec: 1.0,
            connections: ConnectionStats::default(),
            client_cpu: CpuTime::default(),
            end: RunEnd::Completed,
            warnings: Vec::new(),
            shard: None,
            shards: Vec::new(),
            cluster: None,
            nodes: Default::default(),
        }
    }
}

/// How load was offered.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LoadModel {
    /// Each connection keeps `pipeline` requests in flight and sends the next request as
    /// soon as a reply arrives. Latency then restates throughput (Little's law:
    /// mean latency = clients × pipeline / throughput); it is not a second result.
    ClosedLoop { clients: u32, pipeline: u32 },
    /// Requests follow a schedule of intended send times at `rate_per_sec`; latency is
    /// timed from the intended time, so stalls cannot hide (no coordinated omission).
    OpenLoop {
        rate_per_sec: f64,
        /// `"constant"` or `"poisson"`.
        arrivals: String,
        clients: u32,
        /// Most requests in flight per connection.
        pipeline: u32,
    },
}

impl LoadModel {
    /// The label every output prints next to latency figures.
    pub fn label(&self) -> String {
        match self {
            LoadModel::ClosedLoop { clients, pipeline } => format!(
                "closed loop ({clients} connections x pipeline {pipeline}; latency restates throughput)"
            ),
            LoadModel::OpenLoop {
                rate_per_sec,
                arrivals,
                ..
            } => format!(
                "open loop ({rate_per_sec} ops/s, {arrivals} arrivals; latency from intended send time)"
            ),
        }
    }

    /// True for closed-loop runs.
    pub fn is_closed_loop(&self) -> bool {
        matches!(self, LoadModel::ClosedLoop { .. })
    }
}

/// Facts about the machine that ran the load generator.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    pub hostname: String,
    pub cpu_model: String,
    pub cores: u32,
    pub kernel: String,
    pub os: String,
    /// CPU frequency governor of cpu0, where readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governor: Option<String>,
}

/// Latency figures in microseconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencyUs {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
}

impl LatencyUs {
    /// The figures of a latency histogram (recorded in nanoseconds), in microseconds.
    pub fn from_histogram(h: &LatencyHistogram) -> LatencyUs {
        let us = |ns: u64| ns as f64 / 1e3;
        LatencyUs {
            mean: h.mean_ns() / 1e3,
            p50: us(h.percentile_ns(50.0)),
            p90: us(h.percentile_ns(90.0)),
            p99: us(h.percentile_ns(99.0)),
            p99_9: us(h.percentile_ns(99.9)),
            max: us(h.max_ns()),
        }
    }
}

/// The summary of one command (or of all of them).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Replies received (error replies included).
    pub requests: u64,
    /// Error replies (`-ERR …`, `!…`) and requests lost to protocol errors.
    pub errors: u64,
    /// Served requests (replies that were not error replies) per second of the measured
    /// part; for imported results, the rate the tool printed.
    pub ops_per_sec: f64,
    /// Latency summary (open loop: from the intended send time).
    pub latency_us: LatencyUs,
    /// Bytes received from the server.
    pub bytes_in: u64,
    /// Bytes sent to the server.
    pub bytes_out: u64,
    /// The full latency histogram: HdrHistogram V2-deflate, base64, nanoseconds.
    pub histogram: String,
    /// Error replies by their first word (`"ERR"`, `"WRONGTYPE"`, `"MOVED"`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub error_kinds: BTreeMap<String, u64>,
    /// Nil replies (`$-1`, `*-1`, RESP3 `_`) among `requests`: for a GET, a miss
    /// (memtier's Misses/sec). Absent in records written before it was counted.
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub nil_replies: u64,
}

fn is_zero_count(n: &u64) -> bool {
    *n == 0
}

impl Summary {
    /// The share of requests that failed, in percent (0 when nothing was sent). A
    /// request lost with its connection is an error without a reply, so the share is
    /// taken of the larger of replies and errors and never passes 100.
    pub fn error_pct(&self) -> f64 {
        let sent = self.requests.max(self.errors);
        if sent == 0 {
            0.0
        } else {
            self.errors as f64 * 100.0 / sent as f64
        }
    }
}

/// Open-loop extras.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OpenLoopStats {
    /// Latency from the actual send (what a closed-loop tool would call latency).
    pub service_time_us: LatencyUs,
    /// Histogram of service time (V2-deflate, base64, ns).
    pub service_time_histogram: String,
    /// Actual send time minus intended send time.
    pub send_lag_us: LatencyUs,
    /// Histogram of send lag (V2-deflate, base64, ns).
    pub send_lag_histogram: String,
    /// Requests the schedule asked for that were never sent before the run ended.
    pub unsent: u64,
    /// True when the generator fell behind its own schedule (send lag p99.9 above
    /// `send_lag_limit_us`, or requests unsent): the latency figures then describe the
    /// generator as much as the server.
    pub generator_behind: bool,
    /// The limit used for `generator_behind`.
    pub send_lag_limit_us: f64,
}

fn one_second() -> f64 {
    1.0
}

/// One interval (a second, or a tenth of one in short runs) of the measured part.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SecondSample {
    /// Seconds since the measured part began (end of the interval).
    pub t_sec: f64,
    pub requests: u64,
    pub errors: u64,
    /// Served requests (error replies left out) per second of the interval.
    pub ops_per_sec: f64,
    pub latency_us: LatencyUs,
    /// Wall-clock end of the interval, ms since the Unix epoch (shard runs only, so that
    /// `resplab merge` can align shards on wall-clock time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unix_ms: Option<f64>,
    /// The interval's full latency histogram (shard runs only, so that merged intervals
    /// have exact percentiles): HdrHistogram V2-deflate, base64, nanoseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

/// Connection-level events of a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ConnectionStats {
    /// Connections opened at the start.
    pub opened: u64,
    /// Connections lost and opened again.
    pub reconnects: u64,
    /// Connections closed and opened again as the run asked, after a number of requests
    /// (`--reconnect-every`, memtier's `--reconnect-interval`, redis-benchmark's `-k 0`).
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub renewed: u64,
    /// Replies that could not be parsed; each reset its connection.
    pub protocol_errors: u64,
    /// Seconds of the measured window during which the target could not be reached
    /// (a connection was lost and attempts to open it again failed), 0 when it always
    /// answered.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unreachable_sec: f64,
    /// Each period the target could not be reached, in seconds since the measured part
    /// began.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outages: Vec<Outage>,
    /// Requests per second over the time the target could be reached (the window less
    /// `unreachable_sec`); present only when that differs from the whole window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_sec_while_reachable: Option<f64>,
    /// Time to set up each connection opened at the start of each phase: TCP connect,
    /// TLS handshake, HELLO/AUTH/SELECT (µs). Outside every measured figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_us: Option<LatencyUs>,
    /// The histogram of those set-up times (V2-deflate, base64, ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_histogram: Option<String>,
}

/// A period during which the target could not be reached.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Outage {
    /// Seconds since the measured part began.
    pub start_sec: f64,
    pub end_sec: f64,
    /// False when the run ended while the target was still unreachable.
    pub recovered: bool,
    /// The address that could not be reached: in cluster mode the node, otherwise the
    /// target (absent in records written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// CPU time used by a process.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuTime {
    pub user_sec: f64,
    pub system_sec: f64,
}

impl CpuTime {
    /// User plus system time.
    pub fn total_sec(&self) -> f64 {
        self.user_sec + self.system_sec
    }
}

/// Why a run ended.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum RunEnd {
    /// The request count or test time was reached.
    Completed,
    /// The user interrupted the run (Ctrl-C); the numbers cover what was measured.
    Interrupted,
    /// The server went away for good, or was still unreachable when the run ended; the
    /// numbers cover what was measured before.
    ServerLost { message: String },
    /// The budget was reached, but the target could not be reached for part of the run
    /// (`connections.unreachable_sec`); whole-window rates mix in that dead time.
    Unreachable {
        unreachable_sec: f64,
        message: String,
    },
}
