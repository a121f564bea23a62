//! Calibration: this machine's noise, and the budget a verdict needs on it
//! (`resplab calibrate`).
//!
//! An A/A experiment — the same server twice, as two variants, in randomized interleaved
//! rounds, through the experiment [`runner`](crate::runner) and into the store — is run
//! at two or three trial lengths within a wall-time budget. From it: the noise of each
//! length ([`noise`]: per-trial CV of each arm, the standard deviation of the per-round
//! log ratio, lag-1 autocorrelations that show drift, outlier rounds), how that noise
//! shrinks with the trial length (the noise law), the budget table and the cheapest plan
//! that reaches the target MDE ([`plan`]); and the A/A verdict itself, which should find
//! no difference: when it does, the set-up is biased, and that is the finding. The
//! calibration is stored ([`resplab_results::calibration`]), and `experiment run` uses the
//! newest one matching its workload on this host to say what its plan can detect
//! ([`plan::notes`]). [`validate`] checks the tool's own error rates against known truth
//! with `resplab serve` as the server, [`co`] its coordinated-omission correction.
//!
//! The statistics are `resplab_stats::budget` (noise law, table) and the default paired
//! comparison (`resplab_stats::verdict`), the same one every verdict uses. Nothing here
//! prints: progress goes to a callback, and the caller renders the result
//! (`resplab_report::calibration`).

pub mod co;
pub mod flags;
pub mod noise;
pub mod plan;
pub mod setup;
pub mod stored;
pub mod validate;

