//! `--style resplab` (the default): every variant against the baseline, per workload and
//! metric, with an effect size, its confidence interval, a p-value from the same test, the
//! minimal detectable effect and a three-way verdict (METHOD §6.2).
//!
//! This module only chooses the design and renders. Every number of a row (effect,
//! interval, p-value, MDE, verdict, warnings, outlier rounds with their leave-one-out
//! results) comes from [`resplab_stats::verdict`]: [`compare_paired`] when both samples
//! carry round numbers that match (trials paired by round), [`compare_unpaired`]
//! otherwise. Its typed warnings are shown with their own advice. The experiment runner
//! calls the same functions, so `resplab experiment` and `resplab compare` cannot
//! disagree.
//!
//! What is decided here:
//!
//! - **Pairing.** Values are paired when both sides carry rounds and at least two rounds
//!   match; rounds present on one side only are left out with a warning. Inputs without
//!   rounds are compared unpaired, with the "not interleaved" warning.
//! - **Direction.** Metrics without a direction (plain numbers) are compared as if higher
//!   were better and reported as HIGHER / LOWER instead of FASTER / SLOWER.
//! - **Plausibility.** A variant whose label says it is instrumented (`trace`, `probe`,
//!   `debug`, …) is not expected to beat its baseline ([`Expectation::NotBetter`]).
//! - **Many rows.** With more than one row, Benjamini–Hochberg q-values
//!   ([`resplab_stats::fdr::bh_qvalues`]) are shown next to the p-values: the rows with
//!   q ≤ 0.05 carry at most 5 % false discoveries on average.
//! - **Summary.** For the primary metric (the first one read, or the one named in the
//!   options), each variant gets the geometric mean of its ratios across workloads. When
//!   every workload was paired by round, the interval is the signed-rank interval of the
//!   per-round geometric means (shared rounds; none below 6) or a seeded bootstrap over
//!   whole rounds ([`resplab_stats::bootstrap::geomean_ratio`]); otherwise only the point
//!   value is shown.
//!
//! Cost: per row, that of the stats functions (expected O((m + n) log(m + n)) unpaired)
//! plus an O(n) median per side; the bootstrap costs O(B·Σ n_w² log n_w) and runs only
//! when every workload has at most [`BOOTSTRAP_MAX_ROUNDS`] rounds.
//!
//! [`compare_paired`]: resplab_stats::verdict::compare_paired
//! [`compare_unpaired`]: resplab_stats::verdict::compare_unpaired

use resplab_results::sample::{Direction, Metric, Sample, SampleSet};
use resplab_stats::bootstrap::{geomean_ratio, GeomeanMethod, BOOTSTRAP_APPROXIMATE_BELOW};
use resplab_stats::describe::{plain_median, plain_median_sorted};
use resplab_stats::fdr::bh_qvalues;
use resplab_stats::verdict::{
    compare_paired, compare_unpaired, CompareConfig, Comparison, Design, Expectation,
    Verdict as StatsVerdict, Warning,
};
use resplab_stats::StatsError;

use crate::verdict::{fmt_p_value, interval_verdict, Verdict};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;

mod export;
mod row;
mod summary;
mod table;
pub use export::*;
mod gate;
pub use gate::{gate_coverage, GateCoverage};
use row::*;
use summary::*;
pub use table::*;

/// Most rounds per workload for which the geomean summary is bootstrapped.
pub const BOOTSTRAP_MAX_ROUNDS: usize = 200;
/// Bootstrap resamples of the geomean summary.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// Options of the default comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct ResplabOptions {
    /// Confidence level of the intervals (0.95).
    pub confidence: f64,
    /// Equivalence margin in percent, if any.
    pub margin_pct: Option<f64>,
    /// Labels whose trials ran in other phases than the baseline's (a phased experiment):
    /// their rows are paired by round number only, and say so.
    pub not_interleaved: Vec<String>,
}

