//! What `resplab experiment run` (and `resume`) says, decided here and worded by
//! `resplab_report::narration` and `resplab_report::verdict`: the plan of `--dry-run`
//! ([`plan_text`]), a line per runner event ([`Narrator`]: a trial's line, reruns, the
//! running verdict once per completed round, each look of a run until decided with how
//! much its intervals narrowed), and what it says when it ends ([`summary`],
//! [`verdict_lines`], the gates [`error_gate_lines`] and [`regression_gate_lines`]).
//! Nothing here prints: the caller writes the text where it goes.

use crate::error_rate::StoredTrial;
use crate::model::Experiment;
use crate::runner::{self, Event, Standing};
use crate::{plan, sequential};
use resplab_report::narration::{self as words, PlanTrial, PlanView};
use resplab_report::verdict::{
    certificate_line, look_progress_line, sequential_line, standing_line, stop_sentence,
};
use resplab_store::{ExperimentStatus, Store, StoreError};
use std::collections::BTreeMap;
use std::time::Duration;

/// What to write for one event.
#[derive(Clone, Debug, PartialEq)]
pub enum Say {
    /// Whole lines (each ends with a newline).
    Lines(String),
    /// Text that the next event's text continues on the same line.
    Part(String),
}

/// The plan of `--dry-run`: every trial of a fixed run, or a run until decided's rule
/// and first round.
pub fn plan_text(exp: &Experiment) -> String {
    let until = exp.until_decided.as_ref();
    let plans = match until {
        Some(_) => plan::round_plan(exp, 0, 0),
        None => plan::full_plan(exp),
    };
    let trials = plans
        .iter()
        .flat_map(|e| &e.trials)
        .map(|t| PlanTrial {
            // A fixed plan lists rounds as the plan numbers them; a run until decided's
            // one listed round is its first.
            round: if until.is_some() { 1 } else { t.round },
            position: t.position,
            variant: exp.variants[t.variant].name.clone(),
            workload: exp.workloads[t.workload].name.clone(),
            estimate: plan::estimate_trial(exp, t.workload),
        })
        .collect();
    words::plan_text(&PlanView {
        name: exp.name.clone(),
        variants: exp.variants.len(),
        workloads: exp.workloads.len(),
        rounds: until.is_none().then_some(exp.rounds),
        order: exp.order.name().to_string(),
        seed: exp.seed,
        rule: until.map(|u| sequential::rule_text(exp, u)),
        baseline: exp.baseline().name.clone(),
        trials,
        estimate: match until {
            Some(_) => sequential::round_estimate(exp),
            None => plan::estimate_total(exp),
        },
        assumed_ops_per_sec: plan::ASSUMED_OPS_PER_SEC,
    })
}

/// The round limit a trial's line shows: none for a run until decided without one.
fn shown_rounds(exp: &Experiment) -> Option<u32> {
    match exp.until_decided {
        Some(u) if u.max_rounds.is_none() => None,
        _ => Some(exp.rounds),
    }
}

/// Turns runner events into what a person watching the run reads.
#[derive(Debug)]
pub struct Narrator<'e> {
    exp: &'e Experiment,
    quiet: bool,
    higher_is_better: bool,
    last_round_shown: Option<usize>,
    /// The half-widths of the previous look, per (workload, variant), to show narrowing.
    previous: BTreeMap<(String, String), f64>,
}

impl<'e> Narrator<'e> {
    /// `quiet`: no per-second ticks.
    pub fn new(exp: &'e Experiment, quiet: bool, higher_is_better: bool) -> Self {
        Narrator {
            exp,
            quiet,
            higher_is_better,
            last_round_shown: None,
            previous: BTreeMap::new(),
        }
    }

