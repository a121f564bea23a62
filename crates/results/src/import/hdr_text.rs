//! HdrHistogram percentile distributions: the text `outputPercentileDistribution` writes.
//!
//! ```text
//!        Value   Percentile   TotalCount 1/(1-Percentile)
//!
//!         0.02     0.000000            2         1.00
//!         0.07     0.050000         3364         1.05
//!         …
//!         2.33     1.000000        50000          inf
//! #[Mean    =        0.122, StdDeviation   =        0.052]
//! #[Max     =        2.335, Total count    =        50000]
//! #[Buckets =           20, SubBuckets     =          256]
//! ```
//!
//! memtier writes it with `--hdr-file-prefix` (`<prefix>_FULL_RUN_1.txt`, values in ms
//! with two decimals), `resplab bench --hdr-out` writes one per command (`.hgrm`, ms
//! with three decimals, the last row without its fourth column); wrk2 prints one inside
//! its report. Lines before the header and after the footer are not read. Each file is
//! one trial of workload `ALL`.
//!
//! The histogram is rebuilt from the `TotalCount` column: the count added since the
//! previous row is recorded at the row's value (the highest value equivalent to the
//! bucket where that percentile was reached). Counts are therefore exact; values are as
//! precise as the file prints them. Percentiles are taken from the rows as printed (the
//! first row whose `TotalCount` reaches the percentile's rank, as HdrHistogram defines
//! it), mean and max from the footer. A percentile the table has a row for (p50, p90)
//! is exact to the printed digits; one that falls between two rows (p99 lies between
//! the rows at 0.9890625 and 0.990625) reads as the later row, an upper bound that can
//! be well above the true value where the tail is steep. A file whose rows do not add
//! up to the footer's `Total count`, or that ends before the footer, is refused as
//! truncated.

use super::hdr::{self, Point};
use super::{Ctx, ImportError, Imported};
use resplab_stats::hist::LatencyHistogram;

/// The header's words, in order.
const HEADER: [&str; 4] = ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"];

/// True when `line` is the header of a percentile distribution.
pub fn is_header(line: &str) -> bool {
    line.split_whitespace().eq(HEADER)
}

/// Imports a percentile distribution whose values are milliseconds.
///
/// # Errors
/// As [`import_in`].
pub fn import(bytes: &[u8], ctx: &mut Ctx<'_>) -> Result<Imported, ImportError> {
    import_in(bytes, ctx, hdr::TEXT_UNIT_NS)
}

/// Imports a percentile distribution whose values are in units of `unit_ns` nanoseconds.
///
/// # Errors
/// [`ImportError::Line`] for a row or footer line that does not parse or a count that
/// goes down; [`ImportError::File`] when the header, the rows or the footer's total count
/// are missing, or the rows do not add up to it.
pub fn import_in(bytes: &[u8], ctx: &mut Ctx<'_>, unit_ns: u64) -> Result<Imported, ImportError> {
    let text = String::from_utf8_lossy(bytes);
    let parsed = parse(&text, ctx)?;
    let total = parsed.footer_count.ok_or_else(|| {
        ctx.file_error(
            "expected the footer `#[Max = …, Total count = …]` after the rows, found the end \
             of the file (truncated?)",
        )
    })?;
    let Some(last) = parsed.rows.last() else {
        return Err(ctx.file_error("expected percentile rows after the header, found none"));
    };
    if last.total != total {
        return Err(ctx.line_error(
            last.line,
            format!(
                "the rows end at TotalCount {} but the footer says Total count = {total} \
                 (truncated or edited file)",
                last.total
            ),
        ));
    }
    let h = rebuild(&parsed.rows, unit_ns);
    let points = points(&parsed, &h, unit_ns);
    let mut out = Imported::default();
    hdr::push_distribution(&mut out, ctx, hdr::UNNAMED_WORKLOAD, &points, &h);
    out.notes.push(format!(
        "{}: HdrHistogram percentile distribution read as {}",
        ctx.file,
        hdr::unit_name(unit_ns)
    ));
    Ok(out)
}

/// One row of the table.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    value: f64,
    total: u64,
    line: u32,
}

/// The table and the footer's numbers.
#[derive(Debug, Default)]
struct Parsed {
    rows: Vec<Row>,
    mean: Option<f64>,
    max: Option<f64>,
    footer_count: Option<u64>,
}

