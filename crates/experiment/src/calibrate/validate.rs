//! `calibrate --validate`: the tool's own error rates, measured against known truth with
//! `resplab serve` as the server. K A/A experiments measure the false-positive rate, and
//! their rounds, pooled, give the noise of the set-up and the MDE it predicts for the
//! plan; then K experiments with a known `--slowdown` of the predicted MDE measure the
//! power and the coverage of the interval, and [`co`](super::co) the
//! coordinated-omission correction. The noise comes from all K × rounds A/A rounds, not
//! from a short calibration of its own: the sd of 20 rounds moved between 5.6 % and
//! 8.2 % from one quiet validation to the next, and the power it predicted with it.
//! Each rate comes with its Clopper–Pearson interval; false positives pass within
//! [2 %, 7 %], power within [70 %, 90 %], coverage when its interval holds 95 % (or above).
//!
//! A validation is of one method ([`Method`]: fixed rounds judged by the paired verdict,
//! or runs until decided by the anytime-valid interval, each experiment stopping at its
//! first decision) and one metric ([`METRICS`]: throughput, which a slowdown of x lowers
//! to 1/(1 + x), or server CPU per request, which it raises to 1 + x), and is stored
//! under both, so each method × metric has its own measured error rates. The predicted
//! MDE uses the scale of the A/A log ratios that the method's verdict is as wide as
//! ([`super::noise::judged_scale`]), as calibrate's predictions do: the robust scale
//! (`resplab_stats::scale`) for the rank-based verdict of fixed and duet rounds, the
//! standard deviation for the mean-based interval of a run until decided.

use super::setup::{shell_join, toml_string};
use super::{CalibrateError, GUESS_OVERHEAD_SEC, MIN_ROUNDS};
use crate::runner::{self, Event};
use crate::UntilDecided;
use crate::{Experiment, Order, ServerSource, TrialBudget, UntilRule, Variant, Workload};
use resplab_engine::StopToken;
use resplab_results::calibration::{
    secs_text, Method, RateCheck, Validation, CALIBRATION_SCHEMA_VERSION, VALIDATION_KEY,
};
use resplab_stats::budget;
use resplab_stats::sequential::{replay, Decision};
use resplab_stats::verdict::{paired_from_log_ratios, CompareConfig, Direction, Verdict};
use resplab_store::{NewCalibration, Store, ALL_COMMANDS};
use std::path::PathBuf;
use std::time::Duration;

/// Wall time the coordinated-omission check takes.
const CO_SEC: f64 = 10.0;
/// The metrics a known slowdown moves by a known amount: throughput (higher is better)
/// and the server's CPU time per request (lower is better).
pub const METRICS: [&str; 2] = ["ops_per_sec", "server_cpu_us_per_op"];

/// The metric of `--metric` for a validation: a name of [`METRICS`], or `throughput` /
/// `server-cpu` for them.
///
/// # Errors
/// Any other name, with the names expected.
pub fn metric_named(name: &str) -> Result<&'static str, CalibrateError> {
    match name {
        "ops_per_sec" | "throughput" => Ok(METRICS[0]),
        "server_cpu_us_per_op" | "server-cpu" => Ok(METRICS[1]),
        other => Err(CalibrateError::Invalid(format!(
            "--metric: --validate compares ops_per_sec (throughput) or server_cpu_us_per_op \
             (server-cpu), the metrics a known slowdown moves by a known amount; found \"{other}\""
        ))),
    }
}

/// What a validation runs.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidateOptions {
    /// The `resplab` executable whose `serve` is the server.
    pub exe: PathBuf,
    /// Trial lengths given (the shortest, at most 1 s, is used) and the wall-time budget.
    pub durations: Vec<Duration>,
    pub budget: Duration,
    /// Experiments per error-rate check and rounds of each.
    pub k: usize,
    pub rounds: u32,
    pub seed: Option<u64>,
    /// How each experiment runs and is judged, and the metric it compares (one of
    /// [`METRICS`]).
    pub method: Method,
    pub metric: &'static str,
}

/// A validation ready to run: the checks' size within the budget.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidatePlan {
    pub options: ValidateOptions,
    pub trial_sec: f64,
    /// Experiments per check the budget holds (at most `options.k`).
    pub k: usize,
}

