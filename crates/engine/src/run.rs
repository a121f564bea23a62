//! [`run`]: the coordinator that turns a [`RunConfig`] and a workload into a
//! [`RunRecord`].
//!
//! A run fetches `INFO server` on a control connection, then runs the workload's phases
//! one after another (redis-benchmark's `-t set,get` is two phases). For each phase it
//! starts the worker threads, waits until every connection is set up, gives all workers
//! one common epoch, and then only listens: workers send one interval snapshot per second
//! and their full tallies when they finish. The coordinator merges those (histogram
//! merges are exact), calls the progress callback once per completed second, and builds
//! the record.
//!
//! The run ends early, with the partial results, when the stop token is triggered
//! (`RunEnd::Interrupted`) or when a connection cannot be re-established within the
//! reconnect policy's give-up time (`RunEnd::ServerLost`). Only failures before anything
//! could be measured are `Err`.

use crate::cluster;
use crate::config::RunConfig;
use crate::connect;
use crate::error::EngineError;
use crate::host;
use crate::stop::StopToken;
use crate::tally::{latency_us, summarize, CmdTally, OpenLoopTally};
use crate::worker::{run_worker, Assignment, Msg, Shared, WorkerResult, INTERVAL_NS};
use resplab_results::{
    ClusterSummary, ConnectionStats, CpuTime, LoadModel, NodeSummary, OpenLoopStats, Outage,
    RunEnd, RunRecord, SecondSample, ToolInfo, Warning, SCHEMA_VERSION,
};
use resplab_stats::hist::LatencyHistogram;
use resplab_workload::Workload;
use std::collections::BTreeMap;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// What the progress callback sees, once per completed second of a measured part.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Index and name of the phase running.
    pub phase: usize,
    pub phase_name: String,
    /// Seconds of the phase's measured part so far (0 while warming up).
    pub elapsed_sec: f64,
    /// True while the warm-up runs (nothing is recorded yet).
    pub warming_up: bool,
    /// Replies received in the phase's measured part so far.
    pub requests: u64,
    /// Errors in the phase so far.
    pub errors: u64,
    /// Requests per second in the last second.
    pub ops_per_sec_now: f64,
    /// Requests per second since the measured part began.
    pub ops_per_sec_overall: f64,
    /// 99th percentile latency of the last second, microseconds.
    pub p99_us_now: f64,
}

/// What one phase produced.
#[derive(Debug, Default)]
struct PhaseOutcome {
    cmds: Vec<CmdTally>,
    open: OpenLoopTally,
    duration_sec: f64,
    connections: ConnectionStats,
    cpu: CpuTime,
    lost: Option<String>,
    /// Periods the target could not be reached, seconds since the run's measured start.
    outages: Vec<Outage>,
    /// Connection set-up times, ns.
    setup: LatencyHistogram,
    /// Cluster mode: per node, whether it is a replica and its counts.
    nodes: BTreeMap<String, (bool, crate::cluster::NodeTally)>,
}

