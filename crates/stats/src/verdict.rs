//! resplab's default comparison: effect as a ratio with its confidence interval, the
//! p-value of the same test, the minimal detectable effect, and a three-way verdict.
//!
//! Source: METHOD §0, §6.2 and §6.3. Values are compared on the log scale so effects are
//! ratios: the effect is e^θ̂ − 1 with interval [e^lo − 1, e^hi − 1].
//!
//! - **Paired by round** (the default when trials carry a round number): d_k = ln B_k −
//!   ln A_k; θ̂ and its interval from [`crate::rank::hl_paired`]; p from the Wilcoxon
//!   signed-rank test ([`crate::rank::signed_rank`]). Needs ≥ 6 pairs for a 95 % interval.
//! - **Unpaired**: θ̂ and its interval from [`crate::rank::hl_unpaired`]; p from
//!   benchstat's Mann–Whitney test ([`crate::utest::mann_whitney`]). Needs ≥ 4 trials per
//!   arm for a 95 % interval (the smallest exact two-sided p at 4/4 is 0.029).
//!
//! In both designs the interval and the test come from one rank statistic, so "the
//! interval excludes 0" and "p ≤ α" agree (exactly without ties; with ties both are
//! approximations of the same statistic).
//!
//! **Verdict** (in this order): no finite interval → [`Verdict::TooFewTrials`]; interval
//! excludes 0 → [`Verdict::Better`] or [`Verdict::Worse`] per the metric's
//! [`Direction`]; a margin δ was given and the interval lies inside (−δ, +δ) →
//! [`Verdict::Equivalent`]; otherwise [`Verdict::Inconclusive`], reported with the MDE.
//! The engine never says "no difference".
//!
//! **MDE** at 80 % power and α = 1 − confidence ([`crate::power`], ARE 3/π for the rank
//! tests), from the standard deviation of d (paired) or the pooled standard deviation of
//! the log values (unpaired).
//!
//! **Outlier rounds** (paired): a round is flagged when |d_k − median(d)| >
//! 5·1.4826·MAD(d). Flagged rounds stay in the analysis (no outcome-driven deletion); for
//! each, a leave-one-round-out estimate, interval and verdict are reported so the reader
//! sees how much one round moves the result.
//!
//! **Warnings** are typed ([`Warning`]) and carry their advice. `NotInterleaved` is for
//! the caller to add (only it knows the run order); `ImplausibleDirection` fires when the
//! caller declared which way the variant cannot plausibly go ([`Expectation`]).
//!
//! Cost: paired O(n² log n) for n < 1024 pairs (sorting the Walsh averages), expected
//! O(n log n) beyond, plus one such estimate per flagged round; unpaired expected
//! O((m + n) log(m + n)) plus O((m + n)·m·c) for the exact critical value when both arms
//! have ≤ 50 trials.

use crate::describe::{mad, mean_var, plain_median};
use crate::error::{logs, StatsError};
use crate::power::{mde_unpaired, PowerSpec};
use crate::rank::{hl_paired, hl_unpaired, signed_rank, ShiftEstimate};
use crate::utest::mann_whitney;

/// Which way is good for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Throughput-like (ops/s): a larger variant value is better.
    HigherIsBetter,
    /// Latency-like (ns, CPU-ns per op): a smaller variant value is better.
    LowerIsBetter,
}

/// What the caller knows the variant cannot plausibly do (e.g. an instrumented build
/// cannot be faster than its baseline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expectation {
    /// The variant should not come out better.
    NotBetter,
    /// The variant should not come out worse.
    NotWorse,
}

/// How the two samples relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Design {
    /// Trials paired by round (randomized interleaved rounds).
    Paired,
    /// Independent samples.
    Unpaired,
}

