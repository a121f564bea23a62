//! The worker thread: one event loop, its connections, generators and histograms.
//!
//! A worker owns everything it touches on the hot path. Per request it does no locking,
//! sends no message and allocates nothing: requests are generated into one reusable
//! [`Request`], encoded straight into the connection's write buffer, and their send times
//! kept in the connection's fixed ring of in-flight entries; replies are delimited in
//! place in the read buffer and recorded into the current second's per-command
//! histograms, owned by the thread. Once per second (of the measured part) the worker
//! merges those into its run totals and sends the coordinator an interval snapshot over a
//! channel; that is the only communication while it runs, and the only allocation.
//!
//! Two shortcuts keep the per-request work small without changing any number: a request
//! identical to the previous one reuses its wire bytes (see `WireCache`), and a run of
//! replies with the same command and latency (common with pipelining, where one refill
//! shares a send time and one read a receive time) is one histogram update.
//!
//! # System calls
//!
//! Sockets are registered once, edge-triggered, for reading and writing. A turn of the
//! loop is one `epoll_wait`, then for each ready connection one `read` (a second one only
//! when the first filled the buffer, or when the peer closed and its end of stream must be
//! seen) and, in closed loop, one `write` of everything the replies made room for. A read
//! that returns fewer bytes than asked drained the socket: with edge-triggered readiness
//! any later data raises a new event, so no extra `read` returning `EAGAIN` is spent.
//! That makes about two system calls per request without pipelining, and far fewer with.
//!
//! # Timing
//!
//! The clock is read once per `read` call: every reply parsed out of one `read` arrived in
//! the same batch of bytes, so they share that timestamp. Each reply's latency is then
//! measured to the read that delivered it, not to the first reply of its pipeline batch.
//! Send times are taken once per refill, just before the requests are encoded and
//! written, so a request's latency includes its own `write` call. Times are nanoseconds
//! since the phase's epoch, one `Instant` shared by all workers.
//!
//! # Open loop
//!
//! Each connection follows its own stream of a global schedule of intended send times.
//! A turn sends every request whose intended time has come, as long as the connection
//! has fewer than `pipeline` requests in flight; a request due while the connection is
//! full waits, and its latency keeps counting from its intended time. Latency is taken
//! from the intended time, service time from the actual send, and send lag (actual minus
//! intended) shows whether the generator kept up. Between sends the loop sleeps in
//! `epoll_wait`, woken by replies or by a timer set just before the next intended time
//! (`timer`), and polls without blocking only for the last few microseconds, so a worker
//! costs what its rate costs rather than a core.
//!
//! # Where things are
//!
//! This file holds what a worker is and its loop: set-up (every connection opened,
//! handshaken and registered before the start signal), the turn of the event loop, and
//! the result. The rest is split by concern:
//!
//! - `fill`: sending, closed and open loop.
//! - `route`: cluster mode's routing, redirections and topology refresh.
//! - `record`: reading replies and recording them; the per-thread `Recorder`.
//! - `reconnect`: failed connections, timeouts, reconnects with backoff, outages.
//! - `life`: connections renewed after a number of requests, the pause between opening
//!   one connection and the next, and connections added in steps (a staircase).
//! - `timer`: open loop's alarm for the next intended send.
//! - `wire`: request encoding (RESP or RESPB) and the cache of repeated requests.

mod fill;
mod life;
mod reconnect;
mod record;
mod route;
mod timer;
mod wire;

use crate::cluster::{ClusterPlan, ClusterState};
use crate::config::{Budget, RunConfig};
use crate::conn::{Conn, State};
use crate::error::EngineError;
use crate::stop::StopToken;
use crate::tally::{CmdTally, Counts, OpenLoopTally, KIND_TIMEOUT};
use mio::event::Event;
use mio::{Events, Poll, Token};
use reconnect::open_registered;
use record::Recorder;
use resplab_proto::resp::Limits;
use resplab_stats::hist::LatencyHistogram;
use resplab_workload::{Generator, Request, Schedule, ScheduleStream, Workload};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use timer::{SendTimer, SPIN_NS};
use wire::WireCache;

const NS_PER_SEC: u64 = 1_000_000_000;

/// Workers report their measurements in intervals of this length (a tenth of a second);
/// the coordinator keeps them at that resolution for short runs and by the second
/// otherwise.
pub(crate) const INTERVAL_NS: u64 = NS_PER_SEC / 10;

