//! redis-benchmark's `--csv` and `-q` layouts, so scripts written for it keep working.
//!
//! Both print one line per test, in run order, named by redis-benchmark's own test title
//! (for example `LRANGE_100 (first 100 elements)`). The formats are redis-benchmark's:
//! CSV `"%s","%.2f","%.3f",…` with latencies in milliseconds; quiet
//! `%s: %.2f requests per second, p50=%.3f msec`.

use resplab_results::{RunRecord, Summary};
use resplab_stats::hist::LatencyHistogram;
use std::fmt::Write as _;

/// The header line of redis-benchmark's CSV output.
pub const CSV_HEADER: &str = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"";

/// One test to print: its display title and its summary.
#[derive(Debug)]
pub struct TestLine<'a> {
    pub title: &'a str,
    pub summary: &'a Summary,
}

/// A test of a run as its workload names it: its title and the commands it sends.
#[derive(Debug, Clone, Copy)]
pub struct Test<'a> {
    pub title: &'a str,
    pub commands: &'a [String],
}

/// The lines of the tests' commands that ran, in run order: a test of one command
/// under its title, each command of a test of several under the command's name, or
/// every one under `command_title` when given (redis-benchmark titles a command line
/// by its words).
pub fn test_lines<'a>(
    tests: &[Test<'a>],
    record: &'a RunRecord,
    command_title: Option<&'a str>,
) -> Vec<TestLine<'a>> {
    let mut lines = Vec::new();
    for test in tests {
        let single = test.commands.len() == 1;
        for cmd in test.commands {
            if let Some(summary) = record.commands.get(cmd) {
                let title = match command_title {
                    Some(t) => t,
                    None if single => test.title,
                    None => cmd.as_str(),
                };
                lines.push(TestLine { title, summary });
            }
        }
    }
    lines
}

/// Renders the CSV table (header included).
pub fn csv(lines: &[TestLine<'_>]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{CSV_HEADER}");
    for l in lines {
        let h = histogram(l.summary);
        let ms = |ns: u64| ns as f64 / 1e6;
        let _ = writeln!(
            out,
            "\"{}\",\"{:.2}\",\"{:.3}\",\"{:.3}\",\"{:.3}\",\"{:.3}\",\"{:.3}\",\"{:.3}\"",
            l.title.replace('"', "\"\""),
            l.summary.ops_per_sec,
            h.mean_ns() / 1e6,
            ms(h.min_ns()),
            ms(h.percentile_ns(50.0)),
            ms(h.percentile_ns(95.0)),
            ms(h.percentile_ns(99.0)),
            ms(h.max_ns()),
        );
    }
    out
}

/// Renders the quiet layout (`-q`).
pub fn quiet(lines: &[TestLine<'_>]) -> String {
    let mut out = String::new();
    for l in lines {
        let h = histogram(l.summary);
        let _ = writeln!(
            out,
            "{}: {:.2} requests per second, p50={:.3} msec",
            l.title,
            l.summary.ops_per_sec,
            h.percentile_ns(50.0) as f64 / 1e6
        );
    }
    out
}

fn histogram(s: &Summary) -> LatencyHistogram {
    // A summary written by this build always carries a valid histogram; an empty one is
    // the honest fallback for a damaged record (all figures print as zero).
    LatencyHistogram::from_base64(&s.histogram).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_lines_title_single_commands_by_their_test() {
        let mut record = resplab_results::fixture::run_record(summary(&[1_000], 1.0));
        for c in ["SET", "LPUSH", "LPOP"] {
            record.commands.insert(c.into(), summary(&[1_000], 1.0));
        }
        let set = ["SET".to_string()];
        let list = ["LPUSH".to_string(), "LPOP".to_string(), "RPOP".to_string()];
        let tests = [
            Test {
                title: "SET",
                commands: &set,
            },
            Test {
                title: "LIST",
                commands: &list,
            },
        ];
        let titles = |given| -> Vec<String> {
            test_lines(&tests, &record, given)
                .iter()
                .map(|l| l.title.to_string())
                .collect()
        };
        assert_eq!(titles(None), ["SET", "LPUSH", "LPOP"]);
        assert_eq!(titles(Some("HSET k f v")), ["HSET k f v"; 3]);
    }

    fn summary(values_ns: &[u64], ops: f64) -> Summary {
        let mut h = LatencyHistogram::new();
        for v in values_ns {
            h.record(*v);
        }
        Summary {
            requests: values_ns.len() as u64,
            ops_per_sec: ops,
            histogram: h.to_base64(),
            ..Summary::default()
        }
    }

    #[test]
    fn csv_matches_redis_benchmark_layout() {
        let s = summary(&[100_000, 200_000, 300_000, 400_000], 47846.888);
        let text = csv(&[TestLine {
            title: "SET",
            summary: &s,
        }]);
        let mut lines = text.lines();
        assert_eq!(lines.next().unwrap(), CSV_HEADER);
        assert_eq!(
            lines.next().unwrap(),
            "\"SET\",\"47846.89\",\"0.250\",\"0.100\",\"0.200\",\"0.400\",\"0.400\",\"0.400\""
        );
    }

    #[test]
    fn quiet_matches_redis_benchmark_layout() {
        let s = summary(&[167_000; 10], 55555.551);
        assert_eq!(
            quiet(&[TestLine {
                title: "PING_MBULK",
                summary: &s
            }]),
            "PING_MBULK: 55555.55 requests per second, p50=0.167 msec\n"
        );
    }
}
