//! Descriptive statistics shared by the other modules: mean and variance, the median as
//! benchstat computes it, the geometric mean, and the median absolute deviation.
//!
//! The median follows go-moremath's `Sample.Quantile` (Hyndman & Fan definition 8, the
//! one benchstat prints): position h = 1/3 + q·(n + 1/3), linear interpolation between
//! the order statistics around h, evaluated in that floating-point order.
//!
//! Two medians live here, and only here: benchstat's interpolated one ([`median`],
//! [`median_sorted`], [`quantile_sorted`]) and the ordinary middle-average one
//! ([`plain_median`] and its sorted and finite-only forms). Every other module and crate
//! calls these rather than writing its own.
//!
//! Cost: `mean_var`, `geomean`, `plain_median`, `mad` O(n); `median_sorted`,
//! `plain_median_sorted` O(1); `median` O(n log n) (it sorts a copy).

use crate::error::{check_finite, StatsError};

/// Mean and sample variance (n − 1 denominator) by two passes. NaN variance for n < 2.
pub fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    (mean, ss / (n - 1.0))
}

/// The lag-1 autocorrelation of a series: Σ(xᵢ−x̄)(xᵢ₊₁−x̄) / Σ(xᵢ−x̄)², the usual
/// estimator (Box & Jenkins). `None` for fewer than three values or a constant series.
/// Near 0: neighbours are unrelated; near 1: each value repeats the last, and the
/// series holds fewer independent values than it has points. O(n).
pub fn lag1_autocorrelation(xs: &[f64]) -> Option<f64> {
    if xs.len() < 3 || xs.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let denom: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    if denom <= 0.0 {
        return None;
    }
    let num: f64 = xs.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum();
    Some(num / denom)
}

/// Quantile `q` of an ascending sample by Hyndman & Fan definition 8, as go-moremath's
/// `Sample.Quantile` computes it. NaN for an empty sample. O(1).
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    if q <= 0.0 {
        return sorted[0];
    }
    if q >= 1.0 {
        return sorted[sorted.len() - 1];
    }
    let n = sorted.len() as f64;
    let h = 1.0 / 3.0 + q * (n + 1.0 / 3.0);
    let kf = h.trunc();
    let frac = h - kf;
    let k = kf as usize;
    if k == 0 {
        sorted[0]
    } else if k >= sorted.len() {
        sorted[sorted.len() - 1]
    } else {
        sorted[k - 1] + frac * (sorted[k] - sorted[k - 1])
    }
}

/// The median of an ascending sample as benchstat computes it. O(1).
pub fn median_sorted(sorted: &[f64]) -> f64 {
    quantile_sorted(sorted, 0.5)
}

/// The median (benchstat's definition) of an unsorted sample. O(n log n).
///
/// # Errors
/// [`StatsError::TooFewValues`] if empty, [`StatsError::NonFinite`] on NaN or infinities.
pub fn median(xs: &[f64]) -> Result<f64, StatsError> {
    if xs.is_empty() {
        return Err(StatsError::TooFewValues {
            what: "median",
            needed: 1,
            found: 0,
        });
    }
    check_finite("median input", xs)?;
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    Ok(median_sorted(&v))
}

/// Geometric mean exp(mean(ln x)) of positive values, as benchstat's geomean row computes
/// it. O(n).
///
/// # Errors
/// [`StatsError::TooFewValues`] if empty; [`StatsError::NonPositive`] or
/// [`StatsError::NonFinite`] on a value that has no logarithm (benchstat then warns and
/// prints no geomean).
pub fn geomean(xs: &[f64]) -> Result<f64, StatsError> {
    if xs.is_empty() {
        return Err(StatsError::TooFewValues {
            what: "geomean",
            needed: 1,
            found: 0,
        });
    }
    let logs = crate::error::logs("geomean input", xs)?;
    Ok((logs.iter().sum::<f64>() / logs.len() as f64).exp())
}

/// Median absolute deviation from the median (unscaled; multiply by 1.4826 for a normal
/// standard deviation). Uses the ordinary middle-average median. O(n).
pub fn mad(xs: &[f64]) -> f64 {
    let med = plain_median(xs);
    let dev: Vec<f64> = xs.iter().map(|x| (x - med).abs()).collect();
    plain_median(&dev)
}

