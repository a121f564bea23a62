//! `resplab calibrate`: this machine's noise, and the budget a verdict needs on it.
//!
//! An A/A experiment — the same server twice, as two variants, in randomized interleaved
//! rounds, through the experiment runner and into the store — is run at two or three
//! trial lengths within a wall-time budget. From it: the noise (per-trial CV of each arm,
//! the standard deviation of the per-round log ratio, lag-1 autocorrelations that show
//! drift, outlier rounds), how that noise shrinks with the trial length, the **budget
//! table** (predicted MDE at 80 % power for rounds × trial length, with the wall time)
//! and the cheapest plan that reaches `--target-mde`; and the A/A verdict itself, which
//! should find no difference: when it does, the set-up is biased, and that is the
//! finding. The calibration is stored, and `resplab experiment run` uses the newest one
//! matching its workload on this host to print what its plan can detect.
//!
//! The statistics are `resplab_stats::budget` (noise law, table) and the default paired
//! comparison (`resplab_stats::verdict`), the same one every verdict uses.

use super::experiment::DbArg;
use anyhow::{bail, Context as _};
use clap::{Args, ValueEnum};
use resplab_engine::StopToken;
use resplab_experiment::runner::{self, Event};
use resplab_experiment::{Experiment, Order, Overrides, ServerSource, TrialBudget};
use resplab_stats::budget::{self, NoiseModel, Plan};
use resplab_stats::power::PowerSpec;
use resplab_stats::verdict::{paired_from_log_ratios, CompareConfig, Direction, Verdict};
use resplab_store::{NewCalibration, Store, ALL_COMMANDS};
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Fewest rounds an A/A experiment of one trial length is worth running (the paired
/// interval needs 6).
const MIN_ROUNDS: u32 = 6;
/// Most rounds of one trial length.
const MAX_ROUNDS: u32 = 200;
/// Assumed cost of a trial besides its measured time before anything was measured:
/// server start and readiness (the measured figure replaces it in the results).
const GUESS_OVERHEAD_SEC: f64 = 0.15;
/// The two variants of the A/A experiment.
const VARIANTS: [&str; 2] = ["a", "a-again"];
/// The `workload_key` under which `--validate` results are stored in the calibrations
/// table: no workload's fingerprint, so no experiment takes one for its noise.
pub const VALIDATION_KEY: &str = "validate:resplab-serve";

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
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
    /// Load-generator threads.
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
    /// Rounds of each --validate experiment.
    #[arg(long = "validate-rounds", value_name = "N", default_value_t = 10)]
    pub validate_rounds: u32,
    /// `text` (default) or `json`.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// No progress lines.
    #[arg(short, long)]
    pub quiet: bool,
}

/// The noise at one trial length.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Noise {
    pub trial_sec: f64,
    pub experiment: String,
    pub rounds: u32,
    /// Rounds in which both arms have a counted trial.
    pub pairs: usize,
    /// Median of the metric over every counted trial.
    pub median: f64,
    /// Per-trial coefficient of variation of each arm, percent.
    pub cv_a_pct: Option<f64>,
    pub cv_b_pct: Option<f64>,
    /// Standard deviation of the per-round log ratio.
    pub sd_log_ratio: Option<f64>,
    /// Lag-1 autocorrelation of the per-round log ratios (rounds in order) and of each
    /// arm's values in run order.
    pub lag1_ratio: Option<f64>,
    pub lag1_a: Option<f64>,
    pub lag1_b: Option<f64>,
    /// Rounds whose log ratio is more than 3.5 robust sd from the median.
    pub outlier_rounds: Vec<u32>,
    /// Wall time of the experiment and the cost of a trial beyond its measured time.
    pub wall_sec: f64,
    pub overhead_sec: f64,
    /// The A/A comparison (a-again vs a).
    pub aa_effect_pct: Option<f64>,
    pub aa_ci_low_pct: Option<f64>,
    pub aa_ci_high_pct: Option<f64>,
    pub aa_p_value: Option<f64>,
    pub aa_mde_pct: Option<f64>,
    pub aa_verdict: String,
}

/// One plan of the budget table.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct PlanRow {
    pub rounds: usize,
    pub trial_sec: f64,
    pub mde_pct: f64,
    pub wall_sec: f64,
}

impl From<Plan> for PlanRow {
    fn from(p: Plan) -> Self {
        PlanRow {
            rounds: p.rounds,
            trial_sec: p.trial_sec,
            mde_pct: p.mde_pct,
            wall_sec: p.wall_sec,
        }
    }
}

/// What a calibration found; stored as the `calibrations` row's JSON.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Calibration {
    pub hostname: String,
    pub target: String,
    pub workload: String,
    pub workload_key: String,
    pub metric: String,
    pub warmup_sec: f64,
    pub noise: Vec<Noise>,
    /// s_d(T) = a·T^(−b).
    pub noise_a: f64,
    pub noise_b: f64,
    /// Median cost of a trial beyond its measured time, seconds.
    pub overhead_sec: f64,
    pub table: Vec<PlanRow>,
    pub target_mde_pct: f64,
    pub cheapest: Option<PlanRow>,
    /// When an A/A comparison claimed a difference: what it means.
    pub biased: Option<String>,
}

impl Calibration {
    /// The predicted MDE (percent) and wall time (seconds) of `rounds` rounds of
    /// `variants` variants with trials of `trial_sec`.
    pub fn predict(&self, rounds: u32, trial_sec: f64, variants: usize) -> Option<(f64, f64)> {
        let model = NoiseModel {
            a: self.noise_a,
            b: self.noise_b,
        };
        let mde = budget::mde_pct(
            rounds as usize,
            model.sd_at(trial_sec),
            &PowerSpec::default(),
        )?;
        let wall = f64::from(rounds) * variants as f64 * (trial_sec + self.overhead_sec);
        Some((mde, wall))
    }
}

/// What the newest matching calibration of this host says about an experiment's plan:
/// one line per workload with its predicted MDE, and a warning where the plan cannot
/// reach the experiment's margin. Nothing when no calibration matches.
pub fn plan_notes(store: &Store, exp: &Experiment) -> Vec<String> {
    let host = resplab_engine::host::detect().hostname;
    let now = resplab_store::write::now_unix_ms() as i64;
    let mut out = Vec::new();
    for (i, w) in exp.workloads.iter().enumerate() {
        let Ok(Some(row)) = store.latest_calibration(&host, &workload_key(w), &exp.primary_metric)
        else {
            continue;
        };
        let Ok(cal) = serde_json::from_value::<Calibration>(row.result.clone()) else {
            continue;
        };
        let trial_sec = match w.budget {
            TrialBudget::TestTime(d) => d.as_secs_f64(),
            TrialBudget::Requests(_) => {
                resplab_experiment::plan::estimate_trial(exp, i).as_secs_f64()
            }
        };
        let Some((mde, _)) = cal.predict(exp.rounds, trial_sec, exp.variants.len()) else {
            continue;
        };
        let age = secs_text(((now - row.created_at_unix_ms).max(0) as f64 / 1000.0).round());
        out.push(format!(
            "workload {}: {} rounds x {} trials: MDE about {mde:.2}% on this machine (calibration {}, {age} ago, against {})",
            w.name,
            exp.rounds,
            secs_text(trial_sec),
            row.id,
            cal.target
        ));
        if let Some(m) = exp.margin.map(|m| 100.0 * m) {
            if mde > m {
                let need = (exp.rounds..=2000).find(|n| {
                    cal.predict(*n, trial_sec, exp.variants.len())
                        .is_some_and(|(x, _)| x <= m)
                });
                let hint = match need {
                    Some(n) => {
                        let (_, wall) = cal
                            .predict(n, trial_sec, exp.variants.len())
                            .unwrap_or((0.0, 0.0));
                        format!(
                            "about {n} rounds of these trials would (about {} in all)",
                            secs_text(wall)
                        )
                    }
                    None => "longer trials or a quieter machine are needed".into(),
                };
                out.push(format!(
                    "warning: workload {}: this plan cannot show equivalence within the margin of \
                     ±{m}% (its MDE is {mde:.2}%); {hint}",
                    w.name
                ));
            }
        }
    }
    out
}

