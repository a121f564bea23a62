//! The Prometheus text exposition format, version 0.0.4: one `# HELP` and one `# TYPE`
//! line per family, then its samples, `name{label="value",…} number`.
//!
//! Names follow the format's conventions so `promtool check metrics` accepts them:
//! counters end in `_total`, times are in seconds (`_seconds`), a histogram has its
//! cumulative `_bucket{le=…}` samples up to `+Inf`, then `_sum` and `_count`. A latency
//! histogram is exposed both ways: as a histogram with the fixed [`BUCKETS_SECONDS`]
//! (so that `histogram_quantile` works over any window) and as a summary with exact
//! quantiles of the whole run (from the HdrHistogram, at its 3 significant digits).

use resplab_stats::hist::LatencyHistogram;
use std::fmt::Write as _;

/// Upper bounds of the histogram buckets, seconds: 50 µs to 10 s.
pub const BUCKETS_SECONDS: [f64; 17] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0,
];

/// Quantiles of the summaries.
pub const QUANTILES: [f64; 5] = [0.5, 0.9, 0.99, 0.999, 1.0];

/// Labels of one sample: (name, value) pairs, in order.
pub type Labels = [(String, String)];

/// A page of metrics being written.
#[derive(Debug, Default)]
pub struct Exposition {
    out: String,
}

impl Exposition {
    pub fn new() -> Self {
        Exposition::default()
    }

    /// A counter family (`name` ends in `_total`) with one sample per label set.
    pub fn counter(&mut self, name: &str, help: &str, samples: &[(Vec<(String, String)>, f64)]) {
        self.family(name, help, "counter", samples);
    }

    /// A gauge family with one sample per label set.
    pub fn gauge(&mut self, name: &str, help: &str, samples: &[(Vec<(String, String)>, f64)]) {
        self.family(name, help, "gauge", samples);
    }

    fn family(
        &mut self,
        name: &str,
        help: &str,
        kind: &str,
        samples: &[(Vec<(String, String)>, f64)],
    ) {
        if samples.is_empty() {
            return;
        }
        self.head(name, help, kind);
        for (labels, v) in samples {
            self.sample(name, labels, &[], *v);
        }
    }

    /// A histogram family (`name` in seconds) from latency histograms in ns.
    pub fn histogram(
        &mut self,
        name: &str,
        help: &str,
        samples: &[(Vec<(String, String)>, &LatencyHistogram)],
    ) {
        let bucket = format!("{name}_bucket");
        self.latency_family(name, help, "histogram", samples, &|w, labels, h| {
            for le in BUCKETS_SECONDS {
                let below = count_at_most(h, (le * 1e9) as u64);
                w.sample(&bucket, labels, &[("le", &number(le))], below as f64);
            }
            w.sample(&bucket, labels, &[("le", "+Inf")], h.count() as f64);
        });
    }

    /// A summary family (`name` in seconds) with the [`QUANTILES`] of each histogram.
    pub fn summary(
        &mut self,
        name: &str,
        help: &str,
        samples: &[(Vec<(String, String)>, &LatencyHistogram)],
    ) {
        self.latency_family(name, help, "summary", samples, &|w, labels, h| {
            for q in QUANTILES {
                let v = if h.is_empty() {
                    f64::NAN
                } else {
                    h.percentile_ns(q * 100.0) as f64 / 1e9
                };
                w.sample(name, labels, &[("quantile", &number(q))], v);
            }
        });
    }

    /// A family of kind `kind` from latency histograms: nothing when there are no
    /// samples; else its head, then for each histogram what `points` writes and its
    /// `_sum` and `_count`.
    fn latency_family(
        &mut self,
        name: &str,
        help: &str,
        kind: &str,
        samples: &[(Vec<(String, String)>, &LatencyHistogram)],
        points: &dyn Fn(&mut Self, &Labels, &LatencyHistogram),
    ) {
        if samples.is_empty() {
            return;
        }
        self.head(name, help, kind);
        for (labels, h) in samples {
            points(self, labels, h);
            self.sums(name, labels, h);
        }
    }

    /// The text, ended by a newline.
    pub fn finish(self) -> String {
        self.out
    }

    fn head(&mut self, name: &str, help: &str, kind: &str) {
        let help = help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(self.out, "# HELP {name} {help}");
        let _ = writeln!(self.out, "# TYPE {name} {kind}");
    }

