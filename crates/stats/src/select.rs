//! Selection of order statistics of the pairwise differences or Walsh averages without
//! listing them.
//!
//! Source: Johnson & Mizoguchi (1978), "Selecting the Kth Element in X + Y and
//! X1 + X2 + … + Xm" (SIAM J. Comput. 7(2)); Monahan (1984), "Fast Computation of the
//! Hodges–Lehmann Location Estimator" (ACM TOMS 10(3), Algorithm 616); Floyd & Rivest
//! (1975), "Expected Time Bounds for Selection" (CACM 18(3)) for the sampled pivots.
//!
//! **The implicit matrix.** For ascending x (m values) and y (n values) the m·n differences
//! y_j − x_i form a matrix whose rows ascend in j and whose columns descend in i. The
//! n(n+1)/2 Walsh averages (d_i + d_j)/2, i ≤ j, of ascending d are the same kind of
//! matrix once its rows are visited from i = n − 1 down to 0, row i holding the columns
//! j ≥ i. Values are compared exactly as computed (`y[j] - x[i]`, `0.5 * (d[i] + d[j])`);
//! IEEE rounding is monotone, so the computed values keep this order.
//!
//! **Counting.** A *cut* "v < p" or "v ≤ p" admits a prefix of every row, and because
//! the columns descend, that prefix only grows from one row to the next. So one pointer
//! that never moves back finds every row's boundary: O(m + n) per cut. The sweep tests
//! eight columns at a time (independent comparisons, no branch on the data) and carries
//! four cuts side by side, whose pointer chains the processor overlaps. The boundaries are
//! kept (one `u32` per row and cut) and define, row by row, the columns lying between two
//! cuts, so listing or sampling those costs O(m) and no new sweep.
//!
//! **Selection.** The wanted ranks (the median pair and both interval bounds, say) start
//! in one *interval* of candidates: everything. A round draws a stratified sample of
//! 65,536 candidates of each open interval, sorts it, and for each wanted rank takes the
//! two sample values whose positions lie 2.5 standard deviations either side of the rank's
//! relative position, as Floyd & Rivest do; brackets that overlap are merged, so ranks
//! close together (the order statistics of a Hodges–Lehmann estimate and its interval lie
//! within a few per mille of one another) share their first rounds. The new cuts of all
//! intervals are swept together, and every wanted rank then falls, by the counts, into
//! exactly one piece between consecutive cuts: its bracket with high probability, a
//! neighbouring piece when the sample misled. A bracket holds at most about
//! 2 · 2.5 · ½ / √65536 ≈ 1 % of its interval, so the 10¹² differences of two samples of
//! a million are down to about a million candidates around each rank after three rounds
//! (14 cuts in all for the four ranks of an estimate); those are listed and selected
//! directly.
//!
//! **Ties.** Pieces are defined by values, not positions, so equal values never straddle
//! a cut. A piece between "v < p" and "v ≤ p" holds only copies of p and answers all of its
//! ranks at once, however many copies there are. Every cut value is itself a candidate, so
//! each piece outside a bracket is strictly smaller than its interval; if a bracket spans
//! the whole interval (e.g. two distinct values remain), the next round splits the
//! interval three ways at a sampled value q ("< q", "= q", "> q"), which always shrinks
//! it. Heavy ties therefore cost no more than distinct values.
//!
//! **Cost.** Expected O((m + n)·log(m + n)) time for a fixed number of ranks (the number
//! of rounds grows with log(mn) / log(100)); memory O(m) per live cut (a few at a time),
//! the sample, and the final lists of at most 2²⁰ candidates; the inputs are never copied.

use std::rc::Rc;

/// A matrix whose visited rows ascend along the columns and whose columns descend along
/// the visited rows; row r only holds the columns from `start(r)` on. Entry (r, j) is
/// `combine(key(r), columns()[j])`.
trait Matrix {
    fn rows(&self) -> usize;
    fn columns(&self) -> &[f64];
    fn start(&self, r: usize) -> usize;
    fn key(&self, r: usize) -> f64;
    fn combine(key: f64, column: f64) -> f64;
    #[inline]
    fn value(&self, r: usize, j: usize) -> f64 {
        Self::combine(self.key(r), self.columns()[j])
    }
}

