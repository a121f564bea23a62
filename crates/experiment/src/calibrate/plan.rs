//! Plans: how a calibration shares its wall-time budget among the trial lengths it
//! measures ([`steps`]), what a stored calibration predicts for a plan ([`predict`]),
//! and what it says about an experiment's plan before it runs ([`notes`]).

use super::{CalibrateError, Step, GUESS_OVERHEAD_SEC, MAX_ROUNDS, MIN_ROUNDS};
use crate::{Experiment, TrialBudget};
use resplab_results::calibration::{secs_text, Calibration, Method, PlanRow};
use resplab_stats::budget::{self, NoiseModel, Plan};
use resplab_stats::power::PowerSpec;
use resplab_store::Store;
use std::time::Duration;

/// Rounds for each trial length: the budget shared equally, at least [`MIN_ROUNDS`] and
/// at most [`MAX_ROUNDS`]; the longest lengths are dropped when the budget cannot hold
/// them. A trial is taken to cost its length, the warm-up and [`GUESS_OVERHEAD_SEC`].
///
/// # Errors
/// [`CalibrateError::Invalid`] (naming `--budget`) when not even the shortest length
/// fits [`MIN_ROUNDS`] rounds.
pub fn steps(
    base: &Experiment,
    durations: &[Duration],
    budget: Duration,
) -> Result<Vec<Step>, CalibrateError> {
    let overhead = GUESS_OVERHEAD_SEC + base.warmup.as_secs_f64();
    let per_round = |t: &Duration| round_sec(base, t.as_secs_f64(), overhead);
    let mut keep: Vec<Duration> = durations.to_vec();
    while !keep.is_empty() {
        let share = budget.as_secs_f64() / keep.len() as f64;
        let plans: Vec<Step> = keep
            .iter()
            .map(|t| {
                let r = (share / per_round(t)).floor();
                (*t, r.min(f64::from(MAX_ROUNDS)) as u32)
            })
            .collect();
        if plans.iter().all(|(_, r)| *r >= MIN_ROUNDS) {
            return Ok(plans);
        }
        keep.pop();
    }
    let shortest = durations.first().copied().unwrap_or(Duration::from_secs(1));
    let need = f64::from(MIN_ROUNDS) * per_round(&shortest);
    Err(CalibrateError::Invalid(format!(
        "--budget {}: too short for {MIN_ROUNDS} rounds of two {} trials; at least {} is needed",
        secs_text(budget.as_secs_f64()),
        secs_text(shortest.as_secs_f64()),
        secs_text(need.ceil())
    )))
}

/// The expected wall time of one A/A round of `base` with trials of `trial_sec` that
/// cost `overhead_sec` each beyond it: two trials one after the other, or a duet's two
/// at once after its shared start.
pub fn round_sec(base: &Experiment, trial_sec: f64, overhead_sec: f64) -> f64 {
    let method = super::noise::measured_method(base);
    let lead = match method {
        Method::Duet => crate::duet::START_LEAD.as_secs_f64(),
        Method::Rmit | Method::UntilDecided => 0.0,
    };
    method.trials_in_sequence() as f64 * (trial_sec + overhead_sec) + lead
}

/// A plan of the stats crate as the calibration stores it.
pub fn plan_row(p: Plan) -> PlanRow {
    PlanRow {
        rounds: p.rounds,
        trial_sec: p.trial_sec,
        mde_pct: p.mde_pct,
        wall_sec: p.wall_sec,
    }
}

/// The predicted MDE (percent) and wall time (seconds) of `rounds` rounds of `variants`
/// variants with trials of `trial_sec` (a duet calibration's two at once), by the
/// calibration's noise law.
pub fn predict(
    cal: &Calibration,
    rounds: u32,
    trial_sec: f64,
    variants: usize,
) -> Option<(f64, f64)> {
    let model = NoiseModel {
        a: cal.noise_a,
        b: cal.noise_b,
    };
    let mde = budget::mde_pct(
        rounds as usize,
        model.sd_at(trial_sec),
        &PowerSpec::default(),
    )?;
    // A duet's two variants run at once.
    let in_sequence = match cal.method {
        Method::Duet => 1,
        Method::Rmit | Method::UntilDecided => variants,
    };
    let wall = f64::from(rounds) * in_sequence as f64 * (trial_sec + cal.overhead_sec);
    Some((mde, wall))
}

/// What the newest matching calibration of this host says about an experiment's plan:
/// one line per workload with its predicted MDE, and a warning where the plan cannot
/// reach the experiment's margin. Nothing when no calibration matches.
pub fn notes(store: &Store, exp: &Experiment) -> Vec<String> {
    let host = resplab_engine::host::detect().hostname;
    let now = resplab_store::write::now_unix_ms() as i64;
    let mut out = Vec::new();
    for (i, w) in exp.workloads.iter().enumerate() {
        let key = super::workload_key(w);
        let Ok(Some(row)) = store.latest_calibration(&host, &key, &exp.primary_metric) else {
            continue;
        };
        let Ok(cal) = serde_json::from_value::<Calibration>(row.result.clone()) else {
            continue;
        };
        // Duet noise says nothing of interleaved rounds, nor the reverse.
        if cal.method != super::noise::measured_method(exp) {
            continue;
        }
        let trial_sec = match w.budget {
            TrialBudget::TestTime(d) => d.as_secs_f64(),
            TrialBudget::Requests(_) => crate::plan::estimate_trial(exp, i).as_secs_f64(),
        };
        let Some((mde, _)) = predict(&cal, exp.rounds, trial_sec, exp.variants.len()) else {
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
                out.push(margin_warning(&cal, exp, &w.name, trial_sec, mde, m));
            }
        }
    }
    out
}