/// Runs `workload` against the configured target and returns what was measured.
///
/// `progress` is called on the calling thread about once per second. The record's
/// `config` is [`RunConfig::to_public_json`] and its `host` comes from
/// [`crate::host::detect`]; callers may replace both (for example to add the workload
/// specification to `config`).
///
/// # Errors
/// [`EngineError::InvalidConfig`] for an invalid configuration, [`EngineError::Workload`]
/// for a workload without phases, [`EngineError::Connect`] or
/// [`EngineError::Handshake`] when the first connections cannot be made or are refused,
/// and [`EngineError::Worker`] when a thread cannot be started. Once measuring began,
/// failures are data: the run returns `Ok` with `end` saying why it stopped.
pub fn run(
    cfg: &RunConfig,
    workload: &Workload,
    stop: &StopToken,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RunRecord, EngineError> {
    cfg.validate()?;
    let phases = workload.phases();
    if phases.is_empty() {
        return Err(EngineError::Workload("the workload has no phases".into()));
    }
    for p in phases {
        if p.commands.is_empty() || p.commands.len() > usize::from(u16::MAX) {
            return Err(EngineError::Workload(format!(
                "phase {:?} has {} commands, expected 1 to {}",
                p.name,
                p.commands.len(),
                u16::MAX
            )));
        }
    }
    let tagged: Workload;
    let mut workload = workload;
    let mut clock_before: Option<(f64, f64)> = None;
    let mut cluster_summary: Option<ClusterSummary> = None;
    let mut seed_topology: Option<cluster::Topology> = None;
    let server = {
        let mut ctl = connect::open_ready(cfg, cfg.connect_timeout)
            .map_err(|e| e.into_engine(&cfg.target))?;
        let info = connect::server_info(&mut ctl);
        if cfg.series_histograms || cfg.start_at.is_some() {
            clock_before = connect::clock_offset(&mut ctl, 5);
        }
        let detected = cluster::is_cluster(&mut ctl);
        if (cfg.cluster || cfg.read_from_replicas) && !detected {
            return Err(EngineError::Workload(format!(
                "--cluster: {} is not a Redis Cluster node (INFO cluster does not say cluster_enabled:1); drop --cluster and --read-from-replicas for a single server",
                cfg.target
            )));
        }
        if detected {
            let topo = cluster::Topology::fetch(&mut ctl, &cfg.target, cfg.tls.is_some())
                .map_err(|e| EngineError::Workload(format!("cluster at {}: {e}", cfg.target)))?;
            let replicas = topo.nodes.iter().filter(|n| n.master_of.is_some()).count();
            cluster_summary = Some(ClusterSummary {
                mode: if cfg.cluster { "--cluster" } else { "detected" }.into(),
                masters: topo.masters().len() as u32,
                replicas: replicas as u32,
                connections_per_master: cfg.clients,
                read_from_replicas: cfg.read_from_replicas,
                topology_source: topo.source.into(),
                ..ClusterSummary::default()
            });
            seed_topology = Some(topo);
            // Multi-key tests need their keys in one slot.
            tagged = workload
                .clone()
                .with_cluster_tags()
                .map_err(|e| EngineError::Workload(e.to_string()))?;
            workload = &tagged;
        }
        let per_client = seed_topology.as_ref().map_or(1, |t| {
            let masters = t.masters().len() as u32;
            if cfg.read_from_replicas {
                t.nodes.len() as u32
            } else {
                masters
            }
        });
        crate::fdlimit::ensure_open_files(crate::fdlimit::files_needed(
            cfg.clients.saturating_mul(per_client.max(1)),
            cfg.effective_threads(),
        ))?;
        for req in workload.setup_requests(0) {
            let args: Vec<&[u8]> = req.args().collect();
            // In a cluster, a set-up command (LPUSH of the list LRANGE reads) goes to the
            // master of its key.
            let reply = match &seed_topology {
                Some(topo) => cluster::call_routed(cfg, topo, &args),
                None => connect::call(&mut ctl, &args),
            }
            .map_err(|source| EngineError::Connect {
                target: cfg.target.to_string(),
                source,
            })?;
            if let Some(text) = connect::error_text(&reply) {
                return Err(EngineError::Workload(format!(
                    "set-up command {req:?} failed: {text}"
                )));
            }
        }
        info
    };
    let started_at_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);

    let mut by_name: BTreeMap<String, (CmdTally, f64)> = BTreeMap::new();
    let mut open = OpenLoopTally::default();
    let mut series = SeriesAccumulator {
        keep_histograms: cfg.series_histograms,
        ..SeriesAccumulator::default()
    };
    let mut connections = ConnectionStats::default();
    let mut cpu = CpuTime::default();
    let mut setup = LatencyHistogram::new();
    let mut node_tallies: BTreeMap<String, (bool, cluster::NodeTally)> = BTreeMap::new();
    let mut duration_sec = 0.0;
    let mut end = RunEnd::Completed;
    for (p, phase) in phases.iter().enumerate() {
        if stop.is_stopped() {
            end = RunEnd::Interrupted;
            break;
        }
        series.begin_phase(p, duration_sec);
        let plan = match &seed_topology {
            Some(seed) => Some(cluster::plan_phase(cfg, workload, p, seed)?),
            None => None,
        };
        let out = match run_phase(cfg, workload, p, stop, &mut series, progress, plan.as_ref()) {
            Ok(out) => out,
            // Earlier phases were measured: a server that is gone by now ends the run
            // with their results instead of discarding them.
            Err(e @ (EngineError::Connect { .. } | EngineError::Handshake { .. })) if p > 0 => {
                end = RunEnd::ServerLost {
                    message: e.to_string(),
                };
                break;
            }
            Err(e) => return Err(e),
        };
        for (k, t) in out.cmds.iter().enumerate() {
            let name = phase
                .commands
                .get(k)
                .cloned()
                .unwrap_or_else(|| phase.name.clone());
            let entry = by_name.entry(name).or_default();
            if !phase_has_seen(&phase.commands, k) {
                entry.1 += out.duration_sec;
            }
            entry.0.merge(t);
        }
        open.merge(&out.open);
        series.end_phase(p, out.duration_sec);
        connections.opened += out.connections.opened;
        connections.reconnects += out.connections.reconnects;
        connections.protocol_errors += out.connections.protocol_errors;
        connections.outages.extend(out.outages.iter().cloned());
        setup.merge(&out.setup);
        for (name, (replica, t)) in &out.nodes {
            let entry = node_tallies.entry(name.clone()).or_default();
            entry.0 = *replica;
            entry.1.t.merge(&t.t);
            entry.1.moved += t.moved;
            entry.1.ask += t.ask;
            entry.1.tryagain += t.tryagain;
        }
        cpu.user_sec += out.cpu.user_sec;
        cpu.system_sec += out.cpu.system_sec;
        duration_sec += out.duration_sec;
        if let Some(message) = out.lost {
            end = RunEnd::ServerLost { message };
            break;
        }
        if stop.is_stopped() {
            end = RunEnd::Interrupted;
            break;
        }
    }

    let mut warnings_extra = Vec::new();
    let shard = if cfg.series_histograms || cfg.start_at.is_some() {
        let after = connect::open_ready(cfg, cfg.connect_timeout)
            .ok()
            .and_then(|mut ctl| connect::clock_offset(&mut ctl, 5));
        let start_at_unix_ms = cfg.start_at.and_then(|t| {
            t.duration_since(UNIX_EPOCH)
                .ok()
                .map(|d| d.as_millis() as u64)
        });
        let load_started_unix_ms = series.load_started_unix_ms().unwrap_or(0.0);
        if let Some(at) = start_at_unix_ms {
            let late = load_started_unix_ms - at as f64;
            if late > START_LATE_MS {
                warnings_extra.push(Warning::StartLate { late_ms: late });
            }
        }
        Some(resplab_results::ShardInfo {
            start_at_unix_ms,
            load_started_unix_ms,
            clock_offset_ms: clock_before.map(|c| c.0),
            clock_rtt_ms: clock_before.map(|c| c.1),
            clock_offset_after_ms: after.map(|c| c.0),
            ..resplab_results::ShardInfo::default()
        })
    } else {
        None
    };
    let mut total = CmdTally::default();
    let mut commands = BTreeMap::new();
    for (name, (t, secs)) in &by_name {
        total.merge(t);
        commands.insert(name.clone(), summarize(t, *secs));
    }
    let totals = summarize(&total, duration_sec);
    let (series, series_interval_sec) = series.finish();
    if !setup.is_empty() {
        connections.setup_us = Some(latency_us(&setup));
        connections.setup_histogram = Some(setup.to_base64());
    }
    connections.unreachable_sec = connections
        .outages
        .iter()
        .map(|o| o.end_sec - o.start_sec)
        .sum::<f64>()
        .min(duration_sec);
    if connections.unreachable_sec > 0.0 {
        let up = duration_sec - connections.unreachable_sec;
        connections.ops_per_sec_while_reachable = Some(if up > 0.0 {
            totals.requests as f64 / up
        } else {
            0.0
        });
        end = end_after_outages(end, &connections, duration_sec, &cfg.target.to_string());
    }
    let load_model = match cfg.open_loop {
        None => LoadModel::ClosedLoop {
            clients: cfg.clients,
            pipeline: cfg.pipeline,
        },
        Some(ol) => LoadModel::OpenLoop {
            rate_per_sec: ol.rate_per_sec,
            arrivals: ol.arrivals.name().to_string(),
            clients: cfg.clients,
            pipeline: cfg.pipeline,
        },
    };
    let open_loop = cfg.open_loop.map(|ol| {
        // Each connection follows 1/clients of the schedule.
        let per_conn_interval_us = 1e6 * f64::from(cfg.clients) / ol.rate_per_sec;
        let limit_us = (0.05 * per_conn_interval_us).max(50.0);
        let lag_p999_us = open.lag.percentile_ns(99.9) as f64 / 1e3;
        OpenLoopStats {
            service_time_us: latency_us(&open.service),
            service_time_histogram: open.service.to_base64(),
            send_lag_us: latency_us(&open.lag),
            send_lag_histogram: open.lag.to_base64(),
            unsent: open.unsent,
            generator_behind: lag_p999_us > limit_us || open.unsent > 0,
            send_lag_limit_us: limit_us,
        }
    });
    let mut warnings = warnings_for(&totals, &connections, open_loop.as_ref());
    warnings.extend(warnings_extra);
    let mut nodes = BTreeMap::new();
    if let Some(cs) = &mut cluster_summary {
        for (name, (replica, t)) in &node_tallies {
            cs.moved += t.moved;
            cs.ask += t.ask;
            cs.tryagain += t.tryagain;
            nodes.insert(
                name.clone(),
                NodeSummary {
                    role: if *replica { "replica" } else { "master" }.into(),
                    summary: summarize(&t.t, duration_sec),
                    moved: t.moved,
                    ask: t.ask,
                    tryagain: t.tryagain,
                },
            );
        }
    }
    Ok(RunRecord {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "resplab".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            git_revision: None,
        },
        started_at_unix_ms,
        config: cfg.to_public_json(),
        seed: cfg.seed,
        load_model,
        server,
        host: host::detect(),
        warmup_sec: cfg.warmup.as_secs_f64(),
        duration_sec,
        totals,
        commands,
        open_loop,
        series,
        series_interval_sec,
        connections,
        client_cpu: cpu,
        end,
        warnings,
        shard,
        shards: Vec::new(),
        cluster: cluster_summary,
        nodes,
    })
}

