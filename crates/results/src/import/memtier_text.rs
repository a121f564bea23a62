//! memtier_benchmark's result table on standard output.
//!
//! ```text
//! ALL STATS
//! ==========================================================================…
//! Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     p50 Latency …  KB/sec
//! --------------------------------------------------------------------------…
//! Sets         7021.01          ---          ---         0.12980         0.12700 …  527.16
//! Gets        70132.94       200.60     69932.34         0.12966         0.12700 … 2601.66
//! Waits           0.00          ---          ---             ---             --- …     ---
//! Totals      77153.95       200.60     69932.34         0.12967         0.12700 … 3128.82
//! ```
//!
//! A single run prints one `ALL STATS` table; `--run-count N` (`-x N`) prints
//! `RUN #k RESULTS` per run (with `--print-all-runs`) and then `BEST RUN RESULTS`,
//! `WORST RUN RESULTS` and `AGGREGATED AVERAGE RESULTS (N runs)`. Each run is one trial;
//! the BEST/WORST/AGGREGATED summaries are not trials and are skipped (a file with only
//! summaries uses the aggregated one as its single trial, with a note), as for memtier's
//! JSON ([`super::memtier`]).
//!
//! The columns come from the header, so tables with other columns (arbitrary
//! `--command`s have no Hits/Misses, `--print-percentiles` changes the percentiles) read
//! the same way. Each row's type (`Sets`, `Gets`, `Totals`, `Hsets`, …) is the workload;
//! values are taken as printed: `ops_per_sec`, `hits_per_sec`, `misses_per_sec`,
//! `kb_per_sec` and any other `X/sec` column as `x_per_sec`; `avg_latency_ms` and
//! `pNN_latency_ms`. `---` (and `nan`/`-nan`) is no value. A row without any latency
//! (`Waits` when no WAIT was sent) had no requests and is skipped. The "Request Latency
//! Distribution" lines below the tables are not read, nor are progress lines (standard
//! error, when it was redirected into the same file). A rate of 0 next to real latencies
//! is memtier's timing bug (see [`super::memtier`]): the row's rates are flagged, its
//! latencies kept.

use super::{Ctx, ImportError, Imported};
use crate::sample::{Direction, Metric, Observation};

/// True when `line` is the header of a memtier result table.
pub fn is_header(line: &str) -> bool {
    let mut words = line.split_whitespace();
    words.next() == Some("Type") && words.any(|w| w == "Ops/sec")
}

/// Imports memtier's standard output.
///
/// # Errors
/// [`ImportError::Line`] for a header column or a row that does not parse;
/// [`ImportError::File`] when the text holds no result table.
pub fn import(bytes: &[u8], ctx: &mut Ctx<'_>) -> Result<Imported, ImportError> {
    let text = String::from_utf8_lossy(bytes);
    let tables = read_tables(&text, ctx)?;
    let mut out = Imported::default();
    let runs: Vec<&Table> = tables.iter().filter(|t| t.is_run()).collect();
    let chosen: Vec<&Table> = if runs.is_empty() {
        let aggregated: Vec<&Table> = tables
            .iter()
            .filter(|t| t.section.starts_with("AGGREGATED"))
            .take(1)
            .collect();
        if let Some(t) = aggregated.first() {
            out.notes.push(format!(
                "{}: no per-run tables (run memtier with --print-all-runs); using \"{}\" as a \
                 single trial",
                ctx.file, t.section
            ));
        }
        aggregated
    } else {
        if runs.len() < tables.len() {
            out.notes.push(format!(
                "{}: using the {} per-run tables as trials; BEST/WORST/AGGREGATED summaries \
                 are not trials and were skipped",
                ctx.file,
                runs.len()
            ));
        }
        runs
    };
    if chosen.is_empty() {
        return Err(ctx.file_error(
            "expected a memtier result table (`ALL STATS` or `RUN #k RESULTS` followed by \
             `Type  Ops/sec …`), found none",
        ));
    }
    for table in chosen {
        push_table(table, ctx, &mut out);
    }
    if out.observations.is_empty() {
        return Err(ctx.file_error(
            "expected rows with values in the memtier result tables, found only empty ones",
        ));
    }
    Ok(out)
}

