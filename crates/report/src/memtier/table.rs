//! memtier's text report: the run information lines, then each section's table and,
//! unless `--hide-histogram`, its request latency distribution, in memtier's column
//! formats (`%12.2f` rates, `%15.05f` latencies in ms, a type column as wide as the
//! longest command name).

use super::{ms, Section, Shape, TypeStats};
use std::fmt::Write as _;

/// The whole text report of `sections`.
pub fn render(shape: &Shape, sections: &[Section]) -> String {
    let mut out = String::new();
    let (n, what) = match (shape.requests_per_client, shape.seconds) {
        (Some(n), _) => (n, "Requests per client"),
        (None, s) => (s.unwrap_or(0), "Seconds"),
    };
    let _ = writeln!(out, "{:<9} Threads", shape.threads);
    let _ = writeln!(
        out,
        "{:<9} Connections per thread",
        shape.clients_per_thread
    );
    let _ = writeln!(out, "{n:<9} {what}");
    for s in sections {
        out.push_str(&section(shape, s));
    }
    out
}

/// One section: title, rule, header, rows, and the distribution.
fn section(shape: &Shape, s: &Section) -> String {
    let type_width = shape
        .commands
        .iter()
        .map(String::len)
        .max()
        .unwrap_or(0)
        .max(6)
        + 1;
    let mut columns: Vec<Column> = Vec::new();
    columns.push(Column::text(
        type_width,
        "Type",
        rows(s).iter().map(|r| r.label()).collect(),
        true,
    ));
    columns.push(Column::numbers(12, "Ops/sec", s, 2, |r| {
        Some(r.ops_per_sec)
    }));
    if shape.is_mix() {
        let hits = |f: fn(&TypeStats) -> f64| {
            move |r: &TypeStats| (r.name == "GET" || r.name == "Totals").then(|| f(r))
        };
        columns.push(Column::numbers(
            12,
            "Hits/sec",
            s,
            2,
            hits(|r| r.hits_per_sec),
        ));
        columns.push(Column::numbers(
            12,
            "Misses/sec",
            s,
            2,
            hits(|r| r.misses_per_sec),
        ));
    }
    if shape.cluster {
        columns.push(Column::numbers(12, "MOVED/sec", s, 2, |r| {
            r.moved_per_sec.or((r.name == "Totals").then_some(0.0))
        }));
        columns.push(Column::numbers(12, "ASK/sec", s, 2, |r| {
            r.ask_per_sec.or((r.name == "Totals").then_some(0.0))
        }));
    }
    let latency = |r: &TypeStats| !r.hist.is_empty() || r.name == "Totals" || !shape.is_mix();
    columns.push(Column::numbers(15, "Avg. Latency", s, 5, |r| {
        latency(r).then(|| ms(r.hist.as_hdr().mean()))
    }));
    for p in &shape.percentiles {
        let p = *p;
        columns.push(Column::numbers(15, &percentile_label(p), s, 5, |r| {
            latency(r).then(|| ms(r.hist.percentile_ns(p) as f64))
        }));
    }
    columns.push(Column::numbers(12, "KB/sec", s, 2, |r| {
        (r.name != "WAIT").then_some(r.kb_rx_per_sec + r.kb_tx_per_sec)
    }));
    let mut out = format!("\n\n{}\n", s.title);
    for c in &columns {
        out.push_str(&"=".repeat(c.width + 1));
    }
    out.push('\n');
    for line in 0..columns[0].cells.len() {
        for c in &columns {
            out.push_str(&c.cells[line]);
        }
        out.push('\n');
    }
    if !shape.hide_histogram {
        out.push_str(&distribution(s));
    }
    out
}

/// The rows of a section: its types, then the totals.
fn rows(s: &Section) -> Vec<&TypeStats> {
    s.types.iter().chain(std::iter::once(&s.totals)).collect()
}

/// memtier's header of a percentile column: `p50 Latency`, `p99.9 Latency`, with at
/// most three decimals, counted the way memtier counts them (in single precision, so
/// 99.99 shows as `p99.990`).
pub fn percentile_label(p: f64) -> String {
    let mut digits = 0;
    let q = p as f32;
    let mut frac = q.abs() - q.abs().trunc();
    while frac.abs() > 0.001 && digits < 3 {
        frac *= 10.0;
        digits += 1;
        frac -= frac.trunc();
    }
    format!("p{p:.digits$} Latency")
}

/// The request latency distribution: for each type, every tenth of the way to each
/// remaining half (HdrHistogram's percentile iteration), `Type <= msec Percent`.
fn distribution(s: &Section) -> String {
    let mut out = format!(
        "\n\nRequest Latency Distribution\n{:<6} {:>12} {:>12}\n{}\n",
        "Type",
        "<= msec   ",
        "Percent",
        "-".repeat(72)
    );
    let last = s.types.len().saturating_sub(1);
    for (i, t) in s.types.iter().enumerate() {
        for (value_ms, percent) in percentile_steps(t) {
            let _ = writeln!(out, "{:<6} {value_ms:>8.3} {percent:>12.3}", t.name);
        }
        // memtier closes every type but a mix's last (WAIT) with a rule.
        if !(i == last && t.name == "WAIT") {
            out.push_str("---\n");
        }
    }
    out
}

/// The `(value in ms, percent)` steps of a type's distribution (also the JSON arrays).
/// A type without requests has memtier's one row, `0.000` at `100.000`.
pub fn percentile_steps(t: &TypeStats) -> Vec<(f64, f64)> {
    if t.hist.is_empty() {
        return vec![(0.0, 100.0)];
    }
    t.hist
        .as_hdr()
        .iter_quantiles(10)
        .map(|v| {
            let value = t.hist.as_hdr().highest_equivalent(v.value_iterated_to());
            (ms(value as f64), v.quantile_iterated_to() * 100.0)
        })
        .collect()
}

/// A column: its width, and its cells (header, rule, one per row).
struct Column {
    width: usize,
    cells: Vec<String>,
}

impl Column {
    fn text(width: usize, header: &str, rows: Vec<String>, left: bool) -> Self {
        let cell = |s: &str| {
            if left {
                format!("{s:<width$} ")
            } else {
                format!("{s:>width$} ")
            }
        };
        let mut cells = vec![cell(header), "-".repeat(width + 1)];
        cells.extend(rows.iter().map(|r| cell(r)));
        Column { width, cells }
    }

    fn numbers(
        width: usize,
        header: &str,
        s: &Section,
        decimals: usize,
        value: impl Fn(&TypeStats) -> Option<f64>,
    ) -> Self {
        let rows = rows(s)
            .into_iter()
            .map(|r| match value(r) {
                Some(v) => format!("{v:.decimals$}"),
                None => "---".to_string(),
            })
            .collect();
        Column::text(width, header, rows, false)
    }
}