impl Default for ResplabOptions {
    fn default() -> Self {
        ResplabOptions {
            confidence: 0.95,
            margin_pct: None,
            not_interleaved: Vec::new(),
        }
    }
}

/// Options of the geomean summary.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryOptions {
    /// Metric of the summary (default: the first metric read).
    pub primary_metric: Option<String>,
    /// Seed of the bootstrap (same seed, same interval).
    pub seed: u64,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions {
            primary_metric: None,
            seed: 0x0072_6573_706c_6162,
        }
    }
}

/// The result without one flagged round (paired rows).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LeftOut {
    /// The round left out, as numbered in the input.
    pub round: u32,
    /// Effect without it, percent.
    pub effect_pct: f64,
    /// Interval without it, percent.
    pub ci_low_pct: f64,
    /// Interval without it, percent.
    pub ci_high_pct: f64,
    /// Verdict without it.
    pub verdict: Verdict,
}

/// One variant against the baseline for one (workload, metric).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub workload: String,
    pub metric: String,
    pub unit: String,
    pub direction: &'static str,
    pub baseline: String,
    pub variant: String,
    pub n_baseline: usize,
    pub n_variant: usize,
    /// Paired by round (true) or unpaired.
    pub paired: bool,
    /// Test behind the p-value and interval (`signed_rank`, `mann_whitney`).
    pub test: Option<&'static str>,
    /// Median of the baseline and of the variant.
    pub baseline_median: f64,
    pub variant_median: f64,
    /// Effect in percent (variant vs baseline), with its interval.
    pub effect_pct: Option<f64>,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    pub p_value: Option<f64>,
    /// Benjamini–Hochberg q-value over all rows with a p-value (when there are several).
    pub q_value: Option<f64>,
    /// Minimal detectable effect at 80 % power, percent, on the side of the effect (a
    /// decrease for a slowdown, never below −100 %).
    pub mde_pct: Option<f64>,
    pub verdict: Verdict,
    pub warnings: Vec<Warning>,
    /// For each outlier round, the result without it.
    pub leave_one_out: Vec<LeftOut>,
}

/// The geometric mean of one variant's ratios across workloads, for the primary metric.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub metric: String,
    pub unit: String,
    pub direction: &'static str,
    pub variant: String,
    /// Workloads that entered the mean.
    pub workloads: usize,
    /// Geometric mean of the ratios, as a percent change.
    pub effect_pct: f64,
    /// Bootstrap interval, percent (when every workload was paired by round).
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    /// Bootstrap resamples behind the interval (bootstrap intervals only).
    pub resamples: Option<usize>,
    /// How the interval was found: `signed_rank_of_round_means` (rounds shared by every
    /// workload) or `bootstrap`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<&'static str>,
    /// Fewest rounds of any workload in the mean.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rounds: Option<usize>,
    /// Why there is no interval, if there is none.
    pub note: Option<String>,
    /// The verdict of the interval, as for a row (none without an interval).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
}

/// The full comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub confidence: f64,
    pub margin_pct: Option<f64>,
    pub baseline: String,
    pub rows: Vec<Row>,
    /// Geomean-of-ratios rows (primary metric, variants with two or more workloads).
    pub summaries: Vec<Summary>,
    /// `workload metric` pairs that are exactly zero in every trial of every variant
    /// (errors, reconnects, ... in a clean run): nothing to compare, so no rows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub all_zero: Vec<String>,
}

impl Report {
    /// What the comparisons of `metric` (every metric when `None`) could detect: the
    /// largest MDE of its rows (`None` if any row has none) and the fewest trials per arm.
    pub fn sensitivity(&self, metric: Option<&str>) -> (Option<f64>, usize) {
        let rows: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| metric.is_none_or(|m| r.metric == m))
            .collect();
        let mde = rows
            .iter()
            .map(|r| r.mde_pct)
            .collect::<Option<Vec<f64>>>()
            .and_then(|v| v.into_iter().reduce(f64::max));
        let n = rows
            .iter()
            .map(|r| r.n_baseline.min(r.n_variant))
            .min()
            .unwrap_or(0);
        (mde, n)
    }
}