    /// What to say for `ev`, if anything.
    pub fn event(&mut self, ev: &Event<'_>) -> Option<Say> {
        let exp = self.exp;
        let line = match ev {
            Event::Start {
                planned,
                stored,
                estimate,
            } => self.start(*planned, *stored, *estimate),
            Event::Step { variant, what } => format!("  [{variant}] {what}"),
            Event::Trial {
                slot,
                variant,
                workload,
                ..
            } => {
                let rounds = shown_rounds(exp);
                let (r, a, p) = (slot.round, slot.attempt, slot.position);
                return Some(Say::Part(words::trial_start(
                    r, rounds, a, p, variant, workload,
                )));
            }
            Event::Progress(p) if !self.quiet && !p.warming_up => {
                return Some(Say::Part(format!("{:.0}s ", p.elapsed_sec)));
            }
            Event::Progress(_) => return None,
            Event::Stored {
                valid,
                failed,
                primary,
                ..
            } => {
                let why: Vec<String> = failed.iter().map(|c| c.detail.clone()).collect();
                words::stored_line(&exp.primary_metric, *primary, *valid, &why)
            }
            // A run until decided shows its looks instead of the fixed verdict.
            Event::Standing(_) if exp.until_decided.is_some() => return None,
            Event::Standing(standing) => return self.standing(standing),
            Event::Look {
                assessment,
                elapsed,
                per_round,
            } => self.look(assessment, *elapsed, *per_round),
            Event::Notice(note) => format!("note: {note}"),
            Event::Rerun { round, attempt } => words::rerun_line(*round, *attempt),
        };
        Some(Say::Lines(line + "\n"))
    }

    fn start(&self, planned: usize, stored: usize, estimate: Duration) -> String {
        if let Some(u) = &self.exp.until_decided {
            let rule = sequential::rule_text(self.exp, u);
            return words::start_until_line(&self.exp.name, &rule, stored);
        }
        let done = stored as f64 / planned.max(1) as f64;
        let left = estimate.saturating_sub(estimate.mul_f64(done));
        words::start_line(&self.exp.name, planned, stored, left)
    }

    /// The running verdict, once per completed round.
    fn standing(&mut self, standing: &[Standing]) -> Option<Say> {
        let rounds = standing.iter().map(|s| s.pairs.len()).max().unwrap_or(0);
        if rounds == 0 || self.last_round_shown == Some(rounds) {
            return None;
        }
        self.last_round_shown = Some(rounds);
        let (higher, margin) = (self.higher_is_better, self.exp.margin);
        let lines = standing
            .iter()
            .map(|s| {
                format!(
                    "  {}\n",
                    standing_line(&s.workload, &s.variant, &s.pairs, higher, margin)
                )
            })
            .collect();
        Some(Say::Lines(lines))
    }

    /// A look of a run until decided: every comparison's interval, its narrowing and
    /// the predicted time to a decision.
    fn look(
        &mut self,
        a: &sequential::Assessment,
        elapsed: Duration,
        per_round: Duration,
    ) -> String {
        let mut lines = vec![words::look_head(a.rounds, elapsed, per_round)];
        for c in &a.comparisons {
            let key = (c.workload.clone(), c.variant.clone());
            let eta = sequential::rounds_to_decision(c, self.exp.margin)
                .map(|r| (r, per_round * r.min(u32::MAX as usize) as u32));
            let previous = self.previous.get(&key).copied();
            let line = look_progress_line(&c.workload, &c.variant, &c.look, previous, eta);
            lines.push(format!("    {line}"));
            self.previous.insert(key, c.look.half_width());
        }
        lines.join("\n")
    }
}

/// How a run ended, as said on standard error.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub lines: Vec<String>,
    /// The run ends without a verdict: interrupted, or no valid round to compare.
    pub no_verdict: bool,
}

