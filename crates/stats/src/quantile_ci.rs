//! benchstat's median and the confidence interval of a quantile from order statistics.
//!
//! Source: go-moremath `stats/quantileci.go` (Austin Clements, pinned at f10218a, the
//! version benchstat builds with), as described in METHOD §1. The number K of sample
//! values below the population q-quantile is Binomial(n, q); an interval between order
//! statistics X₍l₎ and X₍r₎ covers the quantile with probability P(l ≤ K < r).
//!
//! - n ≤ 30: start at the lower mode ⌈(n+1)q⌉ − 1 and grow the band [l, r) one order
//!   statistic at a time, always taking the more probable neighbour (the left one on a
//!   tie), until its mass reaches the requested confidence. The achieved confidence is
//!   reported. The binomial coefficients are go-moremath's own (exact integers up to
//!   n = 20, its rounded lgamma-based values for 21..=30, tabulated): their last-bit
//!   rounding decides some of the left/right ties and so which order statistics benchstat
//!   prints.
//! - n > 30: normal approximation N(nq, nq(1−q)) with continuity correction, the band
//!   rounded outward to whole ranks, then narrowed by one rank on the right if that still
//!   meets the confidence (a left-biased interval).
//!
//! Bounds outside 1..n mean the interval is unbounded on that side (±∞).
//!
//! Cost: O(n) time for n ≤ 30 (at most n + 1 steps), O(1) above; no allocation.

use crate::dist::{normal_cdf, normal_quantile};
use crate::error::StatsError;

/// Sample size above which the normal approximation is used (go-moremath's threshold).
pub const EXACT_LIMIT: usize = 30;

/// Which order statistics bound a quantile's confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuantileCi {
    /// The quantile (0.5 for the median).
    pub quantile: f64,
    /// Sample size.
    pub n: usize,
    /// Achieved confidence (≥ the requested one, or 1 when the interval is everything).
    pub confidence: f64,
    /// 1-based order statistic of the lower bound; 0 means −∞.
    pub lo_order: usize,
    /// 1-based order statistic of the upper bound; n + 1 means +∞.
    pub hi_order: usize,
    /// Another interval, one rank to the right, has the same confidence.
    pub ambiguous: bool,
}

