//! What the `--fail-on-regression` gate can judge in a comparison, and why the rest
//! cannot be judged: a gate that compared nothing must not pass.

use super::Report;
use crate::verdict::Verdict;
use resplab_results::sample::{Direction, SampleSet};

/// What a regression gate could and could not judge in a comparison.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GateCoverage {
    /// Rows with a verdict on a metric with a direction: what the gate judged.
    pub judged: usize,
    /// Why each other row, input or label was not judged, one line each.
    pub not_judged: Vec<String>,
}

impl GateCoverage {
    /// Whether the gate had nothing at all to judge.
    pub fn is_empty(&self) -> bool {
        self.judged == 0
    }
}

/// Which rows of `report` a regression gate can judge (a verdict, a metric with a
/// direction), and why the rest cannot be: `labels` are every label the inputs named,
/// so a label without values (an empty file) and a lone label (one input, or the same
/// file twice) are named too.
pub fn gate_coverage(report: &Report, set: &SampleSet, labels: &[String]) -> GateCoverage {
    let mut cov = GateCoverage::default();
    for l in labels {
        if !set.labels.iter().any(|x| &**x == l.as_str()) {
            cov.not_judged
                .push(format!("`{l}` holds no values that could be read"));
        }
    }
    let others: Vec<&str> = set
        .labels
        .iter()
        .map(|l| &**l)
        .filter(|l| *l != report.baseline)
        .collect();
    let baseline_has_values = set.labels.iter().any(|l| &**l == report.baseline.as_str());
    if others.is_empty() && baseline_has_values {
        cov.not_judged.push(format!(
            "only the baseline `{}` has values: nothing to compare it with (give a second, different input)",
            report.baseline
        ));
    }
    for l in &others {
        if !report.rows.iter().any(|r| r.variant == *l) {
            cov.not_judged.push(format!(
                "`{l}` shares no workload and metric with the baseline `{}`",
                report.baseline
            ));
        }
    }
    for r in &report.rows {
        let place = format!("{} {}, {}", r.workload, r.metric, r.variant)
            .trim_start()
            .to_string();
        if r.direction == Direction::Unknown.as_str() {
            cov.not_judged.push(format!(
                "{place}: plain numbers have no direction (give --higher-is-better or --lower-is-better)"
            ));
        } else if r.verdict == Verdict::NoVerdict {
            cov.not_judged.push(format!(
                "{place}: no test was possible ({} and {} values)",
                r.n_baseline, r.n_variant
            ));
        } else {
            cov.judged += 1;
        }
    }
    cov
}
