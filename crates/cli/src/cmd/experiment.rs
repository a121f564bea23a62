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
use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use resplab_engine::StopToken;
use resplab_experiment::error_rate::StoredTrial;
use resplab_experiment::plan;
use resplab_experiment::runner::{self, Event, Standing};
use resplab_experiment::{Experiment, Overrides, TrialBudget};
use resplab_report::verdict::{minutes, standing_line};
use resplab_store::Store;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

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
    /// Run rounds until every primary comparison is decided by an anytime-valid
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
    /// (its anytime-valid interval excludes zero) by more than PCT percent.
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

fn open_store(path: &Path) -> anyhow::Result<Store> {
    Store::open(path).with_context(|| format!("opening the result store {}", path.display()))
}

fn run_file(a: RunArgs) -> anyhow::Result<ExitCode> {
    if a.rounds == Some(0) {
        eprintln!("resplab: --rounds: expected at least 1, found 0");
        return Ok(ExitCode::from(2));
    }
    let mut overrides = Overrides {
        rounds: a.rounds,
        ..Overrides::default()
    };
    if let Some(n) = a.requests {
        if n == 0 {
            eprintln!("resplab: --requests: expected at least 1, found 0");
            return Ok(ExitCode::from(2));
        }
        overrides.budget = Some(TrialBudget::Requests(n));
    }
    if let Some(t) = &a.test_time {
        match resplab_experiment::words::parse_duration(t) {
            Ok(d) if !d.is_zero() => overrides.budget = Some(TrialBudget::TestTime(d)),
            Ok(_) => {
                eprintln!("resplab: --test-time: expected a duration above zero, found \"{t}\"");
                return Ok(ExitCode::from(2));
            }
            Err(e) => {
                eprintln!("resplab: --test-time: {e}");
                return Ok(ExitCode::from(2));
            }
        }
    }
    if a.smoke {
        overrides.rounds = Some(a.rounds.unwrap_or(2));
        overrides.budget = overrides.budget.or(Some(TrialBudget::Requests(2_000)));
        overrides.warmup = Some(Duration::ZERO);
    }
    let (mut exp, text) = match resplab_experiment::load(&a.file, &overrides) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("resplab: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if a.smoke {
        exp.name.push_str("-smoke");
        for w in &mut exp.workloads {
            if let Some(p) = &mut w.preload {
                p.keys = p.keys.min(1_000);
            }
        }
    }
    exp.progress_commands = a.metrics_addr.is_some();
    if let Some(code) = super::experiment_until::apply_until(
        &mut exp,
        a.until_decided,
        a.max_rounds,
        a.max_time.as_deref(),
        &a.variants,
    ) {
        return Ok(code);
    }
    if a.dry_run {
        warn_insecure(&exp);
        print_plan(&exp);
        return Ok(ExitCode::SUCCESS);
    }
    let mut store = open_store(&a.db.db)?;
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
        max_error_pct,
        fail_on_regression,
    };
    execute(&exp, &text, &mut store, a.quiet, &a.variants, &watch)
}

fn resume(a: ResumeArgs) -> anyhow::Result<ExitCode> {
    let mut store = open_store(&a.db.db)?;
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
            max_error_pct: None,
            fail_on_regression: None,
        },
    )
}

/// Says, as bench does for `--insecure`, which variants do not verify the server.
fn warn_insecure(exp: &Experiment) {
    for v in &exp.variants {
        if v.connect.tls.as_ref().is_some_and(|t| t.insecure) {
            eprintln!(
                "resplab: WARNING: variant `{}`: insecure = true: the server's TLS certificate is not verified",
                v.name
            );
        }
    }
}

