//! ministat's statistics, number for number: vitals, Student's t with pooled variance, and
//! its relative difference; plus Welch's t for unequal variances.
//!
//! Source: FreeBSD `usr.bin/ministat/ministat.c` (Poul-Henning Kamp), read both as the
//! 2012 file that the Debian package `ministat 20150715` ships and as the current FreeBSD
//! file. The two disagree in three places, so every computation here takes a [`Flavor`]:
//!
//! | | [`Flavor::Debian20150715`] | [`Flavor::FreeBsdCurrent`] |
//! |---|---|---|
//! | median of an even-sized set | upper middle value, `x[n/2]` | mean of the two middle values |
//! | variance | running sums, `(Σx² − (Σx)²/n)/(n−1)` | two passes, `Σ(x − x̄)²/(n−1)` |
//! | `± %` of the difference | `100·e/x̄_r` | `100·t·√(((n_d−1)s_d² + (n_r−1)s_r²·x̄_d²/x̄_r²)/ν·(1/n_d+1/n_r))/x̄_r` |
//!
//! The running-sum variance of the Debian build loses precision on large values with a
//! small spread (it can even come out negative, and ministat then prints `-nan` for the
//! standard deviation); it is reproduced on purpose, in the same order of floating-point
//! operations, because the point of this module is to print what ministat prints. Sums are
//! accumulated in input order, as ministat adds points while it reads them.
//!
//! The test is a two-sided equal-variance Student t test on ν = n_d + n_r − 2 degrees of
//! freedom, with t taken from ministat's own 3-decimal table ([`student_t`]) for confidence
//! 80, 90, 95, 98, 99 and 99.5 % and ν = 1..100, and the table's limit row beyond. It
//! reports the difference of means d, its half-width e = t·s_p·√(1/n_d + 1/n_r), and
//! "difference" when |d| > e. It prints no p-value; "no difference proven" is a failure
//! to reject, not a finding of equivalence.
//!
//! The table's "99.5 %" column holds the one-sided 0.999 quantiles (the last column of
//! the classic printed t table, i.e. 99.8 % two-sided), so ministat's 99.5 % intervals are
//! wider than their label, and two of its entries (ν = 7, 8) are off in the third decimal
//! (4.782, 4.499 for 4.785, 4.501). This module keeps ministat's values.
//!
//! Cost: building a [`Dataset`] sorts a copy of the input, O(n log n) time and O(n) memory;
//! every statistic after that is O(1) (the two-pass variance is computed once, O(n)).

use crate::error::StatsError;

/// The confidence levels ministat knows, in percent, in the order of its table columns.
pub const CONFIDENCE_LEVELS: [f64; 6] = [80.0, 90.0, 95.0, 98.0, 99.0, 99.5];

/// Largest number of degrees of freedom with its own table row; beyond it the limit row
/// (normal quantiles) is used.
pub const TABLE_MAX_DF: usize = 100;