/// Sizes a validation to its budget.
///
/// # Errors
/// Too few rounds, K of 0, or a budget that holds fewer than 10 experiments per check
/// (or all of a smaller K).
pub fn plan(o: ValidateOptions) -> Result<ValidatePlan, CalibrateError> {
    if o.rounds < MIN_ROUNDS {
        return Err(CalibrateError::Invalid(format!(
            "--validate-rounds: expected at least {MIN_ROUNDS}, found {}",
            o.rounds
        )));
    }
    if o.k == 0 {
        return Err(CalibrateError::Invalid(
            "--validate-k: expected at least 1, found 0".into(),
        ));
    }
    let trial = o
        .durations
        .first()
        .map_or(0.25, |d| d.as_secs_f64())
        .min(1.0);
    if o.method == Method::Duet {
        super::duet_cpus(&crate::duet::allowed_cpus())?;
    }
    // A duet round runs both trials at once, after a shared start a little ahead.
    let (in_sequence, lead) = match o.method {
        Method::Duet => (1.0, crate::duet::START_LEAD.as_secs_f64()),
        Method::Rmit | Method::UntilDecided => (2.0, 0.0),
    };
    let per_exp =
        |r: u32| f64::from(r) * (in_sequence * (trial + 0.2 + GUESS_OVERHEAD_SEC + 0.15) + lead);
    let spare = o.budget.as_secs_f64() - CO_SEC;
    let k = ((spare / (2.0 * per_exp(o.rounds))).floor().max(0.0) as usize).min(o.k);
    // At least 10 experiments per check (or all of a smaller --validate-k).
    let least = o.k.min(10);
    if k < least {
        return Err(CalibrateError::Invalid(format!(
            "--budget {}: too short for --validate: it needs about {} for {least} experiments per check of {} rounds x {} trials (more with --validate-k {})",
            secs_text(o.budget.as_secs_f64()),
            secs_text(CO_SEC + 2.0 * least as f64 * per_exp(o.rounds)),
            o.rounds,
            secs_text(trial),
            o.k
        )));
    }
    Ok(ValidatePlan {
        options: o,
        trial_sec: trial,
        k,
    })
}

/// Runs a validation into `store`, stores what it found and returns it with its id;
/// `None` when `stop` ended it early (the experiments so far are stored). `say` hears
/// what it is doing.
///
/// # Errors
/// An experiment that fails, a store that cannot be written, a coordinated-omission run
/// that cannot be made.
pub fn run(
    p: &ValidatePlan,
    store: &mut Store,
    stop: &StopToken,
    say: &mut dyn FnMut(String),
) -> Result<Option<(Validation, i64)>, CalibrateError> {
    let (trial, rounds, k) = (p.trial_sec, p.options.rounds, p.k);
    let stamp = resplab_store::write::now_unix_ms();
    let seed = p.options.seed.unwrap_or(stamp);
    let exe = shell_join(&[p.options.exe.display().to_string()]);
    let (method, metric) = (p.options.method, p.options.metric);
    let mut names = Vec::new();
    let mut run_one = |name: String, rounds: u32, seed: u64, extra: &str, m: Method| {
        let shape = Shape {
            rounds,
            trial,
            seed,
            method: m,
            metric,
        };
        let (exp, text) = serve_experiment(&exe, &name, &shape, extra);
        let d = run_pairs(store, &exp, &text, stop)?;
        names.push(name);
        Ok::<_, CalibrateError>(d)
    };
    let throughput = metric == METRICS[0];
    let judge = Judge::of(method, throughput);
    // 1. False positives: A/A, judged as the method judges.
    let Some((fp, aa)) = false_positives_of(k, rounds, seed, stamp, &judge, &mut run_one, say)?
    else {
        return Ok(None);
    };
    // 2. The noise of this set-up, from the A/A rounds, and the MDE it predicts.
    let noise = noise_and_mde(&aa, p)?;
    say(noise.line(aa.iter().map(Vec::len).sum()));
    let mde = noise.mde;
    // A slowdown of x = e^MDE − 1 lowers throughput to 1/(1 + x) and raises the CPU per
    // request to 1 + x: the true effect is ∓MDE on the log scale.
    let slowdown_pct = 100.0 * mde.exp_m1();
    let true_log = if throughput { -mde } else { mde };
    let true_effect_pct = 100.0 * true_log.exp_m1();
    // 3. Power and coverage at the predicted MDE.
    let series = PowerSeries {
        k,
        rounds,
        seed,
        stamp,
        slowdown_pct,
        true_log,
    };
    let Some(found) = power_and_coverage(&series, p, &judge, &mut run_one, say)? else {
        return Ok(None);
    };
    let expected_power = found.expected_power(true_log);
    say(format!(
        "noise of the slowed experiments: sd {:.2}% (the A/A experiments': {:.2}%){}",
        100.0 * found.sd,
        100.0 * noise.sd,
        expected_power.map_or(String::new(), |e| format!(
            "; it predicts a power of {:.1}% at the {true_effect_pct:.2}% effect",
            100.0 * e
        ))
    ));
    // 4. Coordinated omission.
    say("coordinated omission: open loop against 100 ms stalls every second".into());
    let co = super::co::check()?;
    let [false_positives, power, coverage] =
        rate_checks(k, fp, found.detected, found.covered, true_effect_pct);
    let v = Validation {
        schema_version: CALIBRATION_SCHEMA_VERSION,
        hostname: resplab_engine::host::detect().hostname,
        trial_sec: trial,
        rounds,
        method,
        metric: metric.to_string(),
        until_rule: (method == Method::UntilDecided).then(UntilRule::default),
        sd_log_ratio: noise.sd,
        robust_sd_log_ratio: Some(noise.robust),
        predicted_mde_pct: 100.0 * mde.exp_m1(),
        slowed_sd_log_ratio: found.sd.is_finite().then_some(found.sd),
        slowed_robust_sd_log_ratio: found.noise.as_ref().map(|n| n.robust),
        expected_power,
        slowdown_pct,
        true_effect_pct,
        false_positives,
        power,
        coverage,
        co_pass: co.iter().all(|c| c.3),
        coordinated_omission: co,
        experiments: names,
    };
    let id = insert(store, &v)?;
    Ok(Some((v, id)))
}

