//! `resplab experiment run|resume|list|status|export`: A/B experiments from a file.
//!
//! `run FILE` reads and validates the experiment file, registers it in the store and
//! runs it; `--dry-run` prints the plan (every trial in order) with an estimated
//! duration instead. `resume NAME` continues a stored experiment from its first missing
//! trial, using the definition stored with it. `list`, `status` and `export` read the
//! store. The progress display shows round, variant and trial, and after each round the
//! running verdict per workload and variant: the paired Hodges-Lehmann estimate of the
//! primary metric's ratio with its 95 % interval, or what could have been detected
//! (MDE) when nothing is proven yet.
//!
//! `--smoke` (or `RESPLAB_SMOKE=1`) shrinks any experiment to 2 rounds of 2,000 requests
//! without warm-up and stores it as `NAME-smoke`, so every example can be run in CI in
//! seconds against a real server.

use crate::args::DbArg;
use anyhow::bail;
use clap::{Args, Subcommand, ValueEnum};
use resplab_engine::StopToken;
use resplab_experiment::error_rate::StoredTrial;
use resplab_experiment::narrate::{self, Narrator, Say};
use resplab_experiment::runner;
use resplab_experiment::{Experiment, Overrides};
use resplab_report::narration;
use resplab_store::Store;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

/// Prints a line on standard output; a closed pipe (`| head`) is not an error, so
/// write failures are ignored.
macro_rules! out {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// Arguments of `resplab experiment`.
#[derive(Debug, Args)]
pub struct ExperimentArgs {
    #[command(subcommand)]
    pub action: Action,
}

/// What to do.
#[derive(Debug, Subcommand)]
pub enum Action {
    /// Run an experiment file: variants × workloads × rounds, randomized interleaved.
    Run(RunArgs),
    /// Continue an interrupted experiment from its first missing trial.
    Resume(ResumeArgs),
    /// List stored experiments.
    List(DbArg),
    /// Show where an experiment stands: rounds, trials, invalid trials and why.
    Status(NameArgs),
    /// Write every trial of an experiment (counted or not) as JSON or CSV.
    Export(ExportArgs),
}

/// `experiment run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The experiment file (TOML; see docs/experiment.md).
    pub file: PathBuf,
    #[command(flatten)]
    pub db: DbArg,
    /// Print the plan (trial order, estimated duration) and exit.
    #[arg(long)]
    pub dry_run: bool,
    /// Tiny budgets for a quick check: 2 rounds of 2,000 requests, stored as NAME-smoke.
    #[arg(long, env = "RESPLAB_SMOKE", value_parser = clap::builder::FalseyValueParser::new())]
    pub smoke: bool,
    /// Override the number of rounds.
    #[arg(long)]
    pub rounds: Option<u32>,
    /// Run rounds until every primary comparison is decided by its sequential
    /// interval, within --max-time and/or --max-rounds (docs/sequential.md).
    #[arg(long, conflicts_with = "rounds")]
    pub until_decided: bool,
    /// Limit of a run until decided: no round begins that would end later (e.g. 30m).
    #[arg(long)]
    pub max_time: Option<String>,
    /// Limit of a run until decided: at most this many rounds.
    #[arg(long, conflicts_with = "rounds")]
    pub max_rounds: Option<u32>,
    /// Override the per-trial budget with a request count per phase.
    #[arg(long, conflicts_with = "test_time")]
    pub requests: Option<u64>,
    /// Override the per-trial budget with a duration per phase (e.g. 2s).
    #[arg(long)]
    pub test_time: Option<String>,
    /// Only print a line per trial (no per-second progress).
    #[arg(long, short)]
    pub quiet: bool,
    /// Run only these variants' trials now (comma-separated): a phase, for variants
    /// that cannot be live together (one kernel per boot). Later calls add the others.
    #[arg(long, value_delimiter = ',')]
    pub variants: Vec<String>,
    /// Serve live metrics (Prometheus text format) at http://HOST:PORT/metrics: the
    /// trial running, its requests, errors and latency per command, the trials stored
    /// and the running verdicts.
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
    /// Exit with code 3 when a trial of this run had more than PCT percent of its
    /// requests fail (every trial is stored and the verdict printed first).
    #[arg(long, value_name = "PCT")]
    pub max_error_rate: Option<String>,
    /// A run until decided: exit 1 when a comparison is decided worse than the baseline
    /// (its sequential interval excludes zero) by more than PCT percent.
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<String>,
}

/// `experiment resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The experiment's name.
    pub name: String,
    #[command(flatten)]
    pub db: DbArg,
    #[arg(long, short)]
    pub quiet: bool,
    /// Resume only these variants' trials (comma-separated): the phase of this boot.
    #[arg(long, value_delimiter = ',')]
    pub variants: Vec<String>,
}

/// `experiment status`.
#[derive(Debug, Args)]
pub struct NameArgs {
    pub name: String,
    #[command(flatten)]
    pub db: DbArg,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Export formats.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Json,
    Csv,
}