/// The fingerprint a calibration is found by: the workload's shape without its name and
/// trial length (a calibration measures several lengths).
pub fn workload_key(w: &resplab_experiment::Workload) -> String {
    let mut shape = w.clone();
    shape.name = String::new();
    shape.budget = TrialBudget::TestTime(Duration::ZERO);
    let json = serde_json::to_string(&shape).unwrap_or_default();
    resplab_store::write::fingerprint(json.as_bytes())
}

/// Runs `resplab calibrate`.
///
/// # Errors
/// Bad flags (exit 2 with the flag named), a server that cannot be started, a store that
/// cannot be written.
pub fn run(a: CalibrateArgs) -> anyhow::Result<ExitCode> {
    let budget_total = positive_duration("--budget", &a.budget)?;
    let mut durations = Vec::new();
    for d in a.durations.split(',').filter(|s| !s.trim().is_empty()) {
        durations.push(positive_duration("--durations", d)?);
    }
    durations.sort();
    durations.dedup();
    if durations.is_empty() {
        bail!(
            "--durations: expected at least one trial length, found \"{}\"",
            a.durations
        );
    }
    if !(a.target_mde > 0.0 && a.target_mde.is_finite()) {
        bail!(
            "--target-mde: expected a percentage above 0, found {}",
            a.target_mde
        );
    }
    if a.validate {
        return validate(&a, budget_total, &durations);
    }
    let (mut base, text, workload) = base_experiment(&a)?;
    if let Some(w) = &a.warmup {
        base.warmup = resplab_experiment::words::parse_duration(w)
            .map_err(|e| anyhow::anyhow!("--warmup: {e}"))?;
    }
    if let Some(m) = &a.metric {
        base.primary_metric = m.clone();
    }
    let target = match &base.baseline().server {
        ServerSource::Spawn { command } => shell_join(command),
        ServerSource::Address { host, port } => format!("{host}:{port}"),
        ServerSource::Cluster {
            command,
            masters,
            replicas,
        } => format!(
            "a fresh cluster of {masters} masters with {replicas} replicas each: {}",
            shell_join(command)
        ),
        ServerSource::None if base.shared_server.is_some() => {
            let sh = base
                .shared_server
                .as_ref()
                .map_or(Vec::new(), |s| s.command.clone());
            format!(
                "[server] {} ({})",
                shell_join(&sh),
                if base.shared_server.as_ref().is_some_and(|s| s.per_round) {
                    "one per round"
                } else {
                    "one per trial"
                }
            )
        }
        ServerSource::Toggle { .. } | ServerSource::None => bail!(
            "--experiment: the baseline variant `{}` is a hot toggle or has no server; \
             calibrate needs a server command or an address (give --server or --address)",
            base.baseline().name
        ),
    };
    let steps = plan(&base, &durations, budget_total)?;
    let stamp = resplab_store::write::now_unix_ms();
    let mut store = Store::open(&a.db.db)
        .with_context(|| format!("opening the result store {}", a.db.db.display()))?;
    let stop = StopToken::new();
    {
        let stop = stop.clone();
        let _ = crate::signal::set_handler(move || stop.stop());
    }
    let quiet = a.quiet || a.format == Format::Json;
    if !quiet {
        eprintln!(
            "resplab calibrate: A/A of {target}, workload {}, {} trial length(s) within {}: {}",
            base.workloads[workload].name,
            steps.len(),
            a.budget,
            steps
                .iter()
                .map(|(t, r)| format!("{r} rounds x {}", secs_text(t.as_secs_f64())))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let direction = if resplab_store::metrics::higher_is_better(&base.primary_metric) {
        Direction::HigherIsBetter
    } else {
        Direction::LowerIsBetter
    };
    let mut noise = Vec::new();
    for (i, (trial, rounds)) in steps.iter().enumerate() {
        let exp = aa_experiment(&base, workload, *trial, *rounds, stamp, i);
        let header = format!(
            "# resplab calibrate: A/A of workload `{}` with {} x {} trials\n{text}",
            base.workloads[workload].name,
            rounds,
            secs_text(trial.as_secs_f64())
        );
        let started = Instant::now();
        let mut on_event = |ev: Event<'_>| {
            if quiet {
                return;
            }
            if let Event::Stored {
                slot,
                variant,
                valid,
                primary,
                ..
            } = ev
            {
                eprintln!(
                    "  {} round {:>3}/{}  {:<8} {}{}",
                    secs_text(trial.as_secs_f64()),
                    slot.round + 1,
                    rounds,
                    variant,
                    primary.map_or("-".to_string(), |v| format!("{v:.1}")),
                    if valid { "" } else { "  (invalid)" }
                );
            }
        };
        let outcome = runner::run(&exp, &header, &mut store, &stop, &mut on_event)
            .with_context(|| format!("A/A experiment {}", exp.name))?;
        if outcome.interrupted {
            eprintln!(
                "resplab: interrupted; the trials so far are stored as experiment {} (nothing \
                 was calibrated)",
                exp.name
            );
            return Ok(ExitCode::from(2));
        }
        let wall = started.elapsed().as_secs_f64();
        noise.push(analyze(&store, &exp, *trial, wall, direction)?);
    }
    let cal = summarize(&base, workload, &target, noise, a.target_mde);
    let id = store.insert_calibration(&NewCalibration {
        hostname: cal.hostname.clone(),
        target: cal.target.clone(),
        workload_key: cal.workload_key.clone(),
        workload_name: cal.workload.clone(),
        metric: cal.metric.clone(),
        result: serde_json::to_value(&cal)?,
    })?;
    let text = match a.format {
        Format::Json => {
            let mut v = serde_json::to_value(&cal)?;
            if let Some(o) = v.as_object_mut() {
                o.insert("id".into(), id.into());
            }
            serde_json::to_string_pretty(&v)? + "\n"
        }
        Format::Text => render(&cal, id, &a.db.db),
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    Ok(ExitCode::SUCCESS)
}

fn positive_duration(flag: &str, text: &str) -> anyhow::Result<Duration> {
    match resplab_experiment::words::parse_duration(text) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => bail!(
            "{flag}: expected a duration above zero, found \"{}\"",
            text.trim()
        ),
        Err(e) => bail!("{flag}: {e}"),
    }
}

/// The experiment the calibration derives from, its text, and the workload's index.
fn base_experiment(a: &CalibrateArgs) -> anyhow::Result<(Experiment, String, usize)> {
    let bench_flags: Vec<&str> = [
        ("-t/--tests", a.tests.is_some()),
        ("--command", !a.commands.is_empty()),
        ("-c/--clients", a.clients.is_some()),
        ("-P/--pipeline", a.pipeline.is_some()),
        ("-d/--data-size", a.data_size.is_some()),
        ("-r/--keyspace", a.keyspace.is_some()),
        ("--threads", a.threads.is_some()),
        ("--ratio", a.ratio.is_some()),
        ("--key-pattern", a.key_pattern.is_some()),
        ("--rate", a.rate.is_some()),
    ]
    .into_iter()
    .filter_map(|(f, set)| set.then_some(f))
    .collect();
    let (mut exp, text, name) = if let Some(file) = &a.experiment {
        if let Some(f) = bench_flags.first() {
            bail!(
                "{f} cannot be used together with --experiment: the workload comes from the file"
            );
        }
        let (exp, text) = resplab_experiment::load(file, &Overrides::default())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        (exp, text, a.workload.clone().unwrap_or_default())
    } else {
        let text = generated_file(a)?;
        let exp =
            resplab_experiment::resolve::parse("(calibrate flags)", &text, &Overrides::default())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
        (exp, text, "calibrate".to_string())
    };
    let Some(workload) = exp.workloads.iter().position(|w| w.name == name) else {
        bail!(
            "--workload: expected one of the workloads of {} ({}), found `{name}`",
            a.experiment
                .as_ref()
                .map_or(String::new(), |p| p.display().to_string()),
            exp.workloads
                .iter()
                .map(|w| w.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    if exp.workloads[workload].run.is_some() {
        bail!(
            "--workload {name}: a command workload (`run = …`) decides its own length, and \
             calibrate needs to set the trial length itself; give a workload in the bench \
             vocabulary, or measure the command's noise with an experiment of two copies of \
             one variant"
        );
    }
    let base = exp.baseline().clone();
    let server = if let Some(cmd) = &a.server {
        let words = resplab_experiment::words::split_words(cmd)
            .map_err(|e| anyhow::anyhow!("--server: {e}"))?;
        if words.is_empty() {
            bail!("--server: expected a command, found an empty string");
        }
        Some(ServerSource::Spawn { command: words })
    } else if let Some(addr) = &a.address {
        let (host, port) = addr
            .rsplit_once(':')
            .and_then(|(h, p)| Some((h.trim_matches(['[', ']']), p.parse::<u16>().ok()?)))
            .filter(|(h, p)| !h.is_empty() && *p > 0)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--address: expected HOST:PORT (e.g. 127.0.0.1:6379), found \"{addr}\""
                )
            })?;
        Some(ServerSource::Address {
            host: host.to_string(),
            port,
        })
    } else {
        None
    };
    if let Some(s) = server {
        exp.variants = vec![resplab_experiment::Variant { server: s, ..base }];
    }
    Ok((exp, text, workload))
}

/// An experiment file for the workload given as bench flags (validated by the same
/// resolver as any experiment file).
fn generated_file(a: &CalibrateArgs) -> anyhow::Result<String> {
    let q = |s: &str| toml_string(s);
    let mut w = String::from("[[workload]]\nname = \"calibrate\"\n");
    if !a.commands.is_empty() {
        let list: Vec<String> = a.commands.iter().map(|c| q(c)).collect();
        w.push_str(&format!("command = [{}]\n", list.join(", ")));
    } else if a.ratio.is_none() && a.key_pattern.is_none() {
        w.push_str(&format!(
            "tests = {}\n",
            q(a.tests.as_deref().unwrap_or("set"))
        ));
    }
    for (key, v) in [
        ("ratio", a.ratio.as_deref()),
        ("key_pattern", a.key_pattern.as_deref()),
    ] {
        if let Some(v) = v {
            w.push_str(&format!("{key} = {}\n", q(v)));
        }
    }
    w.push_str(&format!("clients = {}\n", a.clients.unwrap_or(50)));
    w.push_str(&format!("pipeline = {}\n", a.pipeline.unwrap_or(1)));
    for (key, v) in [
        ("data_size", a.data_size),
        ("keyspace", a.keyspace),
        ("threads", a.threads.map(u64::from)),
    ] {
        if let Some(v) = v {
            w.push_str(&format!("{key} = {v}\n"));
        }
    }
    if let Some(r) = a.rate {
        if !(r > 0.0 && r.is_finite()) {
            bail!("--rate: expected requests per second above 0, found {r}");
        }
        w.push_str(&format!("rate = {r}\n"));
    }
    let server =
        "redis-server --port {port} --bind 127.0.0.1 --save '' --appendonly no --dir {dir}";
    Ok(format!(
        "[experiment]\nname = \"calibrate\"\nrounds = {MIN_ROUNDS}\ntest_time = \"1s\"\nwarmup = \"200ms\"\nseed = {}\nprimary_metric = \"ops_per_sec\"\n\n[[variant]]\nname = \"a\"\nserver = {}\n\n[[variant]]\nname = \"a-again\"\nserver = {}\n\n{w}",
        a.seed.unwrap_or(20241124),
        q(server),
        q(server)
    ))
}

/// A TOML basic string: quotes, backslashes and control characters escaped.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Rounds for each trial length: the budget shared equally, at least [`MIN_ROUNDS`];
/// the longest lengths are dropped when the budget cannot hold them.
fn plan(
    base: &Experiment,
    durations: &[Duration],
    budget: Duration,
) -> anyhow::Result<Vec<(Duration, u32)>> {
    let overhead = GUESS_OVERHEAD_SEC + base.warmup.as_secs_f64();
    let per_trial = |t: &Duration| t.as_secs_f64() + overhead;
    let mut keep: Vec<Duration> = durations.to_vec();
    while !keep.is_empty() {
        let share = budget.as_secs_f64() / keep.len() as f64;
        let plans: Vec<(Duration, u32)> = keep
            .iter()
            .map(|t| {
                let r = (share / (VARIANTS.len() as f64 * per_trial(t))).floor();
                (*t, r.min(f64::from(MAX_ROUNDS)) as u32)
            })
            .collect();
        if plans.iter().all(|(_, r)| *r >= MIN_ROUNDS) {
            return Ok(plans);
        }
        keep.pop();
    }
    let shortest = durations.first().copied().unwrap_or(Duration::from_secs(1));
    let need = f64::from(MIN_ROUNDS) * VARIANTS.len() as f64 * per_trial(&shortest);
    bail!(
        "--budget {}: too short for {MIN_ROUNDS} rounds of two {} trials; at least {} is needed",
        secs_text(budget.as_secs_f64()),
        secs_text(shortest.as_secs_f64()),
        secs_text(need.ceil())
    )
}

/// The A/A experiment of one trial length.
fn aa_experiment(
    base: &Experiment,
    workload: usize,
    trial: Duration,
    rounds: u32,
    stamp: u64,
    index: usize,
) -> Experiment {
    let mut exp = base.clone();
    let a = base.baseline().clone();
    exp.variants = VARIANTS
        .iter()
        .map(|n| resplab_experiment::Variant {
            name: (*n).to_string(),
            ..a.clone()
        })
        .collect();
    let mut w = base.workloads[workload].clone();
    w.budget = TrialBudget::TestTime(trial);
    exp.workloads = vec![w];
    exp.rounds = rounds;
    // The file's order stands (randomized unless it says "fixed"): calibrate checks the
    // set-up as the user runs it, biases included.
    exp.seed = base.seed.wrapping_add(index as u64);
    exp.name = format!("calibrate-{stamp}-{}ms", trial.as_millis());
    exp
}

/// The noise of one A/A experiment, from its counted trials in the store.
fn analyze(
    store: &Store,
    exp: &Experiment,
    trial: Duration,
    wall_sec: f64,
    direction: Direction,
) -> anyhow::Result<Noise> {
    let info = store.experiment(&exp.name)?;
    let trials = store.trials(info.id)?;
    let obs = store.observations(&exp.name)?;
    let value_of = |id: i64| {
        obs.iter()
            .find(|o| {
                o.trial_id == id && o.command == ALL_COMMANDS && o.metric == exp.primary_metric
            })
            .map(|o| o.value)
    };
    // Counted trials in run order.
    let mut counted: Vec<(i64, &str, u32, f64)> = Vec::new();
    let mut in_order = trials.clone();
    in_order.sort_by_key(|t| (t.started_at_unix_ms, t.id));
    for t in &in_order {
        if let Some(v) = value_of(t.id) {
            counted.push((t.started_at_unix_ms, t.variant.as_str(), t.round, v));
        }
    }
    let arm = |name: &str| -> Vec<f64> {
        counted
            .iter()
            .filter(|c| c.1 == name)
            .map(|c| c.3)
            .collect()
    };
    let (va, vb) = (arm(VARIANTS[0]), arm(VARIANTS[1]));
    let mut rounds: Vec<(u32, f64, f64)> = Vec::new();
    for r in 0..exp.rounds {
        let find = |name: &str| {
            counted
                .iter()
                .find(|c| c.1 == name && c.2 == r)
                .map(|c| c.3)
        };
        if let (Some(x), Some(y)) = (find(VARIANTS[0]), find(VARIANTS[1])) {
            if x > 0.0 && y > 0.0 {
                rounds.push((r, x, y));
            }
        }
    }
    let d: Vec<f64> = rounds.iter().map(|(_, x, y)| (y / x).ln()).collect();
    let mut all: Vec<f64> = va.iter().chain(&vb).copied().collect();
    all.sort_by(f64::total_cmp);
    let median = if all.is_empty() {
        f64::NAN
    } else {
        all[all.len() / 2]
    };
    let cfg = CompareConfig::new(direction);
    let aa = paired_from_log_ratios(&d, &cfg).ok();
    let n_trials = trials.len().max(1) as f64;
    let overhead = ((wall_sec - n_trials * trial.as_secs_f64()) / n_trials).max(0.0);
    Ok(Noise {
        trial_sec: trial.as_secs_f64(),
        experiment: exp.name.clone(),
        rounds: exp.rounds,
        pairs: d.len(),
        median,
        cv_a_pct: budget::cv(&va).map(|c| 100.0 * c),
        cv_b_pct: budget::cv(&vb).map(|c| 100.0 * c),
        sd_log_ratio: budget::sd(&d),
        lag1_ratio: budget::lag1_autocorrelation(&d),
        lag1_a: budget::lag1_autocorrelation(&va),
        lag1_b: budget::lag1_autocorrelation(&vb),
        outlier_rounds: budget::outliers(&d, 3.5)
            .into_iter()
            .map(|i| rounds[i].0)
            .collect(),
        wall_sec,
        overhead_sec: overhead,
        aa_effect_pct: aa.as_ref().map(|c| c.effect_pct),
        aa_ci_low_pct: aa.as_ref().map(|c| c.ci_low_pct),
        aa_ci_high_pct: aa.as_ref().map(|c| c.ci_high_pct),
        aa_p_value: aa.as_ref().map(|c| c.p_value),
        aa_mde_pct: aa.as_ref().and_then(|c| c.mde_pct),
        aa_verdict: match aa.as_ref().map(|c| c.verdict) {
            Some(Verdict::Better) | Some(Verdict::Worse) => "DIFFERENT".into(),
            Some(Verdict::Equivalent) => "EQUIVALENT".into(),
            Some(Verdict::Inconclusive) => "NO DIFFERENCE".into(),
            Some(Verdict::TooFewTrials) | None => "NO VERDICT".into(),
        },
    })
}

/// The noise law, the budget table and the findings.
fn summarize(
    base: &Experiment,
    workload: usize,
    target: &str,
    noise: Vec<Noise>,
    target_mde_pct: f64,
) -> Calibration {
    let points: Vec<(f64, f64)> = noise
        .iter()
        .filter_map(|n| n.sd_log_ratio.map(|s| (n.trial_sec, s)))
        .collect();
    let model = NoiseModel::fit(&points).unwrap_or(NoiseModel {
        a: f64::NAN,
        b: 0.0,
    });
    let mut overheads: Vec<f64> = noise.iter().map(|n| n.overhead_sec).collect();
    overheads.sort_by(f64::total_cmp);
    let overhead = overheads.get(overheads.len() / 2).copied().unwrap_or(0.0);
    let mut seconds: Vec<f64> = budget::TABLE_SECONDS.to_vec();
    seconds.extend(noise.iter().map(|n| n.trial_sec));
    let table: Vec<Plan> = if model.a.is_finite() {
        budget::budget_table(
            &model,
            overhead,
            VARIANTS.len(),
            &budget::TABLE_ROUNDS,
            &seconds,
            &PowerSpec::default(),
        )
    } else {
        Vec::new()
    };
    let cheapest = budget::cheapest(&table, target_mde_pct).map(PlanRow::from);
    let different: Vec<String> = noise
        .iter()
        .filter(|n| n.aa_verdict == "DIFFERENT")
        .map(|n| {
            format!(
                "{} trials: {:+.2} % [{:+.2}, {:+.2}]",
                secs_text(n.trial_sec),
                n.aa_effect_pct.unwrap_or(f64::NAN),
                n.aa_ci_low_pct.unwrap_or(f64::NAN),
                n.aa_ci_high_pct.unwrap_or(f64::NAN)
            )
        })
        .collect();
    // What in this set-up can make two copies of one variant differ.
    let mut suspects = Vec::new();
    if base.order == Order::Fixed {
        suspects.push(format!(
            "the order is fixed (order = \"fixed\"): `{}` runs first in every round, so \
             whatever the first trial of a round meets (a cold server, cold caches) is \
             always its share; use the randomized order",
            VARIANTS[0]
        ));
    }
    if base.shared_server.as_ref().is_some_and(|s| s.per_round)
        && matches!(base.baseline().server, ServerSource::None)
    {
        suspects.push(
            "one server serves the whole round ([server] per = \"round\"): the first trial \
             of a round meets it freshly started, the second inherits its warm state and \
             its data; a server per trial removes that"
                .to_string(),
        );
    }
    let biased = (!different.is_empty()).then(|| {
        let general = "with 5 % false positives per comparison this happens by chance in \
             about 1 of 20 lengths, more often it means a biased set-up: an order effect (the \
             first trial of a round warms caches the second inherits), a warm-up too short, \
             or a server that is not fresh for every trial (an address variant keeps its \
             state). Rerun; if it persists, lengthen --warmup, restart the server per trial, \
             or pin the server and the client to their own CPUs";
        if suspects.is_empty() {
            format!(
                "the A/A comparison claimed a difference between two runs of the same server \
                 ({}); {general}",
                different.join("; ")
            )
        } else {
            format!(
                "the A/A comparison claimed a difference between two runs of the same server \
                 ({}), and this set-up is biased by construction: {}. Beyond that, {general}",
                different.join("; "),
                suspects.join("; ")
            )
        }
    });
    let w = &base.workloads[workload];
    Calibration {
        hostname: resplab_engine::host::detect().hostname,
        target: target.to_string(),
        workload: w.name.clone(),
        workload_key: workload_key(w),
        metric: base.primary_metric.clone(),
        warmup_sec: base.warmup.as_secs_f64(),
        noise,
        noise_a: model.a,
        noise_b: model.b,
        overhead_sec: overhead,
        table: table.into_iter().map(PlanRow::from).collect(),
        target_mde_pct,
        cheapest,
        biased,
    }
}

/// `0.5 s`, `2 s`, `1.5 min`.
pub fn secs_text(s: f64) -> String {
    if s < 120.0 {
        let t = format!("{s:.2}");
        let t = t.trim_end_matches('0').trim_end_matches('.');
        format!("{t} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// Wall time in a table cell: `45s`, `2.4m`, `1.5h`.
fn wall_text(s: f64) -> String {
    if s < 99.5 {
        format!("{s:.0}s")
    } else if s < 5940.0 {
        format!("{:.1}m", s / 60.0)
    } else {
        format!("{:.1}h", s / 3600.0)
    }
}

/// Words as a shell would need them: empty or special ones single-quoted.
fn shell_join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,{}@%+".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn opt_pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.2}%"))
}

fn render(c: &Calibration, id: i64, db: &std::path::Path) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "calibration of {} on {}: workload {}, metric {}",
        c.target, c.hostname, c.workload, c.metric
    );
    let _ = writeln!(
        o,
        "\nnoise (A/A: the same server as two variants, randomized interleaved rounds):"
    );
    let _ = writeln!(
        o,
        "  {:>7} {:>6} {:>8} {:>8} {:>11} {:>7} {:>9}  A/A verdict",
        "trial", "rounds", "CV a", "CV b", "sd(ratio)", "lag-1", "outliers"
    );
    for n in &c.noise {
        let aa = match (n.aa_effect_pct, n.aa_ci_low_pct, n.aa_ci_high_pct) {
            (Some(e), Some(l), Some(h)) => format!("{} {e:+.2}% [{l:+.2}, {h:+.2}]", n.aa_verdict),
            _ => n.aa_verdict.clone(),
        };
        let _ = writeln!(
            o,
            "  {:>7} {:>6} {:>8} {:>8} {:>11} {:>7} {:>9}  {aa}",
            secs_text(n.trial_sec),
            n.pairs,
            opt_pct(n.cv_a_pct),
            opt_pct(n.cv_b_pct),
            opt_pct(n.sd_log_ratio.map(|s| 100.0 * s)),
            n.lag1_ratio.map_or("-".into(), |x| format!("{x:+.2}")),
            if n.outlier_rounds.is_empty() {
                "-".to_string()
            } else {
                n.outlier_rounds
                    .iter()
                    .map(|r| (r + 1).to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            }
        );
    }
    let drift: Vec<String> = c
        .noise
        .iter()
        .filter(|n| n.lag1_ratio.is_some_and(|x| x > 0.5))
        .map(|n| secs_text(n.trial_sec))
        .collect();
    if !drift.is_empty() {
        let _ = writeln!(
            o,
            "  drift: the paired ratios of consecutive rounds are correlated at {}; rounds are \
             not independent and intervals will be too narrow: a quieter machine or pinned CPUs",
            drift.join(", ")
        );
    }
    if c.noise_a.is_finite() {
        let _ = writeln!(
            o,
            "  noise law: sd(ratio) = {:.3}% x (trial / 1 s)^-{:.2}; each trial costs {} beyond its measured time",
            100.0 * c.noise_a,
            c.noise_b,
            secs_text(c.overhead_sec)
        );
    }
    if !c.table.is_empty() {
        let _ = writeln!(
            o,
            "\nbudget table: predicted smallest detectable effect (80% power, 95% confidence) and wall time of a 2-variant experiment"
        );
        let mut rounds: Vec<usize> = c.table.iter().map(|p| p.rounds).collect();
        rounds.sort_unstable();
        rounds.dedup();
        let mut secs: Vec<f64> = c.table.iter().map(|p| p.trial_sec).collect();
        secs.sort_by(f64::total_cmp);
        secs.dedup();
        let _ = write!(o, "  {:>7}", "trial");
        for r in &rounds {
            let _ = write!(o, " {:>16}", format!("{r} rounds"));
        }
        let _ = writeln!(o);
        for s in &secs {
            let _ = write!(o, "  {:>7}", secs_text(*s));
            for r in &rounds {
                let cell = c
                    .table
                    .iter()
                    .find(|p| p.rounds == *r && p.trial_sec == *s)
                    .map_or("-".to_string(), |p| {
                        format!("{:.2}% {:>6}", p.mde_pct, wall_text(p.wall_sec))
                    });
                let _ = write!(o, " {cell:>16}");
            }
            let _ = writeln!(o);
        }
        match &c.cheapest {
            Some(p) => {
                let _ = writeln!(
                    o,
                    "  smallest budget for MDE <= {}%: {} rounds x {} trials, MDE {:.2}%, about {} for two variants",
                    c.target_mde_pct,
                    p.rounds,
                    secs_text(p.trial_sec),
                    p.mde_pct,
                    secs_text(p.wall_sec)
                );
            }
            None => {
                let _ = writeln!(
                    o,
                    "  no plan in the table reaches MDE <= {}%: the noise is too large; pin CPUs, lengthen trials beyond the table or accept a larger effect",
                    c.target_mde_pct
                );
            }
        }
    }
    let _ = writeln!(o);
    match &c.biased {
        Some(b) => {
            let _ = writeln!(o, "A/A: FINDING: {b}");
        }
        None => {
            let _ = writeln!(
                o,
                "A/A: no difference claimed between two runs of the same server, as it should be"
            );
        }
    }
    let _ = writeln!(
        o,
        "stored as calibration {id} in {}; `resplab experiment run` uses it for this workload on this host",
        db.display()
    );
    o
}