/// One printed table: its section title, columns and rows.
#[derive(Debug)]
struct Table {
    section: String,
    columns: Vec<Column>,
    rows: Vec<TableRow>,
}

impl Table {
    fn is_run(&self) -> bool {
        self.section == "ALL STATS"
            || (self.section.starts_with("RUN #") && self.section.ends_with(" RESULTS"))
    }
}

#[derive(Debug)]
struct TableRow {
    name: String,
    values: Vec<Option<f64>>,
    line: u32,
}

/// What a column holds.
#[derive(Clone, Debug)]
struct Column {
    metric: Metric,
    is_rate: bool,
}

fn read_tables(text: &str, ctx: &Ctx<'_>) -> Result<Vec<Table>, ImportError> {
    let mut tables: Vec<Table> = Vec::new();
    let mut section = String::new();
    let mut open: Option<Table> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        // With `2>&1` memtier's progress lines (ended by `\r`) run into the next line;
        // keep what a terminal would show: the text after the last carriage return.
        let line = raw.rsplit('\r').next().unwrap_or_default().trim();
        if let Some(table) = open.as_mut() {
            if line.is_empty() {
                tables.extend(open.take());
            } else if !line.starts_with("---") {
                table
                    .rows
                    .push(read_row(line, line_no, table.columns.len(), ctx)?);
            }
        } else if is_header(line) {
            open = Some(Table {
                section: std::mem::take(&mut section),
                columns: read_header(line, line_no, ctx)?,
                rows: Vec::new(),
            });
        } else if !line.is_empty() && !line.starts_with("===") {
            section = line.to_string();
        }
    }
    tables.extend(open);
    Ok(tables)
}

/// `Type Ops/sec Hits/sec … Avg. Latency p50 Latency … KB/sec` → the columns after Type.
fn read_header(line: &str, line_no: u32, ctx: &Ctx<'_>) -> Result<Vec<Column>, ImportError> {
    let mut names: Vec<String> = Vec::new();
    for word in line.split_whitespace().skip(1) {
        match names.last_mut() {
            Some(prev) if word == "Latency" && !prev.ends_with("/sec") => {
                prev.push_str(" Latency");
            }
            _ => names.push(word.to_string()),
        }
    }
    names
        .iter()
        .map(|n| {
            column(n).ok_or_else(|| {
                ctx.line_error(
                    line_no,
                    format!(
                        "expected memtier columns (`X/sec`, `Avg. Latency`, `pNN Latency`), \
                         found `{n}`"
                    ),
                )
            })
        })
        .collect()
}

fn column(name: &str) -> Option<Column> {
    if let Some(what) = name.strip_suffix("/sec") {
        let direction = match what {
            "Ops" | "KB" => Direction::HigherIsBetter,
            _ => Direction::Unknown,
        };
        let unit = if what == "Ops" {
            "ops/s".to_string()
        } else {
            format!("{what}/s")
        };
        let metric = Metric::new(
            format!("{}_per_sec", what.to_ascii_lowercase()),
            unit,
            direction,
        );
        return Some(Column {
            metric,
            is_rate: true,
        });
    }
    let latency = |name: String| Column {
        metric: Metric::new(name, "ms", Direction::LowerIsBetter),
        is_rate: false,
    };
    match name {
        "Avg. Latency" | "Latency" => Some(latency("avg_latency_ms".to_string())),
        _ => {
            let q: f64 = name
                .strip_prefix('p')?
                .strip_suffix(" Latency")?
                .parse()
                .ok()?;
            Some(latency(format!(
                "p{}_latency_ms",
                super::memtier::trim_number(q)
            )))
        }
    }
}

