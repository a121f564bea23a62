//! The noise of an A/A experiment and what follows from it: the noise at one trial
//! length ([`analyze`], from the counted trials in the store; [`noise_of`], from the
//! values alone), and the calibration of several lengths ([`summarize`]): the noise law
//! s_d(T) = a·T^(−b) fitted to them, the budget table, the cheapest plan, what 10 and 30
//! minutes can detect with each method, and whether the A/A verdicts found a difference
//! that should not be there.
//!
//! The noise of a length is the robust scale of its per-round log ratios (the standard
//! deviation of the rounds that are not wild, `resplab_stats::scale::clipped_sd`),
//! and the law, the table and the predictions of fixed and duet rounds follow it: one
//! round that a neighbour's burst threw far out would otherwise inflate the standard
//! deviation, and with it every MDE and budget. A run until decided is predicted by the
//! classical law: its interval is as wide as the rounds' standard deviation. The classical standard deviation and the
//! law fitted to it are kept and shown beside, so that a gap between the two says the
//! rounds have outliers.

use super::plan::plan_row;
use super::{CalibrateError, VARIANTS};
use crate::{Experiment, Order, ServerSource};
use resplab_results::calibration::{
    secs_text, Calibration, Method, Noise, Prediction, CALIBRATION_SCHEMA_VERSION,
};
use resplab_stats::budget::{self, Judged, NoiseModel, Plan};
use resplab_stats::power::PowerSpec;
use resplab_stats::verdict::{paired_from_log_ratios, CompareConfig, Direction, Verdict};
use resplab_store::{Store, ALL_COMMANDS};
use std::time::Duration;

/// The noise of one A/A experiment, from its counted trials in the store.
///
/// # Errors
/// The experiment or its trials cannot be read from the store.
pub fn analyze(
    store: &Store,
    exp: &Experiment,
    trial: Duration,
    wall_sec: f64,
    direction: Direction,
) -> Result<Noise, CalibrateError> {
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
    let mut in_order = trials.clone();
    in_order.sort_by_key(|t| (t.started_at_unix_ms, t.id));
    let counted: Vec<(String, u32, f64)> = in_order
        .iter()
        .filter_map(|t| Some((t.variant.clone(), t.round, value_of(t.id)?)))
        .collect();
    let mut n = noise_of(&counted, exp.rounds, direction);
    n.trial_sec = trial.as_secs_f64();
    n.experiment = exp.name.clone();
    n.wall_sec = wall_sec;
    // The cost beyond its measured time of each trial run in sequence (a duet's two
    // trials run at once and count as one).
    let in_sequence = measured_method(exp).trials_in_sequence() as f64;
    let n_trials = (trials.len() as f64 * in_sequence / 2.0).max(1.0);
    n.overhead_sec = ((wall_sec - n_trials * trial.as_secs_f64()) / n_trials).max(0.0);
    Ok(n)
}

/// The noise of the counted trials of an A/A experiment of `rounds` rounds, each as
/// (variant, round, value) in run order: each arm's spread and drift, the per-round log
/// ratio of the two arms, its outliers and the A/A verdict. Length, name and wall time
/// are left for the caller.
pub fn noise_of(counted: &[(String, u32, f64)], rounds: u32, direction: Direction) -> Noise {
    let arm = |name: &str| -> Vec<f64> {
        counted
            .iter()
            .filter(|c| c.0 == name)
            .map(|c| c.2)
            .collect()
    };
    let (va, vb) = (arm(VARIANTS[0]), arm(VARIANTS[1]));
    let mut pairs: Vec<(u32, f64, f64)> = Vec::new();
    for r in 0..rounds {
        let find = |name: &str| {
            counted
                .iter()
                .find(|c| c.0 == name && c.1 == r)
                .map(|c| c.2)
        };
        if let (Some(x), Some(y)) = (find(VARIANTS[0]), find(VARIANTS[1])) {
            if x > 0.0 && y > 0.0 {
                pairs.push((r, x, y));
            }
        }
    }
    let d: Vec<f64> = pairs.iter().map(|(_, x, y)| (y / x).ln()).collect();
    let mut all: Vec<f64> = va.iter().chain(&vb).copied().collect();
    all.sort_by(f64::total_cmp);
    let median = if all.is_empty() {
        f64::NAN
    } else {
        all[all.len() / 2]
    };
    let aa = paired_from_log_ratios(&d, &CompareConfig::new(direction)).ok();
    Noise {
        trial_sec: 0.0,
        experiment: String::new(),
        rounds,
        pairs: d.len(),
        median,
        cv_a_pct: budget::cv(&va).map(|c| 100.0 * c),
        cv_b_pct: budget::cv(&vb).map(|c| 100.0 * c),
        sd_log_ratio: budget::sd(&d),
        robust_sd_log_ratio: resplab_stats::scale::clipped_sd(&d, resplab_stats::scale::WILD_SDS),
        lag1_ratio: budget::lag1_autocorrelation(&d),
        lag1_a: budget::lag1_autocorrelation(&va),
        lag1_b: budget::lag1_autocorrelation(&vb),
        outlier_rounds: budget::outliers(&d, resplab_stats::scale::OUTLIER_SDS)
            .into_iter()
            .map(|i| pairs[i].0)
            .collect(),
        wall_sec: 0.0,
        overhead_sec: 0.0,
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
    }
}

