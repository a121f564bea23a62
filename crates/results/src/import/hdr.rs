//! What the two HdrHistogram importers ([`super::hdr_text`], [`super::hdr_log`]) give
//! alike: the metrics of one latency distribution and its full histogram.
//!
//! Every HdrHistogram file becomes, per distribution (the file's, or one per tag of an
//! interval log): `requests` (the exact count), `avg_latency_ms`, `pNN_latency_ms` for
//! [`QUANTILES`] and `max_latency_ms`, lower is better, plus the histogram itself in
//! nanoseconds ([`super::ForeignHistogram`] with `unit_ns` 1), so a later reader gets the
//! whole distribution and not only these points. Latency metrics are in milliseconds,
//! as memtier's JSON gives them, so such files compare with memtier runs by name.
//!
//! Neither format says its unit. Percentile distributions are read as milliseconds
//! ([`TEXT_UNIT_NS`]): memtier (`--hdr-file-prefix`), wrk2 and `resplab bench --hdr-out`
//! write them so. Interval logs are read as microseconds ([`LOG_UNIT_NS`]): memtier and
//! YCSB record them so. Each importer also takes the unit as an argument, and a note
//! names the unit it assumed.

use super::{Ctx, ForeignHistogram, Imported};
use crate::sample::{Direction, Metric};
use resplab_stats::hist::LatencyHistogram;
use std::sync::Arc;

/// Nanoseconds per value of a percentile distribution unless told otherwise (ms).
pub const TEXT_UNIT_NS: u64 = 1_000_000;

/// Nanoseconds per value of an interval log unless told otherwise (µs).
pub const LOG_UNIT_NS: u64 = 1_000;

/// The percentiles every HdrHistogram import reports.
pub const QUANTILES: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// Workload of a distribution that carries no name (an untagged interval, a text file).
pub const UNNAMED_WORKLOAD: &str = "ALL";

const NS_PER_MS: f64 = 1e6;

/// Name of a unit of `unit_ns` nanoseconds, for notes.
pub fn unit_name(unit_ns: u64) -> String {
    match unit_ns {
        1 => "nanoseconds".to_string(),
        1_000 => "microseconds".to_string(),
        1_000_000 => "milliseconds".to_string(),
        1_000_000_000 => "seconds".to_string(),
        n => format!("units of {n} ns"),
    }
}

/// One summary value of a distribution, in milliseconds unless it is the count.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Metric name (`requests`, `avg_latency_ms`, `p99_latency_ms`, …).
    pub metric: String,
    /// The value.
    pub value: f64,
}

/// The summary points of `h`: count, mean, [`QUANTILES`], max (latencies in ms).
pub fn points_of(h: &LatencyHistogram) -> Vec<Point> {
    let mut out = vec![
        Point {
            metric: "requests".to_string(),
            value: h.count() as f64,
        },
        Point {
            metric: "avg_latency_ms".to_string(),
            value: h.mean_ns() / NS_PER_MS,
        },
    ];
    for q in QUANTILES {
        out.push(Point {
            metric: percentile_metric(q),
            value: h.percentile_ns(q) as f64 / NS_PER_MS,
        });
    }
    out.push(Point {
        metric: "max_latency_ms".to_string(),
        value: h.max_ns() as f64 / NS_PER_MS,
    });
    out
}

/// `99.9` → `p99.9_latency_ms`.
pub fn percentile_metric(q: f64) -> String {
    format!("p{}_latency_ms", super::memtier::trim_number(q))
}

/// Pushes `points` as observations of `workload` and keeps `h` as its histogram.
pub fn push_distribution(
    out: &mut Imported,
    ctx: &mut Ctx<'_>,
    workload: &str,
    points: &[Point],
    h: &LatencyHistogram,
) {
    for p in points {
        let metric = metric(ctx, &p.metric);
        out.observations
            .push(ctx.observation(workload, &metric, p.value, None));
    }
    out.histograms.push(ForeignHistogram {
        workload: workload.to_string(),
        hdr_base64: h.to_base64(),
        unit_ns: 1,
        total: workload == UNNAMED_WORKLOAD,
    });
}

fn metric(ctx: &mut Ctx<'_>, name: &str) -> Arc<Metric> {
    let m = if name == "requests" {
        Metric::new(name, "requests", Direction::Unknown)
    } else {
        Metric::new(name, "ms", Direction::LowerIsBetter)
    };
    ctx.interner.metric(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_cover_count_mean_quantiles_and_max() {
        let mut h = LatencyHistogram::new();
        for i in 1..=1000u64 {
            h.record(i * 1_000);
        }
        let p = points_of(&h);
        let names: Vec<&str> = p.iter().map(|p| p.metric.as_str()).collect();
        assert_eq!(
            names,
            [
                "requests",
                "avg_latency_ms",
                "p50_latency_ms",
                "p90_latency_ms",
                "p99_latency_ms",
                "p99.9_latency_ms",
                "p99.99_latency_ms",
                "max_latency_ms"
            ]
        );
        assert_eq!(p[0].value, 1000.0);
        assert!((p[2].value - 0.5).abs() < 0.001, "{}", p[2].value);
        assert!((p[7].value - 1.0).abs() < 0.001, "{}", p[7].value);
        assert_eq!(unit_name(1_000), "microseconds");
    }
}
