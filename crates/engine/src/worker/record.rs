//! Reading replies and recording them: the read path of a worker.
//!
//! [`Worker::on_readable`] reads what a connection received, the scanner delimits each
//! reply in place in the read buffer, and each is recorded against the request at the
//! front of the connection's ring: its latency into the current interval's per-command
//! histogram (a run of equal latencies as one update, see `LatencyRun`), its bytes, and
//! for an error reply its kind. The [`Recorder`] holds those per-thread measurements and
//! ships one interval snapshot to the coordinator every [`INTERVAL_NS`].
//!
//! Cluster replies (`MOVED`, `ASK`, `TRYAGAIN`) are counted per node here and queued for
//! the routing in `route` to send again.

use super::route::INTERNAL_CMD;
use super::{Interval, Msg, Worker, INTERVAL_NS};
use crate::cluster::{ClusterState, Pending, MAX_REDIRECTS};
use crate::config::Wire;
use crate::conn::{Conn, InFlight, MioStream, State};
use crate::tally::{CmdTally, Counts, OpenLoopTally, KIND_CONNECTION_LOST, KIND_PROTOCOL_ERROR};
use resplab_proto::resp::cluster::{parse_redirect, RedirectKind};
use resplab_proto::resp::scan::{error_kind, scan_reply, ReplyClass};
use resplab_proto::resp::value::Value;
use resplab_proto::resp::Limits;
use resplab_stats::hist::LatencyHistogram;
use resplab_workload::Generator;
use std::io::{self, Read};
use std::sync::mpsc::Sender;

/// The per-thread measurements, kept apart from the connections so both can be borrowed
/// mutably at once.
pub(super) struct Recorder {
    worker: usize,
    tx: Sender<Msg>,
    pub(super) cmds: Vec<CmdTally>,
    pub(super) open: OpenLoopTally,
    measure_ns: u64,
    cur_sec: u64,
    /// Latencies of the current second, per command; merged into `cmds` and into the
    /// interval snapshot when the second ends, so each reply is recorded only once.
    iv_cmds: Vec<LatencyHistogram>,
    iv_total: LatencyHistogram,
    iv_requests: u64,
    pub(super) iv_errors: u64,
    iv_error_replies: u64,
    pub(super) last_reply_ns: u64,
    /// Send each command's figures with every interval (`RunConfig::progress_commands`).
    per_command: bool,
}

impl Recorder {
    pub(super) fn new(
        worker: usize,
        tx: Sender<Msg>,
        commands: usize,
        measure_ns: u64,
        per_command: bool,
    ) -> Self {
        Recorder {
            worker,
            tx,
            cmds: vec![CmdTally::default(); commands],
            open: OpenLoopTally::default(),
            measure_ns,
            cur_sec: 0,
            iv_cmds: vec![LatencyHistogram::new(); commands],
            iv_total: LatencyHistogram::new(),
            iv_requests: 0,
            iv_errors: 0,
            iv_error_replies: 0,
            last_reply_ns: 0,
            per_command,
        }
    }

    /// Ships the current interval if `now` is in a later second.
    #[inline]
    pub(super) fn roll(&mut self, now: u64) {
        if now < self.measure_ns {
            return;
        }
        let sec = (now - self.measure_ns) / INTERVAL_NS;
        if sec > self.cur_sec {
            self.ship();
            self.cur_sec = sec;
        }
    }

    pub(super) fn ship(&mut self) {
        self.iv_total.reset();
        let mut commands = Vec::new();
        for (t, h) in self.cmds.iter_mut().zip(self.iv_cmds.iter_mut()) {
            if self.per_command {
                commands.push((t.requests, t.errors, (!h.is_empty()).then(|| h.clone())));
            }
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
            counts: Counts {
                requests: std::mem::take(&mut self.iv_requests),
                errors: std::mem::take(&mut self.iv_errors),
                error_replies: std::mem::take(&mut self.iv_error_replies),
            },
            hist,
            commands,
        }));
    }

    /// Counts the in-flight requests of a failed connection as errors of `kind`.
    pub(super) fn lose_inflight(&mut self, conn: &mut Conn, kind: &str, now: u64) {
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
pub(super) enum ReadFailure {
    Lost(String),
    Protocol(String),
}

impl Worker<'_> {
    /// Reads and records every complete reply waiting on connection `i`.
    pub(super) fn on_readable(&mut self, i: usize, drain_all: bool) {
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
                // A stream following a SCAN cursor reads it from each reply (never in
                // cluster mode, where connections and streams are not one to one).
                let gen = match self.cl {
                    None => self.gens.get_mut(i).filter(|g| g.follows_cursor()),
                    Some(_) => None,
                };
                process_replies(
                    conn,
                    &mut self.rec,
                    &self.limits,
                    self.open_loop,
                    now,
                    self.cl.as_deref_mut(),
                    gen,
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
    mut gen: Option<&mut Generator>,
) -> Result<(), ReadFailure> {
    rec.roll(now);
    let mut run = LatencyRun {
        cmd: usize::MAX,
        latency: 0,
        len: 0,
    };
    let result = scan_and_count(
        conn, rec, limits, open_loop, now, &mut run, &mut cl, &mut gen,
    );
    run.flush(&mut rec.iv_cmds);
    if cl.is_some() {
        conn.trim_sent();
    }
    result
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
    gen: &mut Option<&mut Generator>,
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
        if let Some(g) = gen.as_deref_mut().filter(|_| f.cmd != INTERNAL_CMD) {
            let cursor = match scanned.class {
                ReplyClass::Error => None,
                _ => cursor_of(reply, limits),
            };
            g.take_cursor(usize::from(f.cmd), cursor.as_deref());
        }
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
                        nt.t.error_replies += 1;
                    }
                    nt.t.hist.record(now.saturating_sub(f.intended_ns));
                }
            }
        }
        if scanned.class == ReplyClass::Nil && f.measured {
            if let Some(t) = rec.cmds.get_mut(usize::from(f.cmd)) {
                t.nils += 1;
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

/// The cursor of a SCAN-like reply: the first element of its array, when a string.
fn cursor_of(reply: &[u8], limits: &Limits) -> Option<Vec<u8>> {
    match resplab_proto::resp::value::decode(reply, limits) {
        Ok(Some((Value::Array(items), _))) => match items.into_iter().next() {
            Some(Value::Blob(c) | Value::Simple(c)) => Some(c),
            _ => None,
        },
        _ => None,
    }
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
        t.error_replies += 1;
        rec.iv_errors += 1;
        rec.iv_error_replies += 1;
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