/// The noise law, the budget table and the findings of a calibration of `base`'s
/// workload `workload` against `target`.
pub fn summarize(
    base: &Experiment,
    workload: usize,
    target: &str,
    noise: Vec<Noise>,
    target_mde_pct: f64,
) -> Calibration {
    let measured = measured_method(base);
    let in_sequence = measured.trials_in_sequence();
    let model = noise_law(&noise);
    let mut overheads: Vec<f64> = noise.iter().map(|n| n.overhead_sec).collect();
    overheads.sort_by(f64::total_cmp);
    let overhead = overheads.get(overheads.len() / 2).copied().unwrap_or(0.0);
    let mut seconds: Vec<f64> = budget::TABLE_SECONDS.to_vec();
    seconds.extend(noise.iter().map(|n| n.trial_sec));
    let table: Vec<Plan> = if model.a.is_finite() {
        budget::budget_table(
            &model,
            overhead,
            in_sequence,
            &budget::TABLE_ROUNDS,
            &seconds,
            &PowerSpec::default(),
        )
    } else {
        Vec::new()
    };
    let cheapest = budget::cheapest(&table, target_mde_pct).map(plan_row);
    let classical = classical_law(&noise);
    let predictions = predictions(measured, &model, &classical, overhead, &seconds);
    let biased = bias(base, &noise);
    let w = &base.workloads[workload];
    Calibration {
        schema_version: CALIBRATION_SCHEMA_VERSION,
        hostname: resplab_engine::host::detect().hostname,
        target: target.to_string(),
        workload: w.name.clone(),
        workload_key: super::workload_key(w),
        metric: base.primary_metric.clone(),
        warmup_sec: base.warmup.as_secs_f64(),
        noise,
        noise_a: model.a,
        noise_b: model.b,
        classical_noise: Some((classical.a, classical.b)),
        overhead_sec: overhead,
        table: table.into_iter().map(plan_row).collect(),
        target_mde_pct,
        cheapest,
        biased,
        budget_note: None,
        predictions,
        method: measured,
    }
}

/// The method whose noise a calibration of `base` measures: duet rounds when its order
/// is `duet`, interleaved rounds otherwise.
pub fn measured_method(base: &Experiment) -> Method {
    if base.order == Order::Duet {
        Method::Duet
    } else {
        Method::Rmit
    }
}

/// The wall times calibrate predicts for: 10 and 30 minutes.
pub const PREDICTION_SECONDS: [f64; 2] = [600.0, 1800.0];

/// The noise-to-MDE law of a method.
pub fn judged(method: Method) -> Judged {
    match method {
        Method::Rmit => Judged::Fixed(PowerSpec::default()),
        // The rule of a new run until decided, planned for the plan's rounds.
        Method::UntilDecided => match crate::sequential::rule(&crate::UntilDecided {
            max_rounds: None,
            max_time_sec: None,
            rule: crate::UntilRule::default(),
        }) {
            crate::sequential::Rule::Spending(design) => Judged::Spending(design),
            crate::sequential::Rule::Anytime(cfg) => Judged::Sequential(cfg),
        },
        // Duet rounds are judged once, by the paired verdict, like fixed RMIT rounds.
        Method::Duet => Judged::Fixed(PowerSpec::default()),
    }
}