/// The warning for a plan whose MDE is above the margin `m` (percent), with the rounds
/// that would reach it.
fn margin_warning(
    cal: &Calibration,
    exp: &Experiment,
    workload: &str,
    trial_sec: f64,
    mde: f64,
    m: f64,
) -> String {
    let variants = exp.variants.len();
    let need = (exp.rounds..=2000)
        .find(|n| predict(cal, *n, trial_sec, variants).is_some_and(|(x, _)| x <= m));
    let hint = match need {
        Some(n) => {
            let (_, wall) = predict(cal, n, trial_sec, variants).unwrap_or((0.0, 0.0));
            format!(
                "about {n} rounds of these trials would (about {} in all)",
                secs_text(wall)
            )
        }
        None => "longer trials or a quieter machine are needed".into(),
    };
    format!(
        "warning: workload {workload}: this plan cannot show equivalence within the margin of \
         ±{m}% (its MDE is {mde:.2}%); {hint}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(warmup_ms: u64) -> Experiment {
        let mut e = super::super::setup::from_flags(&Default::default(), 1).unwrap();
        e.warmup = Duration::from_millis(warmup_ms);
        e
    }

    fn secs(list: &[f64]) -> Vec<Duration> {
        list.iter().map(|s| Duration::from_secs_f64(*s)).collect()
    }

    #[test]
    fn the_budget_is_shared_equally_among_the_lengths() {
        // 300 s over three lengths: 100 s each, two trials per round of t + 0.35 s.
        let s = steps(
            &base(200),
            &secs(&[0.5, 1.0, 2.0]),
            Duration::from_secs(300),
        )
        .unwrap();
        assert_eq!(
            s,
            vec![
                (Duration::from_millis(500), 58),
                (Duration::from_secs(1), 37),
                (Duration::from_secs(2), 21),
            ]
        );
    }

    #[test]
    fn the_longest_lengths_go_first_when_the_budget_is_short() {
        // 30 s: three lengths get 10 s each (2 s trials: 2 rounds), two get 15 s (1 s
        // trials: 5 rounds), one gets all 30 s (0.5 s trials: 17 rounds).
        let s = steps(&base(200), &secs(&[0.5, 1.0, 2.0]), Duration::from_secs(30)).unwrap();
        assert_eq!(s, vec![(Duration::from_millis(500), 17)]);
    }

    #[test]
    fn a_duet_round_costs_one_trial_and_its_shared_start() {
        let mut b = base(200);
        b.order = crate::Order::Duet;
        // 30 s for one length: a round is 0.5 + 0.35 s and the 0.7 s start: 19 rounds.
        let s = steps(&b, &secs(&[0.5]), Duration::from_secs(30)).unwrap();
        assert_eq!(s, vec![(Duration::from_millis(500), 19)]);
        assert!((round_sec(&b, 1.0, 0.25) - 1.95).abs() < 1e-9);
        assert!((round_sec(&base(0), 1.0, 0.25) - 2.5).abs() < 1e-9);
    }

    #[test]
    fn rounds_stop_at_the_most_worth_running() {
        let s = steps(&base(0), &secs(&[0.5]), Duration::from_secs(3600)).unwrap();
        assert_eq!(s, vec![(Duration::from_millis(500), MAX_ROUNDS)]);
    }

    #[test]
    fn a_budget_too_short_says_what_is_needed() {
        let e = steps(&base(200), &secs(&[0.5, 1.0]), Duration::from_secs(2))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--budget 2 s: too short for 6 rounds of two 0.5 s trials; at least 11 s is needed"
        );
    }

    #[test]
    fn the_prediction_follows_the_noise_law() {
        let cal = |a: f64| Calibration {
            schema_version: 1,
            hostname: String::new(),
            target: String::new(),
            workload: String::new(),
            workload_key: String::new(),
            metric: "ops_per_sec".into(),
            warmup_sec: 0.2,
            noise: Vec::new(),
            noise_a: a,
            noise_b: 0.5,
            classical_noise: None,
            overhead_sec: 0.25,
            table: Vec::new(),
            target_mde_pct: 1.0,
            cheapest: None,
            biased: None,
            budget_note: None,
            predictions: Vec::new(),
            method: Method::Rmit,
        };
        let (mde, wall) = predict(&cal(0.01), 10, 1.0, 2).unwrap();
        assert_eq!(wall, 10.0 * 2.0 * 1.25);
        // Four times the trial length halves the noise (b = 0.5), and so the MDE.
        let (mde4, _) = predict(&cal(0.01), 10, 4.0, 2).unwrap();
        assert!((mde / mde4 - 2.0).abs() < 0.05, "{mde} {mde4}");
        // Twice the noise, about twice the MDE.
        let (mde2, _) = predict(&cal(0.02), 10, 1.0, 2).unwrap();
        assert!((mde2 / mde - 2.0).abs() < 0.05, "{mde} {mde2}");
        // A duet calibration: the two variants run at once, half the wall time.
        let duet = Calibration {
            method: Method::Duet,
            ..cal(0.01)
        };
        assert_eq!(predict(&duet, 10, 1.0, 2).unwrap(), (mde, 10.0 * 1.25));
    }
}