/// Stores a validation under [`VALIDATION_KEY`] with its metric; its id.
fn insert(store: &mut Store, v: &Validation) -> Result<i64, CalibrateError> {
    Ok(store.insert_calibration(&NewCalibration {
        hostname: v.hostname.clone(),
        target: "resplab serve (calibrate --validate)".into(),
        workload_key: VALIDATION_KEY.into(),
        workload_name: format!("validate {}", v.method.name()),
        metric: v.metric.clone(),
        result: serde_json::to_value(v)?,
    })?)
}

/// The A/A noise of this set-up: the standard deviation of its log ratios, their robust
/// scale, and the MDE the method's scale predicts for the plan's rounds.
struct NoiseFound {
    sd: f64,
    robust: f64,
    /// Log scale.
    mde: f64,
}

impl NoiseFound {
    /// The progress line of the noise found in `rounds` A/A rounds.
    fn line(&self, rounds: usize) -> String {
        format!(
            "noise of the {rounds} A/A rounds: sd {:.2}%, robust {:.2}%; predicted MDE {:.2}%",
            100.0 * self.sd,
            100.0 * self.robust,
            100.0 * self.mde.exp_m1()
        )
    }
}

/// The noise of the A/A experiments' per-round log ratios `aa` (one list per
/// experiment), each experiment taken about its own centre so that only the spread an
/// experiment's interval sees is counted: the pooled within-experiment standard
/// deviation, the robust scale (the sd without wild rounds, [`resplab_stats::scale::clipped_sd`])
/// of the rounds less their experiment's median, and
/// the MDE the method's scale of the two predicts for the plan.
///
/// # Errors
/// No usable noise figure (too few rounds).
fn noise_and_mde(aa: &[Vec<f64>], p: &ValidatePlan) -> Result<NoiseFound, CalibrateError> {
    let (rounds, method) = (p.options.rounds, p.options.method);
    let sd = pooled_sd(aa);
    let mut centred = Vec::new();
    for d in aa.iter().filter(|d| d.len() >= 2) {
        let median = resplab_stats::describe::median(d).unwrap_or(0.0);
        centred.extend(d.iter().map(|x| x - median));
    }
    let robust = resplab_stats::scale::clipped_sd(&centred, resplab_stats::scale::WILD_SDS)
        .filter(|q| *q > 0.0)
        .unwrap_or(sd);
    let scale = super::noise::judged_scale(method, sd, robust);
    let judged = super::noise::judged(method);
    let Some(mde_pct) = judged.mde_pct(rounds as usize, scale) else {
        return Err(CalibrateError::Invalid(format!(
            "the A/A experiments of resplab serve gave no usable noise figure (sd {sd}, robust {robust}) for {rounds} rounds {}",
            method.name()
        )));
    };
    Ok(NoiseFound {
        sd,
        robust,
        mde: (mde_pct / 100.0).ln_1p(),
    })
}

