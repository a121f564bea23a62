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
    /// Minimal detectable effect at 80 % power, percent.
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

const INSTRUMENTED_WORDS: [&str; 8] = [
    "instrument",
    "enabled",
    "hook",
    "trace",
    "probe",
    "debug",
    "ebpf",
    "profil",
];

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

fn all_zero_line(report: &Report) -> Option<String> {
    (!report.all_zero.is_empty()).then(|| {
        format!(
            "zero in every trial of every variant, so not compared: {}",
            report.all_zero.join(", ")
        )
    })
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

fn summarize(
    set: &SampleSet,
    baseline: &str,
    rows: &[Row],
    paired: &[Paired],
    opts: &ResplabOptions,
    summary: &SummaryOptions,
) -> Vec<Summary> {
    let primary = summary
        .primary_metric
        .as_deref()
        .and_then(|name| set.metrics.iter().find(|m| m.name == name))
        .or_else(|| set.metrics.first());
    let Some(primary) = primary else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for label in set.labels.iter().filter(|l| &***l != baseline) {
        let chosen: Vec<usize> = (0..rows.len())
            .filter(|&i| {
                let r = &rows[i];
                r.variant == **label
                    && r.metric == primary.name
                    && r.unit == primary.unit
                    && r.effect_pct.is_some()
            })
            .collect();
        let names: Vec<&str> = chosen.iter().map(|&i| rows[i].workload.as_str()).collect();
        let chosen: Vec<usize> = chosen
            .into_iter()
            .filter(|&i| !is_part_of_aggregate(&rows[i].workload, &names))
            .collect();
        if chosen.len() < 2 {
            continue;
        }
        let logs: Vec<f64> = chosen
            .iter()
            .filter_map(|&i| rows[i].effect_pct)
            .map(|e| (1.0 + e / 100.0).ln())
            .collect();
        let point = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
        let ds: Option<Vec<Vec<f64>>> = chosen
            .iter()
            .map(|&i| {
                paired
                    .iter()
                    .find(|p| p.row == i)
                    .map(|p| p.log_ratios.clone())
            })
            .collect();
        let mut s = Summary {
            metric: primary.name.clone(),
            unit: primary.unit.clone(),
            direction: primary.direction.as_str(),
            variant: label.to_string(),
            workloads: chosen.len(),
            effect_pct: (point - 1.0) * 100.0,
            ci_low_pct: None,
            ci_high_pct: None,
            resamples: None,
            method: None,
            rounds: None,
            note: None,
            verdict: None,
        };
        match ds {
            None => {
                s.note = Some(
                    "some workloads were compared unpaired; the bootstrap resamples whole rounds, \
                     so there is no interval"
                        .into(),
                )
            }
            Some(ds) if ds.iter().any(|d| d.len() > BOOTSTRAP_MAX_ROUNDS) => {
                s.note = Some(format!(
                    "more than {BOOTSTRAP_MAX_ROUNDS} rounds in a workload; the bootstrap was \
                     skipped"
                ))
            }
            Some(ds) => {
                match geomean_ratio(&ds, opts.confidence, BOOTSTRAP_RESAMPLES, summary.seed) {
                    Ok(b) => {
                        s.effect_pct = (b.ratio - 1.0) * 100.0;
                        s.rounds = Some(b.rounds);
                        s.method = Some(match b.method {
                            GeomeanMethod::SignedRankOfRoundMeans => "signed_rank_of_round_means",
                            GeomeanMethod::Bootstrap => "bootstrap",
                        });
                        if b.method == GeomeanMethod::Bootstrap {
                            s.resamples = Some(b.resamples);
                        }
                        if b.has_interval() {
                            s.ci_low_pct = Some((b.ci_low - 1.0) * 100.0);
                            s.ci_high_pct = Some((b.ci_high - 1.0) * 100.0);
                            s.verdict = Some(interval_verdict(
                                (b.ci_low - 1.0) * 100.0,
                                (b.ci_high - 1.0) * 100.0,
                                primary.direction,
                                opts.margin_pct,
                            ));
                            if b.approximate {
                                s.note = Some(format!(
                                    "approximate: a bootstrap over fewer than {BOOTSTRAP_APPROXIMATE_BELOW} rounds claims too much"
                                ));
                            }
                        } else {
                            s.note = Some(format!(
                                "{} rounds: an interval, and so a verdict, needs {}",
                                b.rounds,
                                resplab_stats::verdict::min_pairs(opts.confidence)
                            ));
                        }
                    }
                    Err(e) => s.note = Some(format!("no bootstrap interval: {e}")),
                }
            }
        }
        out.push(s);
    }
    out
}

/// Whether `workload` is one command of a workload whose aggregate is also among
/// `names`: `suite:GET` next to `suite` (a stored multi-command workload), or `GET` next
/// to `ALL` (the commands of resplab run files). The geomean counts every measured
/// workload once, by its aggregate.
fn is_part_of_aggregate(workload: &str, names: &[&str]) -> bool {
    match workload.split_once(':') {
        Some((whole, _)) if names.contains(&whole) => true,
        _ => workload != "ALL" && !workload.contains(':') && names.contains(&"ALL"),
    }
}

fn looks_instrumented(label: &str) -> bool {
    let lower = label.to_ascii_lowercase();
    INSTRUMENTED_WORDS.iter().any(|w| lower.contains(w))
}

#[allow(clippy::too_many_arguments)]
fn compare_one(
    workload: &Arc<str>,
    metric: &Metric,
    baseline: &str,
    label: &str,
    base: &Sample,
    var: &Sample,
    opts: &ResplabOptions,
) -> (Row, Option<Vec<f64>>) {
    let mut warnings = Vec::new();
    for (l, s) in [(baseline, base), (label, var)] {
        for (origin, value, why) in &s.flagged {
            warnings.push(Warning::FlaggedValue {
                label: l.to_string(),
                value: *value,
                origin: origin.to_string(),
                why: why.clone(),
            });
        }
    }
    let mut row = Row {
        workload: workload.to_string(),
        metric: metric.name.clone(),
        unit: metric.unit.clone(),
        direction: metric.direction.as_str(),
        baseline: baseline.to_string(),
        variant: label.to_string(),
        n_baseline: base.len(),
        n_variant: var.len(),
        paired: false,
        test: None,
        baseline_median: f64::NAN,
        variant_median: f64::NAN,
        effect_pct: None,
        ci_low_pct: None,
        ci_high_pct: None,
        p_value: None,
        q_value: None,
        mde_pct: None,
        verdict: Verdict::NoVerdict,
        warnings: Vec::new(),
        leave_one_out: Vec::new(),
    };
    if base.is_empty() || var.is_empty() {
        row.baseline_median = plain_median(&base.values);
        row.variant_median = plain_median(&var.values);
        warnings.push(Warning::NoValues);
        row.warnings = warnings;
        return (row, None);
    }
    let mut cfg = CompareConfig::new(match metric.direction {
        Direction::LowerIsBetter => resplab_stats::verdict::Direction::LowerIsBetter,
        _ => resplab_stats::verdict::Direction::HigherIsBetter,
    });
    cfg.confidence = opts.confidence;
    cfg.margin_pct = opts.margin_pct;
    if metric.direction != Direction::Unknown && looks_instrumented(label) {
        cfg.expectation = Some(Expectation::NotBetter);
    }
    // Pair by round when both sides carry rounds.
    let mut pairs: Vec<(u32, f64, f64)> = Vec::new();
    if base.has_rounds() && var.has_rounds() {
        let mut at: HashMap<u32, usize> = HashMap::with_capacity(base.len());
        let mut repeated = false;
        for (j, r) in base.rounds.iter().enumerate() {
            if let Some(r) = r {
                repeated |= at.insert(*r, j).is_some();
            }
        }
        let mut seen: HashMap<u32, ()> = HashMap::with_capacity(var.len());
        for (i, r) in var.rounds.iter().enumerate() {
            let Some(r) = *r else { continue };
            repeated |= seen.insert(r, ()).is_some();
            if let Some(&j) = at.get(&r) {
                pairs.push((r, base.values[j], var.values[i]));
            }
        }
        if repeated {
            pairs.clear();
            warnings.push(Warning::RepeatedRounds);
        }
        pairs.sort_by_key(|p| p.0);
        let unmatched = (base.len() - pairs.len()) + (var.len() - pairs.len());
        if pairs.len() >= 2 && unmatched > 0 {
            warnings.push(Warning::UnmatchedRounds { trials: unmatched });
        }
    }
    row.paired = pairs.len() >= 2;
    if row.paired {
        row.baseline_median = plain_median(&base.values);
        row.variant_median = plain_median(&var.values);
    }
    let result = if row.paired {
        let b: Vec<f64> = pairs.iter().map(|p| p.1).collect();
        let v: Vec<f64> = pairs.iter().map(|p| p.2).collect();
        compare_paired(&b, &v, &cfg)
    } else {
        warnings.push(Warning::NotInterleaved);
        // The medians from a sorted copy of one sample at a time, dropped before the
        // comparison makes its own (log) copies: long samples are held at most twice.
        for (sample, median) in [
            (&base.values, &mut row.baseline_median),
            (&var.values, &mut row.variant_median),
        ] {
            let mut sorted = sample.clone();
            sorted.sort_unstable_by(f64::total_cmp);
            *median = plain_median_sorted(&sorted);
        }
        compare_unpaired(&base.values, &var.values, &cfg)
    };
    let c: Comparison = match result {
        Ok(c) => c,
        Err(e) => {
            let a = match e {
                StatsError::NonPositive { .. } | StatsError::NonFinite { .. } => {
                    Warning::NonPositive {
                        error: e.to_string(),
                    }
                }
                StatsError::AllEqual => Warning::AllEqual,
                other => Warning::NotComparable {
                    error: other.to_string(),
                },
            };
            warnings.push(a);
            row.warnings = warnings;
            return (row, None);
        }
    };
    row.paired = c.design == Design::Paired;
    row.test = Some(match c.test {
        resplab_stats::verdict::TestKind::SignedRank => "signed_rank",
        resplab_stats::verdict::TestKind::MannWhitney => "mann_whitney",
    });
    row.n_baseline = c.n_baseline;
    row.n_variant = c.n_variant;
    row.effect_pct = Some(c.effect_pct);
    row.p_value = Some(c.p_value.clamp(0.0, 1.0));
    row.mde_pct = c.mde_pct;
    row.verdict = Verdict::from_stats(c.verdict, metric.direction);
    if c.verdict != StatsVerdict::TooFewTrials
        && c.ci_low_pct.is_finite()
        && c.ci_high_pct.is_finite()
    {
        row.ci_low_pct = Some(c.ci_low_pct);
        row.ci_high_pct = Some(c.ci_high_pct);
    }
    // Round indices of the stats result are positions among the pairs; name them by the
    // rounds of the input.
    let round_of = |k: usize| pairs.get(k).map_or(k as u32, |p| p.0);
    for w in &c.warnings {
        let w = match w {
            Warning::OutlierRounds { rounds } => Warning::OutlierRounds {
                rounds: rounds.iter().map(|&k| round_of(k) as usize).collect(),
            },
            other => other.clone(),
        };
        warnings.push(w);
    }
    row.leave_one_out = c
        .leave_one_out
        .iter()
        .map(|l| LeftOut {
            round: round_of(l.round),
            effect_pct: l.effect_pct,
            ci_low_pct: l.ci_low_pct,
            ci_high_pct: l.ci_high_pct,
            verdict: Verdict::from_stats(l.verdict, metric.direction),
        })
        .collect();
    if row.paired && opts.not_interleaved.iter().any(|l| l == label) {
        warnings.push(Warning::PhasesNotInterleaved {
            variant: label.to_string(),
            baseline: baseline.to_string(),
        });
    }
    row.warnings = warnings;
    let d = row
        .paired
        .then(|| pairs.iter().map(|p| p.2.ln() - p.1.ln()).collect());
    (row, d)
}

/// True when some row is significantly worse than the baseline by more than `pct`
/// percent (the `--fail-on-regression` gate).
pub fn has_regression(report: &Report, pct_limit: f64) -> bool {
    report
        .rows
        .iter()
        .any(|r| r.verdict == Verdict::Slower && r.effect_pct.is_some_and(|e| e.abs() > pct_limit))
}

fn fmt_pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:+.2}%"))
}