struct Differences<'a> {
    x: &'a [f64],
    y: &'a [f64],
}

impl Matrix for Differences<'_> {
    fn rows(&self) -> usize {
        self.x.len()
    }
    fn columns(&self) -> &[f64] {
        self.y
    }
    #[inline]
    fn start(&self, _r: usize) -> usize {
        0
    }
    #[inline]
    fn key(&self, r: usize) -> f64 {
        self.x[r]
    }
    #[inline(always)]
    fn combine(key: f64, column: f64) -> f64 {
        column - key
    }
}

struct Walsh<'a> {
    d: &'a [f64],
}

impl Matrix for Walsh<'_> {
    fn rows(&self) -> usize {
        self.d.len()
    }
    fn columns(&self) -> &[f64] {
        self.d
    }
    #[inline]
    fn start(&self, r: usize) -> usize {
        self.d.len() - 1 - r
    }
    #[inline]
    fn key(&self, r: usize) -> f64 {
        self.d[self.d.len() - 1 - r]
    }
    #[inline(always)]
    fn combine(key: f64, column: f64) -> f64 {
        0.5 * (key + column)
    }
}

/// The set of values below a threshold: "v < p" (`incl` false) or "v ≤ p" (`incl` true).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cut {
    p: f64,
    incl: bool,
}

impl Cut {
    #[inline]
    fn admits(self, v: f64) -> bool {
        if self.incl {
            v <= self.p
        } else {
            v < self.p
        }
    }
}

/// A cut with, for every row, the number of columns (counted from column 0) it admits.
struct Bound {
    cut: Cut,
    cols: Rc<[u32]>,
}

/// Cuts swept side by side: their pointer chains are independent, so the processor
/// overlaps them.
const LANES: usize = 4;

/// Columns tested at once when a row's boundary moves.
const STRIDE: usize = 8;

/// The boundary of row `key` for `cut`, at or after column `j`: tests `STRIDE` columns at
/// a time (independent comparisons, no branch on the data) and stops at the first block
/// not fully admitted. Admitted columns form a prefix of each row.
#[inline(always)]
fn advance<M: Matrix>(cols: &[f64], mut j: usize, key: f64, cut: Cut) -> usize {
    loop {
        match cols.get(j..j + STRIDE) {
            Some(block) => {
                let admitted: usize = if cut.incl {
                    block
                        .iter()
                        .map(|&v| usize::from(M::combine(key, v) <= cut.p))
                        .sum()
                } else {
                    block
                        .iter()
                        .map(|&v| usize::from(M::combine(key, v) < cut.p))
                        .sum()
                };
                j += admitted;
                if admitted < STRIDE {
                    return j;
                }
            }
            None => {
                while j < cols.len() && cut.admits(M::combine(key, cols[j])) {
                    j += 1;
                }
                return j;
            }
        }
    }
}

/// Boundaries of `L` cuts in one pass over the rows (row-major on purpose: the `L`
/// lanes of a row are what the processor overlaps).
#[allow(clippy::needless_range_loop)]
fn sweep<M: Matrix, const L: usize>(m: &M, cuts: &[Cut], outs: &mut [Vec<u32>]) {
    let cols = m.columns();
    let mut j = [0usize; L];
    for r in 0..m.rows() {
        let key = m.key(r);
        for l in 0..L {
            j[l] = advance::<M>(cols, j[l], key, cuts[l]);
            outs[l][r] = j[l] as u32;
        }
    }
}

/// The per-row boundaries of every cut (the number of columns, counted from column 0,
/// that it admits in each row): O(rows + columns) per cut, `LANES` cuts per pass.
fn boundaries<M: Matrix>(m: &M, cuts: &[Cut]) -> Vec<Vec<u32>> {
    let mut out: Vec<Vec<u32>> = cuts.iter().map(|_| vec![0u32; m.rows()]).collect();
    for (group, outs) in cuts.chunks(LANES).zip(out.chunks_mut(LANES)) {
        match group.len() {
            4 => sweep::<M, 4>(m, group, outs),
            3 => sweep::<M, 3>(m, group, outs),
            2 => sweep::<M, 2>(m, group, outs),
            _ => sweep::<M, 1>(m, group, outs),
        }
    }
    out
}