/// A shard whose load began this much later than `--start-at` gets a warning.
const START_LATE_MS: f64 = 50.0;

/// What the end of a run becomes once outages are known: a run whose budget was reached
/// while the target was still unreachable lost its server; one that saw the target come
/// back completed with an outage. A run that already lost its server or was interrupted
/// keeps that reason, with the outage said in its message.
fn end_after_outages(
    end: RunEnd,
    conns: &ConnectionStats,
    duration_sec: f64,
    target: &str,
) -> RunEnd {
    let unreachable = conns.unreachable_sec;
    let periods: Vec<String> = conns
        .outages
        .iter()
        .map(|o| {
            if o.recovered {
                format!("{:.1}-{:.1} s", o.start_sec, o.end_sec)
            } else {
                format!("from {:.1} s to the end", o.start_sec)
            }
        })
        .collect();
    let summary = format!(
        "{target} was unreachable for {unreachable:.1} of {duration_sec:.1} s ({})",
        periods.join(", ")
    );
    let still_down = conns.outages.last().is_some_and(|o| !o.recovered);
    match end {
        RunEnd::Completed if still_down => RunEnd::ServerLost {
            message: format!("{summary}; the run ended before it came back"),
        },
        RunEnd::Completed => RunEnd::Unreachable {
            unreachable_sec: unreachable,
            message: summary,
        },
        RunEnd::ServerLost { message } => RunEnd::ServerLost {
            message: format!("{message}; {summary}"),
        },
        other => other,
    }
}