/// The pooled within-experiment standard deviation of per-round log ratios (one list
/// per experiment, each taken about its own mean; lists of fewer than two rounds add
/// nothing); NaN when there is nothing to pool.
fn pooled_sd(groups: &[Vec<f64>]) -> f64 {
    let (mut ss, mut df) = (0.0, 0usize);
    for d in groups.iter().filter(|d| d.len() >= 2) {
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        ss += d.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
        df += d.len() - 1;
    }
    if df > 0 {
        (ss / df as f64).sqrt()
    } else {
        f64::NAN
    }
}

/// Runs one experiment of the validation: its name, rounds, seed, the extra flags of
/// its variant's server and its method; `None` when stopped.
type RunOne<'a> =
    dyn FnMut(String, u32, u64, &str, Method) -> Result<Option<Vec<f64>>, CalibrateError> + 'a;

/// How an experiment's per-round log ratios are judged.
struct Judge {
    method: Method,
    cfg: CompareConfig,
}

/// What one experiment claimed: the sign of a difference it claimed (`None`: none) and
/// its interval at the end, log scale.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Claim {
    sign: Option<f64>,
    low: f64,
    high: f64,
}

impl Judge {
    /// The judge of `method` for throughput (higher is better) or server CPU per request.
    fn of(method: Method, throughput: bool) -> Judge {
        let direction = match throughput {
            true => Direction::HigherIsBetter,
            false => Direction::LowerIsBetter,
        };
        Judge {
            method,
            cfg: CompareConfig::new(direction),
        }
    }

    /// The claim of per-round log ratios `d` (in round order): the paired verdict of all
    /// of them, or the confidence sequence at its first decision (where a run until
    /// decided stops) or at the last round. `None` when there are too few rounds.
    fn claim(&self, d: &[f64]) -> Option<Claim> {
        match self.method {
            Method::Rmit | Method::Duet => {
                let c = paired_from_log_ratios(d, &self.cfg).ok()?;
                let sign = matches!(c.verdict, Verdict::Better | Verdict::Worse)
                    .then(|| c.effect_pct.signum());
                Some(Claim {
                    sign,
                    low: (c.ci_low_pct / 100.0).ln_1p(),
                    high: (c.ci_high_pct / 100.0).ln_1p(),
                })
            }
            Method::UntilDecided => {
                // The rule of a new run until decided, planned for the rounds run.
                let rule = crate::sequential::rule(&UntilDecided {
                    max_rounds: Some(d.len() as u32),
                    max_time_sec: None,
                    rule: UntilRule::default(),
                });
                let (look, decision) = replay(&rule, d)?;
                let sign = match decision {
                    Decision::Higher => Some(1.0),
                    Decision::Lower => Some(-1.0),
                    _ => None,
                };
                Some(Claim {
                    sign,
                    low: look.low,
                    high: look.high,
                })
            }
        }
    }
}

/// The per-round log ratios of each A/A experiment, in run order.
type AaRounds = Vec<Vec<f64>>;

/// How many of `k` A/A experiments claimed a difference, and each one's per-round log
/// ratios; `None` when stopped.
fn false_positives_of(
    k: usize,
    rounds: u32,
    seed: u64,
    stamp: u64,
    judge: &Judge,
    run_one: &mut RunOne<'_>,
    say: &mut dyn FnMut(String),
) -> Result<Option<(usize, AaRounds)>, CalibrateError> {
    let mut fp = 0;
    let mut rounds_seen = Vec::with_capacity(k);
    for i in 0..k {
        let name = format!("calibrate-{stamp}-validate-aa-{i}");
        let seed = seed.wrapping_add(1 + i as u64);
        let Some(d) = run_one(name, rounds, seed, "", judge.method)? else {
            return Ok(None);
        };
        if judge.claim(&d).is_some_and(|c| c.sign.is_some()) {
            fp += 1;
        }
        rounds_seen.push(d);
        say(format!(
            "false positives: {}/{k} experiments, {fp} claimed a difference",
            i + 1
        ));
    }
    Ok(Some((fp, rounds_seen)))
}

/// The power experiments: `k` of them with the server slowed by `slowdown_pct`.
struct PowerSeries {
    k: usize,
    rounds: u32,
    seed: u64,
    stamp: u64,
    slowdown_pct: f64,
    /// The true effect on the metric, log scale.
    true_log: f64,
}

