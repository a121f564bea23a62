//! The per-interval series of a run, built from the workers' interval snapshots.

use crate::tally::{served_rate, Counts};
use crate::worker::INTERVAL_NS;
use resplab_results::{LatencyUs, SecondSample};
use resplab_stats::hist::LatencyHistogram;
use std::collections::BTreeMap;

/// Intervals of [`INTERVAL_NS`] in a second.
pub(super) const PER_SECOND: u64 = 1_000_000_000 / INTERVAL_NS;

/// A run (or phase) whose measured part reaches this many seconds gets a per-second
/// series; shorter ones keep the workers' finer intervals.
const FINE_SERIES_BELOW_SEC: u64 = 10;

/// The per-interval series of a run, built from the workers' interval snapshots.
///
/// Short runs keep every [`INTERVAL_NS`] interval (a 1-second trial gets ten points, not
/// one). Once the measured part passes [`FINE_SERIES_BELOW_SEC`], the intervals kept so
/// far are merged into seconds (histogram merges are exact), and from then on a second's
/// histogram is reduced to its summary as soon as every worker has moved past it, so
/// memory does not grow with the length of the run. Keys are per phase: each phase's
/// intervals count from its own measured start, placed after the phases before it.
#[derive(Debug, Default)]
pub(super) struct SeriesAccumulator {
    /// True once merged into seconds: keys are seconds, not intervals.
    coarse: bool,
    /// Keep each interval's histogram (encoded) and its wall-clock time in the series.
    keep_histograms: bool,
    /// Wall-clock time (ms since the epoch) at which each phase's measured part began.
    wall_ms: Vec<Option<f64>>,
    /// Wall-clock time at which the first phase's load (warm-up included) began.
    load_started_ms: Option<f64>,
    /// Each phase's offset (seconds of measured time before it) and, once it ended, its
    /// measured duration.
    phases: Vec<(f64, Option<f64>)>,
    /// (phase, key) not yet reduced: replies, errors, error replies, latencies.
    open: BTreeMap<(usize, u64), (Counts, LatencyHistogram)>,
    /// (phase, second) reduced to requests, errors, summary, p99 in ns and, when kept,
    /// the encoded histogram.
    closed: BTreeMap<(usize, u64), Closed>,
}

/// A series interval reduced to its figures.
#[derive(Debug)]
struct Closed {
    counts: Counts,
    latency: LatencyUs,
    p99_ns: u64,
    histogram: Option<String>,
}

impl SeriesAccumulator {
    /// An empty series; `keep_histograms`: keep each interval's histogram and wall-clock
    /// time (shard runs, whose series are merged later).
    pub(super) fn new(keep_histograms: bool) -> Self {
        SeriesAccumulator {
            keep_histograms,
            ..SeriesAccumulator::default()
        }
    }

    /// Seconds of measured time before `phase` began.
    pub(super) fn phase_offset_sec(&self, phase: usize) -> f64 {
        self.phases.get(phase).map_or(0.0, |x| x.0)
    }

    /// Notes when `phase`'s load began (wall clock, ms) and when its measured part did.
    pub(super) fn phase_started(&mut self, phase: usize, load_ms: f64, measured_ms: f64) {
        if phase == 0 {
            self.load_started_ms = Some(load_ms);
        }
        if self.wall_ms.len() <= phase {
            self.wall_ms.resize(phase + 1, None);
        }
        self.wall_ms[phase] = Some(measured_ms);
    }

    pub(super) fn load_started_unix_ms(&self) -> Option<f64> {
        self.load_started_ms
    }

    pub(super) fn begin_phase(&mut self, phase: usize, offset_sec: f64) {
        if self.phases.len() <= phase {
            self.phases.resize(phase + 1, (offset_sec, None));
        }
        self.phases[phase] = (offset_sec, None);
    }

    pub(super) fn end_phase(&mut self, phase: usize, duration_sec: f64) {
        if let Some(p) = self.phases.get_mut(phase) {
            p.1 = Some(duration_sec);
        }
        // Earlier phases are over: nothing will be added to them.
        if self.coarse {
            self.close_where(|(p, _)| *p <= phase);
        }
    }

    pub(super) fn add(
        &mut self,
        phase: usize,
        interval: u64,
        counts: Counts,
        h: &LatencyHistogram,
    ) {
        let offset = self.phases.get(phase).map_or(0.0, |p| p.0);
        let at_sec = offset + (interval * INTERVAL_NS) as f64 / 1e9;
        if !self.coarse && at_sec >= FINE_SERIES_BELOW_SEC as f64 {
            self.coarse = true;
            for ((p, k), (c, hist)) in std::mem::take(&mut self.open) {
                self.merge((p, k / PER_SECOND), c, &hist);
            }
        }
        let key = if self.coarse {
            interval / PER_SECOND
        } else {
            interval
        };
        self.merge((phase, key), counts, h);
    }

