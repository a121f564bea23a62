//! Where the output of a command goes: output files opened before anything is measured,
//! and the live progress line on a terminal. The exporters themselves (table, CSV, HDR
//! files) are `resplab_report::run`.

pub mod outfile;
pub mod progress;
