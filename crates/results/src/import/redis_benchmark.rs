//! redis-benchmark (and valkey-benchmark) outputs: `--csv`, `-q` and the full report.
//!
//! Each file is one trial; each test (`SET`, `LRANGE_100 (first 100 elements)`) is a
//! workload. Metrics: `rps` (requests per second, higher is better) and the latency
//! columns in milliseconds (lower is better).
//!
//! - `--csv`: a header `"test","rps","avg_latency_ms",…` and one quoted row per test.
//!   Older releases print rows `"SET","12345.67"` without a header; those give `rps` only.
//! - `-q`: `NAME: N requests per second, p50=X msec` per test. Live progress lines
//!   (`NAME: rps=… (overall: …)`) end in a carriage return instead of a newline, so the
//!   text is split at both.
//! - full report: `====== NAME ======` sections with `throughput summary: N requests per
//!   second` and a `latency summary (msec):` table (avg min p50 p95 p99 max); releases
//!   before 7 print only `N requests per second`.

use super::{Ctx, ImportError, Imported};
use crate::sample::{Direction, Metric};
use std::sync::Arc;

const LATENCY_COLUMNS: [&str; 6] = ["avg", "min", "p50", "p95", "p99", "max"];

fn rps_metric(ctx: &mut Ctx<'_>) -> Arc<Metric> {
    ctx.interner
        .metric(Metric::new("rps", "requests/s", Direction::HigherIsBetter))
}

fn latency_metric(ctx: &mut Ctx<'_>, name: &str) -> Arc<Metric> {
    ctx.interner.metric(Metric::new(
        format!("{name}_latency_ms"),
        "ms",
        Direction::LowerIsBetter,
    ))
}

/// Splits one CSV line into fields, honouring double quotes (`""` is a quote).
fn csv_fields(line: &str) -> Option<Vec<String>> {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    cur.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                cur.push(c);
            }
        } else if c == '"' && cur.is_empty() && !was_quoted {
            quoted = true;
            was_quoted = true;
        } else if c == ',' {
            fields.push(std::mem::take(&mut cur));
            was_quoted = false;
        } else {
            cur.push(c);
        }
    }
    if quoted {
        return None;
    }
    fields.push(cur);
    Some(fields)
}

/// Imports `--csv` output.
///
/// # Errors
/// [`ImportError::Line`] for a row that does not match the header, or a value that is
/// not a number.
pub fn import_csv(bytes: &[u8], ctx: &mut Ctx<'_>) -> Result<Imported, ImportError> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = Imported::default();
    let mut header: Option<Vec<String>> = None;
    let rps = rps_metric(ctx);
    for (index, raw) in text.split('\n').enumerate() {
        let line_no = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let line = raw.trim_end_matches('\r').trim();
        if line.is_empty() {
            continue;
        }
        let Some(fields) = csv_fields(line) else {
            return Err(ctx.line_error(line_no, "expected a CSV row, found an unclosed quote"));
        };
        if header.is_none() && fields.first().map(String::as_str) == Some("test") {
            header = Some(fields);
            continue;
        }
        let cols: Vec<String> = match &header {
            Some(h) => h.clone(),
            None => vec!["test".into(), "rps".into()],
        };
        if fields.len() != cols.len() {
            return Err(ctx.line_error(
                line_no,
                format!(
                    "expected {} CSV fields like the header ({}), found {}",
                    cols.len(),
                    cols.join(","),
                    fields.len()
                ),
            ));
        }
        let test = fields[0].clone();
        for (col, field) in cols.iter().zip(&fields).skip(1) {
            let value: f64 = field.trim().parse().map_err(|_| {
                ctx.line_error(
                    line_no,
                    format!("expected a number in column `{col}`, found `{field}`"),
                )
            })?;
            let metric = if col == "rps" {
                rps.clone()
            } else if let Some(stem) = col.strip_suffix("_latency_ms") {
                latency_metric(ctx, stem)
            } else {
                ctx.interner.metric(Metric::from_unit(col.as_str(), ""))
            };
            let obs = ctx.observation(&test, &metric, value, Some(line_no));
            out.observations.push(obs);
        }
    }
    if out.observations.is_empty() {
        return Err(
            ctx.file_error("expected redis-benchmark --csv rows after the header, found none")
        );
    }
    Ok(out)
}

/// Parses a `-q` result line into (test, rps, p50 ms).
pub fn parse_quiet_line(line: &str) -> Option<(&str, f64, Option<f64>)> {
    let idx = line.find(" requests per second")?;
    let head = &line[..idx];
    let (name, number) = head.rsplit_once(": ")?;
    let rps: f64 = number.trim().parse().ok()?;
    let tail = &line[idx + " requests per second".len()..];
    let p50 = tail
        .trim()
        .strip_prefix(", p50=")
        .and_then(|t| t.strip_suffix(" msec"))
        .and_then(|t| t.trim().parse().ok());
    Some((name.trim(), rps, p50))
}