/// Ordinary median (mean of the two middle values for even n); NaN when empty. O(n):
/// it selects the middle of a copy instead of sorting it.
pub fn plain_median(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    let (lower, hi, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    let hi = *hi;
    if n % 2 == 1 {
        hi
    } else {
        let lo = lower.iter().copied().max_by(f64::total_cmp).unwrap_or(hi);
        midpoint(lo, hi)
    }
}

/// [`plain_median`] of an ascending sample. O(1).
pub fn plain_median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => midpoint(sorted[n / 2 - 1], sorted[n / 2]),
    }
}

/// The mean of two values without overflow: `(a + b) / 2` where the sum is finite (so
/// every ordinary result is the same to the bit), `a / 2 + b / 2` where it is not (two
/// values near `f64::MAX`).
fn midpoint(a: f64, b: f64) -> f64 {
    let sum = a + b;
    if sum.is_finite() || !a.is_finite() || !b.is_finite() {
        sum / 2.0
    } else {
        a / 2.0 + b / 2.0
    }
}

/// [`plain_median`] of the finite values of `xs` (NaN and infinities left out); NaN when
/// none is finite. O(n).
pub fn plain_median_finite(xs: &[f64]) -> f64 {
    let finite: Vec<f64> = xs.iter().copied().filter(|v| v.is_finite()).collect();
    plain_median(&finite)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchstat_median_interpolates() {
        assert_eq!(median(&[3.0, 1.0, 2.0]).unwrap(), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]).unwrap(), 2.5);
        assert_eq!(median(&[5.0]).unwrap(), 5.0);
        assert!(median(&[]).is_err());
    }

    #[test]
    fn geomean_and_mad() {
        assert!((geomean(&[1.0, 4.0, 16.0]).unwrap() - 4.0).abs() < 1e-12);
        assert!(geomean(&[1.0, 0.0]).is_err());
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 100.0]), 1.0);
    }

    #[test]
    fn medians_near_the_largest_double_stay_finite() {
        let big = [1.7e308, 1.75e308, 1.72e308, 1.78e308];
        let m = plain_median(&big);
        assert!(m.is_finite() && (1.72e308..=1.75e308).contains(&m), "{m}");
        assert!(plain_median_sorted(&[1.7e308, 1.76e308]).is_finite());
        assert_eq!(plain_median(&[1.0, 3.0]), 2.0);
    }

    #[test]
    fn plain_median_averages_the_middle_pair() {
        assert_eq!(plain_median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(plain_median(&[9.0, 1.0, 5.0]), 5.0);
        assert!(plain_median(&[]).is_nan());
        assert_eq!(plain_median_sorted(&[1.0, 2.0, 3.0, 4.0]), 2.5);
        assert!(plain_median_sorted(&[]).is_nan());
        assert_eq!(
            plain_median_finite(&[f64::NAN, 1.0, 3.0, f64::INFINITY]),
            2.0
        );
        assert!(plain_median_finite(&[f64::NAN]).is_nan());
        // benchstat's median interpolates differently from the plain one only in how
        // it rounds; on these values they agree.
        assert_eq!(
            median(&[4.0, 1.0, 3.0, 2.0]).unwrap(),
            plain_median(&[4.0, 1.0, 3.0, 2.0])
        );
    }

    #[test]
    fn lag1_autocorrelation_of_known_series() {
        // Alternating values are perfectly anti-correlated with their neighbours (the
        // estimator's n−1 terms in the numerator give −(n−1)/n).
        let alt = [1.0, -1.0, 1.0, -1.0, 1.0, -1.0];
        assert!((lag1_autocorrelation(&alt).unwrap() + 5.0 / 6.0).abs() < 1e-12);
        let trend: Vec<f64> = (0..50).map(f64::from).collect();
        assert!(lag1_autocorrelation(&trend).unwrap() > 0.9);
        assert_eq!(lag1_autocorrelation(&[1.0, 1.0, 1.0]), None);
        assert_eq!(lag1_autocorrelation(&[1.0, 2.0]), None);
    }
}
