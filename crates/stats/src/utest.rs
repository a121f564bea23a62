//! The Mann–Whitney U test exactly as benchstat computes it.
//!
//! Source: go-moremath `stats/utest.go` and `stats/udist.go` (pinned at f10218a, the
//! version benchstat v2 builds with), METHOD §1; Mann & Whitney (1947); Klotz (1966),
//! "The Wilcoxon, Ties, and the Computer"; Cheung & Klotz (1997), "The Mann Whitney
//! Wilcoxon Distribution Using Linked Lists".
//!
//! Both samples are sorted and merged; tied values share their mid-rank. R₁ is the rank
//! sum of the first sample and U₁ = R₁ − n₁(n₁+1)/2 (the number of pairs where the first
//! sample's value is larger, ties counting ½); U_small = min(U₁, n₁n₂ − U₁).
//!
//! - No ties and n₁, n₂ ≤ 50: the exact null distribution. p = 2·P(U ≤ U_small).
//! - Ties and n₁, n₂ ≤ 25: the exact distribution *conditional on the tie pattern*
//!   (every way to choose which n₁ of the N ranked values belong to the first sample is
//!   equally likely), counted over 2U so half-integers stay exact. p = 2·P(U₁ ≤ U_small).
//!   Like go-moremath, the tail is taken on the first sample's statistic even when
//!   U_small is the second sample's, and p is not clamped to 1. With exactly two distinct
//!   values go-moremath's closed form over-counts one term when U_small is below the
//!   smallest achievable U (a truncating division); benchstat prints that p-value
//!   (p = 1.500 for 2 against 1, 1, 1), and so does this module.
//! - When U₁ = U₂ in either exact case, p = 1 (doubling the discrete CDF would count the
//!   central mass twice).
//! - Otherwise the normal approximation with tie and continuity corrections:
//!   μ = n₁n₂/2, σ² = n₁n₂/12·[(N+1) − Σ(t³ − t)/(N(N−1))],
//!   z = (U₁ − μ − sign(U₁ − μ)·½)/σ, p = 2·min(Φ(z), 1 − Φ(z)).
//! - All values equal: no test is possible; the result says so and carries p = 1, which is
//!   what benchstat reports (with the warning "all samples are equal").
//!
//! The exact distributions are computed here by a dynamic programme over the merged,
//! ranked values (state: how many first-sample values chosen so far, and U so far), not
//! by go-moremath's recurrences; both count the same permutations, and the tests compare
//! p-values with go-moremath's to 1e-12.
//!
//! Cost: sorting O(N log N), N = n₁ + n₂. Exact without ties O(N·n₁·U_small) ≤ 12.5·10⁶
//! steps at 50/50; exact with ties O(N·n₁·2U_small) ≤ 3·10⁶ steps at 25/25; the normal
//! approximation O(N). Memory O(n₁·U_small) for the exact tables.

use crate::dist::normal_cdf;
use crate::error::{check_finite, StatsError};

/// Largest per-sample size for the exact distribution without ties.
pub const EXACT_LIMIT: usize = 50;
/// Largest per-sample size for the exact distribution with ties.
pub const TIES_EXACT_LIMIT: usize = 25;

/// How the p-value was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UMethod {
    /// Exact null distribution, no ties.
    Exact,
    /// Exact null distribution conditional on the tie pattern.
    ExactTies,
    /// Normal approximation with tie and continuity corrections.
    Normal,
}

/// Result of a two-sided Mann–Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UTest {
    /// Size of the first sample.
    pub n1: usize,
    /// Size of the second sample.
    pub n2: usize,
    /// U of the first sample (pairs where it is larger; ties count ½).
    pub u1: f64,
    /// min(U₁, n₁n₂ − U₁).
    pub u_small: f64,
    /// Two-sided p-value (1 when all values are equal).
    pub p_value: f64,
    /// How `p_value` was computed.
    pub method: UMethod,
    /// Whether any value occurs more than once in the merged sample.
    pub has_ties: bool,
    /// Every value in both samples is the same: the test is meaningless and benchstat
    /// reports p = 1 with a warning.
    pub all_equal: bool,
}

