//! The paired intervals of a duet round: the two trials of one round ran at the same
//! time from one shared start, so their series intervals end at the same wall-clock
//! instants; each matched pair is a paired observation of throughput and latency.
//!
//! These pairs describe a round; they are not the verdict's samples. Intervals of one
//! round share the servers' state and the machine's moment, so they are autocorrelated
//! ([`RoundPairs::lag1`] says how much) and the verdict counts each round once, by its
//! trials' whole values (docs/duet.md).

use crate::{RunRecord, SecondSample};
use resplab_stats::describe::{lag1_autocorrelation, plain_median_finite};

/// One interval of both arms.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalPair {
    /// Seconds since the measured part began (end of the interval).
    pub t_sec: f64,
    /// ln(other's ops/s ÷ baseline's ops/s); NaN when either served nothing.
    pub log_ratio_ops: f64,
    /// Other's p50 latency ÷ baseline's, from each interval's histogram.
    pub p50_ratio: f64,
    /// Other's p99 latency ÷ baseline's.
    pub p99_ratio: f64,
}

/// A round's pairs, summarised.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundPairs {
    pub pairs: Vec<IntervalPair>,
    /// Mean of the pairs' log throughput ratios (finite ones).
    pub mean_log_ratio: f64,
    /// Smallest and largest throughput ratio of one interval.
    pub min_ratio: f64,
    pub max_ratio: f64,
    /// Lag-1 autocorrelation of the log ratios (`None` below three pairs).
    pub lag1: Option<f64>,
    /// Medians of the p50 and p99 latency ratios.
    pub p50_ratio: f64,
    pub p99_ratio: f64,
}

/// True when the record is one arm of a duet (`order = "duet"` in its configuration).
pub fn is_duet(run: &RunRecord) -> bool {
    run.config.get("order").and_then(|o| o.as_str()) == Some("duet")
}

/// Pairs the intervals of a duet round's baseline and other trial by their wall-clock
/// end (within half an interval); intervals without a wall-clock time, or without a
/// partner, are left out.
pub fn pair_intervals(base: &RunRecord, other: &RunRecord) -> Vec<IntervalPair> {
    let tolerance_ms = base.series_interval_sec * 500.0;
    let mut out = Vec::new();
    for a in &base.series {
        let Some(at) = a.unix_ms else { continue };
        let partner = other
            .series
            .iter()
            .find(|b| b.unix_ms.is_some_and(|bt| (bt - at).abs() <= tolerance_ms));
        if let Some(b) = partner {
            out.push(pair(a, b));
        }
    }
    out
}

fn pair(a: &SecondSample, b: &SecondSample) -> IntervalPair {
    let ratio = |x: f64, y: f64| if x > 0.0 && y > 0.0 { y / x } else { f64::NAN };
    IntervalPair {
        t_sec: a.t_sec,
        log_ratio_ops: ratio(a.ops_per_sec, b.ops_per_sec).ln(),
        p50_ratio: ratio(a.latency_us.p50, b.latency_us.p50),
        p99_ratio: ratio(a.latency_us.p99, b.latency_us.p99),
    }
}

/// The summary of a round's pairs; `None` when no interval paired.
pub fn summarize(pairs: Vec<IntervalPair>) -> Option<RoundPairs> {
    let logs: Vec<f64> = pairs
        .iter()
        .map(|p| p.log_ratio_ops)
        .filter(|x| x.is_finite())
        .collect();
    if logs.is_empty() {
        return None;
    }
    let mean_log_ratio = logs.iter().sum::<f64>() / logs.len() as f64;
    let min = logs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let p50: Vec<f64> = pairs.iter().map(|p| p.p50_ratio).collect();
    let p99: Vec<f64> = pairs.iter().map(|p| p.p99_ratio).collect();
    Some(RoundPairs {
        mean_log_ratio,
        min_ratio: min.exp(),
        max_ratio: max.exp(),
        lag1: lag1_autocorrelation(&logs),
        p50_ratio: plain_median_finite(&p50),
        p99_ratio: plain_median_finite(&p99),
        pairs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(t: f64, unix_ms: Option<f64>, ops: f64, p99: f64) -> SecondSample {
        SecondSample {
            t_sec: t,
            requests: ops as u64,
            errors: 0,
            ops_per_sec: ops,
            latency_us: crate::LatencyUs {
                p50: p99 / 2.0,
                p99,
                ..Default::default()
            },
            unix_ms,
            histogram: None,
        }
    }

    fn record(series: Vec<SecondSample>) -> RunRecord {
        let mut r = crate::fixture::run_record(crate::Summary::default());
        r.series = series;
        r.series_interval_sec = 0.1;
        r
    }

    #[test]
    fn intervals_pair_by_wall_clock_and_summarise() {
        let base = record(vec![
            sample(0.1, Some(1000.0), 100.0, 10.0),
            sample(0.2, Some(1100.0), 100.0, 10.0),
            sample(0.3, Some(1200.0), 100.0, 10.0),
            sample(0.4, None, 100.0, 10.0),
        ]);
        let other = record(vec![
            sample(0.1, Some(1002.0), 110.0, 12.0),
            sample(0.2, Some(1101.0), 90.0, 12.0),
            sample(0.3, Some(1299.0), 100.0, 12.0),
        ]);
        let pairs = pair_intervals(&base, &other);
        // The third is 99 ms off, more than half an interval: it pairs with nothing.
        assert_eq!(pairs.len(), 2);
        assert!((pairs[0].log_ratio_ops - 1.1f64.ln()).abs() < 1e-12);
        let s = summarize(pairs).unwrap();
        assert!((s.mean_log_ratio - (1.1f64.ln() + 0.9f64.ln()) / 2.0).abs() < 1e-12);
        assert!((s.min_ratio - 0.9).abs() < 1e-12 && (s.max_ratio - 1.1).abs() < 1e-12);
        assert!((s.p99_ratio - 1.2).abs() < 1e-12);
        assert_eq!(s.lag1, None);
        assert_eq!(summarize(Vec::new()), None);
        assert!(!is_duet(&base));
    }
}