/// Calls `f(r, lo, hi)` for every row holding candidates between two bounds (columns
/// lo..hi); O(rows).
fn walk<M: Matrix>(
    m: &M,
    lower: Option<&Bound>,
    upper: Option<&Bound>,
    mut f: impl FnMut(usize, usize, usize),
) {
    let n = m.columns().len();
    for r in 0..m.rows() {
        let s = m.start(r);
        let lo = lower.map_or(s, |b| (b.cols[r] as usize).max(s));
        let hi = upper.map_or(n, |b| (b.cols[r] as usize).max(s));
        if hi > lo {
            f(r, lo, hi);
        }
    }
}

/// How many entries a bound admits.
fn admitted<M: Matrix>(m: &M, cols: &[u32]) -> u64 {
    cols.iter()
        .enumerate()
        .map(|(r, &c)| (c as usize).saturating_sub(m.start(r)) as u64)
        .sum()
}

/// SplitMix64: a tiny seeded generator for the samples (results never depend on it, only
/// the running time does; seeded so that the running time is reproducible too).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// Sizes of one selection: candidates sampled per round, and the interval size at or
/// below which candidates are listed and selected directly (≥ `sample`).
#[derive(Debug, Clone, Copy)]
struct Tuning {
    sample: usize,
    direct: u64,
}

const TUNING: Tuning = Tuning {
    sample: 1 << 16,
    direct: 1 << 20,
};

/// Rounds after which an interval is listed whatever its size.
const MAX_DEPTH: u32 = 200;

/// Half-width of a bracket in standard deviations of the sample rank.
const SPREAD_SD: f64 = 2.5;

/// Candidates between two bounds, with the wanted ranks among them.
struct Interval {
    lower: Option<Bound>,
    upper: Option<Bound>,
    /// Rank of the first candidate (entries admitted by `lower`).
    before: u64,
    /// Entries admitted by `upper`.
    upto: u64,
    /// Wanted ranks in before..upto, ascending.
    targets: Vec<u64>,
    /// The last round did not shrink this interval: split three ways next.
    stalled: bool,
    /// Rounds that led to this interval.
    depth: u32,
}

/// Every candidate of the interval.
fn gather<M: Matrix>(m: &M, iv: &Interval) -> Vec<f64> {
    let mut vals = Vec::with_capacity((iv.upto - iv.before) as usize);
    walk(m, iv.lower.as_ref(), iv.upper.as_ref(), |r, lo, hi| {
        vals.extend((lo..hi).map(|j| m.value(r, j)));
    });
    vals
}

/// A stratified sample of `k` of the interval's candidates (one from each k-th of them
/// in row order), sorted.
fn sample<M: Matrix>(m: &M, iv: &Interval, k: usize, rng: &mut SplitMix, out: &mut Vec<f64>) {
    let size = iv.upto - iv.before;
    let s = k as u64;
    // One candidate from each of k strata of `stride` candidates (the last few
    // candidates, fewer than k, are never drawn).
    let stride = (size / s).max(1);
    let mut i = 0u64;
    let mut next = rng.below(stride);
    let mut cum = 0u64;
    out.clear();
    walk(m, iv.lower.as_ref(), iv.upper.as_ref(), |r, lo, hi| {
        let end = cum + (hi - lo) as u64;
        while i < s && next < end {
            out.push(m.value(r, lo + (next - cum) as usize));
            i += 1;
            if i < s {
                next = i * stride + rng.below(stride);
            }
        }
        cum = end;
    });
    out.sort_unstable_by(f64::total_cmp);
}

