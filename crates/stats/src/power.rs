//! Minimal detectable effect (80 % power) and sample-size planning.
//!
//! Sources: METHOD §6.2–6.3; the classical two-sample and paired power formulas
//! (e.g. Cohen 1988); Noether (1987), "Sample Size Determination for Some Common
//! Nonparametric Tests" (JASA 82); Hodges & Lehmann (1956) for the asymptotic relative
//! efficiency (ARE) of rank tests against t, 3/π ≈ 0.955 under normal data and ≥ 0.864
//! for any continuous distribution.
//!
//! - Paired: MDE = (t₁₋α/₂,ₙ₋₁ + t_power,ₙ₋₁)·s_d/√n.
//! - Unpaired: MDE = (t₁₋α/₂,ν + t_power,ν)·s·√(1/n_A + 1/n_B), ν = n_A + n_B − 2, with s
//!   the pooled standard deviation.
//! - Rank tests (signed-rank, Mann–Whitney, the HL intervals) need n/ARE observations for
//!   the power of a t test on n, so their MDE is the t-based one times 1/√ARE
//!   (× 1.023 at ARE = 3/π; at most × 1.076 at ARE = 0.864).
//!
//! All inputs and outputs are on the scale of the data given (log values give log-ratios).
//! Cost: O(1) per call (two t quantiles).

use crate::dist::{normal_quantile, student_t_quantile};

/// ARE of the Wilcoxon/Mann–Whitney tests against t under normal data, 3/π.
pub const ARE_NORMAL: f64 = 3.0 / std::f64::consts::PI;
/// Smallest ARE of the Wilcoxon tests against t over continuous distributions, 108/125.
pub const ARE_MIN: f64 = 0.864;

/// Power-analysis settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerSpec {
    /// Two-sided significance level α (0.05).
    pub alpha: f64,
    /// Power 1 − β (0.80).
    pub power: f64,
    /// ARE of the test actually used against t: 1 for a t test, [`ARE_NORMAL`] for the
    /// rank tests (the default), [`ARE_MIN`] for the worst case.
    pub are: f64,
}

impl Default for PowerSpec {
    fn default() -> Self {
        PowerSpec {
            alpha: 0.05,
            power: 0.80,
            are: ARE_NORMAL,
        }
    }
}

impl PowerSpec {
    fn multiplier(&self, df: f64) -> f64 {
        (student_t_quantile(1.0 - self.alpha / 2.0, df) + student_t_quantile(self.power, df))
            / self.are.sqrt()
    }
}

/// MDE of a paired design with `n` pairs whose differences have standard deviation
/// `sd_diff`. `None` for n < 2 or a non-finite/negative sd. O(1).
pub fn mde_paired(n: usize, sd_diff: f64, spec: &PowerSpec) -> Option<f64> {
    if n < 2 || !(sd_diff >= 0.0 && sd_diff.is_finite()) {
        return None;
    }
    Some(spec.multiplier((n - 1) as f64) * sd_diff / (n as f64).sqrt())
}

/// Largest number of pairs whose signed-rank MDE is found by simulation; above it the
/// t-based MDE over √ARE (which it converges to) is used.
pub const SIGNED_RANK_SIMULATED_UP_TO: usize = 60;

/// Simulated samples per trial effect when finding the signed-rank MDE.
const SIM_DRAWS: usize = 6000;

/// MDE of the test the paired verdict actually uses — the exact Wilcoxon signed-rank
/// test, i.e. the Hodges–Lehmann interval excluding 0 — for `n` pairs whose differences
/// have standard deviation `sd_diff`, at two-sided level 1 − `confidence` and `power`.
///
/// The t-based formula overstates what few pairs can detect: the exact test's p-value
/// cannot go below 2/2ⁿ (0.031 at n = 6), so at n = 6 an effect equal to the t-based MDE
/// is detected about 64 % of the time, not 80 %. Here the MDE is the effect θ·sd at
/// which the exact test rejects in `power` of normal samples, θ found by bisection over
/// [`SIM_DRAWS`] seeded samples (the same samples for every θ, so the power curve is
/// monotone), cached per (n, confidence, power); above
/// [`SIGNED_RANK_SIMULATED_UP_TO`] pairs, the t-based MDE over √ARE. `None` below the
/// smallest n with an interval at this confidence. Cost: O(draws · n log n · 40) once per
/// n, then O(1).
pub fn mde_signed_rank(n: usize, sd_diff: f64, confidence: f64, power: f64) -> Option<f64> {
    if !(sd_diff >= 0.0 && sd_diff.is_finite() && (0.0..1.0).contains(&confidence)) {
        return None;
    }
    if n > SIGNED_RANK_SIMULATED_UP_TO {
        let spec = PowerSpec {
            alpha: 1.0 - confidence,
            power,
            are: ARE_NORMAL,
        };
        return mde_paired(n, sd_diff, &spec);
    }
    signed_rank_theta(n, confidence, power).map(|t| t * sd_diff)
}

