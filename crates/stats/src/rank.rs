//! Wilcoxon signed-rank test and Hodges–Lehmann shift estimates with exact
//! distribution-free confidence intervals, paired and unpaired.
//!
//! Sources: Wilcoxon (1945); Hodges & Lehmann (1963), "Estimates of Location Based on
//! Rank Tests"; Hollander, Wolfe & Chicken, *Nonparametric Statistical Methods* (3rd ed.),
//! §3.1–3.2 and §4.1–4.3 for the interval inversions; METHOD §6.2. Callers pass log values
//! so that shifts are log-ratios (see [`crate::verdict`]).
//!
//! **Signed-rank test** on differences d. Zeros are dropped (Wilcoxon's convention, as
//! R's `wilcox.test`), so the "zero correction" is the reduction of n to the non-zero
//! count. The absolute values are ranked with mid-ranks for ties; doubled mid-ranks are
//! integers. T⁺ is the rank sum of the positive differences.
//! - n < 50 non-zero differences: the exact permutation distribution of T⁺ (each sign
//!   equally likely) over the actual doubled mid-ranks, by a subset-sum recurrence;
//!   without ties it is the classic N_n(t) = N_{n−1}(t) + N_{n−1}(t − n). Two-sided
//!   p = min(1, 2·min(P(T⁺ ≤ t), P(T⁺ ≥ t))).
//! - Otherwise the normal approximation μ = n(n+1)/4,
//!   σ² = n(n+1)(2n+1)/24 − Σ(t³ − t)/48 (tie correction), with a ½ continuity correction.
//!
//! **Paired HL**: θ̂ = median of the M = n(n+1)/2 Walsh averages (d_i + d_j)/2, i ≤ j. With
//! c = max{c : P₀(T⁺ ≤ c) ≤ α/2} from the exact no-ties null (n < 50; normal beyond), the
//! interval is [W₍c+1₎, W₍M−c₎], e.g. c = 8 at n = 10. It covers with probability
//! 1 − 2·P₀(T⁺ ≤ c) ≥ 1 − α under a symmetric continuous distribution of d; with ties it is
//! approximate. All n differences (zeros included) enter the interval.
//!
//! **Unpaired HL**: θ̂ = median of the m·n differences y_j − x_i; c = max{c : P₀(U ≤ c) ≤ α/2}
//! from the exact Mann–Whitney null (both sizes ≤ 50; normal beyond); interval
//! [D₍c+1₎, D₍mn−c₎] (c = 23 at 10/10). The matching test is [`crate::utest::mann_whitney`].
//!
//! When no c exists (too few values: fewer than 6 pairs, or 4 per arm, at 95 %), the
//! interval is (−∞, +∞).
//!
//! Cost: the signed-rank test O(n log n + n·n²) for n < 50, O(n log n) beyond. The HL
//! estimates sort the input and then select at most four order statistics of the Walsh
//! averages or differences together, by [`crate::select`], in expected
//! O((m + n) log(m + n)): the four ranks lie close together and share their sampling
//! rounds, and at most 2²⁰ candidates are ever listed (all of them when M is that small). The exact critical value costs O(n³) (paired) or
//! O((m + n)·m·c) (unpaired, ≤ 50 per side).

use crate::dist::{normal_cdf, normal_quantile};
use crate::error::{check_finite, StatsError};
use crate::select::{differences_at, walsh_at};

/// Largest number of non-zero pairs for the exact signed-rank distribution (exclusive).
pub const SIGNED_RANK_EXACT_BELOW: usize = 50;

/// How a signed-rank p-value was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedRankMethod {
    /// Exact permutation distribution over the (mid-)ranks.
    Exact,
    /// Normal approximation with tie and continuity corrections.
    Normal,
}

/// Result of a two-sided Wilcoxon signed-rank test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignedRankTest {
    /// Number of non-zero differences used.
    pub n: usize,
    /// Number of zero differences dropped.
    pub zeros: usize,
    /// Rank sum of the positive differences (mid-ranks for ties).
    pub t_plus: f64,
    /// Two-sided p-value (1 when every difference is zero).
    pub p_value: f64,
    /// How the p-value was computed.
    pub method: SignedRankMethod,
    /// Whether tied absolute values occurred.
    pub has_ties: bool,
}