/// The new cuts for one round of an interval, from its sorted sample.
fn round_cuts(iv: &Interval, smp: &[f64]) -> Vec<Cut> {
    let mut cuts = Vec::new();
    let Some(last) = smp.len().checked_sub(1) else {
        return cuts;
    };
    if iv.stalled {
        let q = smp[smp.len() / 2];
        cuts.push(Cut { p: q, incl: false });
        cuts.push(Cut { p: q, incl: true });
        return cuts;
    }
    let size = (iv.upto - iv.before) as f64;
    let s = smp.len() as f64;
    // Brackets as sample indices, merged when their values meet.
    let mut brackets: Vec<(usize, usize)> = Vec::new();
    for &t in &iv.targets {
        let f = ((t - iv.before) as f64 + 0.5) / size;
        let centre = f * s;
        let half = SPREAD_SD * (s * f * (1.0 - f)).sqrt() + 1.0;
        let lo = ((centre - half).floor().max(0.0) as usize).min(last);
        let hi = ((centre + half).ceil().max(0.0) as usize).min(last);
        match brackets.last_mut() {
            Some(b) if smp[lo] <= smp[b.1] => b.1 = b.1.max(hi),
            _ => brackets.push((lo, hi)),
        }
    }
    for (lo, hi) in brackets {
        cuts.push(Cut {
            p: smp[lo],
            incl: false,
        });
        cuts.push(Cut {
            p: smp[hi],
            incl: true,
        });
    }
    cuts
}

/// The values of the given (0-based, each < total) ranks, in the order asked.
fn select_ranks<M: Matrix>(m: &M, total: u64, ranks: &[u64], tuning: Tuning) -> Vec<f64> {
    let mut found = Found::new(ranks);
    let mut rng = SplitMix(found.seed());
    let mut smp = Vec::with_capacity(tuning.sample);
    let mut work = vec![Interval {
        lower: None,
        upper: None,
        before: 0,
        upto: total,
        targets: found.wanted.clone(),
        stalled: false,
        depth: 0,
    }];
    // Rounds: every open interval proposes cuts; all cuts are swept together.
    while !work.is_empty() {
        let mut open: Vec<(Interval, Vec<Cut>)> = Vec::new();
        for iv in work.drain(..) {
            // Every round shrinks an interval (see the module notes), by about 20 times
            // in expectation; the depth limit only guards against inconsistent input.
            let small = iv.upto - iv.before <= tuning.direct.max(tuning.sample as u64)
                || iv.depth >= MAX_DEPTH;
            if !small {
                sample(m, &iv, tuning.sample, &mut rng, &mut smp);
            }
            if small || smp.is_empty() {
                select_directly(m, &iv, &mut found);
                continue;
            }
            let cuts = round_cuts(&iv, &smp);
            open.push((iv, cuts));
        }
        let all: Vec<Cut> = open.iter().flat_map(|(_, c)| c.iter().copied()).collect();
        let mut swept = boundaries(m, &all).into_iter();
        for (iv, cuts) in open {
            split_interval(m, iv, cuts, &mut swept, &mut found, &mut work);
        }
    }
    found.in_order_of(ranks)
}

/// The ranks sought (ascending, distinct) and the values found for them so far (NaN
/// until found).
struct Found {
    wanted: Vec<u64>,
    values: Vec<f64>,
}

impl Found {
    fn new(ranks: &[u64]) -> Self {
        let mut wanted: Vec<u64> = ranks.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        let values = vec![f64::NAN; wanted.len()];
        Found { wanted, values }
    }

    /// The sampling seed: a function of the ranks sought, so a selection repeats exactly.
    fn seed(&self) -> u64 {
        self.wanted.iter().fold(0x5EED_0F5E_1EC7_u64, |a, &t| {
            a.rotate_left(17) ^ t.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        })
    }

    fn put(&mut self, t: u64, v: f64) {
        if let Ok(i) = self.wanted.binary_search(&t) {
            self.values[i] = v;
        }
    }

    fn in_order_of(&self, ranks: &[u64]) -> Vec<f64> {
        ranks
            .iter()
            .map(|t| {
                self.wanted
                    .binary_search(t)
                    .map(|i| self.values[i])
                    .unwrap_or(f64::NAN)
            })
            .collect()
    }
}

/// Settles a small interval: gathers its values and selects each target among them.
fn select_directly<M: Matrix>(m: &M, iv: &Interval, found: &mut Found) {
    let mut vals = gather(m, iv);
    let mut base = 0usize;
    for &t in &iv.targets {
        let idx = (t - iv.before) as usize;
        if idx < base || idx >= vals.len() {
            continue;
        }
        let (_, v, _) = vals[base..].select_nth_unstable_by(idx - base, f64::total_cmp);
        found.put(t, *v);
        base = idx + 1;
    }
}

