//! [`merge`]: one exact result from the results of N generators (`resplab bench --shard
//! I/N`) of one workload.
//!
//! Counts and bytes add; histograms add bucket by bucket (HdrHistogram merges are exact),
//! so every percentile of the merged record is the percentile of all replies together,
//! not an average of the shards' percentiles. Throughput is the sum of the shards'
//! throughputs, each over its own measured window. The per-interval series are aligned
//! on wall-clock time (each shard run keeps the wall-clock end and the histogram of every
//! interval), so interval `k` of the merge holds what every shard measured in that
//! interval. Each shard's host, configuration and totals are kept in `shards`.
//!
//! Inputs must be shards of one workload: the same shard count, master seed, flags
//! (connections, requests, rate as given, pipeline, warm-up, budget kind, workload) and
//! resplab version, and distinct shard numbers. Anything else is refused with a message
//! that names the file and what differs.
//!
//! The merge is a pure function of the records: the engine calls it for an experiment's
//! generator shards and the CLI for `resplab merge`. It reads in three steps, each a
//! function below: [`shards_of`] (every input is a shard, none twice), [`check_one_workload`]
//! (they ran one workload) and [`missing_shards`], then [`merged_record`] adds the parts.

use crate::{
    ClusterSummary, ConnectionStats, CpuTime, LatencyUs, LoadModel, MergedShard, NodeSummary,
    OpenLoopStats, Outage, RunEnd, RunRecord, SecondSample, ShardInfo, Summary, Warning,
};
use resplab_stats::hist::LatencyHistogram;
use serde_json::Value;
use std::collections::BTreeMap;

/// Why shard results cannot be merged.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{0}")]
pub struct MergeError(pub String);

/// A start spread above this many ms gets a warning (series intervals of 100 ms would mix
/// shards' seconds).
const SPREAD_WARN_MS: f64 = 100.0;

/// One input known to be a shard result: its label, its record and its shard facts.
type Shard<'a> = (&'a str, &'a RunRecord, &'a ShardInfo);

/// Merges shard results, each labelled (a file name, a host) for error messages.
///
/// With `allow_partial`, shards missing from the set are allowed (and said in a warning);
/// otherwise every shard `1..=N` must be present.
///
/// # Errors
/// A [`MergeError`] naming the input and what does not fit.
pub fn merge(inputs: &[(String, RunRecord)], allow_partial: bool) -> Result<RunRecord, MergeError> {
    let shards = shards_of(inputs)?;
    check_one_workload(&shards)?;
    let count = shards[0].2.count;
    let missing = missing_shards(&shards);
    if !missing.is_empty() && !allow_partial {
        return Err(MergeError(format!(
            "shard(s) {} missing: the merge of {} of {count} shards is not the workload's result (give --partial to merge them anyway)",
            missing.join(", "),
            shards.len()
        )));
    }
    merged_record(&shards, &missing)
}

/// The inputs as shards, in shard order. Refuses an empty set, an input that is not a
/// shard result (or is already a merge) and a shard given twice.
fn shards_of(inputs: &[(String, RunRecord)]) -> Result<Vec<Shard<'_>>, MergeError> {
    if inputs.is_empty() {
        return Err(MergeError(
            "nothing to merge: give the shard results (resplab bench --shard I/N --json FILE)"
                .into(),
        ));
    }
    let mut shards: Vec<Shard<'_>> = Vec::with_capacity(inputs.len());
    for (label, r) in inputs {
        match &r.shard {
            Some(s) => shards.push((label.as_str(), r, s)),
            None if !r.shards.is_empty() => {
                return Err(MergeError(format!(
                    "{label}: already a merged result of {} shards; merge the shard results themselves",
                    r.shards.len()
                )))
            }
            None => {
                return Err(MergeError(format!(
                    "{label}: not a shard result (it was run without --shard I/N); only the results of one workload's shards can be merged"
                )))
            }
        }
    }
    shards.sort_by_key(|s| s.2.index);
    for w in shards.windows(2) {
        if w[0].2.index == w[1].2.index {
            return Err(MergeError(format!(
                "{} and {} are both shard {}/{}: each shard must be merged once",
                w[0].0,
                w[1].0,
                w[0].2.index + 1,
                w[0].2.count
            )));
        }
    }
    Ok(shards)
}

