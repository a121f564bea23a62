//! Selection of the k-th smallest pairwise difference or Walsh average without
//! enumerating them.
//!
//! Source: Johnson & Mizoguchi (1978), "Selecting the Kth Element in X + Y and
//! X1 + X2 + … + Xm" (SIAM J. Comput. 7(2)), and Monahan (1984), "Fast Computation of the
//! Hodges–Lehmann Location Estimator" (ACM TOMS 10(3), Algorithm 616).
//!
//! The m·n differences y_j − x_i (or the n(n+1)/2 Walsh averages (d_i + d_j)/2, i ≤ j) of
//! sorted inputs form a matrix whose rows are sorted. Each row keeps a window of column
//! indices that may still hold the answer. For a pivot p, one monotone sweep finds, in
//! every row, how many entries are below (or at most) p: because the rows are sorted in both
//! directions the sweep pointer only moves one way, so a count costs O(m + n). Each round
//! draws 4096 candidates uniformly (seeded, deterministic) and takes two of them as pivots
//! bracketing rank k's relative position (as Floyd & Rivest's selection does); the windows
//! then shrink to the values between the pivots, about 4 % of the candidates, or to the
//! side that holds rank k when the bracket misses. So O(log(mn)) rounds are expected:
//! O((m + n) log(m + n)) time in all, O(m + n) memory. When few candidates remain they are
//! gathered and selected directly.
//!
//! Values are compared exactly as computed (y_j − x_i, and 0.5·(d_i + d_j)), and IEEE
//! rounding is monotone, so the sorted-row structure holds for the computed values too.

/// A matrix with sorted rows, each a window of columns.
trait SortedRows {
    fn rows(&self) -> usize;
    /// Valid columns of row i: [start, end).
    fn range(&self, i: usize) -> (usize, usize);
    fn value(&self, i: usize, j: usize) -> f64;
    /// For every row, the first column whose value is ≥ p (`strict` false) or > p
    /// (`strict` true), written into `out`; returns how many values lie before those
    /// boundaries in all. Must run in O(rows + columns).
    fn boundaries(&self, p: f64, strict: bool, out: &mut [usize]) -> u64;
}

struct Differences<'a> {
    x: &'a [f64],
    y: &'a [f64],
}

impl SortedRows for Differences<'_> {
    fn rows(&self) -> usize {
        self.x.len()
    }
    fn range(&self, _i: usize) -> (usize, usize) {
        (0, self.y.len())
    }
    fn value(&self, i: usize, j: usize) -> f64 {
        self.y[j] - self.x[i]
    }
    fn boundaries(&self, p: f64, strict: bool, out: &mut [usize]) -> u64 {
        // y_j − x_i falls as i grows, so the boundary moves right with i.
        let n = self.y.len();
        let mut j = 0;
        let mut count = 0u64;
        for (o, &xi) in out.iter_mut().zip(self.x) {
            while j < n && below(self.y[j] - xi, p, strict) {
                j += 1;
            }
            *o = j;
            count += j as u64;
        }
        count
    }
}

struct Walsh<'a> {
    d: &'a [f64],
}

impl SortedRows for Walsh<'_> {
    fn rows(&self) -> usize {
        self.d.len()
    }
    fn range(&self, i: usize) -> (usize, usize) {
        (i, self.d.len())
    }
    fn value(&self, i: usize, j: usize) -> f64 {
        0.5 * (self.d[i] + self.d[j])
    }
    fn boundaries(&self, p: f64, strict: bool, out: &mut [usize]) -> u64 {
        // (d_i + d_j)/2 grows with i, so the boundary over all columns moves right as i
        // falls; the row's own window then starts at column i.
        let n = self.d.len();
        let mut j = 0;
        let mut count = 0u64;
        for i in (0..n).rev() {
            while j < n && below(0.5 * (self.d[i] + self.d[j]), p, strict) {
                j += 1;
            }
            out[i] = j.max(i);
            count += (out[i] - i) as u64;
        }
        count
    }
}

#[inline]
fn below(v: f64, p: f64, strict: bool) -> bool {
    if strict {
        v <= p
    } else {
        v < p
    }
}

/// SplitMix64: a tiny seeded generator for pivot choice (deterministic results).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }
}

/// Candidates gathered directly once this few remain.
const DIRECT: u64 = 4096;
/// Candidates sampled per round to place the two pivots.
const SAMPLE: usize = 4096;

