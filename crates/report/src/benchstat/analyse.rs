//! The statistics of one table: each cell's median and interval, each comparison's U
//! test and change, and the geomean row, with the warnings benchstat attaches to them.

use super::gomath::go_geomean;
use super::table::Table;
use super::units::go_level;
use super::{BenchstatError, BenchstatOptions};
use resplab_stats::quantile_ci::{median_summary, MedianSummary};
use resplab_stats::utest::{mann_whitney, samples_needed};
use std::collections::HashMap;

pub(super) struct CellStats {
    pub(super) summary: MedianSummary,
    pub(super) warnings: Vec<String>,
    pub(super) cmp: Option<Cmp>,
}

pub(super) struct Cmp {
    p: f64,
    n1: usize,
    n2: usize,
    pub(super) warnings: Vec<String>,
    base_center: f64,
}

impl Cmp {
    pub(super) fn text(&self) -> String {
        let mut s = String::new();
        if self.p != 0.0 {
            s.push_str(&format!("p={:.3} ", self.p));
        }
        if self.n1 == self.n2 {
            s.push_str(&format!("n={}", self.n1));
        } else {
            s.push_str(&format!("n={}+{}", self.n1, self.n2));
        }
        s
    }

    pub(super) fn delta(&self, alpha: f64, new: f64) -> String {
        let old = self.base_center;
        if self.p > alpha {
            "~".into()
        } else if old == new {
            "0.00%".into()
        } else if old == 0.0 {
            "?".into()
        } else {
            format!("{:+.2}%", (new / old - 1.0) * 100.0)
        }
    }
}

pub(super) fn pct_range(s: &MedianSummary) -> String {
    match s.pct_range() {
        None => "∞".into(),
        Some(Err(())) => "?".into(),
        Some(Ok(v)) => format!("{v:.0}%"),
    }
}

/// One column's entry of the geomean row.
pub(super) struct Summary {
    pub(super) summary: Option<f64>,
    pub(super) ratio: Option<f64>,
    pub(super) warnings: Vec<String>,
}

/// Per-cell statistics keyed by (row, column).
pub(super) type CellMap = HashMap<(usize, usize), CellStats>;

/// The statistics of table `t`: per cell, then per column of the geomean row.
///
/// # Errors
/// [`BenchstatError`] when a value is NaN or infinite.
pub(super) fn analyse(
    t: &Table,
    opts: &BenchstatOptions,
) -> Result<(CellMap, Vec<Summary>), BenchstatError> {
    let mut stats = cell_summaries(t, opts)?;
    compare_to_baseline(t, opts, &mut stats)?;
    let summaries = (0..t.cols.len())
        .map(|c| geomean_summary(t, &stats, c))
        .collect();
    Ok((stats, summaries))
}

/// The error of cell (`r`, `c`) of `t`.
fn bad_value(t: &Table, r: usize, c: usize, message: String) -> BenchstatError {
    BenchstatError::BadValue {
        row: t.rows[r].clone(),
        label: t.cols[c].clone(),
        unit: t.unit.clone(),
        message,
    }
}

/// Each cell's median and confidence interval, with a warning when the sample is too
/// small for the interval.
fn cell_summaries(t: &Table, opts: &BenchstatOptions) -> Result<CellMap, BenchstatError> {
    let mut stats: CellMap = HashMap::new();
    for (&(r, c), values) in &t.cells {
        let summary = median_summary(values, opts.confidence)
            .map_err(|e| bad_value(t, r, c, e.to_string()))?;
        let mut warnings = Vec::new();
        if let Some((n, more)) = summary.need_samples {
            warnings.push(format!(
                "need {} {n} samples for confidence interval at level {}",
                if more { ">" } else { ">=" },
                go_level(opts.confidence)
            ));
        }
        stats.insert(
            (r, c),
            CellStats {
                summary,
                warnings,
                cmp: None,
            },
        );
    }
    Ok(stats)
}

/// The U test of each later column's cell against the baseline cell of its row.
fn compare_to_baseline(
    t: &Table,
    opts: &BenchstatOptions,
    stats: &mut CellMap,
) -> Result<(), BenchstatError> {
    for (&(r, c), values) in &t.cells {
        if c == 0 {
            continue;
        }
        let Some(base) = t.cells.get(&(r, 0)) else {
            continue;
        };
        let base_center = stats.get(&(r, 0)).map_or(0.0, |s| s.summary.median);
        let u = mann_whitney(base, values).map_err(|e| bad_value(t, r, c, e.to_string()))?;
        let mut cmp = Cmp {
            p: u.p_value,
            n1: base.len(),
            n2: values.len(),
            warnings: Vec::new(),
            base_center,
        };
        if u.all_equal {
            cmp.p = 1.0;
            cmp.warnings.push("all samples are equal".into());
        } else if cmp.p > opts.alpha {
            let (n, more) = samples_needed(opts.alpha);
            let n_eff = if more { n + 1 } else { n };
            if cmp.n1 < n_eff && cmp.n2 < n_eff {
                cmp.warnings.push(format!(
                    "need {} {n} samples to detect a difference at alpha level {}",
                    if more { ">" } else { ">=" },
                    go_level(opts.alpha)
                ));
            }
        }
        if let Some(s) = stats.get_mut(&(r, c)) {
            s.cmp = Some(cmp);
        }
    }
    Ok(())
}

/// Column `c`'s entry of the geomean row: the geometric mean of its medians and, for a
/// later column, of its ratios to the baseline.
fn geomean_summary(t: &Table, stats: &CellMap, c: usize) -> Summary {
    let n_base = (0..t.rows.len())
        .filter(|r| t.cells.contains_key(&(*r, 0)))
        .count();
    let mut centers = Vec::new();
    let mut ratios = Vec::new();
    let mut bad_ratio = false;
    for r in 0..t.rows.len() {
        let Some(s) = stats.get(&(r, c)) else {
            continue;
        };
        centers.push(s.summary.median);
        if let Some(cmp) = &s.cmp {
            let (a, b) = (s.summary.median, cmp.base_center);
            if a == b {
                ratios.push(1.0);
            } else if b == 0.0 {
                bad_ratio = true;
                ratios.push(0.0);
            } else {
                ratios.push(a / b);
            }
        }
    }
    let mut sum = Summary {
        summary: None,
        ratio: None,
        warnings: Vec::new(),
    };
    if c > 0 && n_base != ratios.len() {
        sum.warnings
            .push("benchmark set differs from baseline; geomeans may not be comparable".into());
    }
    match go_geomean(&centers) {
        Some(g) => sum.summary = Some(g),
        None => sum
            .warnings
            .push("summaries must be >0 to compute geomean".into()),
    }
    if c > 0 && !bad_ratio {
        match go_geomean(&ratios) {
            Some(g) => sum.ratio = Some(g),
            None => sum
                .warnings
                .push("ratios must be >0 to compute geomean".into()),
        }
    }
    sum
}
