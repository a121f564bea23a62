//! Renderers of `resplab compare`: the exact text of ministat and benchstat, and
//! resplab's own comparison report in text, Markdown, JSON and CSV.
//!
//! Input is a [`resplab_results::sample::SampleSet`] (observations grouped by workload,
//! metric and label); statistics come from `resplab-stats`. Nothing here reads files,
//! the environment or the terminal: every renderer returns a `String`.
//!
//! - [`ministat`]: ministat's legend, ASCII plot, vitals and Student t comparison.
//! - [`cfmt`]: C `printf` number formatting that ministat's output depends on.
//! - [`verdict`]: the words of a verdict (table labels and the experiment's running
//!   verdict line), in one place.

pub mod benchstat;
pub mod cfmt;
pub mod doc;
pub mod ministat;
pub mod plot;
pub mod resplab;
pub mod texttab;
pub mod verdict;