/// Of a classical noise figure `sd` and its robust counterpart `robust` (scales, or the
/// laws fitted to them), the one that sets how wide a method's verdict is: fixed and duet rounds are judged by the
/// rank-based paired verdict, which one outlying round does not widen, so the robust
/// scale; a run until decided is judged by an interval on the mean whose width is the
/// rounds' sample standard deviation, which an outlying round does widen, so the
/// standard deviation.
pub fn judged_scale<T>(method: Method, sd: T, robust: T) -> T {
    match method {
        Method::Rmit | Method::Duet => robust,
        Method::UntilDecided => sd,
    }
}

/// What 10 and 30 minutes can detect with each method the noise was measured for
/// (`measured`: interleaved rounds, fixed or until decided; or duet rounds): the best
/// plan over the trial lengths `seconds` by the law of the scale the method's verdict
/// is as wide as ([`judged_scale`]: the robust law `model` for fixed and duet rounds,
/// the classical law `classical` for runs until decided), and that plan's MDE by the
/// classical law.
pub fn predictions(
    measured: Method,
    model: &NoiseModel,
    classical: &NoiseModel,
    overhead: f64,
    seconds: &[f64],
) -> Vec<Prediction> {
    let mut out = Vec::new();
    let methods: &[Method] = match measured {
        Method::Duet => &[Method::Duet],
        Method::Rmit | Method::UntilDecided => &[Method::Rmit, Method::UntilDecided],
    };
    for &method in methods {
        let j = judged(method);
        let law = judged_scale(method, classical, model);
        for within in PREDICTION_SECONDS {
            let plan = law.a.is_finite().then(|| {
                let n = method.trials_in_sequence();
                budget::best_within(law, overhead, n, within, seconds, &j)
            });
            let plan = plan.flatten();
            let classical_mde_pct = plan.and_then(|p| {
                classical
                    .a
                    .is_finite()
                    .then(|| j.mde_pct(p.rounds, classical.sd_at(p.trial_sec)))
                    .flatten()
            });
            out.push(Prediction {
                method,
                within_sec: within,
                plan: plan.map(plan_row),
                classical_mde_pct,
            });
        }
    }
    out
}

/// s_d(T) = a·T^(−b) fitted to the robust scale of the lengths that have one (a length
/// whose robust scale is 0, most rounds tied, counts with its standard deviation); `a` is
/// NaN when there is nothing to fit.
pub fn noise_law(noise: &[Noise]) -> NoiseModel {
    fit(noise, |n| {
        n.robust_sd_log_ratio
            .filter(|s| *s > 0.0)
            .or(n.sd_log_ratio)
    })
}

/// The same law fitted to the classical standard deviations.
pub fn classical_law(noise: &[Noise]) -> NoiseModel {
    fit(noise, |n| n.sd_log_ratio)
}

fn fit(noise: &[Noise], scale: impl Fn(&Noise) -> Option<f64>) -> NoiseModel {
    let points: Vec<(f64, f64)> = noise
        .iter()
        .filter_map(|n| scale(n).map(|s| (n.trial_sec, s)))
        .collect();
    NoiseModel::fit(&points).unwrap_or(NoiseModel {
        a: f64::NAN,
        b: 0.0,
    })
}