/// go-moremath's `mathx.Choose(n, k)` for 21 ≤ n ≤ 30 and 1 ≤ k < n, as IEEE-754 bits.
///
/// Above n = 20 go-moremath computes the coefficient as exp(lgamma(n+1) − lgamma(k+1) −
/// lgamma(n−k+1)) with Go's amd64 `Exp`/`Log`, which carries a few ulps of error that is
/// not even symmetric in k; those bits decide the left/right ties of the interval search
/// and so which order statistics benchstat prints. The values were printed by calling
/// go-moremath f10218a; the test `go_table_is_close_to_exact` bounds their error.
#[rustfmt::skip]
const GO_CHOOSE_21_30: [&[u64]; 10] = [
    // n = 21, k = 1..20
    &[0x4035000000000027, 0x406a40000000001f, 0x4094c8000000002f, 0x40b761000000000b, 0x40d3df400000001d, 0x40ea7f0000000047, 0x40fc638000000040, 0x4108d71000000012, 0x4111f0a800000011, 0x4115873000000016, 0x4115873000000016, 0x4111f0a800000011, 0x4108d71000000006, 0x40fc63800000004e, 0x40ea7f000000003a, 0x40d3df400000001d, 0x40b7610000000022, 0x4094c8000000002f, 0x406a40000000002c, 0x4035000000000027],
    // n = 22, k = 1..21
    &[0x4035ffffffffffec, 0x406ce0000000000c, 0x4098100000000016, 0x40bc930000000009, 0x40d9b78000000012, 0x40f237500000000c, 0x4104d18000000019, 0x4113846800000022, 0x411e5c2fffffffe6, 0x4123bbebffffffe6, 0x412587300000000c, 0x4123bbebfffffffa, 0x411e5c2fffffffe6, 0x4113846800000018, 0x4104d18000000023, 0x40f2375000000003, 0x40d9b78000000012, 0x40bc930000000025, 0x4098100000000016, 0x406ce0000000001a, 0x4035ffffffffffec],
    // n = 23, k = 1..22
    &[0x4037000000000000, 0x406f9fffffffffd2, 0x409bac000000001e, 0x40c14b7ffffffffe, 0x40e06e2000000019, 0x40f8a53000000015, 0x410ded2800000003, 0x411ded2800000030, 0x4128f04c0000001b, 0x41317501fffffffd, 0x4134a18e00000004, 0x4134a18e00000004, 0x41317501ffffffeb, 0x4128f04c0000001b, 0x411ded2800000021, 0x410ded2800000012, 0x40f8a53000000009, 0x40e06e2000000019, 0x40c14b800000000f, 0x409bac000000001e, 0x406f9fffffffffe1, 0x4037000000000000],
    // n = 24, k = 1..23
    &[0x4037ffffffffffb6, 0x40713fffffffffc2, 0x409f9fffffffff85, 0x40c4c0ffffffffc0, 0x40e4c0ffffffffd6, 0x41006e1fffffffe8, 0x41151fdfffffffc5, 0x412671ddffffffc7, 0x4133f36fffffffd5, 0x413ded27ffffffd8, 0x41430b47ffffffb7, 0x4144a18dffffffbb, 0x41430b47ffffffcb, 0x413ded27ffffffba, 0x4133f36fffffffd5, 0x412671ddffffffbb, 0x41151fdfffffffd0, 0x41006e1fffffffe0, 0x40e4c0ffffffffd6, 0x40c4c0ffffffffd5, 0x409f9fffffffff85, 0x40713fffffffffca, 0x4037ffffffffffb6],
    // n = 25, k = 1..24
    &[0x4039000000000059, 0x4072bfffffffffff, 0x40a1f8000000000b, 0x40c8b4ffffffffde, 0x40e9f1400000002d, 0x41059e6000000024, 0x411d56f00000002f, 0x413080e700000014, 0x413f2c5f0000000a, 0x4148f04c00000003, 0x415100ee0000001d, 0x4153d66afffffff4, 0x4153d66affffffe0, 0x415100ee0000001d, 0x4148f04c0000001c, 0x413f2c5f0000000a, 0x413080e70000000c, 0x411d56f00000003e, 0x41059e600000001a, 0x40e9f1400000002d, 0x40c8b4fffffffff7, 0x40a1f8000000000b, 0x4072c00000000009, 0x4039000000000059],
    // n = 26, k = 1..25
    &[0x4039ffffffffffd7, 0x407450000000001d, 0x40a44fffffffffec, 0x40cd32ffffffffc5, 0x40f00f3fffffffe4, 0x410c1ab000000008, 0x4124130ffffffff7, 0x4137d6a30000000b, 0x4147d6a2ffffffe7, 0x4154433dbfffffcc, 0x415d7913ffffffff, 0x41626bac7ffffffb, 0x4163d66affffffaf, 0x41626bac7ffffffb, 0x415d7913ffffffff, 0x4154433dbfffffe0, 0x4147d6a2ffffffe7, 0x4137d6a2fffffffe, 0x4124131000000001, 0x410c1aaffffffff9, 0x40f00f3fffffffe4, 0x40cd32ffffffffe2, 0x40a44fffffffffec, 0x4074500000000028, 0x4039ffffffffffd7],
    // n = 27, k = 1..26
    &[0x403affffffffffcb, 0x4075efffffffffa6, 0x40a6da0000000002, 0x40d1237fffffffbb, 0x40f3b59fffffffc9, 0x41121127ffffffbf, 0x412b19bbffffffc3, 0x4140f0157fffffde, 0x4151e0fa3fffffd8, 0x416017479fffffba, 0x4168de28dfffffb3, 0x4170941b3fffffd8, 0x4173210bbfffffb1, 0x4173210bbfffffc4, 0x4170941b3fffffd8, 0x4168de28dfffffcc, 0x416017479fffffca, 0x4151e0fa3fffffd8, 0x4140f0157fffffd6, 0x412b19bbffffffd0, 0x41121127ffffffb6, 0x40f3b59fffffffc9, 0x40d1237fffffffcc, 0x40a6da0000000002, 0x4075efffffffffb1, 0x403affffffffffcb],
    // n = 28, k = 1..27
    &[0x403c000000000065, 0x4077a00000000019, 0x40a9980000000004, 0x40d3fec000000035, 0x40f7fe8000000013, 0x4116fe9000000015, 0x41321127fffffff6, 0x4147b6848000002a, 0x415a590500000018, 0x416907c4c0000001, 0x41747ab84000000e, 0x417d032fb0000003, 0x4181da937ffffff4, 0x4183210bc000002e, 0x4181da9380000006, 0x417d032fb0000020, 0x41747ab84000000e, 0x416907c4c000001a, 0x415a590500000018, 0x4147b6848000001e, 0x41321127ffffffff, 0x4116fe900000000a, 0x40f7fe8000000013, 0x40d3fec000000049, 0x40a9980000000004, 0x4077a00000000025, 0x403c000000000065],
    // n = 29, k = 1..28
    &[0x403d000000000005, 0x4079600000000052, 0x40ac8c0000000036, 0x40d731bfffffffef, 0x40fcfe300000003b, 0x411cfe2fffffffe5, 0x4137d0cc0000000d, 0x41505f8c40000000, 0x41631a23a0000017, 0x41731a239ffffffb, 0x41807f4d5000001b, 0x4188bef3f800000c, 0x41902e15abffffe6, 0x41927dcfa000002d, 0x41927dcfa000002d, 0x41902e15ac000006, 0x4188bef3f800000c, 0x41807f4d5000001b, 0x41731a23a000000e, 0x41631a23a0000017, 0x41505f8c3ffffff8, 0x4137d0cc00000019, 0x411cfe3000000011, 0x40fcfe3000000075, 0x40d731c000000006, 0x40ac8c0000000036, 0x407960000000005e, 0x403d000000000005],
    // n = 30, k = 1..29
    &[0x403e000000000013, 0x407b300000000007, 0x40afb80000000090, 0x40dac34000000028, 0x4101654ffffffff1, 0x41221ede00000033, 0x413f105800000025, 0x415653bf3ffffff8, 0x416b49e9c0000000, 0x417ca73570000010, 0x418a0c5f20000031, 0x41949f20a4000028, 0x419c8d8fa7ffffeb, 0x41a155f2a6000022, 0x41a27dcfa0000036, 0x41a155f2a6000033, 0x419c8d8fa8000007, 0x41949f20a4000028, 0x418a0c5f20000031, 0x417ca7357000002d, 0x416b49e9c0000000, 0x415653bf40000019, 0x413f105800000035, 0x41221ede0000004e, 0x4101655000000013, 0x40dac34000000043, 0x40afb80000000090, 0x407b300000000015, 0x403e000000000013],
];

