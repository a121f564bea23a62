//! `resplab history`: a tracked series per workload × metric with its change points,
//! and the CI gate on the newest one. The analysis is `resplab_experiment::history`'s,
//! the words `resplab_report::history`'s.

use crate::args::DbArg;
use anyhow::bail;
use clap::{Args, ValueEnum};
use resplab_experiment::history;
use resplab_report::history as render;
use resplab_stats::changepoint::ChangePointConfig;
use resplab_store::Store;
use std::process::ExitCode;

/// Output formats of `resplab history`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HistoryFormat {
    Text,
    Json,
    Csv,
}

/// Show a tracked series with its change points (E-Divisive means, permutation test).
#[derive(Debug, Args)]
#[command(
    after_help = "Each workload × metric is split into segments of one host and one configuration; points are never compared across a segment boundary, and the output says where one starts and why. Within a segment, change points are found by E-Divisive means with a permutation test (Matteson & James 2014): on a flat series of independent points the chance of any false change point is the significance level, 5 %. See docs/history.md.\n\nExit codes: 0 shown; 1 with --gate, the newest change point of some line (in its newest segment) is a regression beyond PCT; 2 bad input (an unknown series, a missing store)."
)]
pub struct HistoryArgs {
    /// The series to show.
    #[arg(value_name = "NAME")]
    pub series: String,
    #[command(flatten)]
    pub db: DbArg,
    /// Only this metric (e.g. ops_per_sec, p99_us).
    #[arg(long, value_name = "M")]
    pub metric: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: HistoryFormat,
    /// Exit 1 when the newest change point is a regression of more than PCT percent
    /// (which way is worse comes from the metric: ops/s lower, latency higher).
    #[arg(long, value_name = "PCT")]
    pub gate: Option<f64>,
}

/// Runs `resplab history`.
///
/// # Errors
/// An unknown series, a missing or unreadable store, a bad --gate (exit code 2).
pub fn run(args: HistoryArgs) -> anyhow::Result<ExitCode> {
    if let Some(g) = args.gate {
        if !(g >= 0.0 && g.is_finite()) {
            bail!("--gate: expected a percentage of 0 or more, found {g}");
        }
    }
    if !args.db.db.exists() {
        bail!(
            "--db {}: no such store; `resplab track` creates it with the first point",
            args.db.db.display()
        );
    }
    let store = Store::open(&args.db.db)?;
    let cfg = ChangePointConfig::default();
    let analysis = history::history(&store, &args.series, args.metric.as_deref(), &cfg)?;
    let out = match args.format {
        HistoryFormat::Text => render::text(&analysis),
        HistoryFormat::Json => render::json(&analysis),
        HistoryFormat::Csv => render::csv_rows(&analysis),
    };
    print!("{out}");
    let Some(pct) = args.gate else {
        return Ok(ExitCode::SUCCESS);
    };
    let failures = analysis.gate(pct);
    for f in &failures {
        eprintln!(
            "resplab: gate: {} {}: {}",
            f.workload,
            f.metric,
            render::change_words(&f.change)
        );
    }
    Ok(ExitCode::from(u8::from(!failures.is_empty())))
}