/// One error-rate check of `--validate`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RateCheck {
    pub name: String,
    /// Experiments (or, for coordinated omission, quantiles) checked.
    pub k: usize,
    pub hits: usize,
    pub rate: f64,
    /// 95 % Clopper–Pearson interval of the rate.
    pub ci_low: f64,
    pub ci_high: f64,
    pub nominal: f64,
    pub pass: bool,
    pub detail: String,
}

/// What `--validate` found; stored in the calibrations table under [`VALIDATION_KEY`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Validation {
    pub hostname: String,
    pub trial_sec: f64,
    pub rounds: u32,
    /// s_d of the serve A/A calibration and the MDE it predicts for the plan, percent.
    pub sd_log_ratio: f64,
    pub predicted_mde_pct: f64,
    /// The slowdown injected for the power check and the true effect it makes.
    pub slowdown_pct: f64,
    pub true_effect_pct: f64,
    pub false_positives: RateCheck,
    pub power: RateCheck,
    pub coverage: RateCheck,
    pub coordinated_omission: Vec<(String, f64, f64, bool)>,
    pub co_pass: bool,
    pub experiments: Vec<String>,
}

/// An experiment of two `resplab serve` variants (the second with `extra` flags), the
/// saturating workload that makes a slowdown exact.
fn serve_experiment(
    name: &str,
    rounds: u32,
    trial: f64,
    seed: u64,
    extra: &str,
) -> anyhow::Result<(Experiment, String)> {
    let exe = std::env::current_exe().context("finding the resplab executable")?;
    let exe = shell_join(&[exe.display().to_string()]);
    let text = format!(
        "[experiment]\nname = {}\nrounds = {rounds}\ntest_time = \"{trial}s\"\nwarmup = \"200ms\"\nseed = {seed}\nprimary_metric = \"ops_per_sec\"\n# One client thread saturates the server (where a slowdown is exact); 2 us of work per\n# command makes the server, not the client, the bottleneck by far.\nclient_cpu_limit = 1.0\n\n[[variant]]\nname = \"a\"\nserver = {}\n\n[[variant]]\nname = \"b\"\nserver = {}\n\n[[workload]]\nname = \"set\"\ntests = \"set\"\nclients = 50\npipeline = 16\nthreads = 1\n",
        toml_string(name),
        toml_string(&format!("{exe} serve --port {{port}} --work-ns 2000")),
        toml_string(&format!("{exe} serve --port {{port}} --work-ns 2000{extra}")),
    );
    let exp =
        resplab_experiment::resolve::parse("(calibrate --validate)", &text, &Overrides::default())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((exp, text))
}