fn select<M: SortedRows>(m: &M, k: u64) -> f64 {
    let rows = m.rows();
    let starts: Vec<usize> = (0..rows).map(|i| m.range(i).0).collect();
    let mut lo = starts.clone();
    let mut hi: Vec<usize> = (0..rows).map(|i| m.range(i).1).collect();
    let mut b_lo = vec![0usize; rows];
    let mut b_hi = vec![0usize; rows];
    let mut prefix = vec![0u64; rows + 1];
    let mut sample = Vec::with_capacity(SAMPLE);
    let mut rng = SplitMix(0x0005_EED0_F4C0_FFEE ^ k);
    loop {
        let mut before = 0u64;
        for i in 0..rows {
            prefix[i + 1] = prefix[i] + (hi[i] - lo[i]) as u64;
            before += (lo[i] - starts[i]) as u64;
        }
        let remaining = prefix[rows];
        if remaining <= DIRECT.max(rows as u64) {
            let mut vals = Vec::with_capacity(remaining as usize);
            for i in 0..rows {
                for j in lo[i]..hi[i] {
                    vals.push(m.value(i, j));
                }
            }
            let idx = (k - before) as usize;
            let (_, v, _) = vals.select_nth_unstable_by(idx, f64::total_cmp);
            return *v;
        }
        // Floyd–Rivest style: sample candidates and take two pivots that bracket the
        // target's relative position with high probability.
        let draw = |rng: &mut SplitMix| {
            let r = rng.below(remaining);
            let i = prefix.partition_point(|&p| p <= r) - 1;
            m.value(i, lo[i] + (r - prefix[i]) as usize)
        };
        sample.clear();
        for _ in 0..SAMPLE {
            sample.push(draw(&mut rng));
        }
        sample.sort_unstable_by(f64::total_cmp);
        let f = (k - before) as f64 / remaining as f64;
        let spread = 2.5 * (SAMPLE as f64 * f * (1.0 - f)).sqrt() + 1.0;
        let centre = f * SAMPLE as f64;
        let li = (centre - spread).floor().max(0.0) as usize;
        let hi_i = ((centre + spread).ceil() as usize).min(SAMPLE - 1);
        let (p_lo, p_hi) = (sample[li], sample[hi_i]);
        let below_lo = m.boundaries(p_lo, false, &mut b_lo);
        if k < below_lo {
            for i in 0..rows {
                hi[i] = hi[i].min(b_lo[i]).max(lo[i]);
            }
            continue;
        }
        let upto_hi = m.boundaries(p_hi, true, &mut b_hi);
        if k >= upto_hi {
            for i in 0..rows {
                lo[i] = lo[i].max(b_hi[i]).min(hi[i]);
            }
            continue;
        }
        if p_lo == p_hi {
            // Every value ranked below_lo..upto_hi equals the pivot.
            return p_lo;
        }
        let mut removed = false;
        for i in 0..rows {
            let (nl, nh) = (
                lo[i].max(b_lo[i]),
                hi[i].min(b_hi[i]).max(lo[i].max(b_lo[i])),
            );
            removed |= nl != lo[i] || nh != hi[i];
            lo[i] = nl;
            hi[i] = nh;
        }
        if !removed {
            // All candidates lie in [p_lo, p_hi]: settle on p_lo's side. Values equal to
            // p_lo are ranked below_lo.. and the target is at or above that, so split at
            // "≤ p_lo": either the answer is p_lo or it is strictly above it.
            let upto_lo = m.boundaries(p_lo, true, &mut b_hi);
            if k < upto_lo {
                return p_lo;
            }
            for i in 0..rows {
                lo[i] = lo[i].max(b_hi[i]).min(hi[i]);
            }
        }
    }
}

/// The smallest value strictly greater than `v`, and how many values are ≤ `v`; one sweep,
/// O(rows + columns). `None` for the value when nothing is greater.
fn next_above<M: SortedRows>(m: &M, v: f64) -> (Option<f64>, u64) {
    let rows = m.rows();
    let mut b = vec![0usize; rows];
    let upto = m.boundaries(v, true, &mut b);
    let mut best: Option<f64> = None;
    for (i, &j) in b.iter().enumerate() {
        if j < m.range(i).1 {
            let x = m.value(i, j);
            best = Some(best.map_or(x, |c: f64| c.min(x)));
        }
    }
    (best, upto)
}

/// The k-th and (k+1)-th smallest values in one selection plus one sweep.
fn select_pair<M: SortedRows>(m: &M, k: u64) -> (f64, f64) {
    let v = select(m, k);
    let (next, upto) = next_above(m, v);
    if k + 1 < upto {
        (v, v)
    } else {
        (v, next.unwrap_or(v))
    }
}

/// The k-th and (k+1)-th smallest (0-based) of the differences y_j − x_i, e.g. the two
/// middle values for an even count. `None` if k + 1 ≥ m·n. Expected O((m + n) log(m + n)).
pub fn kth_difference_pair(x_sorted: &[f64], y_sorted: &[f64], k: u64) -> Option<(f64, f64)> {
    let total = x_sorted.len() as u64 * y_sorted.len() as u64;
    if k + 1 >= total {
        return None;
    }
    Some(select_pair(
        &Differences {
            x: x_sorted,
            y: y_sorted,
        },
        k,
    ))
}

