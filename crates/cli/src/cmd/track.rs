//! `resplab track`: append one measurement to a named series (`resplab history` reads
//! it). The measuring, fingerprints and storing are `resplab_experiment::history`'s.

use crate::args::DbArg;
use anyhow::{bail, Context as _};
use clap::Args;
use resplab_engine::words;
use resplab_experiment::history::{self, TrackRequest, TrackSource};
use resplab_store::Store;
use std::process::ExitCode;

/// Append one measurement to a named series, with its commit, time and tags.
#[derive(Debug, Args)]
#[command(
    after_help = "The measurement is a stored experiment (--experiment-name) or files in any format `resplab compare` reads (each file one trial; the value tracked per workload and metric is the median of the trials). It is stored with fingerprints of the host and of the configuration: `resplab history` never compares points across either.\n\nExit codes: 0 tracked; 2 bad input (a file that does not import, an unknown experiment, a bad --when or --tag): nothing is stored then."
)]
pub struct TrackArgs {
    /// The series to append to (created by its first point).
    #[arg(value_name = "NAME")]
    pub series: String,
    #[command(flatten)]
    pub db: DbArg,
    /// The revision measured (a commit hash, a tag, a version).
    #[arg(long, value_name = "REV")]
    pub commit: Option<String>,
    /// When the measurement was taken: Unix seconds, RFC 3339 or +SECONDS from now
    /// (default: when the run started, or now for foreign files).
    #[arg(long, value_name = "TIME")]
    pub when: Option<String>,
    /// A tag `key=value` kept with the point (repeatable).
    #[arg(long = "tag", value_name = "K=V")]
    pub tags: Vec<String>,
    /// Track a stored experiment of --db.
    #[arg(long, value_name = "E", conflicts_with = "files")]
    pub experiment_name: Option<String>,
    /// Result files (`resplab bench --json`, redis-benchmark, memtier, go test -bench…).
    #[arg(value_name = "FILE", required_unless_present = "experiment_name")]
    pub files: Vec<String>,
}

/// Runs `resplab track`.
///
/// # Errors
/// Bad flags, an input that does not import, or a store failure (exit code 2).
pub fn run(args: TrackArgs) -> anyhow::Result<ExitCode> {
    let when_unix_ms = match &args.when {
        Some(w) => Some(words::wall_time("--when", w, now_unix_ms())? as i64),
        None => None,
    };
    let tags = history::parse_tags(&args.tags)?;
    if args.series.trim().is_empty() {
        bail!("NAME: expected a series name, found an empty one");
    }
    let source = match args.experiment_name {
        Some(e) => TrackSource::Experiment(e),
        None => TrackSource::Files(args.files),
    };
    let mut store = Store::open(&args.db.db)
        .with_context(|| format!("opening the result store {}", args.db.db.display()))?;
    let req = TrackRequest {
        series: args.series,
        commit: args.commit,
        when_unix_ms,
        tags,
        source,
    };
    let point = history::track(&mut store, &req)?;
    println!(
        "tracked point {} of series {}: {} values from {} (host {}, configuration {})",
        point.id,
        req.series,
        point.values.len(),
        point.source,
        point.host_fingerprint,
        point.config_fingerprint
    );
    Ok(ExitCode::SUCCESS)
}

fn now_unix_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1e3)
}