/// Counts of the exact null distribution of the doubled rank sum 2T⁺ for the given
/// doubled ranks: `counts[s]` = number of sign patterns with 2T⁺ = s. O(n·Σranks).
fn signed_rank_counts(doubled_ranks: &[usize]) -> Vec<f64> {
    let total: usize = doubled_ranks.iter().sum();
    let mut counts = vec![0.0f64; total + 1];
    counts[0] = 1.0;
    let mut reach = 0;
    for &r in doubled_ranks {
        reach += r;
        for s in (r..=reach).rev() {
            counts[s] += counts[s - r];
        }
    }
    counts
}

/// Two-sided Wilcoxon signed-rank test of the differences `d` against zero.
/// Cost: O(n log n) plus O(n³) for the exact distribution (n < 50).
///
/// # Errors
/// [`StatsError::TooFewValues`] if `d` is empty; [`StatsError::NonFinite`] on NaN/∞.
pub fn signed_rank(d: &[f64]) -> Result<SignedRankTest, StatsError> {
    if d.is_empty() {
        return Err(StatsError::TooFewValues {
            what: "paired differences",
            needed: 1,
            found: 0,
        });
    }
    check_finite("paired differences", d)?;
    let mut nz: Vec<f64> = d.iter().copied().filter(|&x| x != 0.0).collect();
    let zeros = d.len() - nz.len();
    let n = nz.len();
    let mut out = SignedRankTest {
        n,
        zeros,
        t_plus: 0.0,
        p_value: 1.0,
        method: SignedRankMethod::Exact,
        has_ties: false,
    };
    if n == 0 {
        return Ok(out);
    }
    nz.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    // Doubled mid-ranks and tie groups.
    let mut doubled = vec![0usize; n];
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && nz[j].abs() == nz[i].abs() {
            j += 1;
        }
        let t = j - i;
        if t > 1 {
            out.has_ties = true;
            tie_term += (t * t * t - t) as f64;
        }
        // Ranks i+1..=j, mid-rank (i+1+j)/2, doubled i+1+j.
        for r in doubled.iter_mut().take(j).skip(i) {
            *r = i + 1 + j;
        }
        i = j;
    }
    let two_t_plus: usize = (0..n).filter(|&k| nz[k] > 0.0).map(|k| doubled[k]).sum();
    out.t_plus = two_t_plus as f64 / 2.0;
    if n < SIGNED_RANK_EXACT_BELOW {
        let counts = signed_rank_counts(&doubled);
        let all: f64 = counts.iter().sum();
        let lower: f64 = counts[..=two_t_plus].iter().sum();
        let upper: f64 = counts[two_t_plus..].iter().sum();
        out.p_value = (2.0 * lower.min(upper) / all).min(1.0);
        return Ok(out);
    }
    out.method = SignedRankMethod::Normal;
    let nf = n as f64;
    let mu = nf * (nf + 1.0) / 4.0;
    let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - tie_term / 48.0;
    if var <= 0.0 {
        return Ok(out);
    }
    let diff = out.t_plus - mu;
    let numer = diff - diff.signum() * 0.5 * f64::from(diff != 0.0);
    let z = numer / var.sqrt();
    let c = normal_cdf(z);
    out.p_value = (2.0 * c.min(1.0 - c)).min(1.0);
    Ok(out)
}

/// A location shift with its distribution-free confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShiftEstimate {
    /// The Hodges–Lehmann estimate.
    pub estimate: f64,
    /// Lower bound (−∞ when the sample is too small for the confidence).
    pub ci_low: f64,
    /// Upper bound (+∞ when the sample is too small for the confidence).
    pub ci_high: f64,
    /// The critical count c (interval = order statistics c+1 and M−c); `None` when no
    /// finite interval reaches the confidence.
    pub c: Option<u64>,
    /// Achieved confidence 1 − 2·P₀(T ≤ c) (1 when unbounded).
    pub achieved_confidence: f64,
    /// Whether c came from the exact null distribution (else the normal approximation).
    pub exact: bool,
}

impl ShiftEstimate {
    /// Whether the interval is finite on both sides.
    pub fn is_bounded(&self) -> bool {
        self.c.is_some()
    }
}