/// ministat's two-sided Student t quantiles: row 0 is the limit (ν → ∞), rows 1..=100 are
/// ν = 1..100; columns follow [`CONFIDENCE_LEVELS`]. Values are ministat's, 3 decimals.
#[rustfmt::skip]
#[allow(clippy::approx_constant)] // 2.718 is a t quantile, not e
const STUDENT: [[f64; 6]; TABLE_MAX_DF + 1] = [
    [1.282, 1.645, 1.960, 2.326, 2.576, 3.090], // inf
    [3.078, 6.314, 12.706, 31.821, 63.657, 318.313], // 1
    [1.886, 2.920, 4.303, 6.965, 9.925, 22.327], // 2
    [1.638, 2.353, 3.182, 4.541, 5.841, 10.215], // 3
    [1.533, 2.132, 2.776, 3.747, 4.604, 7.173], // 4
    [1.476, 2.015, 2.571, 3.365, 4.032, 5.893], // 5
    [1.440, 1.943, 2.447, 3.143, 3.707, 5.208], // 6
    [1.415, 1.895, 2.365, 2.998, 3.499, 4.782], // 7
    [1.397, 1.860, 2.306, 2.896, 3.355, 4.499], // 8
    [1.383, 1.833, 2.262, 2.821, 3.250, 4.296], // 9
    [1.372, 1.812, 2.228, 2.764, 3.169, 4.143], // 10
    [1.363, 1.796, 2.201, 2.718, 3.106, 4.024], // 11
    [1.356, 1.782, 2.179, 2.681, 3.055, 3.929], // 12
    [1.350, 1.771, 2.160, 2.650, 3.012, 3.852], // 13
    [1.345, 1.761, 2.145, 2.624, 2.977, 3.787], // 14
    [1.341, 1.753, 2.131, 2.602, 2.947, 3.733], // 15
    [1.337, 1.746, 2.120, 2.583, 2.921, 3.686], // 16
    [1.333, 1.740, 2.110, 2.567, 2.898, 3.646], // 17
    [1.330, 1.734, 2.101, 2.552, 2.878, 3.610], // 18
    [1.328, 1.729, 2.093, 2.539, 2.861, 3.579], // 19
    [1.325, 1.725, 2.086, 2.528, 2.845, 3.552], // 20
    [1.323, 1.721, 2.080, 2.518, 2.831, 3.527], // 21
    [1.321, 1.717, 2.074, 2.508, 2.819, 3.505], // 22
    [1.319, 1.714, 2.069, 2.500, 2.807, 3.485], // 23
    [1.318, 1.711, 2.064, 2.492, 2.797, 3.467], // 24
    [1.316, 1.708, 2.060, 2.485, 2.787, 3.450], // 25
    [1.315, 1.706, 2.056, 2.479, 2.779, 3.435], // 26
    [1.314, 1.703, 2.052, 2.473, 2.771, 3.421], // 27
    [1.313, 1.701, 2.048, 2.467, 2.763, 3.408], // 28
    [1.311, 1.699, 2.045, 2.462, 2.756, 3.396], // 29
    [1.310, 1.697, 2.042, 2.457, 2.750, 3.385], // 30
    [1.309, 1.696, 2.040, 2.453, 2.744, 3.375], // 31
    [1.309, 1.694, 2.037, 2.449, 2.738, 3.365], // 32
    [1.308, 1.692, 2.035, 2.445, 2.733, 3.356], // 33
    [1.307, 1.691, 2.032, 2.441, 2.728, 3.348], // 34
    [1.306, 1.690, 2.030, 2.438, 2.724, 3.340], // 35
    [1.306, 1.688, 2.028, 2.434, 2.719, 3.333], // 36
    [1.305, 1.687, 2.026, 2.431, 2.715, 3.326], // 37
    [1.304, 1.686, 2.024, 2.429, 2.712, 3.319], // 38
    [1.304, 1.685, 2.023, 2.426, 2.708, 3.313], // 39
    [1.303, 1.684, 2.021, 2.423, 2.704, 3.307], // 40
    [1.303, 1.683, 2.020, 2.421, 2.701, 3.301], // 41
    [1.302, 1.682, 2.018, 2.418, 2.698, 3.296], // 42
    [1.302, 1.681, 2.017, 2.416, 2.695, 3.291], // 43
    [1.301, 1.680, 2.015, 2.414, 2.692, 3.286], // 44
    [1.301, 1.679, 2.014, 2.412, 2.690, 3.281], // 45
    [1.300, 1.679, 2.013, 2.410, 2.687, 3.277], // 46
    [1.300, 1.678, 2.012, 2.408, 2.685, 3.273], // 47
    [1.299, 1.677, 2.011, 2.407, 2.682, 3.269], // 48
    [1.299, 1.677, 2.010, 2.405, 2.680, 3.265], // 49
    [1.299, 1.676, 2.009, 2.403, 2.678, 3.261], // 50
    [1.298, 1.675, 2.008, 2.402, 2.676, 3.258], // 51
    [1.298, 1.675, 2.007, 2.400, 2.674, 3.255], // 52
    [1.298, 1.674, 2.006, 2.399, 2.672, 3.251], // 53
    [1.297, 1.674, 2.005, 2.397, 2.670, 3.248], // 54
    [1.297, 1.673, 2.004, 2.396, 2.668, 3.245], // 55
    [1.297, 1.673, 2.003, 2.395, 2.667, 3.242], // 56
    [1.297, 1.672, 2.002, 2.394, 2.665, 3.239], // 57
    [1.296, 1.672, 2.002, 2.392, 2.663, 3.237], // 58
    [1.296, 1.671, 2.001, 2.391, 2.662, 3.234], // 59
    [1.296, 1.671, 2.000, 2.390, 2.660, 3.232], // 60
    [1.296, 1.670, 2.000, 2.389, 2.659, 3.229], // 61
    [1.295, 1.670, 1.999, 2.388, 2.657, 3.227], // 62
    [1.295, 1.669, 1.998, 2.387, 2.656, 3.225], // 63
    [1.295, 1.669, 1.998, 2.386, 2.655, 3.223], // 64
    [1.295, 1.669, 1.997, 2.385, 2.654, 3.220], // 65
    [1.295, 1.668, 1.997, 2.384, 2.652, 3.218], // 66
    [1.294, 1.668, 1.996, 2.383, 2.651, 3.216], // 67
    [1.294, 1.668, 1.995, 2.382, 2.650, 3.214], // 68
    [1.294, 1.667, 1.995, 2.382, 2.649, 3.213], // 69
    [1.294, 1.667, 1.994, 2.381, 2.648, 3.211], // 70
    [1.294, 1.667, 1.994, 2.380, 2.647, 3.209], // 71
    [1.293, 1.666, 1.993, 2.379, 2.646, 3.207], // 72
    [1.293, 1.666, 1.993, 2.379, 2.645, 3.206], // 73
    [1.293, 1.666, 1.993, 2.378, 2.644, 3.204], // 74
    [1.293, 1.665, 1.992, 2.377, 2.643, 3.202], // 75
    [1.293, 1.665, 1.992, 2.376, 2.642, 3.201], // 76
    [1.293, 1.665, 1.991, 2.376, 2.641, 3.199], // 77
    [1.292, 1.665, 1.991, 2.375, 2.640, 3.198], // 78
    [1.292, 1.664, 1.990, 2.374, 2.640, 3.197], // 79
    [1.292, 1.664, 1.990, 2.374, 2.639, 3.195], // 80
    [1.292, 1.664, 1.990, 2.373, 2.638, 3.194], // 81
    [1.292, 1.664, 1.989, 2.373, 2.637, 3.193], // 82
    [1.292, 1.663, 1.989, 2.372, 2.636, 3.191], // 83
    [1.292, 1.663, 1.989, 2.372, 2.636, 3.190], // 84
    [1.292, 1.663, 1.988, 2.371, 2.635, 3.189], // 85
    [1.291, 1.663, 1.988, 2.370, 2.634, 3.188], // 86
    [1.291, 1.663, 1.988, 2.370, 2.634, 3.187], // 87
    [1.291, 1.662, 1.987, 2.369, 2.633, 3.185], // 88
    [1.291, 1.662, 1.987, 2.369, 2.632, 3.184], // 89
    [1.291, 1.662, 1.987, 2.368, 2.632, 3.183], // 90
    [1.291, 1.662, 1.986, 2.368, 2.631, 3.182], // 91
    [1.291, 1.662, 1.986, 2.368, 2.630, 3.181], // 92
    [1.291, 1.661, 1.986, 2.367, 2.630, 3.180], // 93
    [1.291, 1.661, 1.986, 2.367, 2.629, 3.179], // 94
    [1.291, 1.661, 1.985, 2.366, 2.629, 3.178], // 95
    [1.290, 1.661, 1.985, 2.366, 2.628, 3.177], // 96
    [1.290, 1.661, 1.985, 2.365, 2.627, 3.176], // 97
    [1.290, 1.661, 1.984, 2.365, 2.627, 3.175], // 98
    [1.290, 1.660, 1.984, 2.365, 2.626, 3.175], // 99
    [1.290, 1.660, 1.984, 2.364, 2.626, 3.174], // 100
];

