//! `--style resplab` (the default): every variant against the baseline, per workload and
//! metric, with an effect size, its confidence interval, a p-value from the same test, the
//! minimal detectable effect and a three-way verdict (METHOD §6.2).
//!
//! Method. Values are compared on the log scale, so effects are ratios and are printed
//! as percentages (e^θ − 1). When both samples carry round numbers, trials are paired by
//! round and the Hodges–Lehmann estimate of the per-round log-ratios comes with the exact
//! signed-rank interval and p-value ([`resplab_stats::rank::hl_paired`],
//! [`resplab_stats::rank::signed_rank`]). Otherwise the samples are unpaired: the
//! two-sample Hodges–Lehmann shift with its Mann–Whitney interval
//! ([`resplab_stats::rank::hl_unpaired`]) and the U test's p-value
//! ([`resplab_stats::utest::mann_whitney`]). The interval and the test are the same
//! statistic, so they never disagree.
//!
//! Verdict. The interval excludes zero: the variant is faster or slower (by the metric's
//! direction: ops/s up is faster, latency down is faster; metrics without a direction say
//! higher or lower). A `--margin` was given and the interval lies inside ±margin:
//! equivalent. Otherwise inconclusive, with the minimal detectable effect, estimated as
//! 1.43 × the interval half-width (MDE at 80 % power, METHOD §0). With too few trials for
//! a finite interval (fewer than 6 pairs, or 4 per arm) there is no verdict.
//!
//! Warnings carry advice: too few trials, high variance, trials not interleaved, values
//! that were flagged by an importer, non-positive values, and an implausible direction (an
//! instrumented variant faster than its baseline).

use resplab_results::sample::{Direction, Metric, Sample, SampleSet};
use resplab_stats::rank::{hl_paired, hl_unpaired, signed_rank};
use resplab_stats::utest::mann_whitney;
use serde::Serialize;
use std::sync::Arc;

/// Options of the default comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct ResplabOptions {
    /// Confidence level of the intervals (0.95).
    pub confidence: f64,
    /// Equivalence margin in percent, if any.
    pub margin_pct: Option<f64>,
}

impl Default for ResplabOptions {
    fn default() -> Self {
        ResplabOptions {
            confidence: 0.95,
            margin_pct: None,
        }
    }
}

/// The three-way verdict (plus "none" when the data cannot support one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The variant is better than the baseline (interval excludes zero).
    Faster,
    /// The variant is worse than the baseline (interval excludes zero).
    Slower,
    /// The metric has no direction and went up (interval excludes zero).
    Higher,
    /// The metric has no direction and went down (interval excludes zero).
    Lower,
    /// The interval lies inside ±margin.
    Equivalent,
    /// None of the above: look at the MDE.
    Inconclusive,
    /// Too few trials for an interval, or values that have no ratio.
    NoVerdict,
}

impl Verdict {
    /// Upper-case label for tables.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Faster => "FASTER",
            Verdict::Slower => "SLOWER",
            Verdict::Higher => "HIGHER",
            Verdict::Lower => "LOWER",
            Verdict::Equivalent => "EQUIVALENT",
            Verdict::Inconclusive => "INCONCLUSIVE",
            Verdict::NoVerdict => "NO VERDICT",
        }
    }
}

/// A warning with advice.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Advice {
    /// Stable identifier (`too_few_trials`, `high_variance`, …).
    pub kind: &'static str,
    /// What happened and what to do.
    pub message: String,
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
    /// Median of the baseline and of the variant.
    pub baseline_median: f64,
    pub variant_median: f64,
    /// Effect in percent (variant vs baseline), with its interval.
    pub effect_pct: Option<f64>,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    pub p_value: Option<f64>,
    /// Minimal detectable effect at 80 % power, percent.
    pub mde_pct: Option<f64>,
    pub verdict: Verdict,
    pub warnings: Vec<Advice>,
}

/// The full comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub confidence: f64,
    pub margin_pct: Option<f64>,
    pub baseline: String,
    pub rows: Vec<Row>,
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

fn pct(log_ratio: f64) -> f64 {
    (log_ratio.exp() - 1.0) * 100.0
}

fn median(v: &[f64]) -> f64 {
    resplab_stats::describe::plain_median(v)
}

fn cv(v: &[f64]) -> f64 {
    let (mean, var) = resplab_stats::describe::mean_var(v);
    if mean == 0.0 {
        0.0
    } else {
        var.sqrt() / mean.abs()
    }
}

/// Compares every label against `baseline` for every (workload, metric) in `set`.
pub fn compare(set: &SampleSet, baseline: &str, opts: &ResplabOptions) -> Report {
    let mut rows = Vec::new();
    for workload in &set.workloads {
        for metric in &set.metrics {
            let Some(base) = set.get(workload, metric, baseline) else {
                continue;
            };
            for label in set.labels.iter().filter(|l| &***l != baseline) {
                let Some(var) = set.get(workload, metric, label) else {
                    continue;
                };
                rows.push(compare_one(
                    workload, metric, baseline, label, base, var, opts,
                ));
            }
        }
    }
    Report {
        confidence: opts.confidence,
        margin_pct: opts.margin_pct,
        baseline: baseline.to_string(),
        rows,
    }
}

