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
//! In open loop the loop spins (non-blocking `epoll_wait`) during the last millisecond
//! before each intended send, so at rates above about 1000 requests per second per thread
//! a worker keeps its core busy: that is the price of sub-millisecond send accuracy.
//!
//! # Open loop
//!
//! Each connection follows its own stream of a global schedule of intended send times.
//! A turn sends every request whose intended time has come, as long as the connection
//! has fewer than `pipeline` requests in flight; a request due while the connection is
//! full waits, and its latency keeps counting from its intended time. Latency is taken
//! from the intended time, service time from the actual send, and send lag (actual minus
//! intended) shows whether the generator kept up. Between sends the loop sleeps in
//! `epoll_wait` until one millisecond before the next intended time and then polls
//! without blocking, since `epoll_wait` only has millisecond resolution.

use crate::cluster::{ClusterPlan, ClusterState, Held, Pending, MAX_REDIRECTS};
use crate::config::{Budget, RunConfig, Target, Wire};
use crate::conn::{Conn, InFlight, MioStream, State};
use crate::connect;
use crate::error::EngineError;
use crate::stop::StopToken;
use crate::tally::{
    CmdTally, OpenLoopTally, KIND_CONNECTION_LOST, KIND_PROTOCOL_ERROR, KIND_TIMEOUT,
};
use mio::{Events, Poll, Token};
use resplab_proto::resp::cluster::{parse_redirect, RedirectKind};
use resplab_proto::resp::scan::{error_kind, scan_reply, ReplyClass};
use resplab_proto::resp::{encode, Limits};
use resplab_stats::hist::LatencyHistogram;
use resplab_workload::{Generator, Request, Schedule, ScheduleStream, Workload};
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
    pub requests: u64,
    pub errors: u64,
    pub hist: LatencyHistogram,
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
    pub protocol_errors: u64,
    /// Periods (ns since the epoch) during which a connection was down and attempts to
    /// open it again failed; the last may be open (`None`: still down at the end).
    pub outages: Vec<(u64, Option<u64>)>,
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
    protocol_errors: u64,
    opened: u64,
    /// Set-up time of each connection opened at the start, ns.
    setup: LatencyHistogram,
    outages: Vec<(u64, Option<u64>)>,
    /// Logical clients: the first `nclients` connections are their home connections,
    /// which hold each client's budget and schedule (all of them outside cluster mode).
    nclients: usize,
    /// Cluster mode's routing state.
    cl: Option<Box<ClusterState>>,
}

/// The per-thread measurements, kept apart from the connections so both can be borrowed
/// mutably at once.
struct Recorder {
    worker: usize,
    tx: Sender<Msg>,
    cmds: Vec<CmdTally>,
    open: OpenLoopTally,
    measure_ns: u64,
    cur_sec: u64,
    /// Latencies of the current second, per command; merged into `cmds` and into the
    /// interval snapshot when the second ends, so each reply is recorded only once.
    iv_cmds: Vec<LatencyHistogram>,
    iv_total: LatencyHistogram,
    iv_requests: u64,
    iv_errors: u64,
    last_reply_ns: u64,
}

impl Recorder {
    /// Ships the current interval if `now` is in a later second.
    #[inline]
    fn roll(&mut self, now: u64) {
        if now < self.measure_ns {
            return;
        }
        let sec = (now - self.measure_ns) / INTERVAL_NS;
        if sec > self.cur_sec {
            self.ship();
            self.cur_sec = sec;
        }
    }

    fn ship(&mut self) {
        self.iv_total.reset();
        for (t, h) in self.cmds.iter_mut().zip(self.iv_cmds.iter_mut()) {
            if !h.is_empty() {
                t.hist.merge(h);
                self.iv_total.merge(h);
                h.reset();
            }
        }
        let hist = self.iv_total.clone();
        let _ = self.tx.send(Msg::Second(Interval {
            worker: self.worker,
            sec: self.cur_sec,
            requests: std::mem::take(&mut self.iv_requests),
            errors: std::mem::take(&mut self.iv_errors),
            hist,
        }));
    }

    /// Counts the in-flight requests of a failed connection as errors of `kind`.
    fn lose_inflight(&mut self, conn: &mut Conn, kind: &str, now: u64) {
        self.roll(now);
        for f in conn.inflight.drain(..) {
            if f.measured {
                if let Some(t) = self.cmds.get_mut(usize::from(f.cmd)) {
                    t.count_error(kind, 1);
                }
                self.iv_errors += 1;
            }
        }
    }
}

/// Why a connection had to be reset while reading.
enum ReadFailure {
    Lost(String),
    Protocol(String),
}