/// Runs an experiment and returns its per-round log ratios b/a of ops/s.
fn run_pairs(
    store: &mut Store,
    exp: &Experiment,
    text: &str,
    stop: &StopToken,
) -> anyhow::Result<Option<Vec<f64>>> {
    let outcome = runner::run(exp, text, store, stop, &mut |_: Event<'_>| {})
        .with_context(|| format!("experiment {}", exp.name))?;
    if outcome.interrupted {
        return Ok(None);
    }
    let obs = store.observations(&exp.name)?;
    let find = |v: &str, r: u32| {
        obs.iter()
            .find(|o| {
                o.variant == v
                    && o.round == r
                    && o.command == ALL_COMMANDS
                    && o.metric == "ops_per_sec"
            })
            .map(|o| o.value)
    };
    Ok(Some(
        (0..exp.rounds)
            .filter_map(|r| Some((find("b", r)? / find("a", r)?).ln()))
            .filter(|d| d.is_finite())
            .collect(),
    ))
}

fn validate(
    a: &CalibrateArgs,
    budget: Duration,
    durations: &[Duration],
) -> anyhow::Result<ExitCode> {
    if a.server.is_some() || a.address.is_some() || a.experiment.is_some() {
        bail!("--validate checks against known truth with resplab serve as the server: it takes no --server, --address or --experiment");
    }
    if a.validate_rounds < MIN_ROUNDS {
        bail!(
            "--validate-rounds: expected at least {MIN_ROUNDS}, found {}",
            a.validate_rounds
        );
    }
    if a.validate_k == 0 {
        bail!("--validate-k: expected at least 1, found 0");
    }
    let quiet = a.quiet || a.format == Format::Json;
    let trial = durations.first().map_or(0.25, |d| d.as_secs_f64()).min(1.0);
    let rounds = a.validate_rounds;
    let per_exp = |r: u32| f64::from(r) * 2.0 * (trial + 0.2 + GUESS_OVERHEAD_SEC + 0.15);
    let cal_rounds = 20u32;
    let co_sec = 10.0;
    let spare = budget.as_secs_f64() - per_exp(cal_rounds) - co_sec;
    let k = ((spare / (2.0 * per_exp(rounds))).floor().max(0.0) as usize).min(a.validate_k);
    // At least 10 experiments per check (or all of a smaller --validate-k).
    let least = a.validate_k.min(10);
    if k < least {
        bail!(
            "--budget {}: too short for --validate: it needs about {} for {least} experiments per check of {rounds} rounds x {} trials (more with --validate-k {})",
            secs_text(budget.as_secs_f64()),
            secs_text(per_exp(cal_rounds) + co_sec + 2.0 * least as f64 * per_exp(rounds)),
            secs_text(trial),
            a.validate_k
        );
    }
    if k < a.validate_k && !quiet {
        eprintln!(
            "resplab calibrate: the budget holds {k} experiments per check, not {}",
            a.validate_k
        );
    }
    let mut store = Store::open(&a.db.db)
        .with_context(|| format!("opening the result store {}", a.db.db.display()))?;
    let stop = StopToken::new();
    {
        let stop = stop.clone();
        let _ = crate::signal::set_handler(move || stop.stop());
    }
    let stamp = resplab_store::write::now_unix_ms();
    let seed = a.seed.unwrap_or(stamp);
    let mut names = Vec::new();
    let say = |m: String| {
        if !quiet {
            eprintln!("resplab calibrate: {m}");
        }
    };
    // 1. The noise of this set-up, and the MDE it predicts for the plan.
    let name = format!("calibrate-{stamp}-validate-noise");
    let (exp, text) = serve_experiment(&name, cal_rounds, trial, seed, "")?;
    say(format!(
        "noise: A/A of resplab serve, {cal_rounds} rounds x {} trials",
        secs_text(trial)
    ));
    let Some(d) = run_pairs(&mut store, &exp, &text, &stop)? else {
        return interrupted();
    };
    names.push(name);
    let sd = budget::sd(&d).unwrap_or(f64::NAN);
    let Some(mde) = resplab_stats::power::mde_signed_rank(rounds as usize, sd, 0.95, 0.80) else {
        bail!("the A/A calibration of resplab serve gave no usable noise figure (sd {sd})");
    };
    // A slowdown of x makes throughput 1/(1 + x): the true effect is −MDE.
    let true_ratio = (-mde).exp();
    let slowdown_pct = 100.0 * (1.0 / true_ratio - 1.0);
    let true_effect_pct = 100.0 * (true_ratio - 1.0);
    let cfg = CompareConfig::new(Direction::HigherIsBetter);
    // 2. False positives: A/A.
    let mut fp = 0;
    for i in 0..k {
        let name = format!("calibrate-{stamp}-validate-aa-{i}");
        let (exp, text) =
            serve_experiment(&name, rounds, trial, seed.wrapping_add(1 + i as u64), "")?;
        let Some(d) = run_pairs(&mut store, &exp, &text, &stop)? else {
            return interrupted();
        };
        names.push(name);
        if let Ok(c) = paired_from_log_ratios(&d, &cfg) {
            if matches!(c.verdict, Verdict::Better | Verdict::Worse) {
                fp += 1;
            }
        }
        say(format!(
            "false positives: {}/{k} experiments, {fp} claimed a difference",
            i + 1
        ));
    }
    // 3. Power and coverage at the predicted MDE.
    let (mut detected, mut covered) = (0, 0);
    let extra = format!(" --slowdown {slowdown_pct:.4}");
    for i in 0..k {
        let name = format!("calibrate-{stamp}-validate-power-{i}");
        let (exp, text) = serve_experiment(
            &name,
            rounds,
            trial,
            seed.wrapping_add(1000 + i as u64),
            &extra,
        )?;
        let Some(d) = run_pairs(&mut store, &exp, &text, &stop)? else {
            return interrupted();
        };
        names.push(name);
        if let Ok(c) = paired_from_log_ratios(&d, &cfg) {
            if c.verdict == Verdict::Worse {
                detected += 1;
            }
            if c.ci_low_pct <= true_effect_pct && true_effect_pct <= c.ci_high_pct {
                covered += 1;
            }
        }
        say(format!(
            "power: {}/{k} experiments, {detected} detected the {true_effect_pct:.2}% effect",
            i + 1
        ));
    }
    // 4. Coordinated omission.
    say("coordinated omission: open loop against 100 ms stalls every second".into());
    let co = co_check()?;
    let rate = |name: &'static str,
                hits: usize,
                nominal: f64,
                pass: &dyn Fn(f64, f64, f64) -> bool,
                detail: String| {
        let (lo, hi) = budget::clopper_pearson(hits, k, 0.95);
        let r = hits as f64 / k as f64;
        RateCheck {
            name: name.to_string(),
            k,
            hits,
            rate: r,
            ci_low: lo,
            ci_high: hi,
            nominal,
            pass: pass(r, lo, hi),
            detail,
        }
    };
    let v = Validation {
        hostname: resplab_engine::host::detect().hostname,
        trial_sec: trial,
        rounds,
        sd_log_ratio: sd,
        predicted_mde_pct: 100.0 * mde.exp_m1(),
        slowdown_pct,
        true_effect_pct,
        false_positives: rate(
            "false positives",
            fp,
            0.05,
            &|_, lo, hi| lo <= 0.05 && 0.05 <= hi,
            "share of A/A experiments that claimed a difference; passes when its interval holds the nominal 5 %".into(),
        ),
        power: rate(
            "power",
            detected,
            0.80,
            &|r, lo, hi| r >= 0.70 || (lo <= 0.80 && 0.80 <= hi),
            format!("share of experiments with a true {true_effect_pct:.2}% effect (the predicted MDE) that found it; passes at 70 % or when its interval holds the nominal 80 %"),
        ),
        coverage: rate(
            "coverage",
            covered,
            0.95,
            &|_, lo, hi| lo <= 0.95 && 0.95 <= hi,
            "share of those experiments whose interval held the true effect; passes when its interval holds the nominal 95 %".into(),
        ),
        co_pass: co.iter().all(|c| c.3),
        coordinated_omission: co,
        experiments: names,
    };
    let id = store.insert_calibration(&NewCalibration {
        hostname: v.hostname.clone(),
        target: "resplab serve (calibrate --validate)".into(),
        workload_key: VALIDATION_KEY.into(),
        workload_name: "validate".into(),
        metric: "ops_per_sec".into(),
        result: serde_json::to_value(&v)?,
    })?;
    let out = match a.format {
        Format::Json => {
            let mut j = serde_json::to_value(&v)?;
            if let Some(o) = j.as_object_mut() {
                o.insert("id".into(), id.into());
            }
            serde_json::to_string_pretty(&j)? + "\n"
        }
        Format::Text => {
            render_validation(&v)
                + &format!(
                    "stored as calibration {id} in {} (resplab report calibration:{id})\n",
                    a.db.db.display()
                )
        }
    };
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    Ok(
        if v.false_positives.pass && v.power.pass && v.coverage.pass && v.co_pass {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        },
    )
}

fn interrupted() -> anyhow::Result<ExitCode> {
    eprintln!("resplab: interrupted; the experiments so far are stored (nothing was validated)");
    Ok(ExitCode::from(2))
}

/// An open-loop run against `resplab serve` stalling 100 ms every second, at 2,000
/// requests per second: the analytic latency tail is P(L > x) ≈ (D − x)/P for x < D
/// (METHOD §6.5; the utilisation is well below 1 %, so its factor is left out): p99 at
/// 90 ms, p99.9 at 99 ms. Returns (quantile, measured ms, expected ms, within ±10 %).
fn co_check() -> anyhow::Result<Vec<(String, f64, f64, bool)>> {
    use resplab_engine::{Arrivals, Budget, OpenLoop, RunConfig, Target};
    use resplab_workload::{TestName, TestsSpec, Workload, WorkloadKind, WorkloadSpec};
    let (stall_ms, every_s) = (100u64, 1.0f64);
    let server = resplab_serve::start(&resplab_serve::Config {
        port: 0,
        stall_ms,
        stall_every_s: every_s,
        ..resplab_serve::Config::default()
    })
    .context("starting resplab serve for the coordinated-omission check")?;
    let mut cfg = RunConfig::new(Target::Tcp {
        host: "127.0.0.1".into(),
        port: server.port(),
    });
    cfg.clients = 4;
    cfg.budget = Budget::Duration(Duration::from_secs(8));
    cfg.open_loop = Some(OpenLoop {
        rate_per_sec: 2000.0,
        arrivals: Arrivals::Constant,
    });
    let spec = WorkloadSpec {
        seed: 1,
        kind: WorkloadKind::Tests(TestsSpec {
            tests: vec![TestName::Get],
            random_keyspace: None,
            data_size: 3,
        }),
        setup_commands: Vec::new(),
    };
    let wl = Workload::new(&spec).map_err(|e| anyhow::anyhow!("{e}"))?;
    let rec = resplab_engine::run(&cfg, &wl, &StopToken::new(), &mut |_| {})
        .context("the coordinated-omission run")?;
    drop(server);
    let h = resplab_stats::hist::LatencyHistogram::from_base64(&rec.totals.histogram)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let d = stall_ms as f64;
    let p = every_s * 1000.0;
    Ok([99.0, 99.9]
        .iter()
        .map(|q| {
            let expected = d - (1.0 - q / 100.0) * p;
            let measured = h.percentile_ns(*q) as f64 / 1e6;
            (
                format!("p{q}"),
                measured,
                expected,
                (measured / expected - 1.0).abs() <= 0.10,
            )
        })
        .collect())
}

fn render_validation(v: &Validation) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "validation with resplab serve: {} rounds x {} trials per experiment; A/A noise sd(ratio) {:.3}%, predicted MDE {:.2}% (as a slowdown, the same log ratio is {:.2}%)",
        v.rounds,
        secs_text(v.trial_sec),
        100.0 * v.sd_log_ratio,
        v.predicted_mde_pct,
        v.true_effect_pct
    );
    for c in [&v.false_positives, &v.power, &v.coverage] {
        let _ = writeln!(
            o,
            "  {:<16} {:>3}/{:<3} = {:>5.1}%  95% CI [{:.1}%, {:.1}%]  nominal {:.0}%  {}  ({})",
            c.name,
            c.hits,
            c.k,
            100.0 * c.rate,
            100.0 * c.ci_low,
            100.0 * c.ci_high,
            100.0 * c.nominal,
            if c.pass { "PASS" } else { "FAIL" },
            c.detail
        );
    }
    let _ = writeln!(
        o,
        "  (power used --slowdown {:.3}% in the second server: a true effect of {:.2}%)",
        v.slowdown_pct, v.true_effect_pct
    );
    for (q, m, e, pass) in &v.coordinated_omission {
        let _ = writeln!(
            o,
            "  coordinated omission {q}: measured {m:.1} ms, analytic {e:.1} ms (±10%)  {}",
            if *pass { "PASS" } else { "FAIL" }
        );
    }
    let _ = writeln!(
        o,
        "the {} experiments are stored (calibrate-*-validate-*); exit code 0 when every check passes, 1 otherwise",
        v.experiments.len()
    );
    o
}