/// What the power experiments found: how many detected the slowdown, how many
/// intervals covered the true effect, and the pooled sd of their rounds.
struct PowerFound {
    detected: usize,
    covered: usize,
    sd: f64,
    /// The slowed experiments' own noise (each about its own centre, so without the
    /// effect) and the MDE it gives for the plan; `None` when too few rounds ran.
    noise: Option<NoiseFound>,
}

impl PowerFound {
    /// The power the slowed experiments' own noise predicts at the true effect
    /// `true_log`.
    fn expected_power(&self, true_log: f64) -> Option<f64> {
        let mde = self.noise.as_ref()?.mde;
        let p = resplab_stats::power::power_at(true_log, mde, &Default::default());
        p.is_finite().then_some(p)
    }
}

/// Runs the power experiments; `None` when stopped.
fn power_and_coverage(
    p: &PowerSeries,
    plan: &ValidatePlan,
    judge: &Judge,
    run_one: &mut RunOne<'_>,
    say: &mut dyn FnMut(String),
) -> Result<Option<PowerFound>, CalibrateError> {
    let PowerSeries {
        k,
        rounds,
        seed,
        stamp,
        slowdown_pct,
        true_log,
    } = *p;
    let true_effect_pct = 100.0 * true_log.exp_m1();
    let (mut detected, mut covered) = (0, 0);
    let mut seen = Vec::with_capacity(k);
    let extra = format!(" --slowdown {slowdown_pct:.4}");
    for i in 0..k {
        let name = format!("calibrate-{stamp}-validate-power-{i}");
        let seed = seed.wrapping_add(1000 + i as u64);
        let Some(d) = run_one(name, rounds, seed, &extra, judge.method)? else {
            return Ok(None);
        };
        if let Some(c) = judge.claim(&d) {
            if c.sign == Some(true_log.signum()) {
                detected += 1;
            }
            if c.low <= true_log && true_log <= c.high {
                covered += 1;
            }
        }
        say(format!(
            "power: {}/{k} experiments, {detected} detected the {true_effect_pct:.2}% effect",
            i + 1
        ));
        seen.push(d);
    }
    Ok(Some(PowerFound {
        detected,
        covered,
        sd: pooled_sd(&seen),
        noise: noise_and_mde(&seen, plan).ok(),
    }))
}

/// The band a false-positive rate passes in (nominal 5 %).
pub const FP_BAND: (f64, f64) = (0.02, 0.07);
/// The band the power at the predicted MDE passes in (nominal 80 %): below, the
/// prediction promised too much; above, it wasted budget.
pub const POWER_BAND: (f64, f64) = (0.70, 0.90);

/// The three error-rate checks of `k` experiments each: false positives of the A/A
/// experiments (nominal 5 %), power (80 %) and coverage (95 %) of those with a true
/// effect of `true_effect_pct`.
fn rate_checks(
    k: usize,
    fp: usize,
    detected: usize,
    covered: usize,
    true_effect_pct: f64,
) -> [RateCheck; 3] {
    [
        rate_check(
            "false positives",
            fp,
            k,
            0.05,
            &|r, _, _| (FP_BAND.0..=FP_BAND.1).contains(&r),
            "share of A/A experiments that claimed a difference; passes within [2 %, 7 %] (nominal 5 %)".into(),
        ),
        rate_check(
            "power",
            detected,
            k,
            0.80,
            &|r, _, _| (POWER_BAND.0..=POWER_BAND.1).contains(&r),
            format!("share of experiments with a true {true_effect_pct:.2}% effect (the predicted MDE) that found it; passes within [70 %, 90 %] (nominal 80 %)"),
        ),
        rate_check(
            "coverage",
            covered,
            k,
            0.95,
            &|r, lo, hi| r >= 0.95 || (lo <= 0.95 && 0.95 <= hi),
            "share of those experiments whose interval held the true effect; passes at 95 % or more, or when its interval holds the nominal 95 %".into(),
        ),
    ]
}

/// One error-rate check: `hits` of `k`, its 95 % interval, and whether `pass` accepts
/// (rate, low, high).
pub fn rate_check(
    name: &str,
    hits: usize,
    k: usize,
    nominal: f64,
    pass: &dyn Fn(f64, f64, f64) -> bool,
    detail: String,
) -> RateCheck {
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
}

