//! `resplab history`: a tracked series per workload × metric with its change points,
//! and the CI gate on the newest one; `--confirm` re-measures new change points as A/B
//! experiments. The analysis and the A/B are `resplab_experiment::history`'s, the words
//! `resplab_report::history`'s.

use crate::args::DbArg;
use anyhow::bail;
use clap::{Args, ValueEnum};
use resplab_engine::StopToken;
use resplab_experiment::history;
use resplab_experiment::history::confirm::{self, Servers};
use resplab_experiment::runner::Event;
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
    after_help = "Each workload × metric is split into segments of one host and one configuration; points are never compared across a segment boundary, and the output says where one starts and why. Within a segment, change points are found by E-Divisive means with a permutation test (Matteson & James 2014): on a flat series of independent points the chance of any false change point is the significance level, 5 %. See docs/history.md.\n\n--confirm re-measures every change point not yet confirmed as an A/B of the commits on either side (servers from --server or --server-for), run until decided within --max-time each, and stores the verdict: a change is confirmed when the A/B decides a difference in its direction. With --confirm, or once confirmations are stored, --gate looks only at confirmed change points.\n\nExit codes: 0 shown; 1 with --gate, the newest (confirmed) change point of some line (in its newest segment) is a regression beyond PCT; 2 bad input (an unknown series, a missing store, --confirm without servers) or a failed A/B."
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
    /// (which way is worse comes from the metric: ops/s lower, latency higher); with
    /// --confirm or stored confirmations, the newest confirmed one.
    #[arg(long, value_name = "PCT")]
    pub gate: Option<f64>,
    /// Re-measure each change point not yet confirmed: an A/B of the commits on either
    /// side, run until decided (stored; a second --confirm does not redo it).
    #[arg(long)]
    pub confirm: bool,
    /// With --confirm: the server of every commit, `{commit}` the revision and `{port}`
    /// a free port (e.g. "./build/{commit}/redis-server --port {port}").
    #[arg(
        long,
        value_name = "CMD",
        requires = "confirm",
        conflicts_with = "server_for"
    )]
    pub server: Option<String>,
    /// With --confirm: the server of one revision, `{port}` a free port (repeatable).
    #[arg(long, value_name = "REV=CMD", requires = "confirm")]
    pub server_for: Vec<String>,
    /// With --confirm: the time limit of each change point's A/B (e.g. 90s, 10m).
    #[arg(long, value_name = "DUR", default_value = "10m", requires = "confirm")]
    pub max_time: String,
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
    let mut store = Store::open(&args.db.db)?;
    let cfg = ChangePointConfig::default();
    let mut analysis = history::history(&store, &args.series, args.metric.as_deref(), &cfg)?;
    if args.confirm {
        confirm_all(&mut store, &analysis, &args)?;
        analysis = history::history(&store, &args.series, args.metric.as_deref(), &cfg)?;
    }
    let out = match args.format {
        HistoryFormat::Text => render::text(&analysis),
        HistoryFormat::Json => render::json(&analysis),
        HistoryFormat::Csv => render::csv_rows(&analysis),
    };
    print!("{out}");
    let Some(pct) = args.gate else {
        return Ok(ExitCode::SUCCESS);
    };
    let confirmed_only = args.confirm || !store.confirmations(&args.series)?.is_empty();
    let failures = if confirmed_only {
        analysis.gate_confirmed(pct)
    } else {
        analysis.gate(pct)
    };
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

/// `--confirm`: plans every new change point's A/B (checking every server first), runs
/// each and says what it decided, on standard error.
fn confirm_all(
    store: &mut Store,
    analysis: &resplab_results::history::HistoryAnalysis,
    args: &HistoryArgs,
) -> anyhow::Result<()> {
    let servers = Servers::from_flags(args.server.as_deref(), &args.server_for)?;
    let max_time = resplab_experiment::words::parse_duration(&args.max_time)
        .map_err(|e| anyhow::anyhow!("--max-time: {e}"))?;
    let plans = confirm::plans(store, analysis, &servers, max_time)?;
    if plans.is_empty() {
        eprintln!(
            "resplab: every change point of {} is confirmed or rejected already",
            args.series
        );
        return Ok(());
    }
    let stop = StopToken::new();
    {
        let stop = stop.clone();
        let _ = crate::signal::set_handler(move || stop.stop());
    }
    for p in &plans {
        let commits = (p.commit_before.as_str(), p.commit_after.as_str());
        let (w, m, name) = (&p.workload, &p.metric, &p.experiment.name);
        let head = render::confirming_line(w, m, p.effect_pct, commits, name, &args.max_time);
        eprintln!("resplab: {head}");
        let c = confirm::run(store, &args.series, p, &stop, &mut |ev| {
            if let Event::Stored {
                slot,
                variant,
                primary,
                valid,
                ..
            } = ev
            {
                let line = render::confirm_trial_line(slot.round, variant, m, primary, valid);
                eprintln!("{line}");
            }
        })?;
        eprintln!("resplab: {} {}: {}", c.workload, c.metric, c.words());
    }
    Ok(())
}
