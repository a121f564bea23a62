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
//! merged exactly later.
//!
//! [`import`] turns other tools' outputs (memtier, redis-benchmark, `go test -bench`,
//! hyperfine, HdrHistogram files, plain numbers) into observations; the histograms it
//! rebuilds or sums go through `resplab_stats::hist`, the one histogram type. This
//! crate reads bytes it is handed and knows nothing of load generation, SQLite or the
//! terminal (only `import::load_input` reads a file or standard input).

pub mod run;

pub use run::*;
pub mod import;
pub mod sample;
pub mod secrets;