/// Splits `iv` at its swept `cuts` (their columns taken from `swept`, in order): a piece
/// holding only copies of one value settles its targets; every other piece with targets
/// goes back to `work` for the next round.
fn split_interval<M: Matrix>(
    m: &M,
    iv: Interval,
    cuts: Vec<Cut>,
    swept: &mut impl Iterator<Item = Vec<u32>>,
    found: &mut Found,
    work: &mut Vec<Interval>,
) {
    // Consecutive bounds, from the interval's own to its own, with their counts.
    let mut bounds: Vec<(Option<Bound>, u64)> = Vec::with_capacity(cuts.len() + 2);
    let (before0, upto0) = (iv.before, iv.upto);
    bounds.push((iv.lower, before0));
    for cut in cuts {
        let cols: Rc<[u32]> = swept.next().unwrap_or_default().into();
        let n = admitted(m, &cols).clamp(before0, upto0);
        bounds.push((Some(Bound { cut, cols }), n));
    }
    bounds.push((iv.upper, upto0));
    let mut targets = iv.targets.iter().copied().peekable();
    for w in bounds.windows(2) {
        let ((lower, before), (upper, upto)) = (&w[0], &w[1]);
        let (before, upto) = (*before, *upto);
        let mut inside = Vec::new();
        while let Some(&t) = targets.peek() {
            if t >= upto {
                break;
            }
            if t >= before {
                inside.push(t);
            }
            targets.next();
        }
        if inside.is_empty() {
            continue;
        }
        if let (Some(l), Some(u)) = (lower, upper) {
            if l.cut.p == u.cut.p && !l.cut.incl && u.cut.incl {
                // Only copies of one value lie here.
                for t in inside {
                    found.put(t, l.cut.p);
                }
                continue;
            }
        }
        let share = |b: &Option<Bound>| {
            b.as_ref().map(|b| Bound {
                cut: b.cut,
                cols: Rc::clone(&b.cols),
            })
        };
        work.push(Interval {
            lower: share(lower),
            upper: share(upper),
            before,
            upto,
            targets: inside,
            stalled: before == before0 && upto == upto0,
            depth: iv.depth + 1,
        });
    }
}

/// Whether `v` ascends and holds only finite values.
fn sorted_finite(v: &[f64]) -> bool {
    v.iter().all(|x| x.is_finite()) && v.windows(2).all(|w| w[0] <= w[1])
}

/// The values at the given 0-based ranks among the m·n differences y_j − x_i of ascending
/// `x_sorted` and `y_sorted`, in the order of `ranks`; ranks close together share their
/// work. `None` if either input is empty, not ascending or not finite, or a rank is
/// ≥ m·n. Expected O((m + n) log(m + n)) time per distinct region of ranks.
pub fn differences_at(x_sorted: &[f64], y_sorted: &[f64], ranks: &[u64]) -> Option<Vec<f64>> {
    let total = x_sorted.len() as u64 * y_sorted.len() as u64;
    if ranks.iter().any(|&k| k >= total)
        || y_sorted.len() > u32::MAX as usize
        || !sorted_finite(x_sorted)
        || !sorted_finite(y_sorted)
    {
        return None;
    }
    Some(select_ranks(
        &Differences {
            x: x_sorted,
            y: y_sorted,
        },
        total,
        ranks,
        TUNING,
    ))
}

/// The values at the given 0-based ranks among the n(n+1)/2 Walsh averages
/// (d_i + d_j)/2, i ≤ j, of ascending `d_sorted`, in the order of `ranks`. `None` if the
/// input is empty, not ascending or not finite, or a rank is ≥ n(n+1)/2. Expected
/// O(n log n).
pub fn walsh_at(d_sorted: &[f64], ranks: &[u64]) -> Option<Vec<f64>> {
    let n = d_sorted.len() as u64;
    let total = n * (n + 1) / 2;
    if ranks.iter().any(|&k| k >= total)
        || d_sorted.len() > u32::MAX as usize
        || !sorted_finite(d_sorted)
    {
        return None;
    }
    Some(select_ranks(&Walsh { d: d_sorted }, total, ranks, TUNING))
}

