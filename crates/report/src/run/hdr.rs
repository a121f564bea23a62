//! HdrHistogram percentile-distribution files (`--hdr-out PREFIX`).
//!
//! One file per command, `PREFIX_<COMMAND>.hgrm`, plus `PREFIX_TOTAL.hgrm`, in the
//! classic layout that HdrHistogram's `outputPercentileDistribution` writes and that
//! plotting tools such as HdrHistogram's online plotter read: a header, one row per
//! quantile step (5 ticks per half distance), and a footer with mean, deviation, max,
//! count and the bucket geometry. Values are milliseconds.

use resplab_stats::hist::{LatencyHistogram, SIGNIFICANT_DIGITS};
use std::fmt::Write as _;

/// Renders one histogram as a percentile distribution, values in milliseconds.
pub fn percentile_distribution(h: &LatencyHistogram) -> String {
    const NS_PER_MS: f64 = 1e6;
    let hdr = h.as_hdr();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    let mut total = 0u64;
    for v in hdr.iter_quantiles(5) {
        total += v.count_since_last_iteration();
        let value = v.value_iterated_to() as f64 / NS_PER_MS;
        let q = v.quantile_iterated_to();
        if q < 1.0 {
            let _ = writeln!(
                out,
                "{value:>12.3} {q:>2.12} {total:>10} {:>14.2}",
                1.0 / (1.0 - q)
            );
        } else {
            let _ = writeln!(out, "{value:>12.3} {q:>2.12} {total:>10}");
        }
    }
    let (mean, stdev) = if h.is_empty() {
        (0.0, 0.0)
    } else {
        (hdr.mean() / NS_PER_MS, hdr.stdev() / NS_PER_MS)
    };
    let _ = writeln!(
        out,
        "#[Mean    = {mean:>12.3}, StdDeviation   = {stdev:>12.3}]"
    );
    let _ = writeln!(
        out,
        "#[Max     = {:>12.3}, Total count    = {:>12}]",
        h.max_ns() as f64 / NS_PER_MS,
        h.count()
    );
    let sub_buckets = 2u64.pow(
        (2.0 * 10f64.powi(i32::from(SIGNIFICANT_DIGITS)))
            .log2()
            .ceil() as u32,
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:>12}, SubBuckets     = {:>12}]",
        hdr.buckets(),
        sub_buckets
    );
    out
}

/// A file-name-safe form of a command name (`LRANGE_100`, `HSET`).
pub fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distribution_ends_at_max_and_counts_all() {
        let mut h = LatencyHistogram::new();
        for i in 1..=1000u64 {
            h.record(i * 10_000);
        }
        let text = percentile_distribution(&h);
        let rows: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .skip(1)
            .collect();
        let last: Vec<&str> = rows.last().unwrap().split_whitespace().collect();
        assert_eq!(last[1], "1.000000000000");
        assert_eq!(last[2], "1000");
        assert!(text.contains("Total count    =         1000]"));
        assert!(text.contains("SubBuckets     =         2048]"));
        assert_eq!(file_stem("LPUSH (needed)"), "LPUSH__needed_");
    }
}