/// go-moremath's binomial coefficient: exact for n ≤ 20, its own rounded values for
/// 21..=30 (the only sizes the exact search uses), exp(lchoose) above.
fn choose(n: usize, k: usize) -> f64 {
    if k == 0 || k == n {
        return 1.0;
    }
    if k > n {
        return 0.0;
    }
    if n <= 20 {
        let mut numer: u64 = 1;
        for v in (n - (k - 1))..=n {
            numer *= v as u64;
        }
        let denom: u64 = (1..=k as u64).product();
        return (numer / denom) as f64;
    }
    if n <= 30 {
        return f64::from_bits(GO_CHOOSE_21_30[n - 21][k - 1]);
    }
    let a = libm::lgamma_r((n + 1) as f64).0;
    let b = libm::lgamma_r((k + 1) as f64).0;
    let c = libm::lgamma_r((n - k + 1) as f64).0;
    (a - b - c).exp()
}

/// Binomial(n, p) probability of exactly `k` successes, as go-moremath computes it;
/// 0 outside 0..=n.
fn binom_pmf(n: usize, p: f64, k: i64) -> f64 {
    if k < 0 || k as usize > n {
        return 0.0;
    }
    let k = k as usize;
    choose(n, k) * p.powi(k as i32) * (1.0 - p).powi((n - k) as i32)
}

/// The confidence interval of the `q`-quantile of a sample of size `n` at `confidence`,
/// as order statistics (go-moremath `QuantileCI`). O(n) for n ≤ 30, O(1) above.
///
/// # Errors
/// [`StatsError::BadParameter`] if `q` is outside [0, 1] or `confidence` is not in (0, 1].
pub fn quantile_ci(n: usize, q: f64, confidence: f64) -> Result<QuantileCi, StatsError> {
    if !(0.0..=1.0).contains(&q) {
        return Err(StatsError::BadParameter {
            what: "quantile",
            expected: "between 0 and 1",
            found: q,
        });
    }
    if !(confidence > 0.0 && confidence <= 1.0) {
        return Err(StatsError::BadParameter {
            what: "confidence",
            expected: "greater than 0 and at most 1",
            found: confidence,
        });
    }
    let mut res = QuantileCi {
        quantile: q,
        n,
        confidence: 0.0,
        lo_order: 0,
        hi_order: n + 1,
        ambiguous: false,
    };
    if confidence >= 1.0 {
        res.confidence = 1.0;
        return Ok(res);
    }
    let orders = if n <= EXACT_LIMIT {
        exact_orders(n, q, confidence)
    } else {
        normal_orders(n, q, confidence)
    };
    res.confidence = orders.confidence;
    res.ambiguous = orders.ambiguous;
    let (l, r) = (orders.lo, orders.hi);
    res.lo_order = l.max(0) as usize;
    res.hi_order = (r.min(n as i64 + 1)).max(0) as usize;
    Ok(res)
}

