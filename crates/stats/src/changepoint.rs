//! Change points in a series of measurements: where the level of a history shifts.
//!
//! Method: E-Divisive means (Matteson & James, "A Nonparametric Approach for Multiple
//! Change Point Analysis of Multivariate Data", JASA 109(505), 2014), the method MongoDB's
//! performance CI published for finding regressions in nightly histories (Daly et al.,
//! "The Use of Change Point Detection to Identify Software Performance Regressions in a
//! Continuous Integration System", ICPE 2020).
//!
//! For two samples X (n values) and Y (m values) the empirical energy divergence is
//!
//! ```text
//! Ê(X, Y) = 2/(n·m) Σ|xᵢ − yⱼ|^α − 1/C(n,2) Σ_{i<k}|xᵢ − xₖ|^α − 1/C(m,2) Σ_{j<k}|yⱼ − yₖ|^α
//! ```
//!
//! and the scaled statistic is Q̂ = n·m/(n + m) · Ê, with 0 < α < 2 (α = 1 by default).
//! Within a segment Z₁…Z_T the candidate change is the (τ, κ) that maximises Q̂ between
//! X = Z₁…Z_τ and Y = Z_{τ+1}…Z_κ; the change point is τ. The procedure is hierarchical:
//! with k − 1 change points accepted, the best candidate over all k segments is found
//! and tested by permutation — the values are shuffled within each current segment, the
//! search is run again on the shuffled series, and the p-value is
//! (1 + #{shuffled maxima ≥ observed}) / (R + 1). A candidate with p above the chosen
//! significance level ends the search.
//!
//! False alarms: on a series whose values are exchangeable (no change, independent
//! draws of one distribution) the first permutation test is exact, so the probability
//! of reporting any change point in a flat series is at most the significance level
//! (5 % by default) whatever the distribution. Autocorrelated series are not
//! exchangeable and raise that rate; BENCHMARKS.md §13 gives the measured figures.
//!
//! Each change point carries the means of the segments on either side, the effect
//! 100·(after/before − 1) and a seeded percentile-bootstrap interval of that effect
//! (Efron & Tibshirani 1993, ch. 13), each segment resampled on its own.
//!
//! Cost: O(T²) memory for the distance prefix sums, O(T²) time per search, so
//! O((R + 1)·T²) per accepted change point plus one final search; 100 points with
//! R = 199 take a few milliseconds.

use crate::error::{check_finite, StatsError};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::ops::Range;

/// How the change points of a series are searched and tested.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePointConfig {
    /// A candidate is accepted when its permutation p-value is at most this (0 < s < 1).
    pub significance: f64,
    /// Number of permutations per test (at least 19, so that p can reach 0.05).
    pub permutations: usize,
    /// Fewest points a segment may hold (at least 2).
    pub min_segment: usize,
    /// The exponent α of the distances, 0 < α < 2.
    pub exponent: f64,
    /// Level of the effect's interval (0 < c < 1).
    pub confidence: f64,
    /// Bootstrap resamples for the effect's interval (at least 100).
    pub resamples: usize,
    /// Seed of the permutations and of the bootstrap; the same seed gives the same answer.
    pub seed: u64,
}

impl Default for ChangePointConfig {
    fn default() -> Self {
        Self {
            significance: 0.05,
            permutations: 199,
            min_segment: 5,
            exponent: 1.0,
            confidence: 0.95,
            resamples: 2000,
            seed: 0x5eed_c4a9,
        }
    }
}

/// One shift in the level of a series.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePoint {
    /// Index of the first value of the new level.
    pub index: usize,
    /// Values of the segment before the change (up to the previous change point).
    pub before: Range<usize>,
    /// Values of the segment after the change (up to the next change point).
    pub after: Range<usize>,
    /// Mean of the segment before.
    pub mean_before: f64,
    /// Mean of the segment after.
    pub mean_after: f64,
    /// 100·(mean_after / mean_before − 1); infinite when mean_before is 0.
    pub effect_pct: f64,
    /// Bootstrap interval of `effect_pct` at the configured level.
    pub ci_pct: (f64, f64),
    /// Permutation p-value of the test that accepted this change point.
    pub p_value: f64,
    /// The statistic Q̂ of that test.
    pub statistic: f64,
}

