//! One row of the comparison: a variant against the baseline for one (workload,
//! metric). Pairs the trials by round where both sides carry rounds, runs the paired or
//! unpaired comparison of [`resplab_stats::verdict`], and names its warnings and
//! leave-one-out results by the rounds of the input.

use super::*;

pub(super) const INSTRUMENTED_WORDS: [&str; 8] = [
    "instrument",
    "enabled",
    "hook",
    "trace",
    "probe",
    "debug",
    "ebpf",
    "profil",
];

pub(super) fn looks_instrumented(label: &str) -> bool {
    let lower = label.to_ascii_lowercase();
    INSTRUMENTED_WORDS.iter().any(|w| lower.contains(w))
}

#[allow(clippy::too_many_arguments)]
pub(super) fn compare_one(
    workload: &Arc<str>,
    metric: &Metric,
    baseline: &str,
    label: &str,
    base: &Sample,
    var: &Sample,
    opts: &ResplabOptions,
) -> (Row, Option<Vec<f64>>) {
    let mut warnings = flagged_values(baseline, base, label, var);
    let mut row = empty_row(workload, metric, baseline, label, base, var);
    if base.is_empty() || var.is_empty() {
        row.baseline_median = plain_median(&base.values);
        row.variant_median = plain_median(&var.values);
        warnings.push(Warning::NoValues);
        row.warnings = warnings;
        return (row, None);
    }
    let cfg = config(metric, label, opts);
    let pairs = pair_by_round(base, var, &mut warnings);
    row.paired = pairs.len() >= 2;
    let result = if row.paired {
        row.baseline_median = plain_median(&base.values);
        row.variant_median = plain_median(&var.values);
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
    // Pairs from phases that ran apart are marked whether or not they compare.
    let phases_apart = (row.paired && opts.not_interleaved.iter().any(|l| l == label)).then(|| {
        Warning::PhasesNotInterleaved {
            variant: label.to_string(),
            baseline: baseline.to_string(),
        }
    });
    let c: Comparison = match result {
        Ok(c) => c,
        Err(e) => {
            warnings.push(not_compared(e));
            warnings.extend(phases_apart);
            row.warnings = warnings;
            return (row, None);
        }
    };
    fill(&mut row, &c, &pairs, metric.direction, &mut warnings);
    warnings.extend(phases_apart);
    row.warnings = warnings;
    let d = row
        .paired
        .then(|| pairs.iter().map(|p| p.2.ln() - p.1.ln()).collect());
    (row, d)
}

/// A warning for every value either side flagged and left out on reading.
fn flagged_values(baseline: &str, base: &Sample, label: &str, var: &Sample) -> Vec<Warning> {
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
    warnings
}

/// The row before any comparison: names, sizes, no numbers, no verdict.
fn empty_row(
    workload: &Arc<str>,
    metric: &Metric,
    baseline: &str,
    label: &str,
    base: &Sample,
    var: &Sample,
) -> Row {
    Row {
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
    }
}

/// The statistics' settings for this metric and variant: its direction (none counts as
/// higher is better), the options' confidence and margin, and the expectation that an
/// instrumented variant is not better.
fn config(metric: &Metric, label: &str, opts: &ResplabOptions) -> CompareConfig {
    let mut cfg = CompareConfig::new(match metric.direction {
        Direction::LowerIsBetter => resplab_stats::verdict::Direction::LowerIsBetter,
        _ => resplab_stats::verdict::Direction::HigherIsBetter,
    });
    cfg.confidence = opts.confidence;
    cfg.margin_pct = opts.margin_pct;
    if metric.direction != Direction::Unknown && looks_instrumented(label) {
        cfg.expectation = Some(Expectation::NotBetter);
    }
    cfg
}

/// The (round, baseline, variant) pairs of the rounds both sides carry, by round; empty
/// when either side has no rounds or a round repeats (then with a warning). Trials
/// without a partner are named in a warning when pairing goes ahead.
fn pair_by_round(base: &Sample, var: &Sample, warnings: &mut Vec<Warning>) -> Vec<(u32, f64, f64)> {
    let mut pairs: Vec<(u32, f64, f64)> = Vec::new();
    if !(base.has_rounds() && var.has_rounds()) {
        return pairs;
    }
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
    pairs
}

/// Why two samples could not be compared, as a warning.
fn not_compared(e: StatsError) -> Warning {
    match e {
        StatsError::NonPositive { .. } | StatsError::NonFinite { .. } => Warning::NonPositive {
            error: e.to_string(),
        },
        StatsError::AllEqual => Warning::AllEqual,
        other => Warning::NotComparable {
            error: other.to_string(),
        },
    }
}

/// The numbers, verdict, warnings and leave-one-out results of a comparison, into the
/// row. Round indices of the stats result are positions among the pairs; they are named
/// by the rounds of the input.
fn fill(
    row: &mut Row,
    c: &Comparison,
    pairs: &[(u32, f64, f64)],
    direction: Direction,
    warnings: &mut Vec<Warning>,
) {
    row.paired = c.design == Design::Paired;
    row.test = Some(match c.test {
        resplab_stats::verdict::TestKind::SignedRank => "signed_rank",
        resplab_stats::verdict::TestKind::MannWhitney => "mann_whitney",
    });
    row.n_baseline = c.n_baseline;
    row.n_variant = c.n_variant;
    row.effect_pct = Some(c.effect_pct);
    // No test could run with one value on a side: no p-value rather than p = 1.
    row.p_value = c.has_test().then(|| c.p_value.clamp(0.0, 1.0));
    row.mde_pct = c.mde_signed_pct();
    row.verdict = Verdict::from_stats(c.verdict, direction);
    if c.verdict != StatsVerdict::TooFewTrials
        && c.ci_low_pct.is_finite()
        && c.ci_high_pct.is_finite()
    {
        row.ci_low_pct = Some(c.ci_low_pct);
        row.ci_high_pct = Some(c.ci_high_pct);
    }
    let round_of = |k: usize| pairs.get(k).map_or(k as u32, |p| p.0);
    for w in &c.warnings {
        warnings.push(match w {
            Warning::OutlierRounds { rounds } => Warning::OutlierRounds {
                rounds: rounds.iter().map(|&k| round_of(k) as usize).collect(),
            },
            other => other.clone(),
        });
    }
    row.leave_one_out = c
        .leave_one_out
        .iter()
        .map(|l| LeftOut {
            round: round_of(l.round),
            effect_pct: l.effect_pct,
            ci_low_pct: l.ci_low_pct,
            ci_high_pct: l.ci_high_pct,
            verdict: Verdict::from_stats(l.verdict, direction),
        })
        .collect();
}
