//! One phase of a run: worker threads on fresh connections, one common start, and the
//! coordinator listening.
//!
//! The coordinator starts the threads, waits until every connection is set up (a worker
//! that fails there fails the phase), waits for `--start-at` if given, then gives every
//! worker one epoch. From then on it only listens: workers send one interval snapshot
//! per [`INTERVAL_NS`] and their full tallies when they finish. An interval is complete
//! once every worker has moved past it; progress is told by whole seconds. The
//! process's CPU time is taken when the warm-up ends and when the phase does.

use super::series::{SeriesAccumulator, PER_SECOND};
use super::{CommandProgress, Progress};
use crate::cluster;
use crate::config::RunConfig;
use crate::connect;
use crate::error::EngineError;
use crate::host;
use crate::stop::StopToken;
use crate::tally::{served_rate, CmdTally, Counts, OpenLoopTally};
use crate::worker::{run_worker, Assignment, Msg, RawOutage, Shared, WorkerResult};
use resplab_results::{ConnectionStats, CpuTime, Outage};
use resplab_stats::hist::LatencyHistogram;
use resplab_workload::Workload;
use std::collections::BTreeMap;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant, SystemTime};

/// What one phase produced.
#[derive(Debug, Default)]
pub(super) struct PhaseOutcome {
    pub cmds: Vec<CmdTally>,
    pub open: OpenLoopTally,
    pub duration_sec: f64,
    pub connections: ConnectionStats,
    pub cpu: CpuTime,
    pub lost: Option<String>,
    /// Periods the target could not be reached, seconds since the run's measured start.
    pub outages: Vec<Outage>,
    /// Connection set-up times, ns.
    pub setup: LatencyHistogram,
    /// Cluster mode: per node, whether it is a replica and its counts.
    pub nodes: BTreeMap<String, (bool, crate::cluster::NodeTally)>,
}

/// Runs phase `p` on fresh connections.
pub(super) fn run_phase(
    cfg: &RunConfig,
    workload: &Workload,
    p: usize,
    stop: &StopToken,
    seconds: &mut SeriesAccumulator,
    progress: &mut dyn FnMut(&Progress),
    cluster: Option<&cluster::ClusterPlan>,
) -> Result<PhaseOutcome, EngineError> {
    let series_offset_sec = seconds.phase_offset_sec(p);
    let phase = &workload.phases()[p];
    let threads = cfg.effective_threads() as usize;
    let clients = cfg.clients as usize;
    let shared = Shared::default();
    let (tx, rx) = mpsc::channel::<Msg>();
    std::thread::scope(|s| {
        let assign = |worker, first_conn, nconns| Assignment {
            worker,
            cfg,
            workload,
            phase: p,
            first_conn,
            nconns,
            commands: phase.commands.len(),
            stop,
            shared: &shared,
            cluster,
        };
        let starts = spawn_workers(s, threads, clients, assign, &tx)?;
        drop(tx);
        if let Err(e) = await_ready(&rx, threads) {
            cancel(&starts);
            return Err(e);
        }
        if p == 0 {
            if let Some(at) = cfg.start_at {
                wait_until(at, stop);
            }
        }
        let cpu_start = host::process_cpu_time();
        let epoch = Instant::now();
        let mut cpu = CpuClock {
            start: cpu_start,
            taken: cfg.warmup.is_zero(),
            measure_at: epoch + cfg.warmup,
        };
        let epoch_ms = connect::unix_ms_now();
        seconds.phase_started(p, epoch_ms, epoch_ms + cfg.warmup.as_secs_f64() * 1e3);
        for st in &starts {
            let _ = st.send(Some(epoch));
        }
        let mut teller = Teller {
            phase: p,
            phase_name: &phase.name,
            progress,
            reported: 0,
            counts: Counts::default(),
            commands: phase
                .commands
                .iter()
                .filter(|_| cfg.progress_commands)
                .map(|name| CommandProgress {
                    name: name.clone(),
                    requests: 0,
                    errors: 0,
                    latency: LatencyHistogram::new(),
                })
                .collect(),
            per_worker: vec![Vec::new(); threads],
        };
        if cfg.warmup > Duration::ZERO {
            teller.warming_up();
        }
        let results = listen(&rx, threads, seconds, &mut teller, &mut cpu);
        let cpu = cpu.measured();
        if results.len() < threads {
            return Err(EngineError::Worker(
                "a worker thread ended without results".into(),
            ));
        }
        let lost = shared.lost.lock().ok().and_then(|g| g.clone());
        Ok(outcome(
            cfg,
            phase.commands.len(),
            &results,
            cpu,
            lost,
            series_offset_sec,
        ))
    })
}