fn parse(text: &str, ctx: &Ctx<'_>) -> Result<Parsed, ImportError> {
    let mut parsed = Parsed::default();
    let mut saw_header = false;
    for (i, raw) in text.lines().enumerate() {
        let line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if !saw_header {
            // Text before the table (wrk2 prints its summary first) is not ours to read.
            saw_header = is_header(line);
        } else if let Some(inner) = line.strip_prefix("#[") {
            read_footer(inner, line_no, ctx, &mut parsed)?;
        } else if parsed.mean.is_some() || parsed.footer_count.is_some() {
            // The footer is over; whatever follows (wrk2's summary) is not ours either.
            break;
        } else {
            let row = read_row(line, line_no, ctx)?;
            if let Some(prev) = parsed.rows.last() {
                if row.total < prev.total {
                    return Err(ctx.line_error(
                        line_no,
                        format!(
                            "TotalCount went down from {} to {} (rows must be cumulative)",
                            prev.total, row.total
                        ),
                    ));
                }
            }
            parsed.rows.push(row);
        }
    }
    if !saw_header {
        return Err(ctx
            .file_error("expected an HdrHistogram percentile distribution, found no header line"));
    }
    Ok(parsed)
}

/// `value percentile totalcount [1/(1-percentile)]`.
fn read_row(line: &str, line_no: u32, ctx: &Ctx<'_>) -> Result<Row, ImportError> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let bad = |what: &str| {
        ctx.line_error(
            line_no,
            format!(
                "expected a row `Value Percentile TotalCount [1/(1-Percentile)]`, {what} in \
                 `{line}`"
            ),
        )
    };
    if !(3..=4).contains(&fields.len()) {
        return Err(bad(&format!("found {} fields", fields.len())));
    }
    let value: f64 = fields[0]
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| bad("the value is not a non-negative number"))?;
    let percentile: f64 = fields[1]
        .parse()
        .map_err(|_| bad("the percentile is not a number"))?;
    if !(0.0..=1.0).contains(&percentile) {
        return Err(bad("the percentile is outside 0…1"));
    }
    let total: u64 = fields[2]
        .parse()
        .map_err(|_| bad("the TotalCount is not a whole number"))?;
    Ok(Row {
        value,
        total,
        line: line_no,
    })
}

/// `Mean = 0.122, StdDeviation = 0.052]` and the like.
fn read_footer(
    inner: &str,
    line_no: u32,
    ctx: &Ctx<'_>,
    parsed: &mut Parsed,
) -> Result<(), ImportError> {
    let Some(body) = inner.strip_suffix(']') else {
        return Err(ctx.line_error(
            line_no,
            format!("expected a footer line `#[Name = value, …]`, found `#[{inner}`"),
        ));
    };
    for part in body.split(',') {
        let Some((key, value)) = part.split_once('=') else {
            return Err(ctx.line_error(
                line_no,
                format!(
                    "expected `Name = value` in the footer, found `{}`",
                    part.trim()
                ),
            ));
        };
        let value = value.trim();
        let number = || {
            value.parse::<f64>().map_err(|_| {
                ctx.line_error(
                    line_no,
                    format!("expected a number for `{}`, found `{value}`", key.trim()),
                )
            })
        };
        match key.trim() {
            "Mean" => parsed.mean = Some(number()?),
            "Max" => parsed.max = Some(number()?),
            "Total count" => {
                parsed.footer_count = Some(value.parse().map_err(|_| {
                    ctx.line_error(
                        line_no,
                        format!("expected a whole number for `Total count`, found `{value}`"),
                    )
                })?);
            }
            _ => {}
        }
    }
    Ok(())
}

/// The histogram the rows describe, in nanoseconds.
fn rebuild(rows: &[Row], unit_ns: u64) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    let mut before = 0;
    for row in rows {
        let added = row.total - before;
        if added > 0 {
            h.record_n(to_ns(row.value, unit_ns), added);
        }
        before = row.total;
    }
    h
}

fn to_ns(value: f64, unit_ns: u64) -> u64 {
    // Values are non-negative and finite (checked when read); `as` saturates.
    (value * unit_ns as f64).round() as u64
}

