//! A/B experiments: variants × workloads × rounds, run fairly, stored as they finish.
//!
//! An experiment file (`experiment.toml`, see `docs/experiment.md`) names a baseline and
//! one or more variants (servers started fresh per trial, servers at an address, or
//! hot toggles inside one server), the workloads to run against each, and how many
//! rounds. This crate turns the file into a validated [`Experiment`] ([`resolve`]),
//! plans the randomized interleaved order of trials ([`plan`]), and runs it ([`runner`]):
//! for every trial it starts the server, waits for `PING`, applies `CONFIG SET` pairs,
//! runs hooks, preloads, measures through `resplab-engine`, checks the trial's validity
//! and commits it to the store in its own transaction. An interrupted experiment
//! resumes from the first missing trial.
//!
//! [`calibrate`] measures this machine's noise with A/A experiments of the same runner,
//! plans the budget a verdict needs, and validates the tool's error rates.
//! [`throwaway`] starts the server a load run without a target measures.
//!
//! It prints nothing: progress goes to a callback ([`runner::Event`]), so tests can
//! watch it; [`narrate`] decides what a person watching reads, in `resplab-report`'s
//! words, and the CLI writes it.
//!
//! Neighbours: `resplab-engine` generates the load, `resplab-store` keeps the trials,
//! `resplab-results` is the schema of one run (and merges generator shards) and of a
//! calibration, `resplab-workload` the vocabulary of a workload, `resplab-proto` reads
//! the server's `INFO` text, `resplab-serve` is the known-truth server of
//! `calibrate --validate`, `resplab-sys` starts and reaps server processes and reads
//! `/proc`; [`readback`] hands stored experiments to `resplab-report` as its plain
//! values, which is all this crate uses of it.

pub mod bisect;
pub mod calibrate;
pub mod certificate;
pub mod client;
pub mod cluster;
pub mod command;
pub mod configcheck;
pub mod duet;
pub mod error;
pub mod error_rate;
pub mod evidence;
pub mod generators;
pub mod history;
pub mod launch;
pub mod model;
pub mod narrate;
pub mod plan;
pub mod readback;
pub mod resolve;
pub mod runner;
pub mod sequential;
pub mod server_profile;
pub mod spec;
pub mod throwaway;
pub mod words;
pub mod workload;

pub use error::SpecError;
pub use model::{
    Experiment, Order, ServerSource, TrialBudget, UntilDecided, UntilRule, Variant, Workload,
};
pub use resolve::Overrides;

use std::path::Path;

/// Reads and validates an experiment file.
///
/// # Errors
/// A [`SpecError`] when the file cannot be read (no line) or has a problem (with its
/// line, column and key).
pub fn load(path: &Path, overrides: &Overrides) -> Result<(Experiment, String), SpecError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SpecError {
        file: file.clone(),
        line: None,
        column: None,
        key: None,
        message: format!("cannot read the experiment file: {e}"),
    })?;
    let exp = resolve::parse(&file, &text, overrides)?;
    Ok((exp, text))
}
