//! Calibration budgets: the noise an A/A experiment measured on this machine, turned into
//! the minimal detectable effect (MDE) of any plan of rounds × trial duration, and the
//! cheapest plan that reaches a target.
//!
//! Method (METHOD §6.3): a paired comparison over n rounds detects, with 80 % power at
//! α = 0.05, an effect of MDE = k(n)·s_d, s_d being the standard deviation of the
//! per-round log ratios and k(n) that of the exact signed-rank test the verdict uses
//! ([`crate::power::mde_signed_rank`]; ≈ (t₀.₉₇₅,ₙ₋₁ + t₀.₈₀,ₙ₋₁)/√(n·ARE) for many rounds). The
//! A/A trials give s_d at two or three trial durations T; how it shrinks with T is fitted
//! as s_d(T) = a·T^(−b) by least squares on log s_d vs log T, with b held in [0, ½]:
//! noise that averages out as independent intervals shrinks as T^(−½), and a longer trial
//! never makes it larger. With one duration, b = 0 (no gain from longer trials is
//! assumed, the cautious choice). Wall time of a plan is rounds × variants × (T + the
//! measured per-trial overhead: warm-up, server start, preload).
//!
//! The descriptors of the noise: the per-trial coefficient of variation of each arm, the
//! lag-1 autocorrelation of the paired differences in run order (drift shows as a
//! positive value; rounds are then not independent and the interval too narrow), and
//! outlier rounds by the median absolute deviation.
//!
//! Within a wall time ([`best_within`]) the plan of smallest MDE is the prediction of
//! what an experiment of that length can detect: with fixed rounds, or for a run until
//! decided with the MDE of its confidence sequence at its last look (wider: it may be
//! looked at any time).
//!
//! Cost: O(n) per descriptor; the table is O(plans).

use crate::describe::plain_median_finite;
use crate::power::PowerSpec;
use crate::sequential::SequenceConfig;

/// The rounds of the budget table.
pub const TABLE_ROUNDS: [usize; 8] = [6, 8, 10, 15, 20, 30, 50, 100];
/// The trial durations of the budget table, seconds (measured ones are added).
pub const TABLE_SECONDS: [f64; 6] = [0.5, 1.0, 2.0, 5.0, 10.0, 30.0];

/// Coefficient of variation (sample sd / mean), `None` with fewer than 2 values or a
/// mean of 0.
pub fn cv(x: &[f64]) -> Option<f64> {
    if x.len() < 2 {
        return None;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    if mean == 0.0 || !mean.is_finite() {
        return None;
    }
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0);
    Some(var.sqrt() / mean.abs())
}

/// Sample standard deviation, `None` with fewer than 2 values.
pub fn sd(x: &[f64]) -> Option<f64> {
    if x.len() < 2 {
        return None;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    Some((x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0)).sqrt())
}

/// Lag-1 autocorrelation of a series (in run order), `None` with fewer than 3 values or
/// no variation.
pub fn lag1_autocorrelation(x: &[f64]) -> Option<f64> {
    if x.len() < 3 {
        return None;
    }
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let den: f64 = x.iter().map(|v| (v - mean) * (v - mean)).sum();
    if den <= 0.0 || !den.is_finite() {
        return None;
    }
    let num: f64 = x.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum();
    Some(num / den)
}

/// Indices of values farther than `k` robust standard deviations (1.4826 × MAD) from the
/// median. Nothing is an outlier when the MAD is 0.
pub fn outliers(x: &[f64], k: f64) -> Vec<usize> {
    if x.len() < 3 {
        return Vec::new();
    }
    let med = plain_median_finite(x);
    let dev: Vec<f64> = x.iter().map(|v| (v - med).abs()).collect();
    let mad = plain_median_finite(&dev) * 1.4826;
    if mad <= 0.0 || !mad.is_finite() {
        return Vec::new();
    }
    x.iter()
        .enumerate()
        .filter(|(_, v)| (*v - med).abs() > k * mad)
        .map(|(i, _)| i)
        .collect()
}

/// How the standard deviation of the per-round log ratio shrinks with the trial duration:
/// s_d(T) = a·T^(−b).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseModel {
    pub a: f64,
    pub b: f64,
}