impl<'a> Worker<'a> {
    fn new(a: &'a Assignment<'a>, tx: Sender<Msg>) -> Result<Worker<'a>, EngineError> {
        let cfg = a.cfg;
        let poll =
            Poll::new().map_err(|e| EngineError::Worker(format!("cannot create a poller: {e}")))?;
        let pipeline = cfg.pipeline as usize;
        let total_conns = cfg.clients as u64;
        let mut conns = Vec::with_capacity(a.nconns);
        let mut gens = Vec::with_capacity(a.nconns);
        let mut scheds = Vec::new();
        let mut req = Request::new();
        let mut setup = LatencyHistogram::new();
        let schedule = cfg.open_loop.map(|ol| {
            let arrivals = match ol.arrivals {
                crate::config::Arrivals::Constant => resplab_workload::Arrivals::Constant,
                crate::config::Arrivals::Poisson => resplab_workload::Arrivals::Poisson,
            };
            Schedule::new(ol.rate_per_sec, arrivals, cfg.seed ^ (a.phase as u64))
        });
        let mut cl = a
            .cluster
            .map(|plan| Box::new(ClusterState::new(plan, a.nconns)));
        let masters = cl.as_ref().map(|c| c.topo.masters()).unwrap_or_default();
        for k in 0..a.nconns {
            let global = (a.first_conn + k) as u64;
            let quota = match cfg.budget {
                Budget::Requests(n) => Some(n / total_conns + u64::from(global < n % total_conns)),
                Budget::Duration(_) => None,
            };
            // A cluster client's home connection goes to its home master; clients are
            // spread over the masters in turn.
            let (target, node) = match (&mut cl, masters.is_empty()) {
                (Some(c), false) => {
                    let m = masters[global as usize % masters.len()];
                    c.home.push(m);
                    (c.topo.nodes[m].target.clone(), m)
                }
                _ => (cfg.target.clone(), 0),
            };
            let stream = open_registered(cfg, &target, false, &poll, Token(k), &mut setup)?;
            let mut conn = Conn::new(stream, pipeline, quota);
            conn.client = k as u32;
            conn.node = node as u16;
            if let Some(c) = &mut cl {
                c.conn_of[k][node] = k;
            }
            conns.push(conn);
            let gen = a
                .workload
                .generator_partitioned(a.phase, global, total_conns);
            gen.reserve(&mut req);
            gens.push(gen);
            if let Some(s) = &schedule {
                let mut stream = s.stream(global, total_conns);
                let first = stream.next_offset_ns();
                conns[k].next_intended_ns = first;
                scheds.push(stream);
            }
        }
        if let Some(c) = &mut cl {
            // Every client also connects to every other master (and, reading from
            // replicas, to the replicas) at the start, so no connection is made while
            // measuring unless the topology changes.
            let nodes = c.initial_nodes();
            for k in 0..a.nconns {
                for &node in &nodes {
                    if c.conn_of[k][node] != usize::MAX {
                        continue;
                    }
                    let idx = conns.len();
                    let target = c.topo.nodes[node].target.clone();
                    let stream = open_registered(
                        cfg,
                        &target,
                        c.is_replica(node),
                        &poll,
                        Token(idx),
                        &mut setup,
                    )?;
                    let mut conn = Conn::new(stream, pipeline, None);
                    conn.client = k as u32;
                    conn.node = node as u16;
                    c.conn_of[k][node] = idx;
                    conns.push(conn);
                }
            }
        }
        let nclients = a.nconns;
        let measure_ns = cfg.warmup.as_nanos().min(u128::from(u64::MAX / 4)) as u64;
        let end_ns = match cfg.budget {
            Budget::Duration(d) => {
                Some(measure_ns.saturating_add(d.as_nanos().min(u128::from(u64::MAX / 4)) as u64))
            }
            Budget::Requests(_) => None,
        };
        let opened = conns.len() as u64;
        Ok(Worker {
            a,
            poll,
            conns,
            gens,
            scheds,
            req,
            cache: WireCache::for_wire(cfg.wire),
            any_down: false,
            rec: Recorder {
                worker: a.worker,
                tx,
                cmds: vec![CmdTally::default(); a.commands],
                open: OpenLoopTally::default(),
                measure_ns,
                cur_sec: 0,
                iv_cmds: vec![LatencyHistogram::new(); a.commands],
                iv_total: LatencyHistogram::new(),
                iv_requests: 0,
                iv_errors: 0,
                last_reply_ns: 0,
            },
            limits: Limits::default(),
            epoch: Instant::now(),
            pipeline,
            measure_ns,
            end_ns,
            open_loop: cfg.open_loop.is_some(),
            reconnects: 0,
            protocol_errors: 0,
            opened,
            setup,
            outages: Vec::new(),
            nclients,
            cl,
        })
    }

    #[inline]
    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    fn run(mut self) -> WorkerResult {
        let mut events = Events::with_capacity(1024);
        let request_timeout_ns = self
            .a
            .cfg
            .request_timeout
            .as_nanos()
            .min(u128::from(u64::MAX / 4)) as u64;
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
                let i = ev.token().0;
                if i >= self.conns.len() {
                    continue;
                }
                if ev.is_writable() {
                    self.flush(i);
                }
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    let drain_all = ev.is_read_closed() || ev.is_error();
                    self.on_readable(i, drain_all);
                    if self.cl.is_some() {
                        self.process_pending();
                    }
                    if !self.conns[i].is_live() {
                        continue;
                    }
                    if sending && !self.open_loop {
                        let now = self.now_ns();
                        if self.should_stop_sending(now) {
                            continue;
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
        }
        let now = self.now_ns();
        for i in 0..self.conns.len() {
            let conn = &mut self.conns[i];
            self.rec.lose_inflight(conn, KIND_TIMEOUT, now);
        }
        if now >= self.measure_ns {
            self.rec.ship();
        }
        let end_ns = self.rec.last_reply_ns.max(stopped_at.unwrap_or(0)).min(now);
        for conn in &self.conns {
            if let State::Down {
                since,
                refused: true,
                ..
            } = &conn.state
            {
                let start = since.saturating_duration_since(self.epoch).as_nanos() as u64;
                self.outages.push((start, None));
            }
        }
        let nodes = match self.cl.as_deref() {
            Some(cl) => cl
                .topo
                .nodes
                .iter()
                .zip(&cl.nodes)
                .enumerate()
                .filter(|(i, (_, t))| {
                    t.t.requests > 0
                        || t.moved + t.ask + t.tryagain > 0
                        || cl
                            .conn_of
                            .iter()
                            .any(|row| row.get(*i).is_some_and(|&k| k != usize::MAX))
                })
                .map(|(_, (n, t))| (n.name(), n.master_of.is_some(), t.clone()))
                .collect(),
            None => Vec::new(),
        };
        WorkerResult {
            worker: self.a.worker,
            nodes,
            cmds: std::mem::take(&mut self.rec.cmds),
            open: std::mem::take(&mut self.rec.open),
            end_ns,
            opened: self.opened,
            reconnects: self.reconnects,
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

    /// How long `epoll_wait` may block.
    fn poll_timeout(&self, now: u64, sending: bool) -> Duration {
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
            // epoll_wait rounds up to whole milliseconds: sleep until about 1 ms before
            // the next send, then poll without blocking.
            wait = wait.min(delta.saturating_sub(1_000_000));
        }
        if let Some(end) = self.end_ns {
            if sending {
                wait = wait.min(end.saturating_sub(now));
            }
        }
        Duration::from_nanos(wait)
    }

    /// Encodes one request of connection `i` into its write buffer; returns the command
    /// index and the bytes written.
    #[inline]
    fn encode_one(&mut self, i: usize) -> (usize, u64) {
        let cmd = self.gens[i].next(&mut self.req);
        let conn = &mut self.conns[i];
        let before = conn.wbuf.len();
        encode_cached(&mut self.cache, cmd, &self.req, &mut conn.wbuf);
        (cmd, (conn.wbuf.len() - before) as u64)
    }

    /// Tops up every client (closed loop) or sends what is due (open loop), then writes.
    fn fill_all(&mut self, now: u64) {
        if self.cl.is_some() {
            if self.open_loop {
                for c in 0..self.nclients {
                    self.fill_cluster(c, now);
                }
            } else {
                for i in 0..self.conns.len() {
                    self.fill_conn(i, now);
                }
            }
            for i in 0..self.conns.len() {
                self.flush(i);
            }
            return;
        }
        for i in 0..self.conns.len() {
            if self.open_loop {
                self.fill_open(i, now);
            } else {
                self.fill_closed(i, now);
            }
            self.flush(i);
        }
    }

    /// Cluster mode: places client `c`'s held request if its connection has room now.
    /// Returns whether the client may go on (nothing is held any more).
    fn place_held(&mut self, c: usize, now: u64) -> bool {
        let Some(cl) = self.cl.as_deref_mut() else {
            return true;
        };
        let Some(h) = cl.held[c].take() else {
            return true;
        };
        let conn = &mut self.conns[h.conn];
        if !conn.is_live() || conn.inflight.len() >= self.pipeline {
            cl.held[c] = Some(h);
            return false;
        }
        if h.measured && self.open_loop {
            self.rec.open.lag.record(now.saturating_sub(h.intended_ns));
        }
        let f = InFlight {
            intended_ns: if self.open_loop { h.intended_ns } else { now },
            sent_ns: now,
            cmd: h.cmd,
            measured: h.measured,
            redirects: 0,
            wire_len: h.bytes.len() as u32,
        };
        push_request(conn, &h.bytes, f);
        let mut bytes = h.bytes;
        bytes.clear();
        cl.spare.push(bytes);
        true
    }

    /// Cluster mode: client `c` generates requests and sends each to the connection of
    /// its key's node, until a connection it needs is full (that request is held until
    /// the connection has room) or, in open loop, until nothing more is due.
    fn fill_cluster(&mut self, c: usize, now: u64) {
        loop {
            if !self.place_held(c, now) {
                return;
            }
            let intended;
            let measured;
            {
                let home = &mut self.conns[c];
                if self.open_loop {
                    if home.next_intended_ns > now {
                        return;
                    }
                    intended = home.next_intended_ns;
                    if self.end_ns.is_some_and(|e| intended >= e) {
                        home.next_intended_ns = u64::MAX;
                        return;
                    }
                    measured = intended >= self.measure_ns;
                } else {
                    intended = now;
                    measured = now >= self.measure_ns;
                }
                if measured {
                    match &mut home.quota {
                        Some(0) => {
                            if self.open_loop {
                                home.next_intended_ns = u64::MAX;
                            }
                            return;
                        }
                        Some(q) => *q -= 1,
                        None => {}
                    }
                }
                if self.open_loop {
                    home.next_intended_ns = self.scheds[c].next_offset_ns();
                }
            }
            let cmd = self.gens[c].next(&mut self.req);
            let node = match self.cl.as_deref() {
                Some(cl) => cl.node_for(c, cmd, &self.req),
                None => return,
            };
            let Some(k) = self.conn_for(c, node) else {
                if measured {
                    if let Some(t) = self.rec.cmds.get_mut(cmd) {
                        t.count_error(KIND_CONNECTION_LOST, 1);
                    }
                    self.rec.iv_errors += 1;
                }
                return;
            };
            let Some(cl) = self.cl.as_deref_mut() else {
                return;
            };
            let conn = &mut self.conns[k];
            let placed = conn.is_live() && conn.inflight.len() < self.pipeline;
            // Encoded straight into the connection's buffer when it has room (and copied
            // into its sent log), else into a held buffer.
            let bytes = if placed {
                let Conn { wbuf, sent, .. } = conn;
                let before = wbuf.len();
                encode_cached(&mut self.cache, cmd, &self.req, wbuf);
                sent.extend_from_slice(&wbuf[before..]);
                let bytes = wbuf.len() - before;
                if measured && self.open_loop {
                    self.rec.open.lag.record(now.saturating_sub(intended));
                }
                conn.inflight.push_back(InFlight {
                    intended_ns: intended,
                    sent_ns: now,
                    cmd: cmd as u16,
                    measured,
                    redirects: 0,
                    wire_len: bytes as u32,
                });
                bytes
            } else {
                let mut held = cl.spare.pop().unwrap_or_default();
                encode_cached(&mut self.cache, cmd, &self.req, &mut held);
                let bytes = held.len();
                cl.held[c] = Some(Held {
                    conn: k,
                    cmd: cmd as u16,
                    intended_ns: intended,
                    measured,
                    bytes: held,
                });
                bytes
            };
            if measured {
                if let Some(t) = self.rec.cmds.get_mut(cmd) {
                    t.bytes_out += bytes as u64;
                }
                if let Some(nt) = cl.nodes.get_mut(node) {
                    nt.t.bytes_out += bytes as u64;
                }
            }
            if !placed {
                return;
            }
        }
    }

    /// Cluster mode, closed loop: tops connection `i` up to `pipeline` requests in flight.
    /// Its client's requests for this node that were generated while filling its other
    /// connections go first; then the client generates more, and a request for another
    /// node waits in that node's stash (or, when that is full, is dropped unsent: its
    /// key was drawn from the same distribution, so the mix each node sees is kept, and
    /// it counts nowhere). Each connection so writes its requests in batches, as a
    /// client connected to one node would.
    fn fill_conn(&mut self, i: usize, now: u64) {
        let measured = now >= self.measure_ns;
        let (c, node) = {
            let conn = &self.conns[i];
            if !conn.is_live() {
                return;
            }
            (conn.client as usize, usize::from(conn.node))
        };
        let Some(cl) = self.cl.as_deref_mut() else {
            return;
        };
        let mut room = self.pipeline.saturating_sub(self.conns[i].inflight.len());
        // Requests already generated for this node.
        if let Some(st) = cl.stash.get_mut(c).and_then(|row| row.get_mut(node)) {
            while room > 0 && !st.items.is_empty() {
                if measured {
                    match &mut self.conns[c].quota {
                        Some(0) => return,
                        Some(q) => *q -= 1,
                        None => {}
                    }
                }
                let Some((cmd, range)) = st.pop() else {
                    break;
                };
                let bytes = &st.bytes[range];
                push_request(
                    &mut self.conns[i],
                    bytes,
                    InFlight {
                        intended_ns: now,
                        sent_ns: now,
                        cmd,
                        measured,
                        redirects: 0,
                        wire_len: bytes.len() as u32,
                    },
                );
                if measured {
                    if let Some(t) = self.rec.cmds.get_mut(usize::from(cmd)) {
                        t.bytes_out += bytes.len() as u64;
                    }
                    if let Some(nt) = cl.nodes.get_mut(node) {
                        nt.t.bytes_out += bytes.len() as u64;
                    }
                }
                room -= 1;
            }
            st.trim();
        }
        // New requests; a bound on the draws keeps a node that owns few of the
        // workload's keys from spinning here.
        let mut draws = 4 * room + 16;
        while room > 0 && draws > 0 {
            draws -= 1;
            if measured && self.conns[c].quota == Some(0) {
                return;
            }
            let cmd = self.gens[c].next(&mut self.req);
            let to = cl.node_for(c, cmd, &self.req);
            if to == node {
                if measured {
                    if let Some(q) = &mut self.conns[c].quota {
                        *q -= 1;
                    }
                }
                let conn = &mut self.conns[i];
                let Conn { wbuf, sent, .. } = conn;
                let before = wbuf.len();
                encode_cached(&mut self.cache, cmd, &self.req, wbuf);
                sent.extend_from_slice(&wbuf[before..]);
                let bytes = wbuf.len() - before;
                conn.inflight.push_back(InFlight {
                    intended_ns: now,
                    sent_ns: now,
                    cmd: cmd as u16,
                    measured,
                    redirects: 0,
                    wire_len: bytes as u32,
                });
                if measured {
                    if let Some(t) = self.rec.cmds.get_mut(cmd) {
                        t.bytes_out += bytes as u64;
                    }
                    if let Some(nt) = cl.nodes.get_mut(node) {
                        nt.t.bytes_out += bytes as u64;
                    }
                }
                room -= 1;
            } else {
                match cl.stash.get_mut(c).and_then(|row| row.get_mut(to)) {
                    Some(st) if st.items.len() < self.pipeline => {
                        let before = st.bytes.len();
                        encode_cached(&mut self.cache, cmd, &self.req, &mut st.bytes);
                        st.items
                            .push_back((cmd as u16, (st.bytes.len() - before) as u32));
                    }
                    // That node has enough waiting: drawing on would only drop more
                    // (a workload whose keys all live elsewhere stops here at once).
                    _ => break,
                }
            }
        }
    }

    /// Cluster mode: client `c`'s connection to `node`, opened now if it has none yet
    /// (a node it did not know at the start). `None` when it cannot be reached.
    fn conn_for(&mut self, c: usize, node: usize) -> Option<usize> {
        let cl = self.cl.as_deref()?;
        let k = *cl.conn_of.get(c)?.get(node)?;
        if k != usize::MAX {
            return Some(k);
        }
        // A node that could not be reached a moment ago is not tried again at once: a
        // redirection to a dead address must not cost every request a connect timeout.
        if cl.unreachable_until[node].is_some_and(|t| Instant::now() < t) {
            return None;
        }
        let target = cl.topo.nodes.get(node)?.target.clone();
        let readonly = cl.is_replica(node);
        let idx = self.conns.len();
        let mut unused = LatencyHistogram::new();
        let mut cfg = self.a.cfg.clone();
        cfg.connect_timeout = cfg.connect_timeout.min(Duration::from_secs(1));
        let opened = open_registered(&cfg, &target, readonly, &self.poll, Token(idx), &mut unused);
        let Ok(stream) = opened else {
            if let Some(cl) = self.cl.as_deref_mut() {
                cl.unreachable_until[node] = Some(Instant::now() + Duration::from_secs(1));
            }
            return None;
        };
        let mut conn = Conn::new(stream, self.pipeline, None);
        conn.client = c as u32;
        conn.node = node as u16;
        self.conns.push(conn);
        self.opened += 1;
        if let Some(cl) = self.cl.as_deref_mut() {
            cl.conn_of[c][node] = idx;
        }
        Some(idx)
    }

    /// Cluster mode: sends the redirected requests again, to the node the redirection
    /// names (`ASK`: after `ASKING`) or, after `TRYAGAIN`, to the same node.
    fn process_pending(&mut self) {
        let Some(cl) = self.cl.as_deref_mut() else {
            return;
        };
        if cl.pending.is_empty() {
            return;
        }
        let mut pending = std::mem::take(&mut cl.pending);
        for p in pending.drain(..) {
            let Some(cl) = self.cl.as_deref_mut() else {
                return;
            };
            let (node, ask) = match &p.redirect {
                None => (p.from_node, false),
                Some(r) => {
                    let host = if r.host.is_empty() {
                        match cl.topo.nodes.get(p.from_node).map(|n| &n.target) {
                            Some(Target::Tcp { host, .. }) => host.clone(),
                            _ => String::new(),
                        }
                    } else {
                        r.host.clone()
                    };
                    let before = cl.topo.nodes.len();
                    let known = cl.topo.nodes.iter().any(|n| {
                        matches!(&n.target, Target::Tcp { host: h, port } if *h == host && *port == r.port)
                    });
                    if !known && before >= crate::cluster::MAX_NODES {
                        // A server naming ever new nodes cannot grow the map without bound.
                        if p.f.measured {
                            if let Some(t) = self.rec.cmds.get_mut(usize::from(p.f.cmd)) {
                                t.count_error("MOVED", 1);
                            }
                            self.rec.iv_errors += 1;
                        }
                        continue;
                    }
                    let node = cl.topo.node_at(Target::Tcp { host, port: r.port });
                    if cl.topo.nodes.len() != before {
                        cl.grow();
                    }
                    if r.kind == RedirectKind::Moved {
                        cl.topo.slots[usize::from(r.slot)] = node as u16;
                        cl.refresh_due = true;
                    }
                    (node, r.kind == RedirectKind::Ask)
                }
            };
            let dest = self
                .conn_for(p.client, node)
                .filter(|&k| self.conns[k].is_live());
            let Some(k) = dest else {
                if p.f.measured {
                    if let Some(t) = self.rec.cmds.get_mut(usize::from(p.f.cmd)) {
                        t.count_error(KIND_CONNECTION_LOST, 1);
                    }
                    self.rec.iv_errors += 1;
                }
                continue;
            };
            let conn = &mut self.conns[k];
            if ask {
                let now = p.f.sent_ns;
                push_request(
                    conn,
                    ASKING,
                    InFlight {
                        intended_ns: now,
                        sent_ns: now,
                        cmd: INTERNAL_CMD,
                        measured: false,
                        redirects: 0,
                        wire_len: ASKING.len() as u32,
                    },
                );
            }
            let f = InFlight {
                redirects: p.f.redirects.saturating_add(1),
                wire_len: p.bytes.len() as u32,
                ..p.f
            };
            push_request(conn, &p.bytes, f);
            self.flush(k);
        }
        if let Some(cl) = self.cl.as_deref_mut() {
            cl.pending = pending;
        }
    }

    /// Cluster mode: after a `MOVED`, reads the slot map again from a master (at most
    /// once per check interval), so that the other moved slots are known before their
    /// requests bounce.
    fn refresh_topology(&mut self) {
        let Some(cl) = self.cl.as_deref_mut() else {
            return;
        };
        if !cl.refresh_due {
            return;
        }
        cl.refresh_due = false;
        let cfg = self.a.cfg;
        for m in cl.topo.masters() {
            let target = cl.topo.nodes[m].target.clone();
            let Ok(mut s) = connect::open_ready_to(cfg, &target, false, Duration::from_secs(1))
            else {
                continue;
            };
            if let Ok(newer) = crate::cluster::Topology::fetch(&mut s, &target, cfg.tls.is_some()) {
                cl.topo.refresh_from(&newer);
                cl.grow();
                return;
            }
        }
    }

    /// Closed loop: tops connection `i` up to `pipeline` requests in flight.
    #[inline]
    fn fill_closed(&mut self, i: usize, now: u64) {
        let measured = now >= self.measure_ns;
        let conn = &mut self.conns[i];
        if !conn.is_live() {
            return;
        }
        let mut room = self.pipeline.saturating_sub(conn.inflight.len()) as u64;
        if measured {
            if let Some(q) = &mut conn.quota {
                room = room.min(*q);
                *q -= room;
            }
        }
        for _ in 0..room {
            let (cmd, bytes) = self.encode_one(i);
            if measured {
                if let Some(t) = self.rec.cmds.get_mut(cmd) {
                    t.bytes_out += bytes;
                }
            }
            self.conns[i].inflight.push_back(InFlight {
                intended_ns: now,
                sent_ns: now,
                cmd: cmd as u16,
                measured,
                redirects: 0,
                wire_len: 0,
            });
        }
    }

    /// Open loop: sends every request of connection `i` that is due, up to the cap.
    #[inline]
    fn fill_open(&mut self, i: usize, now: u64) {
        loop {
            let conn = &mut self.conns[i];
            if !conn.is_live()
                || conn.inflight.len() >= self.pipeline
                || conn.next_intended_ns > now
            {
                return;
            }
            let intended = conn.next_intended_ns;
            if self.end_ns.is_some_and(|e| intended >= e) {
                conn.next_intended_ns = u64::MAX;
                return;
            }
            let measured = intended >= self.measure_ns;
            if measured {
                match &mut conn.quota {
                    Some(0) => {
                        conn.next_intended_ns = u64::MAX;
                        return;
                    }
                    Some(q) => *q -= 1,
                    None => {}
                }
            }
            let (cmd, bytes) = self.encode_one(i);
            if measured {
                if let Some(t) = self.rec.cmds.get_mut(cmd) {
                    t.bytes_out += bytes;
                }
                self.rec.open.lag.record(now - intended);
            }
            let conn = &mut self.conns[i];
            conn.inflight.push_back(InFlight {
                intended_ns: intended,
                sent_ns: now,
                cmd: cmd as u16,
                measured,
                redirects: 0,
                wire_len: 0,
            });
            conn.next_intended_ns = self.scheds[i].next_offset_ns();
        }
    }

    /// Counts the scheduled requests that are due but were never sent.
    fn count_unsent(&mut self, now: u64) {
        if !self.open_loop {
            return;
        }
        let limit = self.end_ns.map_or(now, |e| e.min(now));
        for i in 0..self.nclients {
            let conn = &mut self.conns[i];
            while conn.next_intended_ns < limit {
                if conn.next_intended_ns >= self.measure_ns {
                    match &mut conn.quota {
                        Some(0) => break,
                        Some(q) => *q -= 1,
                        None => {}
                    }
                    self.rec.open.unsent += 1;
                }
                conn.next_intended_ns = self.scheds[i].next_offset_ns();
            }
        }
    }

    fn flush(&mut self, i: usize) {
        if !self.conns[i].has_output() {
            return;
        }
        if let Err(e) = self.conns[i].flush() {
            self.fail(i, KIND_CONNECTION_LOST, format!("write failed: {e}"));
        }
    }

    /// Reads and records every complete reply waiting on connection `i`.
    fn on_readable(&mut self, i: usize, drain_all: bool) {
        loop {
            let conn = &mut self.conns[i];
            conn.make_room();
            let State::Live(stream) = &mut conn.state else {
                return;
            };
            let space = conn.rbuf.len() - conn.rend;
            // A short TLS read does not mean the socket is drained: read on until it
            // would block (the readiness edge does not come again for bytes already in).
            let tls = matches!(stream, MioStream::Tls(_));
            let n = match stream.read(&mut conn.rbuf[conn.rend..]) {
                Ok(0) => {
                    self.fail(
                        i,
                        KIND_CONNECTION_LOST,
                        "the server closed the connection".into(),
                    );
                    return;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.fail(i, KIND_CONNECTION_LOST, format!("read failed: {e}"));
                    return;
                }
            };
            conn.rend += n;
            let now = self.epoch.elapsed().as_nanos() as u64;
            let processed = if self.a.cfg.wire == Wire::Respb {
                process_respb_replies(conn, &mut self.rec, &self.limits, self.open_loop, now)
            } else {
                process_replies(
                    conn,
                    &mut self.rec,
                    &self.limits,
                    self.open_loop,
                    now,
                    self.cl.as_deref_mut(),
                )
            };
            match processed {
                Ok(()) => {}
                Err(ReadFailure::Protocol(msg)) => {
                    self.protocol_errors += 1;
                    self.fail(i, KIND_PROTOCOL_ERROR, msg);
                    return;
                }
                Err(ReadFailure::Lost(msg)) => {
                    self.fail(i, KIND_CONNECTION_LOST, msg);
                    return;
                }
            }
            if n < space && !drain_all && !tls {
                return;
            }
        }
    }

    /// Resets connection `i`: its in-flight requests count as errors of `kind`, and it is
    /// reconnected at once (then with backoff).
    fn fail(&mut self, i: usize, kind: &str, message: String) {
        let now = self.now_ns();
        let conn = &mut self.conns[i];
        self.rec.lose_inflight(conn, kind, now);
        self.any_down = true;
        conn.reset(
            self.poll.registry(),
            Instant::now(),
            self.a.cfg.reconnect.initial_backoff,
            message,
        );
    }

    /// Fails connections whose oldest request waited longer than the request timeout.
    fn expire(&mut self, now: u64, timeout_ns: u64) {
        for i in 0..self.conns.len() {
            let conn = &self.conns[i];
            let overdue = conn.is_live()
                && conn
                    .inflight
                    .front()
                    .is_some_and(|f| now.saturating_sub(f.sent_ns) > timeout_ns);
            if overdue {
                self.fail(
                    i,
                    KIND_TIMEOUT,
                    "no reply within the request timeout".into(),
                );
            }
        }
    }

    /// Tries to reconnect connections whose backoff has passed. Returns whether any
    /// connection is still down.
    fn reconnect_due(&mut self) -> bool {
        let policy = self.a.cfg.reconnect;
        let mut still_down = false;
        for i in 0..self.conns.len() {
            let State::Down {
                since,
                next_try,
                backoff,
                last_error,
                refused,
            } = &mut self.conns[i].state
            else {
                continue;
            };
            let (since, next_try, backoff, refused) = (*since, *next_try, *backoff, *refused);
            let first_error = std::mem::take(last_error);
            let now = Instant::now();
            if now < next_try {
                still_down = true;
                continue;
            }
            if self.a.shared.abort.load(Ordering::Relaxed) {
                return true;
            }
            let timeout = self.a.cfg.connect_timeout.min(Duration::from_secs(1));
            let (target, readonly) = match self.cl.as_deref() {
                Some(cl) => {
                    let n = usize::from(self.conns[i].node);
                    match cl.topo.nodes.get(n) {
                        Some(node) => (node.target.clone(), cl.is_replica(n)),
                        None => (self.a.cfg.target.clone(), false),
                    }
                }
                None => (self.a.cfg.target.clone(), false),
            };
            let attempt = connect::open_ready_to(self.a.cfg, &target, readonly, timeout)
                .map_err(|e| e.to_string())
                .and_then(|s| s.into_mio().map_err(|e| e.to_string()))
                .and_then(|mut s: MioStream| {
                    s.register(self.poll.registry(), Token(i))
                        .map(|()| s)
                        .map_err(|e| e.to_string())
                });
            match attempt {
                Ok(stream) => {
                    self.conns[i].state = State::Live(stream);
                    self.reconnects += 1;
                    if refused {
                        let start = since.saturating_duration_since(self.epoch).as_nanos() as u64;
                        let end = now.saturating_duration_since(self.epoch).as_nanos() as u64;
                        self.outages.push((start, Some(end)));
                    }
                }
                Err(err) => {
                    let now = Instant::now();
                    if now.duration_since(since) >= policy.give_up_after {
                        self.a.shared.lose(format!(
                            "no connection to {} for {:.1} s ({first_error}; last attempt: {err})",
                            target,
                            now.duration_since(since).as_secs_f64()
                        ));
                        return true;
                    }
                    let next = (backoff * 2).min(policy.max_backoff.max(policy.initial_backoff));
                    self.conns[i].state = State::Down {
                        since,
                        next_try: now + backoff,
                        backoff: next,
                        last_error: first_error,
                        refused: true,
                    };
                    still_down = true;
                }
            }
        }
        still_down
    }
}

/// Opens a connection to `target`, runs its set-up (timed into `setup`) and registers
/// it with the poller under `token`.
fn open_registered(
    cfg: &RunConfig,
    target: &Target,
    readonly: bool,
    poll: &Poll,
    token: Token,
    setup: &mut LatencyHistogram,
) -> Result<MioStream, EngineError> {
    let t0 = Instant::now();
    let std = connect::open_ready_to(cfg, target, readonly, cfg.connect_timeout)
        .map_err(|e| e.into_engine(target))?;
    setup.record(t0.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64);
    let mut stream = std.into_mio().map_err(|source| EngineError::Connect {
        target: target.to_string(),
        source,
    })?;
    stream
        .register(poll.registry(), token)
        .map_err(|e| EngineError::Worker(format!("cannot register a socket: {e}")))?;
    Ok(stream)
}

/// The wire bytes of the last request encoded, reused while requests repeat.
///
/// Many benchmark requests are identical from one to the next (`PING`, or `SET` without
/// random keys), and comparing a request with the previous one costs less than encoding
/// it again. Workloads whose requests differ (random keys, varying values) would pay the
/// comparison and the copy for nothing, so the cache turns itself off when fewer than
/// half of its first 1024 lookups hit.
#[derive(Debug)]
struct WireCache {
    enabled: bool,
    valid: bool,
    cmd: usize,
    req: Request,
    wire: Vec<u8>,
    lookups: u32,
    hits: u32,
    /// `--protocol respb`: requests are encoded as RESPB frames (mux id 0).
    respb: Option<Box<RespbWire>>,
}

impl WireCache {
    const TRIAL: u32 = 1024;

    fn for_wire(wire: Wire) -> Self {
        WireCache {
            respb: (wire == Wire::Respb).then(|| {
                Box::new(RespbWire {
                    enc: resplab_proto::respb::codec::Encoder::new(),
                    parts: Vec::new(),
                })
            }),
            ..WireCache::new()
        }
    }

    fn new() -> Self {
        WireCache {
            enabled: true,
            valid: false,
            cmd: 0,
            req: Request::new(),
            wire: Vec::new(),
            lookups: 0,
            hits: 0,
            respb: None,
        }
    }

    /// True when `req` (of command `cmd`) is the request whose bytes are in `wire`.
    #[inline]
    fn hit(&mut self, cmd: usize, req: &Request) -> bool {
        if !self.enabled {
            return false;
        }
        let hit = self.valid && self.cmd == cmd && same_request(&self.req, req);
        if self.lookups < Self::TRIAL {
            self.lookups += 1;
            self.hits += u32::from(hit);
            if self.lookups == Self::TRIAL && self.hits < Self::TRIAL / 2 {
                self.enabled = false;
            }
        }
        hit
    }

    /// Remembers `wire` as the encoding of `req`. Allocates only while the buffers grow.
    #[inline]
    fn store(&mut self, cmd: usize, req: &Request, wire: &[u8]) {
        if !self.enabled {
            return;
        }
        self.req.clear();
        for a in req.args() {
            self.req.push_arg(a);
        }
        self.req.set_inline(req.is_inline());
        self.wire.clear();
        self.wire.extend_from_slice(wire);
        self.cmd = cmd;
        self.valid = true;
    }
}

/// Compares two requests argument by argument. Requests are short, so a byte loop the
/// compiler inlines beats calling `memcmp` twice per request (which the derived
/// `PartialEq` does).
#[inline]
fn same_request(a: &Request, b: &Request) -> bool {
    a.arg_count() == b.arg_count()
        && a.payload_len() == b.payload_len()
        && a.is_inline() == b.is_inline()
        && a.args()
            .zip(b.args())
            .all(|(x, y)| x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| p == q))
}