/// The three-way answer (plus "not enough data").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The interval excludes 0 and the variant is better per the metric's direction
    /// (render as "faster" for speed metrics).
    Better,
    /// The interval excludes 0 and the variant is worse (render as "slower").
    Worse,
    /// The interval lies inside ±margin.
    Equivalent,
    /// Neither; report the MDE.
    Inconclusive,
    /// Too few trials for a finite interval at this confidence; no verdict.
    TooFewTrials,
}

/// The comparison's warnings are variants of resplab's one warning enum.
pub use crate::warning::Warning;

/// Which test produced the p-value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestKind {
    /// Wilcoxon signed-rank on per-round log-ratios.
    SignedRank,
    /// Mann–Whitney U on log values (ranks equal those of the raw values).
    MannWhitney,
}

/// Settings of a comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompareConfig {
    /// Confidence of the interval (0.95); α = 1 − confidence for the MDE.
    pub confidence: f64,
    /// Equivalence margin δ in percent (e.g. 1.0 for ±1 %), if any.
    pub margin_pct: Option<f64>,
    /// Which way is good.
    pub direction: Direction,
    /// What the variant cannot plausibly do, if known.
    pub expectation: Option<Expectation>,
    /// Per-trial CV (percent) above which `HighVariance` is raised (5 %).
    pub high_variance_pct: f64,
    /// Outlier threshold in robust standard deviations (5).
    pub outlier_k: f64,
}

impl CompareConfig {
    /// Defaults (95 %, no margin, no expectation, 5 % CV, 5 MADs) for a direction.
    pub fn new(direction: Direction) -> Self {
        CompareConfig {
            confidence: 0.95,
            margin_pct: None,
            direction,
            expectation: None,
            high_variance_pct: 5.0,
            outlier_k: 5.0,
        }
    }
}

/// The result of leaving one flagged round out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeaveOneOut {
    /// The round left out (0-based).
    pub round: usize,
    /// Effect without it, percent.
    pub effect_pct: f64,
    /// Interval without it, percent.
    pub ci_low_pct: f64,
    /// Interval without it, percent.
    pub ci_high_pct: f64,
    /// Verdict without it.
    pub verdict: Verdict,
}

/// Everything the compare command renders for one (workload, metric, variant).
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Paired or unpaired.
    pub design: Design,
    /// Baseline trials.
    pub n_baseline: usize,
    /// Variant trials.
    pub n_variant: usize,
    /// Effect (variant/baseline − 1) in percent.
    pub effect_pct: f64,
    /// Lower interval bound in percent (−100 when unbounded below on the ratio scale).
    pub ci_low_pct: f64,
    /// Upper interval bound in percent (+∞ when unbounded).
    pub ci_high_pct: f64,
    /// Achieved confidence of the interval.
    pub confidence: f64,
    /// p-value of the test behind the interval.
    pub p_value: f64,
    /// Which test that is.
    pub test: TestKind,
    /// Minimal detectable effect at 80 % power, percent (`None` if n is too small).
    pub mde_pct: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// Warnings with advice.
    pub warnings: Vec<Warning>,
    /// Leave-one-out results for flagged rounds (paired only).
    pub leave_one_out: Vec<LeaveOneOut>,
}

impl Comparison {
    /// Whether a test could say anything: with one value on a side (one pair, paired)
    /// neither rank test can reach a p-value below 1, so none is reported.
    pub fn has_test(&self) -> bool {
        self.n_baseline.min(self.n_variant) >= 2
    }

    /// The minimal detectable effect in the direction of the measured effect, percent:
    /// [`mde_in_direction`] of [`Comparison::mde_pct`].
    pub fn mde_signed_pct(&self) -> Option<f64> {
        self.mde_pct.map(|m| mde_in_direction(m, self.effect_pct))
    }
}

/// A minimal detectable effect given as an increase, `mde_pct` (it is a distance on the
/// log scale, `d`, shown as `exp(d) − 1`), turned to the side of `effect_pct`: for a
/// decrease the same distance below, `exp(−d) − 1`, which never reaches −100 %. A
/// slowdown of −80 % is then shown beside an MDE of, say, −60 %, not +147 %.
pub fn mde_in_direction(mde_pct: f64, effect_pct: f64) -> f64 {
    if effect_pct < 0.0 {
        let d = (1.0 + mde_pct / 100.0).ln();
        pct(-d)
    } else {
        mde_pct
    }
}