fn print_plan(exp: &Experiment) {
    if let Some(u) = &exp.until_decided {
        super::experiment_until::print_plan(exp, u);
        return;
    }
    out!(
        "experiment {}: {} variant(s) x {} workload(s) x {} rounds, order {}, seed {}",
        exp.name,
        exp.variants.len(),
        exp.workloads.len(),
        exp.rounds,
        exp.order.name(),
        exp.seed
    );
    out!("baseline: {}", exp.baseline().name);
    for e in plan::full_plan(exp) {
        for t in &e.trials {
            out!(
                "  round {:>3}  #{:<3} {:<28} {:<20} ~{:.1}s",
                t.round,
                t.position,
                exp.variants[t.variant].name,
                exp.workloads[t.workload].name,
                plan::estimate_trial(exp, t.workload).as_secs_f64()
            );
        }
    }
    out!(
        "estimated duration: {} (request budgets assume {} ops/s; plus reruns of invalid rounds)",
        minutes(plan::estimate_total(exp).as_secs_f64()),
        plan::ASSUMED_OPS_PER_SEC
    );
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
    let stop = StopToken::new();
    {
        let stop = stop.clone();
        // A second Ctrl-C is handled by the default action only if this fails; that is
        // fine: the trial in progress is the only thing lost either way.
        let _ = crate::signal::set_handler(move || stop.stop());
    }
    report_reaped_servers();
    if !quiet {
        for line in resplab_experiment::calibrate::plan::notes(store, exp) {
            eprintln!("resplab: {line}");
        }
    }
    let started = Instant::now();
    let higher = resplab_store::metrics::higher_is_better(&exp.primary_metric);
    let mut printer = Printer::new(exp, quiet, higher);
    let plan = resplab_metrics::experiment::Plan {
        rounds: exp.rounds,
        higher_is_better: higher,
        margin: exp.margin,
    };
    let mut stored: Vec<StoredTrial> = Vec::new();
    let outcome = runner::run_phase(exp, text, store, &stop, only, &mut |ev| {
        resplab_metrics::experiment::observe(watch.live, &plan, &ev);
        if let Event::Stored {
            slot,
            variant,
            workload,
            trial_id,
            ..
        } = &ev
        {
            stored.push(StoredTrial {
                trial_id: *trial_id,
                variant: variant.to_string(),
                workload: workload.to_string(),
                round: slot.round,
            });
        }
        printer.event(ev)
    });
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            eprintln!();
            eprintln!("resplab: {e}");
            eprintln!(
                "stored trials are kept; fix the problem and run `resplab experiment resume {}`",
                exp.name
            );
            return Ok(ExitCode::from(2));
        }
    };
    let status = store.status(&exp.name)?;
    let early = summarize_outcome(store, exp, &outcome, &status, started)?;
    if early.is_none() {
        config_check(store, exp, status.info.id);
        print_verdict(store, exp, status.info.id, higher)?;
    }
    // Failed requests also make trials invalid (and so rounds uncompared): the gate's
    // exit code 3 names that cause before the rest.
    let gate = match watch.max_error_pct {
        Some(max) if !outcome.interrupted => error_gate(store, &stored, max)?,
        _ => ExitCode::SUCCESS,
    };
    let gate = match watch.fail_on_regression {
        Some(pct) if gate == ExitCode::SUCCESS && early.is_none() => {
            super::experiment_until::regression_gate(store, exp, pct)?
        }
        _ => gate,
    };
    Ok(if gate == ExitCode::SUCCESS {
        early.unwrap_or(ExitCode::SUCCESS)
    } else {
        gate
    })
}

/// What a run watches besides its trials: the live metrics, `--max-error-rate` and
/// `--fail-on-regression`.
struct Watch<'a> {
    live: &'a resplab_metrics::Live,
    max_error_pct: Option<f64>,
    fail_on_regression: Option<f64>,
}

/// `--max-error-rate`: exit code 3, naming each trial over the limit, when there is one.
fn error_gate(store: &Store, stored: &[StoredTrial], max_pct: f64) -> anyhow::Result<ExitCode> {
    let over = resplab_experiment::error_rate::over_limit(store, stored, max_pct)?;
    for o in &over {
        eprintln!(
            "resplab: round {} {} / {} (trial {}): {:.3} % of the requests failed ({} of {}), more than --max-error-rate {max_pct} %",
            o.trial.round + 1,
            o.trial.variant,
            o.trial.workload,
            o.trial.trial_id,
            o.error_pct,
            o.errors,
            o.requests
        );
    }
    Ok(if over.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    })
}

/// Stops the servers an interrupted earlier run left behind, and says so.
fn report_reaped_servers() {
    for o in resplab_experiment::launch::reap_orphans() {
        eprintln!(
            "resplab: stopped server pid {} in {}, left running by an interrupted run (pid {}); \
             it would have competed with these trials for CPU",
            o.pid,
            o.dir.display(),
            o.runner_pid
        );
    }
}

