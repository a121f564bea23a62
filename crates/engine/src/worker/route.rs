//! Cluster mode: which connection each request goes to, and what a redirection does.
//!
//! Every client holds a connection to every master (and, reading from replicas, to the
//! replicas), opened at the start. A request goes to the node that owns its key's slot;
//! in closed loop each connection is topped up with its client's requests for that node
//! (requests drawn for other nodes wait in those nodes' stashes), in open loop a client
//! sends each due request to its node and holds it while that connection is full.
//! `MOVED`, `ASK` and `TRYAGAIN` replies (counted by `record`) are sent again here, to
//! the node named (after `ASKING` for an `ASK`), and a `MOVED` makes the slot map be
//! read again.

use super::reconnect::open_registered;
use super::wire::encode_cached;
use super::Worker;
use crate::cluster::{ClusterState, Held, NodeTally};
use crate::config::Target;
use crate::conn::{Conn, InFlight};
use crate::connect;
use crate::error::EngineError;
use crate::tally::KIND_CONNECTION_LOST;
use mio::{Poll, Token};
use resplab_proto::resp::cluster::RedirectKind;
use resplab_stats::hist::LatencyHistogram;
use std::time::{Duration, Instant};

/// `ASKING`, sent before a request that an `ASK` redirected.
const ASKING: &[u8] = b"*1\r\n$6\r\nASKING\r\n";

/// The command index of requests resplab adds itself (`ASKING`): never recorded.
pub(super) const INTERNAL_CMD: u16 = u16::MAX;

/// Opens, for each of the worker's clients (`conns[k]` is client `k`'s home connection),
/// a connection to every node of the start's topology it has none to yet, so no
/// connection is made while measuring unless the topology changes.
pub(super) fn open_other_nodes(
    a: &super::Assignment<'_>,
    poll: &Poll,
    c: &mut ClusterState,
    conns: &mut Vec<Conn>,
    setup: &mut LatencyHistogram,
) -> Result<(), EngineError> {
    let nodes = c.initial_nodes();
    for k in 0..a.nconns {
        for &node in &nodes {
            if c.conn_of[k][node] != usize::MAX {
                continue;
            }
            let idx = conns.len();
            let target = c.topo.nodes[node].target.clone();
            let stream =
                open_registered(a.cfg, &target, c.is_replica(node), poll, Token(idx), setup)?;
            let mut conn = Conn::new(stream, a.cfg.pipeline as usize, None);
            conn.client = k as u32;
            conn.node = node as u16;
            c.conn_of[k][node] = idx;
            conns.push(conn);
        }
    }
    Ok(())
}

/// Each node the worker used or holds a connection to, by name: whether it is a replica
/// and what the worker counted for it.
pub(super) fn node_results(cl: &ClusterState) -> Vec<(String, bool, NodeTally)> {
    cl.topo
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
        .collect()
}

impl Worker<'_> {
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
        let f = InFlight::new(
            if self.open_loop { h.intended_ns } else { now },
            now,
            h.cmd,
            h.measured,
            h.bytes.len() as u32,
        );
        push_request(conn, &h.bytes, f);
        let mut bytes = h.bytes;
        bytes.clear();
        cl.spare.push(bytes);
        true
    }

    /// Cluster mode: client `c` generates requests and sends each to the connection of
    /// its key's node, until a connection it needs is full (that request is held until
    /// the connection has room) or, in open loop, until nothing more is due.
    pub(super) fn fill_cluster(&mut self, c: usize, now: u64) {
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
                conn.inflight.push_back(InFlight::new(
                    intended,
                    now,
                    cmd as u16,
                    measured,
                    bytes as u32,
                ));
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
    pub(super) fn fill_conn(&mut self, i: usize, now: u64) {
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
                    InFlight::new(now, now, cmd, measured, bytes.len() as u32),
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
                conn.inflight.push_back(InFlight::new(
                    now,
                    now,
                    cmd as u16,
                    measured,
                    bytes as u32,
                ));
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
    pub(super) fn process_pending(&mut self) {
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
                    InFlight::new(now, now, INTERNAL_CMD, false, ASKING.len() as u32),
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
    pub(super) fn refresh_topology(&mut self) {
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
}

/// Appends a request's wire bytes to a cluster connection's write buffer and sent log.
#[inline]
fn push_request(conn: &mut Conn, bytes: &[u8], f: InFlight) {
    conn.wbuf.extend_from_slice(bytes);
    conn.sent.extend_from_slice(bytes);
    conn.inflight.push_back(f);
}