/// The merged, sorted sample reduced to what the U test needs.
struct Ranked {
    /// Sizes of the runs of equal values, in ascending value order (kept only for
    /// samples small enough for an exact distribution).
    ties: Vec<usize>,
    /// Number of runs of equal values.
    runs: usize,
    /// Some run holds more than one value.
    has_ties: bool,
    /// Σ (t³ − t) over the runs: the normal approximation's tie correction.
    tie_sum: f64,
    /// 2·R₁ (twice the first sample's mid-rank sum, an integer).
    two_r1: u64,
}

fn rank(x1: &[f64], x2: &[f64]) -> Ranked {
    // Values were checked finite by the caller; sorted input is used as it is.
    fn sorted(x: &[f64]) -> std::borrow::Cow<'_, [f64]> {
        if x.is_sorted_by(|a, b| a.total_cmp(b).is_le()) {
            std::borrow::Cow::Borrowed(x)
        } else {
            let mut v = x.to_vec();
            v.sort_by(f64::total_cmp);
            std::borrow::Cow::Owned(v)
        }
    }
    let a = sorted(x1);
    let b = sorted(x2);
    let (mut i, mut j) = (0usize, 0usize);
    let keep_runs = a.len() <= EXACT_LIMIT.max(TIES_EXACT_LIMIT)
        && b.len() <= EXACT_LIMIT.max(TIES_EXACT_LIMIT);
    let mut ties = Vec::new();
    let (mut runs, mut has_ties, mut tie_sum) = (0usize, false, 0.0f64);
    let mut two_r1: u64 = 0;
    let mut pos: u64 = 0; // values consumed so far
    while i < a.len() || j < b.len() {
        let v = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) => x.min(y),
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => break,
        };
        let mut from1 = 0u64;
        let mut run = 0u64;
        while i < a.len() && a[i] == v {
            i += 1;
            from1 += 1;
            run += 1;
        }
        while j < b.len() && b[j] == v {
            j += 1;
            run += 1;
        }
        // Mid-rank of positions pos+1..=pos+run, doubled: 2·pos + run + 1.
        two_r1 += from1 * (2 * pos + run + 1);
        pos += run;
        runs += 1;
        has_ties |= run > 1;
        let t = run as f64;
        tie_sum += t * t * t - t;
        if keep_runs {
            ties.push(run as usize);
        }
    }
    Ranked {
        ties,
        runs,
        has_ties,
        tie_sum,
        two_r1,
    }
}

/// P(U₁ ≤ u) under the null without ties, for samples of sizes n1, n2 (u ≥ 0 integer).
fn exact_cdf_no_ties(n1: usize, n2: usize, u: usize) -> f64 {
    let total = n1 + n2;
    // dp[k][v]: number of ways to pick k first-sample items among the items seen so far
    // with partial U = v (only v ≤ u is tracked; U never decreases).
    let width = u + 1;
    let mut dp = vec![0.0f64; (n1 + 1) * width];
    dp[0] = 1.0;
    for item in 0..total {
        let kmax = n1.min(item + 1);
        // Iterate k downward so each item is used once.
        for k in (1..=kmax).rev() {
            // Choosing this item as the k-th first-sample value: the (item − (k−1))
            // second-sample values before it are all smaller.
            let add = item - (k - 1);
            if add > u {
                continue;
            }
            let (lower, upper) = dp.split_at_mut(k * width);
            let src = &lower[(k - 1) * width..k * width];
            let dst = &mut upper[..width];
            for v in (add..width).rev() {
                dst[v] += src[v - add];
            }
        }
    }
    let count: f64 = dp[n1 * width..(n1 + 1) * width].iter().sum();
    count / crate::utest::binomial(total, n1)
}