/// Prints what the run did on standard error; returns the exit code when the run ends
/// here (interrupted, or no valid round to compare).
fn summarize_outcome(
    store: &Store,
    exp: &Experiment,
    outcome: &runner::Outcome,
    status: &resplab_store::ExperimentStatus,
    started: Instant,
) -> anyhow::Result<Option<ExitCode>> {
    let of = match exp.until_decided {
        Some(u) if u.max_rounds.is_none() => String::new(),
        _ => format!(" of {}", exp.rounds),
    };
    eprintln!(
        "{} trials run in {} ({} invalid); {}{of} rounds valid",
        outcome.trials_run,
        minutes(started.elapsed().as_secs_f64()),
        outcome.invalid,
        status.valid_rounds(),
    );
    if outcome.interrupted {
        eprintln!(
            "interrupted: run `resplab experiment resume {} --db {}` to continue",
            exp.name,
            store.path().display()
        );
        return Ok(Some(ExitCode::from(2)));
    }
    if !outcome.given_up.is_empty() {
        eprintln!(
            "rounds {:?} stayed invalid after every rerun; they are stored but not compared",
            outcome.given_up.iter().map(|r| r + 1).collect::<Vec<_>>()
        );
    }
    if status.valid_rounds() == 0 && store.missing_cells(status)?.is_empty() {
        eprintln!(
            "resplab: no round of `{}` was valid, so there is nothing to compare: see the \
             INVALID reasons above (`resplab experiment status {}` lists every check)",
            exp.name, exp.name
        );
        return Ok(Some(ExitCode::from(2)));
    }
    Ok(None)
}

/// Prints the final verdict per workload and variant on standard output, with the
/// phase notes, what is still to run and where the results are stored.
fn print_verdict(
    store: &Store,
    exp: &Experiment,
    experiment_id: i64,
    higher: bool,
) -> anyhow::Result<()> {
    // A metric read from a command's output carries its direction in the store.
    let higher = store
        .observations(&exp.name)?
        .iter()
        .find(|o| o.metric == exp.primary_metric)
        .and_then(|o| o.direction.as_deref())
        .map_or(higher, |d| d == "higher_is_better");
    if exp.until_decided.is_some() {
        super::experiment_until::print_verdict(store, exp, experiment_id, higher)?;
    } else {
        print_fixed_verdict(store, exp, experiment_id, higher)?;
    }
    super::experiment_until::print_certificate(store, exp)?;
    for n in store.phase_notes(&exp.name)? {
        out!("  note: {n}");
    }
    let missing = store.missing_cells(&store.status(&exp.name)?)?;
    if !missing.is_empty() && exp.until_decided.is_none() {
        out!(
            "still to run: {} (round, variant) cells; `resplab experiment status {}` lists them",
            missing.len(),
            exp.name
        );
    }
    out!(
        "stored as `{}` in {}; details: resplab compare db:{} --db {}",
        exp.name,
        store.path().display(),
        exp.name,
        store.path().display()
    );
    Ok(())
}

/// The verdict of every (workload, variant) of a fixed number of rounds.
fn print_fixed_verdict(
    store: &Store,
    exp: &Experiment,
    experiment_id: i64,
    higher: bool,
) -> anyhow::Result<()> {
    out!("verdict ({}, paired by round):", exp.primary_metric);
    let trials = store.trials(experiment_id)?;
    for s in final_standing(store, exp)? {
        let mut line = standing_line(&s.workload, &s.variant, &s.pairs, higher, exp.margin);
        if resplab_store::not_interleaved(&trials, &exp.baseline().name, &s.variant) {
            line.push_str(
                " [NOT INTERLEAVED: run in different phases; drift between them is \
                 confounded with the change]",
            );
        }
        out!("  {line}");
    }
    Ok(())
}

/// The progress display on standard error: one method per runner event. Write failures
/// are ignored, as a closed terminal must not stop the experiment.
struct Printer<'e> {
    exp: &'e Experiment,
    quiet: bool,
    higher: bool,
    last_round_shown: Option<usize>,
    err: std::io::Stderr,
    looks: super::experiment_until::Looks,
}

impl<'e> Printer<'e> {
    fn new(exp: &'e Experiment, quiet: bool, higher: bool) -> Self {
        Printer {
            exp,
            quiet,
            higher,
            last_round_shown: None,
            err: std::io::stderr(),
            looks: Default::default(),
        }
    }

