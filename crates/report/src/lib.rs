//! Renderers: of `resplab compare` (the exact text of ministat and benchstat, and
//! resplab's own comparison report in text, Markdown, JSON and CSV), of reports with
//! plots, of calibrations, and of one load run.
//!
//! Input is a [`resplab_results::sample::SampleSet`] (observations grouped by workload,
//! metric and label); statistics come from `resplab-stats`. Nothing here reads input
//! files, the environment or the terminal: every renderer returns a `String`; only
//! [`outfile`] and [`target`] touch the file system, to prepare output files.
//!
//! - [`compare`]: `resplab compare` once its inputs are read (style, baseline, gate,
//!   sensitivity lines, notes), with stored experiments' facts as plain values.
//! - [`bisect`]: what `resplab bisect` prints, its events and its outcome.
//! - [`benchstat`]: benchstat v2's text and CSV tables, byte for byte.
//! - [`ministat`]: ministat's legend, ASCII plot, vitals and Student t comparison.
//! - [`cfmt`]: C `printf` number formatting that ministat's output depends on.
//! - [`calibration`]: what `resplab calibrate` prints, and a stored calibration's page.
//! - [`history`]: what `resplab history` prints (a series with its change points).
//! - [`narration`]: what `resplab experiment run` says besides its verdicts (plan, trial
//!   lines, summary, gates).
//! - [`run`]: the exporters of one load run (table, redis-benchmark CSV and `-q`, HDR files).
//! - [`status`]: what `experiment list` and `experiment status` print.
//! - [`target`]: where a report document goes (format, file, plot folder).
//! - [`verdict`]: the words of a verdict (table labels and the experiment's running
//!   verdict line), in one place.

pub mod benchstat;
pub mod bisect;
pub mod calibration;
pub mod cfmt;
pub mod compare;
pub mod configcheck;
pub mod doc;
pub mod history;
pub mod memtier;
pub mod ministat;
pub mod narration;
pub mod outfile;
pub mod plot;
pub mod profile;
pub mod resplab;
pub mod run;
pub mod status;
pub mod target;
pub mod texttab;
pub mod verdict;
pub mod warnings;