/// Finds the change points of `xs`, in order of position.
///
/// # Errors
/// [`StatsError::NonFinite`] for a NaN or infinite value; [`StatsError::BadParameter`]
/// for a configuration out of range. A series too short to split (fewer than two
/// minimal segments) has no change points and is not an error.
pub fn change_points(xs: &[f64], cfg: &ChangePointConfig) -> Result<Vec<ChangePoint>, StatsError> {
    check_finite("series", xs)?;
    check_config(cfg)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(cfg.seed);
    let mut bounds = vec![0, xs.len()];
    let mut tests: Vec<(usize, f64, f64)> = Vec::new();
    let mut shuffled = xs.to_vec();
    let mut prefix = Prefix::new(xs.len());
    loop {
        prefix.fill(xs, cfg.exponent);
        let Some((index, observed)) = best_split(&prefix, &bounds, cfg.min_segment) else {
            break;
        };
        let mut at_least = 0usize;
        for _ in 0..cfg.permutations {
            shuffle_within(&mut shuffled, xs, &bounds, &mut rng);
            prefix.fill(&shuffled, cfg.exponent);
            let q =
                best_split(&prefix, &bounds, cfg.min_segment).map_or(f64::NEG_INFINITY, |b| b.1);
            if q >= observed {
                at_least += 1;
            }
        }
        let p = (1 + at_least) as f64 / (cfg.permutations + 1) as f64;
        if p > cfg.significance {
            break;
        }
        tests.push((index, p, observed));
        let at = bounds.partition_point(|&b| b < index);
        bounds.insert(at, index);
    }
    Ok(describe_changes(xs, &bounds, &tests, cfg, &mut rng))
}

fn check_config(cfg: &ChangePointConfig) -> Result<(), StatsError> {
    let bad = |what, expected, found| {
        Err(StatsError::BadParameter {
            what,
            expected,
            found,
        })
    };
    if !(cfg.significance > 0.0 && cfg.significance < 1.0) {
        return bad("significance", "between 0 and 1", cfg.significance);
    }
    if cfg.permutations < 19 {
        return bad("permutations", "at least 19", cfg.permutations as f64);
    }
    if cfg.min_segment < 2 {
        return bad(
            "minimal segment",
            "at least 2 points",
            cfg.min_segment as f64,
        );
    }
    if !(cfg.exponent > 0.0 && cfg.exponent < 2.0) {
        return bad("exponent", "between 0 and 2 (exclusive)", cfg.exponent);
    }
    if !(cfg.confidence > 0.0 && cfg.confidence < 1.0) {
        return bad("confidence", "between 0 and 1", cfg.confidence);
    }
    if cfg.resamples < 100 {
        return bad("resamples", "at least 100", cfg.resamples as f64);
    }
    Ok(())
}

/// Column prefix sums of the distance matrix: `at(j, t)` = Σ_{i<t} |zᵢ − zⱼ|^α.
struct Prefix {
    n: usize,
    sums: Vec<f64>,
}

impl Prefix {
    fn new(n: usize) -> Self {
        Self {
            n,
            sums: vec![0.0; n * (n + 1)],
        }
    }

    fn fill(&mut self, z: &[f64], alpha: f64) {
        let n = self.n;
        for (j, &zj) in z.iter().enumerate() {
            let row = &mut self.sums[j * (n + 1)..(j + 1) * (n + 1)];
            row[0] = 0.0;
            for (i, &zi) in z.iter().enumerate() {
                let d = (zi - zj).abs();
                let d = if alpha == 1.0 { d } else { d.powf(alpha) };
                row[i + 1] = row[i] + d;
            }
        }
    }

    /// Σ_{from ≤ i < to} |zᵢ − zⱼ|^α.
    fn between(&self, j: usize, from: usize, to: usize) -> f64 {
        let row = j * (self.n + 1);
        self.sums[row + to] - self.sums[row + from]
    }
}

