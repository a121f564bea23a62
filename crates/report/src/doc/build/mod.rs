//! From a [`ReportInput`] to a [`Document`]: summary, one section per workload,
//! provenance.
//!
//! The verdicts are those of `resplab compare` ([`crate::resplab::compare`] on the same
//! observations), so a report and a terminal comparison never disagree. The summary's
//! geometric mean of ratios and its interval come from
//! [`resplab_stats::bootstrap::geomean_ratio`] (the signed-rank interval of the per-round
//! geometric means, or a bootstrap seeded with the experiment's seed), so it too is the
//! same on every run.
//!
//! Per workload the plots are: the metric per trial in run order, its distribution per
//! variant, the latency spectrum from every counted trial's histogram merged per
//! variant, and ops/s and p99 per second of one representative trial per variant (the
//! trial whose value is closest to its variant's median). Plots that need run records
//! (spectrum, per-second) are left out, with a sentence saying why, when the inputs are
//! foreign formats that carry only numbers.

use super::input::{ReportInput, TrialInput, WorkloadInput};
use super::{Block, Cell, Document};
use crate::plot::{self, significant, PlotError, Series};
use crate::resplab::{self, fmt_interval, Row};
use crate::verdict::{self, Verdict};
use resplab_results::sample::{Direction, Metric, SampleSet};
use resplab_results::RunRecord;
use resplab_stats::bootstrap::{geomean_ratio, GeomeanMethod};
use resplab_stats::hist::LatencyHistogram;
use std::collections::BTreeSet;
use std::sync::Arc;

mod duet;
mod plots;
mod profiles;
mod provenance;
mod summary;
mod workload;
use duet::*;
use plots::*;
use provenance::*;
use summary::*;
use workload::*;

/// Bootstrap resamples of the summary's geometric mean.
pub const GEOMEAN_RESAMPLES: usize = 2000;

/// A report that could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A plot failed to draw.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// The input has nothing to report.
    #[error("nothing to report: {0}")]
    Empty(String),
}

/// Builds the document.
///
/// # Errors
/// [`BuildError::Empty`] when there is no variant or no observation of the report's
/// metric; [`BuildError::Plot`] when a plot fails to draw.
pub fn build(input: &ReportInput) -> Result<Document, BuildError> {
    let set = SampleSet::from_observations(&input.observations);
    let metric = set
        .metrics
        .iter()
        .find(|m| m.name == input.metric)
        .cloned()
        .ok_or_else(|| {
            let names: Vec<&str> = set.metrics.iter().map(|m| m.name.as_str()).collect();
            BuildError::Empty(format!(
                "expected observations of metric `{}`, found only {}",
                input.metric,
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ))
        })?;
    let mut variants = input.variants.clone();
    for l in &set.labels {
        if !variants.iter().any(|v| **v == **l) {
            variants.push(l.to_string());
        }
    }
    let Some(baseline) = variants.first().cloned() else {
        return Err(BuildError::Empty(
            "expected at least one variant, found none".into(),
        ));
    };
    let cmp = resplab::compare(&set, &baseline, &input.options);
    let ctx = Ctx {
        input,
        variants: &variants,
        metric: &metric,
        rows: &cmp.rows,
    };
    let mut blocks = Vec::new();
    summary(&ctx, &set, &mut blocks)?;
    for (i, w) in input.workloads.iter().enumerate() {
        workload(&ctx, i, w, &mut blocks)?;
    }
    profiles::profiles(&ctx, &mut blocks);
    provenance(&ctx, &mut blocks);
    Ok(Document {
        title: input.title.clone(),
        variants,
        blocks,
    })
}

struct Ctx<'a> {
    input: &'a ReportInput,
    variants: &'a [String],
    metric: &'a Metric,
    rows: &'a [Row],
}

impl Ctx<'_> {
    fn index(&self, variant: &str) -> usize {
        self.variants
            .iter()
            .position(|v| v == variant)
            .unwrap_or(self.variants.len())
    }

    /// Position of a workload in the input (unknown ones last).
    fn workload_pos(&self, name: &str) -> usize {
        self.input
            .workloads
            .iter()
            .position(|w| w.name == name)
            .unwrap_or(usize::MAX)
    }

    fn variant_cell(&self, variant: &str) -> Cell {
        Cell::variant(variant, self.index(variant))
    }
}

/// Lower-case letters and digits, everything else one `-`.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let t = out.trim_matches('-');
    if t.is_empty() {
        "x".into()
    } else {
        t.to_string()
    }
}

fn unit_text(unit: &str) -> &str {
    match unit {
        "us" => "µs",
        "us/op" => "µs/op",
        u => u,
    }
}

/// `ops_per_sec (ops/s, higher is better)`.
pub fn metric_desc(m: &Metric) -> String {
    let dir = match m.direction {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
        Direction::Unknown => "no stated direction",
    };
    let unit = unit_text(&m.unit);
    if unit.is_empty() || unit == m.name {
        format!("{} ({dir})", m.name)
    } else {
        format!("{} ({unit}, {dir})", m.name)
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:+.2}%"))
}

fn ci(r: &Row) -> String {
    fmt_interval(r.ci_low_pct, r.ci_high_pct)
}

fn n_text(r: &Row) -> String {
    if r.paired {
        format!("{} pairs", r.n_baseline)
    } else {
        format!("{}+{}", r.n_baseline, r.n_variant)
    }
}

fn num(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e5 {
        format!("{v:.0}")
    } else {
        significant(v, 5)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slug("suite:GET"), "suite-get");
        assert_eq!(slug("::"), "x");
        assert_eq!(slug("LRANGE_100 (first 100)"), "lrange-100-first-100");
    }
}