/// Per-round log-ratios kept for the summary bootstrap.
struct Paired {
    row: usize,
    log_ratios: Vec<f64>,
}

/// Compares every label against `baseline` for every (workload, metric) in `set`, with
/// the default summary options.
pub fn compare(set: &SampleSet, baseline: &str, opts: &ResplabOptions) -> Report {
    compare_with(set, baseline, opts, &SummaryOptions::default())
}

/// Compares every label against `baseline` for every (workload, metric) in `set`.
pub fn compare_with(
    set: &SampleSet,
    baseline: &str,
    opts: &ResplabOptions,
    summary: &SummaryOptions,
) -> Report {
    let mut rows = Vec::new();
    let mut paired = Vec::new();
    let mut all_zero = Vec::new();
    let zero = |v: &[f64]| !v.is_empty() && v.iter().all(|&x| x == 0.0);
    for workload in &set.workloads {
        for metric in &set.metrics {
            let Some(base) = set.get(workload, metric, baseline) else {
                continue;
            };
            let variants: Vec<_> = set
                .labels
                .iter()
                .filter(|l| &***l != baseline)
                .filter_map(|l| set.get(workload, metric, l))
                .collect();
            if zero(&base.values)
                && !variants.is_empty()
                && variants.iter().all(|v| zero(&v.values))
            {
                all_zero.push(if workload.is_empty() {
                    metric.name.clone()
                } else {
                    format!("{workload} {}", metric.name)
                });
                continue;
            }
            for label in set.labels.iter().filter(|l| &***l != baseline) {
                let Some(var) = set.get(workload, metric, label) else {
                    continue;
                };
                let (row, d) = compare_one(workload, metric, baseline, label, base, var, opts);
                if let Some(log_ratios) = d {
                    paired.push(Paired {
                        row: rows.len(),
                        log_ratios,
                    });
                }
                rows.push(row);
            }
        }
    }
    add_qvalues(&mut rows);
    let summaries = summarize(set, baseline, &rows, &paired, opts, summary);
    Report {
        confidence: opts.confidence,
        margin_pct: opts.margin_pct,
        baseline: baseline.to_string(),
        rows,
        summaries,
        all_zero,
    }
}

fn add_qvalues(rows: &mut [Row]) {
    let idx: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].p_value.is_some())
        .collect();
    if idx.len() < 2 {
        return;
    }
    let p: Vec<f64> = idx.iter().filter_map(|&i| rows[i].p_value).collect();
    if let Ok(q) = bh_qvalues(&p) {
        for (&i, q) in idx.iter().zip(q) {
            rows[i].q_value = Some(q);
        }
    }
}