/// One of ministat's six confidence levels (`-c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Confidence {
    /// 80 %.
    C80,
    /// 90 %.
    C90,
    /// 95 %, ministat's default.
    #[default]
    C95,
    /// 98 %.
    C98,
    /// 99 %.
    C99,
    /// 99.5 %.
    C99_5,
}

impl Confidence {
    /// All levels, in table order.
    pub const ALL: [Confidence; 6] = [
        Confidence::C80,
        Confidence::C90,
        Confidence::C95,
        Confidence::C98,
        Confidence::C99,
        Confidence::C99_5,
    ];

    /// The level for a percentage as ministat's `-c` accepts it (exact match: 80, 90, 95,
    /// 98, 99, 99.5).
    ///
    /// # Errors
    /// [`StatsError::BadParameter`] for any other value.
    pub fn from_percent(pct: f64) -> Result<Self, StatsError> {
        CONFIDENCE_LEVELS
            .iter()
            .position(|&c| c == pct)
            .map(|i| Self::ALL[i])
            .ok_or(StatsError::BadParameter {
                what: "ministat confidence",
                expected: "one of 80, 90, 95, 98, 99, 99.5",
                found: pct,
            })
    }

    /// The level in percent (e.g. 95.0).
    pub fn percent(self) -> f64 {
        CONFIDENCE_LEVELS[self.column()]
    }