/// The shape of one validation experiment.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// Rounds (fixed), or the most rounds of a run until decided.
    rounds: u32,
    trial: f64,
    seed: u64,
    method: Method,
    metric: &'static str,
}

/// An experiment of two `resplab serve` variants (the second with `extra` flags), the
/// saturating workload that makes a slowdown exact; and its definition as the store
/// keeps it.
fn serve_experiment(exe: &str, name: &str, s: &Shape, extra: &str) -> (Experiment, String) {
    let a = format!("{exe} serve --port {{port}} --work-ns 2000");
    let b = format!("{exe} serve --port {{port}} --work-ns 2000{extra}");
    let (rounds, trial, seed, metric) = (s.rounds, s.trial, s.seed, s.metric);
    let (limits, until_decided) = match s.method {
        Method::Rmit => (format!("rounds = {rounds}"), None),
        Method::Duet => (format!("rounds = {rounds}\norder = \"duet\""), None),
        Method::UntilDecided => (
            format!("until = \"decided\"\nmax_rounds = {rounds}"),
            Some(UntilDecided {
                max_rounds: Some(rounds),
                max_time_sec: None,
                rule: UntilRule::default(),
            }),
        ),
    };
    let text = format!(
        "[experiment]\nname = {}\n{limits}\ntest_time = \"{trial}s\"\nwarmup = \"200ms\"\nseed = {seed}\nprimary_metric = \"{metric}\"\n# One client thread saturates the server (where a slowdown is exact); 2 us of work per\n# command makes the server, not the client, the bottleneck by far.\nclient_cpu_limit = 1.0\n\n[[variant]]\nname = \"a\"\nserver = {}\n\n[[variant]]\nname = \"b\"\nserver = {}\n\n[[workload]]\nname = \"set\"\ntests = \"set\"\nclients = 50\npipeline = 16\nthreads = 1\n",
        toml_string(name),
        toml_string(&a),
        toml_string(&b),
    );
    let variant = |name: &str, command: &str| {
        Variant::plain(
            name,
            ServerSource::Spawn {
                command: crate::words::split_words(command).unwrap_or_default(),
            },
        )
    };
    let exp = Experiment {
        name: name.into(),
        rounds,
        warmup: Duration::from_millis(200),
        order: match s.method {
            Method::Duet => Order::Duet,
            Method::Rmit | Method::UntilDecided => Order::Rmit,
        },
        seed,
        primary_metric: metric.into(),
        margin: None,
        max_reruns: 2,
        client_cpu_limit: 1.0,
        send_lag_limit: Duration::from_millis(10),
        ready_timeout: Duration::from_secs(10),
        cluster_wait: resplab_engine::DEFAULT_CLUSTER_WAIT,
        progress_commands: false,
        variants: vec![variant("a", &a), variant("b", &b)],
        workloads: vec![Workload {
            tests: resplab_workload::flags::TestList::of(vec![resplab_workload::TestName::Set]),
            pipeline: 16,
            clients: 50,
            ..Workload::plain("set", TrialBudget::TestTime(Duration::from_secs_f64(trial)))
        }],
        shared_server: None,
        before_phase: None,
        generators: Vec::new(),
        until_decided,
        perf: None,
        profile: None,
    };
    (exp, text)
}