/// Imports `-q` output or the full text report.
///
/// # Errors
/// [`ImportError::File`] when no test result is found, [`ImportError::Line`] for a
/// latency summary row that is not six numbers.
pub fn import_text(bytes: &[u8], ctx: &mut Ctx<'_>) -> Result<Imported, ImportError> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = Imported::default();
    let rps = rps_metric(ctx);
    let mut section: Option<String> = None;
    let mut expect_latency_row = false;
    let mut latency_header: Vec<String> = Vec::new();
    for (index, raw_line) in text.split('\n').enumerate() {
        let line_no = u32::try_from(index + 1).unwrap_or(u32::MAX);
        for piece in raw_line.split('\r') {
            let line = piece.trim();
            if line.is_empty() {
                continue;
            }
            if let Some(name) = line
                .strip_prefix("====== ")
                .and_then(|l| l.strip_suffix(" ======"))
            {
                section = Some(name.to_string());
                expect_latency_row = false;
                continue;
            }
            if expect_latency_row {
                expect_latency_row = false;
                latency_row(
                    ctx,
                    line_no,
                    line,
                    &latency_header,
                    section.as_deref(),
                    &mut out,
                )?;
                continue;
            }
            if line.starts_with("latency summary (msec)") {
                continue;
            }
            if section.is_some() && line.split_whitespace().eq(LATENCY_COLUMNS.iter().copied()) {
                latency_header = LATENCY_COLUMNS.iter().map(|s| s.to_string()).collect();
                expect_latency_row = true;
                continue;
            }
            rate_line(ctx, line_no, line, section.as_deref(), &rps, &mut out);
        }
    }
    if out.observations.is_empty() {
        return Err(ctx.file_error(
            "expected redis-benchmark results (`NAME: N requests per second` lines or \
             `====== NAME ======` sections with a throughput summary), found none",
        ));
    }
    Ok(out)
}

/// A line that gives a rate: a full report's throughput summary, a `-q` line (with its
/// p50 when printed), or the lone rate of releases before 7.
fn rate_line(
    ctx: &mut Ctx<'_>,
    line_no: u32,
    line: &str,
    section: Option<&str>,
    rps: &Arc<Metric>,
    out: &mut Imported,
) {
    if let Some(rest) = line.strip_prefix("throughput summary: ") {
        if let (Some(test), Some(num)) = (section, rest.split_whitespace().next()) {
            if let Ok(v) = num.parse::<f64>() {
                out.observations
                    .push(ctx.observation(test, rps, v, Some(line_no)));
            }
        }
        return;
    }
    if let Some((name, v, p50)) = parse_quiet_line(line) {
        let name = name.to_string();
        out.observations
            .push(ctx.observation(&name, rps, v, Some(line_no)));
        if let Some(p) = p50 {
            let m = latency_metric(ctx, "p50");
            out.observations
                .push(ctx.observation(&name, &m, p, Some(line_no)));
        }
        return;
    }
    // Releases before 7 print "N requests per second" alone in a full report.
    if let (Some(test), Some(num)) = (section, line.strip_suffix(" requests per second")) {
        if let Ok(v) = num.trim().parse::<f64>() {
            out.observations
                .push(ctx.observation(test, rps, v, Some(line_no)));
        }
    }
}

/// The numbers row under a latency summary header: one observation per column.
fn latency_row(
    ctx: &mut Ctx<'_>,
    line_no: u32,
    line: &str,
    latency_header: &[String],
    section: Option<&str>,
    out: &mut Imported,
) -> Result<(), ImportError> {
    let values: Vec<f64> = line
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .map_err(|_| {
            ctx.line_error(
                line_no,
                format!(
                    "expected the latency summary row ({}), found `{line}`",
                    latency_header.join(" ")
                ),
            )
        })?;
    if values.len() != latency_header.len() {
        return Err(ctx.line_error(
            line_no,
            format!(
                "expected {} latency values, found {}",
                latency_header.len(),
                values.len()
            ),
        ));
    }
    let test = section.unwrap_or_default().to_string();
    for (name, v) in latency_header.iter().zip(values) {
        let m = latency_metric(ctx, name);
        out.observations
            .push(ctx.observation(&test, &m, v, Some(line_no)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_lines() {
        let (n, r, p) = parse_quiet_line(
            "LPUSH (needed to benchmark LRANGE): 49019.61 requests per second, p50=0.167 msec",
        )
        .unwrap();
        assert_eq!(n, "LPUSH (needed to benchmark LRANGE)");
        assert_eq!(r, 49019.61);
        assert_eq!(p, Some(0.167));
        assert!(parse_quiet_line("SET: rps=9408.0 (overall: 31783.8) avg_msec=0.414").is_none());
    }

    #[test]
    fn csv_split() {
        assert_eq!(
            csv_fields(r#""MSET (10 keys)","1.5","x""y""#).unwrap(),
            vec!["MSET (10 keys)", "1.5", "x\"y"]
        );
        assert!(csv_fields("\"abc").is_none());
    }
}