    fn column(self) -> usize {
        match self {
            Confidence::C80 => 0,
            Confidence::C90 => 1,
            Confidence::C95 => 2,
            Confidence::C98 => 3,
            Confidence::C99 => 4,
            Confidence::C99_5 => 5,
        }
    }
}

/// ministat's t value for `df` degrees of freedom: the table row for 1..=100, the limit row
/// otherwise (ministat indexes row 0, the limit row, for ν = 0 too). O(1).
pub fn student_t(df: usize, confidence: Confidence) -> f64 {
    let row = if df > TABLE_MAX_DF { 0 } else { df };
    STUDENT[row][confidence.column()]
}

/// Which ministat to reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Flavor {
    /// Debian/Ubuntu package `ministat 20150715`: upper-middle median, running-sum
    /// variance, `± %` = 100·e/x̄_r.
    #[default]
    Debian20150715,
    /// Current FreeBSD: averaged median, two-pass variance, delta-method `± %`.
    FreeBsdCurrent,
}

/// ministat's comparison of two values: by `<` and `>`, so -0.0 and 0.0 are equal.
fn ministat_order(a: &f64, b: &f64) -> std::cmp::Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal),
        (x, y) => x.cmp(&y),
    }
}

/// One data set as ministat holds it: the points sorted, and its running sums.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    points: Vec<f64>,
    sum: f64,
    sum_sq: f64,
    variance: f64,
    flavor: Flavor,
}