/// Order statistics bounding a quantile, before clamping to 0..=n+1, with the
/// confidence they reach and whether another choice would have reached it equally.
struct Orders {
    lo: i64,
    hi: i64,
    confidence: f64,
    ambiguous: bool,
}

/// Small samples: grows the interval from the quantile's order statistic by the exact
/// binomial probabilities, the likelier side first, until it reaches `confidence`.
fn exact_orders(n: usize, q: f64, confidence: f64) -> Orders {
    let pmf = |k: i64| binom_pmf(n, q, k);
    let mut x = ((n + 1) as f64 * q).ceil() as i64 - 1;
    if q == 0.0 {
        x = 0;
    }
    let mut accum = pmf(x);
    let (mut lo, mut hi) = (x, x + 1);
    let mut lp = pmf(lo - 1);
    let mut rp = pmf(hi);
    let mut ambiguous = rp == accum;
    while accum < confidence && (lp > 0.0 || rp > 0.0) {
        ambiguous = lp == rp;
        if lp >= rp {
            accum += lp;
            lo -= 1;
            lp = pmf(lo - 1);
        } else {
            accum += rp;
            hi += 1;
            rp = pmf(hi);
        }
    }
    Orders {
        lo,
        hi,
        confidence: accum,
        ambiguous,
    }
}

/// Large samples: the normal approximation of the binomial, with continuity correction.
fn normal_orders(n: usize, q: f64, confidence: f64) -> Orders {
    let mu = n as f64 * q;
    let sigma = (n as f64 * q * (1.0 - q)).sqrt();
    let alpha = (1.0 - confidence) / 2.0;
    let l1 = mu + sigma * normal_quantile(alpha);
    let r1 = 2.0 * mu - l1;
    let lo = ((l1 - 0.5).floor() + 0.5).floor() as i64 + 1;
    let mut hi = ((r1 - 0.5).ceil() + 0.5).floor() as i64 + 1;
    let cdf = |l: i64, r: i64| {
        normal_cdf((r as f64 - 0.5 - mu) / sigma) - normal_cdf((l as f64 - 0.5 - mu) / sigma)
    };
    let mut reached = cdf(lo, hi);
    let mut ambiguous = false;
    let biased = cdf(lo, hi - 1);
    if biased >= confidence && biased < reached {
        reached = biased;
        ambiguous = true;
        hi -= 1;
    }
    if lo <= 0 && hi > n as i64 {
        reached = 1.0;
        ambiguous = false;
    }
    Orders {
        lo,
        hi,
        confidence: reached,
        ambiguous,
    }
}

impl QuantileCi {
    /// The interval's bounds taken from an ascending sample of size `self.n`
    /// (−∞/+∞ where the order statistic is outside the sample). O(1).
    ///
    /// # Errors
    /// [`StatsError::LengthMismatch`] if `sorted` does not have `self.n` values.
    pub fn bounds(&self, sorted: &[f64]) -> Result<(f64, f64), StatsError> {
        if sorted.len() != self.n {
            return Err(StatsError::LengthMismatch {
                what: "quantile interval and sample",
                left: self.n,
                right: sorted.len(),
            });
        }
        let lo = if self.lo_order < 1 {
            f64::NEG_INFINITY
        } else {
            sorted[self.lo_order - 1]
        };
        let hi = if self.hi_order > self.n {
            f64::INFINITY
        } else {
            sorted[self.hi_order - 1]
        };
        Ok((lo, hi))
    }
}