/// Starts `threads` workers, sharing the `clients` connections out between them (the
/// first ones get one more when they do not divide evenly). Returns the senders of
/// their start signals.
///
/// # Errors
/// A thread that cannot be started (the ones started are told not to run).
fn spawn_workers<'scope, 'env: 'scope>(
    s: &'scope std::thread::Scope<'scope, 'env>,
    threads: usize,
    clients: usize,
    assign: impl Fn(usize, usize, usize) -> Assignment<'env>,
    tx: &Sender<Msg>,
) -> Result<Vec<Sender<Option<Instant>>>, EngineError> {
    let mut starts: Vec<Sender<Option<Instant>>> = Vec::with_capacity(threads);
    let mut first = 0;
    for w in 0..threads {
        let n = clients / threads + usize::from(w < clients % threads);
        let (stx, srx) = mpsc::channel();
        let a = assign(w, first, n);
        let tx = tx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("resplab-worker-{w}"))
            .spawn_scoped(s, move || run_worker(a, tx, srx));
        if let Err(e) = spawned {
            cancel(&starts);
            return Err(EngineError::Worker(format!("cannot start thread {w}: {e}")));
        }
        starts.push(stx);
        first += n;
    }
    Ok(starts)
}

/// Tells the workers started so far not to run (their phase will not start).
fn cancel(starts: &[Sender<Option<Instant>>]) {
    for st in starts {
        let _ = st.send(None);
    }
}

/// Waits until every worker has set up its connections.
///
/// # Errors
/// The first worker's set-up failure, or a worker gone without a word.
fn await_ready(rx: &Receiver<Msg>, threads: usize) -> Result<(), EngineError> {
    let mut ready = 0;
    while ready < threads {
        match rx.recv() {
            Ok(Msg::Ready) => ready += 1,
            Ok(Msg::Failed(e)) => return Err(e),
            Ok(_) => {}
            Err(_) => return Err(EngineError::Worker("a worker exited during set-up".into())),
        }
    }
    Ok(())
}

/// Connections are ready; the load begins at the agreed wall-clock time `at` (or at
/// once after a stop).
fn wait_until(at: SystemTime, stop: &StopToken) {
    while !stop.is_stopped() {
        // Sleep in short steps (a stop is seen quickly), then spin through the last two
        // milliseconds: sleeping overshoots by a scheduler tick.
        match at.duration_since(SystemTime::now()) {
            Ok(left) if left > Duration::from_millis(2) => {
                std::thread::sleep((left - Duration::from_millis(2)).min(Duration::from_millis(50)))
            }
            Ok(left) if !left.is_zero() => std::hint::spin_loop(),
            _ => break,
        }
    }
}

/// The process's CPU time over the measured part of a phase: `start` taken at the
/// epoch when there is no warm-up, else once the warm-up is over (`measure_at`).
struct CpuClock {
    start: CpuTime,
    taken: bool,
    measure_at: Instant,
}

impl CpuClock {
    /// Takes the start once the warm-up is over.
    fn tick(&mut self) {
        if !self.taken && Instant::now() >= self.measure_at {
            self.start = host::process_cpu_time();
            self.taken = true;
        }
    }

    /// CPU time since the start (none when the measured part never began).
    fn measured(&self) -> CpuTime {
        let end = host::process_cpu_time();
        if self.taken {
            host::cpu_delta(&self.start, &end)
        } else {
            CpuTime::default()
        }
    }
}

/// Tells the progress callback about a phase: once when its warm-up begins, then once
/// per completed second.
struct Teller<'a, 'p> {
    phase: usize,
    phase_name: &'a str,
    progress: &'a mut (dyn FnMut(&Progress) + 'p),
    /// Seconds already told.
    reported: u64,
    /// Replies, errors and error replies of the phase's measured part so far.
    counts: Counts,
    /// Each command so far, from the workers' interval snapshots.
    commands: Vec<CommandProgress>,
    /// The latest replies and errors per command of each worker (cumulative).
    per_worker: Vec<Vec<(u64, u64)>>,
}

impl Teller<'_, '_> {
    fn warming_up(&mut self) {
        (self.progress)(&Progress {
            phase: self.phase,
            phase_name: self.phase_name.to_string(),
            elapsed_sec: 0.0,
            warming_up: true,
            requests: 0,
            errors: 0,
            ops_per_sec_now: 0.0,
            ops_per_sec_overall: 0.0,
            p99_us_now: 0.0,
            commands: self.commands.clone(),
        });
    }

    /// Adds a worker's interval to the commands' figures.
    fn add(&mut self, worker: usize, commands: &[(u64, u64, Option<LatencyHistogram>)]) {
        if let Some(c) = self.per_worker.get_mut(worker) {
            *c = commands.iter().map(|(r, e, _)| (*r, *e)).collect();
        }
        for (i, cmd) in self.commands.iter_mut().enumerate() {
            if let Some((_, _, Some(h))) = commands.get(i) {
                cmd.latency.merge(h);
            }
            cmd.requests = self
                .per_worker
                .iter()
                .filter_map(|w| w.get(i))
                .map(|c| c.0)
                .sum();
            cmd.errors = self
                .per_worker
                .iter()
                .filter_map(|w| w.get(i))
                .map(|c| c.1)
                .sum();
        }
    }

