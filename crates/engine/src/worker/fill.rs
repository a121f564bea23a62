//! Sending: how a worker tops up its connections outside cluster mode.
//!
//! Closed loop keeps `pipeline` requests in flight on every connection; open loop sends
//! each request of a connection's schedule when its intended time has come, as long as
//! fewer than `pipeline` are in flight. Requests are generated into the worker's one
//! reusable request and encoded straight into the connection's write buffer; the send
//! time is read once per refill. Cluster mode fills through `route` instead.

use super::wire::encode_cached;
use super::Worker;
use crate::conn::InFlight;
use crate::tally::KIND_CONNECTION_LOST;

impl Worker<'_> {
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
    pub(super) fn fill_all(&mut self, now: u64) {
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

    /// Closed loop: tops connection `i` up to `pipeline` requests in flight.
    #[inline]
    pub(super) fn fill_closed(&mut self, i: usize, now: u64) {
        let measured = now >= self.measure_ns;
        let conn = &mut self.conns[i];
        if !conn.is_live() {
            return;
        }
        let mut room = (self.pipeline.saturating_sub(conn.inflight.len()) as u64).min(conn.left);
        if measured {
            if let Some(q) = &mut conn.quota {
                room = room.min(*q);
                *q -= room;
            }
        }
        conn.left -= room;
        for _ in 0..room {
            let (cmd, bytes) = self.encode_one(i);
            if measured {
                if let Some(t) = self.rec.cmds.get_mut(cmd) {
                    t.bytes_out += bytes;
                }
            }
            self.conns[i]
                .inflight
                .push_back(InFlight::new(now, now, cmd as u16, measured, 0));
        }
    }

    /// Open loop: sends every request of connection `i` that is due, up to the cap.
    #[inline]
    fn fill_open(&mut self, i: usize, now: u64) {
        loop {
            let conn = &mut self.conns[i];
            if !conn.is_live()
                || conn.inflight.len() >= self.pipeline
                || conn.left == 0
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
            conn.left -= 1;
            conn.inflight
                .push_back(InFlight::new(intended, now, cmd as u16, measured, 0));
            conn.next_intended_ns = self.scheds[i].next_offset_ns();
        }
    }

    /// Counts the scheduled requests that are due but were never sent.
    pub(super) fn count_unsent(&mut self, now: u64) {
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

    pub(super) fn flush(&mut self, i: usize) {
        if !self.conns[i].has_output() {
            return;
        }
        if let Err(e) = self.conns[i].flush() {
            self.fail(i, KIND_CONNECTION_LOST, format!("write failed: {e}"));
        }
    }
}