/// Union of the outages of every worker (ns since the epoch, `None` end: still down when
/// the worker finished), clipped to the measured window and made relative to its start.
fn merge_outages(
    raw: impl Iterator<Item = (u64, Option<u64>)>,
    measure_ns: u64,
    end_ns: u64,
    offset_sec: f64,
) -> Vec<Outage> {
    let mut spans: Vec<(u64, u64, bool)> = raw
        .map(|(a, b)| {
            let a = a.clamp(measure_ns, end_ns);
            let recovered = b.is_some();
            let b = b.unwrap_or(end_ns).clamp(a, end_ns);
            (a, b, recovered)
        })
        .filter(|(a, b, recovered)| b > a || !*recovered)
        .collect();
    spans.sort_unstable_by_key(|s| s.0);
    let mut merged: Vec<(u64, u64, bool)> = Vec::new();
    for (a, b, rec) in spans {
        match merged.last_mut() {
            Some(last) if a <= last.1 => {
                if b > last.1 || (b == last.1 && !rec) {
                    last.1 = b;
                    last.2 = rec;
                }
            }
            _ => merged.push((a, b, rec)),
        }
    }
    merged
        .into_iter()
        .map(|(a, b, recovered)| Outage {
            start_sec: offset_sec + (a - measure_ns) as f64 / 1e9,
            end_sec: offset_sec + (b - measure_ns) as f64 / 1e9,
            recovered,
        })
        .collect()
}

/// True when command `k` of a phase repeats an earlier command name of the same phase
/// (its phase duration is then already counted for that name).
fn phase_has_seen(commands: &[String], k: usize) -> bool {
    commands[..k.min(commands.len())]
        .iter()
        .any(|c| Some(c) == commands.get(k))
}

fn warnings_for(
    totals: &resplab_results::Summary,
    conns: &ConnectionStats,
    open: Option<&OpenLoopStats>,
) -> Vec<Warning> {
    let mut w = Vec::new();
    if totals.errors > 0 {
        w.push(Warning::Errors {
            failed: totals.errors,
            requests: totals.requests,
            kinds: totals
                .error_kinds
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .collect(),
        });
    }
    if let Some(up_rate) = conns.ops_per_sec_while_reachable {
        w.push(Warning::Unreachable {
            unreachable_sec: conns.unreachable_sec,
            ops_per_sec: totals.ops_per_sec,
            reachable_ops_per_sec: up_rate,
        });
    }
    if conns.reconnects > 0 || conns.protocol_errors > 0 {
        w.push(Warning::Reconnects {
            reconnects: conns.reconnects,
            protocol_errors: conns.protocol_errors,
        });
    }
    if let Some(ol) = open {
        if ol.generator_behind {
            w.push(Warning::ScheduleLag {
                send_lag_p99_9_us: ol.send_lag_us.p99_9,
                limit_us: ol.send_lag_limit_us,
                unsent: ol.unsent,
            });
        }
    }
    w
}