/// P(2U₁ ≤ two_u) under the null conditional on the tie pattern `ties`.
fn exact_cdf_ties(n1: usize, ties: &[usize], two_u: usize) -> f64 {
    let total: usize = ties.iter().sum();
    if let [t0, t1] = *ties {
        return two_groups_cdf(n1, t0, t1, two_u) / binomial(total, n1);
    }
    let width = two_u + 1;
    let mut dp = vec![0.0f64; (n1 + 1) * width];
    let mut next = dp.clone();
    dp[0] = 1.0;
    let mut start = 0usize; // values before this tie group
    for &t in ties {
        next.iter_mut().for_each(|x| *x = 0.0);
        for k in 0..=n1.min(start) {
            let row = &dp[k * width..(k + 1) * width];
            if row.iter().all(|&x| x == 0.0) {
                continue;
            }
            for r in 0..=t.min(n1 - k) {
                // 2U grows by r·(2·start + t − 2k − r) ≥ 0.
                let add = r * (2 * start + t - 2 * k - r);
                if add > two_u {
                    continue;
                }
                let ways = binomial(t, r);
                let dst = &mut next[(k + r) * width..(k + r + 1) * width];
                for v in 0..width - add {
                    dst[v + add] += ways * row[v];
                }
            }
        }
        std::mem::swap(&mut dp, &mut next);
        start += t;
    }
    let count: f64 = dp[n1 * width..(n1 + 1) * width].iter().sum();
    count / binomial(total, n1)
}

/// Count of first-sample choices with 2U₁ ≤ two_u when only two distinct values occur
/// (t0 copies of the smaller, t1 of the larger), in go-moremath's closed form: taking r
/// values from the upper group gives 2U = n1·(t0 − n1) + r·(t0 + t1). go-moremath bounds r
/// by a division that truncates toward zero, so when two_u is below the smallest
/// achievable 2U (by less than t0 + t1) it still counts r = 0. benchstat prints the
/// resulting p-values (e.g. p = 1.500 for 2 vs 1, 1, 1), so the quirk is kept.
fn two_groups_cdf(n1: usize, t0: usize, t1: usize, two_u: usize) -> f64 {
    let (n1i, t0i, t1i) = (n1 as i64, t0 as i64, t1 as i64);
    let low = (n1i - t0i).max(0);
    let high = (two_u as i64 - n1i * (t0i - n1i)) / (t0i + t1i);
    let mut count = 0.0;
    let mut r = low;
    while r <= high {
        count += binomial(t0, (n1i - r) as usize) * binomial(t1, r as usize);
        r += 1;
    }
    count
}

/// Binomial coefficient C(n, k) as f64 (exact while it fits in 53 bits). O(min(k, n−k)).
pub(crate) fn binomial(n: usize, k: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    let mut c = 1.0f64;
    for i in 0..k {
        c = c * (n - i) as f64 / (i + 1) as f64;
    }
    c.round_if_small()
}

trait RoundIfSmall {
    fn round_if_small(self) -> f64;
}

impl RoundIfSmall for f64 {
    /// Products of ratios drift by an ulp; binomials below 2⁵³ are integers.
    fn round_if_small(self) -> f64 {
        if self < 9.0e15 {
            self.round()
        } else {
            self
        }
    }
}

/// Two-sided Mann–Whitney U test of `x1` against `x2`, as benchstat computes it.
/// Cost: see the module documentation.
///
/// # Errors
/// [`StatsError::TooFewValues`] if either sample is empty; [`StatsError::NonFinite`] on
/// NaN or infinities.
pub fn mann_whitney(x1: &[f64], x2: &[f64]) -> Result<UTest, StatsError> {
    for (what, xs) in [("first sample", x1), ("second sample", x2)] {
        if xs.is_empty() {
            return Err(StatsError::TooFewValues {
                what,
                needed: 1,
                found: 0,
            });
        }
        check_finite(what, xs)?;
    }
    let (n1, n2) = (x1.len(), x2.len());
    let ranked = rank(x1, x2);
    let has_ties = ranked.has_ties;
    let n1n2 = (n1 * n2) as f64;
    let u1 = ranked.two_r1 as f64 / 2.0 - (n1 * (n1 + 1)) as f64 / 2.0;
    let u2 = n1n2 - u1;
    let u_small = u1.min(u2);
    let all_equal = ranked.runs == 1;
    let mut out = UTest {
        n1,
        n2,
        u1,
        u_small,
        p_value: 1.0,
        method: UMethod::Normal,
        has_ties,
        all_equal,
    };
    let exact = (!has_ties && n1 <= EXACT_LIMIT && n2 <= EXACT_LIMIT)
        || (has_ties && n1 <= TIES_EXACT_LIMIT && n2 <= TIES_EXACT_LIMIT);
    if exact {
        out.method = if has_ties {
            UMethod::ExactTies
        } else {
            UMethod::Exact
        };
        if all_equal || u1 == u2 {
            return Ok(out);
        }
        let cdf = if has_ties {
            exact_cdf_ties(n1, &ranked.ties, (2.0 * u_small) as usize)
        } else {
            exact_cdf_no_ties(n1, n2, u_small as usize)
        };
        out.p_value = 2.0 * cdf;
        return Ok(out);
    }
    let t = ranked.tie_sum;
    let n = (n1 + n2) as f64;
    let mu = n1n2 / 2.0;
    let sigma = (n1n2 * ((n + 1.0) - t / (n * (n - 1.0))) / 12.0).sqrt();
    if sigma == 0.0 {
        return Ok(out);
    }
    let mut numer = u1 - mu;
    numer -= sign(numer) * 0.5;
    let z = numer / sigma;
    let c = normal_cdf(z);
    out.p_value = 2.0 * c.min(1.0 - c);
    Ok(out)
}