/// Refuses shards that did not run one workload, naming the first thing that differs
/// between a shard and the first one.
fn check_one_workload(shards: &[Shard<'_>]) -> Result<(), MergeError> {
    let (first_label, first, fs) = shards[0];
    for &(label, r, s) in &shards[1..] {
        let differs = |what: &str, a: String, b: String| {
            Err(MergeError(format!(
                "{label} and {first_label} are not shards of one workload: {what} differs ({b} vs {a})"
            )))
        };
        let pairs = [
            ("the shard count", fs.count.to_string(), s.count.to_string()),
            (
                "the master seed (--seed)",
                fs.master_seed.to_string(),
                s.master_seed.to_string(),
            ),
            (
                "--per-shard",
                fs.per_shard.to_string(),
                s.per_shard.to_string(),
            ),
            (
                "-c as given",
                fs.given_clients.to_string(),
                s.given_clients.to_string(),
            ),
            (
                "-n as given",
                format!("{:?}", fs.given_requests),
                format!("{:?}", s.given_requests),
            ),
            (
                "--rate as given",
                format!("{:?}", fs.given_rate_per_sec),
                format!("{:?}", s.given_rate_per_sec),
            ),
            (
                "the resplab version",
                first.tool.version.clone(),
                r.tool.version.clone(),
            ),
            (
                "the load model",
                first.load_model.label(),
                r.load_model.label(),
            ),
        ];
        if let Some((what, a, b)) = pairs.into_iter().find(|(_, a, b)| a != b) {
            return differs(what, a, b);
        }
        let (a, b) = (
            workload_identity(&first.config),
            workload_identity(&r.config),
        );
        if a != b {
            let what = a
                .iter()
                .find(|(k, v)| b.get(*k) != Some(*v))
                .or_else(|| b.iter().find(|(k, _)| !a.contains_key(*k)))
                .map(|(k, _)| k.clone())
                .unwrap_or_else(|| "the configuration".into());
            return differs(
                &what,
                a.get(&what).map(Value::to_string).unwrap_or_default(),
                b.get(&what).map(Value::to_string).unwrap_or_default(),
            );
        }
    }
    Ok(())
}

/// The shards of the set that are not among `shards`, as `I/N`.
fn missing_shards(shards: &[Shard<'_>]) -> Vec<String> {
    let count = shards[0].2.count;
    (0..count)
        .filter(|i| !shards.iter().any(|s| s.2.index == *i))
        .map(|i| format!("{}/{count}", i + 1))
        .collect()
}

/// The merged record of checked shards (`missing`: the shards not given, for the
/// warning and the configuration's `merge` entry).
fn merged_record(shards: &[Shard<'_>], missing: &[String]) -> Result<RunRecord, MergeError> {
    let (_, first, fs) = shards[0];
    let records: Vec<&RunRecord> = shards.iter().map(|s| s.1).collect();
    // In this order, so that of several unreadable histograms the same one is named.
    let totals = merge_summaries(records.iter().map(|r| &r.totals))?;
    let commands = merge_commands(&records)?;
    let nodes = merge_nodes(&records)?;
    let open_loop = merge_open_loop(&records)?;
    let base_ms = records
        .iter()
        .map(|r| measured_start_ms(r))
        .fold(f64::INFINITY, f64::min);
    let (series, step) = merge_series(&records, base_ms)?;
    let connections = merge_connections(&records, base_ms)?;
    let merged_shards: Vec<MergedShard> = shards.iter().map(merged_shard).collect();
    let spread = start_spread(&merged_shards);
    let clients: u32 = merged_shards.iter().map(|m| shard_clients(&m.config)).sum();
    Ok(RunRecord {
        schema_version: first.schema_version,
        tool: first.tool.clone(),
        started_at_unix_ms: records
            .iter()
            .map(|r| r.started_at_unix_ms)
            .min()
            .unwrap_or(0),
        config: merged_config(first, fs, clients, shards.len(), missing, spread),
        seed: fs.master_seed,
        load_model: merged_load_model(&records, clients),
        server: first.server.clone(),
        host: first.host.clone(),
        warmup_sec: first.warmup_sec,
        duration_sec: records.iter().map(|r| r.duration_sec).fold(0.0, f64::max),
        totals,
        commands,
        open_loop,
        series,
        series_interval_sec: step,
        connections,
        client_cpu: CpuTime {
            user_sec: records.iter().map(|r| r.client_cpu.user_sec).sum(),
            system_sec: records.iter().map(|r| r.client_cpu.system_sec).sum(),
        },
        end: merged_end(shards),
        warnings: merged_warnings(shards, missing, spread),
        shard: None,
        shards: merged_shards,
        cluster: merge_cluster(&records),
        nodes,
    })
}

/// How far apart the shards' loads began, in ms, and on which clock: the server's (each
/// shard's start corrected by its `TIME` offset) when every shard measured its offset,
/// otherwise the hosts' own clocks.
pub fn start_spread(shards: &[MergedShard]) -> Option<(f64, &'static str)> {
    if shards.is_empty() {
        return None;
    }
    let server: Option<Vec<f64>> = shards
        .iter()
        .map(|m| m.shard.load_started_server_ms())
        .collect();
    let (times, basis) = match server {
        Some(t) => (t, "server clock, from each shard's TIME offset"),
        None => (
            shards
                .iter()
                .map(|m| m.shard.load_started_unix_ms)
                .collect(),
            "the generators' own clocks",
        ),
    };
    let lo = times.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = times.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((hi - lo, basis))
}

/// The parts of a shard's configuration that every shard of one workload shares: all of
/// it but the target (hosts may reach the server by different names), the connection
/// count, seed and request budget (each shard's share) and the rate (its share).
fn workload_identity(config: &Value) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let Some(obj) = config.as_object() else {
        return out;
    };
    for (k, v) in obj {
        match k.as_str() {
            "target" | "clients" | "seed" | "start_at_unix_ms" | "threads" => {}
            "budget" => {
                // The kind (and the test time) must agree; a request count is a share.
                let mut v = v.clone();
                if let Some(b) = v.as_object_mut() {
                    if b.contains_key("requests") {
                        b.insert("requests".into(), Value::from("share"));
                    }
                }
                out.insert(k.clone(), v);
            }
            "load" => {
                let mut v = v.clone();
                if let Some(b) = v.as_object_mut() {
                    b.remove("rate_per_sec");
                }
                out.insert(k.clone(), v);
            }
            "workload" => {
                let mut v = v.clone();
                if let Some(b) = v.as_object_mut() {
                    b.remove("seed");
                }
                out.insert(k.clone(), v);
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

fn shard_clients(config: &Value) -> u32 {
    config
        .get("clients")
        .and_then(Value::as_u64)
        .map_or(0, |c| u32::try_from(c).unwrap_or(u32::MAX))
}

/// Wall-clock start of a record's measured part, ms since the epoch.
fn measured_start_ms(r: &RunRecord) -> f64 {
    r.series
        .iter()
        .find_map(|s| s.unix_ms.map(|u| u - s.t_sec * 1e3))
        .unwrap_or(r.started_at_unix_ms as f64 + r.warmup_sec * 1e3)
}

/// One shard as the merged record keeps it.
fn merged_shard(s: &Shard<'_>) -> MergedShard {
    let (_, r, info) = *s;
    MergedShard {
        shard: info.clone(),
        host: r.host.clone(),
        config: r.config.clone(),
        started_at_unix_ms: r.started_at_unix_ms,
        duration_sec: r.duration_sec,
        totals: r.totals.clone(),
        client_cpu: r.client_cpu.clone(),
        end: r.end.clone(),
    }
}

/// The first shard's configuration with the whole workload's connection count, the
/// master seed and what the merge took in (`merge`: shards, missing ones, start spread).
fn merged_config(
    first: &RunRecord,
    fs: &ShardInfo,
    clients: u32,
    merged: usize,
    missing: &[String],
    spread: Option<(f64, &'static str)>,
) -> Value {
    let mut config = first.config.clone();
    if let Some(obj) = config.as_object_mut() {
        obj.insert("clients".into(), clients.into());
        obj.insert("seed".into(), fs.master_seed.into());
        obj.insert(
            "merge".into(),
            serde_json::json!({
                "shards": merged,
                "shard_count": fs.count,
                "missing": missing,
                "start_spread_ms": spread.map(|s| s.0),
                "start_spread_basis": spread.map(|s| s.1),
            }),
        );
    }
    config
}

/// The first shard's load model with the whole workload's connections (and, in open
/// loop, the sum of the shards' rates).
fn merged_load_model(records: &[&RunRecord], clients: u32) -> LoadModel {
    match &records[0].load_model {
        LoadModel::ClosedLoop { pipeline, .. } => LoadModel::ClosedLoop {
            clients,
            pipeline: *pipeline,
        },
        LoadModel::OpenLoop {
            arrivals, pipeline, ..
        } => LoadModel::OpenLoop {
            rate_per_sec: records
                .iter()
                .map(|r| match &r.load_model {
                    LoadModel::OpenLoop { rate_per_sec, .. } => *rate_per_sec,
                    LoadModel::ClosedLoop { .. } => 0.0,
                })
                .sum(),
            arrivals: arrivals.clone(),
            clients,
            pipeline: *pipeline,
        },
    }
}

/// How the merge ended: the first shard (in shard order) that did not complete, with
/// its shard number in the message; otherwise completed.
fn merged_end(shards: &[Shard<'_>]) -> RunEnd {
    shards
        .iter()
        .find(|s| s.1.end != RunEnd::Completed)
        .map(|(_, r, s)| {
            let who = format!("shard {}/{}", s.index + 1, s.count);
            match &r.end {
                RunEnd::ServerLost { message } => RunEnd::ServerLost {
                    message: format!("{who}: {message}"),
                },
                RunEnd::Unreachable {
                    unreachable_sec,
                    message,
                } => RunEnd::Unreachable {
                    unreachable_sec: *unreachable_sec,
                    message: format!("{who}: {message}"),
                },
                other => other.clone(),
            }
        })
        .unwrap_or(RunEnd::Completed)
}

/// Every shard's warnings, each saying its shard and host, then the merge's own: shards
/// missing, and shards that began far apart.
fn merged_warnings(
    shards: &[Shard<'_>],
    missing: &[String],
    spread: Option<(f64, &'static str)>,
) -> Vec<Warning> {
    let count = shards[0].2.count;
    let mut warnings = Vec::new();
    for (_, r, s) in shards {
        for w in &r.warnings {
            warnings.push(Warning::Shard {
                index: s.index,
                count,
                host: r.host.hostname.clone(),
                warning: Box::new(w.clone()),
            });
        }
    }
    if !missing.is_empty() {
        warnings.push(Warning::PartialMerge {
            missing: missing.to_vec(),
            merged: shards.len(),
            count,
        });
    }
    if let Some((ms, basis)) = spread {
        if ms > SPREAD_WARN_MS {
            warnings.push(Warning::StartSpread {
                spread_ms: ms,
                basis: basis.into(),
            });
        }
    }
    warnings
}

fn merge_histograms<'a>(
    encoded: impl Iterator<Item = &'a str>,
) -> Result<LatencyHistogram, MergeError> {
    let mut h = LatencyHistogram::new();
    for e in encoded {
        let part = LatencyHistogram::from_base64(e)
            .map_err(|x| MergeError(format!("a shard's histogram cannot be read: {x}")))?;
        h.merge(&part);
    }
    Ok(h)
}

/// The exact sum of summaries: counts and bytes add, histograms merge, throughputs add.
fn merge_summaries<'a>(parts: impl Iterator<Item = &'a Summary>) -> Result<Summary, MergeError> {
    let parts: Vec<&Summary> = parts.collect();
    let hist = merge_histograms(parts.iter().map(|s| s.histogram.as_str()))?;
    let mut error_kinds: BTreeMap<String, u64> = BTreeMap::new();
    for s in &parts {
        for (k, v) in &s.error_kinds {
            *error_kinds.entry(k.clone()).or_insert(0) += v;
        }
    }
    Ok(Summary {
        requests: parts.iter().map(|s| s.requests).sum(),
        errors: parts.iter().map(|s| s.errors).sum(),
        ops_per_sec: parts.iter().map(|s| s.ops_per_sec).sum(),
        latency_us: LatencyUs::from_histogram(&hist),
        bytes_in: parts.iter().map(|s| s.bytes_in).sum(),
        bytes_out: parts.iter().map(|s| s.bytes_out).sum(),
        histogram: hist.to_base64(),
        error_kinds,
        nil_replies: parts.iter().map(|s| s.nil_replies).sum(),
    })
}

/// Each command's summary, added over the shards that ran it.
fn merge_commands(records: &[&RunRecord]) -> Result<BTreeMap<String, Summary>, MergeError> {
    let mut names: Vec<&String> = records.iter().flat_map(|r| r.commands.keys()).collect();
    names.sort();
    names.dedup();
    let mut commands = BTreeMap::new();
    for name in names {
        let s = merge_summaries(records.iter().filter_map(|r| r.commands.get(name)))?;
        commands.insert(name.clone(), s);
    }
    Ok(commands)
}

/// Cluster runs: each node's part added over the shards, redirections too.
fn merge_nodes(records: &[&RunRecord]) -> Result<BTreeMap<String, NodeSummary>, MergeError> {
    let mut node_names: Vec<&String> = records.iter().flat_map(|r| r.nodes.keys()).collect();
    node_names.sort();
    node_names.dedup();
    let mut nodes = BTreeMap::new();
    for name in node_names {
        let parts: Vec<&NodeSummary> = records.iter().filter_map(|r| r.nodes.get(name)).collect();
        let summary = merge_summaries(parts.iter().map(|n| &n.summary))?;
        nodes.insert(
            name.clone(),
            NodeSummary {
                role: parts.first().map(|n| n.role.clone()).unwrap_or_default(),
                summary,
                moved: parts.iter().map(|n| n.moved).sum(),
                ask: parts.iter().map(|n| n.ask).sum(),
                tryagain: parts.iter().map(|n| n.tryagain).sum(),
            },
        );
    }
    Ok(nodes)
}

/// The first cluster summary, with redirections and connections added over the shards.
fn merge_cluster(records: &[&RunRecord]) -> Option<ClusterSummary> {
    records.iter().find_map(|r| r.cluster.clone()).map(|mut c| {
        let all: Vec<&ClusterSummary> = records.iter().filter_map(|r| r.cluster.as_ref()).collect();
        c.moved = all.iter().map(|x| x.moved).sum();
        c.ask = all.iter().map(|x| x.ask).sum();
        c.tryagain = all.iter().map(|x| x.tryagain).sum();
        c.connections_per_master = all.iter().map(|x| x.connections_per_master).sum();
        c
    })
}

/// Open-loop figures when every shard ran open loop: service time and send lag merged,
/// unsent requests added, the generator behind if any shard's was.
fn merge_open_loop(records: &[&RunRecord]) -> Result<Option<OpenLoopStats>, MergeError> {
    if !records.iter().all(|r| r.open_loop.is_some()) {
        return Ok(None);
    }
    let ols: Vec<&OpenLoopStats> = records
        .iter()
        .filter_map(|r| r.open_loop.as_ref())
        .collect();
    let service = merge_histograms(ols.iter().map(|o| o.service_time_histogram.as_str()))?;
    let lag = merge_histograms(ols.iter().map(|o| o.send_lag_histogram.as_str()))?;
    Ok(Some(OpenLoopStats {
        service_time_us: LatencyUs::from_histogram(&service),
        service_time_histogram: service.to_base64(),
        send_lag_us: LatencyUs::from_histogram(&lag),
        send_lag_histogram: lag.to_base64(),
        unsent: ols.iter().map(|o| o.unsent).sum(),
        generator_behind: ols.iter().any(|o| o.generator_behind),
        send_lag_limit_us: ols.iter().map(|o| o.send_lag_limit_us).fold(0.0, f64::max),
    }))
}

/// Connection figures added over the shards; outages moved onto the merged time axis
/// (which starts at `base_ms`) and sorted, set-up times merged.
fn merge_connections(records: &[&RunRecord], base_ms: f64) -> Result<ConnectionStats, MergeError> {
    let mut connections = ConnectionStats::default();
    let mut while_reachable = 0.0;
    let mut any_outage = false;
    for r in records {
        let c = &r.connections;
        connections.opened += c.opened;
        connections.reconnects += c.reconnects;
        connections.protocol_errors += c.protocol_errors;
        connections.unreachable_sec = connections.unreachable_sec.max(c.unreachable_sec);
        let shift = (measured_start_ms(r) - base_ms) / 1e3;
        connections.outages.extend(c.outages.iter().map(|o| Outage {
            start_sec: o.start_sec + shift,
            end_sec: o.end_sec + shift,
            recovered: o.recovered,
            node: o.node.clone(),
        }));
        any_outage |= c.ops_per_sec_while_reachable.is_some();
        while_reachable += c
            .ops_per_sec_while_reachable
            .unwrap_or(r.totals.ops_per_sec);
    }
    connections
        .outages
        .sort_by(|a, b| a.start_sec.total_cmp(&b.start_sec));
    let setups: Vec<&str> = records
        .iter()
        .filter_map(|r| r.connections.setup_histogram.as_deref())
        .collect();
    if !setups.is_empty() {
        let h = merge_histograms(setups.into_iter())?;
        connections.setup_us = Some(LatencyUs::from_histogram(&h));
        connections.setup_histogram = Some(h.to_base64());
    }
    connections.ops_per_sec_while_reachable = any_outage.then_some(while_reachable);
    Ok(connections)
}

/// The shards' series on one wall-clock grid: interval `k` (ending `k` steps after the
/// earliest measured start) holds every shard's interval that ended within it. The grid
/// step is the coarsest of the shards' steps.
fn merge_series(
    records: &[&RunRecord],
    base_ms: f64,
) -> Result<(Vec<SecondSample>, f64), MergeError> {
    let step = records
        .iter()
        .map(|r| r.series_interval_sec)
        .fold(0.0, f64::max)
        .max(1e-3);
    let finest = records
        .iter()
        .map(|r| r.series_interval_sec)
        .fold(f64::INFINITY, f64::min)
        .min(step);
    // An interval end up to a quarter step (or half the finest step) late still belongs
    // to the interval it closes: starts a few ms apart must not shift a shard by one.
    let tolerance = (finest / step / 2.0).min(0.25);
    let mut grid: BTreeMap<u64, GridCell> = BTreeMap::new();
    for r in records {
        let start = measured_start_ms(r);
        for s in &r.series {
            let end_ms = s.unix_ms.unwrap_or(start + s.t_sec * 1e3);
            let k = ((end_ms - base_ms) / (step * 1e3) - tolerance)
                .ceil()
                .max(1.0) as u64;
            grid.entry(k).or_default().add(s)?;
        }
    }
    let series = grid
        .into_iter()
        .map(|(k, cell)| cell.into_sample(k, step, base_ms))
        .collect();
    Ok((series, step))
}

/// What the shards measured in one interval of the merged series.
#[derive(Debug)]
struct GridCell {
    requests: u64,
    errors: u64,
    ops_per_sec: f64,
    hist: LatencyHistogram,
    /// Every interval added kept its histogram, so the latencies are exact.
    exact: bool,
}

impl Default for GridCell {
    fn default() -> Self {
        GridCell {
            requests: 0,
            errors: 0,
            ops_per_sec: 0.0,
            hist: LatencyHistogram::new(),
            exact: true,
        }
    }
}

impl GridCell {
    fn add(&mut self, s: &SecondSample) -> Result<(), MergeError> {
        self.requests += s.requests;
        self.errors += s.errors;
        self.ops_per_sec += s.ops_per_sec;
        match &s.histogram {
            Some(h) => self
                .hist
                .merge(&LatencyHistogram::from_base64(h).map_err(|x| {
                    MergeError(format!("a shard's interval histogram cannot be read: {x}"))
                })?),
            None => self.exact = false,
        }
        Ok(())
    }

    /// Interval `k` of a grid of `step` seconds that starts at `base_ms`.
    fn into_sample(self, k: u64, step: f64, base_ms: f64) -> SecondSample {
        let t_sec = (k as f64 * step * 1e9).round() / 1e9;
        SecondSample {
            t_sec,
            requests: self.requests,
            errors: self.errors,
            ops_per_sec: self.ops_per_sec,
            latency_us: if self.exact {
                LatencyUs::from_histogram(&self.hist)
            } else {
                LatencyUs::default()
            },
            unix_ms: Some(base_ms + t_sec * 1e3),
            histogram: self.exact.then(|| self.hist.to_base64()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{fixture, HostInfo, ToolInfo};

    /// A shard record whose replies all took `latency_us` (µs), `n` of them.
    fn shard(index: u32, count: u32, replies_us: &[(u64, u64)], start_ms: f64) -> RunRecord {
        let mut h = LatencyHistogram::new();
        for &(us, n) in replies_us {
            h.record_n(us * 1000, n);
        }
        let requests = h.count();
        let latency_us = LatencyUs::from_histogram(&h);
        let bytes = (requests * 5, requests * 30);
        let summary = fixture::summary(requests, requests as f64 / 2.0, latency_us, bytes, &h);
        let series = (1..=2)
            .map(|k| SecondSample {
                t_sec: f64::from(k),
                requests: requests / 2,
                errors: 0,
                ops_per_sec: requests as f64 / 2.0,
                latency_us: summary.latency_us.clone(),
                unix_ms: Some(start_ms + f64::from(k) * 1e3),
                histogram: Some(h.to_base64()),
            })
            .collect();
        RunRecord {
            tool: ToolInfo {
                name: "resplab".into(),
                version: "0.1.0".into(),
                git_revision: None,
            },
            started_at_unix_ms: start_ms as u64,
            config: serde_json::json!({
                "target": {"kind": "tcp", "host": format!("10.0.0.{index}"), "port": 6379},
                "clients": 5, "pipeline": 1, "seed": 100 + index,
                "budget": {"test_time_sec": 2.0},
                "load": {"kind": "closed_loop"},
                "workload": {"seed": 100 + index, "kind": "mix"},
            }),
            seed: u64::from(100 + index),
            load_model: LoadModel::ClosedLoop {
                clients: 5,
                pipeline: 1,
            },
            host: HostInfo {
                hostname: format!("gen{index}"),
                ..HostInfo::default()
            },
            duration_sec: 2.0,
            series,
            client_cpu: CpuTime {
                user_sec: 0.5,
                system_sec: 0.5,
            },
            shard: Some(ShardInfo {
                index,
                count,
                master_seed: 42,
                given_clients: 5 * count,
                load_started_unix_ms: start_ms,
                clock_offset_ms: Some(0.0),
                ..ShardInfo::default()
            }),
            ..fixture::run_record(summary)
        }
    }

    fn inputs(records: Vec<RunRecord>) -> Vec<(String, RunRecord)> {
        records
            .into_iter()
            .enumerate()
            .map(|(i, r)| (format!("s{i}.json"), r))
            .collect()
    }

    #[test]
    fn percentiles_are_those_of_all_replies_not_an_average() {
        // Shard 1: 900 fast replies and 100 slow ones; shard 2: all 1000 medium.
        let a = shard(0, 2, &[(100, 900), (5000, 100)], 1e12);
        let b = shard(1, 2, &[(400, 1000)], 1e12 + 3.0);
        let m = merge(&inputs(vec![a.clone(), b.clone()]), false).unwrap();
        let mut all = LatencyHistogram::new();
        all.record_n(100_000, 900);
        all.record_n(5_000_000, 100);
        all.record_n(400_000, 1000);
        assert_eq!(m.totals.requests, 2000);
        assert_eq!(m.totals.latency_us, LatencyUs::from_histogram(&all));
        assert_eq!(
            m.commands["SET"].latency_us,
            LatencyUs::from_histogram(&all)
        );
        let merged = LatencyHistogram::from_base64(&m.totals.histogram).unwrap();
        for p in [50.0, 90.0, 95.0, 99.0, 99.9] {
            assert_eq!(merged.percentile_ns(p), all.percentile_ns(p), "p{p}");
        }
        // Averaging the shards' p95 (5 ms and 0.4 ms) says 2.7 ms; the true p95 of the
        // 2000 replies is 0.4 ms.
        let p95 = |r: &RunRecord| {
            LatencyHistogram::from_base64(&r.totals.histogram)
                .unwrap()
                .percentile_ns(95.0) as f64
                / 1e3
        };
        let averaged = (p95(&a) + p95(&b)) / 2.0;
        assert!((averaged - 2700.0).abs() < 20.0, "{averaged}");
        assert!((p95(&m) - 400.0).abs() < 1.0, "{}", p95(&m));
        assert!((m.totals.ops_per_sec - 1000.0).abs() < 1e-9);
        assert_eq!(m.totals.bytes_out, 2000 * 30);
        assert!((m.client_cpu.total_sec() - 2.0).abs() < 1e-12);
        assert_eq!(m.shards.len(), 2);
        assert_eq!(m.shards[1].host.hostname, "gen1");
        assert_eq!(m.seed, 42);
        assert_eq!(
            m.load_model,
            LoadModel::ClosedLoop {
                clients: 10,
                pipeline: 1
            }
        );
        // Series: two seconds, each holding both shards.
        assert_eq!(m.series.len(), 2);
        assert_eq!(m.series[0].requests, 1000);
        assert_eq!(m.series[0].t_sec, 1.0);
        let spread = start_spread(&m.shards).unwrap();
        assert!((spread.0 - 3.0).abs() < 1e-6, "{spread:?}");
    }

    #[test]
    fn series_align_on_wall_clock_time() {
        // Shard 2 began 1 s after shard 1: its first second is shard 1's second.
        let a = shard(0, 2, &[(100, 1000)], 1e12);
        let b = shard(1, 2, &[(100, 1000)], 1e12 + 1000.0);
        let m = merge(&inputs(vec![a, b]), false).unwrap();
        let per_sec: Vec<u64> = m.series.iter().map(|s| s.requests).collect();
        assert_eq!(per_sec, vec![500, 1000, 500]);
        assert!(m.warnings.iter().any(|w| w.kind() == "start_spread"));
    }

    #[test]
    fn shards_of_different_workloads_are_refused_by_name() {
        let a = shard(0, 2, &[(100, 10)], 1e12);
        let mut b = shard(1, 2, &[(100, 10)], 1e12);
        b.config["pipeline"] = 16.into();
        let e = merge(&inputs(vec![a.clone(), b]), false).unwrap_err().0;
        assert!(e.contains("s1.json") && e.contains("pipeline"), "{e}");

        let dup = shard(0, 2, &[(100, 10)], 1e12);
        let e = merge(&inputs(vec![a.clone(), dup]), false).unwrap_err().0;
        assert!(e.contains("both shard 1/2"), "{e}");

        let e = merge(&inputs(vec![a.clone()]), false).unwrap_err().0;
        assert!(e.contains("shard(s) 2/2 missing"), "{e}");
        let m = merge(&inputs(vec![a.clone()]), true).unwrap();
        assert!(m.warnings.iter().any(|w| w.kind() == "partial_merge"));

        let mut other_seed = shard(1, 2, &[(100, 10)], 1e12);
        other_seed.shard.as_mut().unwrap().master_seed = 7;
        let e = merge(&inputs(vec![a.clone(), other_seed]), false)
            .unwrap_err()
            .0;
        assert!(e.contains("master seed"), "{e}");

        let mut plain = shard(1, 2, &[(100, 10)], 1e12);
        plain.shard = None;
        let e = merge(&inputs(vec![a.clone(), plain]), false).unwrap_err().0;
        assert!(e.contains("not a shard result"), "{e}");

        let mut newer = shard(1, 2, &[(100, 10)], 1e12);
        newer.tool.version = "9.9.9".into();
        let e = merge(&inputs(vec![a, newer]), false).unwrap_err().0;
        assert!(e.contains("resplab version"), "{e}");
    }
}