/// Intervals of [`INTERVAL_NS`] in a second.
const PER_SECOND: u64 = 1_000_000_000 / INTERVAL_NS;

/// A run (or phase) whose measured part reaches this many seconds gets a per-second
/// series; shorter ones keep the workers' finer intervals.
const FINE_SERIES_BELOW_SEC: u64 = 10;

/// The per-interval series of a run, built from the workers' interval snapshots.
///
/// Short runs keep every [`INTERVAL_NS`] interval (a 1-second trial gets ten points, not
/// one). Once the measured part passes [`FINE_SERIES_BELOW_SEC`], the intervals kept so
/// far are merged into seconds (histogram merges are exact), and from then on a second's
/// histogram is reduced to its summary as soon as every worker has moved past it, so
/// memory does not grow with the length of the run. Keys are per phase: each phase's
/// intervals count from its own measured start, placed after the phases before it.
#[derive(Debug, Default)]
struct SeriesAccumulator {
    /// True once merged into seconds: keys are seconds, not intervals.
    coarse: bool,
    /// Keep each interval's histogram (encoded) and its wall-clock time in the series.
    keep_histograms: bool,
    /// Wall-clock time (ms since the epoch) at which each phase's measured part began.
    wall_ms: Vec<Option<f64>>,
    /// Wall-clock time at which the first phase's load (warm-up included) began.
    load_started_ms: Option<f64>,
    /// Each phase's offset (seconds of measured time before it) and, once it ended, its
    /// measured duration.
    phases: Vec<(f64, Option<f64>)>,
    /// (phase, key) not yet reduced: requests, errors, latencies.
    open: BTreeMap<(usize, u64), (u64, u64, LatencyHistogram)>,
    /// (phase, second) reduced to requests, errors, summary, p99 in ns and, when kept,
    /// the encoded histogram.
    closed: BTreeMap<(usize, u64), Closed>,
}

/// A series interval reduced to its figures.
#[derive(Debug)]
struct Closed {
    requests: u64,
    errors: u64,
    latency: resplab_results::LatencyUs,
    p99_ns: u64,
    histogram: Option<String>,
}

impl SeriesAccumulator {
    /// Notes when `phase`'s load began (wall clock, ms) and when its measured part did.
    fn phase_started(&mut self, phase: usize, load_ms: f64, measured_ms: f64) {
        if phase == 0 {
            self.load_started_ms = Some(load_ms);
        }
        if self.wall_ms.len() <= phase {
            self.wall_ms.resize(phase + 1, None);
        }
        self.wall_ms[phase] = Some(measured_ms);
    }

    fn load_started_unix_ms(&self) -> Option<f64> {
        self.load_started_ms
    }

    fn begin_phase(&mut self, phase: usize, offset_sec: f64) {
        if self.phases.len() <= phase {
            self.phases.resize(phase + 1, (offset_sec, None));
        }
        self.phases[phase] = (offset_sec, None);
    }

    fn end_phase(&mut self, phase: usize, duration_sec: f64) {
        if let Some(p) = self.phases.get_mut(phase) {
            p.1 = Some(duration_sec);
        }
        // Earlier phases are over: nothing will be added to them.
        if self.coarse {
            self.close_where(|(p, _)| *p <= phase);
        }
    }

    fn add(
        &mut self,
        phase: usize,
        interval: u64,
        requests: u64,
        errors: u64,
        h: &LatencyHistogram,
    ) {
        let offset = self.phases.get(phase).map_or(0.0, |p| p.0);
        let at_sec = offset + (interval * INTERVAL_NS) as f64 / 1e9;
        if !self.coarse && at_sec >= FINE_SERIES_BELOW_SEC as f64 {
            self.coarse = true;
            for ((p, k), (r, e, hist)) in std::mem::take(&mut self.open) {
                self.merge((p, k / PER_SECOND), r, e, &hist);
            }
        }
        let key = if self.coarse {
            interval / PER_SECOND
        } else {
            interval
        };
        self.merge((phase, key), requests, errors, h);
    }

    fn merge(&mut self, key: (usize, u64), requests: u64, errors: u64, h: &LatencyHistogram) {
        let e = self
            .open
            .entry(key)
            .or_insert_with(|| (0, 0, LatencyHistogram::new()));
        e.0 += requests;
        e.1 += errors;
        e.2.merge(h);
    }

    /// Every worker of `phase` is past interval `upto - 1`: its completed seconds can
    /// drop their histograms.
    fn complete_before(&mut self, phase: usize, upto: u64) {
        if self.coarse {
            let done = upto / PER_SECOND;
            self.close_where(|(p, k)| *p < phase || (*p == phase && *k < done));
        }
    }

