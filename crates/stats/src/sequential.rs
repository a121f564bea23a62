//! Run until decided: an anytime-valid interval for the mean of the per-round log ratios,
//! and the stopping rule built on it.
//!
//! **Method.** Lai's confidence sequence for the mean of normal observations with unknown
//! variance (T. L. Lai, "On confidence sequences", Annals of Statistics 4(2), 1976), in
//! the form of a scale-invariant normal-mixture martingale as discussed by Howard,
//! Ramdas, McAuliffe and Sekhon ("Time-uniform, nonparametric, nonasymptotic confidence
//! sequences", Annals of Statistics 49(2), 2021). For the hypothesis "the mean is μ",
//! with y_i = d_i − μ, A = Σ y_i², B = Σ y_i after t rounds, mixing the standardized
//! effect θ = μ/σ over N(0, 1/ρ) and the scale over dσ/σ gives the likelihood ratio
//!
//! ```text
//! M_t(μ) = √(ρ / (t + ρ)) · (1 − B² / ((t + ρ)·A))^(−t/2),
//! ```
//!
//! a nonnegative martingale under the hypothesis (with respect to the scale-invariant
//! filtration), so by Ville's inequality the chance that it *ever* reaches 1/α is at most
//! α. The values of μ it has not rejected after round t are the interval
//!
//! ```text
//! d̄_t ± √( c_t · V_t / (t · (t − c_t)) ),   c_t = (t + ρ)·(1 − (α²ρ/(t + ρ))^(1/t)),
//! ```
//!
//! with V_t = Σ (d_i − d̄_t)², bounded once t > c_t (six rounds and more at α = 5 % and
//! the default ρ). However often it is looked at, and whenever the run stops, the chance
//! that it ever excludes the true mean is at most α: stopping when it excludes zero keeps
//! the false-positive rate, which a fixed-sample test repeated after every round does not
//! (METHOD §5 "Sequential looks": three looks at |z| ≥ 1.96 already give 10.7 %).
//!
//! **Tuning.** ρ sets the round at which the interval is tightest relative to a
//! fixed-sample one; the default aims at about 20 rounds (ρ = 20 / (−2 ln α +
//! ln(1 − 2 ln α)), Howard et al. §3.5). The price of looking at any time is width: at
//! 20 rounds the interval is about 1.6 times as wide as the fixed-sample t interval.
//!
//! **Stopping rule** ([`decide`]): stop *different* when the interval excludes zero,
//! *equivalent* when it lies inside ±margin, otherwise go on until the caller's round or
//! time limit (then *undecided*, reported with [`Look::mde80`]).
//!
//! The method assumes the round's log ratios are independent with a common mean; it is
//! exact for normal noise. [`simulate`] measures its false-positive rate and power under
//! normal and heavy-tailed rounds (the figures are in BENCHMARKS.md). Cost: O(n) per
//! look, O(1) with [`Running`].

use crate::dist::normal_quantile;
use serde::{Deserialize, Serialize};

/// Settings of a confidence sequence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SequenceConfig {
    /// Probability that the interval ever excludes the true mean (0.05).
    pub alpha: f64,
    /// Mixture precision ρ of the standardized effect.
    pub rho: f64,
}

impl SequenceConfig {
    /// α with ρ tuned for a tight interval near `rounds` rounds.
    pub fn tuned(alpha: f64, rounds: f64) -> Self {
        let l = -2.0 * alpha.ln();
        SequenceConfig {
            alpha,
            rho: rounds.max(1.0) / (l + (1.0 + l).ln()),
        }
    }
}

impl Default for SequenceConfig {
    /// α = 5 %, tightest near 20 rounds.
    fn default() -> Self {
        SequenceConfig::tuned(0.05, 20.0)
    }
}

/// The interval after one look, on the log scale (d = ln B − ln A).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    /// Rounds seen.
    pub n: usize,
    /// Mean of the log ratios.
    pub mean: f64,
    /// Lower bound (−∞ while unbounded).
    pub low: f64,
    /// Upper bound (+∞ while unbounded).
    pub high: f64,
    /// Sample standard deviation of the log ratios (0 below two rounds).
    pub sd: f64,
}

impl Look {
    /// True once the interval is finite.
    pub fn is_bounded(&self) -> bool {
        self.low.is_finite() && self.high.is_finite()
    }

    /// Half the interval's width (∞ while unbounded).
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }

    /// The effect this run could detect at this look with about 80 % power: the
    /// sequential half-width plus z₀.₈₀ standard errors (the estimate then clears the
    /// boundary four times in five). Log scale; `None` while unbounded.
    pub fn mde80(&self) -> Option<f64> {
        if !self.is_bounded() || self.n < 2 {
            return None;
        }
        Some(self.half_width() + normal_quantile(0.8) * self.sd / (self.n as f64).sqrt())
    }
}