fn check_conf(confidence: f64) -> Result<f64, StatsError> {
    if confidence > 0.0 && confidence < 1.0 {
        Ok((1.0 - confidence) / 2.0)
    } else {
        Err(StatsError::BadParameter {
            what: "confidence",
            expected: "between 0 and 1 (exclusive)",
            found: confidence,
        })
    }
}

/// The exact critical value c = max{c : P₀(T⁺ ≤ c) ≤ half_alpha} of the signed-rank
/// statistic for n pairs without ties, with its tail P₀(T⁺ ≤ c). O(n³).
pub fn signed_rank_critical(n: usize, half_alpha: f64) -> Option<(u64, f64)> {
    let ranks: Vec<usize> = (1..=n).map(|r| 2 * r).collect();
    let counts = signed_rank_counts(&ranks);
    let all: f64 = counts.iter().sum();
    let mut cum = 0.0;
    let mut best = None;
    // counts is indexed by 2T⁺; only even entries are non-zero.
    for t in 0..=n * (n + 1) / 2 {
        cum += counts[2 * t];
        if cum / all <= half_alpha {
            best = Some((t as u64, cum / all));
        } else {
            break;
        }
    }
    best
}

/// The exact critical value c = max{c : P₀(U ≤ c) ≤ half_alpha} of the Mann–Whitney
/// statistic for sizes m, n without ties, with its tail. O((m + n)·m·c).
pub fn u_critical(m: usize, n: usize, half_alpha: f64) -> Option<(u64, f64)> {
    // P(U ≤ c) grows with c; search upward (c stays far below mn/2 for usual α).
    let mut best = None;
    let mut c = 0usize;
    while c <= m * n / 2 {
        let p = crate::utest::u_cdf(m, n, c);
        if p <= half_alpha {
            best = Some((c as u64, p));
            c += 1;
        } else {
            break;
        }
    }
    best
}

/// Rows (values of the larger sample) from which the unpaired selection runs one rank
/// group at a time, trading time for memory.
const LOW_MEMORY_ROWS: usize = 200_000;

fn sorted_copy(what: &'static str, xs: &[f64]) -> Result<Vec<f64>, StatsError> {
    check_finite(what, xs)?;
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    Ok(v)
}

/// `xs` in ascending order: itself when it already is (no copy: callers that sorted
/// once, as the comparison does, pay no memory for it), else a sorted copy.
pub(crate) fn sorted_view<'a>(
    what: &'static str,
    xs: &'a [f64],
) -> Result<std::borrow::Cow<'a, [f64]>, StatsError> {
    check_finite(what, xs)?;
    if xs.is_sorted_by(|a, b| a.total_cmp(b).is_le()) {
        Ok(std::borrow::Cow::Borrowed(xs))
    } else {
        sorted_copy(what, xs).map(std::borrow::Cow::Owned)
    }
}

fn median_ranks(total: u64) -> (u64, u64) {
    if total % 2 == 1 {
        (total / 2, total / 2)
    } else {
        (total / 2 - 1, total / 2)
    }
}

/// Paired Hodges–Lehmann shift of the differences `d` with its signed-rank interval at
/// `confidence`. Cost: see the module documentation.
///
/// # Errors
/// [`StatsError::TooFewValues`] if empty, [`StatsError::NonFinite`] on NaN/∞,
/// [`StatsError::BadParameter`] for a confidence outside (0, 1).
pub fn hl_paired(d: &[f64], confidence: f64) -> Result<ShiftEstimate, StatsError> {
    let half_alpha = check_conf(confidence)?;
    if d.is_empty() {
        return Err(StatsError::TooFewValues {
            what: "paired differences",
            needed: 1,
            found: 0,
        });
    }
    let s = sorted_copy("paired differences", d)?;
    let n = s.len();
    let total = (n as u64) * (n as u64 + 1) / 2;
    let (crit, exact) = if n < SIGNED_RANK_EXACT_BELOW {
        (signed_rank_critical(n, half_alpha), true)
    } else {
        let nf = n as f64;
        let mu = nf * (nf + 1.0) / 4.0;
        let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
        (normal_critical(mu, sd, half_alpha), false)
    };
    let ranks = wanted_ranks(total, crit);
    let v = walsh_at(&s, &ranks).unwrap_or_else(|| vec![f64::NAN; ranks.len()]);
    Ok(finish(v, crit, exact))
}