/// A run of replies of one command with one latency, recorded with one histogram update.
///
/// Replies parsed from one read share their receive time, and in closed loop the requests
/// of one refill share their send time, so with pipelining such runs are the rule.
struct LatencyRun {
    cmd: usize,
    latency: u64,
    len: u64,
}

impl LatencyRun {
    #[inline]
    fn add(&mut self, hists: &mut [LatencyHistogram], cmd: usize, latency: u64) {
        if cmd == self.cmd && latency == self.latency {
            self.len += 1;
        } else {
            self.flush(hists);
            self.cmd = cmd;
            self.latency = latency;
            self.len = 1;
        }
    }

    #[inline]
    fn flush(&mut self, hists: &mut [LatencyHistogram]) {
        if self.len > 0 {
            if let Some(h) = hists.get_mut(self.cmd) {
                h.record_n(self.latency, self.len);
            }
            self.len = 0;
        }
    }
}

/// Delimits the replies in `conn`'s read buffer and records each against the request at
/// the front of the ring.
#[inline]
fn process_replies(
    conn: &mut Conn,
    rec: &mut Recorder,
    limits: &Limits,
    open_loop: bool,
    now: u64,
    mut cl: Option<&mut ClusterState>,
) -> Result<(), ReadFailure> {
    rec.roll(now);
    let mut run = LatencyRun {
        cmd: usize::MAX,
        latency: 0,
        len: 0,
    };
    let result = scan_and_count(conn, rec, limits, open_loop, now, &mut run, &mut cl);
    run.flush(&mut rec.iv_cmds);
    if cl.is_some() {
        conn.trim_sent();
    }
    result
}

