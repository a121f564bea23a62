//! benchstat's `-format csv`: the same tables at full precision, with warnings keyed by
//! spreadsheet cell.

use super::analyse::{analyse, pct_range, Summary};
use super::table::{PrevConfig, Table};
use super::units::go_float;
use super::{BenchstatError, BenchstatOptions};

/// benchstat's CSV for all tables and its warnings text (each warning prefixed with the
/// spreadsheet reference of the cell it belongs to).
///
/// # Errors
/// [`BenchstatError`] when a value is NaN or infinite.
pub(super) fn csv_of_tables(
    tables: Vec<Table>,
    opts: &BenchstatOptions,
) -> Result<(String, String), BenchstatError> {
    let mut sheet = Sheet {
        out: String::new(),
        warnings: String::new(),
        row_no: 1,
    };
    let mut prev: Option<&Vec<(String, String)>> = None;
    for (i, t) in tables.iter().enumerate() {
        if i > 0 {
            sheet.emit(&[String::new()]);
        }
        for (j, (k, v)) in t.config.iter().enumerate() {
            if prev.is_none_or_changed(j, v) {
                sheet.emit(&[format!("{k}: {v}")]);
            }
        }
        prev = Some(&t.config);
        sheet.table(t, opts)?;
    }
    Ok((sheet.out, sheet.warnings))
}

/// The first CSV column of label `exp`: the baseline has value and CI, later labels
/// also the change and P.
fn start(exp: usize) -> usize {
    if exp == 0 {
        1
    } else {
        1 + 2 + (exp - 1) * 4
    }
}

/// The CSV written so far, its warnings, and the (1-based) number of the next row.
struct Sheet {
    out: String,
    warnings: String,
    row_no: usize,
}

impl Sheet {
    /// Writes one record.
    fn emit(&mut self, row: &[String]) {
        self.out.push_str(&resplab_results::csv::record(row));
        self.out.push('\n');
        self.row_no += 1;
    }

    /// Pads `row` to `total` fields, writes it and empties it.
    fn flush(&mut self, row: &mut Vec<String>, total: usize) {
        while row.len() < total {
            row.push(String::new());
        }
        self.emit(row);
        row.clear();
    }

    /// Notes `msgs` as warnings of the cell the next field of `row` will fill.
    fn warn(&mut self, row: &[String], msgs: &[String]) {
        for w in msgs {
            self.warnings.push_str(&format!(
                "{}{}: {w}\n",
                csv_col_name(row.len()),
                self.row_no
            ));
        }
    }

    /// One table: the label row, the unit row, one row per benchmark and the geomean row.
    fn table(&mut self, t: &Table, opts: &BenchstatOptions) -> Result<(), BenchstatError> {
        let (stats, summaries) = analyse(t, opts)?;
        let total = start(t.cols.len());
        let mut row: Vec<String> = Vec::new();
        for (exp, label) in t.cols.iter().enumerate() {
            row.resize(start(exp), String::new());
            row.push(label.clone());
        }
        self.flush(&mut row, total);
        for exp in 0..t.cols.len() {
            row.resize(start(exp), String::new());
            row.push(t.unit.clone());
            row.push("CI".into());
            if exp > 0 {
                row.push("vs base".into());
                row.push("P".into());
            }
        }
        self.flush(&mut row, total);
        for (r, name) in t.rows.iter().enumerate() {
            row.push(name.clone());
            for exp in 0..t.cols.len() {
                let Some(cell) = stats.get(&(r, exp)) else {
                    continue;
                };
                row.resize(start(exp).max(row.len()), String::new());
                self.warn(&row, &cell.warnings);
                row.push(go_float(cell.summary.median));
                row.push(pct_range(&cell.summary));
                if exp > 0 {
                    if let Some(cmp) = &cell.cmp {
                        self.warn(&row, &cmp.warnings);
                        row.push(cmp.delta(opts.alpha, cell.summary.median));
                        row.push(cmp.text());
                    }
                }
            }
            self.flush(&mut row, total);
        }
        self.geomean_row(&mut row, &summaries);
        self.flush(&mut row, total);
        Ok(())
    }

    /// Fills `row` with the geomean row: each label's geometric mean at full precision,
    /// each later label's mean ratio as a change.
    fn geomean_row(&mut self, row: &mut Vec<String>, summaries: &[Summary]) {
        row.push("geomean".into());
        for (exp, s) in summaries.iter().enumerate() {
            row.resize(start(exp).max(row.len()), String::new());
            self.warn(row, &s.warnings);
            if let Some(v) = s.summary {
                row.push(go_float(v));
            }
            if exp > 0 {
                row.resize((start(exp) + 2).max(row.len()), String::new());
                row.push(match s.ratio {
                    Some(r) => format!("{:+.2}%", (r - 1.0) * 100.0),
                    None => "?".into(),
                });
            }
        }
    }
}

/// The spreadsheet column name benchstat writes for column index `x`.
fn csv_col_name(mut x: usize) -> String {
    let mut name = Vec::new();
    while x > 0 {
        name.push((b'A' + (x % 26) as u8) as char);
        x /= 26;
    }
    if name.is_empty() {
        name.push('A');
    }
    name.iter().rev().collect()
}