/// Runs an experiment and returns its per-round log ratios b/a of its primary metric,
/// in round order; `None` when it was interrupted.
fn run_pairs(
    store: &mut Store,
    exp: &Experiment,
    text: &str,
    stop: &StopToken,
) -> Result<Option<Vec<f64>>, CalibrateError> {
    let outcome =
        runner::run(exp, text, store, stop, &mut |_: Event<'_>| {}).map_err(|source| {
            CalibrateError::Run {
                what: format!("experiment {}", exp.name),
                source: Box::new(source),
            }
        })?;
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
                    && o.metric == exp.primary_metric
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_power_reads_the_slowed_noise_back_at_the_true_effect() {
        // Ten experiments of ten rounds whose noise (about each one's centre) gives an
        // MDE for the plan; at that MDE the expected power is the 80 % it was made for,
        // at half of it far less, and without enough rounds there is none.
        let p = plan(options(3600, 40)).unwrap();
        let mut rng = resplab_results::fixture::Rng::new(5);
        let rounds: Vec<Vec<f64>> = (0..10)
            .map(|_| (0..10).map(|_| 0.03 * rng.normal() - 0.02).collect())
            .collect();
        let noise = noise_and_mde(&rounds, &p).unwrap();
        let mde = noise.mde;
        let found = PowerFound {
            detected: 0,
            covered: 0,
            sd: pooled_sd(&rounds),
            noise: Some(noise),
        };
        let at_mde = found.expected_power(-mde).unwrap();
        assert!((at_mde - 0.80).abs() < 1e-9, "{at_mde}");
        let at_half = found.expected_power(mde / 2.0).unwrap();
        assert!(at_half < 0.35, "{at_half}");
        let none = PowerFound {
            noise: None,
            ..found
        };
        assert_eq!(none.expected_power(mde), None);
    }

    #[test]
    fn the_typed_serve_experiment_is_its_stored_definition() {
        for (trial, extra, method, metric) in [
            (0.25, "", Method::Rmit, METRICS[0]),
            (1.0, " --slowdown 1.2345", Method::UntilDecided, METRICS[1]),
            (0.5, " --slowdown 2", Method::Duet, METRICS[1]),
        ] {
            let shape = Shape {
                rounds: 10,
                trial,
                seed: 9,
                method,
                metric,
            };
            let (exp, text) = serve_experiment("/x/resplab", "v-1", &shape, extra);
            let back = crate::resolve::parse("(v)", &text, &crate::Overrides::default()).unwrap();
            assert_eq!(exp, back);
        }
    }

    fn options(budget_s: u64, k: usize) -> ValidateOptions {
        ValidateOptions {
            exe: PathBuf::from("resplab"),
            durations: vec![Duration::from_millis(250)],
            budget: Duration::from_secs(budget_s),
            k,
            rounds: 10,
            seed: None,
            method: Method::Rmit,
            metric: METRICS[0],
        }
    }

    /// The noise of the A/A rounds is the spread within each experiment: an offset
    /// between experiments does not count, one wild round moves the robust scale little
    /// and the sd much, and each method is predicted by the scale its verdict follows.
    #[test]
    fn the_noise_is_the_spread_within_the_aa_experiments() {
        let spread = [-0.02, 0.01, 0.0, 0.03, -0.01, 0.02, -0.03, 0.0, 0.01, -0.01];
        let aa: AaRounds = (0..20)
            .map(|i| spread.iter().map(|x| x + 0.05 * f64::from(i % 3)).collect())
            .collect();
        let p = plan(options(100_000, 40)).unwrap();
        let calm = noise_and_mde(&aa, &p).unwrap();
        let sd = budget::sd(&spread).unwrap();
        assert!((calm.sd - sd).abs() < 1e-12, "{} {sd}", calm.sd);
        let mut wild = aa.clone();
        wild[3][4] = 0.6;
        let w = noise_and_mde(&wild, &p).unwrap();
        assert!(w.sd > 1.5 * calm.sd, "{} {}", w.sd, calm.sd);
        assert!(
            (w.robust / calm.robust - 1.0).abs() < 0.1,
            "{} {}",
            w.robust,
            calm.robust
        );
        // Fixed rounds: the robust scale; until decided: the sd, and a wider MDE.
        let until = plan(ValidateOptions {
            method: Method::UntilDecided,
            ..options(100_000, 40)
        })
        .unwrap();
        let u = noise_and_mde(&wild, &until).unwrap();
        assert!(u.mde > 1.3 * w.mde, "{} {}", u.mde, w.mde);
        assert!(noise_and_mde(&[vec![0.1]], &p).is_err());
    }

    /// The slowed experiments' noise is pooled as the A/A experiments' is: each about
    /// its own mean, so an effect (or a different one per experiment) is not counted.
    #[test]
    fn pooled_noise_leaves_out_each_experiments_centre() {
        let spread = [-0.02, 0.01, 0.0, 0.03, -0.01, 0.02, -0.03, 0.0, 0.01, -0.01];
        let shifted: Vec<Vec<f64>> = (0..8)
            .map(|i| {
                spread
                    .iter()
                    .map(|x| x - 0.05 - 0.01 * f64::from(i))
                    .collect()
            })
            .collect();
        let sd = budget::sd(&spread).unwrap();
        assert!((pooled_sd(&shifted) - sd).abs() < 1e-12);
        assert!(pooled_sd(&[vec![0.1], vec![]]).is_nan());
    }

    #[test]
    fn the_checks_take_what_the_budget_holds() {
        // Per experiment of 10 rounds: 10 x 2 x 0.75 s = 15 s, 30 s a pair of checks,
        // after the CO check's 10 s: (1000 − 10) / 30 = 33.
        let p = plan(options(1000, 40)).unwrap();
        assert_eq!((p.k, p.trial_sec), (33, 0.25));
        assert_eq!(plan(options(100_000, 40)).unwrap().k, 40);
        // A duet round runs both trials at once after a 0.7 s shared start: 10 x 1.45 s
        // per experiment, (1000 − 10) / 29 = 34 per check.
        let duet = plan(ValidateOptions {
            method: Method::Duet,
            ..options(1000, 40)
        });
        if crate::duet::allowed_cpus().len() >= 2 {
            assert_eq!(duet.unwrap().k, 34);
        } else {
            assert!(duet.unwrap_err().to_string().starts_with("--method duet: "));
        }
        let e = plan(options(100, 40)).unwrap_err().to_string();
        assert!(
            e.starts_with("--budget 100 s: too short for --validate"),
            "{e}"
        );
        let e = plan(ValidateOptions {
            rounds: 5,
            ..options(1000, 4)
        })
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "--validate-rounds: expected at least 6, found 5"
        );
    }

    #[test]
    fn a_rate_passes_when_its_interval_holds_the_nominal_rate() {
        let nominal = |_: f64, lo: f64, hi: f64| lo <= 0.05 && 0.05 <= hi;
        assert!(rate_check("fp", 2, 40, 0.05, &nominal, String::new()).pass);
        assert!(!rate_check("fp", 12, 40, 0.05, &nominal, String::new()).pass);
    }

    /// False positives pass within [2 %, 7 %] and power within [70 %, 90 %]; each rate
    /// keeps its exact interval.
    #[test]
    fn the_rates_pass_in_their_bands() {
        let pass = |fp, detected| {
            let [f, p, _] = rate_checks(40, fp, detected, 38, -3.0);
            (f.pass, p.pass)
        };
        assert_eq!(pass(2, 32), (true, true));
        assert_eq!(pass(0, 32), (false, true));
        assert_eq!(pass(3, 28), (false, true));
        assert_eq!(pass(1, 37), (true, false));
        assert_eq!(pass(1, 27), (true, false));
        let [f, ..] = rate_checks(40, 1, 32, 38, -3.0);
        assert!(f.ci_low < 0.025 && f.ci_high > 0.1, "{f:?}");
    }

    /// A run until decided claims at its first decision (where it would have stopped),
    /// even if later rounds would undo it; fixed rounds judge all of them at the end.
    #[test]
    fn each_method_claims_as_its_runs_stop() {
        let cfg = CompareConfig::new(Direction::HigherIsBetter);
        let seq = Judge {
            method: Method::UntilDecided,
            cfg,
        };
        let fixed = Judge {
            method: Method::Rmit,
            cfg,
        };
        // Twelve rounds clearly lower, then many around zero.
        let mut d: Vec<f64> = (0..12).map(|i| -0.1 + 0.002 * f64::from(i % 3)).collect();
        d.extend((0..60).map(|i| 0.05 * if i % 2 == 0 { 1.0 } else { -1.0 }));
        let c = seq.claim(&d).unwrap();
        assert_eq!(c.sign, Some(-1.0));
        assert!(c.high < 0.0, "{c:?}");
        assert_eq!(fixed.claim(&d).unwrap().sign, None);
        // Too few rounds: no interval.
        assert_eq!(seq.claim(&d[..2]), None);
        // A/A rounds: no claim, an interval around zero.
        let aa: Vec<f64> = (0..20).map(|i| 0.01 * f64::from(i % 5) - 0.02).collect();
        let c = seq.claim(&aa).unwrap();
        assert_eq!(c.sign, None);
        assert!(c.low < 0.0 && c.high > 0.0);
    }

    #[test]
    fn a_validation_compares_the_metrics_a_slowdown_moves() {
        assert_eq!(metric_named("throughput").unwrap(), "ops_per_sec");
        assert_eq!(metric_named("server-cpu").unwrap(), "server_cpu_us_per_op");
        assert_eq!(metric_named("server_cpu_us_per_op").unwrap(), METRICS[1]);
        let e = metric_named("p99_latency_ns").unwrap_err().to_string();
        assert!(
            e.starts_with("--metric: --validate compares ops_per_sec"),
            "{e}"
        );
        assert!(e.ends_with("found \"p99_latency_ns\""), "{e}");
    }
}