/// `ASKING`, sent before a request that an `ASK` redirected.
const ASKING: &[u8] = b"*1\r\n$6\r\nASKING\r\n";

/// The command index of requests resplab adds itself (`ASKING`): never recorded.
const INTERNAL_CMD: u16 = u16::MAX;

/// Appends a request's wire bytes to a cluster connection's write buffer and sent log.
#[inline]
fn push_request(conn: &mut Conn, bytes: &[u8], f: InFlight) {
    conn.wbuf.extend_from_slice(bytes);
    conn.sent.extend_from_slice(bytes);
    conn.inflight.push_back(f);
}

/// Encodes `req` (command `cmd`) at the end of `out`, reusing the cached bytes of an
/// identical previous request.
#[inline]
fn encode_cached(cache: &mut WireCache, cmd: usize, req: &Request, out: &mut Vec<u8>) {
    let before = out.len();
    if cache.hit(cmd, req) {
        out.extend_from_slice(&cache.wire);
        return;
    }
    if let Some(w) = cache.respb.as_deref_mut() {
        encode_respb(w, req, out);
    } else if req.is_inline() && req.arg_count() <= 8 {
        let mut parts: [&[u8]; 8] = [&[]; 8];
        let n = req.arg_count();
        for (slot, arg) in parts.iter_mut().zip(req.args()) {
            *slot = arg;
        }
        encode::write_inline(out, &parts[..n]);
    } else {
        encode::write_command_iter(out, req.args());
    }
    cache.store(cmd, req, &out[before..]);
}