/// The `[leave_one_out]` warning line of one outlier round of a row at `place`.
pub(crate) fn leave_one_out_line(place: &str, variant: &str, l: &LeftOut) -> String {
    format!(
        "[leave_one_out] {place}, {variant}: without round {}: {:+.2}% {} ({})",
        l.round,
        l.effect_pct,
        if l.verdict == Verdict::NoVerdict {
            fmt_interval(None, None)
        } else {
            fmt_interval(Some(l.ci_low_pct), Some(l.ci_high_pct))
        },
        l.verdict.label()
    )
}

/// A confidence interval of an effect in percent; `(-inf, +inf)` when there is none.
pub(crate) fn fmt_interval(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(l), Some(h)) => format!("[{l:+.2}%, {h:+.2}%]"),
        _ => "(-inf, +inf)".into(),
    }
}

fn fmt_p(v: Option<f64>) -> String {
    v.map_or("-".into(), fmt_p_value)
}

fn fmt_mde(v: Option<f64>) -> String {
    v.map_or("-".into(), |m| format!("{m:.2}%"))
}

fn fmt_num(v: f64) -> String {
    if v == 0.0 || (v.abs() >= 0.01 && v.abs() < 1e7) {
        let s = format!("{v:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    } else {
        format!("{v:.4e}")
    }
}

fn arrow(direction: &str) -> &'static str {
    match direction {
        "higher_is_better" => " ↑",
        "lower_is_better" => " ↓",
        _ => "",
    }
}

