//! `resplab merge`: one exact result from the results of N generators
//! (`resplab bench --shard I/N --json FILE` on each host).
//!
//! The merge itself is [`resplab_results::merge`]; this module reads the files, writes the
//! merged record (the output file is opened before anything else, so a bad path fails
//! first) and prints the table with one line per shard.

use crate::output::OutFile;
use anyhow::Context as _;
use clap::Args;
use resplab_report::run::table;
use resplab_results::RunRecord;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Merge the results of N shards of one workload into one exact result.
#[derive(Debug, Args)]
#[command(
    after_help = "Counts, bytes and client CPU add; latency histograms add exactly, so the merged percentiles are those of all replies together (never an average of the shards' percentiles); throughput is the sum of the shards' throughputs; the per-second series are aligned on wall-clock time.\n\nExit codes: 0 merged; 2 a file cannot be read, is not a shard result, or the shards are not of one workload (the message names the file and what differs)."
)]
pub struct MergeArgs {
    /// Shard results: `resplab bench --shard I/N --json FILE` outputs (- reads one from
    /// standard input).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write the merged result (JSON, schema in docs/json.md) to FILE, or - for stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<String>,
    /// Merge although some shards of 1..N are missing (the result says which).
    #[arg(long)]
    pub partial: bool,
}

/// Runs `resplab merge`.
///
/// # Errors
/// A file that cannot be read or parsed, shards that do not belong together, or an
/// output path that cannot be written (exit code 2).
pub fn run(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let to_stdout = args.output.as_deref() == Some("-");
    if let Some(o) = args.output.as_deref().filter(|o| *o != "-") {
        if let Some(input) = args
            .files
            .iter()
            .find(|f| same_file(f.as_path(), Path::new(o)))
        {
            anyhow::bail!(
                "-o/--output {o}: expected a file that is not one of the inputs, found the input shard {}: writing there would destroy it; nothing was written",
                input.display()
            );
        }
    }
    let out = match args.output.as_deref() {
        Some("-") | None => None,
        Some(path) => Some(OutFile::prepare("-o/--output", path)?),
    };
    let mut inputs = Vec::with_capacity(args.files.len());
    for path in &args.files {
        let label = path.display().to_string();
        let text = if label == "-" {
            std::io::read_to_string(std::io::stdin()).context("reading standard input")?
        } else {
            std::fs::read_to_string(path).with_context(|| format!("{label}: cannot read"))?
        };
        let record = parse_record(&label, &text)?;
        inputs.push((label, record));
    }
    let merged = resplab_results::merge::merge(&inputs, args.partial)?;
    let json = serde_json::to_string_pretty(&merged)? + "\n";
    match out {
        Some(file) => crate::output::finish(file, json.as_bytes())?,
        None if to_stdout => print!("{json}"),
        None => {}
    }
    let order: Vec<String> = merged.commands.keys().cloned().collect();
    let text = table::render(&merged, &order);
    if to_stdout {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    Ok(ExitCode::SUCCESS)
}

/// A `resplab bench --json` record, with the line and column of a syntax error.
fn parse_record(label: &str, text: &str) -> anyhow::Result<RunRecord> {
    serde_json::from_str(text).map_err(|e| {
        let what = if e.is_data() {
            "a resplab result (resplab bench --json)"
        } else {
            "JSON"
        };
        anyhow::anyhow!("{label}:{}:{}: expected {what}: {e}", e.line(), e.column())
    })
}

/// Whether two paths name the same existing file (same device and inode, so links and
/// different spellings of one path count).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}