/// The error-rate checks of a validation as table rows: check, hits of K, rate, 95 %
/// interval, nominal, result; then the coordinated-omission quantiles.
fn validation_rows(v: &Validation) -> Vec<[String; 6]> {
    let mut rows: Vec<[String; 6]> = [&v.false_positives, &v.power, &v.coverage]
        .into_iter()
        .map(|c| {
            [
                c.name.clone(),
                format!("{}/{}", c.hits, c.k),
                format!("{:.1} %", 100.0 * c.rate),
                format!("[{:.1} %, {:.1} %]", 100.0 * c.ci_low, 100.0 * c.ci_high),
                format!("{:.0} %", 100.0 * c.nominal),
                if c.pass { "PASS" } else { "FAIL" }.to_string(),
            ]
        })
        .collect();
    for (q, m, e, pass) in &v.coordinated_omission {
        rows.push([
            format!("coordinated omission {q}"),
            String::new(),
            format!("{m:.1} ms"),
            String::new(),
            format!("{e:.1} ms ± 10 %"),
            if *pass { "PASS" } else { "FAIL" }.to_string(),
        ]);
    }
    rows
}

const VALIDATION_HEAD: [&str; 6] = [
    "check",
    "hits",
    "rate / measured",
    "95 % interval",
    "nominal / analytic",
    "result",
];

