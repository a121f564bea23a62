//! Selection of the k-th smallest pairwise difference or Walsh average without
//! enumerating them.
//!
//! Source: Johnson & Mizoguchi (1978), "Selecting the Kth Element in X + Y and
//! X1 + X2 + … + Xm" (SIAM J. Comput. 7(2)), and Monahan (1984), "Fast Computation of the
//! Hodges–Lehmann Location Estimator" (ACM TOMS 10(3), Algorithm 616).
//!
//! The m·n differences y_j − x_i (or the n(n+1)/2 Walsh averages (d_i + d_j)/2, i ≤ j) of
//! sorted inputs form a matrix whose rows are sorted. Each row keeps a window of column
//! indices that may still hold the answer. A pivot is drawn uniformly from the remaining
//! candidates (seeded, deterministic), and one monotone sweep counts, for every row, how
//! many entries are below and at most the pivot: because the rows are sorted in both
//! directions the sweep pointer only moves one way, so a count costs O(m + n). The windows
//! then shrink to the side that holds rank k. A uniformly drawn pivot removes a constant
//! fraction of the candidates on average, so O(log(mn)) rounds are expected: O((m + n)
//! log(m + n)) time in all, O(m + n) memory. When few candidates remain they are gathered
//! and selected directly.
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
    /// (`strict` true), written into `out`. Must run in O(rows + columns).
    fn boundaries(&self, p: f64, strict: bool, out: &mut [usize]);
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
    fn boundaries(&self, p: f64, strict: bool, out: &mut [usize]) {
        // y_j − x_i falls as i grows, so the boundary moves right with i.
        let n = self.y.len();
        let mut j = 0;
        for (i, o) in out.iter_mut().enumerate() {
            let xi = self.x[i];
            while j < n && below(self.y[j] - xi, p, strict) {
                j += 1;
            }
            *o = j;
        }
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
    fn boundaries(&self, p: f64, strict: bool, out: &mut [usize]) {
        // (d_i + d_j)/2 grows with i, so the boundary over all columns moves right as i
        // falls; the row's own window then starts at column i.
        let n = self.d.len();
        let mut j = 0;
        for i in (0..n).rev() {
            while j < n && below(0.5 * (self.d[i] + self.d[j]), p, strict) {
                j += 1;
            }
            out[i] = j.max(i);
        }
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

fn select<M: SortedRows>(m: &M, k: u64) -> f64 {
    let rows = m.rows();
    let mut lo: Vec<usize> = (0..rows).map(|i| m.range(i).0).collect();
    let mut hi: Vec<usize> = (0..rows).map(|i| m.range(i).1).collect();
    let mut lt = vec![0usize; rows];
    let mut le = vec![0usize; rows];
    let mut rng = SplitMix(0x0005_EED0_F4C0_FFEE ^ k);
    loop {
        let remaining: u64 = (0..rows).map(|i| (hi[i] - lo[i]) as u64).sum();
        let before: u64 = (0..rows).map(|i| (lo[i] - m.range(i).0) as u64).sum();
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
        // Uniform candidate as pivot.
        let mut r = rng.below(remaining);
        let mut pivot = f64::NAN;
        for i in 0..rows {
            let w = (hi[i] - lo[i]) as u64;
            if r < w {
                pivot = m.value(i, lo[i] + r as usize);
                break;
            }
            r -= w;
        }
        m.boundaries(pivot, false, &mut lt);
        m.boundaries(pivot, true, &mut le);
        let count_lt: u64 = (0..rows).map(|i| (lt[i] - m.range(i).0) as u64).sum();
        let count_le: u64 = (0..rows).map(|i| (le[i] - m.range(i).0) as u64).sum();
        if k < count_lt {
            for i in 0..rows {
                hi[i] = hi[i].min(lt[i]).max(lo[i]);
            }
        } else if k < count_le {
            return pivot;
        } else {
            for i in 0..rows {
                lo[i] = lo[i].max(le[i]).min(hi[i]);
            }
        }
        // The pivot itself always leaves the candidate set, so `remaining` strictly falls
        // and the loop ends.
    }
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
        assert_eq!(kth_difference(&[1.0], &[2.0], 1), None);
        assert_eq!(kth_walsh(&[], 0), None);
    }
}