    fn close_where(&mut self, done: impl Fn(&(usize, u64)) -> bool) {
        let keys: Vec<(usize, u64)> = self.open.keys().filter(|k| done(k)).copied().collect();
        for k in keys {
            if let Some((r, e, h)) = self.open.remove(&k) {
                let closed = Closed {
                    requests: r,
                    errors: e,
                    latency: latency_us(&h),
                    p99_ns: h.percentile_ns(99.0),
                    histogram: self.keep_histograms.then(|| h.to_base64()),
                };
                self.closed.insert(k, closed);
            }
        }
    }

    /// Requests, errors and p99 (µs) of second `sec` of `phase`.
    fn second(&self, phase: usize, sec: u64) -> (u64, u64, f64) {
        if self.coarse {
            if let Some(c) = self.closed.get(&(phase, sec)) {
                return (c.requests, c.errors, c.p99_ns as f64 / 1e3);
            }
            return self
                .open
                .get(&(phase, sec))
                .map(|(r, e, h)| (*r, *e, h.percentile_ns(99.0) as f64 / 1e3))
                .unwrap_or((0, 0, 0.0));
        }
        let mut h = LatencyHistogram::new();
        let (mut r, mut e) = (0, 0);
        let range = (phase, sec * PER_SECOND)..(phase, (sec + 1) * PER_SECOND);
        for (_, (ri, ei, hi)) in self.open.range(range) {
            r += ri;
            e += ei;
            h.merge(hi);
        }
        (r, e, h.percentile_ns(99.0) as f64 / 1e3)
    }

    /// The series of the whole run, in time order, and the length of its intervals.
    fn finish(mut self) -> (Vec<SecondSample>, f64) {
        let step = if self.coarse {
            1.0
        } else {
            INTERVAL_NS as f64 / 1e9
        };
        self.close_where(|_| true);
        let phases = std::mem::take(&mut self.phases);
        let mut out: Vec<SecondSample> = Vec::new();
        let mut last_phase = usize::MAX;
        let mut last_len = step;
        let wall = std::mem::take(&mut self.wall_ms);
        for ((p, k), c) in self.closed {
            let (r, e, lat) = (c.requests, c.errors, c.latency);
            let (offset, duration) = phases.get(p).copied().unwrap_or((0.0, None));
            let wall_start = wall.get(p).copied().flatten();
            let start = k as f64 * step;
            let len = (duration.unwrap_or(start + step) - start).clamp(1e-3, step);
            // The replies that arrived after the last full interval (in flight when the
            // time was up) make a sliver whose rate would mean nothing: they join the
            // interval before.
            if len < step / 2.0 && p == last_phase {
                if let Some(prev) = out.last_mut() {
                    let len = duration.map_or(len, |d| (d - start).max(0.0));
                    prev.requests += r;
                    prev.errors += e;
                    prev.t_sec = offset + start + len;
                    if let (Some(a), Some(b)) = (&prev.histogram, &c.histogram) {
                        if let (Ok(mut ha), Ok(hb)) = (
                            LatencyHistogram::from_base64(a),
                            LatencyHistogram::from_base64(b),
                        ) {
                            ha.merge(&hb);
                            prev.latency_us = latency_us(&ha);
                            prev.histogram = Some(ha.to_base64());
                        }
                    }
                    if let (Some(w), Some(u)) = (wall_start, prev.unix_ms.as_mut()) {
                        *u = w + (start + len) * 1e3;
                    }
                    last_len += len;
                    prev.ops_per_sec = prev.requests as f64 / last_len;
                    continue;
                }
            }
            last_phase = p;
            last_len = len;
            out.push(SecondSample {
                t_sec: offset + start + len,
                requests: r,
                errors: e,
                ops_per_sec: r as f64 / len,
                latency_us: lat,
                unix_ms: wall_start
                    .filter(|_| self.keep_histograms)
                    .map(|w| w + (start + len) * 1e3),
                histogram: c.histogram,
            });
        }
        (out, step)
    }
}