impl NoiseModel {
    /// Fits the model to `(trial seconds, s_d)` points (non-finite or non-positive ones
    /// are skipped). `None` when no point is usable.
    pub fn fit(points: &[(f64, f64)]) -> Option<NoiseModel> {
        let pts: Vec<(f64, f64)> = points
            .iter()
            .filter(|(t, s)| *t > 0.0 && *s > 0.0 && t.is_finite() && s.is_finite())
            .map(|(t, s)| (t.ln(), s.ln()))
            .collect();
        if pts.is_empty() {
            return None;
        }
        let n = pts.len() as f64;
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        let b = if sxx > 1e-12 {
            let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
            (-sxy / sxx).clamp(0.0, 0.5)
        } else {
            0.0
        };
        // The level through the centre of the points, for the clamped slope.
        let ln_a = my + b * mx;
        Some(NoiseModel { a: ln_a.exp(), b })
    }

    /// Predicted s_d for trials of `trial_sec` seconds.
    pub fn sd_at(&self, trial_sec: f64) -> f64 {
        self.a * trial_sec.max(1e-3).powf(-self.b)
    }
}

/// One plan of the budget table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    pub rounds: usize,
    pub trial_sec: f64,
    /// Predicted MDE at 80 % power, percent (as a ratio effect).
    pub mde_pct: f64,
    /// Predicted wall time of the experiment, seconds.
    pub wall_sec: f64,
}

/// The MDE in percent of `rounds` paired rounds with log-ratio sd `sd_log`: the effect
/// e^MDE − 1, for the exact signed-rank test every paired verdict uses
/// ([`crate::power::mde_signed_rank`]). `None` below the rounds an interval needs.
pub fn mde_pct(rounds: usize, sd_log: f64, spec: &PowerSpec) -> Option<f64> {
    crate::power::mde_signed_rank(rounds, sd_log, 1.0 - spec.alpha, spec.power)
        .map(|m| 100.0 * m.exp_m1())
}

/// The budget table: every plan of `rounds` × `seconds` for an experiment of `variants`
/// variants whose trials cost `overhead_sec` besides their measured time. Sorted by
/// trial duration, then rounds.
pub fn budget_table(
    model: &NoiseModel,
    overhead_sec: f64,
    variants: usize,
    rounds: &[usize],
    seconds: &[f64],
    spec: &PowerSpec,
) -> Vec<Plan> {
    let mut secs: Vec<f64> = seconds
        .iter()
        .copied()
        .filter(|s| *s > 0.0 && s.is_finite())
        .collect();
    secs.sort_by(f64::total_cmp);
    secs.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    let mut out = Vec::new();
    for &t in &secs {
        for &n in rounds {
            if let Some(mde) = mde_pct(n, model.sd_at(t), spec) {
                out.push(Plan {
                    rounds: n,
                    trial_sec: t,
                    mde_pct: mde,
                    wall_sec: n as f64 * variants as f64 * (t + overhead_sec.max(0.0)),
                });
            }
        }
    }
    out
}

/// The plan of least wall time whose MDE is at most `target_pct`, `None` if none is.
pub fn cheapest(table: &[Plan], target_pct: f64) -> Option<Plan> {
    table
        .iter()
        .filter(|p| p.mde_pct <= target_pct)
        .min_by(|a, b| {
            a.wall_sec
                .total_cmp(&b.wall_sec)
                .then(a.rounds.cmp(&b.rounds))
        })
        .copied()
}

/// How the rounds of a plan are judged, which sets the effect they can detect.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Judged {
    /// A fixed number of rounds and the paired signed-rank verdict ([`mde_pct`]).
    Fixed(PowerSpec),
    /// A run until decided that reaches the plan's rounds at the latest: the confidence
    /// sequence's MDE at its last look ([`crate::sequential::mde80_at`]).
    Sequential(SequenceConfig),
    /// A run until decided with α spent over the plan's rounds: the repeated interval's
    /// MDE at its last look ([`crate::sequential::spending::mde80_at`]).
    Spending(crate::sequential::spending::Design),
}

impl Judged {
    /// The MDE in percent of `rounds` rounds with log-ratio sd `sd_log`; `None` when the
    /// rounds are too few for an interval.
    pub fn mde_pct(&self, rounds: usize, sd_log: f64) -> Option<f64> {
        match self {
            Judged::Fixed(spec) => mde_pct(rounds, sd_log, spec),
            Judged::Sequential(cfg) => {
                crate::sequential::mde80_at(rounds, sd_log, cfg).map(|m| 100.0 * m.exp_m1())
            }
            Judged::Spending(design) => {
                crate::sequential::spending::mde80_at(design, rounds, sd_log)
                    .map(|m| 100.0 * m.exp_m1())
            }
        }
    }
}