    /// Tells every whole second before interval `upto` not told yet.
    fn seconds_before(&mut self, upto: u64, seconds: &SeriesAccumulator) {
        while self.reported < upto / PER_SECOND {
            let (now, p99) = seconds.second(self.phase, self.reported);
            self.counts.add(now);
            self.reported += 1;
            (self.progress)(&Progress {
                phase: self.phase,
                phase_name: self.phase_name.to_string(),
                elapsed_sec: self.reported as f64,
                warming_up: false,
                requests: self.counts.requests,
                errors: self.counts.errors,
                ops_per_sec_now: now.served() as f64,
                ops_per_sec_overall: served_rate(self.counts.served(), self.reported as f64),
                p99_us_now: p99,
                commands: self.commands.clone(),
            });
        }
    }
}

/// Listens to the workers until each has finished (or all are gone): interval snapshots
/// go into the series, completed seconds to the progress callback. Returns the workers'
/// results.
fn listen(
    rx: &Receiver<Msg>,
    threads: usize,
    seconds: &mut SeriesAccumulator,
    teller: &mut Teller<'_, '_>,
    cpu: &mut CpuClock,
) -> Vec<WorkerResult> {
    let p = teller.phase;
    let mut watermark: Vec<Option<u64>> = vec![None; threads];
    let mut done: Vec<bool> = vec![false; threads];
    let mut results: Vec<WorkerResult> = Vec::with_capacity(threads);
    while results.len() < threads {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(Msg::Second(iv)) => {
                seconds.add(p, iv.sec, iv.counts, &iv.hist);
                teller.add(iv.worker, &iv.commands);
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
        cpu.tick();
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
            teller.seconds_before(upto, seconds);
        }
    }
    results
}

/// The phase's figures from every worker's result: tallies merged, outages joined on
/// the run's measured time axis (the phase starts `series_offset_sec` into it).
fn outcome(
    cfg: &RunConfig,
    commands: usize,
    results: &[WorkerResult],
    cpu: CpuTime,
    lost: Option<String>,
    series_offset_sec: f64,
) -> PhaseOutcome {
    let measure_ns = cfg.warmup.as_nanos() as u64;
    let end_ns = results.iter().map(|r| r.end_ns).max().unwrap_or(0);
    let duration_sec = end_ns.saturating_sub(measure_ns) as f64 / 1e9;
    let mut out = PhaseOutcome {
        cmds: vec![CmdTally::default(); commands],
        duration_sec,
        cpu,
        lost,
        ..PhaseOutcome::default()
    };
    out.outages = merge_outages(
        results.iter().flat_map(|r| r.outages.iter()),
        measure_ns,
        end_ns.max(measure_ns),
        series_offset_sec,
    );
    for r in results {
        for (acc, t) in out.cmds.iter_mut().zip(&r.cmds) {
            acc.merge(t);
        }
        out.open.merge(&r.open);
        out.connections.opened += r.opened;
        out.connections.reconnects += r.reconnects;
        out.connections.renewed += r.renewed;
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
    out
}

/// Union of the outages of every worker, node by node, clipped to the measured window
/// and made relative to its start; ordered by start.
fn merge_outages<'a>(
    raw: impl Iterator<Item = &'a RawOutage>,
    measure_ns: u64,
    end_ns: u64,
    offset_sec: f64,
) -> Vec<Outage> {
    let mut by_node: BTreeMap<&str, Vec<(u64, u64, bool)>> = BTreeMap::new();
    for o in raw {
        let a = o.start_ns.clamp(measure_ns, end_ns);
        let recovered = o.end_ns.is_some();
        let b = o.end_ns.unwrap_or(end_ns).clamp(a, end_ns);
        if b > a || !recovered {
            by_node.entry(&o.node).or_default().push((a, b, recovered));
        }
    }
    let mut out = Vec::new();
    for (node, spans) in by_node {
        for (a, b, recovered) in union_of_spans(spans) {
            out.push(Outage {
                start_sec: offset_sec + (a - measure_ns) as f64 / 1e9,
                end_sec: offset_sec + (b - measure_ns) as f64 / 1e9,
                recovered,
                node: Some(node.to_string()),
            });
        }
    }
    out.sort_by(|x, y| x.start_sec.total_cmp(&y.start_sec));
    out
}

/// Overlapping spans `(start, end, recovered)` joined; a joined span is recovered when
/// the span that ends it last is.
fn union_of_spans(mut spans: Vec<(u64, u64, bool)>) -> Vec<(u64, u64, bool)> {
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
}