/// The k-th and (k+1)-th smallest (0-based) of the differences y_j − x_i, e.g. the two
/// middle values for an even count. `None` if k + 1 ≥ m·n (or as [`differences_at`]).
pub fn kth_difference_pair(x_sorted: &[f64], y_sorted: &[f64], k: u64) -> Option<(f64, f64)> {
    let v = differences_at(x_sorted, y_sorted, &[k, k.checked_add(1)?])?;
    Some((v[0], v[1]))
}

/// The k-th and (k+1)-th smallest (0-based) Walsh averages. `None` if k + 1 ≥ n(n+1)/2
/// (or as [`walsh_at`]).
pub fn kth_walsh_pair(d_sorted: &[f64], k: u64) -> Option<(f64, f64)> {
    let v = walsh_at(d_sorted, &[k, k.checked_add(1)?])?;
    Some((v[0], v[1]))
}

/// The k-th smallest (0-based) of the m·n differences y_j − x_i, for ascending `x` and
/// `y`. `None` if k ≥ m·n (or as [`differences_at`]).
pub fn kth_difference(x_sorted: &[f64], y_sorted: &[f64], k: u64) -> Option<f64> {
    differences_at(x_sorted, y_sorted, &[k]).map(|v| v[0])
}

/// The k-th smallest (0-based) of the n(n+1)/2 Walsh averages (d_i + d_j)/2, i ≤ j, of
/// ascending `d`. `None` if k is out of range (or as [`walsh_at`]).
pub fn kth_walsh(d_sorted: &[f64], k: u64) -> Option<f64> {
    walsh_at(d_sorted, &[k]).map(|v| v[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn sorted(v: &mut [f64]) {
        v.sort_by(f64::total_cmp);
    }

    fn all_differences(x: &[f64], y: &[f64]) -> Vec<f64> {
        let mut all: Vec<f64> = x
            .iter()
            .flat_map(|a| y.iter().map(move |b| b - a))
            .collect();
        sorted(&mut all);
        all
    }

    fn all_walsh(d: &[f64]) -> Vec<f64> {
        let mut w = Vec::new();
        for i in 0..d.len() {
            for j in i..d.len() {
                w.push(0.5 * (d[i] + d[j]));
            }
        }
        sorted(&mut w);
        w
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
            let all = all_differences(&x, &y);
            for &k in &[0, all.len() / 3, all.len() / 2, all.len() - 1] {
                assert_eq!(
                    kth_difference(&x, &y, k as u64),
                    Some(all[k]),
                    "case {case} k {k}"
                );
            }
            let w = all_walsh(&y);
            for &k in &[0, w.len() / 4, w.len() / 2, w.len() - 1] {
                assert_eq!(
                    kth_walsh(&y, k as u64),
                    Some(w[k]),
                    "case {case} walsh k {k}"
                );
            }
        }
        let xs = [0.1, 0.5, 0.9];
        let ys = [1.0, 1.3];
        assert_eq!(
            kth_difference_pair(&xs, &ys, 2),
            Some((1.0 - 0.5, 1.3 - 0.5))
        );
        assert_eq!(kth_difference(&[1.0], &[2.0], 1), None);
        assert_eq!(kth_difference_pair(&[1.0], &[2.0], 0), None);
        assert_eq!(kth_walsh(&[], 0), None);
        assert_eq!(walsh_at(&[1.0], &[0]), Some(vec![1.0]));
    }

    /// Every rank of small matrices, with tiny samples and lists so that the sampling
    /// rounds, bracket misses and three-way splits all run many times.
    #[test]
    fn rounds_match_brute_force_with_ties_and_tiny_samples() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(2027);
        let tunings = [
            Tuning {
                sample: 4,
                direct: 4,
            },
            Tuning {
                sample: 9,
                direct: 12,
            },
            Tuning {
                sample: 64,
                direct: 64,
            },
        ];
        for case in 0..60 {
            let m = rng.gen_range(1..40);
            let n = rng.gen_range(1..40);
            // 0: continuous, 1: few distinct values, 2: one value with most of the mass,
            // 3: all equal, 4: two decimals.
            let shape = case % 5;
            let mut gen = |len: usize| -> Vec<f64> {
                let mut v: Vec<f64> = (0..len)
                    .map(|_| match shape {
                        0 => rng.gen::<f64>() * 4.0 - 2.0,
                        1 => rng.gen_range(0..3) as f64,
                        2 => {
                            if rng.gen::<f64>() < 0.8 {
                                1.5
                            } else {
                                rng.gen_range(0..5) as f64
                            }
                        }
                        3 => 7.25,
                        _ => (rng.gen::<f64>() * 300.0).round() / 100.0,
                    })
                    .collect();
                sorted(&mut v);
                v
            };
            let x = gen(m);
            let y = gen(n);
            let tuning = tunings[case % tunings.len()];
            let all = all_differences(&x, &y);
            let ranks: Vec<u64> = (0..all.len() as u64).rev().collect();
            let got = select_ranks(
                &Differences { x: &x, y: &y },
                all.len() as u64,
                &ranks,
                tuning,
            );
            for (&k, v) in ranks.iter().zip(&got) {
                assert_eq!(*v, all[k as usize], "case {case} shape {shape} k {k}");
            }
            // A few ranks at once, as the Hodges–Lehmann estimates ask for them.
            let mid = all.len() as u64 / 2;
            let few = [mid, mid.saturating_sub(1), 0, all.len() as u64 - 1, mid];
            let got = select_ranks(
                &Differences { x: &x, y: &y },
                all.len() as u64,
                &few,
                tuning,
            );
            for (&k, v) in few.iter().zip(&got) {
                assert_eq!(*v, all[k as usize], "case {case} few k {k}");
            }
            let w = all_walsh(&x);
            let ranks: Vec<u64> = (0..w.len() as u64).collect();
            let got = select_ranks(&Walsh { d: &x }, w.len() as u64, &ranks, tuning);
            for (&k, v) in ranks.iter().zip(&got) {
                assert_eq!(*v, w[k as usize], "case {case} shape {shape} walsh k {k}");
            }
        }
    }

    #[test]
    fn large_tied_inputs_take_the_sampling_path() {
        // 2000 × 1500 = 3·10⁶ differences of integers 0..9 (heavy ties) and 1500 values
        // with two decimals: more than the direct-listing limit, so the default tuning
        // samples. Brute force by counting for the integers.
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        let mut x: Vec<f64> = (0..2000).map(|_| rng.gen_range(0..10) as f64).collect();
        let mut y: Vec<f64> = (0..1500).map(|_| rng.gen_range(0..10) as f64).collect();
        sorted(&mut x);
        sorted(&mut y);
        let all = all_differences(&x, &y);
        let total = all.len() as u64;
        let ranks = [0, 1, total / 2 - 1, total / 2, 1_234_567, total - 1];
        let got = differences_at(&x, &y, &ranks).unwrap();
        for (&k, v) in ranks.iter().zip(&got) {
            assert_eq!(*v, all[k as usize], "k {k}");
        }
        let mut d: Vec<f64> = (0..2000)
            .map(|_| (rng.gen::<f64>() * 20.0).round() / 100.0 - 0.05)
            .collect();
        sorted(&mut d);
        let w = all_walsh(&d);
        let total = w.len() as u64;
        let ranks = [3, total / 2, total / 2 + 1, total - 2];
        let got = walsh_at(&d, &ranks).unwrap();
        for (&k, v) in ranks.iter().zip(&got) {
            assert_eq!(*v, w[k as usize], "walsh k {k}");
        }
    }

    #[test]
    fn rejects_unsorted_or_non_finite_input() {
        assert_eq!(differences_at(&[2.0, 1.0], &[0.0], &[0]), None);
        assert_eq!(differences_at(&[1.0], &[f64::NAN], &[0]), None);
        assert_eq!(differences_at(&[1.0], &[f64::INFINITY], &[0]), None);
        assert_eq!(walsh_at(&[1.0, 0.0], &[0]), None);
        assert_eq!(walsh_at(&[1.0, 2.0], &[3]), None);
        assert_eq!(differences_at(&[], &[1.0], &[0]), None);
        // Finite values whose differences overflow still order correctly.
        let v = differences_at(&[-f64::MAX, 0.0], &[f64::MAX], &[0, 1]).unwrap();
        assert_eq!(v, vec![f64::MAX, f64::INFINITY]);
    }
}
