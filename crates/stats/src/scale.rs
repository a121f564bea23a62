//! A robust scale: the spread of a sample that one wild value cannot inflate.
//!
//! The sample standard deviation weighs every value by its squared distance from the
//! mean, so a single round ten times as far out as the others can double it, and with it
//! every minimal detectable effect and budget computed from it. A calibration of a few
//! dozen rounds on a shared machine meets such rounds (a neighbour's burst, a migration).
//!
//! **Method.** The Qn estimator of Rousseeuw and Croux ("Alternatives to the median
//! absolute deviation", Journal of the American Statistical Association 88(424), 1993):
//! with h = ⌊n/2⌋ + 1 and k = h(h − 1)/2,
//!
//! ```text
//! Qn = d · c_n · { |x_i − x_j| ; i < j }_(k)
//! ```
//!
//! the k-th smallest of the pairwise distances (about their first quartile), scaled by
//! d = 1/(√2 · Φ⁻¹(5/8)) ≈ 2.2191 so that it estimates σ for normal data, and by the
//! finite-sample factor c_n of Croux and Rousseeuw ("Time-efficient algorithms for two
//! highly robust estimators of scale", Computational Statistics, 1992) that makes it
//! nearly unbiased at small n. Like the MAD it tolerates up to half the values being
//! wild (50 % breakdown point), but it keeps 82 % of the standard deviation's efficiency
//! on normal data where the MAD keeps 37 %: at the 10–30 rounds of a calibration that is
//! the difference between a usable and a jittery figure.
//!
//! **Cost.** The k-th distance is selected among the n² differences x_j − x_i without
//! listing them ([`crate::select`]): expected O(n log n).
//!
//! **The clipped standard deviation** ([`clipped_sd`]): the standard deviation of the
//! values that are not wild (farther than [`WILD_SDS`] robust standard deviations from
//! the median). Qn estimates σ of a normal core; where the rounds have heavy tails, it
//! understates the spread that sets how wide a paired interval is and how often an
//! effect is found. On this project's machine, with nothing else running, 40 A/A
//! experiments of 10 rounds had a pooled sd of 10.3 % and a Qn of 7.3 %, and an effect of
//! the MDE Qn predicted was found in 17 of 40 experiments, not 32 (BENCHMARKS.md §35).
//! Cutting at the 3.5 robust standard deviations that name outlier rounds does not help:
//! 3–12 % of those rounds lay beyond it, part of the tail, not bursts. In the 1,673 A/A
//! rounds of four quiet validations none lay beyond 10; a neighbour's burst that throws
//! one round of a 2 % spread to a ratio of 1.6 lies beyond 20. The clipped sd drops such
//! a round, as Qn does, and keeps the tails, as the standard deviation does: the noise
//! law and the predictions of fixed and duet rounds use it.

use crate::dist::normal_quantile;
use crate::select::kth_difference;

/// The Qn scale of `x` (non-finite values are ignored): an estimate of the standard
/// deviation for normal data that a minority of outlying values cannot inflate. `None`
/// with fewer than two finite values.
pub fn qn(x: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = x.iter().copied().filter(|v| v.is_finite()).collect();
    let n = v.len();
    if n < 2 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let h = n / 2 + 1;
    let k = (h * (h - 1) / 2) as u64;
    // Of the n² differences x_j − x_i, the n(n − 1)/2 pairs i ≠ j of one sign come first
    // (as −|x_i − x_j|), then the n zeros of i = j, then the same pairs as +|x_i − x_j|
    // in ascending order; a − b = −(b − a) holds exactly in floating point.
    let n64 = n as u64;
    let rank = n64 * (n64 - 1) / 2 + n64 + k - 1;
    let kth = kth_difference(&v, &v, rank)?;
    let d = 1.0 / (std::f64::consts::SQRT_2 * normal_quantile(0.625));
    Some(d * small_sample_factor(n) * kth)
}

/// How far from the median a value lies, in robust standard deviations (1.4826 × MAD),
/// before it is named an outlier round in a calibration (a diagnostic: it still counts).
pub const OUTLIER_SDS: f64 = 3.5;

/// How far from the median a value lies, in robust standard deviations, before
/// [`clipped_sd`] leaves it out of the noise: a burst, not the tail of the rounds.
pub const WILD_SDS: f64 = 10.0;

