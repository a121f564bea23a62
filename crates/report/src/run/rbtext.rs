//! redis-benchmark's full text layout (what it prints without `-q` or `--csv`), one
//! block per test: the summary of the test, the latency by percentile distribution,
//! the cumulative distribution of latencies, and the summary table.
//!
//! The figures follow redis-benchmark 7's own histogram: microseconds, lowest
//! discernible value 10 µs and three significant digits, so each value printed is the
//! highest value equivalent to a bucket (`0.103` for the bucket of 100 µs). The
//! percentile lines walk the percentiles halving the distance to 100 % (0, 50, 75,
//! 87.5 …); the cumulative lines walk the latency in steps of 100 µs up to 2 ms and of
//! 1 ms after that; a line is printed only when its count moved, and the last always.
//! The two lines redis-benchmark prints from `CONFIG GET save`/`appendonly` are left
//! out, as redis-benchmark leaves them out for a server that refuses `CONFIG`.

use super::rbcompat::{self, Test, TestLine};
use hdrhistogram::Histogram;
use resplab_results::RunRecord;
use resplab_stats::hist::LatencyHistogram;
use std::fmt::Write as _;

/// What every block of a run shares: the run's shape as redis-benchmark prints it.
#[derive(Debug, Clone)]
pub struct RunShape {
    /// `-c`.
    pub clients: u32,
    /// `-d`.
    pub payload_bytes: usize,
    /// `--threads`, when more than one.
    pub threads: Option<u32>,
    /// `--cluster`: the number of masters.
    pub cluster_masters: Option<u32>,
}

/// How a redis-benchmark command line asks to see its run.
#[derive(Debug, Clone, Copy, Default)]
pub struct LineLayout<'a> {
    /// `--csv`: the CSV table (it wins over `-q`, as in redis-benchmark).
    pub csv: bool,
    /// `-q`: one line per test.
    pub quiet: bool,
    /// `-c`.
    pub clients: u32,
    /// The run's threads.
    pub threads: u32,
    /// `-d` as given; redis-benchmark's 3 bytes when absent or not a number.
    pub data_size: Option<&'a str>,
    /// The title of a command given on the line (redis-benchmark titles it by its words).
    pub command_title: Option<&'a str>,
}

/// The run of a redis-benchmark command line in the layout the line asks for: the CSV
/// table, the quiet lines, or the full text of [`render`].
pub fn for_line(layout: &LineLayout<'_>, tests: &[Test<'_>], record: &RunRecord) -> String {
    let lines = rbcompat::test_lines(tests, record, layout.command_title);
    if layout.csv {
        return rbcompat::csv(&lines);
    }
    if layout.quiet {
        return rbcompat::quiet(&lines);
    }
    let shape = RunShape {
        clients: layout.clients,
        payload_bytes: layout
            .data_size
            .and_then(|d| d.trim().parse().ok())
            .unwrap_or(3),
        threads: (layout.threads > 1).then_some(layout.threads),
        cluster_masters: record.cluster.as_ref().map(|c| c.masters),
    };
    render(&shape, &lines)
}