/// `Sets 7021.01 --- --- 0.12980 …`: the type and one value (or `---`) per column.
fn read_row(
    line: &str,
    line_no: u32,
    columns: usize,
    ctx: &Ctx<'_>,
) -> Result<TableRow, ImportError> {
    let mut words = line.split_whitespace();
    let name = words.next().unwrap_or_default().to_string();
    let cells: Vec<&str> = words.collect();
    if cells.len() != columns {
        return Err(ctx.line_error(
            line_no,
            format!(
                "expected a type and {columns} values (a number or `---`) as in the header, \
                 found {} values in `{line}`",
                cells.len()
            ),
        ));
    }
    let values = cells
        .iter()
        .map(|c| match *c {
            "---" => Ok(None),
            // Undefined numbers may print as `nan`/`-nan` (as in some memtier JSON).
            c => c
                .parse::<f64>()
                .map(|v| v.is_finite().then_some(v))
                .map_err(|_| {
                    ctx.line_error(
                        line_no,
                        format!("expected a number or `---` for {name}, found `{c}`"),
                    )
                }),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(TableRow {
        name,
        values,
        line: line_no,
    })
}

fn push_table(table: &Table, ctx: &mut Ctx<'_>, out: &mut Imported) {
    for row in &table.rows {
        let has_latency = table
            .columns
            .iter()
            .zip(&row.values)
            .any(|(c, v)| !c.is_rate && v.is_some());
        if !has_latency {
            continue;
        }
        let broken_clock = table
            .columns
            .iter()
            .zip(&row.values)
            .any(|(c, v)| c.metric.name == "ops_per_sec" && matches!(v, Some(r) if *r <= 0.0));
        if broken_clock {
            out.notes.push(format!(
                "{}:{} {} {}: Ops/sec 0 with measured latencies is a memtier timing bug; \
                 its rates were left out (latencies are unaffected)",
                ctx.file, row.line, table.section, row.name
            ));
        }
        for (column, value) in table.columns.iter().zip(&row.values) {
            let Some(v) = value else { continue };
            let metric = ctx.interner.metric(column.metric.clone());
            let mut o: Observation = ctx.observation(&row.name, &metric, *v, Some(row.line));
            if broken_clock && column.is_rate {
                o.flag = Some(format!(
                    "memtier printed Ops/sec 0 for {} with measured latencies (a known \
                     memtier timing bug, fixed in 2.4.4); rate left out",
                    row.name
                ));
            }
            out.observations.push(o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_columns_become_metrics() {
        let line = "Type  Ops/sec  Hits/sec  Avg. Latency  p50 Latency  p99.90 Latency  KB/sec";
        assert!(is_header(line));
        let names: Vec<String> = "Ops/sec|Hits/sec|Avg. Latency|p50 Latency|p99.90 Latency|KB/sec"
            .split('|')
            .map(|n| column(n).unwrap().metric.name)
            .collect();
        assert_eq!(
            names,
            [
                "ops_per_sec",
                "hits_per_sec",
                "avg_latency_ms",
                "p50_latency_ms",
                "p99.9_latency_ms",
                "kb_per_sec"
            ]
        );
        assert!(column("Weird").is_none());
        let mut i = crate::import::Interner::default();
        let c = Ctx {
            label: std::sync::Arc::from("a"),
            file: std::sync::Arc::from("m.txt"),
            interner: &mut i,
        };
        let row = read_row("Gets 1.5 --- -nan", 7, 3, &c).unwrap();
        assert_eq!(row.values, vec![Some(1.5), None, None]);
        let e = read_row("Gets 1.5 ---", 7, 3, &c).unwrap_err().to_string();
        assert!(
            e.starts_with("m.txt:7: expected a type and 3 values"),
            "{e}"
        );
        assert!(!is_header("Type     <= msec         Percent"));
    }
}