/// The RESPB encoder of a worker and the argument list it is handed, both kept from
/// request to request so that encoding allocates nothing once they have grown.
#[derive(Debug)]
struct RespbWire {
    enc: resplab_proto::respb::codec::Encoder,
    /// Always empty between requests; only its allocation is kept.
    parts: Vec<&'static [u8]>,
}

/// Encodes `req` as a RESPB frame on mux id 0. RESPB has no inline form: an inline
/// request goes as the same command.
#[inline]
fn encode_respb(w: &mut RespbWire, req: &Request, out: &mut Vec<u8>) {
    let mut parts: Vec<&[u8]> = std::mem::take(&mut w.parts);
    parts.extend(req.args());
    w.enc.encode(out, 0, &parts);
    // The slices borrowed the request; the emptied vector keeps its allocation.
    parts.clear();
    w.parts = parts.into_iter().map(|_| &[][..]).collect();
}

#[inline]
fn scan_and_count(
    conn: &mut Conn,
    rec: &mut Recorder,
    limits: &Limits,
    open_loop: bool,
    now: u64,
    run: &mut LatencyRun,
    cl: &mut Option<&mut ClusterState>,
) -> Result<(), ReadFailure> {
    while conn.rstart < conn.rend {
        let buf = &conn.rbuf[conn.rstart..conn.rend];
        let scanned = match scan_reply(buf, limits) {
            Ok(Some(s)) => s,
            Ok(None) => break,
            Err(e) => return Err(ReadFailure::Protocol(format!("malformed reply: {e}"))),
        };
        let reply = &buf[..scanned.consumed];
        conn.rstart += scanned.consumed;
        if scanned.class == ReplyClass::Push {
            continue;
        }
        let Some(f) = conn.inflight.pop_front() else {
            return Err(ReadFailure::Protocol(
                "a reply arrived with no request waiting for it".into(),
            ));
        };
        rec.last_reply_ns = now;
        if let Some(cl) = cl.as_deref_mut() {
            // The request's bytes in the sent log (fields borrowed apart from the read
            // buffer the reply still points into).
            let wire_start = conn.sent_head;
            let wire_end = (wire_start + f.wire_len as usize).min(conn.sent.len());
            conn.sent_head = wire_end;
            let wire = wire_start..wire_end;
            if f.cmd == INTERNAL_CMD {
                continue;
            }
            let node = usize::from(conn.node);
            let retry = match scanned.class {
                ReplyClass::Moved | ReplyClass::Ask => parse_redirect(reply).map(Some),
                ReplyClass::Error if error_kind(reply) == b"TRYAGAIN" => Some(None),
                _ => None,
            };
            if let Some(redirect) = retry {
                if let Some(nt) = cl.nodes.get_mut(node) {
                    match redirect.as_ref().map(|r| r.kind) {
                        Some(RedirectKind::Moved) => nt.moved += 1,
                        Some(RedirectKind::Ask) => nt.ask += 1,
                        None => nt.tryagain += 1,
                    }
                }
                if f.redirects < MAX_REDIRECTS {
                    cl.pending.push(Pending {
                        client: conn.client as usize,
                        from_node: node,
                        f,
                        bytes: conn.sent[wire].to_vec(),
                        redirect,
                    });
                    continue;
                }
            }
            if f.measured {
                if let Some(nt) = cl.nodes.get_mut(node) {
                    nt.t.requests += 1;
                    nt.t.bytes_in += scanned.consumed as u64;
                    if matches!(
                        scanned.class,
                        ReplyClass::Error | ReplyClass::Moved | ReplyClass::Ask
                    ) {
                        nt.t.errors += 1;
                    }
                    nt.t.hist.record(now.saturating_sub(f.intended_ns));
                }
            }
        }
        let error = match scanned.class {
            ReplyClass::Moved => Some(&b"MOVED"[..]),
            ReplyClass::Ask => Some(&b"ASK"[..]),
            ReplyClass::Error => Some(error_kind(reply)),
            _ => None,
        };
        record_reply(rec, &f, scanned.consumed, error, open_loop, now, run)?;
    }
    Ok(())
}