    fn merge(&mut self, key: (usize, u64), counts: Counts, h: &LatencyHistogram) {
        let e = self
            .open
            .entry(key)
            .or_insert_with(|| (Counts::default(), LatencyHistogram::new()));
        e.0.add(counts);
        e.1.merge(h);
    }

    /// Every worker of `phase` is past interval `upto - 1`: its completed seconds can
    /// drop their histograms.
    pub(super) fn complete_before(&mut self, phase: usize, upto: u64) {
        if self.coarse {
            let done = upto / PER_SECOND;
            self.close_where(|(p, k)| *p < phase || (*p == phase && *k < done));
        }
    }

    fn close_where(&mut self, done: impl Fn(&(usize, u64)) -> bool) {
        let keys: Vec<(usize, u64)> = self.open.keys().filter(|k| done(k)).copied().collect();
        for k in keys {
            if let Some((counts, h)) = self.open.remove(&k) {
                let closed = Closed {
                    counts,
                    latency: LatencyUs::from_histogram(&h),
                    p99_ns: h.percentile_ns(99.0),
                    histogram: self.keep_histograms.then(|| h.to_base64()),
                };
                self.closed.insert(k, closed);
            }
        }
    }

    /// Replies, errors, error replies and p99 (µs) of second `sec` of `phase`.
    pub(super) fn second(&self, phase: usize, sec: u64) -> (Counts, f64) {
        if self.coarse {
            if let Some(c) = self.closed.get(&(phase, sec)) {
                return (c.counts, c.p99_ns as f64 / 1e3);
            }
            return self
                .open
                .get(&(phase, sec))
                .map(|(c, h)| (*c, h.percentile_ns(99.0) as f64 / 1e3))
                .unwrap_or((Counts::default(), 0.0));
        }
        let mut h = LatencyHistogram::new();
        let mut counts = Counts::default();
        let range = (phase, sec * PER_SECOND)..(phase, (sec + 1) * PER_SECOND);
        for (_, (ci, hi)) in self.open.range(range) {
            counts.add(*ci);
            h.merge(hi);
        }
        (counts, h.percentile_ns(99.0) as f64 / 1e3)
    }

