//! `--style ministat`: ministat's output, character for character.
//!
//! Reproduces the Debian/Ubuntu `ministat 20150715` build (FreeBSD's 2012 `ministat.c`):
//! the legend (`x name`), the ASCII dot plot with its mean ± standard deviation bars, the
//! vitals table and, for every data set after the first, the Student t comparison against
//! the first. The numbers come from [`resplab_stats::ministat`]; this module only lays
//! them out, following ministat's own plotting rules:
//!
//! - the plot spans every data set's min, max and mean ± sd; with w columns,
//!   dx = span/(w − 1) and x0 = min − dx/2, and a value lands in column ⌊(v − x0)/dx⌋;
//! - points sharing a column stack upwards; each cell ORs the data set numbers (1, 2, 3, …)
//!   that landed in it and prints the symbol with that index (` x+*%#@O`), so an `x` and
//!   a `+` in one cell print `*`;
//! - the plot height follows the *last* data set's tallest stack (ministat overwrites it
//!   per data set, so a later, flatter set can hide the top of an earlier tall stack —
//!   reproduced because it is what ministat prints);
//! - under the dots, one bar row (or one per data set with `-s`): `|` at mean ± sd, `_`
//!   between, `M` at the median and `A` at the mean (A wins over M);
//! - a zero span prints `[no plot, span is zero width]`.
//!
//! Flags: `-c` confidence, `-A` no plot, `-n` vitals only, `-q` no legend and no table
//! header (as in current FreeBSD), `-s` separate bars, `-w` width. `-C` and `-d` belong to
//! the importer ([`resplab_results::import::PlainOptions`]).
//!
//! Cost: O(n log n) per data set (sorting) plus O(w · height) for the plot.

use crate::cfmt;
use resplab_stats::ministat::{student_compare, Confidence, Dataset, Flavor};

/// Symbols of ministat, indexed by the OR of data set numbers in a cell.
const SYMBOLS: [u8; 8] = [b' ', b'x', b'+', b'*', b'%', b'#', b'@', b'O'];

/// Most data sets ministat accepts.
pub const MAX_SETS: usize = 7;

/// ministat's flags.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MinistatOptions {
    /// `-c`: confidence level of the test.
    pub confidence: Confidence,
    /// `-w`: plot width in columns (default 74).
    pub width: usize,
    /// `-s`: one mean/median/sd bar row per data set.
    pub separate_bars: bool,
    /// `-A`: statistics only, no plot.
    pub no_plot: bool,
    /// `-n`: vitals only, no plot and no test.
    pub summary_only: bool,
    /// `-q`: no legend lines and no vitals header.
    pub quiet: bool,
    /// Which ministat's arithmetic to reproduce.
    pub flavor: Flavor,
}

impl Default for MinistatOptions {
    fn default() -> Self {
        MinistatOptions {
            confidence: Confidence::C95,
            width: 74,
            separate_bars: false,
            no_plot: false,
            summary_only: false,
            quiet: false,
            flavor: Flavor::Debian20150715,
        }
    }
}

/// Why ministat output cannot be produced.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MinistatError {
    /// ministat needs three points per data set.
    #[error("Dataset {0} must contain at least 3 data points")]
    TooFewPoints(String),
    /// ministat compares at most seven data sets.
    #[error("ministat compares at most {MAX_SETS} data sets, found {0}")]
    TooManySets(usize),
    /// No data set at all.
    #[error("ministat needs at least one data set, found none")]
    NoSets,
    /// The plot needs room.
    #[error("plot width must be at least 2 columns, found {0}")]
    BadWidth(usize),
}

/// A named data set, points in input order.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedSet {
    /// Name as printed in the legend (the file name as given).
    pub name: String,
    /// The points in the order they were read.
    pub points: Vec<f64>,
}

