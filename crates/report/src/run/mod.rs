//! Exporters of one load run (`resplab bench`, `resplab merge`): the terminal table,
//! redis-benchmark's `--csv` and `-q` layouts, and HdrHistogram percentile files; what
//! `resplab bench` prints and writes of a run ([`bench`]).
//!
//! Every exporter reads the same [`RunRecord`](resplab_results::RunRecord) (or its
//! per-command [`Summary`](resplab_results::Summary)), so all of them show the same
//! numbers, and each returns the text it renders: the caller decides where it goes. The
//! JSON form is `serde_json` of the record itself (its fields are documented in
//! `docs/json.md`).

pub mod bench;
pub mod hdr;
pub mod rbcompat;
pub mod rbtext;
pub mod table;