/// The critical count of a rank statistic with mean `mu` and standard deviation `sd`
/// under the normal approximation (continuity-corrected), with its one-sided tail; `None`
/// when even a count of 0 is not rare enough.
fn normal_critical(mu: f64, sd: f64, half_alpha: f64) -> Option<(u64, f64)> {
    let c = (mu - 0.5 + normal_quantile(half_alpha) * sd).floor();
    (c >= 0.0).then(|| (c as u64, normal_cdf((c + 0.5 - mu) / sd)))
}

/// The ranks to select among `total` ordered values: the two middle ones (for the
/// median), then, with a critical count `c`, the interval's ends `c` and `total - 1 - c`.
fn wanted_ranks(total: u64, crit: Option<(u64, f64)>) -> Vec<u64> {
    let (m1, m2) = median_ranks(total);
    let mut ranks = vec![m1, m2];
    if let Some((c, _)) = crit {
        ranks.push(c);
        ranks.push(total - 1 - c);
    }
    ranks
}

fn finish(v: Vec<f64>, crit: Option<(u64, f64)>, exact: bool) -> ShiftEstimate {
    let estimate = 0.5 * (v[0] + v[1]);
    match crit {
        Some((c, tail)) => ShiftEstimate {
            estimate,
            ci_low: v[2],
            ci_high: v[3],
            c: Some(c),
            achieved_confidence: 1.0 - 2.0 * tail,
            exact,
        },
        None => ShiftEstimate {
            estimate,
            ci_low: f64::NEG_INFINITY,
            ci_high: f64::INFINITY,
            c: None,
            achieved_confidence: 1.0,
            exact,
        },
    }
}

