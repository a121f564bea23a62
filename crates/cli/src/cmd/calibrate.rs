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
use resplab_experiment::calibrate::setup::{self, WorkloadFlags};
use resplab_experiment::calibrate::validate::{self, ValidateOptions};
use resplab_experiment::calibrate::{self as calibration, flags, Calibrated, Step};
use resplab_experiment::runner::Event;
use resplab_report::calibration as words;
use resplab_results::calibration::Method;
use std::io::Write as _;
use std::path::PathBuf;
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
    /// Server command started fresh for every trial ({port} and {dir} are filled in).
    /// Default: a throwaway redis-server with persistence off, or the baseline variant's
    /// server of --experiment.
    #[arg(
        long,
        value_name = "CMD",
        conflicts_with = "address",
        help_heading = "Target"
    )]
    pub server: Option<String>,
    /// A server that is already running, HOST:PORT (only checked with PING; it is not
    /// restarted between trials).
    #[arg(long, value_name = "HOST:PORT", help_heading = "Target")]
    pub address: Option<String>,
    /// --address: connect with TLS.
    #[arg(long, requires = "address", help_heading = "Target")]
    pub tls: bool,
    /// --address: the CA certificate that signed the server's (implies --tls).
    #[arg(
        long,
        value_name = "FILE",
        requires = "address",
        help_heading = "Target"
    )]
    pub cacert: Option<String>,
    /// --address: do not verify the server's certificate (implies --tls; said in the
    /// results).
    #[arg(long, requires = "address", help_heading = "Target")]
    pub insecure: bool,
    /// --address: ACL user for AUTH.
    #[arg(
        long,
        value_name = "NAME",
        requires = "address",
        help_heading = "Target"
    )]
    pub user: Option<String>,
    /// --address: the environment variable that holds the password (default:
    /// REDISCLI_AUTH when it is set). Only the variable's name is stored.
    #[arg(
        long = "password-env",
        value_name = "VAR",
        requires = "address",
        help_heading = "Target"
    )]
    pub password_env: Option<String>,

    /// Take the workload from this experiment file (see --workload).
    #[arg(
        long,
        value_name = "FILE",
        requires = "workload",
        help_heading = "Workload"
    )]
    pub experiment: Option<PathBuf>,
    /// The workload of --experiment to calibrate, by name.
    #[arg(
        long,
        value_name = "NAME",
        requires = "experiment",
        help_heading = "Workload"
    )]
    pub workload: Option<String>,
    /// redis-benchmark tests, as `bench -t` (default: set).
    #[arg(short = 't', long, value_name = "TESTS", help_heading = "Workload")]
    pub tests: Option<String>,
    /// A command template, as `bench --command` (repeat for a mix).
    #[arg(long = "command", value_name = "CMD", help_heading = "Workload")]
    pub commands: Vec<String>,
    /// Connections (default 50).
    #[arg(short = 'c', long, value_name = "N", help_heading = "Workload")]
    pub clients: Option<u32>,
    /// Requests in flight per connection (default 1).
    #[arg(short = 'P', long, value_name = "N", help_heading = "Workload")]
    pub pipeline: Option<u32>,
    /// Value size in bytes.
    #[arg(
        short = 'd',
        long = "data-size",
        value_name = "BYTES",
        help_heading = "Workload"
    )]
    pub data_size: Option<u64>,
    /// Random keys from a keyspace of this size.
    #[arg(short = 'r', long, value_name = "N", help_heading = "Workload")]
    pub keyspace: Option<u64>,
    /// Load-generator threads (default 2 where the machine has 2 CPUs or more, so that
    /// the generator stays under its CPU limit; 1 otherwise).
    #[arg(long, value_name = "N", help_heading = "Workload")]
    pub threads: Option<u32>,
    /// SET:GET ratio of a memtier-style mix.
    #[arg(long, value_name = "SET:GET", help_heading = "Workload")]
    pub ratio: Option<String>,
    /// Key pattern of a memtier-style mix (S:R, G:G, ...).
    #[arg(
        long = "key-pattern",
        value_name = "PATTERN",
        help_heading = "Workload"
    )]
    pub key_pattern: Option<String>,
    /// Open-loop rate in requests per second (closed loop without it).
    #[arg(long, value_name = "PER_SEC", help_heading = "Workload")]
    pub rate: Option<f64>,

    /// Wall time for the whole calibration (e.g. 5m, 90s).
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub budget: String,
    /// The trial lengths to measure, comma-separated.
    #[arg(long, value_name = "LIST", default_value = "0.5s,1s,2s")]
    pub durations: String,
    /// The smallest effect, in percent, the budget table should find a plan for.
    #[arg(long = "target-mde", value_name = "PCT", default_value_t = 1.0)]
    pub target_mde: f64,
    /// The metric (default: ops_per_sec, or the primary metric of --experiment).
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Load before each trial that is not recorded (default 200ms, or the file's).
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,
    /// Seed of the trial order and the request streams.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
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
    let given = given(&a);
    let (budget, durations) = flags::budget(&given)?;
    if a.validate {
        return run_validate(&a, budget, durations);
    }
    if a.insecure {
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
            words::announce_line(&s.target, workload, &s.steps, &a.budget)
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
    if a.server.is_some() || a.address.is_some() || a.experiment.is_some() {
        bail!("--validate checks against known truth with resplab serve as the server: it takes no --server, --address or --experiment");
    }
    let quiet = a.quiet || a.format == Format::Json;
    let metric = validate::metric_named(a.metric.as_deref().unwrap_or("ops_per_sec"))?;
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
        seed: a.seed,
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

/// The flags as given, for `resplab_experiment::calibrate::flags` to read.
fn given(a: &CalibrateArgs) -> flags::Given {
    flags::Given {
        budget: a.budget.clone(),
        durations: a.durations.clone(),
        target_mde_pct: a.target_mde,
        warmup: a.warmup.clone(),
        experiment: a.experiment.clone(),
        workload: a.workload.clone(),
        flags: WorkloadFlags {
            tests: a.tests.clone(),
            commands: a.commands.clone(),
            clients: a.clients,
            pipeline: a.pipeline,
            data_size: a.data_size,
            keyspace: a.keyspace,
            threads: a.threads,
            ratio: a.ratio.clone(),
            key_pattern: a.key_pattern.clone(),
            rate: a.rate,
        },
        server: a.server.clone(),
        address: a.address.clone(),
        tls: a.tls,
        cacert: a.cacert.clone(),
        insecure: a.insecure,
        user: a.user.clone(),
        password_env: a.password_env.clone(),
        metric: a.metric.clone(),
        seed: a.seed,
        duet: a.method == Some(MethodArg::Duet),
    }
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