/// Records the reply to request `f` (when measured): its latency, its `bytes` and, for
/// an error reply, its kind (`error`: the first word of its text).
#[inline]
fn record_reply(
    rec: &mut Recorder,
    f: &InFlight,
    bytes: usize,
    error: Option<&[u8]>,
    open_loop: bool,
    now: u64,
    run: &mut LatencyRun,
) -> Result<(), ReadFailure> {
    if !f.measured {
        return Ok(());
    }
    let cmd = usize::from(f.cmd);
    let Some(t) = rec.cmds.get_mut(cmd) else {
        return Err(ReadFailure::Lost("reply for an unknown command".into()));
    };
    let latency = now.saturating_sub(f.intended_ns);
    t.requests += 1;
    t.bytes_in += bytes as u64;
    if let Some(kind) = error {
        let kind = std::str::from_utf8(kind).unwrap_or("ERR");
        t.count_error(if kind.is_empty() { "ERR" } else { kind }, 1);
        rec.iv_errors += 1;
    }
    run.add(&mut rec.iv_cmds, cmd, latency);
    if open_loop {
        rec.open.service.record(now.saturating_sub(f.sent_ns));
    }
    rec.iv_requests += 1;
    Ok(())
}

/// [`process_replies`] for RESPB (never in cluster mode): every request went on mux id
/// 0, and a connection answers its requests in order, so each reply frame belongs to the
/// request at the front of the ring. A reply on another mux id is a protocol error.
#[inline]
fn process_respb_replies(
    conn: &mut Conn,
    rec: &mut Recorder,
    limits: &Limits,
    open_loop: bool,
    now: u64,
) -> Result<(), ReadFailure> {
    rec.roll(now);
    let mut run = LatencyRun {
        cmd: usize::MAX,
        latency: 0,
        len: 0,
    };
    let result = scan_and_count_respb(conn, rec, limits, open_loop, now, &mut run);
    run.flush(&mut rec.iv_cmds);
    result
}