/// What the stopping rule says after a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Keep going.
    Continue,
    /// The interval excludes zero and lies above it.
    Higher,
    /// The interval excludes zero and lies below it.
    Lower,
    /// The interval lies inside ±margin.
    Equivalent,
}

impl Decision {
    /// True for every decision but [`Decision::Continue`].
    pub fn is_decided(self) -> bool {
        self != Decision::Continue
    }

    /// `"continue"`, `"higher"`, `"lower"` or `"equivalent"` (as stored).
    pub fn name(self) -> &'static str {
        match self {
            Decision::Continue => "continue",
            Decision::Higher => "higher",
            Decision::Lower => "lower",
            Decision::Equivalent => "equivalent",
        }
    }
}

/// Running sums of the log ratios, for an O(1) look after each round (Welford).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Running {
    n: usize,
    mean: f64,
    m2: f64,
}

impl Running {
    /// Adds one round's log ratio.
    pub fn push(&mut self, d: f64) {
        self.n += 1;
        let delta = d - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (d - self.mean);
    }

    /// Rounds so far.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The confidence sequence's interval now.
    pub fn look(&self, cfg: &SequenceConfig) -> Look {
        interval(self.n, self.mean, self.m2, cfg)
    }

    /// The interval d̄ ± `crit`·s/√n: a group-sequential look's repeated confidence
    /// interval with the look's t critical value ([`spending::t_critical`]); unbounded
    /// while `crit` is infinite or the rounds have no spread.
    pub fn look_at(&self, crit: f64) -> Look {
        let t = self.n as f64;
        let sd = if self.n >= 2 {
            (self.m2 / (t - 1.0)).sqrt()
        } else {
            0.0
        };
        let half = crit * sd / t.sqrt();
        let bounded = self.n >= 2 && self.m2 > 0.0 && half.is_finite();
        Look {
            n: self.n,
            mean: self.mean,
            low: if bounded {
                self.mean - half
            } else {
                f64::NEG_INFINITY
            },
            high: if bounded {
                self.mean + half
            } else {
                f64::INFINITY
            },
            sd,
        }
    }

    /// The fixed-sample two-sided t test at level `alpha` on the rounds so far (what
    /// "peeking" repeats after every round): true when it rejects a zero mean.
    pub fn t_rejects(&self, alpha: f64) -> bool {
        if self.n < 2 || self.m2 <= 0.0 {
            return false;
        }
        let df = (self.n - 1) as f64;
        let se = (self.m2 / df / self.n as f64).sqrt();
        let crit = crate::dist::student_t_quantile(1.0 - alpha / 2.0, df);
        (self.mean / se).abs() > crit
    }
}

/// The confidence sequence's interval for the mean of `d` (the per-round log ratios so
/// far, in round order; the interval depends only on their count, mean and spread).
pub fn confidence_sequence(d: &[f64], cfg: &SequenceConfig) -> Look {
    let mut r = Running::default();
    for &x in d.iter().filter(|x| x.is_finite()) {
        r.push(x);
    }
    r.look(cfg)
}

fn interval(n: usize, mean: f64, m2: f64, cfg: &SequenceConfig) -> Look {
    let t = n as f64;
    let sd = if n >= 2 { (m2 / (t - 1.0)).sqrt() } else { 0.0 };
    let unbounded = Look {
        n,
        mean,
        low: f64::NEG_INFINITY,
        high: f64::INFINITY,
        sd,
    };
    // No spread means no scale to judge the mean against: nothing is excluded.
    if n < 2 || m2 <= 0.0 || !(cfg.alpha > 0.0 && cfg.alpha < 1.0) || cfg.rho <= 0.0 {
        return unbounded;
    }
    let Some(k) = boundary(t, cfg) else {
        return unbounded;
    };
    let half = k * sd;
    Look {
        n,
        mean,
        low: mean - half,
        high: mean + half,
        sd,
    }
}

/// The first round count at which the interval can be finite (six at α = 5 % and the
/// default ρ): fewer rounds can never decide anything.
pub fn first_bounded_round(cfg: &SequenceConfig) -> usize {
    (2..10_000)
        .find(|&n| boundary(n as f64, cfg).is_some())
        .unwrap_or(10_000)
}

/// The multiplier k_t of the interval's half-width, k_t · sd (with V = (t − 1)·sd²):
/// `None` while the interval is unbounded.
fn boundary(t: f64, cfg: &SequenceConfig) -> Option<f64> {
    let q = (cfg.alpha * cfg.alpha * cfg.rho / (t + cfg.rho)).powf(1.0 / t);
    let c = (t + cfg.rho) * (1.0 - q);
    (t > c).then(|| (c * (t - 1.0) / (t * (t - c))).sqrt())
}

