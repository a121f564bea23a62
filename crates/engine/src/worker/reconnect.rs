//! Failure and recovery of a worker's connections.
//!
//! A connection that fails (a reset, a closed socket, a malformed reply, a request past
//! its timeout) counts its in-flight requests as errors of that kind and goes down; it
//! is opened again at once, then with a doubling backoff, until the reconnect policy's
//! give-up time, when the whole phase counts the server as lost. Periods during which
//! attempts were refused are kept as outages.

use super::{RawOutage, Worker};
use crate::config::{RunConfig, Target};
use crate::conn::{MioStream, State};
use crate::connect;
use crate::error::EngineError;
use crate::tally::KIND_TIMEOUT;
use mio::{Poll, Token};
use resplab_stats::hist::LatencyHistogram;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

impl Worker<'_> {
    /// Where connection `i` goes, and whether it is opened read-only (a replica's): its
    /// node in cluster mode, the target otherwise.
    pub(super) fn target_of(&self, i: usize) -> (Target, bool) {
        let Some(cl) = self.cl.as_deref() else {
            return (self.a.cfg.target.clone(), false);
        };
        let n = self
            .conns
            .get(i)
            .map_or(usize::MAX, |c| usize::from(c.node));
        match cl.topo.nodes.get(n) {
            Some(node) => (node.target.clone(), cl.is_replica(n)),
            None => (self.a.cfg.target.clone(), false),
        }
    }

    /// Resets connection `i`: its in-flight requests count as errors of `kind`, and it is
    /// reconnected at once (then with backoff).
    pub(super) fn fail(&mut self, i: usize, kind: &str, message: String) {
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
    pub(super) fn expire(&mut self, now: u64, timeout_ns: u64) {
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

    /// A connection just opened for connection `i`, made non-blocking and registered
    /// under its token; the error as text.
    pub(super) fn registered(
        &self,
        i: usize,
        opened: Result<connect::StdStream, connect::SetupError>,
    ) -> Result<MioStream, String> {
        opened
            .map_err(|e| e.to_string())
            .and_then(|s| s.into_mio().map_err(|e| e.to_string()))
            .and_then(|mut s: MioStream| {
                s.register(self.poll.registry(), Token(i))
                    .map(|()| s)
                    .map_err(|e| e.to_string())
            })
    }

    /// Tries to reconnect connections whose backoff has passed. Returns whether any
    /// connection is still down.
    pub(super) fn reconnect_due(&mut self) -> bool {
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
            let (target, readonly) = self.target_of(i);
            let opened = connect::open_ready_to(self.a.cfg, &target, readonly, timeout);
            let attempt = self.registered(i, opened);
            match attempt {
                Ok(stream) => {
                    self.conns[i].state = State::Live(stream);
                    self.conns[i].left = super::life::requests_per_socket(self.a.cfg);
                    self.reconnects += 1;
                    if refused {
                        let start_ns =
                            since.saturating_duration_since(self.epoch).as_nanos() as u64;
                        let end_ns = now.saturating_duration_since(self.epoch).as_nanos() as u64;
                        self.outages.push(RawOutage {
                            start_ns,
                            end_ns: Some(end_ns),
                            node: target.to_string(),
                        });
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
pub(super) fn open_registered(
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
