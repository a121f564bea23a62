//! `resplab bisect`: which commit changed the server's performance. The flags become a
//! `BisectSpec`; the worktrees, builds, experiments and search are
//! `resplab_experiment::bisect`'s; this file prints its events and its outcome (text or
//! JSON) in `resplab_report::bisect`'s words.

use clap::{Args, ValueEnum};
use resplab_engine::StopToken;
use resplab_experiment::bisect::build::Built;
use resplab_experiment::bisect::{self, BisectError, BisectEvent, Conclusion};
use resplab_report::bisect as text;
use std::io::Write;
use std::process::ExitCode;

/// Find the commit between a good and a bad one that changed the server's performance.
#[derive(Debug, Args)]
#[command(
    group = clap::ArgGroup::new("measure").required(true).args(["workload", "experiment"]),
    after_help = "Each commit is checked out in its own worktree under the cache and built once; its server is the --server template with {src} set to that worktree. Good against bad is measured first, run until decided; then each candidate against good, until decided or --max-rounds. Rerunning the same command continues an interrupted bisect and reuses every measured pair (docs/bisect.md).\n\nExit codes: 0 the change was found (one commit, a range, or several steps); 1 good and bad are not decided different, so there is nothing to look for; 2 bad input or a failed run (what was measured stays stored)."
)]
pub struct BisectArgs {
    #[command(flatten)]
    pub given: bisect::flags::Given,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Print only the outcome (no line per trial).
    #[arg(long, short)]
    pub quiet: bool,
}

/// Output formats.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Runs `resplab bisect`.
///
/// # Errors
/// A store that does not open (exit code 2); everything else is a one-line message and
/// an exit code here.
pub fn run(a: BisectArgs) -> anyhow::Result<ExitCode> {
    let spec = match bisect::flags::spec(a.given.clone()) {
        Ok(s) => s,
        Err(e) => return Ok(fail(&e)),
    };
    let mut store = crate::args::open_store(&a.given.db)?;
    let stop = StopToken::new();
    {
        let stop = stop.clone();
        let _ = crate::signal::set_handler(move || stop.stop());
    }
    let quiet = a.quiet;
    let outcome = bisect::run(&spec, &mut store, &stop, &mut |ev| show(ev, quiet));
    match outcome {
        Ok(o) => {
            let shown = match a.format {
                Format::Json => serde_json::to_string_pretty(&o)? + "\n",
                Format::Text => text::outcome_text(&o),
            };
            let _ = std::io::stdout().write_all(shown.as_bytes());
            Ok(ExitCode::from(u8::from(
                o.conclusion == Conclusion::NoEffect,
            )))
        }
        Err(BisectError::Interrupted) => {
            eprintln!("resplab: interrupted; what was measured is stored: run the same command again to continue");
            Ok(ExitCode::from(2))
        }
        Err(e) => Ok(fail(&e)),
    }
}

fn fail(e: &BisectError) -> ExitCode {
    eprintln!("resplab: {e}");
    ExitCode::from(2)
}

/// Progress on standard error: builds, pairs, trials, tested commits.
fn show(ev: BisectEvent<'_>, quiet: bool) {
    let line = match ev {
        BisectEvent::Range { commits } => text::range_line(commits),
        BisectEvent::Built {
            built: Built::Ok { cached: true, .. },
            ..
        } => return,
        BisectEvent::Built {
            commit,
            built: Built::Ok { .. },
        } => text::built_line(commit),
        BisectEvent::Built {
            commit,
            built: Built::Failed { log, .. },
        } => text::build_failed_line(commit, log),
        BisectEvent::Measure {
            sides,
            experiment,
            stored,
        } => text::measure_line(sides, experiment, stored),
        BisectEvent::Run(resplab_experiment::runner::Event::Stored {
            slot,
            variant,
            primary,
            valid,
            ..
        }) if !quiet => text::round_line(slot.round, variant, primary, valid),
        BisectEvent::Run(_) => return,
        BisectEvent::Tested(t) => text::tested_line(t),
    };
    let _ = writeln!(std::io::stderr(), "{line}");
}
