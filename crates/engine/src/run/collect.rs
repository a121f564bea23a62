//! After the load: the [`RunRecord`] from what the phases measured.
//!
//! Per-command summaries (each over the measured time of the phases that ran it) and
//! their total, the series, connection figures and outages (and what they make of the
//! run's end), the load model, open-loop figures, warnings, cluster nodes, and for shard
//! runs the start and clock facts that let their results be merged.

use super::drive::Measured;
use super::setup::Prepared;
use crate::cluster;
use crate::config::RunConfig;
use crate::connect;
use crate::host;
use crate::tally::{summarize, CmdTally, OpenLoopTally};
use resplab_results::{
    ClusterSummary, ConnectionStats, LatencyUs, LoadModel, NodeSummary, OpenLoopStats, Outage,
    RunEnd, RunRecord, ShardInfo, Summary, ToolInfo, Warning, SCHEMA_VERSION,
};
use resplab_stats::hist::LatencyHistogram;
use std::collections::BTreeMap;
use std::time::UNIX_EPOCH;

/// The record of a run that began at `started_at_unix_ms`.
pub(super) fn record(
    cfg: &RunConfig,
    prepared: Prepared,
    measured: Measured,
    started_at_unix_ms: u64,
) -> RunRecord {
    let Measured {
        by_name,
        open,
        series,
        mut connections,
        cpu,
        setup,
        nodes: node_tallies,
        duration_sec,
        end,
    } = measured;
    let (shard, late) = shard_facts(cfg, series.load_started_unix_ms(), prepared.clock_before);
    let (totals, commands) = summaries(&by_name, duration_sec);
    let (series, series_interval_sec) = series.finish();
    let end = account_connections(cfg, &mut connections, &setup, &totals, duration_sec, end);
    let open_loop = open_loop_stats(cfg, &open);
    let mut warnings = warnings_for(&totals, &connections, open_loop.as_ref());
    warnings.extend(late);
    let mut cluster_summary = prepared.cluster;
    let nodes = match &mut cluster_summary {
        Some(cs) => node_summaries(cs, &node_tallies, duration_sec),
        None => BTreeMap::new(),
    };
    RunRecord {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "resplab".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            git_revision: None,
        },
        started_at_unix_ms,
        config: cfg.to_public_json(),
        seed: cfg.seed,
        load_model: load_model(cfg),
        server: prepared.server,
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
    }
}

/// A shard whose load began this much later than `--start-at` gets a warning.
const START_LATE_MS: f64 = 50.0;

/// Shard runs (`--start-at`, or series with histograms): when the load began, the
/// server clock's offset before and after, and a warning when the load began well after
/// `--start-at`. Other runs: nothing.
fn shard_facts(
    cfg: &RunConfig,
    load_started_unix_ms: Option<f64>,
    clock_before: Option<(f64, f64)>,
) -> (Option<ShardInfo>, Vec<Warning>) {
    let mut warnings = Vec::new();
    if !(cfg.series_histograms || cfg.start_at.is_some()) {
        return (None, warnings);
    }
    let after = connect::open_ready(cfg, cfg.connect_timeout)
        .ok()
        .and_then(|mut ctl| connect::clock_offset(&mut ctl, 5));
    let start_at_unix_ms = cfg.start_at.and_then(|t| {
        t.duration_since(UNIX_EPOCH)
            .ok()
            .map(|d| d.as_millis() as u64)
    });
    let load_started_unix_ms = load_started_unix_ms.unwrap_or(0.0);
    if let Some(at) = start_at_unix_ms {
        let late = load_started_unix_ms - at as f64;
        if late > START_LATE_MS {
            warnings.push(Warning::StartLate { late_ms: late });
        }
    }
    let shard = ShardInfo {
        start_at_unix_ms,
        load_started_unix_ms,
        clock_offset_ms: clock_before.map(|c| c.0),
        clock_rtt_ms: clock_before.map(|c| c.1),
        clock_offset_after_ms: after.map(|c| c.0),
        ..ShardInfo::default()
    };
    (Some(shard), warnings)
}

/// The summary of every command (over the measured time of the phases that ran it) and
/// of all of them together.
fn summaries(
    by_name: &BTreeMap<String, (CmdTally, f64)>,
    duration_sec: f64,
) -> (Summary, BTreeMap<String, Summary>) {
    let mut total = CmdTally::default();
    let mut commands = BTreeMap::new();
    for (name, (t, secs)) in by_name {
        total.merge(t);
        commands.insert(name.clone(), summarize(t, *secs));
    }
    (summarize(&total, duration_sec), commands)
}

