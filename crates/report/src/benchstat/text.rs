//! benchstat's text tables: centred headers, one number scale per row, superscript
//! footnotes for warnings.

use super::analyse::{analyse, pct_range, Summary};
use super::table::{PrevConfig, Table};
use super::units::{common_scale, is_binary_unit, scale};
use super::{BenchstatError, BenchstatOptions};
use crate::texttab::{Align, TextTable};

/// benchstat's text for all tables: each preceded by the configuration lines that
/// differ from the previous table's, tables separated by a blank line.
///
/// # Errors
/// [`BenchstatError`] when a value is NaN or infinite.
pub(super) fn text_of_tables(
    tables: Vec<Table>,
    opts: &BenchstatOptions,
) -> Result<String, BenchstatError> {
    let mut out = String::new();
    let mut prev: Option<&Vec<(String, String)>> = None;
    for (i, t) in tables.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        for (j, (k, v)) in t.config.iter().enumerate() {
            if prev.is_none_or_changed(j, v) {
                out.push_str(&format!("{k}: {v}\n"));
            }
        }
        prev = Some(&t.config);
        out.push_str(&table_text(t, opts)?);
    }
    Ok(out)
}

/// Columns of a label's median, `±` and interval footnote cells.
const CENTER_COLS: usize = 3;
/// Columns of a later label's change, `(p=… n=…)` and its footnote cells.
const DELTA_COLS: usize = 3;

/// The first text column of label `exp` (column 0 holds the row names).
fn start_col(exp: usize) -> usize {
    if exp == 0 {
        1
    } else {
        1 + CENTER_COLS + (exp - 1) * (CENTER_COLS + DELTA_COLS)
    }
}

/// One table's text: two header rows, one row per benchmark, the geomean row when there
/// are several benchmarks, then the footnotes.
fn table_text(t: &Table, opts: &BenchstatOptions) -> Result<String, BenchstatError> {
    let (stats, summaries) = analyse(t, opts)?;
    let mut o = TextTable::default();
    let mut notes = Footnotes::default();
    header_rows(&mut o, t);
    let binary = is_binary_unit(&t.unit);
    for (r, row) in t.rows.iter().enumerate() {
        o.row();
        o.cell(row, Align::Left, None);
        let centers: Vec<f64> = (0..t.cols.len())
            .filter_map(|c| stats.get(&(r, c)).map(|s| s.summary.median))
            .collect();
        let scaler = common_scale(&centers, binary);
        for exp in 0..t.cols.len() {
            let Some(cell) = stats.get(&(r, exp)) else {
                continue;
            };
            o.col(start_col(exp));
            o.cell(&scaler.format(cell.summary.median), Align::Right, None);
            o.cell(&pct_range(&cell.summary), Align::Right, Some(" ± "));
            notes.mark(&mut o, &cell.warnings);
            if exp > 0 {
                if let Some(cmp) = &cell.cmp {
                    o.cell(
                        &cmp.delta(opts.alpha, cell.summary.median),
                        Align::Right,
                        None,
                    );
                    o.cell(&format!("({})", cmp.text()), Align::Left, None);
                    notes.mark(&mut o, &cmp.warnings);
                }
            }
        }
    }
    if t.rows.len() > 1 {
        geomean_row(&mut o, &mut notes, &summaries, binary);
    }
    let mut out = o.format();
    for (i, n) in notes.0.iter().enumerate() {
        out.push_str(&format!("{} {n}\n", superscript(i + 1)));
    }
    Ok(out)
}

/// The label row and the unit / `vs base` row, framed by `│`.
fn header_rows(o: &mut TextTable, t: &Table) {
    let r_edge = start_col(t.cols.len() + 1);
    o.row();
    for (exp, label) in t.cols.iter().enumerate() {
        let l = start_col(exp);
        let r = start_col(exp + 1);
        o.col(l).span(r - l, label, Align::Center, Some(" │ "));
    }
    o.col(r_edge).cell("", Align::Left, Some(" │"));
    o.row();
    for exp in 0..t.cols.len() {
        let l = start_col(exp);
        o.col(l);
        o.span(CENTER_COLS, &t.unit, Align::Center, Some(" │ "));
        if exp > 0 {
            o.span(DELTA_COLS, "vs base", Align::Left, Some("  "));
        }
        for j in l + 1..o.cur_col() {
            o.set_shrink(j);
        }
    }
    o.col(r_edge).cell("", Align::Left, Some(" │"));
}

/// The geomean row: each label's geometric mean, each later label's mean ratio.
fn geomean_row(o: &mut TextTable, notes: &mut Footnotes, summaries: &[Summary], binary: bool) {
    o.row();
    o.cell("geomean", Align::Left, None);
    for (exp, s) in summaries.iter().enumerate() {
        if let Some(v) = s.summary {
            o.col(start_col(exp));
            o.cell(&scale(v, binary), Align::Right, None);
        }
        if exp > 0 {
            o.col(start_col(exp) + CENTER_COLS);
            match s.ratio {
                Some(ratio) => {
                    o.cell(
                        &format!("{:+.2}%", (ratio - 1.0) * 100.0),
                        Align::Right,
                        None,
                    );
                }
                None => {
                    o.cell("?", Align::Left, None);
                }
            }
        }
        o.col(start_col(exp + 1) - 1);
        notes.mark(o, &s.warnings);
    }
}

/// A table's warnings, each numbered once in first-seen order.
#[derive(Default)]
struct Footnotes(Vec<String>);

impl Footnotes {
    /// Writes the cell of superscript numbers for `msgs`, numbering new messages.
    fn mark(&mut self, o: &mut TextTable, msgs: &[String]) {
        let mut marks = Vec::new();
        for m in msgs {
            let i = match self.0.iter().position(|n| n == m) {
                Some(i) => i,
                None => {
                    self.0.push(m.clone());
                    self.0.len() - 1
                }
            };
            marks.push(superscript(i + 1));
        }
        o.cell(&marks.join(" "), Align::Left, None);
    }
}

/// `i` in superscript digits.
fn superscript(mut i: usize) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    if i == 0 {
        return DIGITS[0].to_string();
    }
    let mut out = Vec::new();
    while i > 0 {
        out.push(DIGITS[i % 10]);
        i /= 10;
    }
    out.iter().rev().collect()
}