/// The plan of smallest MDE whose wall time fits in `wall_sec`: for each trial length of
/// `seconds`, as many rounds as fit (`variants` trials of T + `overhead_sec` each), judged
/// by `judged`. `None` when no length fits enough rounds for an interval. This is the
/// prediction "what an experiment of 10 (30) minutes can detect on this machine".
pub fn best_within(
    model: &NoiseModel,
    overhead_sec: f64,
    variants: usize,
    wall_sec: f64,
    seconds: &[f64],
    judged: &Judged,
) -> Option<Plan> {
    seconds
        .iter()
        .filter(|t| **t > 0.0 && t.is_finite())
        .filter_map(|&t| {
            let round = variants as f64 * (t + overhead_sec.max(0.0));
            let rounds = (wall_sec / round).floor();
            if !(rounds >= 2.0 && rounds.is_finite()) {
                return None;
            }
            let rounds = rounds.min(1e6) as usize;
            let mde = judged.mde_pct(rounds, model.sd_at(t))?;
            Some(Plan {
                rounds,
                trial_sec: t,
                mde_pct: mde,
                wall_sec: rounds as f64 * round,
            })
        })
        .min_by(|a, b| a.mde_pct.total_cmp(&b.mde_pct))
}

/// P(X ≤ k) for X ~ Binomial(n, p), summed in logs. O(k).
fn binomial_cdf(k: usize, n: usize, p: f64) -> f64 {
    if p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return if k >= n { 1.0 } else { 0.0 };
    }
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut log_choose = 0.0f64; // ln C(n, 0)
    let mut sum = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            log_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        sum += (log_choose + i as f64 * lp + (n - i) as f64 * lq).exp();
    }
    sum.min(1.0)
}