/// Renders ministat's output for `sets` (the first is the reference).
///
/// # Errors
/// [`MinistatError`] for fewer than 3 points in a set, more than 7 sets, none, or a plot
/// width below 2.
pub fn render(sets: &[NamedSet], opts: &MinistatOptions) -> Result<String, MinistatError> {
    if sets.is_empty() {
        return Err(MinistatError::NoSets);
    }
    if sets.len() > MAX_SETS {
        return Err(MinistatError::TooManySets(sets.len()));
    }
    let plotting = !opts.summary_only && !opts.no_plot;
    if plotting && opts.width < 2 {
        return Err(MinistatError::BadWidth(opts.width));
    }
    let mut data = Vec::with_capacity(sets.len());
    for s in sets {
        if s.points.len() < 3 {
            return Err(MinistatError::TooFewPoints(s.name.clone()));
        }
        let ds = Dataset::new(&s.points, opts.flavor)
            .map_err(|_| MinistatError::TooFewPoints(s.name.clone()))?;
        data.push(ds);
    }
    let mut out = String::new();
    if !opts.quiet {
        for (i, s) in sets.iter().enumerate() {
            out.push(SYMBOLS[i + 1] as char);
            out.push(' ');
            out.push_str(&s.name);
            out.push('\n');
        }
    }
    if plotting {
        plot(&data, opts, &mut out);
    }
    if !opts.quiet {
        out.push_str(
            "    N           Min           Max        Median           Avg        Stddev\n",
        );
    }
    vitals(&data[0], 1, &mut out);
    for (i, ds) in data.iter().enumerate().skip(1) {
        vitals(ds, i + 1, &mut out);
        if !opts.summary_only {
            relative(ds, &data[0], opts.confidence, &mut out);
        }
    }
    Ok(out)
}

fn vitals(ds: &Dataset, index: usize, out: &mut String) {
    out.push(SYMBOLS[index] as char);
    out.push(' ');
    out.push_str(&cfmt::right(&ds.n().to_string(), 3));
    for v in [ds.min(), ds.max(), ds.median(), ds.mean(), ds.stddev()] {
        out.push(' ');
        out.push_str(&cfmt::right(&cfmt::g(v, 8), 13));
    }
    out.push('\n');
}

fn relative(ds: &Dataset, rs: &Dataset, confidence: Confidence, out: &mut String) {
    let c = student_compare(ds, rs, confidence);
    let pct = cfmt::f(confidence.percent(), 1);
    if c.significant {
        out.push_str(&format!("Difference at {pct}% confidence\n"));
        out.push_str(&format!(
            "\t{} +/- {}\n",
            cfmt::g6(c.difference),
            cfmt::g6(c.half_width)
        ));
        out.push_str(&format!(
            "\t{}% +/- {}%\n",
            cfmt::g6(c.relative_pct),
            cfmt::g6(c.relative_half_width_pct)
        ));
        out.push_str(&format!(
            "\t(Student's t, pooled s = {})\n",
            cfmt::g6(c.pooled_sd)
        ));
    } else {
        out.push_str(&format!("No difference proven at {pct}% confidence\n"));
    }
}

/// The plot state, as ministat keeps it.
struct Plot {
    min: f64,
    max: f64,
    span: f64,
    dx: f64,
    x0: f64,
    width: usize,
    height: usize,
    data: Vec<u8>,
    bars: Vec<Option<Vec<u8>>>,
}

impl Plot {
    fn adjust(&mut self, a: f64) {
        if a < self.min {
            self.min = a;
        }
        if a > self.max {
            self.max = a;
        }
        self.span = self.max - self.min;
        self.dx = self.span / (self.width as f64 - 1.0);
        self.x0 = self.min - 0.5 * self.dx;
    }

    /// Column of `v`, truncated toward zero like C's double-to-int conversion; `None`
    /// when it falls outside the plot (only possible with non-finite statistics).
    fn column(&self, v: f64) -> Option<usize> {
        let x = ((v - self.x0) / self.dx).trunc();
        if x.is_finite() && x >= 0.0 && (x as usize) < self.width {
            Some(x as usize)
        } else {
            None
        }
    }
}