use crate::runner::{self, Event, RunError};
use crate::{Experiment, SpecError};
use resplab_engine::StopToken;
use resplab_results::calibration::secs_text;
use resplab_results::calibration::Calibration;
use resplab_stats::verdict::Direction;
use resplab_store::{NewCalibration, Store, StoreError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use setup::{Setup, WorkloadFlags};

/// Fewest rounds an A/A experiment of one trial length is worth running (the paired
/// interval needs 6).
pub const MIN_ROUNDS: u32 = 6;
/// Most rounds of one trial length.
pub const MAX_ROUNDS: u32 = 200;
/// Assumed cost of a trial besides its measured time before anything was measured:
/// server start and readiness (the measured figure replaces it in the results).
pub const GUESS_OVERHEAD_SEC: f64 = 0.15;
/// Time kept back from `--budget` for stopping the trial under way, its server, and the
/// analysis.
const STOP_RESERVE: Duration = Duration::from_secs(3);
/// The two variants of the A/A experiment.
pub const VARIANTS: [&str; 2] = ["a", "a-again"];

/// Why a calibration could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    /// A flag or a set-up that cannot be calibrated; the message names the flag.
    #[error("{0}")]
    Invalid(String),
    /// The experiment file of `--experiment` (or the definition made from the flags).
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// An A/A experiment failed.
    #[error("{what}")]
    Run {
        what: String,
        #[source]
        source: Box<RunError>,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A stored calibration this build cannot read.
    #[error("{what}")]
    Stored {
        what: String,
        #[source]
        source: serde_json::Error,
    },
    /// The coordinated-omission check's server or run.
    #[error("{what}")]
    Check {
        what: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Refuses the duet method on a machine where this process may use fewer than two CPUs
/// (`allowed`): a duet needs two disjoint CPU sets.
///
/// # Errors
/// [`CalibrateError::Invalid`] naming `--method duet`.
pub fn duet_cpus(allowed: &[usize]) -> Result<(), CalibrateError> {
    if allowed.len() >= 2 {
        return Ok(());
    }
    Err(CalibrateError::Invalid(format!(
        "--method duet: a duet needs two disjoint CPU sets, one per server; this process may use {} CPU ({}); use --method rmit",
        allowed.len(),
        crate::words::cpu_list_text(allowed)
    )))
}

/// One A/A experiment of a calibration: its trial length and rounds.
pub type Step = (Duration, u32);

/// How a calibration ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Calibrated {
    /// The calibration, stored under this id.
    Done(Box<Calibration>, i64),
    /// The stop token ended this A/A experiment early: its trials so far are stored,
    /// nothing was calibrated.
    Interrupted { experiment: String },
}

/// Runs the A/A experiments of `setup`, one per planned step, into `store`; analyses
/// them, stores the calibration and returns it with its id. `on_event` sees every
/// runner event with the step it belongs to.
///
/// # Errors
/// An experiment that fails, a store that cannot be read or written.
pub fn run(
    setup: &Setup,
    store: &mut Store,
    stop: &StopToken,
    on_event: &mut dyn FnMut(&Step, Event<'_>),
) -> Result<Calibrated, CalibrateError> {
    // `--budget` is a hard limit, counted from the start of the set-up less what
    // stopping a trial and analysing the rounds take: a watch stops the A/A experiment
    // under way when it is reached, and what was measured by then is analysed.
    //
    // The analysis is kept back too: the MDE of a run until decided at the long plans of
    // the 30-minute prediction takes seconds to compute (a spending design over hundreds
    // of looks), more on a loaded machine; it is estimated here on the planned shape and
    // a quarter as much again is reserved, at most a quarter of the budget (a budget of
    // seconds, for a smoke test, would otherwise leave nothing to measure).
    let analysis = analysis_cost(setup).mul_f64(1.25).min(setup.budget / 4);
    let deadline = setup.started + setup.budget.saturating_sub(STOP_RESERVE + analysis);
    let step_stop = StopToken::new();
    let finished = AtomicBool::new(false);
    let budget_hit = AtomicBool::new(false);
    let measured = std::thread::scope(|scope| {
        scope.spawn(|| watch_budget(stop, &step_stop, deadline, &finished, &budget_hit));
        let mut steps = Steps {
            setup,
            deadline,
            stop: &step_stop,
            budget_hit: &budget_hit,
            found: Vec::new(),
            budget_note: None,
        };
        let result = steps.measure(store, on_event);
        finished.store(true, Ordering::SeqCst);
        result.map(|interrupted| (interrupted, steps.found, steps.budget_note))
    })?;
    let (found, budget_note) = match measured {
        (Some(interrupted), ..) => return Ok(interrupted),
        (None, found, note) => (found, note),
    };
    if found.is_empty() {
        return Err(CalibrateError::Invalid(format!(
            "--budget {}: reached before two rounds of the shortest trials were measured (their trials are stored); give a longer budget",
            secs_text(setup.budget.as_secs_f64())
        )));
    }
    let base = &setup.base;
    let mut cal = noise::summarize(
        base,
        setup.workload,
        &setup.target,
        found,
        setup.target_mde_pct,
    );
    cal.budget_note = budget_note;
    let id = store.insert_calibration(&NewCalibration {
        hostname: cal.hostname.clone(),
        target: cal.target.clone(),
        workload_key: cal.workload_key.clone(),
        workload_name: cal.workload.clone(),
        metric: cal.metric.clone(),
        result: serde_json::to_value(&cal)?,
    })?;
    Ok(Calibrated::Done(Box::new(cal), id))
}

/// The A/A experiments of a calibration, one trial length after the other, within the
/// budget: what each found, and what the budget cut short.
struct Steps<'a> {
    setup: &'a Setup,
    deadline: Instant,
    stop: &'a StopToken,
    budget_hit: &'a AtomicBool,
    found: Vec<resplab_results::calibration::Noise>,
    budget_note: Option<String>,
}

impl Steps<'_> {
    /// Runs the steps; `Some` when the user's stop ended one.
    fn measure(
        &mut self,
        store: &mut Store,
        on_event: &mut dyn FnMut(&Step, Event<'_>),
    ) -> Result<Option<Calibrated>, CalibrateError> {
        let base = &self.setup.base;
        let stamp = resplab_store::write::now_unix_ms();
        let direction = if resplab_store::metrics::higher_is_better(&base.primary_metric) {
            Direction::HigherIsBetter
        } else {
            Direction::LowerIsBetter
        };
        let mut overhead_sec = GUESS_OVERHEAD_SEC + base.warmup.as_secs_f64();
        for (i, planned) in self.setup.steps.iter().enumerate() {
            let Some(step) = self.replan(i, *planned, overhead_sec) else {
                break;
            };
            let (trial, rounds) = step;
            let exp = aa_experiment(base, self.setup.workload, trial, rounds, stamp, i);
            let header = format!(
                "# resplab calibrate: A/A of workload `{}` with {} x {} trials\n{}",
                base.workloads[self.setup.workload].name,
                rounds,
                secs_text(trial.as_secs_f64()),
                self.setup.text
            );
            let started = Instant::now();
            let mut fit = TrialFit::new(trial.as_secs_f64() + overhead_sec, self.deadline);
            let outcome = runner::run(&exp, &header, store, self.stop, &mut |ev| {
                if matches!(ev, Event::Stored { .. }) && !fit.next_fits(Instant::now()) {
                    self.budget_hit.store(true, Ordering::SeqCst);
                    self.stop.stop();
                }
                on_event(&step, ev)
            })
            .map_err(|source| CalibrateError::Run {
                what: format!("A/A experiment {}", exp.name),
                source: Box::new(source),
            })?;
            let by_budget = outcome.interrupted && self.budget_hit.load(Ordering::SeqCst);
            if outcome.interrupted && !by_budget {
                return Ok(Some(Calibrated::Interrupted {
                    experiment: exp.name,
                }));
            }
            let wall = started.elapsed().as_secs_f64();
            let n = noise::analyze(store, &exp, trial, wall, direction)?;
            overhead_sec = overhead_sec.max(n.overhead_sec);
            if by_budget {
                let when = if n.pairs >= rounds as usize {
                    "after"
                } else {
                    "during"
                };
                self.budget_note = Some(format!(
                    "the {} budget was reached {when} the {} trials: {} of {rounds} rounds measured{}",
                    secs_text(self.setup.budget.as_secs_f64()),
                    secs_text(trial.as_secs_f64()),
                    n.pairs,
                    if i + 1 < self.setup.steps.len() {
                        "; the longer lengths were not measured"
                    } else {
                        ""
                    }
                ));
                if n.pairs >= 2 {
                    self.found.push(n);
                }
                break;
            }
            self.found.push(n);
        }
        Ok(None)
    }

    /// Step `i`'s rounds, re-planned: the steps left share what is left of the budget at
    /// the trial cost measured so far. `None` (with the note said) when a later step no
    /// longer fits [`MIN_ROUNDS`] rounds; the first step always runs, with at least two.
    fn replan(&mut self, i: usize, planned: Step, overhead_sec: f64) -> Option<Step> {
        let (trial, planned_rounds) = planned;
        let left = self
            .deadline
            .saturating_duration_since(Instant::now())
            .as_secs_f64();
        let share = left / (self.setup.steps.len() - i) as f64;
        let round = plan::round_sec(&self.setup.base, trial.as_secs_f64(), overhead_sec);
        let fit = (share / round).floor().min(f64::from(MAX_ROUNDS)) as u32;
        if self.found.is_empty() {
            return Some((trial, planned_rounds.min(fit.max(2))));
        }
        if fit < MIN_ROUNDS {
            self.budget_note = Some(format!(
                "the {} budget left no room for {MIN_ROUNDS} rounds of the {} trials: that length was not measured",
                secs_text(self.setup.budget.as_secs_f64()),
                secs_text(trial.as_secs_f64())
            ));
            return None;
        }
        Some((trial, planned_rounds.min(fit)))
    }
}

/// How long the predictions of a calibration of `setup` take to compute, estimated on
/// its planned shape: the cost is that of the spending designs of the run-until-decided
/// predictions, one per plan, each growing with its looks. One design of
/// [`COST_PROBE_ROUNDS`] looks is timed on this machine now (its load included) and
/// scaled to each plan's rounds by (n / probe)^1.5 (measured growth: about n^1.3), with
/// the rounds the guessed trial cost gives (a higher real cost gives fewer rounds, a
/// cheaper analysis).
fn analysis_cost(setup: &Setup) -> Duration {
    let method = noise::measured_method(&setup.base);
    if method == resplab_results::calibration::Method::Duet {
        // Duet rounds are judged by the fixed-rounds verdict: nothing costly to compute.
        return Duration::ZERO;
    }
    let judged = noise::judged(resplab_results::calibration::Method::UntilDecided);
    let started = Instant::now();
    let _ = judged.mde_pct(COST_PROBE_ROUNDS, 0.1);
    let unit = started.elapsed().as_secs_f64();
    let overhead = GUESS_OVERHEAD_SEC + setup.base.warmup.as_secs_f64();
    let mut seconds = resplab_stats::budget::TABLE_SECONDS.to_vec();
    seconds.extend(setup.steps.iter().map(|(t, _)| t.as_secs_f64()));
    let mut total = 0.0;
    for within in noise::PREDICTION_SECONDS {
        for t in &seconds {
            let rounds = (within / plan::round_sec(&setup.base, *t, overhead)).floor();
            if rounds >= 2.0 {
                total += unit * (rounds / COST_PROBE_ROUNDS as f64).powf(1.5);
            }
        }
    }
    Duration::from_secs_f64(total)
}

/// Looks of the spending design timed by [`analysis_cost`].
const COST_PROBE_ROUNDS: usize = 200;

/// Whether one more trial fits before the deadline: after each stored trial, the next
/// one is expected to cost as much as the slowest so far (its server's start and stop
/// included), never less than the planned cost. A trial that would end past the
/// deadline is not begun, so the budget is not spent waiting for a trial that is then
/// thrown away.
struct TrialFit {
    slowest_sec: f64,
    since: Instant,
    deadline: Instant,
}

impl TrialFit {
    fn new(planned_sec: f64, deadline: Instant) -> Self {
        TrialFit {
            slowest_sec: planned_sec,
            since: Instant::now(),
            deadline,
        }
    }

    /// A trial was stored at `now`: whether the next fits.
    fn next_fits(&mut self, now: Instant) -> bool {
        let took = now.saturating_duration_since(self.since).as_secs_f64();
        self.slowest_sec = self.slowest_sec.max(took);
        self.since = now;
        now + Duration::from_secs_f64(self.slowest_sec) <= self.deadline
    }
}

/// Stops `step_stop` when `stop` is stopped or when `deadline` passes (then `hit` is
/// set), until `finished`.
fn watch_budget(
    stop: &StopToken,
    step_stop: &StopToken,
    deadline: Instant,
    finished: &AtomicBool,
    hit: &AtomicBool,
) {
    while !finished.load(Ordering::SeqCst) {
        if stop.is_stopped() {
            step_stop.stop();
            return;
        }
        if Instant::now() >= deadline {
            hit.store(true, Ordering::SeqCst);
            step_stop.stop();
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The A/A experiment of one trial length: the baseline twice, the one workload at
/// `trial`, `rounds` rounds, a seed of its own.
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
        .map(|n| crate::Variant {
            name: (*n).to_string(),
            ..a.clone()
        })
        .collect();
    let mut w = base.workloads[workload].clone();
    w.budget = crate::TrialBudget::TestTime(trial);
    exp.workloads = vec![w];
    exp.rounds = rounds;
    // The file's order stands (randomized unless it says "fixed"): calibrate checks the
    // set-up as the user runs it, biases included.
    exp.seed = base.seed.wrapping_add(index as u64);
    exp.name = format!("calibrate-{stamp}-{}ms", trial.as_millis());
    exp
}

/// The fingerprint a calibration is found by: the workload's shape without its name and
/// trial length (a calibration measures several lengths).
pub fn workload_key(w: &crate::Workload) -> String {
    let mut shape = w.clone();
    shape.name = String::new();
    shape.budget = crate::TrialBudget::TestTime(Duration::ZERO);
    let json = serde_json::to_string(&shape).unwrap_or_default();
    resplab_store::write::fingerprint(json.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trial_is_begun_only_when_it_fits_at_the_pace_so_far() {
        let t0 = Instant::now();
        let mut fit = TrialFit {
            slowest_sec: 1.0,
            since: t0,
            deadline: t0 + Duration::from_secs(10),
        };
        // Trials of 1 s: the next fits.
        assert!(fit.next_fits(t0 + Duration::from_secs(1)));
        // One took 3 s (a loaded machine): the next is expected to take as long; at 4 s
        // it would end at 7 s and fits.
        assert!(fit.next_fits(t0 + Duration::from_secs(4)));
        assert_eq!(fit.slowest_sec, 3.0);
        // A quick one does not lower the expectation: at 6 s the next would end at 9 s.
        assert!(fit.next_fits(t0 + Duration::from_secs(6)));
        // At 7.5 s it would end at 10.5 s, past the deadline: it is not begun.
        assert!(!fit.next_fits(t0 + Duration::from_millis(7500)));
    }

    #[test]
    fn a_duet_needs_two_cpus() {
        assert!(duet_cpus(&[0, 1]).is_ok());
        let e = duet_cpus(&[3]).unwrap_err().to_string();
        assert_eq!(
            e,
            "--method duet: a duet needs two disjoint CPU sets, one per server; this process may use 1 CPU (3); use --method rmit"
        );
        assert!(!e.contains('\n'));
    }
}