fn metric_text(metric: &str, unit: &str, direction: &str) -> String {
    let arrow = arrow(direction);
    if unit.is_empty() || unit == metric {
        format!("{metric}{arrow}")
    } else {
        format!("{metric} ({unit}){arrow}")
    }
}

/// Whether the table has a q column (more than one row).
fn shows_q(report: &Report) -> bool {
    report.rows.len() > 1
}

fn headers(report: &Report) -> Vec<String> {
    let mut h: Vec<String> = [
        "workload", "metric", "variant", "n", "baseline", "variant", "effect", "CI", "p",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    h[4] = format!("{} (median)", report.baseline);
    h[5] = "variant (median)".into();
    h[7] = format!("{:.0}% CI", report.confidence * 100.0);
    if shows_q(report) {
        h.push("q".into());
    }
    h.push("MDE".into());
    h.push("verdict".into());
    h
}

fn cells(r: &Row, with_q: bool) -> Vec<String> {
    let mut c = vec![
        if r.workload.is_empty() {
            "-".into()
        } else {
            r.workload.clone()
        },
        metric_text(&r.metric, &r.unit, r.direction),
        r.variant.clone(),
        if r.paired {
            format!("{} pairs", r.n_baseline)
        } else {
            format!("{}+{}", r.n_baseline, r.n_variant)
        },
        fmt_num(r.baseline_median),
        fmt_num(r.variant_median),
        fmt_pct(r.effect_pct),
        fmt_interval(r.ci_low_pct, r.ci_high_pct),
        fmt_p(r.p_value),
    ];
    if with_q {
        c.push(fmt_p(r.q_value));
    }
    c.push(fmt_mde(r.mde_pct));
    // A row whose arms were not interleaved carries the mark in its verdict.
    if r.warnings.iter().any(|w| w.kind() == "not_interleaved") {
        c.push(format!("{} (not interleaved)", r.verdict.label()));
    } else {
        c.push(r.verdict.label().into());
    }
    c
}

/// Warning lines: one per (kind, variant, message), naming the rows it applies to (the
/// first three, then a count), so a warning that holds for every metric is read once.
fn notes(report: &Report) -> Vec<String> {
    let mut groups: Vec<(&str, &str, String, Vec<String>)> = Vec::new();
    let mut out: Vec<String> = Vec::new();
    for r in &report.rows {
        let place = if r.workload.is_empty() {
            r.metric.clone()
        } else {
            format!("{} {}", r.workload, r.metric)
        };
        for w in &r.warnings {
            let message = w.message();
            match groups
                .iter_mut()
                .find(|g| g.0 == w.kind() && g.1 == r.variant && g.2 == message)
            {
                Some(g) => {
                    if !g.3.contains(&place) {
                        g.3.push(place.clone());
                    }
                }
                None => groups.push((w.kind(), &r.variant, message, vec![place.clone()])),
            }
        }
    }
    for (kind, variant, message, places) in groups {
        let shown = if places.len() > 3 {
            format!("{} and {} more", places[..3].join(", "), places.len() - 3)
        } else {
            places.join(", ")
        };
        out.push(format!("[{kind}] {shown}, {variant}: {message}"));
    }
    for r in &report.rows {
        let place = if r.workload.is_empty() {
            r.metric.clone()
        } else {
            format!("{} {}", r.workload, r.metric)
        };
        for l in &r.leave_one_out {
            out.push(leave_one_out_line(&place, &r.variant, l));
        }
    }
    out
}

fn summary_lines(report: &Report) -> Vec<String> {
    report
        .summaries
        .iter()
        .map(|s| {
            let ci = match (s.ci_low_pct, s.ci_high_pct, s.method) {
                (Some(_), Some(_), Some("signed_rank_of_round_means")) => format!(
                    " {} ({:.0}% signed-rank interval of the {} rounds' geometric means)",
                    fmt_interval(s.ci_low_pct, s.ci_high_pct),
                    report.confidence * 100.0,
                    s.rounds.unwrap_or(0)
                ),
                (Some(_), Some(_), _) => format!(
                    " {} ({:.0}% bootstrap CI, {} resamples of whole rounds{})",
                    fmt_interval(s.ci_low_pct, s.ci_high_pct),
                    report.confidence * 100.0,
                    s.resamples.unwrap_or(0),
                    s.note.as_ref().map_or(String::new(), |n| format!("; {n}"))
                ),
                _ => s.note.as_ref().map_or(String::new(), |n| format!(" ({n})")),
            };
            format!(
                "{} {}: {:+.2}% over {} workloads{ci}{}",
                s.variant,
                metric_text(&s.metric, &s.unit, s.direction),
                s.effect_pct,
                s.workloads,
                s.verdict
                    .map_or(String::new(), |v| format!(": {}", v.label()))
            )
        })
        .collect()
}

/// Plain-text table, then the geomean summary and the warnings.
pub fn render_text(report: &Report) -> String {
    let with_q = shows_q(report);
    let head = headers(report);
    let ncol = head.len();
    let mut rows: Vec<Vec<String>> = Vec::with_capacity(report.rows.len() + 1);
    rows.push(head);
    rows.extend(report.rows.iter().map(|r| cells(r, with_q)));
    let widths: Vec<usize> = (0..ncol)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!(
        "baseline: {}{}\n",
        report.baseline,
        report
            .margin_pct
            .map_or(String::new(), |m| format!("; equivalence margin ±{m}%"))
    );
    for r in &rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = " ".repeat(widths[i].saturating_sub(c.chars().count()));
            // Numbers (n .. MDE) are right-aligned; names and the verdict left-aligned.
            if (3..ncol - 1).contains(&i) {
                line.push_str(&pad);
                line.push_str(c);
            } else {
                line.push_str(c);
                line.push_str(&pad);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if let Some(z) = all_zero_line(report) {
        out.push_str(&format!("{z}\n"));
    }
    let s = summary_lines(report);
    if !s.is_empty() {
        out.push_str("\ngeomean of ratios across workloads:\n");
        for l in s {
            out.push_str(&format!("  {l}\n"));
        }
    }
    let n = notes(report);
    if !n.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in n {
            out.push_str(&format!("  {w}\n"));
        }
    }
    out
}

/// GitHub-flavoured Markdown table, then the geomean summary and the warnings as lists.
pub fn render_markdown(report: &Report) -> String {
    let with_q = shows_q(report);
    let mut out = format!("Baseline: **{}**\n\n", report.baseline);
    let mut head = headers(report);
    head[4] = "baseline (median)".into();
    out.push_str(&format!("| {} |\n", head.join(" | ")));
    out.push_str(&format!("|{}\n", "---|".repeat(head.len())));
    for r in &report.rows {
        let c: Vec<String> = cells(r, with_q)
            .iter()
            .map(|s| s.replace('|', "\\|"))
            .collect();
        out.push_str(&format!("| {} |\n", c.join(" | ")));
    }
    if let Some(z) = all_zero_line(report) {
        out.push_str(&format!("\n{z}\n"));
    }
    let s = summary_lines(report);
    if !s.is_empty() {
        out.push_str("\n**Geomean of ratios across workloads**\n\n");
        for l in s {
            out.push_str(&format!("- {l}\n"));
        }
    }
    let n = notes(report);
    if !n.is_empty() {
        out.push_str("\n**Warnings**\n\n");
        for w in n {
            out.push_str(&format!("- {w}\n"));
        }
    }
    out
}

/// JSON document of the whole report.
pub fn render_json(report: &Report) -> String {
    serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
        + "\n"
}

/// CSV, one row per comparison, raw numbers; geomean summaries follow as rows whose
/// workload is `geomean`.
pub fn render_csv(report: &Report) -> String {
    let mut out = String::from(
        "workload,metric,unit,direction,baseline,variant,n_baseline,n_variant,paired,\
         baseline_median,variant_median,effect_pct,ci_low_pct,ci_high_pct,p_value,q_value,\
         mde_pct,verdict,warnings\n",
    );
    let o = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    let mut push = |fields: &[String]| {
        out.push_str(&resplab_results::csv::record(fields));
        out.push('\n');
    };
    for r in &report.rows {
        let warnings: Vec<&str> = r.warnings.iter().map(|w| w.kind()).collect();
        push(&[
            r.workload.clone(),
            r.metric.clone(),
            r.unit.clone(),
            r.direction.to_string(),
            r.baseline.clone(),
            r.variant.clone(),
            r.n_baseline.to_string(),
            r.n_variant.to_string(),
            r.paired.to_string(),
            r.baseline_median.to_string(),
            r.variant_median.to_string(),
            o(r.effect_pct),
            o(r.ci_low_pct),
            o(r.ci_high_pct),
            o(r.p_value),
            o(r.q_value),
            o(r.mde_pct),
            r.verdict.label().to_string(),
            warnings.join(";"),
        ]);
    }
    for s in &report.summaries {
        push(&[
            "geomean".into(),
            s.metric.clone(),
            s.unit.clone(),
            s.direction.to_string(),
            report.baseline.clone(),
            s.variant.clone(),
            s.workloads.to_string(),
            s.workloads.to_string(),
            s.ci_low_pct.is_some().to_string(),
            String::new(),
            String::new(),
            s.effect_pct.to_string(),
            o(s.ci_low_pct),
            o(s.ci_high_pct),
            String::new(),
            String::new(),
            String::new(),
            s.verdict.map_or(String::new(), |v| v.label().to_string()),
            String::new(),
        ]);
    }
    out
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