    fn event(&mut self, ev: Event<'_>) {
        match ev {
            Event::Start {
                planned,
                stored,
                estimate,
            } => self.start(planned, stored, estimate),
            Event::Step { variant, what } => {
                let _ = writeln!(self.err, "  [{variant}] {what}");
            }
            Event::Trial {
                slot,
                variant,
                workload,
                ..
            } => self.trial(&slot, variant, workload),
            Event::Progress(p) => self.progress(p),
            Event::Stored {
                valid,
                failed,
                primary,
                ..
            } => self.stored(valid, &failed, primary),
            // A run until decided shows its looks instead of the fixed verdict.
            Event::Standing(_) if self.exp.until_decided.is_some() => {}
            Event::Standing(standing) => self.standing(standing),
            Event::Look {
                assessment,
                elapsed,
                per_round,
            } => self.looks.show(self.exp, assessment, elapsed, per_round),
            Event::Notice(note) => {
                let _ = writeln!(self.err, "note: {note}");
            }
            Event::Rerun { round, attempt } => {
                let _ = writeln!(
                    self.err,
                    "round {} had an invalid trial: running it again (attempt {attempt})",
                    round + 1
                );
            }
        }
    }

    fn start(&mut self, planned: usize, stored: usize, estimate: Duration) {
        if let Some(u) = &self.exp.until_decided {
            let _ = writeln!(
                self.err,
                "experiment {}: {}; {stored} trials already stored",
                self.exp.name,
                resplab_experiment::sequential::rule_text(self.exp, u)
            );
            return;
        }
        let left = estimate.saturating_sub(estimate.mul_f64(stored as f64 / planned.max(1) as f64));
        let _ = writeln!(
            self.err,
            "experiment {}: {planned} trials planned, {stored} already stored, about {} to go",
            self.exp.name,
            minutes(left.as_secs_f64())
        );
    }

    fn trial(&mut self, slot: &plan::TrialSlot, variant: &str, workload: &str) {
        let attempt = if slot.attempt > 0 {
            format!(" (rerun {})", slot.attempt)
        } else {
            String::new()
        };
        let of = match self.exp.until_decided {
            Some(u) if u.max_rounds.is_none() => " (until decided)".to_string(),
            _ => format!("/{}", self.exp.rounds),
        };
        let _ = write!(
            self.err,
            "round {}{of}{attempt} #{}: {variant} / {workload} ... ",
            slot.round + 1,
            slot.position + 1
        );
        let _ = self.err.flush();
    }

    fn progress(&mut self, p: &resplab_engine::Progress) {
        if !self.quiet && !p.warming_up {
            let _ = write!(self.err, "{:.0}s ", p.elapsed_sec);
            let _ = self.err.flush();
        }
    }

    fn stored(&mut self, valid: bool, failed: &[resplab_store::Check], primary: Option<f64>) {
        let value = primary.map_or("-".to_string(), |v| format!("{v:.1}"));
        if valid {
            let _ = writeln!(self.err, "{} {value}", self.exp.primary_metric);
        } else {
            let why: Vec<String> = failed.iter().map(|c| c.detail.clone()).collect();
            let _ = writeln!(
                self.err,
                "{} {value} INVALID ({})",
                self.exp.primary_metric,
                why.join("; ")
            );
        }
    }

    /// The running verdict, printed once per completed round.
    fn standing(&mut self, standing: &[Standing]) {
        let rounds = standing.iter().map(|s| s.pairs.len()).max().unwrap_or(0);
        if rounds > 0 && self.last_round_shown != Some(rounds) {
            self.last_round_shown = Some(rounds);
            for s in standing {
                let _ = writeln!(
                    self.err,
                    "  {}",
                    standing_line(
                        &s.workload,
                        &s.variant,
                        &s.pairs,
                        self.higher,
                        self.exp.margin
                    )
                );
            }
        }
    }
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

fn final_standing(store: &Store, exp: &Experiment) -> anyhow::Result<Vec<Standing>> {
    let obs = store.observations(&exp.name)?;
    Ok(resplab_experiment::runner::standings(exp, &obs))
}

/// One verdict line for a (workload, variant) pair, computed by the statistics crate's
/// paired comparison (METHOD.md §6.2): Hodges-Lehmann estimate of the per-round log
/// ratio with its exact signed-rank interval and p-value, and the minimal detectable
/// effect at 80 % power; faster/slower when the interval excludes 0, equivalent within
/// the margin, otherwise no difference proven.
fn list(db: &DbArg) -> anyhow::Result<ExitCode> {
    let store = open_store(&db.db)?;
    let rows = resplab_experiment::readback::list_rows(&store)?;
    let text = resplab_report::status::list_text(&db.db.display().to_string(), &rows);
    let _ = std::io::stdout().write_all(text.as_bytes());
    Ok(ExitCode::SUCCESS)
}

fn status(a: NameArgs) -> anyhow::Result<ExitCode> {
    let store = open_store(&a.db.db)?;
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
    let store = open_store(&a.db.db)?;
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