/// The effect a run until decided of `n` rounds whose log ratios have spread `sd` detects
/// with about 80 % power at its last look ([`Look::mde80`] before the rounds are run:
/// the sequential half-width plus z₀.₈₀ standard errors). Log scale; `None` while the
/// interval is unbounded at `n`. Cost: O(1).
pub fn mde80_at(n: usize, sd: f64, cfg: &SequenceConfig) -> Option<f64> {
    if n < 2 || !(sd.is_finite() && sd >= 0.0) {
        return None;
    }
    let k = boundary(n as f64, cfg)?;
    Some(k * sd + normal_quantile(0.8) * sd / (n as f64).sqrt())
}

/// The smallest round count n in `from..=cap` at which the half-width at spread `sd`
/// falls below `target` (both log scale), for predicting when a run will decide;
/// `None` if it does not within `cap`. Cost: O(log cap) looks (the half-width only
/// shrinks with n beyond the first bounded round).
pub fn rounds_to_width(
    cfg: &SequenceConfig,
    sd: f64,
    target: f64,
    from: usize,
    cap: usize,
) -> Option<usize> {
    let fits = |n: usize| boundary(n as f64, cfg).is_some_and(|k| k * sd < target);
    let mut lo = from.max(first_bounded_round(cfg));
    if !(target > 0.0 && sd.is_finite()) || lo > cap || !fits(cap) {
        return None;
    }
    let mut hi = cap;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// A run of the log ratios `d` under `rule` looked at after every round, a spending
/// design planned for `d.len()` rounds: the first look that decides (other than
/// equivalent, with no margin), or else the last bounded look; `None` when no look is
/// bounded. Cost: one design computation and O(n) looks.
pub fn replay(rule: &Rule, d: &[f64]) -> Option<(Look, Decision)> {
    let schedule = match rule {
        Rule::Spending(design) => spending::fixed_schedule(design, d.len()),
        Rule::Anytime(_) => Vec::new(),
    };
    let mut r = Running::default();
    let mut last = None;
    for &x in d.iter().filter(|x| x.is_finite()) {
        r.push(x);
        let look = match rule {
            Rule::Anytime(cfg) => r.look(cfg),
            Rule::Spending(_) => r.look_at(schedule.get(r.n()).copied().unwrap_or(f64::INFINITY)),
        };
        if !look.is_bounded() {
            continue;
        }
        let decision = decide(&look, None);
        last = Some((look, decision));
        if decision.is_decided() {
            break;
        }
    }
    last
}

/// The stopping rule: different when the interval excludes zero, equivalent when it lies
/// inside ±`margin` (a fraction of the ratio, 0.02 = ±2 %), otherwise continue.
pub fn decide(look: &Look, margin: Option<f64>) -> Decision {
    if !look.is_bounded() {
        return Decision::Continue;
    }
    if look.low > 0.0 {
        return Decision::Higher;
    }
    if look.high < 0.0 {
        return Decision::Lower;
    }
    if let Some(m) = margin.filter(|m| *m > 0.0 && *m < 1.0) {
        if look.low > (1.0 - m).ln() && look.high < (1.0 + m).ln() {
            return Decision::Equivalent;
        }
    }
    Decision::Continue
}

/// The stopping rule of a run until decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// Lai's confidence sequence: valid for any horizon, hence wider.
    Anytime(SequenceConfig),
    /// A group-sequential design spending its α over the planned rounds
    /// ([`spending`]).
    Spending(spending::Design),
}

impl Rule {
    /// The overall α of the rule.
    pub fn alpha(&self) -> f64 {
        match self {
            Rule::Anytime(c) => c.alpha,
            Rule::Spending(d) => d.alpha,
        }
    }
}

/// `until_rule`: how a run until decided judges its looks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UntilRule {
    /// `"spending"` (the default): a group-sequential design spending α over the planned
    /// rounds, O'Brien–Fleming type.
    #[default]
    Spending,
    /// `"spending-pocock"`: the same with Pocock-type spending (more of α early).
    SpendingPocock,
    /// `"anytime"`: Lai's confidence sequence, valid for any horizon.
    Anytime,
}

impl UntilRule {
    /// The words of the TOML key, in the order of the docs.
    pub const NAMES: [&'static str; 3] = ["spending", "spending-pocock", "anytime"];

    /// The rule of an experiment stored before `until_rule` existed.
    pub fn before_choice() -> UntilRule {
        UntilRule::Anytime
    }

    /// `"spending"`, `"spending-pocock"` or `"anytime"`.
    pub fn name(self) -> &'static str {
        match self {
            UntilRule::Spending => "spending",
            UntilRule::SpendingPocock => "spending-pocock",
            UntilRule::Anytime => "anytime",
        }
    }

    /// Reads back [`UntilRule::name`].
    pub fn from_name(name: &str) -> Option<UntilRule> {
        [
            UntilRule::Spending,
            UntilRule::SpendingPocock,
            UntilRule::Anytime,
        ]
        .into_iter()
        .find(|r| r.name() == name)
    }
}

