//! `calibrate --validate`: the tool's own error rates, measured against known truth with
//! `resplab serve` as the server. An A/A calibration of serve gives the noise and the MDE
//! it predicts for the plan; then K A/A experiments measure the false-positive rate, K
//! experiments with a known `--slowdown` of the predicted MDE measure the power and the
//! coverage of the interval, and [`co`](super::co) the coordinated-omission correction.
//! Each rate comes with its Clopper–Pearson interval, and passes when the interval holds
//! the nominal rate.

use super::setup::{shell_join, toml_string};
use super::{CalibrateError, GUESS_OVERHEAD_SEC, MIN_ROUNDS};
use crate::runner::{self, Event};
use crate::{Experiment, Order, ServerSource, TrialBudget, Variant, Workload};
use resplab_engine::StopToken;
use resplab_results::calibration::{
    secs_text, RateCheck, Validation, CALIBRATION_SCHEMA_VERSION, VALIDATION_KEY,
};
use resplab_stats::budget;
use resplab_stats::verdict::{paired_from_log_ratios, CompareConfig, Direction, Verdict};
use resplab_store::{NewCalibration, Store, ALL_COMMANDS};
use std::path::PathBuf;
use std::time::Duration;

/// Rounds of the A/A calibration of serve.
const CAL_ROUNDS: u32 = 20;
/// Wall time the coordinated-omission check takes.
const CO_SEC: f64 = 10.0;

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
    let per_exp = |r: u32| f64::from(r) * 2.0 * (trial + 0.2 + GUESS_OVERHEAD_SEC + 0.15);
    let spare = o.budget.as_secs_f64() - per_exp(CAL_ROUNDS) - CO_SEC;
    let k = ((spare / (2.0 * per_exp(o.rounds))).floor().max(0.0) as usize).min(o.k);
    // At least 10 experiments per check (or all of a smaller --validate-k).
    let least = o.k.min(10);
    if k < least {
        return Err(CalibrateError::Invalid(format!(
            "--budget {}: too short for --validate: it needs about {} for {least} experiments per check of {} rounds x {} trials (more with --validate-k {})",
            secs_text(o.budget.as_secs_f64()),
            secs_text(per_exp(CAL_ROUNDS) + CO_SEC + 2.0 * least as f64 * per_exp(o.rounds)),
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
    let mut names = Vec::new();
    let mut run_one = |name: String, rounds: u32, seed: u64, extra: &str| {
        let (exp, text) = serve_experiment(&exe, &name, rounds, trial, seed, extra);
        let d = run_pairs(store, &exp, &text, stop)?;
        names.push(name);
        Ok::<_, CalibrateError>(d)
    };
    // 1. The noise of this set-up, and the MDE it predicts for the plan.
    let Some((sd, mde)) = noise_and_mde(stamp, seed, rounds, trial, &mut run_one, say)? else {
        return Ok(None);
    };
    // A slowdown of x makes throughput 1/(1 + x): the true effect is −MDE.
    let true_ratio = (-mde).exp();
    let slowdown_pct = 100.0 * (1.0 / true_ratio - 1.0);
    let true_effect_pct = 100.0 * (true_ratio - 1.0);
    let cfg = CompareConfig::new(Direction::HigherIsBetter);
    // 2. False positives: A/A.
    let Some(fp) = false_positives_of(k, rounds, seed, stamp, &cfg, &mut run_one, say)? else {
        return Ok(None);
    };
    // 3. Power and coverage at the predicted MDE.
    let series = PowerSeries {
        k,
        rounds,
        seed,
        stamp,
        slowdown_pct,
        true_effect_pct,
    };
    let Some((detected, covered)) = power_and_coverage(&series, &cfg, &mut run_one, say)? else {
        return Ok(None);
    };
    // 4. Coordinated omission.
    say("coordinated omission: open loop against 100 ms stalls every second".into());
    let co = super::co::check()?;
    let [false_positives, power, coverage] = rate_checks(k, fp, detected, covered, true_effect_pct);
    let v = Validation {
        schema_version: CALIBRATION_SCHEMA_VERSION,
        hostname: resplab_engine::host::detect().hostname,
        trial_sec: trial,
        rounds,
        sd_log_ratio: sd,
        predicted_mde_pct: 100.0 * mde.exp_m1(),
        slowdown_pct,
        true_effect_pct,
        false_positives,
        power,
        coverage,
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
    Ok(Some((v, id)))
}

/// The A/A noise of this set-up (the standard deviation of its log-ratios) and the MDE
/// it predicts for `rounds` rounds; `None` when stopped.
fn noise_and_mde(
    stamp: u64,
    seed: u64,
    rounds: u32,
    trial: f64,
    run_one: &mut RunOne<'_>,
    say: &mut dyn FnMut(String),
) -> Result<Option<(f64, f64)>, CalibrateError> {
    say(format!(
        "noise: A/A of resplab serve, {CAL_ROUNDS} rounds x {} trials",
        secs_text(trial)
    ));
    let Some(d) = run_one(
        format!("calibrate-{stamp}-validate-noise"),
        CAL_ROUNDS,
        seed,
        "",
    )?
    else {
        return Ok(None);
    };
    let sd = budget::sd(&d).unwrap_or(f64::NAN);
    let Some(mde) = resplab_stats::power::mde_signed_rank(rounds as usize, sd, 0.95, 0.80) else {
        return Err(CalibrateError::Invalid(format!(
            "the A/A calibration of resplab serve gave no usable noise figure (sd {sd})"
        )));
    };
    Ok(Some((sd, mde)))
}

/// Runs one experiment of the validation: its name, rounds, seed and the extra flags of
/// its variant's server; `None` when stopped.
type RunOne<'a> =
    dyn FnMut(String, u32, u64, &str) -> Result<Option<Vec<f64>>, CalibrateError> + 'a;

/// How many of `k` A/A experiments claimed a difference; `None` when stopped.
fn false_positives_of(
    k: usize,
    rounds: u32,
    seed: u64,
    stamp: u64,
    cfg: &CompareConfig,
    run_one: &mut RunOne<'_>,
    say: &mut dyn FnMut(String),
) -> Result<Option<usize>, CalibrateError> {
    let mut fp = 0;
    for i in 0..k {
        let name = format!("calibrate-{stamp}-validate-aa-{i}");
        let Some(d) = run_one(name, rounds, seed.wrapping_add(1 + i as u64), "")? else {
            return Ok(None);
        };
        if paired_from_log_ratios(&d, cfg)
            .is_ok_and(|c| matches!(c.verdict, Verdict::Better | Verdict::Worse))
        {
            fp += 1;
        }
        say(format!(
            "false positives: {}/{k} experiments, {fp} claimed a difference",
            i + 1
        ));
    }
    Ok(Some(fp))
}

/// The power experiments: `k` of them with the server slowed by `slowdown_pct`.
struct PowerSeries {
    k: usize,
    rounds: u32,
    seed: u64,
    stamp: u64,
    slowdown_pct: f64,
    true_effect_pct: f64,
}

/// How many of the power experiments detected the slowdown, and how many intervals
/// covered the true effect; `None` when stopped.
fn power_and_coverage(
    p: &PowerSeries,
    cfg: &CompareConfig,
    run_one: &mut RunOne<'_>,
    say: &mut dyn FnMut(String),
) -> Result<Option<(usize, usize)>, CalibrateError> {
    let PowerSeries {
        k,
        rounds,
        seed,
        stamp,
        slowdown_pct,
        true_effect_pct,
    } = *p;
    let (mut detected, mut covered) = (0, 0);
    let extra = format!(" --slowdown {slowdown_pct:.4}");
    for i in 0..k {
        let name = format!("calibrate-{stamp}-validate-power-{i}");
        let Some(d) = run_one(name, rounds, seed.wrapping_add(1000 + i as u64), &extra)? else {
            return Ok(None);
        };
        if let Ok(c) = paired_from_log_ratios(&d, cfg) {
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
    Ok(Some((detected, covered)))
}

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
            &|_, lo, hi| lo <= 0.05 && 0.05 <= hi,
            "share of A/A experiments that claimed a difference; passes when its interval holds the nominal 5 %".into(),
        ),
        rate_check(
            "power",
            detected,
            k,
            0.80,
            &|r, lo, hi| r >= 0.70 || (lo <= 0.80 && 0.80 <= hi),
            format!("share of experiments with a true {true_effect_pct:.2}% effect (the predicted MDE) that found it; passes at 70 % or when its interval holds the nominal 80 %"),
        ),
        rate_check(
            "coverage",
            covered,
            k,
            0.95,
            &|_, lo, hi| lo <= 0.95 && 0.95 <= hi,
            "share of those experiments whose interval held the true effect; passes when its interval holds the nominal 95 %".into(),
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

/// An experiment of two `resplab serve` variants (the second with `extra` flags), the
/// saturating workload that makes a slowdown exact; and its definition as the store
/// keeps it.
fn serve_experiment(
    exe: &str,
    name: &str,
    rounds: u32,
    trial: f64,
    seed: u64,
    extra: &str,
) -> (Experiment, String) {
    let a = format!("{exe} serve --port {{port}} --work-ns 2000");
    let b = format!("{exe} serve --port {{port}} --work-ns 2000{extra}");
    let text = format!(
        "[experiment]\nname = {}\nrounds = {rounds}\ntest_time = \"{trial}s\"\nwarmup = \"200ms\"\nseed = {seed}\nprimary_metric = \"ops_per_sec\"\n# One client thread saturates the server (where a slowdown is exact); 2 us of work per\n# command makes the server, not the client, the bottleneck by far.\nclient_cpu_limit = 1.0\n\n[[variant]]\nname = \"a\"\nserver = {}\n\n[[variant]]\nname = \"b\"\nserver = {}\n\n[[workload]]\nname = \"set\"\ntests = \"set\"\nclients = 50\npipeline = 16\nthreads = 1\n",
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
        order: Order::Rmit,
        seed,
        primary_metric: "ops_per_sec".into(),
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
        until_decided: None,
        perf: None,
        profile: None,
    };
    (exp, text)
}

/// Runs an experiment and returns its per-round log ratios b/a of ops/s; `None` when
/// it was interrupted.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_typed_serve_experiment_is_its_stored_definition() {
        for (trial, extra) in [(0.25, ""), (1.0, " --slowdown 1.2345")] {
            let (exp, text) = serve_experiment("/x/resplab", "v-1", 10, trial, 9, extra);
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
        }
    }

    #[test]
    fn the_checks_take_what_the_budget_holds() {
        // Per experiment of 10 rounds: 10 x 2 x 0.75 s = 15 s; the calibration 30 s and
        // the CO check 10 s come first.
        let p = plan(options(1000, 40)).unwrap();
        assert_eq!((p.k, p.trial_sec), (32, 0.25));
        assert_eq!(plan(options(100_000, 40)).unwrap().k, 40);
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
}