/// `experiment export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    pub name: String,
    #[command(flatten)]
    pub db: DbArg,
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
    /// Write to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// Runs `resplab experiment`.
///
/// # Errors
/// Store, file and runner failures (exit code 2 via the caller); bad files print their
/// placed message and return exit code 2 directly.
pub fn run(args: ExperimentArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        Action::Run(a) => run_file(a),
        Action::Resume(a) => resume(a),
        Action::List(a) => list(&a),
        Action::Status(a) => status(a),
        Action::Export(a) => export(a),
    }
}

fn run_file(a: RunArgs) -> anyhow::Result<ExitCode> {
    let overrides =
        match Overrides::from_flags(a.rounds, a.requests, a.test_time.as_deref(), a.smoke) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("resplab: {e}");
                return Ok(ExitCode::from(2));
            }
        };
    let (mut exp, text) = match resplab_experiment::load(&a.file, &overrides) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("resplab: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if a.smoke {
        resplab_experiment::resolve::into_smoke(&mut exp);
    }
    exp.progress_commands = a.metrics_addr.is_some();
    let until = resplab_experiment::sequential::apply_flags(
        &mut exp,
        a.until_decided,
        a.max_rounds,
        a.max_time.as_deref(),
        &a.variants,
    );
    if let Err((flag, message)) = until {
        eprintln!("resplab: {flag}: {message}");
        return Ok(ExitCode::from(2));
    }
    if a.dry_run {
        warn_insecure(&exp);
        let _ = std::io::stdout().write_all(narrate::plan_text(&exp).as_bytes());
        return Ok(ExitCode::SUCCESS);
    }
    let mut store = a.db.open()?;
    let max_error_pct = a
        .max_error_rate
        .as_deref()
        .map(|v| resplab_engine::words::number("--max-error-rate", v, 0.0, 100.0))
        .transpose()?;
    let live = resplab_metrics::Live::new();
    let _endpoint = match &a.metrics_addr {
        Some(addr) => Some(crate::output::metrics::announced(live.serve(addr))?),
        None => None,
    };
    let fail_on_regression = a
        .fail_on_regression
        .as_deref()
        .map(|v| resplab_engine::words::number("--fail-on-regression", v, 0.0, 1e6))
        .transpose()?;
    if fail_on_regression.is_some() && exp.until_decided.is_none() {
        eprintln!(
            "resplab: --fail-on-regression: expected a run until decided (--until-decided); \
             for a fixed number of rounds use `resplab compare db:{} --fail-on-regression PCT`",
            exp.name
        );
        return Ok(ExitCode::from(2));
    }
    let watch = Watch {
        live: &live,
        gates: narrate::Gates {
            max_error_pct,
            fail_on_regression,
        },
    };
    execute(&exp, &text, &mut store, a.quiet, &a.variants, &watch)
}

fn resume(a: ResumeArgs) -> anyhow::Result<ExitCode> {
    let mut store = a.db.open()?;
    let info = match store.find_experiment(&a.name)? {
        Some(i) => i,
        None => {
            eprintln!(
                "resplab: no experiment named `{}` in {}; `resplab experiment list --db {}` shows the stored ones",
                a.name,
                a.db.db.display(),
                a.db.db.display()
            );
            return Ok(ExitCode::from(2));
        }
    };
    let (text, json) = store.experiment_spec(info.id)?;
    let exp = Experiment::from_json(&json).map_err(anyhow::Error::msg)?;
    execute(
        &exp,
        &text,
        &mut store,
        a.quiet,
        &a.variants,
        &Watch {
            live: &resplab_metrics::Live::new(),
            gates: narrate::Gates::default(),
        },
    )
}

/// Says, as bench does for `--insecure`, which variants do not verify the server.
fn warn_insecure(exp: &Experiment) {
    for v in &exp.variants {
        if v.connect.tls.as_ref().is_some_and(|t| t.insecure) {
            eprintln!("resplab: {}", narration::insecure_line(&v.name));
        }
    }
}