/// The best candidate over all segments: (index of the first value after τ, Q̂).
fn best_split(prefix: &Prefix, bounds: &[usize], min: usize) -> Option<(usize, f64)> {
    bounds
        .windows(2)
        .filter_map(|w| best_in_segment(prefix, w[0], w[1], min))
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The (τ, κ) search of one segment [start, end), O((end − start)²).
fn best_in_segment(prefix: &Prefix, start: usize, end: usize, min: usize) -> Option<(usize, f64)> {
    if end - start < 2 * min {
        return None;
    }
    let mut best: Option<(usize, f64)> = None;
    let mut within_x = 0.0;
    for tau in start + 1..=end - min {
        // X = start..tau gains the value tau − 1.
        within_x += prefix.between(tau - 1, start, tau - 1);
        let n = (tau - start) as f64;
        if tau - start < min {
            continue;
        }
        let mut across = 0.0;
        let mut within_y = 0.0;
        for kappa in tau + 1..=end {
            // Y = tau..kappa gains the value kappa − 1.
            across += prefix.between(kappa - 1, start, tau);
            within_y += prefix.between(kappa - 1, tau, kappa - 1);
            let m = (kappa - tau) as f64;
            if kappa - tau < min {
                continue;
            }
            let e = 2.0 * across / (n * m)
                - within_x / (n * (n - 1.0) / 2.0)
                - within_y / (m * (m - 1.0) / 2.0);
            let q = n * m / (n + m) * e;
            if best.is_none_or(|b| q > b.1) {
                best = Some((tau, q));
            }
        }
    }
    best
}

/// Shuffles a copy of `xs` within each segment between consecutive `bounds`.
fn shuffle_within(out: &mut [f64], xs: &[f64], bounds: &[usize], rng: &mut Xoshiro256PlusPlus) {
    out.copy_from_slice(xs);
    for w in bounds.windows(2) {
        out[w[0]..w[1]].shuffle(rng);
    }
}

/// Means, effect and interval of each accepted change point against its final neighbours.
fn describe_changes(
    xs: &[f64],
    bounds: &[usize],
    tests: &[(usize, f64, f64)],
    cfg: &ChangePointConfig,
    rng: &mut Xoshiro256PlusPlus,
) -> Vec<ChangePoint> {
    let mut out: Vec<ChangePoint> = bounds
        .windows(3)
        .map(|w| {
            let (before, after) = (w[0]..w[1], w[1]..w[2]);
            let (p_value, statistic) = tests
                .iter()
                .find(|t| t.0 == w[1])
                .map_or((f64::NAN, f64::NAN), |t| (t.1, t.2));
            let mean_before = mean(&xs[before.clone()]);
            let mean_after = mean(&xs[after.clone()]);
            let ci_pct = effect_interval(&xs[before.clone()], &xs[after.clone()], cfg, rng);
            ChangePoint {
                index: w[1],
                before,
                after,
                mean_before,
                mean_after,
                effect_pct: effect_pct(mean_before, mean_after),
                ci_pct,
                p_value,
                statistic,
            }
        })
        .collect();
    out.sort_by_key(|c| c.index);
    out
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn effect_pct(before: f64, after: f64) -> f64 {
    if before == 0.0 {
        if after == 0.0 {
            0.0
        } else {
            f64::INFINITY.copysign(after)
        }
    } else {
        100.0 * (after / before - 1.0)
    }
}

/// Percentile bootstrap of 100·(mean(after)/mean(before) − 1), each side resampled alone.
fn effect_interval(
    before: &[f64],
    after: &[f64],
    cfg: &ChangePointConfig,
    rng: &mut Xoshiro256PlusPlus,
) -> (f64, f64) {
    let resample_mean = |xs: &[f64], rng: &mut Xoshiro256PlusPlus| {
        (0..xs.len())
            .map(|_| xs[rng.gen_range(0..xs.len())])
            .sum::<f64>()
            / xs.len() as f64
    };
    let mut effects: Vec<f64> = (0..cfg.resamples)
        .map(|_| {
            let b = resample_mean(before, rng);
            let a = resample_mean(after, rng);
            effect_pct(b, a)
        })
        .collect();
    effects.sort_by(f64::total_cmp);
    let tail = (1.0 - cfg.confidence) / 2.0;
    let pick = |q: f64| {
        effects[((q * (effects.len() - 1) as f64).round() as usize).min(effects.len() - 1)]
    };
    (pick(tail), pick(1.0 - tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded normal series: `level(i)` plus noise of standard deviation `sd`.
    fn series(n: usize, sd: f64, seed: u64, level: impl Fn(usize) -> f64) -> Vec<f64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..n)
            .map(|i| {
                let u1: f64 = 1.0 - rng.gen::<f64>();
                let u2: f64 = rng.gen::<f64>();
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                level(i) + sd * z
            })
            .collect()
    }

    #[test]
    fn one_shift_is_found_at_its_index() {
        let xs = series(100, 1.0, 1, |i| if i < 60 { 100.0 } else { 110.0 });
        let cps = change_points(&xs, &ChangePointConfig::default()).unwrap();
        assert_eq!(cps.len(), 1, "{cps:?}");
        let c = &cps[0];
        assert_eq!(c.index, 60);
        assert_eq!((c.before.clone(), c.after.clone()), (0..60, 60..100));
        assert!(c.p_value <= 0.005, "{c:?}");
        assert!((c.effect_pct - 10.0).abs() < 1.0, "{c:?}");
        assert!(
            c.ci_pct.0 < c.effect_pct && c.effect_pct < c.ci_pct.1,
            "{c:?}"
        );
        assert!(c.ci_pct.0 > 9.0 && c.ci_pct.1 < 11.5, "{c:?}");
        assert!(c.ci_pct.1 - c.ci_pct.0 < 2.0, "{c:?}");
    }

    #[test]
    fn two_shifts_up_then_down_are_both_found() {
        let level = |i| match i {
            0..=29 => 50.0,
            30..=69 => 45.0,
            _ => 52.0,
        };
        let xs = series(100, 1.0, 2, level);
        let cps = change_points(&xs, &ChangePointConfig::default()).unwrap();
        let at: Vec<usize> = cps.iter().map(|c| c.index).collect();
        assert_eq!(at, vec![30, 70], "{cps:?}");
        assert!(
            cps[0].effect_pct < -8.0 && cps[0].effect_pct > -12.0,
            "{cps:?}"
        );
        assert!(
            cps[1].effect_pct > 13.0 && cps[1].effect_pct < 18.0,
            "{cps:?}"
        );
        assert_eq!(cps[0].after, cps[1].before);
    }

    #[test]
    fn a_flat_series_has_none() {
        for seed in 10..13 {
            let xs = series(100, 1.0, seed, |_| 20.0);
            let cps = change_points(&xs, &ChangePointConfig::default()).unwrap();
            assert!(cps.is_empty(), "seed {seed}: {cps:?}");
        }
        let constant = vec![7.0; 40];
        assert!(change_points(&constant, &ChangePointConfig::default())
            .unwrap()
            .is_empty());
    }

    #[test]
    fn short_series_and_edges() {
        let cfg = ChangePointConfig::default();
        assert!(change_points(&[], &cfg).unwrap().is_empty());
        assert!(change_points(&[1.0, 2.0, 3.0], &cfg).unwrap().is_empty());
        // A shift right after the minimal segment is still found.
        let xs = series(40, 0.5, 3, |i| if i < 5 { 10.0 } else { 20.0 });
        let cps = change_points(&xs, &cfg).unwrap();
        assert_eq!(cps.iter().map(|c| c.index).collect::<Vec<_>>(), vec![5]);
    }

    #[test]
    fn seeded_answers_repeat() {
        let xs = series(80, 1.0, 4, |i| if i < 40 { 10.0 } else { 11.5 });
        let cfg = ChangePointConfig::default();
        assert_eq!(
            change_points(&xs, &cfg).unwrap(),
            change_points(&xs, &cfg).unwrap()
        );
    }

    #[test]
    fn bad_input_is_refused() {
        let cfg = ChangePointConfig::default();
        assert!(matches!(
            change_points(&[1.0, f64::NAN], &cfg),
            Err(StatsError::NonFinite { index: 1, .. })
        ));
        for bad in [
            ChangePointConfig {
                significance: 0.0,
                ..cfg
            },
            ChangePointConfig {
                permutations: 5,
                ..cfg
            },
            ChangePointConfig {
                min_segment: 1,
                ..cfg
            },
            ChangePointConfig {
                exponent: 2.0,
                ..cfg
            },
            ChangePointConfig {
                confidence: 1.0,
                ..cfg
            },
            ChangePointConfig {
                resamples: 10,
                ..cfg
            },
        ] {
            assert!(matches!(
                change_points(&[1.0; 20], &bad),
                Err(StatsError::BadParameter { .. })
            ));
        }
    }

    #[test]
    fn zero_baseline_has_an_infinite_effect_not_a_panic() {
        let mut xs = vec![0.0; 20];
        xs.extend(std::iter::repeat_n(5.0, 20));
        let cps = change_points(&xs, &ChangePointConfig::default()).unwrap();
        assert_eq!(cps.len(), 1);
        assert_eq!(cps[0].effect_pct, f64::INFINITY);
    }
}