/// The Clopper–Pearson (exact) interval of a proportion: `k` successes in `n` trials at
/// `confidence`. Found by bisection on the binomial distribution. `(0, 1)` for n = 0.
pub fn clopper_pearson(k: usize, n: usize, confidence: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let a = (1.0 - confidence) / 2.0;
    let solve = |f: &dyn Fn(f64) -> f64| {
        // f decreases in p; find p with f(p) = a.
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if f(mid) > a {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    };
    let low = if k == 0 {
        0.0
    } else {
        // P(X ≥ k | p) = a, increasing in p: use 1 − P(X ≥ k) = P(X ≤ k − 1), decreasing.
        solve(&|p| binomial_cdf(k - 1, n, p) - (1.0 - a) + a)
    };
    let high = if k >= n {
        1.0
    } else {
        solve(&|p| binomial_cdf(k, n, p))
    };
    (low, high)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// METHOD §6.3: at an observed 5 % of 200, the Clopper–Pearson 95 % interval is
    /// [2.4, 9.0] %.
    #[test]
    fn clopper_pearson_matches_the_method_note() {
        let (lo, hi) = clopper_pearson(10, 200, 0.95);
        assert!(
            (lo - 0.0243).abs() < 0.001 && (hi - 0.0900).abs() < 0.001,
            "{lo} {hi}"
        );
        assert_eq!(clopper_pearson(0, 40, 0.95).0, 0.0);
        assert_eq!(clopper_pearson(40, 40, 0.95).1, 1.0);
    }

    #[test]
    fn descriptors() {
        assert!((cv(&[9.0, 10.0, 11.0]).unwrap() - 0.1).abs() < 1e-12);
        assert_eq!(cv(&[1.0]), None);
        let trend: Vec<f64> = (0..20).map(f64::from).collect();
        assert!(lag1_autocorrelation(&trend).unwrap() > 0.8);
        let alternating: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        assert!(lag1_autocorrelation(&alternating).unwrap() < -0.8);
        assert_eq!(outliers(&[1.0, 1.1, 0.9, 1.0, 1.05, 9.0], 3.5), vec![5]);
        assert!(outliers(&[1.0, 1.0, 1.0, 5.0], 3.5).is_empty());
    }

    #[test]
    fn the_fit_recovers_a_square_root_law_and_clamps_the_slope() {
        let pts: Vec<(f64, f64)> = [0.5f64, 1.0, 2.0]
            .iter()
            .map(|t| (*t, 0.02 * t.powf(-0.5)))
            .collect();
        let m = NoiseModel::fit(&pts).unwrap();
        assert!(
            (m.b - 0.5).abs() < 1e-9 && (m.a - 0.02).abs() < 1e-9,
            "{m:?}"
        );
        // Noise that grows with the duration is held flat; faster than √T is held at √T.
        let up = NoiseModel::fit(&[(1.0, 0.01), (2.0, 0.02)]).unwrap();
        assert_eq!(up.b, 0.0);
        let fast = NoiseModel::fit(&[(1.0, 0.04), (4.0, 0.01)]).unwrap();
        assert_eq!(fast.b, 0.5);
        // One duration: flat.
        let one = NoiseModel::fit(&[(1.0, 0.01)]).unwrap();
        assert!((one.a - 0.01).abs() < 1e-15 && one.b == 0.0, "{one:?}");
        assert!(NoiseModel::fit(&[(1.0, 0.0)]).is_none());
    }

    #[test]
    fn the_table_is_monotone_and_the_cheapest_plan_reaches_the_target() {
        let model = NoiseModel { a: 0.02, b: 0.4 };
        let spec = PowerSpec::default();
        let table = budget_table(&model, 0.5, 2, &TABLE_ROUNDS, &TABLE_SECONDS, &spec);
        assert_eq!(table.len(), TABLE_ROUNDS.len() * TABLE_SECONDS.len());
        for a in &table {
            for b in &table {
                if a.rounds <= b.rounds && a.trial_sec <= b.trial_sec {
                    assert!(a.mde_pct >= b.mde_pct - 1e-12, "{a:?} {b:?}");
                    assert!(a.wall_sec <= b.wall_sec + 1e-12);
                }
            }
        }
        let best = cheapest(&table, 1.0).unwrap();
        assert!(best.mde_pct <= 1.0);
        assert!(table
            .iter()
            .filter(|p| p.mde_pct <= 1.0)
            .all(|p| p.wall_sec >= best.wall_sec));
        assert!(cheapest(&table, 1e-6).is_none());
    }

    /// Within a wall time the plan of smallest MDE is found; a run until decided pays
    /// for looking at any time with a wider interval, so it predicts a larger MDE for the
    /// same rounds; more time never predicts a larger MDE.
    #[test]
    fn the_best_plan_within_a_wall_time() {
        let model = NoiseModel { a: 0.05, b: 0.5 };
        let fixed = Judged::Fixed(PowerSpec::default());
        let seq = Judged::Sequential(SequenceConfig::default());
        let p10 = best_within(&model, 0.5, 2, 600.0, &TABLE_SECONDS, &fixed).unwrap();
        let p30 = best_within(&model, 0.5, 2, 1800.0, &TABLE_SECONDS, &fixed).unwrap();
        assert!(p10.wall_sec <= 600.0 && p30.wall_sec <= 1800.0);
        assert!(p30.mde_pct < p10.mde_pct, "{p10:?} {p30:?}");
        for &t in &TABLE_SECONDS {
            let n = (600.0 / (2.0 * (t + 0.5))).floor() as usize;
            if let Some(m) = mde_pct(n, model.sd_at(t), &PowerSpec::default()) {
                assert!(m >= p10.mde_pct - 1e-12, "{t} s: {m} vs {p10:?}");
            }
        }
        let s10 = best_within(&model, 0.5, 2, 600.0, &TABLE_SECONDS, &seq).unwrap();
        assert!(s10.mde_pct > p10.mde_pct, "{s10:?} {p10:?}");
        assert_eq!(
            best_within(&model, 0.5, 2, 1.0, &TABLE_SECONDS, &fixed),
            None
        );
    }

    /// The table's MDE is the signed-rank test's, somewhat above the t-based formula at
    /// few rounds (the exact test's p-value has a floor) and close to it at many.
    #[test]
    fn the_table_uses_the_exact_tests_mde() {
        let spec = PowerSpec::default();
        let t_based = |n| 100.0 * crate::power::mde_paired(n, 0.01, &spec).unwrap().exp_m1();
        let six = mde_pct(6, 0.01, &spec).unwrap();
        assert!(six > 1.1 * t_based(6), "{six} vs {}", t_based(6));
        let thirty = mde_pct(30, 0.01, &spec).unwrap();
        assert!(
            (thirty / t_based(30) - 1.0).abs() < 0.1,
            "{thirty} vs {}",
            t_based(30)
        );
        assert!(mde_pct(5, 0.01, &spec).is_none());
    }
}
