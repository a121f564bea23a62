//! The one result schema of resplab.
//!
//! A [`RunRecord`] is what one load run produced: the resolved configuration (seed
//! included), where it ran, per-command summaries with full histograms, and a per-second
//! series. It feeds every exporter (terminal table, JSON, CSV, Markdown, SQLite, plots),
//! so each of them shows the same numbers. The JSON form is documented field by field
//! in `docs/json.md`; [`SCHEMA_VERSION`] changes whenever a field changes meaning or
//! goes away (adding a field does not change it).
//!
//! Units are in the field names (`_us`, `_ns`, `_sec`, `_per_sec`, `bytes_`).
//! Histograms are HdrHistogram V2-deflate, base64, in **nanoseconds**, so runs can be
//! merged exactly later: [`merge`] is that merge, one record from the records of a
//! workload's shards, a pure function of records.
//!
//! [`bisect`] holds what `resplab bisect` found, as plain records.
//!
//! [`calibration`] is the stored shape of what `resplab calibrate` found; [`history`] the
//! points of a tracked series and their change points.
//!
//! [`duet`] pairs the intervals of a duet round's two trials (same wall-clock instants).
//!
//! [`import`] turns other tools' outputs (memtier, redis-benchmark, `go test -bench`,
//! hyperfine, HdrHistogram files, plain numbers) into observations; the histograms it
//! rebuilds or sums go through `resplab_stats::hist`, the one histogram type.
//!
//! Beside the schema: [`warning`], the one typed warning enum whose every variant words
//! its own advice (raised by the engine, the merge, the statistics and the report), and
//! [`csv`], the one CSV field writer, and [`date`], the one conversion of Unix times to
//! calendar dates.
//!
//! For tests only (this crate's own, and others' through the `fixture` feature):
//! `fixture`, the one builder of complete run records (on `RunRecord::empty`) and of a
//! stored validation, and the seeded generator behind them.
//!
//! This crate knows records, not how they are made: no load generation, no sockets, no
//! SQLite, no terminal (only `import::load_input` reads a file or standard input). Its
//! only crate of ours below it is `resplab-stats`, for the histograms and the warning
//! enum it re-exports.

pub mod bisect;
pub mod calibration;
pub mod configcheck;
pub mod run;

pub use run::*;
pub mod csv;
pub mod date;
pub mod duet;
#[cfg(any(test, feature = "fixture"))]
pub mod fixture;
pub mod history;
pub use resplab_stats::warning;
pub use warning::Warning;
pub mod import;
pub mod merge;
pub mod sample;
pub mod secrets;