/// When an A/A comparison claimed a difference: what it means, with what in this set-up
/// can make two copies of one variant differ.
fn bias(base: &Experiment, noise: &[Noise]) -> Option<String> {
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
    if different.is_empty() {
        return None;
    }
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
    let general = "with 5 % false positives per comparison this happens by chance in \
         about 1 of 20 lengths, more often it means a biased set-up: an order effect (the \
         first trial of a round warms caches the second inherits), a warm-up too short, \
         or a server that is not fresh for every trial (an address variant keeps its \
         state). Rerun; if it persists, lengthen --warmup, restart the server per trial, \
         or pin the server and the client to their own CPUs";
    Some(if suspects.is_empty() {
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (variant, round, value) of `rounds` rounds whose second arm is `ratio(r)` times
    /// the first.
    fn trials(rounds: u32, ratio: impl Fn(u32) -> f64) -> Vec<(String, u32, f64)> {
        (0..rounds)
            .flat_map(|r| {
                let a = 1000.0 + f64::from(r % 3);
                [
                    (VARIANTS[0].to_string(), r, a),
                    (VARIANTS[1].to_string(), r, a * ratio(r)),
                ]
            })
            .collect()
    }

    fn noise_at(trial_sec: f64, sd: f64) -> Noise {
        let mut n = noise_of(&trials(10, |_| 1.0), 10, Direction::HigherIsBetter);
        n.trial_sec = trial_sec;
        n.sd_log_ratio = Some(sd);
        n.robust_sd_log_ratio = Some(sd);
        n
    }

    #[test]
    fn the_noise_is_the_spread_of_the_per_round_log_ratio() {
        let wobble = [
            1.01, 0.99, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 0.99,
        ];
        let t = trials(12, |r| wobble[r as usize]);
        let n = noise_of(&t, 12, Direction::HigherIsBetter);
        assert_eq!(n.pairs, 12);
        let d: Vec<f64> = wobble.iter().map(|w| w.ln()).collect();
        assert_eq!(n.sd_log_ratio, budget::sd(&d));
        assert!(n.outlier_rounds.is_empty(), "{:?}", n.outlier_rounds);
        assert_ne!(n.aa_verdict, "DIFFERENT");
        assert!(n.cv_a_pct.unwrap() < 0.1);
    }

    #[test]
    fn a_round_missing_an_arm_is_no_pair_and_an_outlier_is_named_by_its_round() {
        let mut t = trials(12, |r| {
            if r == 7 {
                1.5
            } else {
                1.0 + f64::from(r % 4) * 0.002
            }
        });
        t.retain(|(v, r, _)| !(v == VARIANTS[1] && *r == 3));
        let n = noise_of(&t, 12, Direction::HigherIsBetter);
        assert_eq!(n.pairs, 11);
        assert_eq!(n.outlier_rounds, vec![7]);
    }

    #[test]
    fn too_few_pairs_give_no_verdict() {
        let n = noise_of(&trials(3, |_| 1.0), 3, Direction::HigherIsBetter);
        assert_eq!(n.aa_verdict, "NO VERDICT");
    }

    #[test]
    fn the_noise_law_is_fitted_through_the_lengths() {
        // sd = 0.02 · T^-0.5 at 0.5, 1 and 2 s.
        let noise: Vec<Noise> = [0.5f64, 1.0, 2.0]
            .iter()
            .map(|t| noise_at(*t, 0.02 * t.powf(-0.5)))
            .collect();
        let m = noise_law(&noise);
        assert!((m.a - 0.02).abs() < 1e-9, "{m:?}");
        assert!((m.b - 0.5).abs() < 1e-9, "{m:?}");
        // No length with a noise figure: nothing to fit.
        let mut none = noise_at(1.0, 0.0);
        none.sd_log_ratio = None;
        none.robust_sd_log_ratio = None;
        assert!(noise_law(&[none]).a.is_nan());
    }

    #[test]
    fn a_calibration_plans_the_cheapest_budget_for_the_target() {
        let base = super::super::setup::from_flags(&Default::default(), 1).unwrap();
        let noise: Vec<Noise> = [0.5f64, 1.0, 2.0]
            .iter()
            .map(|t| noise_at(*t, 0.01 * t.powf(-0.5)))
            .collect();
        let cal = summarize(&base, 0, "redis-server", noise, 1.0);
        assert!(!cal.table.is_empty());
        let cheapest = cal.cheapest.expect("a plan reaches 1 %");
        assert!(cheapest.mde_pct <= 1.0, "{cheapest:?}");
        // No plan of the table that reaches the target is cheaper.
        for p in cal.table.iter().filter(|p| p.mde_pct <= 1.0) {
            assert!(p.wall_sec >= cheapest.wall_sec, "{p:?} {cheapest:?}");
        }
        assert_eq!(cal.biased, None);
        assert_eq!(cal.workload, "calibrate");
        assert_eq!(cal.schema_version, CALIBRATION_SCHEMA_VERSION);
    }

    /// Per-round ratios with a seeded normal spread of `sd` (log scale) around 1.
    fn normal_ratios(rounds: u32, sd: f64, seed: u64) -> Vec<f64> {
        use rand::SeedableRng as _;
        use rand_distr::{Distribution as _, Normal};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let n = Normal::new(0.0, sd).unwrap();
        (0..rounds).map(|_| n.sample(&mut rng).exp()).collect()
    }

    /// One wild round (a neighbour's burst) leaves the noise law, the cheapest plan and
    /// the 10- and 30-minute predictions of fixed rounds nearly where they were; the
    /// classical sd, shown beside, is inflated, and so is the prediction of a run until
    /// decided, whose interval that round does widen.
    #[test]
    fn one_wild_round_leaves_the_plan_nearly_unchanged() {
        let base = super::super::setup::from_flags(&Default::default(), 1).unwrap();
        let lengths = [0.5f64, 1.0, 2.0];
        let calibrate = |wild: bool| {
            let noise: Vec<Noise> = lengths
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let mut r = normal_ratios(30, 0.02 * t.powf(-0.5), 7 + i as u64);
                    if wild && i == 1 {
                        r[17] = 1.6;
                    }
                    let mut n = noise_of(
                        &trials(30, |k| r[k as usize]),
                        30,
                        Direction::HigherIsBetter,
                    );
                    n.trial_sec = *t;
                    n.overhead_sec = 0.3;
                    n
                })
                .collect();
            summarize(&base, 0, "redis-server", noise, 2.0)
        };
        let (calm, wild) = (calibrate(false), calibrate(true));
        let sd = |c: &Calibration| c.noise[1].sd_log_ratio.unwrap();
        assert!(sd(&wild) > 3.0 * sd(&calm), "{} {}", sd(&wild), sd(&calm));
        let (a, b) = (calm.noise_a, wild.noise_a);
        assert!((b / a - 1.0).abs() < 0.15, "robust law {a} -> {b}");
        let (ca, cb) = (
            calm.classical_noise.unwrap().0,
            wild.classical_noise.unwrap().0,
        );
        assert!(cb > 1.5 * ca, "classical law {ca} -> {cb}");
        let (p, q) = (calm.cheapest.unwrap(), wild.cheapest.unwrap());
        assert!(q.wall_sec <= 1.5 * p.wall_sec, "{p:?} {q:?}");
        assert_eq!(calm.predictions.len(), 4);
        for (p, q) in calm.predictions.iter().zip(&wild.predictions) {
            let (m, n) = (p.plan.unwrap().mde_pct, q.plan.unwrap().mde_pct);
            match p.method {
                Method::Rmit => {
                    assert!((n / m - 1.0).abs() < 0.15, "{:?}: {m} -> {n}", p.method);
                    assert!(q.classical_mde_pct.unwrap() > n, "{q:?}");
                }
                _ => {
                    assert_eq!(p.method, Method::UntilDecided);
                    assert!(n > 1.3 * m, "until decided: {m} -> {n}");
                    assert!((q.classical_mde_pct.unwrap() - n).abs() < 1e-9, "{q:?}");
                }
            }
        }
    }

    #[test]
    fn a_difference_between_copies_is_a_finding_with_its_suspects() {
        let mut base = super::super::setup::from_flags(&Default::default(), 1).unwrap();
        base.order = Order::Fixed;
        let mut n = noise_at(1.0, 0.01);
        n.aa_verdict = "DIFFERENT".into();
        n.aa_effect_pct = Some(2.0);
        n.aa_ci_low_pct = Some(1.0);
        n.aa_ci_high_pct = Some(3.0);
        let why = bias(&base, &[n]).unwrap();
        assert!(
            why.contains("(1 s trials: +2.00 % [+1.00, +3.00])"),
            "{why}"
        );
        assert!(why.contains("the order is fixed"), "{why}");
        assert_eq!(bias(&base, &[noise_at(1.0, 0.01)]), None);
    }

    /// A duet calibration predicts duet's MDE only, and a duet round costs one trial: at
    /// the same noise, twice the rounds of interleaved ones in the same wall time.
    #[test]
    fn a_duet_calibration_predicts_duet_rounds() {
        let model = NoiseModel { a: 0.05, b: 0.5 };
        let rmit = predictions(Method::Rmit, &model, &model, 0.3, &[1.0]);
        let duet = predictions(Method::Duet, &model, &model, 0.3, &[1.0]);
        let methods = |p: &[Prediction]| p.iter().map(|p| p.method).collect::<Vec<_>>();
        assert_eq!(
            methods(&rmit),
            [
                Method::Rmit,
                Method::Rmit,
                Method::UntilDecided,
                Method::UntilDecided
            ]
        );
        assert_eq!(methods(&duet), [Method::Duet, Method::Duet]);
        let rounds = |p: &Prediction| p.plan.unwrap().rounds;
        // 600 s: 461 duet rounds of 1.3 s, 230 interleaved ones of 2.6 s.
        assert_eq!((rounds(&duet[0]), rounds(&rmit[0])), (461, 230));
        assert!(duet[0].plan.unwrap().mde_pct < rmit[0].plan.unwrap().mde_pct);
    }
}