    /// The series of the whole run, in time order, and the length of its intervals.
    pub(super) fn finish(mut self) -> (Vec<SecondSample>, f64) {
        let step = if self.coarse {
            1.0
        } else {
            INTERVAL_NS as f64 / 1e9
        };
        self.close_where(|_| true);
        let phases = std::mem::take(&mut self.phases);
        let mut out: Vec<SecondSample> = Vec::new();
        let mut last_phase = usize::MAX;
        let mut last_len = step;
        let mut prev_served = 0;
        let wall = std::mem::take(&mut self.wall_ms);
        for ((p, k), c) in self.closed {
            let (counts, lat) = (c.counts, c.latency);
            let (offset, duration) = phases.get(p).copied().unwrap_or((0.0, None));
            let wall_start = wall.get(p).copied().flatten();
            let start = k as f64 * step;
            let len = (duration.unwrap_or(start + step) - start).clamp(1e-3, step);
            // The replies that arrived after the last full interval (in flight when the
            // time was up) make a sliver whose rate would mean nothing: they join the
            // interval before.
            if len < step / 2.0 && p == last_phase {
                if let Some(prev) = out.last_mut() {
                    let len = duration.map_or(len, |d| (d - start).max(0.0));
                    prev.requests += counts.requests;
                    prev.errors += counts.errors;
                    prev_served += counts.served();
                    prev.t_sec = offset + start + len;
                    if let (Some(a), Some(b)) = (&prev.histogram, &c.histogram) {
                        if let (Ok(mut ha), Ok(hb)) = (
                            LatencyHistogram::from_base64(a),
                            LatencyHistogram::from_base64(b),
                        ) {
                            ha.merge(&hb);
                            prev.latency_us = LatencyUs::from_histogram(&ha);
                            prev.histogram = Some(ha.to_base64());
                        }
                    }
                    if let (Some(w), Some(u)) = (wall_start, prev.unix_ms.as_mut()) {
                        *u = w + (start + len) * 1e3;
                    }
                    last_len += len;
                    prev.ops_per_sec = served_rate(prev_served, last_len);
                    continue;
                }
            }
            last_phase = p;
            last_len = len;
            prev_served = counts.served();
            out.push(SecondSample {
                t_sec: offset + start + len,
                requests: counts.requests,
                errors: counts.errors,
                ops_per_sec: served_rate(counts.served(), len),
                latency_us: lat,
                unix_ms: wall_start
                    .filter(|_| self.keep_histograms)
                    .map(|w| w + (start + len) * 1e3),
                histogram: c.histogram,
            });
        }
        (out, step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(requests: u64, errors: u64) -> Counts {
        Counts {
            requests,
            errors,
            error_replies: 0,
        }
    }

    fn hist(values_us: &[u64]) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for v in values_us {
            h.record(v * 1000);
        }
        h
    }

    #[test]
    fn short_runs_keep_tenths_and_fold_the_tail() {
        let mut acc = SeriesAccumulator::default();
        acc.begin_phase(0, 0.0);
        for i in 0..10 {
            acc.add(0, i, n(100, 0), &hist(&[50]));
        }
        // Replies that were in flight when the time was up.
        acc.add(0, 10, n(7, 0), &hist(&[60]));
        acc.end_phase(0, 1.0004);
        let (series, step) = acc.finish();
        assert_eq!(step, 0.1);
        assert_eq!(series.len(), 10);
        assert_eq!(series.iter().map(|s| s.requests).sum::<u64>(), 1007);
        assert!((series[0].ops_per_sec - 1000.0).abs() < 1e-6);
        assert!((series[9].t_sec - 1.0004).abs() < 1e-9);
    }

    #[test]
    fn long_runs_merge_into_exact_seconds() {
        let mut acc = SeriesAccumulator::default();
        acc.begin_phase(0, 0.0);
        // Two workers, 12 s; worker 1 records a slow reply in every tenth interval.
        for i in 0..120u64 {
            acc.add(0, i, n(10, 0), &hist(&[100]));
            let slow: &[u64] = if i % 10 == 3 { &[9000] } else { &[100] };
            acc.add(0, i, n(10, 0), &hist(slow));
            acc.complete_before(0, i + 1);
        }
        acc.end_phase(0, 12.0);
        assert!(acc.coarse);
        let (series, step) = acc.finish();
        assert_eq!(step, 1.0);
        assert_eq!(series.len(), 12);
        for s in &series {
            assert_eq!(s.requests, 200);
            // One reply in 200 took 9 ms: the second's maximum, exactly as one histogram
            // of the whole second would say.
            assert!((s.latency_us.max - 9000.0).abs() < 10.0, "{s:?}");
        }
    }

    #[test]
    fn phases_follow_each_other() {
        let mut acc = SeriesAccumulator::default();
        acc.begin_phase(0, 0.0);
        acc.add(0, 0, n(5, 0), &hist(&[10]));
        acc.add(0, 1, n(5, 0), &hist(&[10]));
        acc.end_phase(0, 0.2);
        acc.begin_phase(1, 0.2);
        acc.add(1, 0, n(3, 1), &hist(&[10]));
        acc.end_phase(1, 0.1);
        let (series, _) = acc.finish();
        let t: Vec<f64> = series
            .iter()
            .map(|s| (s.t_sec * 1e6).round() / 1e6)
            .collect();
        assert_eq!(t, vec![0.1, 0.2, 0.3]);
        assert_eq!(series[2].errors, 1);
    }

    #[test]
    fn error_replies_are_not_throughput() {
        let mut acc = SeriesAccumulator::default();
        acc.begin_phase(0, 0.0);
        // 100 replies in the interval, 40 of them error replies, 5 requests lost.
        let c = Counts {
            requests: 100,
            errors: 45,
            error_replies: 40,
        };
        acc.add(0, 0, c, &hist(&[10]));
        acc.add(0, 1, c, &hist(&[10]));
        // The tail folded into the interval before keeps the rule.
        acc.add(0, 2, c, &hist(&[10]));
        acc.end_phase(0, 0.2001);
        let (series, _) = acc.finish();
        assert_eq!(series.len(), 2);
        assert_eq!((series[0].requests, series[0].errors), (100, 45));
        assert!((series[0].ops_per_sec - 600.0).abs() < 1e-6, "{series:?}");
        assert_eq!(series[1].requests, 200);
        assert!(
            (series[1].ops_per_sec - 120.0 / 0.1001).abs() < 1e-6,
            "{series:?}"
        );
    }
}