/// The standard deviation of the finite values of `x` that are not outliers: those
/// within `k` robust standard deviations of the median ([`crate::budget::outliers`]).
/// `None` with fewer than two values kept.
pub fn clipped_sd(x: &[f64], k: f64) -> Option<f64> {
    let v: Vec<f64> = x.iter().copied().filter(|v| v.is_finite()).collect();
    let out = crate::budget::outliers(&v, k);
    let kept: Vec<f64> = v
        .iter()
        .enumerate()
        .filter(|(i, _)| !out.contains(i))
        .map(|(_, x)| *x)
        .collect();
    crate::budget::sd(&kept)
}

/// c_n of Croux and Rousseeuw (1992): tabulated up to n = 9, a rational form above.
fn small_sample_factor(n: usize) -> f64 {
    const TABLE: [f64; 8] = [0.399, 0.994, 0.512, 0.844, 0.611, 0.857, 0.669, 0.872];
    match n {
        2..=9 => TABLE[n - 2],
        _ if n % 2 == 1 => n as f64 / (n as f64 + 1.4),
        _ => n as f64 / (n as f64 + 3.8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal};

    fn sample(n: usize, seed: u64) -> Vec<f64> {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let normal = Normal::new(0.0, 1.0).unwrap();
        (0..n).map(|_| normal.sample(&mut rng)).collect()
    }

    /// The k-th distance is the one a plain listing of the pairs finds.
    #[test]
    fn the_kth_distance_is_the_listed_one() {
        for n in [2, 3, 7, 10, 31] {
            let x = sample(n, n as u64);
            let mut d: Vec<f64> = Vec::new();
            for i in 0..n {
                for j in i + 1..n {
                    d.push((x[i] - x[j]).abs());
                }
            }
            d.sort_by(f64::total_cmp);
            let h = n / 2 + 1;
            let listed = d[h * (h - 1) / 2 - 1];
            let want = 2.21914 * small_sample_factor(n) * listed;
            let got = qn(&x).unwrap();
            assert!((got - want).abs() < 1e-4 * want, "n {n}: {got} vs {want}");
        }
    }

    /// For normal data Qn estimates σ: nearly unbiased at the round counts of a
    /// calibration (mean over 2,000 samples within 5 %), and close on a large sample.
    #[test]
    fn it_estimates_sigma_for_normal_data() {
        for n in [6, 10, 20] {
            let mean = (0..2000).map(|s| qn(&sample(n, s)).unwrap()).sum::<f64>() / 2000.0;
            assert!((mean - 1.0).abs() < 0.05, "n {n}: mean Qn {mean}");
        }
        let big = qn(&sample(20_000, 7)).unwrap();
        assert!((big - 1.0).abs() < 0.03, "{big}");
    }

    /// One wild value moves Qn a little and the standard deviation a lot.
    #[test]
    fn one_wild_value_barely_moves_it() {
        let x = sample(20, 3);
        let mut wild = x.clone();
        wild[11] = 15.0;
        let (q, qw) = (qn(&x).unwrap(), qn(&wild).unwrap());
        let (s, sw) = (
            crate::budget::sd(&x).unwrap(),
            crate::budget::sd(&wild).unwrap(),
        );
        assert!(qw / q < 1.2, "Qn {q} -> {qw}");
        assert!(sw / s > 2.0, "sd {s} -> {sw}");
    }

    /// Without outliers the clipped sd is the sd; a wild value is left out of it, so it
    /// stays the sd of the others.
    #[test]
    fn the_clipped_sd_leaves_out_only_the_wild_values() {
        let x = sample(30, 5);
        let sd = crate::budget::sd(&x).unwrap();
        assert!(crate::budget::outliers(&x, WILD_SDS).is_empty());
        assert_eq!(clipped_sd(&x, WILD_SDS), Some(sd));
        let mut wild = x.clone();
        wild[7] = 15.0;
        wild.push(f64::NAN);
        let mut rest = x.clone();
        rest.remove(7);
        let rest_sd = crate::budget::sd(&rest).unwrap();
        assert!((clipped_sd(&wild, WILD_SDS).unwrap() - rest_sd).abs() < 1e-12);
        assert!(crate::budget::sd(&wild[..30]).unwrap() > 2.0 * sd);
        assert_eq!(clipped_sd(&[1.0], WILD_SDS), None);
    }

    #[test]
    fn too_few_values_or_no_spread() {
        assert_eq!(qn(&[1.0]), None);
        assert_eq!(qn(&[f64::NAN, 2.0]), None);
        assert_eq!(qn(&[3.0; 8]), Some(0.0));
        assert!(qn(&[1.0, 2.0]).unwrap() > 0.0);
    }
}
