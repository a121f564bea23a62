//! Per-thread counters and histograms, and how they become result summaries.
//!
//! Each worker owns one [`CmdTally`] per command of the phase and one [`OpenLoopTally`];
//! nothing here is shared or locked. When a phase ends the coordinator merges the
//! workers' tallies (histogram merges are exact) and turns them into
//! [`resplab_results::Summary`] values with [`summarize`].

use resplab_results::{LatencyUs, Summary};
use resplab_stats::hist::LatencyHistogram;
use std::collections::BTreeMap;

/// Error kinds for failures that are not error replies.
pub(crate) const KIND_CONNECTION_LOST: &str = "connection_lost";
pub(crate) const KIND_PROTOCOL_ERROR: &str = "protocol_error";
pub(crate) const KIND_TIMEOUT: &str = "timeout";

/// Counters of one command on one thread.
#[derive(Clone, Debug, Default)]
pub(crate) struct CmdTally {
    /// Latency of every reply (open loop: from the intended send time), ns.
    pub hist: LatencyHistogram,
    /// Replies received, error replies included.
    pub requests: u64,
    /// Error replies plus requests lost to dropped connections, protocol errors and
    /// timeouts.
    pub errors: u64,
    /// Error replies alone (counted in `requests` and in `errors`): replies that were
    /// not served, kept apart so that no throughput figure counts them.
    pub error_replies: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub error_kinds: BTreeMap<String, u64>,
    /// Nil replies (`$-1`, `*-1`, `_`): a GET's miss.
    pub nils: u64,
}

impl CmdTally {
    /// Counts one error of `kind`. Allocates only the first time a kind is seen.
    #[inline]
    pub(crate) fn count_error(&mut self, kind: &str, n: u64) {
        self.errors += n;
        match self.error_kinds.get_mut(kind) {
            Some(c) => *c += n,
            None => {
                self.error_kinds.insert(kind.to_string(), n);
            }
        }
    }

    pub(crate) fn merge(&mut self, o: &CmdTally) {
        self.hist.merge(&o.hist);
        self.requests += o.requests;
        self.errors += o.errors;
        self.error_replies += o.error_replies;
        self.bytes_in += o.bytes_in;
        self.bytes_out += o.bytes_out;
        self.nils += o.nils;
        for (k, v) in &o.error_kinds {
            *self.error_kinds.entry(k.clone()).or_insert(0) += v;
        }
    }
}

/// Open-loop histograms of one thread (all commands together).
#[derive(Clone, Debug, Default)]
pub(crate) struct OpenLoopTally {
    /// Reply time minus actual send time, ns.
    pub service: LatencyHistogram,
    /// Actual send time minus intended send time, ns.
    pub lag: LatencyHistogram,
    /// Scheduled (measured) requests never sent.
    pub unsent: u64,
}

impl OpenLoopTally {
    pub(crate) fn merge(&mut self, o: &OpenLoopTally) {
        self.service.merge(&o.service);
        self.lag.merge(&o.lag);
        self.unsent += o.unsent;
    }
}

/// Replies, errors and error replies of an interval or a whole run: what a throughput
/// figure is made of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Replies received, error replies included.
    pub requests: u64,
    /// Error replies plus requests lost with their connection.
    pub errors: u64,
    /// Error replies alone.
    pub error_replies: u64,
}

impl Counts {
    pub(crate) fn add(&mut self, o: Counts) {
        self.requests += o.requests;
        self.errors += o.errors;
        self.error_replies += o.error_replies;
    }

    /// Replies that were not errors: the requests the server served.
    pub(crate) fn served(&self) -> u64 {
        self.requests.saturating_sub(self.error_replies)
    }
}

/// Served requests per second: error replies (a `CLUSTERDOWN`, a `LOADING`, a refused
/// write) are answers, not work done, and a throughput that counted them would grow
/// when the server fails.
pub(crate) fn served_rate(served: u64, duration_sec: f64) -> f64 {
    if duration_sec > 0.0 {
        served as f64 / duration_sec
    } else {
        0.0
    }
}

/// The summary of a merged tally measured over `duration_sec`.
pub(crate) fn summarize(t: &CmdTally, duration_sec: f64) -> Summary {
    Summary {
        requests: t.requests,
        errors: t.errors,
        ops_per_sec: served_rate(t.requests.saturating_sub(t.error_replies), duration_sec),
        latency_us: LatencyUs::from_histogram(&t.hist),
        bytes_in: t.bytes_in,
        bytes_out: t.bytes_out,
        histogram: t.hist.to_base64(),
        error_kinds: t.error_kinds.clone(),
        nil_replies: t.nils,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_and_summary() {
        let mut a = CmdTally::default();
        a.hist.record(1_000);
        a.requests = 1;
        a.count_error("ERR", 1);
        a.error_replies = 1;
        let mut b = CmdTally::default();
        b.hist.record(3_000);
        b.requests = 1;
        b.count_error("ERR", 2);
        b.count_error(KIND_TIMEOUT, 1);
        a.merge(&b);
        let s = summarize(&a, 2.0);
        assert_eq!(s.requests, 2);
        assert_eq!(s.errors, 4);
        assert_eq!(s.error_kinds["ERR"], 3);
        assert_eq!(s.error_kinds[KIND_TIMEOUT], 1);
        // Two replies in 2 s, one of them an error reply: 0.5 served per second.
        assert!((s.ops_per_sec - 0.5).abs() < 1e-12);
        assert!((s.latency_us.mean - 2.0).abs() < 0.01);
        let h = LatencyHistogram::from_base64(&s.histogram).unwrap();
        assert_eq!(h.count(), 2);
    }
}