/// A sample's summary as benchstat prints it under its default (non-parametric)
/// assumption: the median and its confidence interval.
#[derive(Debug, Clone, PartialEq)]
pub struct MedianSummary {
    /// Number of values.
    pub n: usize,
    /// The median (Hyndman–Fan definition 8).
    pub median: f64,
    /// Lower bound of the interval (−∞ if the sample is too small).
    pub lo: f64,
    /// Upper bound of the interval (+∞ if the sample is too small).
    pub hi: f64,
    /// Achieved confidence of [lo, hi].
    pub confidence: f64,
    /// When a bound is infinite: the smallest n with a finite interval at this confidence
    /// (searched over 2..=50), and whether that search ran out (`n > 50`). benchstat says
    /// "need >= N samples for confidence interval at level C".
    pub need_samples: Option<(usize, bool)>,
}

impl MedianSummary {
    /// benchstat's `±` column: round(100·max(hi/median − 1, 1 − lo/median)) as a whole
    /// percent; `None` for "∞" (infinite bound) and `Some(Err(()))` for "?" (a bound's sign
    /// differs from the median's). Centre 0 with zero bounds gives 0.
    pub fn pct_range(&self) -> Option<Result<f64, ()>> {
        if self.lo.is_infinite() || self.hi.is_infinite() {
            return None;
        }
        let sign = |x: f64| {
            if x > 0.0 {
                1
            } else if x < 0.0 {
                -1
            } else {
                0
            }
        };
        let c = sign(self.median);
        if c != sign(self.lo) || c != sign(self.hi) {
            return Some(Err(()));
        }
        if self.median == 0.0 {
            return Some(Ok(0.0));
        }
        Some(Ok(100.0
            * (self.hi / self.median - 1.0)
                .max(1.0 - self.lo / self.median)))
    }
}

/// The smallest n in 2..=50 whose median interval at `confidence` is finite on both sides;
/// `(50, true)` if none is. O(n²) over the search, cheap (≤ 50 intervals of ≤ 50 steps).
///
/// # Errors
/// As [`quantile_ci`].
pub fn median_samples_needed(confidence: f64) -> Result<(usize, bool), StatsError> {
    const LIMIT: usize = 50;
    for n in 2..=LIMIT {
        let ci = quantile_ci(n, 0.5, confidence)?;
        if ci.lo_order > 0 && ci.hi_order <= n {
            return Ok((n, false));
        }
    }
    Ok((LIMIT, true))
}

/// benchstat's summary of one sample: median and its order-statistic interval.
/// O(n log n) (sorts a copy).
///
/// # Errors
/// [`StatsError::TooFewValues`] if empty, [`StatsError::NonFinite`] on NaN/∞, and the
/// parameter errors of [`quantile_ci`].
pub fn median_summary(xs: &[f64], confidence: f64) -> Result<MedianSummary, StatsError> {
    if xs.is_empty() {
        return Err(StatsError::TooFewValues {
            what: "benchstat sample",
            needed: 1,
            found: 0,
        });
    }
    crate::error::check_finite("benchstat sample", xs)?;
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let ci = quantile_ci(v.len(), 0.5, confidence)?;
    let (lo, hi) = ci.bounds(&v)?;
    let need_samples = if lo.is_infinite() || hi.is_infinite() {
        Some(median_samples_needed(confidence)?)
    } else {
        None
    };
    Ok(MedianSummary {
        n: v.len(),
        median: crate::describe::median_sorted(&v),
        lo,
        hi,
        confidence: ci.confidence,
        need_samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn n6_is_min_to_max() {
        let ci = quantile_ci(6, 0.5, 0.95).unwrap();
        assert_eq!((ci.lo_order, ci.hi_order), (1, 6));
        assert!((ci.confidence - 0.96875).abs() < 1e-15);
        let ci5 = quantile_ci(5, 0.5, 0.95).unwrap();
        assert!(ci5.lo_order == 0 || ci5.hi_order == 6);
        assert_eq!(median_samples_needed(0.95).unwrap(), (6, false));
    }

    #[test]
    fn go_table_is_close_to_exact() {
        for n in 21..=30usize {
            for k in 1..n {
                let exact = crate::utest::binomial(n, k);
                let got = choose(n, k);
                assert!(
                    ((got - exact) / exact).abs() < 1e-13,
                    "C({n},{k}) = {got}, exact {exact}"
                );
            }
        }
        // The asymmetry that matters: C(21,2) ≠ C(21,19) in go-moremath.
        assert_ne!(choose(21, 2), choose(21, 19));
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(quantile_ci(5, 1.5, 0.95).is_err());
        assert!(quantile_ci(5, 0.5, 0.0).is_err());
        assert_eq!(quantile_ci(5, 0.5, 1.0).unwrap().hi_order, 6);
    }
}