/// State shared by the workers of one phase and the coordinator (never touched per
/// request).
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// Set when the server is lost or a worker failed: every worker stops at once.
    pub abort: AtomicBool,
    /// Why the server counts as lost.
    pub lost: Mutex<Option<String>>,
    /// Connections whose request budget is spent (renewals after the last request).
    pub finished: AtomicU64,
}

impl Shared {
    fn lose(&self, message: String) {
        if let Ok(mut g) = self.lost.lock() {
            if g.is_none() {
                *g = Some(message);
            }
        }
        self.abort.store(true, Ordering::Relaxed);
    }
}

/// What a worker tells the coordinator.
#[derive(Debug)]
pub(crate) enum Msg {
    /// All connections are set up; waiting for the start signal.
    Ready,
    /// Set-up failed; the phase cannot run.
    Failed(EngineError),
    /// Interval `sec` (of [`INTERVAL_NS`]) of the measured part is over for this worker.
    Second(Interval),
    /// The worker finished.
    Done(Box<WorkerResult>),
}

/// One interval of one worker.
#[derive(Debug)]
pub(crate) struct Interval {
    pub worker: usize,
    /// Index of the interval, in units of [`INTERVAL_NS`] since the measured part began.
    pub sec: u64,
    pub counts: Counts,
    pub hist: LatencyHistogram,
    /// Per command of the phase: replies and errors so far (measured part), and the
    /// latencies of this interval (`None`: none recorded, so nothing is copied).
    pub commands: Vec<(u64, u64, Option<LatencyHistogram>)>,
}

/// A period during which one of a worker's connections was down and attempts to open it
/// again failed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RawOutage {
    /// ns since the epoch.
    pub start_ns: u64,
    /// `None`: still down when the worker finished.
    pub end_ns: Option<u64>,
    /// The address that could not be reached: the node of the connection in cluster
    /// mode, the target otherwise.
    pub node: String,
}

/// Everything a worker measured.
#[derive(Debug, Default)]
pub(crate) struct WorkerResult {
    pub worker: usize,
    pub cmds: Vec<CmdTally>,
    pub open: OpenLoopTally,
    /// When the last reply arrived or sending stopped (ns since the epoch).
    pub end_ns: u64,
    pub opened: u64,
    pub reconnects: u64,
    /// Connections closed and opened again after a number of requests.
    pub renewed: u64,
    pub protocol_errors: u64,
    /// Periods during which a connection was down and attempts to open it again failed.
    pub outages: Vec<RawOutage>,
    /// Time to set up each of its connections at the start (TCP connect, TLS handshake,
    /// HELLO/AUTH/SELECT), ns.
    pub setup: LatencyHistogram,
    /// Cluster mode: per node (by name), whether it is a replica and its counts.
    pub nodes: Vec<(String, bool, crate::cluster::NodeTally)>,
}

/// What one worker runs.
#[derive(Debug)]
pub(crate) struct Assignment<'a> {
    pub worker: usize,
    pub cfg: &'a RunConfig,
    pub workload: &'a Workload,
    pub phase: usize,
    /// Global index of this worker's first connection and how many it owns.
    pub first_conn: usize,
    pub nconns: usize,
    pub commands: usize,
    pub stop: &'a StopToken,
    pub shared: &'a Shared,
    /// Cluster mode: the topology and routing of the phase.
    pub cluster: Option<&'a ClusterPlan>,
}

/// Runs a worker: sets up its connections, reports `Ready`, waits for the epoch, runs
/// the phase and reports `Done`. Errors are reported as `Failed`.
pub(crate) fn run_worker(a: Assignment<'_>, tx: Sender<Msg>, start: Receiver<Option<Instant>>) {
    let mut w = match Worker::new(&a, tx.clone()) {
        Ok(w) => w,
        Err(e) => {
            let _ = tx.send(Msg::Failed(e));
            return;
        }
    };
    let _ = tx.send(Msg::Ready);
    let Ok(Some(epoch)) = start.recv() else {
        return;
    };
    w.epoch = epoch;
    let result = w.run();
    let _ = tx.send(Msg::Done(Box::new(result)));
}