/// The k-th and (k+1)-th smallest (0-based) Walsh averages. `None` if k + 1 ≥ n(n+1)/2.
/// Expected O(n log n).
pub fn kth_walsh_pair(d_sorted: &[f64], k: u64) -> Option<(f64, f64)> {
    let n = d_sorted.len() as u64;
    if k + 1 >= n * (n + 1) / 2 {
        return None;
    }
    Some(select_pair(&Walsh { d: d_sorted }, k))
}

/// The k-th smallest (0-based) of the m·n differences y_j − x_i, for ascending `x` and
/// `y`. `None` if either is empty or k ≥ m·n. Expected O((m + n) log(m + n)).
pub fn kth_difference(x_sorted: &[f64], y_sorted: &[f64], k: u64) -> Option<f64> {
    let total = x_sorted.len() as u64 * y_sorted.len() as u64;
    if k >= total {
        return None;
    }
    Some(select(
        &Differences {
            x: x_sorted,
            y: y_sorted,
        },
        k,
    ))
}

/// The k-th smallest (0-based) of the n(n+1)/2 Walsh averages (d_i + d_j)/2, i ≤ j, of
/// ascending `d`. `None` if k is out of range. Expected O(n log n).
pub fn kth_walsh(d_sorted: &[f64], k: u64) -> Option<f64> {
    let n = d_sorted.len() as u64;
    if k >= n * (n + 1) / 2 {
        return None;
    }
    Some(select(&Walsh { d: d_sorted }, k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn sorted(v: &mut [f64]) {
        v.sort_by(f64::total_cmp);
    }

    #[test]
    fn matches_brute_force_on_random_data() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
        for case in 0..30 {
            let m = rng.gen_range(1..120);
            let n = rng.gen_range(1..150);
            let ties = case % 3 == 0;
            let mut gen = |len: usize| -> Vec<f64> {
                let mut v: Vec<f64> = (0..len)
                    .map(|_| {
                        if ties {
                            rng.gen_range(0..7) as f64
                        } else {
                            rng.gen::<f64>() * 10.0 - 3.0
                        }
                    })
                    .collect();
                sorted(&mut v);
                v
            };
            let x = gen(m);
            let y = gen(n);
            let mut all: Vec<f64> = x
                .iter()
                .flat_map(|a| y.iter().map(move |b| b - a))
                .collect();
            sorted(&mut all);
            for &k in &[0, all.len() / 3, all.len() / 2, all.len() - 1] {
                assert_eq!(
                    kth_difference(&x, &y, k as u64),
                    Some(all[k]),
                    "case {case} k {k}"
                );
            }
            let mut w = Vec::new();
            for i in 0..n {
                for j in i..n {
                    w.push(0.5 * (y[i] + y[j]));
                }
            }
            sorted(&mut w);
            for &k in &[0, w.len() / 4, w.len() / 2, w.len() - 1] {
                assert_eq!(
                    kth_walsh(&y, k as u64),
                    Some(w[k]),
                    "case {case} walsh k {k}"
                );
            }
        }
        // Many ties, large enough for several pivot rounds.
        let mut x: Vec<f64> = (0..400).map(|i| ((i * 37) % 5) as f64).collect();
        let mut y: Vec<f64> = (0..500).map(|i| ((i * 53) % 4) as f64).collect();
        sorted(&mut x);
        sorted(&mut y);
        let mut all: Vec<f64> = x
            .iter()
            .flat_map(|a| y.iter().map(move |b| b - a))
            .collect();
        sorted(&mut all);
        for k in [0, 1234, 50_000, 99_999, 100_000, 150_001, 199_999] {
            assert_eq!(kth_difference(&x, &y, k as u64), Some(all[k]), "ties k {k}");
        }
        let mut w = Vec::new();
        for i in 0..x.len() {
            for j in i..x.len() {
                w.push(0.5 * (x[i] + x[j]));
            }
        }
        sorted(&mut w);
        for k in [0, 777, 40_000, 80_199] {
            assert_eq!(kth_walsh(&x, k as u64), Some(w[k]), "ties walsh k {k}");
        }
        for k in [0usize, 1234, 99_999, 150_001] {
            assert_eq!(
                kth_difference_pair(&x, &y, k as u64),
                Some((all[k], all[k + 1]))
            );
        }
        for k in [0usize, 777, 40_000] {
            assert_eq!(kth_walsh_pair(&x, k as u64), Some((w[k], w[k + 1])));
        }
        let xs = [0.1, 0.5, 0.9];
        let ys = [1.0, 1.3];
        assert_eq!(
            kth_difference_pair(&xs, &ys, 2),
            Some((1.0 - 0.5, 1.3 - 0.5))
        );
        assert_eq!(kth_difference(&[1.0], &[2.0], 1), None);
        assert_eq!(kth_walsh(&[], 0), None);
    }
}
