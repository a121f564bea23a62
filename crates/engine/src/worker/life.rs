//! When a worker's connections are opened and closed: renewed after a number of
//! requests ([`crate::Renew`]), opened with a random pause between one and the next
//! ([`crate::ConnectJitter`]), and added in steps during the run ([`crate::Ramp`]).
//!
//! A connection's `left` counts the requests it may still send on its socket; the
//! fill functions stop at 0, so the pipeline drains at the boundary as in
//! memtier_benchmark (which holds its pipeline so that no request crosses a reconnect).
//! Once the replies are in, [`Worker::renew`] closes the socket and opens a new one,
//! synchronously: the other connections of the thread wait meanwhile (on loopback a
//! connect and its set-up take tens of microseconds). The requests that follow are
//! timed from their send on the new socket. A failed renewal is a lost connection like
//! any other, reconnected with the policy's backoff.
//!
//! A staircase opens a worker's first connections before the start, as usual, and each
//! step's at the step's time, from the event loop (synchronously, like a renewal); a
//! connection added late joins its share of an open-loop schedule at that moment.

use super::reconnect::open_registered;
use super::Worker;
use crate::config::{ConnectJitter, RunConfig};
use crate::conn::Conn;
use crate::connect;
use crate::tally::KIND_CONNECTION_LOST;
use mio::Token;
use std::sync::atomic::Ordering;
use std::time::Duration;

impl Worker<'_> {
    /// Connection `i` sent its last request on this socket and has every reply: opens it
    /// again, unless its budget is spent (then only redis-benchmark's rule reopens it,
    /// idle, when another connection of the phase is still at work) or sending stopped.
    pub(super) fn renew(&mut self, i: usize, sending: bool) {
        let Some(r) = self.a.cfg.renew else {
            return;
        };
        self.conns[i].left = r.every;
        let reopen = if self.conns[i].quota == Some(0) {
            r.after_last && !self.a.shared.finish_client(self.a.cfg.clients)
        } else {
            sending
        };
        if !reopen {
            return;
        }
        let cfg = self.a.cfg;
        let (target, _) = self.target_of(i);
        let opened = connect::open_renewed(cfg, &target, cfg.connect_timeout);
        match self.registered(i, opened) {
            Ok(stream) => {
                self.conns[i].replace(self.poll.registry(), stream);
                self.renewed += 1;
            }
            Err(e) => self.fail(
                i,
                KIND_CONNECTION_LOST,
                format!("cannot open the connection again: {e}"),
            ),
        }
    }
}

impl Worker<'_> {
    /// A staircase step: opens the next connections of the worker (the step's number,
    /// up to all of them) and sets the time of the step after it.
    pub(super) fn step_up(&mut self, now: u64) {
        let Some(ramp) = self.a.cfg.ramp else {
            return;
        };
        let cfg = self.a.cfg;
        let upto = (self.conns.len() + ramp.step as usize).min(self.a.nconns);
        for k in self.conns.len()..upto {
            let opened = open_registered(
                cfg,
                &cfg.target,
                false,
                &self.poll,
                Token(k),
                &mut self.setup,
            );
            let stream = match opened {
                Ok(s) => s,
                Err(e) => {
                    self.a.shared.lose(format!("a staircase step failed: {e}"));
                    return;
                }
            };
            let mut conn = Conn::new(stream, cfg.pipeline as usize, None);
            conn.left = requests_per_socket(cfg);
            conn.client = k as u32;
            if let Some(s) = self.scheds.get_mut(k) {
                // Its share of the schedule starts now, not at the epoch.
                let mut next = s.next_offset_ns();
                while next < now {
                    next = s.next_offset_ns();
                }
                conn.next_intended_ns = next;
            }
            self.conns.push(conn);
            self.opened += 1;
        }
        self.nclients = self.conns.len();
        let next = self.next_step_ns.unwrap_or(now) + ramp.every.as_nanos() as u64;
        self.next_step_ns = (self.conns.len() < self.a.nconns).then_some(next);
    }
}

/// The connections a worker opens before the start: all of them, or a staircase's
/// first step.
pub(super) fn opened_at_start(cfg: &RunConfig, nconns: usize) -> usize {
    cfg.ramp.map_or(nconns, |r| (r.start as usize).min(nconns))
}

/// Requests a fresh socket of connection may send: the renewal interval, or no limit.
pub(super) fn requests_per_socket(cfg: &RunConfig) -> u64 {
    cfg.renew.map_or(u64::MAX, |r| r.every)
}

/// The pause after opening connection `k` of worker `worker` (none after its last):
/// uniform from the jitter's minimum to its maximum in whole microseconds, drawn from
/// the run's seed so that a run repeats.
pub(super) fn start_pause(
    jitter: Option<ConnectJitter>,
    seed: u64,
    worker: usize,
    k: usize,
    nconns: usize,
) -> Option<Duration> {
    let j = jitter?;
    if k + 1 >= nconns || j.max.is_zero() {
        return None;
    }
    let (lo, hi) = (j.min.as_micros() as u64, j.max.as_micros() as u64);
    let draw = resplab_workload::seed::splitmix64(seed ^ ((worker as u64) << 32) ^ k as u64);
    Some(Duration::from_micros(lo + draw % (hi - lo + 1)))
}

impl super::Shared {
    /// A connection of the phase spent its budget; returns whether it was the last of
    /// the `clients` to do so.
    pub(super) fn finish_client(&self, clients: u32) -> bool {
        self.finished.fetch_add(1, Ordering::Relaxed) + 1 >= u64::from(clients)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_fall_in_the_range_and_none_after_the_last_connection() {
        let j = Some(ConnectJitter {
            min: Duration::from_micros(100),
            max: Duration::from_micros(300),
        });
        let pauses: Vec<_> = (0..50)
            .map(|k| start_pause(j, 7, 1, k, 51).unwrap().as_micros())
            .collect();
        assert!(pauses.iter().all(|p| (100..=300).contains(p)), "{pauses:?}");
        assert!(pauses.iter().any(|&p| p != pauses[0]), "{pauses:?}");
        assert_eq!(start_pause(j, 7, 1, 50, 51), None);
        assert_eq!(start_pause(None, 7, 1, 0, 51), None);
        let fixed = Some(ConnectJitter {
            min: Duration::from_micros(40),
            max: Duration::from_micros(40),
        });
        assert_eq!(
            start_pause(fixed, 7, 0, 0, 2),
            Some(Duration::from_micros(40))
        );
    }

    #[test]
    fn the_last_client_to_finish_is_told_so() {
        let shared = super::super::Shared::default();
        assert!(!shared.finish_client(3));
        assert!(!shared.finish_client(3));
        assert!(shared.finish_client(3));
    }
}
