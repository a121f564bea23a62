//! The run's phases, one after another, and what they measured added up.
//!
//! A phase that ends with the server lost, or a stop, ends the run with what was measured
//! so far; a server gone before a later phase could connect does too (earlier phases'
//! results are kept instead of discarded).

use super::phase::{run_phase, PhaseOutcome};
use super::series::SeriesAccumulator;
use super::Progress;
use crate::cluster;
use crate::config::RunConfig;
use crate::error::EngineError;
use crate::stop::StopToken;
use crate::tally::{CmdTally, OpenLoopTally};
use resplab_results::{ConnectionStats, CpuTime, RunEnd};
use resplab_stats::hist::LatencyHistogram;
use resplab_workload::{Phase, Workload};
use std::collections::BTreeMap;

/// What the phases of a run measured, added up.
#[derive(Debug)]
pub(super) struct Measured {
    /// Per command name: its tally and the measured seconds of the phases that ran it.
    pub by_name: BTreeMap<String, (CmdTally, f64)>,
    pub open: OpenLoopTally,
    pub series: SeriesAccumulator,
    /// Opened, reconnects, protocol errors and outages (set-up figures come later).
    pub connections: ConnectionStats,
    pub cpu: CpuTime,
    /// Connection set-up times, ns.
    pub setup: LatencyHistogram,
    /// Cluster mode: per node, whether it is a replica and its counts.
    pub nodes: BTreeMap<String, (bool, cluster::NodeTally)>,
    pub duration_sec: f64,
    pub end: RunEnd,
}

/// Runs the phases of `workload` (`topology`: the cluster's slot map, when the target
/// is one).
///
/// # Errors
/// Those of the first phase's set-up, and any failure other than a lost server in a
/// later one.
pub(super) fn drive(
    cfg: &RunConfig,
    workload: &Workload,
    stop: &StopToken,
    progress: &mut dyn FnMut(&Progress),
    topology: Option<&cluster::Topology>,
) -> Result<Measured, EngineError> {
    let mut m = Measured {
        by_name: BTreeMap::new(),
        open: OpenLoopTally::default(),
        series: SeriesAccumulator::new(cfg.series_histograms),
        connections: ConnectionStats::default(),
        cpu: CpuTime::default(),
        setup: LatencyHistogram::new(),
        nodes: BTreeMap::new(),
        duration_sec: 0.0,
        end: RunEnd::Completed,
    };
    for (p, phase) in workload.phases().iter().enumerate() {
        if stop.is_stopped() {
            m.end = RunEnd::Interrupted;
            break;
        }
        m.series.begin_phase(p, m.duration_sec);
        let plan = match topology {
            Some(seed) => Some(cluster::plan_phase(cfg, workload, p, seed)?),
            None => None,
        };
        let out = match run_phase(
            cfg,
            workload,
            p,
            stop,
            &mut m.series,
            progress,
            plan.as_ref(),
        ) {
            Ok(out) => out,
            // Earlier phases were measured: a server that is gone by now ends the run
            // with their results instead of discarding them.
            Err(e @ (EngineError::Connect { .. } | EngineError::Handshake { .. })) if p > 0 => {
                m.end = RunEnd::ServerLost {
                    message: e.to_string(),
                };
                break;
            }
            Err(e) => return Err(e),
        };
        m.add_phase(p, phase, &out);
        if let Some(message) = out.lost {
            m.end = RunEnd::ServerLost { message };
            break;
        }
        if stop.is_stopped() {
            m.end = RunEnd::Interrupted;
            break;
        }
    }
    Ok(m)
}

impl Measured {
    /// Adds what phase `p` measured.
    fn add_phase(&mut self, p: usize, phase: &Phase, out: &PhaseOutcome) {
        for (k, t) in out.cmds.iter().enumerate() {
            let name = phase
                .commands
                .get(k)
                .cloned()
                .unwrap_or_else(|| phase.name.clone());
            let entry = self.by_name.entry(name).or_default();
            if !phase_has_seen(&phase.commands, k) {
                entry.1 += out.duration_sec;
            }
            entry.0.merge(t);
        }
        self.open.merge(&out.open);
        self.series.end_phase(p, out.duration_sec);
        self.connections.opened += out.connections.opened;
        self.connections.reconnects += out.connections.reconnects;
        self.connections.renewed += out.connections.renewed;
        self.connections.protocol_errors += out.connections.protocol_errors;
        self.connections.outages.extend(out.outages.iter().cloned());
        self.setup.merge(&out.setup);
        for (name, (replica, t)) in &out.nodes {
            let entry = self.nodes.entry(name.clone()).or_default();
            entry.0 = *replica;
            entry.1.t.merge(&t.t);
            entry.1.moved += t.moved;
            entry.1.ask += t.ask;
            entry.1.tryagain += t.tryagain;
        }
        self.cpu.user_sec += out.cpu.user_sec;
        self.cpu.system_sec += out.cpu.system_sec;
        self.duration_sec += out.duration_sec;
    }
}

/// True when command `k` of a phase repeats an earlier command name of the same phase
/// (its phase duration is then already counted for that name).
fn phase_has_seen(commands: &[String], k: usize) -> bool {
    commands[..k.min(commands.len())]
        .iter()
        .any(|c| Some(c) == commands.get(k))
}