/// Runs phase `p` on fresh connections.
fn run_phase(
    cfg: &RunConfig,
    workload: &Workload,
    p: usize,
    stop: &StopToken,
    seconds: &mut SeriesAccumulator,
    progress: &mut dyn FnMut(&Progress),
    cluster: Option<&cluster::ClusterPlan>,
) -> Result<PhaseOutcome, EngineError> {
    let series_offset_sec = seconds.phases.get(p).map_or(0.0, |x| x.0);
    let phase = &workload.phases()[p];
    let threads = cfg.effective_threads() as usize;
    let clients = cfg.clients as usize;
    let shared = Shared::default();
    let (tx, rx) = mpsc::channel::<Msg>();
    std::thread::scope(|s| {
        let mut starts: Vec<mpsc::Sender<Option<Instant>>> = Vec::with_capacity(threads);
        let mut first = 0;
        for w in 0..threads {
            let n = clients / threads + usize::from(w < clients % threads);
            let (stx, srx) = mpsc::channel();
            let a = Assignment {
                worker: w,
                cfg,
                workload,
                phase: p,
                first_conn: first,
                nconns: n,
                commands: phase.commands.len(),
                stop,
                shared: &shared,
                cluster,
            };
            let tx = tx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("resplab-worker-{w}"))
                .spawn_scoped(s, move || run_worker(a, tx, srx));
            if let Err(e) = spawned {
                for st in &starts {
                    let _ = st.send(None);
                }
                return Err(EngineError::Worker(format!("cannot start thread {w}: {e}")));
            }
            starts.push(stx);
            first += n;
        }
        drop(tx);

        let mut ready = 0;
        while ready < threads {
            let failure = match rx.recv() {
                Ok(Msg::Ready) => {
                    ready += 1;
                    None
                }
                Ok(Msg::Failed(e)) => Some(e),
                Ok(_) => None,
                Err(_) => Some(EngineError::Worker("a worker exited during set-up".into())),
            };
            if let Some(e) = failure {
                for st in &starts {
                    let _ = st.send(None);
                }
                return Err(e);
            }
        }

        if p == 0 {
            if let Some(at) = cfg.start_at {
                // Connections are ready; the load begins at the agreed wall-clock time.
                while !stop.is_stopped() {
                    // Sleep in short steps (a stop is seen quickly), then spin through
                    // the last two milliseconds: sleeping overshoots by a scheduler tick.
                    match at.duration_since(SystemTime::now()) {
                        Ok(left) if left > Duration::from_millis(2) => std::thread::sleep(
                            (left - Duration::from_millis(2)).min(Duration::from_millis(50)),
                        ),
                        Ok(left) if !left.is_zero() => std::hint::spin_loop(),
                        _ => break,
                    }
                }
            }
        }
        let mut cpu_start = host::process_cpu_time();
        let epoch = Instant::now();
        let epoch_ms = connect::unix_ms_now();
        seconds.phase_started(p, epoch_ms, epoch_ms + cfg.warmup.as_secs_f64() * 1e3);
        for st in &starts {
            let _ = st.send(Some(epoch));
        }
        let measure_at = epoch + cfg.warmup;
        let mut cpu_taken = cfg.warmup.is_zero();
        if cfg.warmup > Duration::ZERO {
            progress(&Progress {
                phase: p,
                phase_name: phase.name.clone(),
                elapsed_sec: 0.0,
                warming_up: true,
                requests: 0,
                errors: 0,
                ops_per_sec_now: 0.0,
                ops_per_sec_overall: 0.0,
                p99_us_now: 0.0,
            });
        }

        let mut watermark: Vec<Option<u64>> = vec![None; threads];
        let mut done: Vec<bool> = vec![false; threads];
        let mut results: Vec<WorkerResult> = Vec::with_capacity(threads);
        let mut reported = 0u64; // seconds already passed to `progress`
        let mut phase_requests = 0u64;
        let mut phase_errors = 0u64;
        while results.len() < threads {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(Msg::Second(iv)) => {
                    seconds.add(p, iv.sec, iv.requests, iv.errors, &iv.hist);
                    if let Some(w) = watermark.get_mut(iv.worker) {
                        *w = Some(w.map_or(iv.sec, |x| x.max(iv.sec)));
                    }
                }
                Ok(Msg::Done(r)) => {
                    if let Some(d) = done.get_mut(r.worker) {
                        *d = true;
                    }
                    results.push(*r);
                }
                Ok(Msg::Ready) | Ok(Msg::Failed(_)) => {}
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if !cpu_taken && Instant::now() >= measure_at {
                cpu_start = host::process_cpu_time();
                cpu_taken = true;
            }
            // An interval is complete when every worker has moved past it or finished;
            // progress is told by whole seconds.
            let complete_upto = watermark
                .iter()
                .zip(&done)
                .filter(|(_, d)| !**d)
                .map(|(w, _)| w.map_or(0, |s| s + 1))
                .min();
            if let Some(upto) = complete_upto {
                seconds.complete_before(p, upto);
                while reported < upto / PER_SECOND {
                    let (req, err, p99) = seconds.second(p, reported);
                    phase_requests += req;
                    phase_errors += err;
                    reported += 1;
                    progress(&Progress {
                        phase: p,
                        phase_name: phase.name.clone(),
                        elapsed_sec: reported as f64,
                        warming_up: false,
                        requests: phase_requests,
                        errors: phase_errors,
                        ops_per_sec_now: req as f64,
                        ops_per_sec_overall: phase_requests as f64 / reported as f64,
                        p99_us_now: p99,
                    });
                }
            }
        }
        let cpu_end = host::process_cpu_time();
        if results.len() < threads {
            return Err(EngineError::Worker(
                "a worker thread ended without results".into(),
            ));
        }

        let measure_ns = cfg.warmup.as_nanos() as u64;
        let end_ns = results.iter().map(|r| r.end_ns).max().unwrap_or(0);
        let duration_sec = end_ns.saturating_sub(measure_ns) as f64 / 1e9;
        let mut out = PhaseOutcome {
            cmds: vec![CmdTally::default(); phase.commands.len()],
            duration_sec,
            cpu: if cpu_taken {
                host::cpu_delta(&cpu_start, &cpu_end)
            } else {
                CpuTime::default()
            },
            lost: shared.lost.lock().ok().and_then(|g| g.clone()),
            ..PhaseOutcome::default()
        };
        out.outages = merge_outages(
            results.iter().flat_map(|r| r.outages.iter().copied()),
            measure_ns,
            end_ns.max(measure_ns),
            series_offset_sec,
        );
        for r in &results {
            for (acc, t) in out.cmds.iter_mut().zip(&r.cmds) {
                acc.merge(t);
            }
            out.open.merge(&r.open);
            out.connections.opened += r.opened;
            out.connections.reconnects += r.reconnects;
            out.connections.protocol_errors += r.protocol_errors;
            out.setup.merge(&r.setup);
            for (name, replica, t) in &r.nodes {
                let entry = out.nodes.entry(name.clone()).or_default();
                entry.0 = *replica;
                entry.1.t.merge(&t.t);
                entry.1.moved += t.moved;
                entry.1.ask += t.ask;
                entry.1.tryagain += t.tryagain;
            }
        }
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values_us: &[u64]) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for v in values_us {
            h.record(v * 1000);
        }
        h
    }

    #[test]
    fn short_runs_keep_tenths_and_fold_the_tail() {
        let mut acc = SeriesAccumulator::default();
        acc.begin_phase(0, 0.0);
        for i in 0..10 {
            acc.add(0, i, 100, 0, &hist(&[50]));
        }
        // Replies that were in flight when the time was up.
        acc.add(0, 10, 7, 0, &hist(&[60]));
        acc.end_phase(0, 1.0004);
        let (series, step) = acc.finish();
        assert_eq!(step, 0.1);
        assert_eq!(series.len(), 10);
        assert_eq!(series.iter().map(|s| s.requests).sum::<u64>(), 1007);
        assert!((series[0].ops_per_sec - 1000.0).abs() < 1e-6);
        assert!((series[9].t_sec - 1.0004).abs() < 1e-9);
    }

    #[test]
    fn long_runs_merge_into_exact_seconds() {
        let mut acc = SeriesAccumulator::default();
        acc.begin_phase(0, 0.0);
        // Two workers, 12 s; worker 1 records a slow reply in every tenth interval.
        for i in 0..120u64 {
            acc.add(0, i, 10, 0, &hist(&[100]));
            let slow: &[u64] = if i % 10 == 3 { &[9000] } else { &[100] };
            acc.add(0, i, 10, 0, &hist(slow));
            acc.complete_before(0, i + 1);
        }
        acc.end_phase(0, 12.0);
        assert!(acc.coarse);
        let (series, step) = acc.finish();
        assert_eq!(step, 1.0);
        assert_eq!(series.len(), 12);
        for s in &series {
            assert_eq!(s.requests, 200);
            // One reply in 200 took 9 ms: the second's maximum, exactly as one histogram
            // of the whole second would say.
            assert!((s.latency_us.max - 9000.0).abs() < 10.0, "{s:?}");
        }
    }

    #[test]
    fn phases_follow_each_other() {
        let mut acc = SeriesAccumulator::default();
        acc.begin_phase(0, 0.0);
        acc.add(0, 0, 5, 0, &hist(&[10]));
        acc.add(0, 1, 5, 0, &hist(&[10]));
        acc.end_phase(0, 0.2);
        acc.begin_phase(1, 0.2);
        acc.add(1, 0, 3, 1, &hist(&[10]));
        acc.end_phase(1, 0.1);
        let (series, _) = acc.finish();
        let t: Vec<f64> = series
            .iter()
            .map(|s| (s.t_sec * 1e6).round() / 1e6)
            .collect();
        assert_eq!(t, vec![0.1, 0.2, 0.3]);
        assert_eq!(series[2].errors, 1);
    }
}