fn compare_one(
    workload: &Arc<str>,
    metric: &Metric,
    baseline: &str,
    label: &str,
    base: &Sample,
    var: &Sample,
    opts: &ResplabOptions,
) -> Row {
    let mut warnings = Vec::new();
    for (l, s) in [(baseline, base), (label, var)] {
        for (origin, value, why) in &s.flagged {
            warnings.push(Advice {
                kind: "flagged_value",
                message: format!("{l}: value {value} from {origin} left out: {why}"),
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
        baseline_median: median(&base.values),
        variant_median: median(&var.values),
        effect_pct: None,
        ci_low_pct: None,
        ci_high_pct: None,
        p_value: None,
        mde_pct: None,
        verdict: Verdict::NoVerdict,
        warnings: Vec::new(),
    };
    if base.is_empty() || var.is_empty() {
        warnings.push(Advice {
            kind: "no_values",
            message: "one side has no usable values; nothing to compare".into(),
        });
        row.warnings = warnings;
        return row;
    }
    if base
        .values
        .iter()
        .chain(&var.values)
        .any(|v| *v <= 0.0 || !v.is_finite())
    {
        warnings.push(Advice {
            kind: "non_positive",
            message: "values ≤ 0 have no ratio; compare them with --style ministat (differences \
                      of means) instead"
                .into(),
        });
        row.warnings = warnings;
        return row;
    }
    // Pair by round when both sides carry rounds.
    let mut pairs: Vec<f64> = Vec::new();
    if base.has_rounds() && var.has_rounds() {
        for (i, r) in var.rounds.iter().enumerate() {
            if let Some(j) = base.rounds.iter().position(|b| b == r) {
                pairs.push(var.values[i].ln() - base.values[j].ln());
            }
        }
    }
    let log_b: Vec<f64> = base.values.iter().map(|v| v.ln()).collect();
    let log_v: Vec<f64> = var.values.iter().map(|v| v.ln()).collect();
    let (shift, p) = if pairs.len() >= 2 {
        row.paired = true;
        row.n_baseline = pairs.len();
        row.n_variant = pairs.len();
        let s = hl_paired(&pairs, opts.confidence);
        let p = signed_rank(&pairs).map(|t| t.p_value);
        (s, p.ok())
    } else {
        let s = hl_unpaired(&log_b, &log_v, opts.confidence);
        let p = mann_whitney(&log_b, &log_v).map(|t| t.p_value);
        (s, p.ok())
    };
    row.p_value = p.map(|p| p.min(1.0));
    if !row.paired {
        warnings.push(Advice {
            kind: "not_interleaved",
            message: "trials carry no round numbers, so they were compared unpaired; run the \
                      variants in randomized interleaved rounds (resplab experiment) so drift \
                      cancels and pairing narrows the interval"
                .into(),
        });
    }
    let Ok(shift) = shift else {
        row.warnings = warnings;
        return row;
    };
    row.effect_pct = Some(pct(shift.estimate));
    let n_min = row.n_baseline.min(row.n_variant);
    if n_min < 6 {
        warnings.push(Advice {
            kind: "too_few_trials",
            message: format!(
                "{n_min} trials on the smaller side; at least 6 (better 10) per variant are \
                 needed for a useful {:.0}% interval",
                opts.confidence * 100.0
            ),
        });
    }
    for (l, s) in [(baseline, base), (label, var)] {
        let c = cv(&s.values);
        if s.len() >= 3 && c > 0.10 {
            warnings.push(Advice {
                kind: "high_variance",
                message: format!(
                    "{l}: coefficient of variation {:.1}%; look for noisy neighbours, pin CPUs, \
                     lengthen each trial or add trials",
                    c * 100.0
                ),
            });
        }
    }
    if !shift.is_bounded() {
        row.warnings = warnings;
        return row;
    }
    let (lo, hi) = (shift.ci_low, shift.ci_high);
    row.ci_low_pct = Some(pct(lo));
    row.ci_high_pct = Some(pct(hi));
    let half = (hi - lo) / 2.0;
    row.mde_pct = Some(pct(1.43 * half));
    let up = lo > 0.0;
    let down = hi < 0.0;
    row.verdict = if up || down {
        match metric.direction {
            Direction::HigherIsBetter => {
                if up {
                    Verdict::Faster
                } else {
                    Verdict::Slower
                }
            }
            Direction::LowerIsBetter => {
                if down {
                    Verdict::Faster
                } else {
                    Verdict::Slower
                }
            }
            Direction::Unknown => {
                if up {
                    Verdict::Higher
                } else {
                    Verdict::Lower
                }
            }
        }
    } else if let Some(m) = opts.margin_pct {
        let (lp, hp) = (pct(lo), pct(hi));
        if lp > -m && hp < m {
            Verdict::Equivalent
        } else {
            Verdict::Inconclusive
        }
    } else {
        Verdict::Inconclusive
    };
    let lower = label.to_ascii_lowercase();
    if row.verdict == Verdict::Faster && INSTRUMENTED_WORDS.iter().any(|w| lower.contains(w)) {
        warnings.push(Advice {
            kind: "implausible_direction",
            message: format!(
                "{label} looks instrumented yet is faster than {baseline}: suspect code layout, \
                 CPU placement or drift rather than the change; compare several builds of each \
                 side in randomized interleaved rounds"
            ),
        });
    }
    row.warnings = warnings;
    row
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

fn fmt_ci(r: &Row) -> String {
    match (r.ci_low_pct, r.ci_high_pct) {
        (Some(l), Some(h)) => format!("[{l:+.2}%, {h:+.2}%]"),
        _ => "(-inf, +inf)".into(),
    }
}

fn fmt_p(v: Option<f64>) -> String {
    v.map_or("-".into(), |p| format!("{p:.3}"))
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

fn metric_label(r: &Row) -> String {
    let arrow = match r.direction {
        "higher_is_better" => " ↑",
        "lower_is_better" => " ↓",
        _ => "",
    };
    if r.unit.is_empty() || r.unit == r.metric {
        format!("{}{arrow}", r.metric)
    } else {
        format!("{} ({}){arrow}", r.metric, r.unit)
    }
}

fn cells(r: &Row) -> Vec<String> {
    vec![
        if r.workload.is_empty() {
            "-".into()
        } else {
            r.workload.clone()
        },
        metric_label(r),
        r.variant.clone(),
        if r.paired {
            format!("{} pairs", r.n_baseline)
        } else {
            format!("{}+{}", r.n_baseline, r.n_variant)
        },
        fmt_num(r.baseline_median),
        fmt_num(r.variant_median),
        fmt_pct(r.effect_pct),
        fmt_ci(r),
        fmt_p(r.p_value),
        fmt_mde(r.mde_pct),
        r.verdict.label().into(),
    ]
}

const HEADERS: [&str; 11] = [
    "workload", "metric", "variant", "n", "baseline", "variant", "effect", "CI", "p", "MDE",
    "verdict",
];

fn notes(report: &Report) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &report.rows {
        for w in &r.warnings {
            let place = if r.workload.is_empty() {
                r.metric.clone()
            } else {
                format!("{} {}", r.workload, r.metric)
            };
            let line = format!("[{}] {place}, {}: {}", w.kind, r.variant, w.message);
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
}

/// Plain-text table, then the warnings.
pub fn render_text(report: &Report) -> String {
    let mut rows: Vec<Vec<String>> = vec![HEADERS.iter().map(|s| s.to_string()).collect()];
    let ci = format!("{:.0}% CI", report.confidence * 100.0);
    rows[0][7] = ci;
    rows[0][4] = format!("{} (median)", report.baseline);
    rows[0][5] = "variant (median)".into();
    rows.extend(report.rows.iter().map(cells));
    let widths: Vec<usize> = (0..HEADERS.len())
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
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let pad = widths[i].saturating_sub(c.chars().count());
                if (3..=9).contains(&i) {
                    format!("{}{c}", " ".repeat(pad))
                } else {
                    format!("{c}{}", " ".repeat(pad))
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
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

/// GitHub-flavoured Markdown table, then the warnings as a list.
pub fn render_markdown(report: &Report) -> String {
    let mut out = format!("Baseline: **{}**\n\n", report.baseline);
    let mut head: Vec<String> = HEADERS.iter().map(|s| s.to_string()).collect();
    head[7] = format!("{:.0}% CI", report.confidence * 100.0);
    out.push_str(&format!("| {} |\n", head.join(" | ")));
    out.push_str(&format!("|{}\n", "---|".repeat(head.len())));
    for r in &report.rows {
        let c: Vec<String> = cells(r).iter().map(|s| s.replace('|', "\\|")).collect();
        out.push_str(&format!("| {} |\n", c.join(" | ")));
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

fn csv_field(f: &str) -> String {
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f.to_string()
    }
}

/// CSV, one row per comparison, raw numbers.
pub fn render_csv(report: &Report) -> String {
    let mut out = String::from(
        "workload,metric,unit,direction,baseline,variant,n_baseline,n_variant,paired,\
         baseline_median,variant_median,effect_pct,ci_low_pct,ci_high_pct,p_value,mde_pct,\
         verdict,warnings\n",
    );
    let o = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    for r in &report.rows {
        let warnings: Vec<&str> = r.warnings.iter().map(|w| w.kind).collect();
        let fields = [
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
            o(r.mde_pct),
            r.verdict.label().to_string(),
            warnings.join(";"),
        ];
        let line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        out.push_str(&line.join(","));
        out.push('\n');
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
            .any(|w| w.kind == "not_interleaved"));
        assert!(render_text(&rep).contains("EQUIVALENT"));
        assert!(render_csv(&rep).lines().count() == 2);
        assert!(render_json(&rep).contains("\"verdict\": \"equivalent\""));
    }
}