fn sign(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// The smallest possible two-sided p-value of the exact test with n values per side and
/// no ties: 2/C(2n, n) (1 for n = 1). O(n).
pub fn min_p_value(n: usize) -> f64 {
    if n == 0 {
        return 1.0;
    }
    (2.0 / binomial(2 * n, n)).min(1.0)
}

/// benchstat's "need >= N samples to detect a difference at alpha level A": the smallest
/// n in 1..=9 whose [`min_p_value`] is ≤ `alpha`, or `(9, true)` meaning "> 9". benchstat
/// shows the warning only when p > alpha and both samples are smaller than N. O(1).
pub fn samples_needed(alpha: f64) -> (usize, bool) {
    for n in 1..=9 {
        if min_p_value(n) <= alpha {
            return (n, false);
        }
    }
    (9, true)
}

/// Exact null CDF P(U ≤ u) of the U statistic for samples of sizes `n1` and `n2` without
/// ties; used to place the Hodges–Lehmann interval. O((n1+n2)·n1·u) time, O(n1·u) memory.
pub fn u_cdf(n1: usize, n2: usize, u: usize) -> f64 {
    exact_cdf_no_ties(n1, n2, u)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimum_p_values_match_benchstat_table() {
        let table = [
            1.0,
            0.3333333333333333,
            0.1,
            0.02857142857142857,
            0.007936507936507936,
            0.0021645021645021645,
            0.0005827505827505828,
            0.0001554001554001554,
            4.113533525298231e-05,
        ];
        for (i, &want) in table.iter().enumerate() {
            let n = i + 1;
            let x1 = vec![-1.0; n];
            let x2 = vec![1.0; n];
            let exact = mann_whitney(&x1, &x2).unwrap();
            assert!(
                (exact.p_value - want).abs() < 1e-15 * want.max(1.0),
                "n={n}"
            );
            assert!((min_p_value(n) - want).abs() < 1e-15);
        }
        assert_eq!(samples_needed(0.05), (4, false));
    }

    #[test]
    fn all_equal_gives_p_one() {
        let r = mann_whitney(&[3.0, 3.0, 3.0], &[3.0, 3.0]).unwrap();
        assert!(r.all_equal);
        assert_eq!(r.p_value, 1.0);
        let big = vec![1.0; 60];
        let r = mann_whitney(&big, &big).unwrap();
        assert!(r.all_equal && r.p_value == 1.0 && r.method == UMethod::Normal);
    }

    #[test]
    fn symmetric_statistic_gives_p_one() {
        let r = mann_whitney(&[1.0, 4.0], &[2.0, 3.0]).unwrap();
        assert_eq!(r.u1, 2.0);
        assert_eq!(r.p_value, 1.0);
    }

    #[test]
    fn tie_dp_equals_plain_dp_without_ties() {
        for (n1, n2, u) in [(5, 7, 8), (10, 10, 23), (3, 9, 0), (12, 4, 20)] {
            let plain = exact_cdf_no_ties(n1, n2, u);
            let ties = exact_cdf_ties(n1, &vec![1; n1 + n2], 2 * u);
            assert!(
                (plain - ties).abs() < 1e-14,
                "{n1} {n2} {u}: {plain} vs {ties}"
            );
        }
        // P(U ≤ 23) at 10/10 is the HL interval's c = 23 level.
        assert!(exact_cdf_no_ties(10, 10, 23) <= 0.025);
        assert!(exact_cdf_no_ties(10, 10, 24) > 0.025);
    }
}