struct Worker<'a> {
    a: &'a Assignment<'a>,
    poll: Poll,
    conns: Vec<Conn>,
    gens: Vec<Generator>,
    scheds: Vec<ScheduleStream>,
    req: Request,
    cache: WireCache,
    /// Some connection is down and waits for a reconnect.
    any_down: bool,
    rec: Recorder,
    limits: Limits,
    epoch: Instant,
    pipeline: usize,
    measure_ns: u64,
    end_ns: Option<u64>,
    open_loop: bool,
    reconnects: u64,
    renewed: u64,
    protocol_errors: u64,
    opened: u64,
    /// Set-up time of each connection opened at the start, ns.
    setup: LatencyHistogram,
    outages: Vec<RawOutage>,
    /// Logical clients: the first `nclients` connections are their home connections,
    /// which hold each client's budget and schedule (all of them outside cluster mode).
    nclients: usize,
    /// A staircase: when the next step adds connections (ns since the epoch).
    next_step_ns: Option<u64>,
    /// Cluster mode's routing state.
    cl: Option<Box<ClusterState>>,
    /// Open loop: the alarm for the next intended send (`None` in closed loop).
    timer: Option<SendTimer>,
}

impl<'a> Worker<'a> {
    /// Opens and registers every connection of the worker and sets up its generators,
    /// schedules and recorder.
    fn new(a: &'a Assignment<'a>, tx: Sender<Msg>) -> Result<Worker<'a>, EngineError> {
        let cfg = a.cfg;
        let poll =
            Poll::new().map_err(|e| EngineError::Worker(format!("cannot create a poller: {e}")))?;
        let mut req = Request::new();
        let mut setup = LatencyHistogram::new();
        let mut cl = a
            .cluster
            .map(|plan| Box::new(ClusterState::new(plan, a.nconns)));
        let Clients {
            mut conns,
            gens,
            scheds,
        } = open_clients(a, &poll, cl.as_deref_mut(), &mut req, &mut setup)?;
        if let Some(c) = cl.as_deref_mut() {
            route::open_other_nodes(a, &poll, c, &mut conns, &mut setup)?;
        }
        let measure_ns = cfg.warmup.as_nanos().min(u128::from(u64::MAX / 4)) as u64;
        let end_ns = match cfg.budget {
            Budget::Duration(d) => {
                Some(measure_ns.saturating_add(d.as_nanos().min(u128::from(u64::MAX / 4)) as u64))
            }
            Budget::Requests(_) => None,
        };
        let opened = conns.len() as u64;
        let timer = match cfg.open_loop {
            Some(_) => Some(
                SendTimer::new(&poll)
                    .map_err(|e| EngineError::Worker(format!("cannot create a timer: {e}")))?,
            ),
            None => None,
        };
        Ok(Worker {
            a,
            poll,
            conns,
            gens,
            scheds,
            req,
            cache: WireCache::for_wire(cfg.wire),
            any_down: false,
            rec: Recorder::new(
                a.worker,
                tx,
                a.commands,
                measure_ns,
                a.cfg.progress_commands,
            ),
            limits: Limits::default(),
            epoch: Instant::now(),
            pipeline: cfg.pipeline as usize,
            measure_ns,
            end_ns,
            open_loop: cfg.open_loop.is_some(),
            reconnects: 0,
            renewed: 0,
            protocol_errors: 0,
            opened,
            setup,
            outages: Vec::new(),
            nclients: life::opened_at_start(cfg, a.nconns),
            next_step_ns: cfg.ramp.map(|r| r.every.as_nanos() as u64),
            cl,
            timer,
        })
    }

    #[inline]
    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    fn run(mut self) -> WorkerResult {
        let request_timeout_ns = self
            .a
            .cfg
            .request_timeout
            .as_nanos()
            .min(u128::from(u64::MAX / 4)) as u64;
        let stopped_at = self.drive(request_timeout_ns);
        self.finish(stopped_at)
    }

    /// The event loop, until the budget is spent and the replies are in (or the drain
    /// time is over), or the run is stopped. Returns when sending stopped (ns since the
    /// epoch), if it did.
    fn drive(&mut self, request_timeout_ns: u64) -> Option<u64> {
        let mut events = Events::with_capacity(1024);
        let drain_ns = request_timeout_ns.min(2 * NS_PER_SEC);
        let mut stopped_at: Option<u64> = None;
        let mut next_check = 0u64;
        loop {
            let now = self.now_ns();
            if stopped_at.is_none() && self.should_stop_sending(now) {
                if self.open_loop && !self.interrupted() {
                    // The test time is over: what came due before its end still goes
                    // out (late, with its lag recorded) if the cap allows.
                    self.fill_all(now);
                }
                stopped_at = Some(now);
                self.count_unsent(now);
            }
            if let Some(t) = stopped_at {
                let inflight = self
                    .conns
                    .iter()
                    .any(|c| c.is_live() && !c.inflight.is_empty());
                if !inflight || now > t + drain_ns || self.a.shared.abort.load(Ordering::Relaxed) {
                    break;
                }
            } else if self.all_done() {
                break;
            }
            self.rec.roll(now);
            if now >= next_check {
                next_check = now + NS_PER_SEC / 10;
                self.expire(now, request_timeout_ns);
                self.any_down |= self.conns.iter().any(|c| !c.is_live());
                self.refresh_topology();
            }
            if self.any_down {
                self.any_down = self.reconnect_due();
            }
            let sending = stopped_at.is_none();
            if sending && self.next_step_ns.is_some_and(|t| now >= t) {
                self.step_up(now);
            }
            if sending {
                self.fill_all(now);
            } else if self.cl.is_some() {
                // Cluster mode writes once per turn: what the last turn added still goes.
                for i in 0..self.conns.len() {
                    self.flush(i);
                }
            }
            let timeout = self.poll_timeout(now, sending);
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    self.a.shared.lose(format!("the event loop failed: {e}"));
                }
                continue;
            }
            for ev in events.iter() {
                self.on_event(ev, sending);
            }
        }
        stopped_at
    }

    /// One readiness event: writes what waits, reads and records what came, and in
    /// closed loop sends the requests the replies made room for.
    #[inline]
    fn on_event(&mut self, ev: &Event, sending: bool) {
        let i = ev.token().0;
        if i >= self.conns.len() {
            return;
        }
        if ev.is_writable() {
            self.flush(i);
        }
        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
            let drain_all = ev.is_read_closed() || ev.is_error();
            self.on_readable(i, drain_all);
            let c = &self.conns[i];
            if c.left == 0 && c.inflight.is_empty() && c.is_live() {
                self.renew(i, sending);
            }
            if self.cl.is_some() {
                self.process_pending();
            }
            if !self.conns[i].is_live() {
                return;
            }
            if sending && !self.open_loop {
                let now = self.now_ns();
                if self.should_stop_sending(now) {
                    return;
                }
                if self.cl.is_some() {
                    // Written once per turn with everything the other ready
                    // connections add.
                    self.fill_conn(i, now);
                } else {
                    self.fill_closed(i, now);
                    self.flush(i);
                }
            }
        }
    }

    /// What the worker measured: requests still in flight count as timed out, the last
    /// interval is shipped, and connections still down close their outages.
    fn finish(mut self, stopped_at: Option<u64>) -> WorkerResult {
        let now = self.now_ns();
        for i in 0..self.conns.len() {
            let conn = &mut self.conns[i];
            self.rec.lose_inflight(conn, KIND_TIMEOUT, now);
        }
        if now >= self.measure_ns {
            self.rec.ship();
        }
        let end_ns = self.rec.last_reply_ns.max(stopped_at.unwrap_or(0)).min(now);
        for i in 0..self.conns.len() {
            if let State::Down {
                since,
                refused: true,
                ..
            } = &self.conns[i].state
            {
                let start_ns = since.saturating_duration_since(self.epoch).as_nanos() as u64;
                let node = self.target_of(i).0.to_string();
                self.outages.push(RawOutage {
                    start_ns,
                    end_ns: None,
                    node,
                });
            }
        }
        WorkerResult {
            worker: self.a.worker,
            nodes: self
                .cl
                .as_deref()
                .map(route::node_results)
                .unwrap_or_default(),
            cmds: std::mem::take(&mut self.rec.cmds),
            open: std::mem::take(&mut self.rec.open),
            end_ns,
            opened: self.opened,
            reconnects: self.reconnects,
            renewed: self.renewed,
            protocol_errors: self.protocol_errors,
            outages: std::mem::take(&mut self.outages),
            setup: std::mem::take(&mut self.setup),
        }
    }

    fn should_stop_sending(&self, now: u64) -> bool {
        self.interrupted() || self.end_ns.is_some_and(|e| now >= e)
    }

    /// Stopped by the user or by a lost server (not by the test time).
    fn interrupted(&self) -> bool {
        self.a.stop.is_stopped() || self.a.shared.abort.load(Ordering::Relaxed)
    }

    fn all_done(&self) -> bool {
        self.end_ns.is_none()
            && self.conns[..self.nclients]
                .iter()
                .all(|c| c.quota == Some(0))
            && self.conns.iter().all(|c| c.inflight.is_empty())
            && self
                .cl
                .as_deref()
                .is_none_or(|cl| cl.held.iter().all(Option::is_none) && cl.pending.is_empty())
    }

    /// How long `epoll_wait` may block. In open loop, with the next intended send more
    /// than [`SPIN_NS`] away, the send timer is set to wake the loop that long before it;
    /// closer than that, the loop polls without blocking.
    fn poll_timeout(&mut self, now: u64, sending: bool) -> Duration {
        let mut wait = NS_PER_SEC / 10;
        if sending && self.open_loop {
            let cluster = self.cl.is_some();
            let next = self.conns[..self.nclients]
                .iter()
                .filter(|c| cluster || (c.is_live() && c.inflight.len() < self.pipeline))
                .map(|c| c.next_intended_ns)
                .min()
                .unwrap_or(u64::MAX);
            let delta = next.saturating_sub(now);
            if delta <= SPIN_NS {
                wait = 0;
            } else if delta < wait
                && self
                    .timer
                    .as_mut()
                    .is_some_and(|t| t.arm(next - SPIN_NS, now))
            {
                // The timer wakes the loop before this (rounded up) timeout runs out.
                wait = delta;
            } else {
                // No timer: epoll_wait rounds up to whole milliseconds, so sleep until
                // about 1 ms before the next send, then poll without blocking.
                wait = wait.min(delta.saturating_sub(1_000_000));
            }
        }
        if let Some(end) = self.end_ns {
            if sending {
                wait = wait.min(end.saturating_sub(now));
            }
        }
        Duration::from_nanos(wait)
    }
}

