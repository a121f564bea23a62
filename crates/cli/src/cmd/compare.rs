//! `resplab compare`: read result files (or stored experiments), compare every variant
//! with the baseline, print the chosen style, and gate CI on regressions.
//!
//! Inputs are `[label=]FILE` as benchstat takes them; the format of each file is detected
//! from its content (see `resplab_results::import`). `[label=]db:NAME` reads a stored
//! experiment from the results database (`--db PATH`, default `./resplab.db`), paired by
//! round; when it comes first, its first variant is the baseline and its declared primary
//! metric and margin are used. Styles:
//! - `resplab` (default): effect %, CI, p, n, MDE and a verdict per (workload, metric);
//!   `--format text|markdown|json|csv`;
//! - `ministat`: ministat's exact output, one block per (workload, metric), with its flags
//!   `-c -A -n -q -s -w -C -d`;
//! - `benchstat`: benchstat's tables (`--format csv` for its CSV).
//!
//! The comparison itself is `resplab_report::compare`; what stored experiments add is
//! read by `resplab_experiment::readback`. Exit codes: 0 ok; 1 when `--fail-on-regression PCT` finds a metric significantly worse
//! than the baseline by more than PCT (computed with the default method whatever the
//! style); 2 bad input or usage (the message names the file, line or flag).

use anyhow::Context;
use clap::{Args, ValueEnum};
use resplab_report::compare::{self as pipeline, CompareOptions, Gate};
use resplab_results::import::{load_inputs_with, InputSpec, PlainOptions};
use resplab_results::sample::Direction;
use resplab_store::LazyStore;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Output style.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Style {
    /// Effect with CI, p, n, MDE and a three-way verdict.
    Resplab,
    /// FreeBSD ministat's output, exactly.
    Ministat,
    /// Go benchstat's tables, exactly.
    Benchstat,
}

/// Output format of the resplab style (benchstat: text or csv).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Json,
    Csv,
}

/// Arguments of `resplab compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Inputs: `[label=]FILE` or `[label=]db:NAME`. Files with the same label form one
    /// sample (each resplab run file is one trial). The first label is the baseline.
    #[arg(required = true, value_name = "[label=]FILE")]
    pub inputs: Vec<String>,
    /// Output style.
    #[arg(long, value_enum, default_value_t = Style::Resplab)]
    pub style: Style,
    /// Label to compare against (default: the first input's label).
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// Equivalence margin in percent: a CI inside ±PCT is reported as EQUIVALENT.
    #[arg(long, value_name = "PCT")]
    pub margin: Option<f64>,
    /// Confidence level in percent (ministat: one of 80, 90, 95, 98, 99, 99.5).
    #[arg(short = 'c', long, value_name = "PCT", default_value_t = 95.0)]
    pub confidence: f64,
    /// Significance level of benchstat's U test.
    #[arg(long, value_name = "ALPHA", default_value_t = 0.05)]
    pub alpha: f64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Exit 1 when any metric is significantly worse than the baseline by more than PCT;
    /// exit 2 when the gate had nothing to judge (the reason is printed).
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<f64>,
    /// Plain numbers (metrics without a direction): higher is better.
    #[arg(long, conflicts_with = "lower_is_better")]
    pub higher_is_better: bool,
    /// Plain numbers (metrics without a direction): lower is better.
    #[arg(long)]
    pub lower_is_better: bool,
    /// ministat -A: statistics only, no plot.
    #[arg(short = 'A')]
    pub no_plot: bool,
    /// ministat -n: summary statistics only, no plot and no test.
    #[arg(short = 'n')]
    pub summary_only: bool,
    /// ministat -q: no legend and no table header.
    #[arg(short = 'q')]
    pub quiet: bool,
    /// ministat -s: mean/median/stddev bars on separate lines.
    #[arg(short = 's')]
    pub separate_bars: bool,
    /// ministat -w: plot width (default 74).
    #[arg(short = 'w', value_name = "WIDTH", default_value_t = 74)]
    pub width: usize,
    /// Pair the i-th file of each label with the i-th file of the others as round i (each
    /// file one trial, run in interleaved order); the comparison is then paired by round.
    #[arg(long)]
    pub paired: bool,
    /// Results database for `db:NAME` inputs (written by `resplab experiment run`).
    #[arg(long, value_name = "PATH", default_value = resplab_store::DEFAULT_DB)]
    pub db: PathBuf,
    /// Plain-number files: column to read, from 1 (reads every input as plain numbers).
    #[arg(short = 'C', value_name = "COLUMN")]
    pub column: Option<usize>,
    /// Plain-number files: field delimiter characters (default space and tab; reads every
    /// input as plain numbers).
    #[arg(short = 'd', value_name = "DELIMS")]
    pub delimiters: Option<String>,
}

/// Runs `resplab compare`.
///
/// # Errors
/// Bad flags or inputs; the message names the flag, file and line.
pub fn run(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let opts = options(&args);
    pipeline::check(&opts, args.column, args.delimiters.as_deref())?;
    let specs = args
        .inputs
        .iter()
        .map(|a| InputSpec::parse(a))
        .collect::<Result<Vec<_>, _>>()?;
    let plain = PlainOptions::from_flags(args.column, args.delimiters.as_deref());
    let mut store = LazyStore::new(&args.db);
    let mut loaded = load_inputs_with(&specs, &plain, &mut store, args.paired)?;
    let facts = resplab_experiment::readback::compare_facts(
        &mut store,
        &specs,
        pipeline::shows_sensitivity(&opts),
    )?;
    let compared = pipeline::compare(&mut loaded, &opts, &facts)?;
    eprint!("{}", compared.stderr);
    let mut out = std::io::stdout().lock();
    if let Err(e) = out
        .write_all(compared.text.as_bytes())
        .and_then(|()| out.flush())
    {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e).context("writing the comparison to standard output");
        }
    }
    let code = match &compared.gate {
        Gate::Regression => ExitCode::from(1),
        Gate::NothingJudged(why) => {
            eprintln!(
                "resplab: --fail-on-regression had nothing to judge, so it cannot pass:\n{}",
                why.iter()
                    .map(|w| format!("  {w}\n"))
                    .collect::<String>()
                    .trim_end()
            );
            ExitCode::from(2)
        }
        Gate::Off | Gate::Passed => ExitCode::SUCCESS,
    };
    // The process ends right after printing: releasing millions of observations one by
    // one would cost more than comparing them, so their memory goes back with the process.
    std::mem::forget(compared);
    std::mem::forget(loaded);
    Ok(code)
}

/// The comparison's options, as the flags give them.
fn options(args: &CompareArgs) -> CompareOptions {
    CompareOptions {
        style: match args.style {
            Style::Resplab => pipeline::Style::Resplab,
            Style::Ministat => pipeline::Style::Ministat,
            Style::Benchstat => pipeline::Style::Benchstat,
        },
        format: match args.format {
            Format::Text => pipeline::Format::Text,
            Format::Markdown => pipeline::Format::Markdown,
            Format::Json => pipeline::Format::Json,
            Format::Csv => pipeline::Format::Csv,
        },
        baseline: args.baseline.clone(),
        margin: args.margin,
        confidence: args.confidence,
        alpha: args.alpha,
        fail_on_regression: args.fail_on_regression,
        direction: if args.higher_is_better {
            Some(Direction::HigherIsBetter)
        } else if args.lower_is_better {
            Some(Direction::LowerIsBetter)
        } else {
            None
        },
        no_plot: args.no_plot,
        summary_only: args.summary_only,
        quiet: args.quiet,
        separate_bars: args.separate_bars,
        width: args.width,
    }
}
