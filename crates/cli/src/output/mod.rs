//! Where the output of a command goes: output files opened before anything is measured,
//! the live progress line on a terminal, and the live metrics endpoint's announcement. The exporters themselves (table, CSV, HDR
//! files) are `resplab_report::run`.

pub mod metrics;
pub mod outfile;
pub mod progress;
