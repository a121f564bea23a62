//! Exporters for one load run: the terminal table, redis-benchmark's `--csv` and `-q`
//! layouts, HdrHistogram percentile files, and the live progress line.
//!
//! Every exporter reads the same [`RunRecord`](resplab_results::RunRecord), so all of
//! them show the same numbers. The JSON form is `serde_json` of the record itself (its
//! fields are documented in `docs/json.md`).

pub mod hdr;
pub mod outfile;
pub mod progress;
pub mod rbcompat;
pub mod table;