type ThetaKey = (usize, u64, u64);

fn theta_cache() -> &'static std::sync::Mutex<std::collections::HashMap<ThetaKey, Option<f64>>> {
    static CACHE: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<ThetaKey, Option<f64>>>,
    > = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The standardized effect θ = δ/sd that the exact signed-rank test detects with
/// `power` at n pairs.
fn signed_rank_theta(n: usize, confidence: f64, power: f64) -> Option<f64> {
    let key = (n, confidence.to_bits(), power.to_bits());
    if let Some(v) = theta_cache().lock().ok().and_then(|c| c.get(&key).copied()) {
        return v;
    }
    let v = simulate_theta(n, confidence, power);
    if let Ok(mut c) = theta_cache().lock() {
        c.insert(key, v);
    }
    v
}

fn simulate_theta(n: usize, confidence: f64, power: f64) -> Option<f64> {
    use rand::SeedableRng as _;
    use rand_distr::{Distribution as _, StandardNormal};
    let (c, _) = crate::rank::signed_rank_critical(n, (1.0 - confidence) / 2.0)?;
    let total = (n * (n + 1) / 2) as u64;
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(0x5157_6e65_6420_726b ^ n as u64);
    let draws: Vec<Vec<f64>> = (0..SIM_DRAWS)
        .map(|_| (0..n).map(|_| StandardNormal.sample(&mut rng)).collect())
        .collect();
    let mut buf: Vec<(f64, bool)> = Vec::with_capacity(n);
    let mut power_at = |theta: f64| -> f64 {
        let mut hits = 0usize;
        for z in &draws {
            buf.clear();
            buf.extend(z.iter().map(|x| ((x + theta).abs(), x + theta > 0.0)));
            buf.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
            let t_plus: u64 = buf
                .iter()
                .enumerate()
                .filter(|(_, (_, pos))| *pos)
                .map(|(i, _)| i as u64 + 1)
                .sum();
            // The interval excludes 0 exactly when T⁺ ≤ c or T⁺ ≥ N − c.
            if t_plus <= c || t_plus >= total - c {
                hits += 1;
            }
        }
        hits as f64 / SIM_DRAWS as f64
    };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while power_at(hi) < power {
        hi *= 2.0;
        if hi > 1e3 {
            return None;
        }
    }
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if power_at(mid) >= power {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// MDE of an unpaired design with `n_a` and `n_b` trials and pooled standard deviation
/// `sd`. `None` if n_a + n_b < 3, either is 0, or the sd is not finite and ≥ 0. O(1).
pub fn mde_unpaired(n_a: usize, n_b: usize, sd: f64, spec: &PowerSpec) -> Option<f64> {
    if n_a == 0 || n_b == 0 || n_a + n_b < 3 || !(sd >= 0.0 && sd.is_finite()) {
        return None;
    }
    let df = (n_a + n_b - 2) as f64;
    Some(spec.multiplier(df) * sd * (1.0 / n_a as f64 + 1.0 / n_b as f64).sqrt())
}

/// Pairs needed so that the MDE is at most `delta` given the sd of differences
/// (normal-quantile version, plus 2 for the t correction: ≈ 7.85·s²/δ² + 2 at the
/// defaults, then ÷ ARE). O(1).
pub fn pairs_needed(sd_diff: f64, delta: f64, spec: &PowerSpec) -> f64 {
    let z = normal_quantile(1.0 - spec.alpha / 2.0) + normal_quantile(spec.power);
    (z * z * sd_diff * sd_diff / (delta * delta)) / spec.are + 2.0
}

/// Noether's total sample size for the Mann–Whitney test: N = (z₁₋α/₂ + z_power)² /
/// (12·κ(1−κ)·(p − ½)²), where p = P(X < Y) under the alternative and κ the fraction
/// of the N in the first group. O(1).
pub fn noether_total_n(p_less: f64, kappa: f64, spec: &PowerSpec) -> f64 {
    let z = normal_quantile(1.0 - spec.alpha / 2.0) + normal_quantile(spec.power);
    z * z / (12.0 * kappa * (1.0 - kappa) * (p_less - 0.5) * (p_less - 0.5))
}

/// The power, at a true effect `effect`, of a design whose MDE at `spec.power` is `mde`
/// (both on one scale, e.g. log ratios): by the normal shift model that defines an MDE,
/// the MDE is (z₁₋α/₂ + z_power)·σ/√n, so the power at δ is
/// Φ((z₁₋α/₂ + z_power)·|δ|/MDE − z₁₋α/₂) (the far tail left out). Any MDE of this
/// crate can be read back this way: for a design judged by another interval (a
/// sequential one), it is the normal approximation of that interval's power curve.
/// NaN when `mde` is not a positive number. O(1).
pub fn power_at(effect: f64, mde: f64, spec: &PowerSpec) -> f64 {
    if !(mde > 0.0 && mde.is_finite() && effect.is_finite()) {
        return f64::NAN;
    }
    let z_alpha = normal_quantile(1.0 - spec.alpha / 2.0);
    let z_power = normal_quantile(spec.power);
    crate::dist::normal_cdf((z_alpha + z_power) * effect.abs() / mde - z_alpha)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_at_reads_an_mde_back() {
        let spec = PowerSpec::default();
        // At the MDE, the power the MDE was made for; at zero effect, about α/2; twice
        // the MDE, far more; either sign alike.
        assert!((power_at(0.02, 0.02, &spec) - 0.80).abs() < 1e-9);
        assert!((power_at(-0.02, 0.02, &spec) - 0.80).abs() < 1e-9);
        assert!((power_at(0.0, 0.02, &spec) - 0.025).abs() < 1e-3);
        assert!(power_at(0.04, 0.02, &spec) > 0.99);
        // Half the MDE: Φ(2.80/2 − 1.96) = Φ(−0.558) ≈ 0.288.
        assert!((power_at(0.01, 0.02, &spec) - 0.2884).abs() < 1e-3);
        assert!(power_at(0.01, 0.0, &spec).is_nan());
        assert!(power_at(0.01, f64::NAN, &spec).is_nan());
    }

    #[test]
    fn unpaired_multipliers_match_method_sheet() {
        let t = PowerSpec {
            are: 1.0,
            ..PowerSpec::default()
        };
        for (n, k) in [(5, 2.02), (6, 1.79), (10, 1.33), (20, 0.91), (30, 0.74)] {
            let got = mde_unpaired(n, n, 1.0, &t).unwrap();
            assert!((got - k).abs() < 0.006, "n={n}: {got}");
        }
    }

    #[test]
    fn paired_mde_matches_method_sheet() {
        let t = PowerSpec {
            are: 1.0,
            ..PowerSpec::default()
        };
        // CV 1 %, ρ = 0: s_d = √2 %.
        for (n, want) in [(6, 2.02), (10, 1.41), (20, 0.93)] {
            let got = mde_paired(n, 2f64.sqrt(), &t).unwrap();
            assert!((got - want).abs() < 0.015, "n={n}: {got}");
        }
        let rank = mde_paired(10, 1.0, &PowerSpec::default()).unwrap();
        let plain = mde_paired(10, 1.0, &t).unwrap();
        assert!((rank / plain - 1.0233).abs() < 1e-3);
        assert_eq!(mde_paired(1, 1.0, &t), None);
    }

    #[test]
    fn planning_formulas() {
        let t = PowerSpec {
            are: 1.0,
            ..PowerSpec::default()
        };
        assert!((pairs_needed(1.0, 1.0, &t) - 9.85).abs() < 0.01);
        let n = noether_total_n(0.8, 0.5, &t);
        assert!((n - 29.0).abs() < 0.5, "{n}");
    }
}
