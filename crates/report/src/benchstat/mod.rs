//! `--style benchstat`: benchstat v2's comparison tables, text and CSV.
//!
//! Layout and rules follow golang.org/x/perf `cmd/benchstat` (`internal/benchtab`,
//! `internal/texttab`, `benchmath`, `benchunit`), with its defaults `-table .config`,
//! `-row .fullname`, `-col .file`:
//!
//! - one table per (configuration, unit); configuration lines (`goos: linux`) are printed
//!   above a table whenever they differ from the previous table's; units are tidied
//!   (`ns/op` → `sec/op` ×1e-9, `MB/s` → `B/s` ×1e6);
//! - rows are benchmarks (workloads) and columns are labels, both in first-seen order; the
//!   first column is the baseline;
//! - each cell shows the median and `± X%`, the wider side of the median's
//!   order-statistic confidence interval ([`resplab_stats::quantile_ci`]); `∞` when the
//!   sample is too small, `?` when the interval crosses zero;
//! - each later column shows the change of medians `%+.2f%%`, or `~` when the two-sided
//!   Mann–Whitney U test ([`resplab_stats::utest`]) gives p > α, then `(p=0.PPP n=N)`;
//! - values in a row share one SI (or, for byte units, IEC) prefix chosen so the smallest
//!   non-zero value shows at least three significant digits;
//! - a `geomean` row (tables with more than one row) shows the geometric mean of the
//!   medians and of the per-row ratios;
//! - warnings become superscript footnotes: too few samples for a confidence interval or
//!   to detect a difference, all samples equal, differing benchmark sets.
//!
//! Cost: per cell one sort, one U test (exact tests are at most a few million steps).
//!
//! The steps, one file each: `table` groups observations into tables, `analyse`
//! computes each table's statistics, `text` and `csv` lay them out; `units` tidies
//! units and formats numbers, `gomath` reproduces Go's `math.Log`, `math.Exp` and
//! geometric mean bit for bit. The entry points below take observations and return text.

mod analyse;
mod csv;
mod gomath;
mod table;
mod text;
mod units;

pub use units::{common_scale, go_float, is_binary_unit, scale, tidy_unit, Scaler};

use resplab_results::sample::{Observation, Observations};
use std::borrow::Borrow;
use table::build;

/// benchstat's `-confidence` and `-alpha`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchstatOptions {
    /// Confidence level of the median intervals (0.95).
    pub confidence: f64,
    /// Significance level of the U test (0.05).
    pub alpha: f64,
}

impl Default for BenchstatOptions {
    fn default() -> Self {
        BenchstatOptions {
            confidence: 0.95,
            alpha: 0.05,
        }
    }
}

/// Why a benchstat table could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BenchstatError {
    /// A value is NaN or infinite.
    #[error("benchmark {row}, {label}, {unit}: {message}")]
    BadValue {
        row: String,
        label: String,
        unit: String,
        message: String,
    },
}
/// benchstat's text output for `observations` (labels as columns, the first label is the
/// baseline).
///
/// # Errors
/// [`BenchstatError`] when a value is NaN or infinite.
pub fn render_text(
    observations: &[Observation],
    opts: &BenchstatOptions,
) -> Result<String, BenchstatError> {
    render_text_from(observations.iter(), opts)
}

/// The observations of `first` (the baseline column), then all others, without copying
/// the list.
pub fn baseline_first<'a>(
    observations: &'a Observations,
    first: &'a str,
) -> impl Iterator<Item = Observation> + Clone + 'a {
    let base = observations.iter().filter(move |o| *o.label == *first);
    let rest = observations.iter().filter(move |o| *o.label != *first);
    base.chain(rest)
}

/// As [`render_text`], from any re-iterable sequence of observations (e.g.
/// [`baseline_first`]).
///
/// # Errors
/// [`BenchstatError`] when a value is NaN or infinite.
pub fn render_text_from<I>(
    observations: I,
    opts: &BenchstatOptions,
) -> Result<String, BenchstatError>
where
    I: Iterator + Clone,
    I::Item: Borrow<Observation>,
{
    text::text_of_tables(build(observations), opts)
}

/// As [`render_text_from`] with the baseline label `first` first, taking the list: it
/// is dropped as soon as the tables are built, before the statistics run.
///
/// # Errors
/// [`BenchstatError`] when a value is NaN or infinite.
pub fn render_text_owned(
    observations: Observations,
    first: &str,
    opts: &BenchstatOptions,
) -> Result<String, BenchstatError> {
    let tables = build(baseline_first(&observations, first));
    drop(observations);
    text::text_of_tables(tables, opts)
}

/// As [`render_csv_from`] with the baseline label `first` first, taking the list.
///
/// # Errors
/// [`BenchstatError`] when a value is NaN or infinite.
pub fn render_csv_owned(
    observations: Observations,
    first: &str,
    opts: &BenchstatOptions,
) -> Result<(String, String), BenchstatError> {
    let tables = build(baseline_first(&observations, first));
    drop(observations);
    csv::csv_of_tables(tables, opts)
}
/// benchstat's `-format csv` output: the CSV text and the warnings text (which benchstat
/// writes to standard error, each prefixed with a spreadsheet cell reference).
///
/// # Errors
/// [`BenchstatError`] when a value is NaN or infinite.
pub fn render_csv(
    observations: &[Observation],
    opts: &BenchstatOptions,
) -> Result<(String, String), BenchstatError> {
    render_csv_from(observations.iter(), opts)
}

/// As [`render_csv`], from any re-iterable sequence of observations.
///
/// # Errors
/// [`BenchstatError`] when a value is NaN or infinite.
pub fn render_csv_from<I>(
    observations: I,
    opts: &BenchstatOptions,
) -> Result<(String, String), BenchstatError>
where
    I: Iterator + Clone,
    I::Item: Borrow<Observation>,
{
    csv::csv_of_tables(build(observations), opts)
}