/// What the run did, and whether it has a verdict to give.
///
/// # Errors
/// The store cannot be read.
pub fn summary(
    store: &Store,
    exp: &Experiment,
    outcome: &runner::Outcome,
    status: &ExperimentStatus,
    took: Duration,
) -> Result<Summary, StoreError> {
    let valid = status.valid_rounds();
    let mut lines = vec![words::summary_line(
        outcome.trials_run,
        took,
        outcome.invalid,
        valid,
        shown_rounds(exp),
    )];
    if outcome.interrupted {
        let db = store.path().display().to_string();
        lines.push(words::interrupted_line(&exp.name, &db));
        return Ok(Summary {
            lines,
            no_verdict: true,
        });
    }
    if !outcome.given_up.is_empty() {
        lines.push(words::given_up_line(&outcome.given_up));
    }
    let none_valid = valid == 0 && store.missing_cells(status)?.is_empty();
    if none_valid {
        lines.push(format!(
            "resplab: {}",
            words::no_valid_round_line(&exp.name)
        ));
    }
    Ok(Summary {
        lines,
        no_verdict: none_valid,
    })
}

/// Whether higher is better for the primary metric: a metric read from a command's
/// output carries its direction in the store, others are known by name.
///
/// # Errors
/// The store cannot be read.
pub fn higher_is_better(store: &Store, exp: &Experiment) -> Result<bool, StoreError> {
    let by_name = resplab_store::metrics::higher_is_better(&exp.primary_metric);
    Ok(store
        .observations(&exp.name)?
        .iter()
        .find(|o| o.metric == exp.primary_metric)
        .and_then(|o| o.direction.as_deref())
        .map_or(by_name, |d| d == "higher_is_better"))
}

/// The final verdict per workload and variant, with the certificate, the phase notes,
/// what is still to run and where the results are stored.
///
/// # Errors
/// The store cannot be read.
pub fn verdict_lines(
    store: &Store,
    exp: &Experiment,
    experiment_id: i64,
) -> Result<Vec<String>, StoreError> {
    let higher = higher_is_better(store, exp)?;
    let until = exp.until_decided.is_some();
    let mut lines = vec![words::verdict_head(&exp.primary_metric, until)];
    if until {
        sequential_verdict(store, exp, experiment_id, higher, &mut lines)?;
    } else {
        fixed_verdict(store, exp, experiment_id, higher, &mut lines)?;
    }
    let c = crate::certificate::of_experiment(store, exp)?;
    let validation = c.validation.as_ref().map(|(_, v)| v);
    lines.push(format!(
        "  {}",
        certificate_line(c.mde_pct, c.rounds, c.elapsed_sec, validation, c.sought)
    ));
    for n in store.phase_notes(&exp.name)? {
        lines.push(format!("  note: {n}"));
    }
    let missing = store.missing_cells(&store.status(&exp.name)?)?;
    if !missing.is_empty() && !until {
        lines.push(words::still_to_run_line(missing.len(), &exp.name));
    }
    lines.push(words::stored_as_line(
        &exp.name,
        &store.path().display().to_string(),
    ));
    Ok(lines)
}

/// The verdict of every (workload, variant) of a fixed number of rounds.
fn fixed_verdict(
    store: &Store,
    exp: &Experiment,
    experiment_id: i64,
    higher: bool,
    lines: &mut Vec<String>,
) -> Result<(), StoreError> {
    let trials = store.trials(experiment_id)?;
    let obs = store.observations(&exp.name)?;
    for s in runner::standings(exp, &obs) {
        let mut line = standing_line(&s.workload, &s.variant, &s.pairs, higher, exp.margin);
        if resplab_store::not_interleaved(&trials, &exp.baseline().name, &s.variant) {
            line.push_str(words::NOT_INTERLEAVED);
        }
        lines.push(format!("  {line}"));
    }
    Ok(())
}

/// A run until decided: why it stopped, each comparison's sequential interval and
/// decision, the stopping rule.
fn sequential_verdict(
    store: &Store,
    exp: &Experiment,
    experiment_id: i64,
    higher: bool,
    lines: &mut Vec<String>,
) -> Result<(), StoreError> {
    let a = sequential::assess_stored(store, exp)?;
    match store.sequential_stop(experiment_id)? {
        Some(stop) => {
            let rounds = stop.rounds as usize;
            lines.push(format!(
                "  {}",
                stop_sentence(&stop.reason, rounds, stop.elapsed_sec)
            ));
            lines.push(format!("  rule: {}", stop.rule));
        }
        None => lines.push(format!("  {}", words::not_stopped_line(a.rounds))),
    }
    for c in &a.comparisons {
        let line = sequential_line(
            &c.workload,
            &c.variant,
            &c.look,
            c.decision,
            higher,
            exp.margin,
        );
        lines.push(format!("  {line}"));
    }
    Ok(())
}