/// Completes the connection figures: set-up times, time unreachable and, after an
/// outage, throughput while the target could be reached. Returns the run's end with the
/// outages taken into account.
fn account_connections(
    cfg: &RunConfig,
    connections: &mut ConnectionStats,
    setup: &LatencyHistogram,
    totals: &Summary,
    duration_sec: f64,
    end: RunEnd,
) -> RunEnd {
    if !setup.is_empty() {
        connections.setup_us = Some(LatencyUs::from_histogram(setup));
        connections.setup_histogram = Some(setup.to_base64());
    }
    connections.unreachable_sec = time_covered(&connections.outages).min(duration_sec);
    if connections.unreachable_sec <= 0.0 {
        return end;
    }
    let up = duration_sec - connections.unreachable_sec;
    // Served requests (error replies left out, as in `totals.ops_per_sec`).
    let served = totals.ops_per_sec * duration_sec;
    connections.ops_per_sec_while_reachable = Some(if up > 0.0 { served / up } else { 0.0 });
    end_after_outages(end, connections, duration_sec, &cfg.target.to_string())
}

/// Seconds during which at least one outage was going on (outages of different cluster
/// nodes may overlap).
fn time_covered(outages: &[Outage]) -> f64 {
    let mut spans: Vec<(f64, f64)> = outages.iter().map(|o| (o.start_sec, o.end_sec)).collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut total = 0.0;
    let mut current: Option<(f64, f64)> = None;
    for (a, b) in spans {
        match current.as_mut() {
            Some(c) if a <= c.1 => c.1 = c.1.max(b),
            _ => {
                total += current.map_or(0.0, |c| c.1 - c.0);
                current = Some((a, b));
            }
        }
    }
    total + current.map_or(0.0, |c| c.1 - c.0)
}

fn load_model(cfg: &RunConfig) -> LoadModel {
    match cfg.open_loop {
        None => LoadModel::ClosedLoop {
            clients: cfg.clients,
            pipeline: cfg.pipeline,
        },
        Some(ol) => LoadModel::OpenLoop {
            rate_per_sec: ol.rate_per_sec,
            arrivals: ol.arrivals.as_str().to_string(),
            clients: cfg.clients,
            pipeline: cfg.pipeline,
        },
    }
}

/// Open loop: service time, send lag, unsent requests, and whether the generator fell
/// behind (send lag p99.9 above 5 % of a connection's interval, at least 50 µs, or any
/// request unsent).
fn open_loop_stats(cfg: &RunConfig, open: &OpenLoopTally) -> Option<OpenLoopStats> {
    cfg.open_loop.map(|ol| {
        // Each connection follows 1/clients of the schedule.
        let per_conn_interval_us = 1e6 * f64::from(cfg.clients) / ol.rate_per_sec;
        let limit_us = (0.05 * per_conn_interval_us).max(50.0);
        let lag_p999_us = open.lag.percentile_ns(99.9) as f64 / 1e3;
        OpenLoopStats {
            service_time_us: LatencyUs::from_histogram(&open.service),
            service_time_histogram: open.service.to_base64(),
            send_lag_us: LatencyUs::from_histogram(&open.lag),
            send_lag_histogram: open.lag.to_base64(),
            unsent: open.unsent,
            generator_behind: lag_p999_us > limit_us || open.unsent > 0,
            send_lag_limit_us: limit_us,
        }
    })
}

/// Cluster mode: each node's summary, with the redirections added into the cluster's.
fn node_summaries(
    cs: &mut ClusterSummary,
    tallies: &BTreeMap<String, (bool, cluster::NodeTally)>,
    duration_sec: f64,
) -> BTreeMap<String, NodeSummary> {
    let mut nodes = BTreeMap::new();
    for (name, (replica, t)) in tallies {
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
    nodes
}

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
    // Each address that went away, named: in cluster mode the node, not the seed.
    let mut by_node: BTreeMap<&str, Vec<&Outage>> = BTreeMap::new();
    for o in &conns.outages {
        by_node
            .entry(o.node.as_deref().unwrap_or(target))
            .or_default()
            .push(o);
    }
    let lines: Vec<String> = by_node
        .iter()
        .map(|(node, outages)| {
            let periods: Vec<String> = outages
                .iter()
                .map(|o| {
                    if o.recovered {
                        format!("{:.1}-{:.1} s", o.start_sec, o.end_sec)
                    } else {
                        format!("from {:.1} s to the end", o.start_sec)
                    }
                })
                .collect();
            let secs: f64 = outages.iter().map(|o| o.end_sec - o.start_sec).sum();
            let secs = if by_node.len() == 1 {
                unreachable
            } else {
                secs
            };
            format!(
                "{node} was unreachable for {secs:.1} of {duration_sec:.1} s ({})",
                periods.join(", ")
            )
        })
        .collect();
    let summary = lines.join("; ");
    // Still down at the end: some address never came back.
    let still_down = by_node
        .values()
        .any(|outages| outages.last().is_some_and(|o| !o.recovered));
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

fn warnings_for(
    totals: &Summary,
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