fn pct(log_ratio: f64) -> f64 {
    (log_ratio.exp() - 1.0) * 100.0
}

fn decide(est: &ShiftEstimate, cfg: &CompareConfig) -> Verdict {
    if !est.is_bounded() {
        return Verdict::TooFewTrials;
    }
    let up = est.ci_low > 0.0;
    let down = est.ci_high < 0.0;
    if up || down {
        let better = match cfg.direction {
            Direction::HigherIsBetter => up,
            Direction::LowerIsBetter => down,
        };
        return if better {
            Verdict::Better
        } else {
            Verdict::Worse
        };
    }
    if let Some(m) = cfg.margin_pct {
        if pct(est.ci_low) > -m && pct(est.ci_high) < m {
            return Verdict::Equivalent;
        }
    }
    Verdict::Inconclusive
}

fn check_cfg(cfg: &CompareConfig) -> Result<(), StatsError> {
    if !(cfg.confidence > 0.0 && cfg.confidence < 1.0) {
        return Err(StatsError::BadParameter {
            what: "confidence",
            expected: "between 0 and 1 (exclusive)",
            found: cfg.confidence,
        });
    }
    if let Some(m) = cfg.margin_pct {
        if !(m > 0.0 && m.is_finite()) {
            return Err(StatsError::BadParameter {
                what: "margin (percent)",
                expected: "a positive number",
                found: m,
            });
        }
    }
    Ok(())
}

fn common_warnings(
    cfg: &CompareConfig,
    verdict: Verdict,
    effect_pct: f64,
    cv_pct: f64,
    w: &mut Vec<Warning>,
) {
    if cv_pct.is_finite() && cv_pct > cfg.high_variance_pct {
        w.push(Warning::HighVariance {
            cv_pct,
            threshold_pct: cfg.high_variance_pct,
        });
    }
    if let Some(e) = cfg.expectation {
        let implausible = matches!(
            (e, verdict),
            (Expectation::NotBetter, Verdict::Better) | (Expectation::NotWorse, Verdict::Worse)
        );
        if implausible {
            w.push(Warning::ImplausibleDirection { effect_pct });
        }
    }
}

/// Paired comparison: `baseline[k]` and `variant[k]` ran in round k. Values must be
/// positive (they are compared as ratios). Cost: see the module documentation.
///
/// # Errors
/// [`StatsError::LengthMismatch`] if the arms differ in length,
/// [`StatsError::TooFewValues`] if empty, [`StatsError::NonPositive`] /
/// [`StatsError::NonFinite`] on values without a logarithm, [`StatsError::BadParameter`]
/// for a bad confidence or margin.
pub fn compare_paired(
    baseline: &[f64],
    variant: &[f64],
    cfg: &CompareConfig,
) -> Result<Comparison, StatsError> {
    check_cfg(cfg)?;
    if baseline.len() != variant.len() {
        return Err(StatsError::LengthMismatch {
            what: "paired baseline and variant rounds",
            left: baseline.len(),
            right: variant.len(),
        });
    }
    let la = logs("baseline", baseline)?;
    let lb = logs("variant", variant)?;
    let d: Vec<f64> = lb.iter().zip(&la).map(|(b, a)| b - a).collect();
    let mut c = paired_from_log_ratios(&d, cfg)?;
    c.n_baseline = baseline.len();
    c.n_variant = variant.len();
    Ok(c)
}