/// The gates of a finished run: `--max-error-rate` (percent) and `--fail-on-regression`
/// (percent).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Gates {
    pub max_error_pct: Option<f64>,
    pub fail_on_regression: Option<f64>,
}

/// What the gates of a finished run say: their lines (`--max-error-rate`'s first: failed
/// requests also make trials invalid, and so rounds uncompared) and the exit code
/// ([`gate_code`]).
///
/// # Errors
/// The store cannot be read.
pub fn gates(
    store: &Store,
    exp: &Experiment,
    gates: Gates,
    stored: &[StoredTrial],
    interrupted: bool,
    no_verdict: bool,
) -> Result<(Vec<String>, u8), StoreError> {
    let over = match gates.max_error_pct {
        Some(max) if !interrupted => error_gate_lines(store, stored, max)?,
        _ => Vec::new(),
    };
    let worse = match gates.fail_on_regression {
        Some(pct) if over.is_empty() && !no_verdict => regression_gate_lines(store, exp, pct)?,
        _ => Vec::new(),
    };
    let code = gate_code(no_verdict, !over.is_empty(), !worse.is_empty());
    Ok((over.into_iter().chain(worse).collect(), code))
}

/// The exit code of a finished run: 3 with trials over `--max-error-rate`, 1 with a
/// regression beyond `--fail-on-regression`, 2 without a verdict, else 0.
pub fn gate_code(no_verdict: bool, errors_over: bool, regressed: bool) -> u8 {
    match (no_verdict, errors_over, regressed) {
        (_, true, _) => 3,
        (_, false, true) => 1,
        (true, false, false) => 2,
        (false, false, false) => 0,
    }
}

/// `--max-error-rate`: a line for each trial of `stored` over the limit (none: the gate
/// passes).
///
/// # Errors
/// The store cannot be read.
pub fn error_gate_lines(
    store: &Store,
    stored: &[StoredTrial],
    max_pct: f64,
) -> Result<Vec<String>, StoreError> {
    let over = crate::error_rate::over_limit(store, stored, max_pct)?;
    Ok(over
        .iter()
        .map(|o| {
            let t = &o.trial;
            let name = words::trial_name(t.round, &t.variant, &t.workload, t.trial_id);
            words::error_gate_line(&name, o.error_pct, o.errors, o.requests, max_pct)
        })
        .collect())
}

/// `--fail-on-regression`: a line for each comparison of a run until decided decided
/// worse than the baseline by more than `pct` percent (none: the gate passes).
///
/// # Errors
/// The store cannot be read.
pub fn regression_gate_lines(
    store: &Store,
    exp: &Experiment,
    pct: f64,
) -> Result<Vec<String>, StoreError> {
    let higher = higher_is_better(store, exp)?;
    let a = sequential::assess_stored(store, exp)?;
    Ok(sequential::regressions(&a, higher, pct)
        .iter()
        .map(|c| {
            let worse = sequential::worse_pct(c, higher).unwrap_or(0.0).abs();
            words::regression_gate_line(&c.workload, &c.variant, worse, &exp.primary_metric, pct)
        })
        .collect())
}

#[cfg(test)]
mod gate_tests {
    use super::gate_code;

    #[test]
    fn error_rates_outrank_regressions_which_outrank_a_missing_verdict() {
        assert_eq!(gate_code(true, true, true), 3);
        assert_eq!(gate_code(false, true, false), 3);
        assert_eq!(gate_code(true, false, true), 1);
        assert_eq!(gate_code(true, false, false), 2);
        assert_eq!(gate_code(false, false, false), 0);
    }
}
