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
//!
//! The run reads in three steps, one file each:
//!
//! - `setup`: the control connection, `INFO server`, clock offset, cluster detection,
//!   the open-file limit and the workload's set-up commands.
//! - `drive`: the phases one after another (`phase` runs one: threads, start signal,
//!   interval snapshots, progress), their tallies added up (`series` keeps the
//!   per-interval series).
//! - `collect`: the [`RunRecord`]: summaries, connections and outages, the load model,
//!   open-loop figures, warnings, cluster nodes and shard facts.

mod collect;
mod drive;
mod phase;
mod series;
mod setup;

use crate::config::RunConfig;
use crate::error::EngineError;
use crate::stop::StopToken;
use resplab_results::RunRecord;
use resplab_workload::Workload;
use std::time::{SystemTime, UNIX_EPOCH};

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
    /// Each command of the phase so far (measured part), in the phase's order; empty
    /// unless [`RunConfig::progress_commands`] is set.
    pub commands: Vec<CommandProgress>,
}

/// One command of a phase so far: what a live display or a metrics endpoint shows.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandProgress {
    pub name: String,
    /// Replies received, error replies included.
    pub requests: u64,
    /// Error replies and requests lost.
    pub errors: u64,
    /// Every latency recorded so far (open loop: from the intended send time).
    pub latency: resplab_stats::hist::LatencyHistogram,
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
    check_phases(workload)?;
    let prepared = setup::prepare(cfg, workload)?;
    let workload = prepared.tagged.as_ref().unwrap_or(workload);
    let started_at_unix_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let measured = drive::drive(cfg, workload, stop, progress, prepared.topology.as_ref())?;
    Ok(collect::record(cfg, prepared, measured, started_at_unix_ms))
}

/// Refuses a workload without phases or with a phase of no (or too many) commands.
fn check_phases(workload: &Workload) -> Result<(), EngineError> {
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
    Ok(())
}