pub mod simulate;
pub mod spending;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unbounded_until_enough_rounds() {
        let cfg = SequenceConfig::default();
        let d = [0.01, -0.02, 0.03, 0.0, 0.01];
        assert!(!confidence_sequence(&d, &cfg).is_bounded());
        let d: Vec<f64> = (0..8).map(|i| 0.01 * f64::from(i % 3) - 0.01).collect();
        assert!(confidence_sequence(&d, &cfg).is_bounded());
        // One round, or no spread: no scale, no interval.
        assert!(!confidence_sequence(&[0.1], &cfg).is_bounded());
        assert!(!confidence_sequence(&[0.1; 30], &cfg).is_bounded());
    }

    #[test]
    fn the_predicted_mde_is_the_looks() {
        let cfg = SequenceConfig::default();
        let d: Vec<f64> = (0..30).map(|i| 0.02 * f64::from(i % 5) - 0.04).collect();
        let look = confidence_sequence(&d, &cfg);
        let want = look.mde80().unwrap();
        assert!((mde80_at(30, look.sd, &cfg).unwrap() - want).abs() < 1e-12);
        assert_eq!(mde80_at(3, 0.1, &cfg), None);
    }

    #[test]
    fn interval_is_wider_than_the_fixed_t_interval_and_narrows() {
        let cfg = SequenceConfig::default();
        let d: Vec<f64> = (0..200)
            .map(|i| ((i * 37 % 11) as f64 - 5.0) / 50.0)
            .collect();
        let mut last = f64::INFINITY;
        for n in [10, 20, 50, 100, 200] {
            let look = confidence_sequence(&d[..n], &cfg);
            let t = crate::dist::student_t_quantile(0.975, (n - 1) as f64);
            let fixed = t * look.sd / (n as f64).sqrt();
            assert!(look.half_width() > fixed, "n {n}");
            assert!(look.half_width() < last, "n {n}");
            last = look.half_width();
        }
    }

    #[test]
    fn matches_the_closed_form_at_twenty_rounds() {
        // ρ = 2.5, α = 0.05, t = 20, V = 19 (sd 1): c = 22.5·(1 − (0.0025·2.5/22.5)^(1/20)).
        let cfg = SequenceConfig {
            alpha: 0.05,
            rho: 2.5,
        };
        let mut r = Running::default();
        for i in 0..20 {
            r.push(if i % 2 == 0 { 1.0 } else { -1.0 });
        }
        let look = r.look(&cfg);
        let v = 20.0;
        let c = 22.5 * (1.0 - (0.0025f64 * 2.5 / 22.5).powf(1.0 / 20.0));
        let want = (c * v / (20.0 * (20.0 - c))).sqrt();
        assert!((look.half_width() - want).abs() < 1e-12);
        assert!(look.mean.abs() < 1e-12);
    }

    #[test]
    fn first_bounded_round_and_prediction() {
        let cfg = SequenceConfig::default();
        assert_eq!(first_bounded_round(&cfg), 6);
        let n = rounds_to_width(&cfg, 0.15, 0.05, 6, 10_000).unwrap();
        let k = |n: usize| boundary(n as f64, &cfg).unwrap();
        assert!(k(n) * 0.15 < 0.05 && k(n - 1) * 0.15 >= 0.05, "{n}");
        assert_eq!(
            rounds_to_width(&cfg, 0.15, 0.05, n + 5, 10_000),
            Some(n + 5)
        );
        assert!(rounds_to_width(&cfg, 0.15, 0.0, 6, 10_000).is_none());
        assert!(rounds_to_width(&cfg, 0.15, 1e-4, 6, 100).is_none());
    }

    #[test]
    fn decisions() {
        let look = |low: f64, high: f64| Look {
            n: 10,
            mean: (low + high) / 2.0,
            low,
            high,
            sd: 0.1,
        };
        assert_eq!(decide(&look(0.01, 0.05), None), Decision::Higher);
        assert_eq!(decide(&look(-0.05, -0.01), Some(0.5)), Decision::Lower);
        assert_eq!(decide(&look(-0.01, 0.01), Some(0.02)), Decision::Equivalent);
        assert_eq!(decide(&look(-0.01, 0.01), None), Decision::Continue);
        assert_eq!(decide(&look(-0.03, 0.01), Some(0.02)), Decision::Continue);
        let open = Look {
            low: f64::NEG_INFINITY,
            high: f64::INFINITY,
            ..look(0.0, 0.0)
        };
        assert_eq!(decide(&open, Some(0.02)), Decision::Continue);
        assert!(open.mde80().is_none());
        assert!(look(-0.01, 0.01).mde80().unwrap() > 0.01);
    }
}