    fn sums(&mut self, name: &str, labels: &Labels, h: &LatencyHistogram) {
        let sum = if h.is_empty() {
            0.0
        } else {
            h.mean_ns() * h.count() as f64 / 1e9
        };
        self.sample(&format!("{name}_sum"), labels, &[], sum);
        self.sample(&format!("{name}_count"), labels, &[], h.count() as f64);
    }

    fn sample(&mut self, name: &str, labels: &Labels, extra: &[(&str, &str)], v: f64) {
        self.out.push_str(name);
        let all = labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(extra.iter().copied());
        let mut first = true;
        for (k, val) in all {
            self.out.push(if first { '{' } else { ',' });
            first = false;
            let _ = write!(self.out, "{k}=\"{}\"", escape(val));
        }
        if !first {
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {}", number(v));
    }
}

/// Replies recorded at or below `ns`.
fn count_at_most(h: &LatencyHistogram, ns: u64) -> u64 {
    if h.is_empty() {
        return 0;
    }
    h.as_hdr().count_between(0, ns)
}

/// A sample value as the format writes it: `NaN`, `+Inf`, or the shortest decimal.
pub fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// A label value with `\`, `"` and newlines escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Labels from `(name, value)` pairs.
pub fn labels(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_has_cumulative_buckets_sum_and_count() {
        let mut h = LatencyHistogram::new();
        for us in [30, 70, 70, 2000] {
            h.record(us * 1000);
        }
        let mut e = Exposition::new();
        e.histogram(
            "x_seconds",
            "latency",
            &[(labels(&[("command", "GET")]), &h)],
        );
        let t = e.finish();
        assert!(
            t.starts_with("# HELP x_seconds latency\n# TYPE x_seconds histogram\n"),
            "{t}"
        );
        assert!(
            t.contains("x_seconds_bucket{command=\"GET\",le=\"0.00005\"} 1\n"),
            "{t}"
        );
        assert!(
            t.contains("x_seconds_bucket{command=\"GET\",le=\"0.0001\"} 3\n"),
            "{t}"
        );
        assert!(
            t.contains("x_seconds_bucket{command=\"GET\",le=\"0.001\"} 3\n"),
            "{t}"
        );
        assert!(
            t.contains("x_seconds_bucket{command=\"GET\",le=\"0.0025\"} 4\n"),
            "{t}"
        );
        assert!(
            t.contains("x_seconds_bucket{command=\"GET\",le=\"+Inf\"} 4\n"),
            "{t}"
        );
        assert!(t.contains("x_seconds_count{command=\"GET\"} 4\n"), "{t}");
    }

    #[test]
    fn a_summary_has_its_quantiles_sum_and_count_and_no_samples_write_nothing() {
        let mut h = LatencyHistogram::new();
        for us in [100, 100, 100, 100] {
            h.record(us * 1000);
        }
        let mut e = Exposition::new();
        e.summary(
            "y_seconds",
            "latency",
            &[(labels(&[("command", "SET")]), &h)],
        );
        e.summary("z_seconds", "none", &[]);
        e.histogram("z_seconds", "none", &[]);
        let t = e.finish();
        assert!(
            t.starts_with("# HELP y_seconds latency\n# TYPE y_seconds summary\n"),
            "{t}"
        );
        for q in ["0.5", "0.9", "0.99", "0.999", "1"] {
            let line = format!("y_seconds{{command=\"SET\",quantile=\"{q}\"}} 0.0001");
            assert!(t.contains(&line), "{line}: {t}");
        }
        assert!(t.contains("y_seconds_count{command=\"SET\"} 4\n"), "{t}");
        assert!(t.contains("y_seconds_sum{command=\"SET\"} "), "{t}");
        assert!(!t.contains("z_seconds"), "{t}");
    }

    #[test]
    fn labels_are_escaped_and_empty_families_left_out() {
        let mut e = Exposition::new();
        e.gauge("g", "a \"gauge\"", &[(labels(&[("v", "a\"b\\c\nd")]), 1.5)]);
        e.counter("c_total", "nothing", &[]);
        let t = e.finish();
        assert_eq!(
            t,
            "# HELP g a \"gauge\"\n# TYPE g gauge\ng{v=\"a\\\"b\\\\c\\nd\"} 1.5\n"
        );
    }
}