/// Unpaired Hodges–Lehmann shift of `y` relative to `x` (median of y_j − x_i) with its
/// Mann–Whitney interval at `confidence`. Never lists more than 2²⁰ of the m·n
/// differences. Cost: see the module documentation.
///
/// # Errors
/// [`StatsError::TooFewValues`] if either sample is empty, [`StatsError::NonFinite`] on
/// NaN/∞, [`StatsError::BadParameter`] for a confidence outside (0, 1).
pub fn hl_unpaired(x: &[f64], y: &[f64], confidence: f64) -> Result<ShiftEstimate, StatsError> {
    let half_alpha = check_conf(confidence)?;
    for (what, v) in [("baseline sample", x), ("variant sample", y)] {
        if v.is_empty() {
            return Err(StatsError::TooFewValues {
                what,
                needed: 1,
                found: 0,
            });
        }
    }
    let xs = sorted_view("baseline sample", x)?;
    let ys = sorted_view("variant sample", y)?;
    let (m, n) = (xs.len(), ys.len());
    let total = m as u64 * n as u64;
    let (crit, exact) = if m <= crate::utest::EXACT_LIMIT && n <= crate::utest::EXACT_LIMIT {
        (u_critical(m, n, half_alpha), true)
    } else {
        let (mf, nf) = (m as f64, n as f64);
        let mu = mf * nf / 2.0;
        let sd = (mf * nf * (mf + nf + 1.0) / 12.0).sqrt();
        (normal_critical(mu, sd, half_alpha), false)
    };
    let ranks = wanted_ranks(total, crit);
    let v = if m.max(n) >= LOW_MEMORY_ROWS {
        // Long samples: the selection keeps a boundary array (4 bytes a row) per cut, and
        // cuts for all four ranks at once would hold several at a time. One rank group
        // (the median pair, each interval end) per pass keeps memory near two arrays,
        // for about twice the time.
        let groups: [&[u64]; 3] = [
            &ranks[..2],
            &ranks[2.min(ranks.len())..3.min(ranks.len())],
            &ranks[3.min(ranks.len())..],
        ];
        let mut out = Vec::with_capacity(ranks.len());
        for g in groups.iter().filter(|g| !g.is_empty()) {
            match differences_at(&xs, &ys, g) {
                Some(v) => out.extend(v),
                None => out.extend(std::iter::repeat_n(f64::NAN, g.len())),
            }
        }
        out
    } else {
        differences_at(&xs, &ys, &ranks).unwrap_or_else(|| vec![f64::NAN; ranks.len()])
    };
    Ok(finish(v, crit, exact))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn critical_values_match_method_note() {
        let (c, tail) = signed_rank_critical(10, 0.025).unwrap();
        assert_eq!(c, 8);
        assert!((tail - 25.0 / 1024.0).abs() < 1e-15);
        assert!(signed_rank_critical(5, 0.025).is_none());
        assert_eq!(signed_rank_critical(6, 0.025).unwrap().0, 0);
        assert_eq!(u_critical(10, 10, 0.025).unwrap().0, 23);
        assert!(u_critical(3, 3, 0.025).is_none());
        assert_eq!(u_critical(4, 4, 0.025).unwrap().0, 0);
    }

    #[test]
    fn signed_rank_exact_small() {
        // All positive: T⁺ = 55 of 55, p = 2/1024.
        let d: Vec<f64> = (1..=10).map(|i| i as f64 * 0.1).collect();
        let r = signed_rank(&d).unwrap();
        assert_eq!(r.t_plus, 55.0);
        assert!((r.p_value - 2.0 / 1024.0).abs() < 1e-15);
        // Zeros are dropped; ties use mid-ranks.
        let r = signed_rank(&[0.0, 1.0, -1.0, 2.0, 2.0, -3.0]).unwrap();
        assert_eq!((r.n, r.zeros), (5, 1));
        assert!(r.has_ties);
        assert_eq!(r.t_plus, 1.5 + 3.5 + 3.5);
        assert!(r.p_value > 0.5 && r.p_value <= 1.0);
        assert_eq!(signed_rank(&[0.0, 0.0]).unwrap().p_value, 1.0);
    }

    #[test]
    fn signed_rank_normal_close_to_exact_at_the_boundary() {
        let d: Vec<f64> = (1..=49)
            .map(|i| if i % 3 == 0 { -(i as f64) } else { i as f64 })
            .collect();
        let exact = signed_rank(&d).unwrap();
        let mut d50 = d.clone();
        d50.push(0.5);
        let approx = signed_rank(&d50).unwrap();
        assert_eq!(exact.method, SignedRankMethod::Exact);
        assert_eq!(approx.method, SignedRankMethod::Normal);
        assert!(
            (exact.p_value - approx.p_value).abs() < 0.02,
            "{} {}",
            exact.p_value,
            approx.p_value
        );
    }

    #[test]
    fn hl_paired_interval_is_walsh_order_statistics() {
        let d = [0.3, -0.1, 0.4, 0.25, 0.05, 0.6, -0.2, 0.15, 0.35, 0.1];
        let e = hl_paired(&d, 0.95).unwrap();
        let mut w = Vec::new();
        for i in 0..10 {
            for j in i..10 {
                w.push(0.5 * (d[i] + d[j]));
            }
        }
        w.sort_by(f64::total_cmp);
        assert_eq!(e.ci_low, w[8]);
        assert_eq!(e.ci_high, w[55 - 9]);
        assert_eq!(e.estimate, 0.5 * (w[27] + w[27]));
        assert!((e.achieved_confidence - (1.0 - 50.0 / 1024.0)).abs() < 1e-12);
        let small = hl_paired(&d[..5], 0.95).unwrap();
        assert!(!small.is_bounded() && small.ci_low.is_infinite());
    }

    #[test]
    fn hl_unpaired_large_matches_enumeration_path() {
        // 1100 × 1000 = 1.1·10⁶ > 2²⁰ differences: the selection path; compare with a
        // direct enumeration.
        let x: Vec<f64> = (0..1100)
            .map(|i| ((i * 7919) % 1009) as f64 * 0.001)
            .collect();
        let y: Vec<f64> = (0..1000)
            .map(|i| ((i * 104729) % 997) as f64 * 0.001 + 0.01)
            .collect();
        let e = hl_unpaired(&x, &y, 0.95).unwrap();
        let mut all: Vec<f64> = x
            .iter()
            .flat_map(|a| y.iter().map(move |b| b - a))
            .collect();
        all.sort_by(f64::total_cmp);
        let (m1, m2) = median_ranks(all.len() as u64);
        assert_eq!(e.estimate, 0.5 * (all[m1 as usize] + all[m2 as usize]));
        let c = e.c.unwrap() as usize;
        assert_eq!(e.ci_low, all[c]);
        assert_eq!(e.ci_high, all[all.len() - 1 - c]);
        assert!(!e.exact);
    }
}