/// Paired comparison from per-round log-ratios d_k = ln B_k − ln A_k directly.
///
/// # Errors
/// [`StatsError::TooFewValues`] if empty, [`StatsError::NonFinite`] on NaN/∞,
/// [`StatsError::BadParameter`] for a bad confidence or margin.
pub fn paired_from_log_ratios(d: &[f64], cfg: &CompareConfig) -> Result<Comparison, StatsError> {
    check_cfg(cfg)?;
    let est = hl_paired(d, cfg.confidence)?;
    let test = signed_rank(d)?;
    let n = d.len();
    let verdict = decide(&est, cfg);
    let (_, var) = mean_var(d);
    let sd = var.sqrt();
    // The MDE of the test that decides: the exact signed-rank test (its interval).
    let mde_pct = if verdict == Verdict::TooFewTrials {
        None
    } else {
        crate::power::mde_signed_rank(n, sd, cfg.confidence, 0.80).map(pct)
    };
    let effect_pct = pct(est.estimate);
    let mut warnings = Vec::new();
    if verdict == Verdict::TooFewTrials {
        warnings.push(Warning::TooFewTrials {
            have: n,
            need: min_pairs(cfg.confidence),
        });
    } else if n < crate::rank::SIGNED_RANK_EXACT_BELOW {
        // With few pairs the smallest attainable p-value is close to α: say so.
        let min_p = 2.0 / 2f64.powi(n as i32);
        if min_p > (1.0 - cfg.confidence) / 4.0 {
            warnings.push(Warning::FewPairs { pairs: n, min_p });
        }
    }
    // Per-trial CV: the difference of two trials has √2 times their sd.
    common_warnings(
        cfg,
        verdict,
        effect_pct,
        pct(sd / 2f64.sqrt()),
        &mut warnings,
    );
    let (flagged, leave_one_out) = outlier_rounds(d, cfg)?;
    if !flagged.is_empty() {
        warnings.push(Warning::OutlierRounds { rounds: flagged });
    }
    Ok(Comparison {
        design: Design::Paired,
        n_baseline: n,
        n_variant: n,
        effect_pct,
        ci_low_pct: pct(est.ci_low),
        ci_high_pct: pct(est.ci_high),
        confidence: est.achieved_confidence,
        p_value: test.p_value,
        test: TestKind::SignedRank,
        mde_pct,
        verdict,
        warnings,
        leave_one_out,
    })
}

/// The rounds whose log-ratio lies more than `cfg.outlier_k` scaled MADs from the median,
/// and the comparison without each of them in turn.
fn outlier_rounds(
    d: &[f64],
    cfg: &CompareConfig,
) -> Result<(Vec<usize>, Vec<LeaveOneOut>), StatsError> {
    let n = d.len();
    let med = plain_median(d);
    let spread = 1.4826 * mad(d);
    let flagged: Vec<usize> = if spread > 0.0 {
        (0..n)
            .filter(|&k| (d[k] - med).abs() > cfg.outlier_k * spread)
            .collect()
    } else {
        Vec::new()
    };
    let mut leave_one_out = Vec::new();
    for &k in &flagged {
        let rest: Vec<f64> = d
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != k)
            .map(|(_, &v)| v)
            .collect();
        let e = hl_paired(&rest, cfg.confidence)?;
        leave_one_out.push(LeaveOneOut {
            round: k,
            effect_pct: pct(e.estimate),
            ci_low_pct: pct(e.ci_low),
            ci_high_pct: pct(e.ci_high),
            verdict: decide(&e, cfg),
        });
    }
    Ok((flagged, leave_one_out))
}

/// Smallest number of pairs with a finite signed-rank interval at `confidence`.
pub fn min_pairs(confidence: f64) -> usize {
    let half = (1.0 - confidence) / 2.0;
    (1..SEARCH_LIMIT)
        .find(|&n| crate::rank::signed_rank_critical(n, half).is_some())
        .unwrap_or(SEARCH_LIMIT)
}

/// Smallest equal arm size with a finite Mann–Whitney interval at `confidence`.
pub fn min_per_arm(confidence: f64) -> usize {
    let half = (1.0 - confidence) / 2.0;
    (1..SEARCH_LIMIT)
        .find(|&n| crate::rank::u_critical(n, n, half).is_some())
        .unwrap_or(SEARCH_LIMIT)
}