/// The run-wide index of the worker's connection `k`.
fn global_index(a: &Assignment<'_>, k: usize) -> u64 {
    (a.first_conn + k) as u64
}

/// The clients of a worker, by index: connection, generator and schedule stream (open
/// loop only).
struct Clients {
    conns: Vec<Conn>,
    gens: Vec<Generator>,
    scheds: Vec<ScheduleStream>,
}

/// The worker's home connections, one per client it owns (each opened, handshaken and
/// registered under its index), with each client's generator and, in open loop, its
/// stream of the schedule. A client's request budget is its share of the run's. In
/// cluster mode a client's home connection goes to its home master, clients spread
/// over the masters in turn.
fn open_clients(
    a: &Assignment<'_>,
    poll: &Poll,
    mut cl: Option<&mut ClusterState>,
    req: &mut Request,
    setup: &mut LatencyHistogram,
) -> Result<Clients, EngineError> {
    let cfg = a.cfg;
    let total_conns = cfg.clients as u64;
    let mut conns = Vec::with_capacity(a.nconns);
    let mut gens = Vec::with_capacity(a.nconns);
    let mut scheds = Vec::new();
    let schedule = cfg
        .open_loop
        .map(|ol| Schedule::new(ol.rate_per_sec, ol.arrivals, cfg.seed ^ (a.phase as u64)));
    let masters = cl.as_ref().map(|c| c.topo.masters()).unwrap_or_default();
    let at_start = life::opened_at_start(cfg, a.nconns);
    for k in 0..a.nconns {
        let gen = a
            .workload
            .generator_partitioned(a.phase, global_index(a, k), total_conns);
        gen.reserve(req);
        gens.push(gen);
        let mut share = schedule
            .as_ref()
            .map(|s| s.stream(global_index(a, k), total_conns));
        if k >= at_start {
            // A staircase opens it later (`Worker::step_up`).
            scheds.extend(share);
            continue;
        }
        let global = (a.first_conn + k) as u64;
        let quota = match cfg.budget {
            Budget::Requests(n) => Some(n / total_conns + u64::from(global < n % total_conns)),
            Budget::Duration(_) => None,
        };
        let (target, node) = match (&mut cl, masters.is_empty()) {
            (Some(c), false) => {
                let m = masters[global as usize % masters.len()];
                c.home.push(m);
                (c.topo.nodes[m].target.clone(), m)
            }
            _ => (cfg.target.clone(), 0),
        };
        let stream = open_registered(cfg, &target, false, poll, Token(k), setup)?;
        if let Some(pause) = life::start_pause(cfg.connect_jitter, cfg.seed, a.worker, k, at_start)
        {
            std::thread::sleep(pause);
        }
        if quota == Some(0) && cfg.renew.is_some_and(|r| r.after_last) {
            // A connection with no request to send has finished already.
            a.shared.finish_client(cfg.clients);
        }
        let mut conn = Conn::new(stream, cfg.pipeline as usize, quota);
        conn.left = life::requests_per_socket(cfg);
        conn.client = k as u32;
        conn.node = node as u16;
        if let Some(c) = &mut cl {
            c.conn_of[k][node] = k;
        }
        if let Some(s) = &mut share {
            conn.next_intended_ns = s.next_offset_ns();
        }
        scheds.extend(share);
        conns.push(conn);
    }
    Ok(Clients {
        conns,
        gens,
        scheds,
    })
}
