//! `resplab calibrate`: this machine's noise, and the budget a verdict needs on it.
//!
//! Hands the flags to `resplab_experiment::calibrate` (`flags` reads them; then the A/A
//! experiments, the noise analysis, the plans, `--validate`), and prints what it found through
//! `resplab_report::calibration`. Progress lines go to stderr unless `--quiet` or
//! `--format json`.

use crate::args::DbArg;
use anyhow::{bail, Context as _};
use clap::{Args, ValueEnum};
use resplab_engine::StopToken;
use resplab_experiment::calibrate::setup;
use resplab_experiment::calibrate::validate::{self, ValidateOptions};
use resplab_experiment::calibrate::{self as calibration, flags, Calibrated, Step};
use resplab_experiment::runner::Event;
use resplab_report::calibration as words;
use resplab_results::calibration::Method;
use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// How the experiments of `--validate` run and are judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    /// Fixed randomized interleaved rounds, the paired verdict at the end.
    Rmit,
    /// Runs until decided (the sequential interval), at most --validate-rounds.
    UntilDecided,
    /// Duet rounds: both servers at once on two CPU sets, swapped between rounds.
    Duet,
}

/// Flags of `resplab calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub given: flags::Given,
    #[command(flatten)]
    pub db: DbArg,
    /// Check the tool's own error rates against known truth, with `resplab serve` as the
    /// server: false positives of K A/A experiments, power at the predicted MDE (a known
    /// `--slowdown`) and coordinated omission with injected stalls.
    #[arg(long)]
    pub validate: bool,
    /// Experiments per error-rate check of --validate.
    #[arg(long = "validate-k", value_name = "K", default_value_t = 40)]
    pub validate_k: usize,
    /// Rounds of each --validate experiment (the most rounds with until-decided).
    #[arg(long = "validate-rounds", value_name = "N", default_value_t = 10)]
    pub validate_rounds: u32,
    /// The method measured: `rmit` (default), `until-decided` or `duet`. Without
    /// --validate, `duet` measures the noise of duet rounds (and predicts duet's MDE),
    /// the others that of interleaved rounds; with --validate and --metric
    /// (ops_per_sec or server_cpu_us_per_op, alias throughput or server-cpu) the error
    /// rates are stored per method and metric.
    #[arg(long, value_enum, value_name = "METHOD")]
    pub method: Option<MethodArg>,
    /// `text` (default) or `json`.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// No progress lines.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Runs `resplab calibrate`.
///
/// # Errors
/// Bad flags (exit 2 with the flag named), a server that cannot be started, a store that
/// cannot be written.
pub fn run(a: CalibrateArgs) -> anyhow::Result<ExitCode> {
    let mut given = a.given.clone();
    given.duet = a.method == Some(MethodArg::Duet);
    let (budget, durations) = flags::budget(&given)?;
    if a.validate {
        return run_validate(&a, budget, durations);
    }
    if given.insecure {
        eprintln!("resplab: WARNING: --insecure: the server's TLS certificate is not verified");
    }
    let is_set = |v: &str| std::env::var_os(v).is_some();
    let s = setup::prepare(&flags::options(&given, durations, budget, &is_set)?)?;
    let mut store = a.db.open()?;
    let stop = stop_on_ctrl_c();
    let quiet = a.quiet || a.format == Format::Json;
    if !quiet {
        let workload = &s.base.workloads[s.workload].name;
        eprintln!(
            "{}",
            words::announce_line(&s.target, workload, &s.steps, &given.budget)
        );
    }
    let mut on_event = |(trial, rounds): &Step, ev: Event<'_>| {
        if let (
            false,
            Event::Stored {
                slot,
                variant,
                valid,
                primary,
                ..
            },
        ) = (quiet, ev)
        {
            let t = trial.as_secs_f64();
            eprintln!(
                "{}",
                words::trial_line(t, slot.round, *rounds, variant, primary, valid)
            );
        }
    };
    let (cal, id) = match calibration::run(&s, &mut store, &stop, &mut on_event)? {
        Calibrated::Done(cal, id) => (cal, id),
        Calibrated::Interrupted { experiment } => {
            eprintln!(
                "resplab: interrupted; the trials so far are stored as experiment {experiment} \
                 (nothing was calibrated)"
            );
            return Ok(ExitCode::from(2));
        }
    };
    let text = match a.format {
        Format::Json => json_with_id(&cal, id)?,
        Format::Text => words::render(&cal, id, &a.db.db),
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Ok(ExitCode::SUCCESS)
}

/// `calibrate --validate`.
fn run_validate(
    a: &CalibrateArgs,
    budget: Duration,
    durations: Vec<Duration>,
) -> anyhow::Result<ExitCode> {
    let g = &a.given;
    if g.server.is_some() || g.address.is_some() || g.experiment.is_some() {
        bail!("--validate checks against known truth with resplab serve as the server: it takes no --server, --address or --experiment");
    }
    let quiet = a.quiet || a.format == Format::Json;
    let metric = validate::metric_named(g.metric.as_deref().unwrap_or("ops_per_sec"))?;
    let method = match a.method {
        None | Some(MethodArg::Rmit) => Method::Rmit,
        Some(MethodArg::UntilDecided) => Method::UntilDecided,
        Some(MethodArg::Duet) => Method::Duet,
    };
    let plan = validate::plan(ValidateOptions {
        exe: std::env::current_exe().context("finding the resplab executable")?,
        durations,
        budget,
        k: a.validate_k,
        rounds: a.validate_rounds,
        seed: g.seed,
        method,
        metric,
    })?;
    if plan.k < a.validate_k && !quiet {
        eprintln!(
            "resplab calibrate: the budget holds {} experiments per check, not {}",
            plan.k, a.validate_k
        );
    }
    let mut store = a.db.open()?;
    let stop = stop_on_ctrl_c();
    let mut say = |m: String| {
        if !quiet {
            eprintln!("resplab calibrate: {m}");
        }
    };
    let Some((v, id)) = validate::run(&plan, &mut store, &stop, &mut say)? else {
        eprintln!(
            "resplab: interrupted; the experiments so far are stored (nothing was validated)"
        );
        return Ok(ExitCode::from(2));
    };
    let out = match a.format {
        Format::Json => json_with_id(&v, id)?,
        Format::Text => {
            words::render_validation(&v)
                + &format!(
                    "stored as calibration {id} in {} (resplab report calibration:{id})\n",
                    a.db.db.display()
                )
        }
    };
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(if v.is_pass() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A stop token that Ctrl-C sets: the trial in progress ends, what is finished is kept.
fn stop_on_ctrl_c() -> StopToken {
    let stop = StopToken::new();
    let on_signal = stop.clone();
    let _ = crate::signal::set_handler(move || on_signal.stop());
    stop
}

/// The stored result as JSON, with its id.
fn json_with_id(value: &impl serde::Serialize, id: i64) -> anyhow::Result<String> {
    let mut v = serde_json::to_value(value)?;
    if let Some(o) = v.as_object_mut() {
        o.insert("id".into(), id.into());
    }
    Ok(serde_json::to_string_pretty(&v)? + "\n")
}