#[inline]
fn scan_and_count_respb(
    conn: &mut Conn,
    rec: &mut Recorder,
    limits: &Limits,
    open_loop: bool,
    now: u64,
    run: &mut LatencyRun,
) -> Result<(), ReadFailure> {
    use resplab_proto::respb::reply::{scan_reply, ReplyClass};
    while conn.rstart < conn.rend {
        let buf = &conn.rbuf[conn.rstart..conn.rend];
        let scanned = match scan_reply(buf, limits) {
            Ok(Some(s)) => s,
            Ok(None) => break,
            Err(e) => return Err(ReadFailure::Protocol(format!("malformed RESPB reply: {e}"))),
        };
        if scanned.mux != 0 {
            return Err(ReadFailure::Protocol(format!(
                "a RESPB reply on mux id {}, where every request went on mux id 0",
                scanned.mux
            )));
        }
        conn.rstart += scanned.consumed;
        let error = match scanned.class {
            ReplyClass::Push => continue,
            ReplyClass::Error { start, end } => {
                let text = buf.get(start..end).unwrap_or_default();
                let word = text.iter().position(|&b| b == b' ').unwrap_or(text.len());
                Some(text.get(..word).unwrap_or_default())
            }
            ReplyClass::Value | ReplyClass::Nil => None,
        };
        let Some(f) = conn.inflight.pop_front() else {
            return Err(ReadFailure::Protocol(
                "a reply arrived with no request waiting for it".into(),
            ));
        };
        rec.last_reply_ns = now;
        record_reply(rec, &f, scanned.consumed, error, open_loop, now, run)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(args: &[&[u8]]) -> Request {
        let mut r = Request::new();
        for a in args {
            r.push_arg(a);
        }
        r
    }

    #[test]
    fn wire_cache_hits_only_identical_requests() {
        let mut c = WireCache::new();
        let ping = req(&[b"PING"]);
        assert!(!c.hit(0, &ping));
        c.store(0, &ping, b"*1\r\n$4\r\nPING\r\n");
        assert!(c.hit(0, &ping));
        assert_eq!(c.wire, b"*1\r\n$4\r\nPING\r\n");
        assert!(!c.hit(1, &ping), "another command index");
        assert!(!c.hit(0, &req(&[b"PINH"])));
        assert!(
            !c.hit(0, &req(&[b"PI", b"NG"])),
            "same bytes, other arguments"
        );
        let mut inline = req(&[b"PING"]);
        inline.set_inline(true);
        assert!(!c.hit(0, &inline));
    }

    #[test]
    fn respb_requests_are_encoded_with_kept_buffers() {
        let mut c = WireCache::for_wire(Wire::Respb);
        let mut out = Vec::new();
        encode_cached(&mut c, 0, &req(&[b"GET", b"k1"]), &mut out);
        let mut want = Vec::new();
        resplab_proto::respb::codec::encode_command(&mut want, 0, &[b"GET", b"k1"]);
        assert_eq!(out, want);
        let w = c.respb.as_deref().unwrap();
        assert!(w.parts.is_empty() && w.parts.capacity() >= 2);
        let kept = w.parts.as_ptr();
        out.clear();
        encode_cached(&mut c, 0, &req(&[b"GET", b"k2"]), &mut out);
        assert_eq!(c.respb.as_deref().unwrap().parts.as_ptr(), kept);
        assert_eq!(&out[..2], &[0, 0], "GET's opcode, not passthrough");
    }

    #[test]
    fn wire_cache_turns_itself_off_when_requests_differ() {
        let mut c = WireCache::new();
        for i in 0..WireCache::TRIAL {
            let r = req(&[b"GET", i.to_string().as_bytes()]);
            assert!(!c.hit(0, &r));
            c.store(0, &r, b"x");
        }
        assert!(!c.enabled);
        let r = req(&[b"GET", b"1"]);
        c.store(0, &r, b"y");
        assert!(!c.hit(0, &r), "a disabled cache never hits");
    }
}