/// True when some row is significantly worse than the baseline by more than `pct`
/// percent (the `--fail-on-regression` gate).
pub fn has_regression(report: &Report, pct_limit: f64) -> bool {
    report
        .rows
        .iter()
        .any(|r| r.verdict == Verdict::Slower && r.effect_pct.is_some_and(|e| e.abs() > pct_limit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use resplab_results::sample::{Observation, Origin};

    fn obs(label: &str, v: f64, round: Option<u32>, m: &Arc<Metric>) -> Observation {
        Observation {
            label: Arc::from(label),
            workload: Arc::from("GET"),
            metric: m.clone(),
            value: v,
            round,
            trial: 0,
            origin: Origin {
                file: Arc::from("f"),
                line: None,
            },
            config: None,
            flag: None,
        }
    }

    #[test]
    fn paired_clear_slowdown_is_slower() {
        let m = Arc::new(Metric::new(
            "ops_per_sec",
            "ops/s",
            Direction::HigherIsBetter,
        ));
        let mut list = Vec::new();
        for r in 0..10u32 {
            let drift = 1.0 + 0.01 * f64::from(r % 3);
            list.push(obs("a", 100_000.0 * drift, Some(r), &m));
            list.push(obs(
                "b",
                95_000.0 * drift * (1.0 + 0.001 * f64::from(r % 2)),
                Some(r),
                &m,
            ));
        }
        let set = SampleSet::from_observations(&list);
        let rep = compare(&set, "a", &ResplabOptions::default());
        let r = &rep.rows[0];
        assert!(r.paired);
        assert_eq!(r.verdict, Verdict::Slower);
        assert!(r.ci_high_pct.unwrap() < 0.0);
        assert!(has_regression(&rep, 3.0));
        assert!(!has_regression(&rep, 10.0));
    }

    #[test]
    fn equal_samples_are_equivalent_within_margin() {
        let m = Arc::new(Metric::new("p99", "ms", Direction::LowerIsBetter));
        let mut list = Vec::new();
        for i in 0..10 {
            let v = 1.0 + 0.001 * f64::from(i);
            list.push(obs("a", v, None, &m));
            list.push(obs("b", v, None, &m));
        }
        let set = SampleSet::from_observations(&list);
        let opts = ResplabOptions {
            margin_pct: Some(2.0),
            ..Default::default()
        };
        let rep = compare(&set, "a", &opts);
        assert_eq!(rep.rows[0].verdict, Verdict::Equivalent);
        assert!(rep.rows[0]
            .warnings
            .iter()
            .any(|w| w.kind() == "not_interleaved"));
        assert!(render_text(&rep).contains("EQUIVALENT"));
        assert!(render_csv(&rep).lines().count() == 2);
        assert!(render_json(&rep).contains("\"verdict\": \"equivalent\""));
    }

    /// A slowdown of about −80 % with rounds that scatter by a factor of two: its MDE
    /// is far above +100 % as an increase, and shown as the decrease it is.
    #[test]
    fn a_large_slowdowns_mde_is_a_decrease_above_minus_100() {
        let m = Arc::new(Metric::new(
            "ops_per_sec",
            "ops/s",
            Direction::HigherIsBetter,
        ));
        let mut list = Vec::new();
        for r in 0..8u32 {
            let scatter = [1.0, 2.0, 0.5, 1.6, 0.7, 1.3, 0.6, 1.9][r as usize];
            list.push(obs("a", 100_000.0, Some(r), &m));
            list.push(obs("b", 20_000.0 * scatter, Some(r), &m));
        }
        let set = SampleSet::from_observations(&list);
        let rep = compare(&set, "a", &ResplabOptions::default());
        let r = &rep.rows[0];
        assert!(r.effect_pct.unwrap() < -50.0, "{r:?}");
        let mde = r.mde_pct.unwrap();
        assert!((-100.0..0.0).contains(&mde), "{mde}");
        assert!(render_text(&rep).contains(&format!("{mde:.2}%")));
    }

    /// One trial a side: nothing to test, so no p-value (and no q-value).
    #[test]
    fn one_value_a_side_has_no_p_value() {
        let m = Arc::new(Metric::new(
            "ops_per_sec",
            "ops/s",
            Direction::HigherIsBetter,
        ));
        let list = [obs("a", 100.0, None, &m), obs("b", 120.0, None, &m)];
        let set = SampleSet::from_observations(&list);
        let rep = compare(&set, "a", &ResplabOptions::default());
        assert_eq!(rep.rows[0].p_value, None);
        assert_eq!(rep.rows[0].q_value, None);
        let text = render_text(&rep);
        assert!(!text.contains("1.000"), "{text}");
        assert!(render_json(&rep).contains("\"p_value\": null"));
    }

    fn paired_set(workloads: &[(&str, f64)], labels: [&str; 2], wild: Option<u32>) -> SampleSet {
        let m = Arc::new(Metric::new(
            "ops_per_sec",
            "ops/s",
            Direction::HigherIsBetter,
        ));
        let mut list = Vec::new();
        for (w, ratio) in workloads {
            for r in 0..10u32 {
                let drift = 1.0 + 0.01 * f64::from(r % 3);
                let noise = 1.0 + 0.002 * f64::from(r % 4);
                let mut a = obs(labels[0], 100_000.0 * drift, Some(r), &m);
                let v = if wild == Some(r) { 1.5 } else { *ratio };
                let mut b = obs(labels[1], 100_000.0 * drift * v * noise, Some(r), &m);
                a.workload = Arc::from(*w);
                b.workload = Arc::from(*w);
                list.push(a);
                list.push(b);
            }
        }
        SampleSet::from_observations(&list)
    }

    #[test]
    fn numbers_come_from_stats_verdict() {
        let set = paired_set(&[("GET", 1.03)], ["a", "b"], None);
        let rep = compare(&set, "a", &ResplabOptions::default());
        let r = &rep.rows[0];
        let base = set.get("GET", &set.metrics[0], "a").unwrap();
        let var = set.get("GET", &set.metrics[0], "b").unwrap();
        let c = compare_paired(
            &base.values,
            &var.values,
            &CompareConfig::new(resplab_stats::verdict::Direction::HigherIsBetter),
        )
        .unwrap();
        assert_eq!(r.effect_pct, Some(c.effect_pct));
        assert_eq!(r.ci_low_pct, Some(c.ci_low_pct));
        assert_eq!(r.mde_pct, c.mde_pct);
        assert_eq!(r.p_value, Some(c.p_value));
        assert_eq!(r.verdict, Verdict::Faster);
        assert_eq!(r.test, Some("signed_rank"));
        // One row: no q column and no summary.
        assert_eq!(r.q_value, None);
        assert!(rep.summaries.is_empty());
        assert!(!render_text(&rep).lines().nth(1).unwrap().contains(" q "));
    }

    #[test]
    fn qvalues_and_geomean_summary_over_workloads() {
        let set = paired_set(
            &[("GET", 1.03), ("SET", 1.01), ("INCR", 0.99)],
            ["a", "b"],
            None,
        );
        let rep = compare(&set, "a", &ResplabOptions::default());
        assert_eq!(rep.rows.len(), 3);
        let p: Vec<f64> = rep.rows.iter().map(|r| r.p_value.unwrap()).collect();
        let q = bh_qvalues(&p).unwrap();
        for (r, q) in rep.rows.iter().zip(q) {
            assert_eq!(r.q_value, Some(q));
            assert!(r.q_value.unwrap() >= r.p_value.unwrap());
        }
        assert_eq!(rep.summaries.len(), 1);
        let s = &rep.summaries[0];
        assert_eq!(s.workloads, 3);
        // Rounds shared by every workload: the signed-rank interval of the round means.
        assert_eq!(s.method, Some("signed_rank_of_round_means"));
        assert_eq!(s.resamples, None);
        let lo = s.ci_low_pct.unwrap();
        let hi = s.ci_high_pct.unwrap();
        assert!(lo <= s.effect_pct && s.effect_pct <= hi, "{s:?}");
        // (1.03 · 1.01 · 0.99)^(1/3) ≈ +1.0 %, plus the 0.3 % mean noise of the variant.
        assert!((s.effect_pct - 1.3).abs() < 0.5, "{s:?}");
        let text = render_text(&rep);
        assert!(
            text.contains("geomean of ratios across workloads"),
            "{text}"
        );
        assert!(text.lines().nth(1).unwrap().contains("  q  "), "{text}");
        assert!(render_csv(&rep).contains("\ngeomean,ops_per_sec,"));
        assert!(render_json(&rep).contains("\"summaries\""));
    }

    #[test]
    fn outlier_round_gets_leave_one_out_and_instrumented_warning() {
        let set = paired_set(&[("GET", 1.05)], ["base", "traced"], Some(4));
        let rep = compare(&set, "base", &ResplabOptions::default());
        let r = &rep.rows[0];
        assert_eq!(r.verdict, Verdict::Faster);
        assert!(r
            .warnings
            .iter()
            .any(|w| w.kind() == "implausible_direction"));
        let o = r
            .warnings
            .iter()
            .find(|w| w.kind() == "outlier_rounds")
            .unwrap();
        assert!(o.message().contains("[4]"), "{o:?}");
        assert_eq!(r.leave_one_out.len(), 1);
        assert_eq!(r.leave_one_out[0].round, 4);
        assert_eq!(r.leave_one_out[0].verdict, Verdict::Faster);
        assert!(render_text(&rep).contains("without round 4"));
    }

    #[test]
    fn unpaired_non_positive_and_unknown_direction() {
        let m = Arc::new(Metric::new("value", "", Direction::Unknown));
        let mut list = Vec::new();
        for i in 0..8 {
            list.push(obs("a", 10.0 + f64::from(i) * 0.01, None, &m));
            list.push(obs("b", 20.0 + f64::from(i) * 0.01, None, &m));
        }
        let set = SampleSet::from_observations(&list);
        let rep = compare(&set, "a", &ResplabOptions::default());
        assert_eq!(rep.rows[0].verdict, Verdict::Higher);
        assert_eq!(rep.rows[0].test, Some("mann_whitney"));
        list.push(obs("b", -1.0, None, &m));
        let set = SampleSet::from_observations(&list);
        let rep = compare(&set, "a", &ResplabOptions::default());
        assert_eq!(rep.rows[0].verdict, Verdict::NoVerdict);
        assert!(rep.rows[0]
            .warnings
            .iter()
            .any(|w| w.kind() == "non_positive"));
    }

    #[test]
    fn geomean_counts_each_workload_once_by_its_aggregate() {
        let all = ["set", "suite", "suite:GET", "suite:SET"];
        assert!(!is_part_of_aggregate("set", &all));
        assert!(!is_part_of_aggregate("suite", &all));
        assert!(is_part_of_aggregate("suite:GET", &all));
        assert!(!is_part_of_aggregate("other:GET", &all));
        let files = ["SET", "GET", "ALL"];
        assert!(is_part_of_aggregate("GET", &files));
        assert!(!is_part_of_aggregate("ALL", &files));
        assert!(!is_part_of_aggregate("GET", &["SET", "GET"]));
    }

    #[test]
    fn metrics_zero_everywhere_are_named_not_compared() {
        let errors = Arc::new(Metric::new("errors", "", Direction::LowerIsBetter));
        let ops = Arc::new(Metric::new(
            "ops_per_sec",
            "ops/s",
            Direction::HigherIsBetter,
        ));
        let mut list = Vec::new();
        for i in 0..8 {
            list.push(obs("a", 0.0, None, &errors));
            list.push(obs("b", 0.0, None, &errors));
            list.push(obs("a", 100.0 + f64::from(i), None, &ops));
            list.push(obs("b", 90.0 + f64::from(i), None, &ops));
        }
        let set = SampleSet::from_observations(&list);
        let rep = compare(&set, "a", &ResplabOptions::default());
        assert!(rep.rows.iter().all(|r| r.metric != "errors"));
        assert_eq!(rep.rows.len(), 1);
        assert_eq!(rep.all_zero.len(), 1);
        assert!(rep.all_zero[0].ends_with("errors"));
        assert!(render_text(&rep).contains("so not compared: "));
        assert!(render_json(&rep).contains("\"all_zero\""));
        // One non-zero value anywhere brings the row back (with its warning).
        list.push(obs("b", 1.0, None, &errors));
        let set = SampleSet::from_observations(&list);
        let rep = compare(&set, "a", &ResplabOptions::default());
        assert!(rep.rows.iter().any(|r| r.metric == "errors"));
        assert!(rep.all_zero.is_empty());
        assert!(!render_json(&rep).contains("all_zero"));
    }
}