impl Dataset {
    /// Builds a data set from points **in input order** (the order matters for the
    /// running sums, exactly as in ministat). NaN and infinities are accepted and
    /// propagate as they do in ministat; the caller enforces ministat's "at least 3 data
    /// points" rule with its own message.
    ///
    /// Cost: O(n log n) time, O(n) memory.
    ///
    /// # Errors
    /// [`StatsError::TooFewValues`] if `points` is empty.
    pub fn new(points: &[f64], flavor: Flavor) -> Result<Self, StatsError> {
        if points.is_empty() {
            return Err(StatsError::TooFewValues {
                what: "ministat data set",
                needed: 1,
                found: 0,
            });
        }
        let mut sum = 0.0;
        let mut sum_sq = 0.0;
        for &a in points {
            sum += a;
            sum_sq += a * a;
        }
        let mut sorted = points.to_vec();
        // ministat sorts with the C library's qsort and a comparator under which -0.0
        // equals 0.0; glibc's qsort is a stable merge sort, so equal values keep their
        // input order (a file with `0.0` before `-0.0` has minimum `0`). A stable sort
        // with the same comparator does the same (NaN, which ministat cannot order
        // either, goes last).
        sorted.sort_by(ministat_order);
        let n = sorted.len() as f64;
        let variance = match flavor {
            Flavor::Debian20150715 => (sum_sq - sum * sum / n) / (n - 1.0),
            Flavor::FreeBsdCurrent => {
                let mean = sum / n;
                let mut ss = 0.0;
                for &x in &sorted {
                    ss += (x - mean) * (x - mean);
                }
                ss / (n - 1.0)
            }
        };
        Ok(Dataset {
            points: sorted,
            sum,
            sum_sq,
            variance,
            flavor,
        })
    }

    /// The points in ascending order.
    pub fn sorted_points(&self) -> &[f64] {
        &self.points
    }

    /// The flavor this data set was built for.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// Number of points.
    pub fn n(&self) -> usize {
        self.points.len()
    }

    /// Smallest point.
    pub fn min(&self) -> f64 {
        self.points[0]
    }

    /// Largest point.
    pub fn max(&self) -> f64 {
        self.points[self.points.len() - 1]
    }

    /// The median as the flavor computes it (upper middle value, or mean of the middle
    /// two for an even count).
    pub fn median(&self) -> f64 {
        let n = self.points.len();
        let m = n / 2;
        match self.flavor {
            Flavor::FreeBsdCurrent if n.is_multiple_of(2) => {
                (self.points[m] + self.points[m - 1]) / 2.0
            }
            _ => self.points[m],
        }
    }

    /// Arithmetic mean, Σx/n.
    pub fn mean(&self) -> f64 {
        self.sum / self.points.len() as f64
    }

    /// Sample variance (n − 1 denominator), computed as the flavor does. NaN for n = 1;
    /// may be slightly negative for the Debian flavor on large, nearly equal values.
    pub fn variance(&self) -> f64 {
        self.variance
    }

    /// Sample standard deviation, √variance (NaN if the variance is negative or undefined;
    /// ministat prints such a NaN as `-nan`).
    pub fn stddev(&self) -> f64 {
        self.variance.sqrt()
    }

    /// Population standard deviation, √variance·√((n−1)/n), as current FreeBSD ministat's
    /// `-P` prints it (it then prints no test).
    pub fn population_stddev(&self) -> f64 {
        let n = self.points.len() as f64;
        self.variance.sqrt() * ((n - 1.0) / n).sqrt()
    }

    /// Σx², the running sum of squares (kept for diagnostics of the Debian variance).
    pub fn sum_of_squares(&self) -> f64 {
        self.sum_sq
    }
}

/// ministat's comparison of a data set against the reference (the first file).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StudentComparison {
    /// Confidence level used.
    pub confidence: Confidence,
    /// Degrees of freedom, n_d + n_r − 2.
    pub df: usize,
    /// The t value taken from ministat's table.
    pub t: f64,
    /// Pooled standard deviation s_p (`pooled s = …`).
    pub pooled_sd: f64,
    /// Difference of means, x̄_d − x̄_r.
    pub difference: f64,
    /// Half-width e of the interval for the difference (`d +/- e`).
    pub half_width: f64,
    /// 100·d/x̄_r.
    pub relative_pct: f64,
    /// The `± %` ministat prints next to the relative difference (formula per flavor).
    pub relative_half_width_pct: f64,
    /// |d| > e: ministat prints "Difference at …" rather than "No difference proven".
    pub significant: bool,
}