/// Count, mean and max from the footer, percentiles as printed; latencies in ms.
fn points(parsed: &Parsed, h: &LatencyHistogram, unit_ns: u64) -> Vec<Point> {
    let to_ms = |v: f64| v * unit_ns as f64 / 1e6;
    let mut out = hdr::points_of(h);
    for p in &mut out {
        match p.metric.as_str() {
            "avg_latency_ms" => p.value = parsed.mean.map_or(p.value, to_ms),
            "max_latency_ms" => p.value = parsed.max.map_or(p.value, to_ms),
            _ => {}
        }
    }
    for (p, q) in out[2..].iter_mut().zip(hdr::QUANTILES) {
        if let Some(v) = printed_percentile(&parsed.rows, q) {
            p.value = to_ms(v);
        }
    }
    out
}

/// The printed value at percentile `q` (0–100): the first row whose TotalCount reaches
/// the rank `ceil(q/100 · total)` (at least 1), as HdrHistogram's `valueAtPercentile`.
fn printed_percentile(rows: &[Row], q: f64) -> Option<f64> {
    let total = rows.last()?.total;
    let rank = ((q / 100.0 * total as f64).ceil() as u64).clamp(1, total.max(1));
    rows.iter().find(|r| r.total >= rank).map(|r| r.value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::Interner;
    use std::sync::Arc;

    fn ctx(interner: &mut Interner) -> Ctx<'_> {
        Ctx {
            label: Arc::from("a"),
            file: Arc::from("d.txt"),
            interner,
        }
    }

    const SMALL: &str = "       Value   Percentile   TotalCount 1/(1-Percentile)\n\n\
        1.00     0.000000            1         1.00\n\
        2.00     0.500000            5         2.00\n\
        3.00     0.900000            9        10.00\n\
        4.00     1.000000           10          inf\n\
        #[Mean    =        2.300, StdDeviation   =        0.900]\n\
        #[Max     =        4.001, Total count    =           10]\n\
        #[Buckets =           20, SubBuckets     =         2048]\n";

    #[test]
    fn rows_rebuild_exact_counts_and_printed_percentiles() {
        let mut i = Interner::default();
        let mut c = ctx(&mut i);
        let parsed = parse(SMALL, &c).unwrap();
        assert_eq!(parsed.footer_count, Some(10));
        let h = rebuild(&parsed.rows, 1_000_000);
        assert_eq!(h.count(), 10);
        assert_eq!(printed_percentile(&parsed.rows, 50.0), Some(2.0));
        assert_eq!(printed_percentile(&parsed.rows, 90.0), Some(3.0));
        assert_eq!(printed_percentile(&parsed.rows, 99.0), Some(4.0));
        let out = import(SMALL.as_bytes(), &mut c).unwrap();
        assert_eq!(out.histograms.len(), 1);
        assert_eq!(out.histograms[0].unit_ns, 1);
    }

    #[test]
    fn text_around_the_table_is_left_alone() {
        let mut i = Interner::default();
        let mut c = ctx(&mut i);
        let wrapped =
            format!("  Detailed Percentile spectrum:\n{SMALL}----------\n  10 requests in 1.00s\n");
        let out = import(wrapped.as_bytes(), &mut c).unwrap();
        assert_eq!(out.observations.get(0).unwrap().value, 10.0);
        let e = import(b"no table here\n", &mut c).unwrap_err().to_string();
        assert!(e.starts_with("d.txt: expected an HdrHistogram"), "{e}");
    }

    #[test]
    fn a_missing_footer_or_short_rows_are_refused() {
        let mut i = Interner::default();
        let mut c = ctx(&mut i);
        let cut = &SMALL[..SMALL.find("#[Max").unwrap()];
        let e = import(cut.as_bytes(), &mut c).unwrap_err().to_string();
        assert!(e.starts_with("d.txt: expected the footer"), "{e}");
        let short = SMALL.replace("           10          inf", "            9          inf");
        let e = import(short.as_bytes(), &mut c).unwrap_err().to_string();
        assert!(e.contains("Total count = 10"), "{e}");
        let down = SMALL.replace("            9        10.00", "            4        10.00");
        let e = import(down.as_bytes(), &mut c).unwrap_err().to_string();
        assert!(e.starts_with("d.txt:5: TotalCount went down"), "{e}");
    }
}