fn execute(
    exp: &Experiment,
    text: &str,
    store: &mut Store,
    quiet: bool,
    only: &[String],
    watch: &Watch<'_>,
) -> anyhow::Result<ExitCode> {
    warn_insecure(exp);
    let mut exp = exp.clone();
    // The perf program that counts a started server's hardware events.
    exp.perf = std::env::var("RESPLAB_PERF").ok();
    let exp = &exp;
    let stop = prepare(store, exp, quiet);
    let started = Instant::now();
    let higher = resplab_store::metrics::higher_is_better(&exp.primary_metric);
    let mut narrator = Narrator::new(exp, quiet, higher);
    let plan = resplab_metrics::experiment::Plan {
        rounds: exp.rounds,
        higher_is_better: higher,
        margin: exp.margin,
    };
    let mut stored: Vec<StoredTrial> = Vec::new();
    let mut err = std::io::stderr();
    let outcome = runner::run_phase(exp, text, store, &stop, only, &mut |ev| {
        resplab_metrics::experiment::observe(watch.live, &plan, &ev);
        stored.extend(StoredTrial::of(&ev));
        // Write failures are ignored: a closed terminal must not stop the experiment.
        let _ = match narrator.event(&ev) {
            Some(Say::Lines(t)) => err.write_all(t.as_bytes()),
            Some(Say::Part(t)) => err.write_all(t.as_bytes()).and_then(|()| err.flush()),
            None => Ok(()),
        };
    });
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            eprintln!("\nresplab: {e}\n{}", narration::failed_line(&exp.name));
            return Ok(ExitCode::from(2));
        }
    };
    let status = store.status(&exp.name)?;
    let summary = narrate::summary(store, exp, &outcome, &status, started.elapsed())?;
    for line in &summary.lines {
        eprintln!("{line}");
    }
    if !summary.no_verdict {
        config_check(store, exp, status.info.id);
        for line in narrate::verdict_lines(store, exp, status.info.id)? {
            let _ = writeln!(std::io::stdout(), "{line}");
        }
    }
    let (lines, code) = narrate::gates(
        store,
        exp,
        watch.gates,
        &stored,
        outcome.interrupted,
        summary.no_verdict,
    )?;
    for line in lines {
        eprintln!("resplab: {line}");
    }
    Ok(ExitCode::from(code))
}

/// What a run watches besides its trials: the live metrics, `--max-error-rate` and
/// `--fail-on-regression`.
struct Watch<'a> {
    live: &'a resplab_metrics::Live,
    gates: narrate::Gates,
}

/// Before the first trial: Ctrl-C stops the run (the trial in progress is lost, nothing
/// else), servers an interrupted run left are stopped, and the calibration notes said.
fn prepare(store: &Store, exp: &Experiment, quiet: bool) -> StopToken {
    let stop = StopToken::new();
    {
        let stop = stop.clone();
        // A second Ctrl-C is handled by the default action only if this fails; that is
        // fine: the trial in progress is the only thing lost either way.
        let _ = crate::signal::set_handler(move || stop.stop());
    }
    for o in resplab_experiment::launch::reap_orphans() {
        eprintln!(
            "resplab: {}",
            narration::reaped_line(o.pid, &o.dir, o.runner_pid)
        );
    }
    if !quiet {
        for line in resplab_experiment::calibrate::plan::notes(store, exp) {
            eprintln!("resplab: {line}");
        }
    }
    stop
}

/// Says whether the variants' servers ran the same configuration apart from what they
/// declare (METHOD: "A and B configs must match apart from the declared difference"),
/// from the `CONFIG GET *` stored with each variant's first trial.
fn config_check(store: &Store, exp: &Experiment, experiment_id: i64) {
    if let Some(c) = resplab_experiment::configcheck::gather(store, exp, experiment_id) {
        let see = format!("resplab report {}", exp.name);
        for line in resplab_report::configcheck::terminal_lines(&c, &see) {
            eprintln!("{line}");
        }
    }
}

fn list(db: &DbArg) -> anyhow::Result<ExitCode> {
    let store = db.open()?;
    let rows = resplab_experiment::readback::list_rows(&store)?;
    let text = resplab_report::status::list_text(&db.db.display().to_string(), &rows);
    let _ = std::io::stdout().write_all(text.as_bytes());
    Ok(ExitCode::SUCCESS)
}

fn status(a: NameArgs) -> anyhow::Result<ExitCode> {
    let store = a.db.open()?;
    let not_found = |e| match e {
        e @ resplab_store::StoreError::NotFound { .. } => {
            eprintln!("resplab: {e}");
            Ok(ExitCode::from(2))
        }
        e => Err(anyhow::Error::from(e)),
    };
    if a.json {
        match store.status(&a.name) {
            Ok(st) => out!("{}", serde_json::to_string_pretty(&st)?),
            Err(e) => return not_found(e),
        }
        return Ok(ExitCode::SUCCESS);
    }
    match resplab_experiment::readback::status_view(&store, &a.name) {
        Ok(view) => {
            let text = resplab_report::status::status_text(&view);
            let _ = std::io::stdout().write_all(text.as_bytes());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => not_found(e),
    }
}

fn export(a: ExportArgs) -> anyhow::Result<ExitCode> {
    let store = a.db.open()?;
    if store.find_experiment(&a.name)?.is_none() {
        eprintln!(
            "resplab: no experiment named `{}` in {}",
            a.name,
            a.db.db.display()
        );
        return Ok(ExitCode::from(2));
    }
    let file = match &a.output {
        Some(p) => Some(crate::output::OutFile::prepare("-o", p)?),
        None => None,
    };
    let text = match a.format {
        Format::Json => serde_json::to_string_pretty(&store.export_json(&a.name)?)? + "\n",
        Format::Csv => store.export_csv(&a.name)?,
    };
    match file {
        Some(f) => crate::output::finish(f, text.as_bytes())?,
        None => {
            let mut out = std::io::stdout().lock();
            if let Err(e) = out.write_all(text.as_bytes()) {
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    bail!("writing standard output: {e}");
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