/// Compares `ds` against the reference `rs` exactly as ministat's `Relative()` does
/// (flavor taken from `ds`). O(1).
pub fn student_compare(ds: &Dataset, rs: &Dataset, confidence: Confidence) -> StudentComparison {
    let nd = ds.n();
    let nr = rs.n();
    let df = (nd + nr).saturating_sub(2);
    let t = student_t(df, confidence);
    let ndf = nd as f64;
    let nrf = nr as f64;
    let mut spool = (ndf - 1.0) * ds.variance() + (nrf - 1.0) * rs.variance();
    spool /= (nd + nr) as f64 - 2.0;
    let spool = spool.sqrt();
    let s = spool * (1.0 / ndf + 1.0 / nrf).sqrt();
    let d = ds.mean() - rs.mean();
    let e = t * s;
    let re = match ds.flavor() {
        Flavor::Debian20150715 => e,
        Flavor::FreeBsdCurrent => {
            let (ad, ar) = (ds.mean(), rs.mean());
            let mut re =
                (ndf - 1.0) * ds.variance() + (nrf - 1.0) * rs.variance() * (ad * ad) / (ar * ar);
            re *= (nd + nr) as f64 / ((nd * nr) as f64 * ((nd + nr) as f64 - 2.0));
            t * re.sqrt()
        }
    };
    StudentComparison {
        confidence,
        df,
        t,
        pooled_sd: spool,
        difference: d,
        half_width: e,
        relative_pct: d * 100.0 / rs.mean(),
        relative_half_width_pct: re * 100.0 / rs.mean(),
        significant: d.abs() > e,
    }
}

/// Result of Welch's unequal-variance t test of `b` against `a`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WelchTest {
    /// Difference of means, x̄_b − x̄_a.
    pub difference: f64,
    /// Standard error √(s_a²/n_a + s_b²/n_b).
    pub std_error: f64,
    /// The t statistic, difference / std_error.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom (fractional).
    pub df: f64,
    /// Two-sided p-value from Student's t with `df` degrees of freedom.
    pub p_value: f64,
    /// Lower bound of the confidence interval for the difference.
    pub ci_low: f64,
    /// Upper bound of the confidence interval for the difference.
    pub ci_high: f64,
}

/// Welch's t test (Welch 1947) of `b` against `a` at `confidence` (0 < confidence < 1),
/// using two-pass variances. O(n_a + n_b).
///
/// # Errors
/// [`StatsError::TooFewValues`] if either sample has fewer than 2 values,
/// [`StatsError::NonFinite`] on NaN or infinities, [`StatsError::BadParameter`] for a
/// confidence outside (0, 1), and [`StatsError::AllEqual`] if both variances are zero.
pub fn welch_t_test(a: &[f64], b: &[f64], confidence: f64) -> Result<WelchTest, StatsError> {
    crate::error::check_finite("first sample", a)?;
    crate::error::check_finite("second sample", b)?;
    for (what, xs) in [("first sample", a), ("second sample", b)] {
        if xs.len() < 2 {
            return Err(StatsError::TooFewValues {
                what,
                needed: 2,
                found: xs.len(),
            });
        }
    }
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(StatsError::BadParameter {
            what: "confidence",
            expected: "between 0 and 1 (exclusive)",
            found: confidence,
        });
    }
    let (ma, va) = crate::describe::mean_var(a);
    let (mb, vb) = crate::describe::mean_var(b);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (qa, qb) = (va / na, vb / nb);
    let se2 = qa + qb;
    if se2 == 0.0 {
        return Err(StatsError::AllEqual);
    }
    let se = se2.sqrt();
    let difference = mb - ma;
    let t = difference / se;
    let df = se2 * se2 / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0));
    let p_value = 2.0 * crate::dist::student_t_sf(t.abs(), df);
    let q = crate::dist::student_t_quantile(0.5 + confidence / 2.0, df);
    Ok(WelchTest {
        difference,
        std_error: se,
        t,
        df,
        p_value: p_value.min(1.0),
        ci_low: difference - q * se,
        ci_high: difference + q * se,
    })
}
