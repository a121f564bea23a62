//! `resplab profile diff A.folded B.folded`: which functions' share of the time changed
//! most between two profiles collected elsewhere, and their differential flame graph.
//! The comparison is [`resplab_report::profile`]; this module reads the files and prints.

use anyhow::Context as _;
use clap::{Args, Subcommand};
use resplab_report::profile::{self, Folded};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Compare sampled profiles (folded stacks).
#[derive(Debug, Args)]
pub struct ProfileArgs {
    #[command(subcommand)]
    pub command: ProfileCommand,
}

#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// The functions whose share of the samples changed most from A to B, and a
    /// differential flame graph.
    Diff(DiffArgs),
}

#[derive(Debug, Args)]
#[command(
    after_help = "Each file holds folded stacks: `frame;frame;…;leaf SAMPLES` per line (inferno-collapse-perf, stackcollapse-perf.pl). Self share: samples with the function as the leaf; total: samples with it anywhere on the stack.\n\nExit codes: 0 compared; 2 a file cannot be read or a line is not a folded stack (the message names the file and line)."
)]
pub struct DiffArgs {
    /// The baseline's folded stacks.
    pub a: PathBuf,
    /// The variant's folded stacks.
    pub b: PathBuf,
    /// Requests each profile covered, as A,B: shares become samples per request.
    #[arg(long, value_name = "A,B", value_parser = parse_requests)]
    pub requests: Option<(u64, u64)>,
    /// How many functions the table lists.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// Write the differential flame graph (SVG) to FILE.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
}

fn parse_requests(s: &str) -> Result<(u64, u64), String> {
    let parsed = s
        .split_once(',')
        .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)))
        .filter(|&(a, b): &(u64, u64)| a > 0 && b > 0);
    parsed
        .ok_or_else(|| format!("expected two positive counts A,B (e.g. 100000,98000), found `{s}`"))
}

/// Runs `resplab profile`.
///
/// # Errors
/// A file that cannot be read or parsed, or an SVG that cannot be written (exit code 2).
pub fn run(args: ProfileArgs) -> anyhow::Result<ExitCode> {
    let ProfileCommand::Diff(d) = args.command;
    let a = read(&d.a)?;
    let b = read(&d.b)?;
    let changes = profile::changes(&a, &b, d.requests, d.top);
    println!(
        "A: {} ({} samples)  B: {} ({} samples)",
        d.a.display(),
        a.samples(),
        d.b.display(),
        b.samples()
    );
    print!("{}", profile::table(&changes, d.requests.is_some()));
    if let Some(path) = &d.svg {
        let title = format!("{} vs {}", d.b.display(), d.a.display());
        let svg = profile::differential_svg_per_request(&a, &b, d.requests, &title)
            .map_err(|e| anyhow::anyhow!("--svg: the flame graph could not be drawn: {e}"))?;
        std::fs::write(path, svg)
            .with_context(|| format!("--svg {}: cannot write", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn read(path: &Path) -> anyhow::Result<Folded> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the folded stacks", path.display()))?;
    Ok(Folded::parse(&path.display().to_string(), &text)?)
}