fn plot(data: &[Dataset], opts: &MinistatOptions, out: &mut String) {
    let width = opts.width;
    let mut pl = Plot {
        min: 999e99,
        max: -999e99,
        span: 0.0,
        dx: 0.0,
        x0: 0.0,
        width,
        height: 0,
        data: Vec::new(),
        bars: vec![None; data.len()],
    };
    for ds in data {
        pl.adjust(ds.min());
        pl.adjust(ds.max());
        pl.adjust(ds.mean() - ds.stddev());
        pl.adjust(ds.mean() + ds.stddev());
    }
    if pl.span == 0.0 {
        out.push_str("[no plot, span is zero width]\n");
        return;
    }
    for (i, ds) in data.iter().enumerate() {
        plot_set(&mut pl, ds, (i + 1) as u8, opts.separate_bars);
    }
    let border = format!("+{}+\n", "-".repeat(width));
    out.push_str(&border);
    for i in 1..pl.height {
        out.push('|');
        let row = pl.height - i;
        for j in 0..width {
            let k = pl.data.get(row * width + j).copied().unwrap_or(0);
            out.push(SYMBOLS[usize::from(k) & 7] as char);
        }
        out.push_str("|\n");
    }
    for bar in pl.bars.iter().flatten() {
        out.push('|');
        for &k in bar {
            out.push(if k == 0 { ' ' } else { k as char });
        }
        out.push_str("|\n");
    }
    out.push_str(&border);
}

fn plot_set(pl: &mut Plot, ds: &Dataset, val: u8, separate: bool) {
    let width = pl.width;
    let bar_index = if separate { usize::from(val) - 1 } else { 0 };
    let points = ds.sorted_points();
    // Each point's column and its height in the stack of equal columns.
    let mut last: Option<usize> = None;
    let mut j = 0usize;
    let stacked: Vec<(Option<usize>, usize)> = points
        .iter()
        .map(|&p| {
            let x = pl.column(p);
            if x.is_some() && x == last {
                j += 1;
            } else {
                j = 1;
                last = x;
            }
            (x, j)
        })
        .collect();
    // Tallest stack of this data set.
    let m = stacked.iter().map(|&(_, j)| j).max().unwrap_or(1) + 1;
    if m > pl.height {
        pl.data.resize(width * m, 0);
        for b in &mut pl.data[pl.height * width..] {
            *b = 0;
        }
    }
    pl.height = m;
    for (x, j) in stacked {
        if let Some(x) = x {
            if let Some(cell) = pl.data.get_mut(j * width + x) {
                *cell |= val;
            }
        }
    }
    let (mean, sd) = (ds.mean(), ds.stddev());
    let sd_cols = (!sd.is_nan()).then(|| (pl.column(mean - sd), pl.column(mean + sd)));
    let median_col = pl.column(ds.median());
    let mean_col = pl.column(mean);
    let bar = pl.bars[bar_index].get_or_insert_with(|| vec![0u8; width]);
    if let Some((lo, hi)) = sd_cols {
        if let Some(h) = hi {
            bar[h] = b'|';
        }
        if let Some(l) = lo {
            bar[l] = b'|';
        }
        if let (Some(l), Some(h)) = (lo, hi) {
            for cell in bar.iter_mut().take(h).skip(l + 1) {
                if *cell == 0 {
                    *cell = b'_';
                }
            }
        }
    }
    if let Some(x) = median_col {
        bar[x] = b'M';
    }
    if let Some(x) = mean_col {
        bar[x] = b'A';
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(name: &str, p: &[f64]) -> NamedSet {
        NamedSet {
            name: name.into(),
            points: p.to_vec(),
        }
    }

    #[test]
    fn man_page_example_at_80_percent() {
        let iguana = set("iguana", &[50.0, 200.0, 150.0, 400.0, 750.0, 400.0, 150.0]);
        let chameleon = set("chameleon", &[150.0, 400.0, 720.0, 500.0, 930.0]);
        let opts = MinistatOptions {
            confidence: Confidence::C80,
            width: 60,
            ..Default::default()
        };
        let out = render(&[iguana, chameleon], &opts).unwrap();
        assert!(out.contains("Difference at 80.0% confidence\n"), "{out}");
        assert!(out.contains("\t240 +/- 212.215\n"), "{out}");
    }

    #[test]
    fn zero_span_and_errors() {
        let a = set("a", &[1.0, 1.0, 1.0]);
        let out = render(&[a.clone(), a.clone()], &MinistatOptions::default()).unwrap();
        assert!(out.contains("[no plot, span is zero width]\n"));
        let short = set("s", &[1.0, 2.0]);
        assert_eq!(
            render(&[short], &MinistatOptions::default())
                .unwrap_err()
                .to_string(),
            "Dataset s must contain at least 3 data points"
        );
    }
}