/// Renders every test's block, in run order.
pub fn render(shape: &RunShape, lines: &[TestLine<'_>]) -> String {
    let mut out = String::new();
    for l in lines {
        block(&mut out, shape, l);
    }
    out
}

/// One test's block.
fn block(out: &mut String, shape: &RunShape, l: &TestLine<'_>) {
    let s = l.summary;
    let h = micros(&LatencyHistogram::from_base64(&s.histogram).unwrap_or_default());
    let served = s.requests.saturating_sub(s.errors);
    let seconds = if s.ops_per_sec > 0.0 {
        served as f64 / s.ops_per_sec
    } else {
        0.0
    };
    let _ = writeln!(out, "====== {} ======", l.title);
    let _ = writeln!(
        out,
        "  {} requests completed in {seconds:.2} seconds",
        s.requests
    );
    let _ = writeln!(out, "  {} parallel clients", shape.clients);
    let _ = writeln!(out, "  {} bytes payload", shape.payload_bytes);
    let _ = writeln!(out, "  keep alive: 1");
    if let Some(m) = shape.cluster_masters {
        let _ = writeln!(out, "  cluster mode: yes ({m} masters)");
    }
    match shape.threads {
        Some(t) => {
            let _ = writeln!(out, "  multi-thread: yes\n  threads: {t}");
        }
        None => {
            let _ = writeln!(out, "  multi-thread: no");
        }
    }
    out.push('\n');
    out.push_str("Latency by percentile distribution:\n");
    out.push_str(&percentile_lines(&h));
    out.push_str("\nCumulative distribution of latencies:\n");
    out.push_str(&cumulative_lines(&h));
    let ms = |us: u64| us as f64 / 1e3;
    let _ = write!(
        out,
        "\nSummary:\n  throughput summary: {:.2} requests per second\n  latency summary (msec):\n          avg       min       p50       p95       p99       max\n    {:9.3} {:9.3} {:9.3} {:9.3} {:9.3} {:9.3}\n\n",
        s.ops_per_sec,
        h.mean() / 1e3,
        ms(h.min()),
        ms(h.highest_equivalent(h.value_at_quantile(0.50))),
        ms(h.highest_equivalent(h.value_at_quantile(0.95))),
        ms(h.highest_equivalent(h.value_at_quantile(0.99))),
        ms(h.highest_equivalent(h.max())),
    );
}

/// A run's histogram (nanoseconds) in redis-benchmark's: microseconds, lowest
/// discernible 10 µs, three significant digits, values above 3 s counted at 3 s.
pub fn micros(h: &LatencyHistogram) -> Histogram<u64> {
    const MAX_US: u64 = 3_000_000;
    let mut us =
        Histogram::<u64>::new_with_bounds(10, MAX_US, 3).expect("constant bounds are valid");
    for v in h.as_hdr().iter_recorded() {
        let value = (v.value_iterated_to() / 1000).min(MAX_US);
        let _ = us.record_n(value, v.count_at_value());
    }
    us
}

/// `P% <= V milliseconds (cumulative count N)`.
fn line(out: &mut String, percent: f64, value_us: u64, cumulative: u64) {
    let _ = writeln!(
        out,
        "{percent:.3}% <= {:.3} milliseconds (cumulative count {cumulative})",
        value_us as f64 / 1e3
    );
}

/// The latency by percentile distribution.
fn percentile_lines(h: &Histogram<u64>) -> String {
    let mut out = String::new();
    let total = h.len();
    let mut cumulative = 0;
    let mut previous = None;
    for v in h.iter_quantiles(1) {
        cumulative += v.count_since_last_iteration();
        if previous != Some(cumulative) || cumulative == total {
            line(
                &mut out,
                v.quantile_iterated_to() * 100.0,
                v.value_iterated_to(),
                cumulative,
            );
        }
        previous = Some(cumulative);
    }
    out
}

/// The cumulative distribution of latencies.
fn cumulative_lines(h: &Histogram<u64>) -> String {
    let mut out = String::new();
    let total = h.len();
    if total == 0 {
        return out;
    }
    let mut level = 100;
    let mut step = 100;
    let mut previous = None;
    loop {
        let value = h.highest_equivalent(level);
        let cumulative = h.count_between(0, value);
        if previous != Some(cumulative) || cumulative == total {
            line(
                &mut out,
                cumulative as f64 * 100.0 / total as f64,
                value,
                cumulative,
            );
        }
        if cumulative >= total {
            break;
        }
        previous = Some(cumulative);
        level += step;
        // Past 2 ms, percentages split by 100 µs are noise: whole milliseconds.
        if value > 2000 {
            step = 1000;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use resplab_results::Summary;

    fn summary(values_us: &[u64]) -> Summary {
        let mut h = LatencyHistogram::new();
        for v in values_us {
            h.record(v * 1000);
        }
        Summary {
            requests: values_us.len() as u64,
            ops_per_sec: 1000.0,
            histogram: h.to_base64(),
            ..Summary::default()
        }
    }

    /// The layout, line for line, of a test with four latencies: the 50 % line is left
    /// out because its count did not move from the 0 % line's, and min is the lowest
    /// value of its bucket as redis-benchmark prints it.
    #[test]
    fn one_block() {
        let s = summary(&[100, 100, 150, 2500]);
        let shape = RunShape {
            clients: 5,
            payload_bytes: 3,
            threads: None,
            cluster_masters: None,
        };
        let text = render(
            &shape,
            &[TestLine {
                title: "SET",
                summary: &s,
            }],
        );
        let expected = "====== SET ======
  4 requests completed in 0.00 seconds
  5 parallel clients
  3 bytes payload
  keep alive: 1
  multi-thread: no

Latency by percentile distribution:
0.000% <= 0.103 milliseconds (cumulative count 2)
75.000% <= 0.151 milliseconds (cumulative count 3)
87.500% <= 2.503 milliseconds (cumulative count 4)
100.000% <= 2.503 milliseconds (cumulative count 4)

Cumulative distribution of latencies:
50.000% <= 0.103 milliseconds (cumulative count 2)
75.000% <= 0.207 milliseconds (cumulative count 3)
100.000% <= 3.103 milliseconds (cumulative count 4)

Summary:
  throughput summary: 1000.00 requests per second
  latency summary (msec):
          avg       min       p50       p95       p99       max
        0.712     0.096     0.103     2.503     2.503     2.503

";
        assert_eq!(text, expected);
    }

    #[test]
    fn an_empty_test_prints_its_block_without_lines() {
        let s = Summary::default();
        let shape = RunShape {
            clients: 1,
            payload_bytes: 3,
            threads: Some(2),
            cluster_masters: None,
        };
        let text = render(
            &shape,
            &[TestLine {
                title: "GET",
                summary: &s,
            }],
        );
        assert!(text.contains("multi-thread: yes\n  threads: 2\n"), "{text}");
    }
}