const SEARCH_LIMIT: usize = 50;

/// Unpaired comparison of independent trials. Values must be positive.
/// Cost: see the module documentation.
///
/// # Errors
/// [`StatsError::TooFewValues`] if an arm is empty, [`StatsError::NonPositive`] /
/// [`StatsError::NonFinite`] on values without a logarithm, [`StatsError::BadParameter`]
/// for a bad confidence or margin.
pub fn compare_unpaired(
    baseline: &[f64],
    variant: &[f64],
    cfg: &CompareConfig,
) -> Result<Comparison, StatsError> {
    check_cfg(cfg)?;
    let mut la = logs("baseline", baseline)?;
    let mut lb = logs("variant", variant)?;
    // Sorted once here; the estimator and the test sort again, which costs O(n) on sorted
    // input.
    la.sort_by(f64::total_cmp);
    lb.sort_by(f64::total_cmp);
    let est = hl_unpaired(&la, &lb, cfg.confidence)?;
    let test = mann_whitney(&la, &lb)?;
    let verdict = decide(&est, cfg);
    let (na, nb) = (la.len(), lb.len());
    let (_, va) = mean_var(&la);
    let (_, vb) = mean_var(&lb);
    let pooled = if na + nb > 2 {
        let wa = if na > 1 { (na - 1) as f64 * va } else { 0.0 };
        let wb = if nb > 1 { (nb - 1) as f64 * vb } else { 0.0 };
        ((wa + wb) / (na + nb - 2) as f64).sqrt()
    } else {
        f64::NAN
    };
    let spec = PowerSpec {
        alpha: 1.0 - cfg.confidence,
        ..PowerSpec::default()
    };
    // No interval, no MDE: a figure from a test that cannot decide would mislead.
    let mde_pct = if verdict == Verdict::TooFewTrials {
        None
    } else {
        mde_unpaired(na, nb, pooled, &spec).map(pct)
    };
    let effect_pct = pct(est.estimate);
    let mut warnings = Vec::new();
    if verdict == Verdict::TooFewTrials {
        warnings.push(Warning::TooFewTrials {
            have: na.min(nb),
            need: min_per_arm(cfg.confidence),
        });
    }
    common_warnings(cfg, verdict, effect_pct, pct(pooled), &mut warnings);
    Ok(Comparison {
        design: Design::Unpaired,
        n_baseline: na,
        n_variant: nb,
        effect_pct,
        ci_low_pct: pct(est.ci_low),
        ci_high_pct: pct(est.ci_high),
        confidence: est.achieved_confidence,
        p_value: test.p_value,
        test: TestKind::MannWhitney,
        mde_pct,
        verdict,
        warnings,
        leave_one_out: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clear_slowdown_is_worse_for_throughput() {
        let a = [
            100.0, 101.0, 99.5, 100.5, 100.2, 99.8, 100.1, 100.4, 99.9, 100.3,
        ];
        let b: Vec<f64> = a
            .iter()
            .enumerate()
            .map(|(i, x)| x * (0.95 + 0.001 * (i % 3) as f64))
            .collect();
        let c = compare_paired(&a, &b, &CompareConfig::new(Direction::HigherIsBetter)).unwrap();
        assert_eq!(c.verdict, Verdict::Worse);
        assert!(c.effect_pct < -4.0 && c.effect_pct > -5.5, "{c:?}");
        assert!(c.p_value <= 0.05);
        let lat = compare_paired(&a, &b, &CompareConfig::new(Direction::LowerIsBetter)).unwrap();
        assert_eq!(lat.verdict, Verdict::Better);
        let u = compare_unpaired(&a, &b, &CompareConfig::new(Direction::HigherIsBetter)).unwrap();
        assert_eq!(u.verdict, Verdict::Worse);
        assert!(u.p_value < 0.001);
    }

    #[test]
    fn equivalence_needs_a_margin() {
        let a = [
            100.0, 100.2, 99.9, 100.1, 100.0, 99.8, 100.3, 100.1, 99.9, 100.0,
        ];
        let b = [
            100.1, 100.0, 100.0, 99.9, 100.2, 99.9, 100.1, 100.2, 99.8, 100.1,
        ];
        let mut cfg = CompareConfig::new(Direction::HigherIsBetter);
        let plain = compare_paired(&a, &b, &cfg).unwrap();
        assert_eq!(plain.verdict, Verdict::Inconclusive);
        assert!(plain.mde_pct.unwrap() > 0.0);
        cfg.margin_pct = Some(1.0);
        assert_eq!(
            compare_paired(&a, &b, &cfg).unwrap().verdict,
            Verdict::Equivalent
        );
    }

    #[test]
    fn too_few_and_bad_input() {
        let cfg = CompareConfig::new(Direction::HigherIsBetter);
        let c = compare_paired(&[1.0, 2.0, 3.0], &[1.1, 2.1, 3.1], &cfg).unwrap();
        assert_eq!(c.verdict, Verdict::TooFewTrials);
        assert!(matches!(
            c.warnings[0],
            Warning::TooFewTrials { have: 3, need: 6 }
        ));
        assert_eq!(min_per_arm(0.95), 4);
        assert!(compare_paired(&[1.0], &[1.0, 2.0], &cfg).is_err());
        assert!(compare_unpaired(&[1.0, -2.0], &[1.0], &cfg).is_err());
        let mut bad = cfg;
        bad.margin_pct = Some(-1.0);
        assert!(compare_unpaired(&[1.0], &[1.0], &bad).is_err());
    }

    #[test]
    fn implausible_direction_and_outliers() {
        let a = [100.0; 10];
        let mut b = [
            110.0, 110.5, 109.8, 110.2, 110.1, 109.9, 110.3, 110.0, 110.4, 165.0,
        ];
        let mut cfg = CompareConfig::new(Direction::HigherIsBetter);
        cfg.expectation = Some(Expectation::NotBetter);
        let c = compare_paired(&a, &b, &cfg).unwrap();
        assert_eq!(c.verdict, Verdict::Better);
        assert!(c
            .warnings
            .iter()
            .any(|w| matches!(w, Warning::ImplausibleDirection { .. })));
        assert!(c
            .warnings
            .iter()
            .any(|w| *w == Warning::OutlierRounds { rounds: vec![9] }));
        assert_eq!(c.leave_one_out.len(), 1);
        assert_eq!(c.leave_one_out[0].round, 9);
        b[9] = 110.0;
        let c = compare_paired(&a, &b, &cfg).unwrap();
        assert!(c.leave_one_out.is_empty());
        for w in &c.warnings {
            assert!(!w.message().is_empty());
        }
    }

    #[test]
    fn a_decrease_has_its_mde_below_never_past_minus_100() {
        assert_eq!(mde_in_direction(12.5, 3.0), 12.5);
        assert_eq!(mde_in_direction(12.5, 0.0), 12.5);
        // +147 % up is the same log distance as −59.5 % down.
        let down = mde_in_direction(147.0, -80.0);
        assert!((down - (1.0 / 2.47 - 1.0) * 100.0).abs() < 1e-9, "{down}");
        assert!(mde_in_direction(1e6, -99.0) > -100.0);
        assert!((mde_in_direction(10.0, -1.0) + 9.0909).abs() < 1e-3);
    }

    #[test]
    fn one_value_a_side_has_no_test() {
        let cfg = CompareConfig::new(Direction::HigherIsBetter);
        let one = compare_unpaired(&[100.0], &[120.0], &cfg).unwrap();
        assert!(!one.has_test());
        let two = compare_unpaired(&[100.0, 101.0], &[120.0, 121.0], &cfg).unwrap();
        assert!(two.has_test());
    }
}