/// `resplab report calibration:ID|latest`: a stored calibration as its own report — what
/// `calibrate` printed (noise, budget table, the A/A verdict), the budget as a plot of
/// predicted MDE against wall time (one line per trial length), the budget table, and the
/// error-rate checks of the newest `--validate` run on the same host. A stored
/// `--validate` run has a report of its own (its checks and what it printed). Markdown
/// with the plot as an SVG file beside it, or one HTML file with it inline.
///
/// # Errors
/// No store at `db`, no such calibration (the message lists the stored ones), a stored
/// result this build cannot read, or an output that cannot be written.
pub fn report(
    db: &std::path::Path,
    which: &str,
    format: Option<super::report::ReportFormat>,
    output: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    use super::report::ReportFormat;
    use std::fmt::Write as _;
    if !db.exists() {
        bail!(
            "--db {}: no result store there (run resplab calibrate first, or give --db)",
            db.display()
        );
    }
    let store =
        Store::open(db).with_context(|| format!("opening the result store {}", db.display()))?;
    let all = store.calibrations()?;
    let known = || {
        let ids: Vec<String> = all.iter().map(|c| c.id.to_string()).collect();
        if ids.is_empty() {
            "the store has no calibration".to_string()
        } else {
            format!("stored: {}", ids.join(", "))
        }
    };
    let row = if which == "latest" {
        all.iter()
            .max_by_key(|c| (c.created_at_unix_ms, c.id))
            .cloned()
    } else {
        let id: i64 = which.parse().map_err(|_| {
            anyhow::anyhow!(
                "calibration:{which}: expected calibration:ID (a number) or calibration:latest"
            )
        })?;
        all.iter().find(|c| c.id == id).cloned()
    };
    let Some(row) = row else {
        bail!(
            "calibration:{which}: no such calibration in {} ({})",
            db.display(),
            known()
        );
    };
    let unreadable = || {
        format!(
            "calibration {} was stored by a resplab whose calibration format this build cannot read",
            row.id
        )
    };
    let is_validation = |r: &resplab_store::CalibrationRow| r.workload_key == VALIDATION_KEY;
    // The page: title, the verdict paragraph, the budget (plot and table) of a
    // calibration, the error-rate checks, and what calibrate printed.
    let (title, verdict, budget, checks, text) = if is_validation(&row) {
        let v: Validation = serde_json::from_value(row.result.clone()).with_context(unreadable)?;
        let pass = v.false_positives.pass && v.power.pass && v.coverage.pass && v.co_pass;
        (
            format!("Validation {}: resplab serve on {}", row.id, v.hostname),
            if pass {
                "Every error-rate check passed: on this machine the verdicts say what they claim."
                    .to_string()
            } else {
                "**An error-rate check failed**: on this machine, read verdicts with the failed check in mind (docs/calibrate.md says what each means and what to do)."
                    .to_string()
            },
            None,
            Some((row.id, v.clone())),
            render_validation(&v),
        )
    } else {
        let cal: Calibration =
            serde_json::from_value(row.result.clone()).with_context(unreadable)?;
        let checks = all
            .iter()
            .filter(|r| is_validation(r) && r.hostname == row.hostname)
            .max_by_key(|r| (r.created_at_unix_ms, r.id))
            .and_then(|r| {
                serde_json::from_value::<Validation>(r.result.clone())
                    .ok()
                    .map(|v| (r.id, v))
            });
        (
            format!(
                "Calibration {}: {} on {}",
                row.id, cal.workload, cal.hostname
            ),
            match &cal.biased {
                Some(why) => format!("**The A/A check failed: the set-up is biased.** {why}"),
                None => {
                    "The A/A check passed: the two copies of the same variant were not told apart."
                        .to_string()
                }
            },
            Some(budget_plot(&cal)?),
            checks,
            render(&cal, row.id, db),
        )
    };
    let checks_intro = |id: i64, v: &Validation| {
        format!(
            "From `resplab calibrate --validate` (calibration {id}): {} rounds x {} trials per experiment against resplab serve, a true effect of {:.2} % for the power and coverage checks.",
            v.rounds,
            secs_text(v.trial_sec),
            v.true_effect_pct
        )
    };
    let (format, output, file) =
        super::report::report_target(format, output, &format!("calibration-{}-report", row.id))?;
    let no_checks = "No `resplab calibrate --validate` run of this host is stored: run one to see the tool's error rates here.";
    match format {
        ReportFormat::Md => {
            let mut md = format!("# {title}\n\n{verdict}\n\n");
            let mut wrote = vec![output.display().to_string()];
            if let Some((svg, plans)) = &budget {
                let (dir, plot_dir) = super::report::plot_folder(&output);
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("cannot create the plot folder {}", dir.display()))?;
                let plot = dir.join("budget.svg");
                std::fs::write(&plot, svg)
                    .with_context(|| format!("cannot write plot {}", plot.display()))?;
                wrote.push(plot.display().to_string());
                let _ = writeln!(
                    md,
                    "## Budget\n\n![predicted MDE against wall time]({plot_dir}/budget.svg)\n\n| rounds | trial | predicted MDE | wall time |\n|---:|---:|---:|---:|"
                );
                for r in plans {
                    let _ = writeln!(md, "| {} | {} | {} | {} |", r[0], r[1], r[2], r[3]);
                }
                md.push('\n');
            }
            md.push_str("## Error-rate checks\n\n");
            match &checks {
                Some((id, v)) => {
                    let _ = writeln!(
                        md,
                        "{}\n\n| {} |\n|---|---:|---:|---:|---:|---|",
                        checks_intro(*id, v),
                        VALIDATION_HEAD.join(" | ")
                    );
                    for r in validation_rows(v) {
                        let _ = writeln!(md, "| {} |", r.join(" | "));
                    }
                    md.push('\n');
                }
                None => {
                    let _ = writeln!(md, "{no_checks}\n");
                }
            }
            let _ = write!(md, "## What calibrate printed\n\n```text\n{text}```\n");
            file.finish(md.as_bytes())?;
            println!("wrote {}", wrote.join(" and "));
        }
        ReportFormat::Html => {
            let esc = |t: &str| {
                t.replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
            };
            let cells = |tag: &str, r: &[String]| {
                r.iter()
                    .map(|c| format!("<{tag}>{}</{tag}>", esc(c)))
                    .collect::<String>()
            };
            let mut body = String::new();
            if let Some((svg, plans)) = &budget {
                let _ = write!(
                    body,
                    "<h2>Budget</h2>\n{svg}\n<table><tr><th>rounds</th><th>trial</th><th>predicted MDE</th><th>wall time</th></tr>"
                );
                for r in plans {
                    let _ = write!(body, "<tr>{}</tr>", cells("td", r));
                }
                body.push_str("</table>\n");
            }
            body.push_str("<h2>Error-rate checks</h2>\n");
            match &checks {
                Some((id, v)) => {
                    let head: Vec<String> =
                        VALIDATION_HEAD.iter().map(|h| (*h).to_string()).collect();
                    let _ = write!(
                        body,
                        "<p>{}</p>\n<table class=\"checks\"><tr>{}</tr>",
                        esc(&checks_intro(*id, v)).replace('`', ""),
                        cells("th", &head)
                    );
                    for r in validation_rows(v) {
                        let _ = write!(body, "<tr>{}</tr>", cells("td", &r));
                    }
                    body.push_str("</table>\n");
                }
                None => {
                    let _ = writeln!(body, "<p>{}</p>", esc(no_checks).replace('`', ""));
                }
            }
            let html = format!(
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\"><title>{t}</title><style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2em .6em;text-align:right}}table.checks td:first-child{{text-align:left}}pre{{background:#f6f6f6;padding:1em;overflow-x:auto}}</style></head><body>\n<h1>{t}</h1>\n<p>{v}</p>\n{body}<h2>What calibrate printed</h2>\n<pre>{pre}</pre>\n</body></html>\n",
                t = esc(&title),
                v = esc(&verdict).replace("**", ""),
                pre = esc(&text),
            );
            file.finish(html.as_bytes())?;
            println!("wrote {}", output.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The budget of a calibration as an SVG plot of predicted MDE against wall time (one
/// line per trial length) and its table's rows (rounds, trial, MDE, wall time).
fn budget_plot(cal: &Calibration) -> anyhow::Result<(String, Vec<[String; 4]>)> {
    let mut lengths: Vec<f64> = cal.table.iter().map(|r| r.trial_sec).collect();
    lengths.sort_by(f64::total_cmp);
    lengths.dedup();
    let series: Vec<resplab_report::plot::Series> = lengths
        .iter()
        .enumerate()
        .map(|(i, t)| resplab_report::plot::Series {
            name: format!("trials of {}", secs_text(*t)),
            index: i,
            points: cal
                .table
                .iter()
                .filter(|r| r.trial_sec == *t)
                .map(|r| (r.wall_sec / 60.0, r.mde_pct))
                .collect(),
        })
        .collect();
    let svg = resplab_report::plot::timeline::lines(
        "budget",
        &series,
        "expected wall time of the experiment (min)",
        "predicted MDE at 80 % power (%)",
    )?;
    let rows = cal
        .table
        .iter()
        .map(|r| {
            [
                r.rounds.to_string(),
                secs_text(r.trial_sec),
                format!("{:.2} %", r.mde_pct),
                secs_text(r.wall_sec),
            ]
        })
        .collect();
    Ok((svg, rows))
}
