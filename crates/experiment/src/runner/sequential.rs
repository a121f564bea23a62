//! The runner's side of a run until decided: a look at every round boundary, stored, and
//! the stop when the rule or a limit says so ([`crate::sequential`] is the rule).
//!
//! Kept apart from the loop over executions: the loop calls [`Runner::sequential_gate`]
//! before each execution and [`Runner::sequential_finish`] when the plan is done.

use super::{Event, Outcome, RunError, Runner};
use crate::plan::Execution;
use crate::sequential::{self, Assessment, StopReason, Timeline};
use resplab_store::{LookRow, StopRow, TrialRow};
use std::time::{Duration, Instant};

/// What the runner keeps between looks.
#[derive(Debug)]
pub(super) struct SeqState {
    started: Instant,
    /// Wall time the sequence had used before this process took it up (a resume).
    before: Duration,
    /// Rounds looked at when this process started.
    rounds_at_start: Option<usize>,
    /// Rounds of the latest look stored.
    last_look: usize,
    /// When each look was taken (the stored ones read back once, on the first look).
    timeline: Option<Timeline>,
}

impl SeqState {
    pub(super) fn new(before: Duration) -> SeqState {
        SeqState {
            started: Instant::now(),
            before,
            rounds_at_start: None,
            last_look: 0,
            timeline: None,
        }
    }
}

/// How a run until decided ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SequentialEnd {
    pub reason: StopReason,
    /// Rounds looked at when it stopped.
    pub rounds: usize,
    /// Wall time of the whole sequence, resumed parts included.
    pub elapsed: Duration,
}

impl Runner<'_> {
    /// Before an execution: looks at the rounds stored (once per new round) and returns
    /// true when the run stops here, with the reason in `outcome`. A round already under
    /// way is always finished.
    pub(super) fn sequential_gate(
        &mut self,
        exec: &Execution,
        stored: &[TrialRow],
        outcome: &mut Outcome,
    ) -> Result<bool, RunError> {
        let Some(until) = self.exp.until_decided else {
            return Ok(false);
        };
        let under_way = stored
            .iter()
            .any(|t| t.round == exec.round && t.attempt == exec.attempt);
        if under_way {
            return Ok(false);
        }
        let (assessment, elapsed, per_round) = self.sequential_look()?;
        // The limit is reached when no further round fits at the pace so far: the look
        // at which the spending rule plans no more rounds and spends what is left.
        let pace = if assessment.rounds > 0 {
            elapsed / assessment.rounds as u32
        } else {
            per_round
        };
        let reason = if assessment.all_decided() {
            Some(StopReason::Decided)
        } else {
            until
                .max_time()
                .filter(|limit| elapsed + pace > *limit)
                .map(|_| StopReason::MaxTime)
        };
        match reason {
            Some(reason) => {
                self.sequential_stop(reason, &assessment, elapsed, outcome)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// When the plan is done (`max_rounds` reached): the last look and the stop.
    pub(super) fn sequential_finish(&mut self, outcome: &mut Outcome) -> Result<(), RunError> {
        if self.exp.until_decided.is_none() || outcome.interrupted {
            return Ok(());
        }
        let (assessment, elapsed, _) = self.sequential_look()?;
        let reason = if assessment.all_decided() {
            StopReason::Decided
        } else {
            StopReason::MaxRounds
        };
        self.sequential_stop(reason, &assessment, elapsed, outcome)
    }

    /// The intervals now, stored and reported when they saw a new round; with the wall
    /// time used and the expected duration of one more round.
    fn sequential_look(&mut self) -> Result<(Assessment, Duration, Duration), RunError> {
        let standing = self.standing()?;
        let id = self.id;
        let exp = self.exp;
        let stored_looks = match self.seq.as_ref().and_then(|s| s.timeline.as_ref()) {
            Some(_) => None,
            None => Some(self.store.looks(id)?),
        };
        let state = self
            .seq
            .get_or_insert_with(|| SeqState::new(Duration::ZERO));
        let timeline = state
            .timeline
            .get_or_insert_with(|| Timeline::from_looks(&stored_looks.unwrap_or_default()));
        let here = state.started.elapsed();
        let elapsed = state.before + here;
        let rounds_now = standing
            .iter()
            .map(|s| {
                s.pairs
                    .iter()
                    .filter(|(_, a, b)| *a > 0.0 && *b > 0.0)
                    .count()
            })
            .min()
            .unwrap_or(0);
        timeline.record(rounds_now, elapsed.as_secs_f64());
        let assessment = sequential::assess(exp, &standing, timeline);
        let at_start = *state.rounds_at_start.get_or_insert(assessment.rounds);
        let done_here = assessment.rounds.saturating_sub(at_start);
        let per_round = if done_here > 0 {
            here / done_here as u32
        } else {
            sequential::round_estimate(exp)
        };
        if assessment.rounds > state.last_look {
            state.last_look = assessment.rounds;
            let rows = look_rows(&assessment, elapsed);
            self.store.record_looks(id, &rows)?;
            (self.on_event)(Event::Look {
                assessment: &assessment,
                elapsed,
                per_round,
            });
        }
        Ok((assessment, elapsed, per_round))
    }

    fn sequential_stop(
        &mut self,
        reason: StopReason,
        assessment: &Assessment,
        elapsed: Duration,
        outcome: &mut Outcome,
    ) -> Result<(), RunError> {
        let Some(until) = &self.exp.until_decided else {
            return Ok(());
        };
        self.store.record_stop(
            self.id,
            &StopRow {
                rule: sequential::rule_text(self.exp, until),
                reason: reason.name().into(),
                rounds: assessment.rounds as u32,
                elapsed_sec: elapsed.as_secs_f64(),
            },
        )?;
        outcome.sequential = Some(SequentialEnd {
            reason,
            rounds: assessment.rounds,
            elapsed,
        });
        Ok(())
    }
}

fn look_rows(a: &Assessment, elapsed: Duration) -> Vec<LookRow> {
    let finite = |x: f64| x.is_finite().then_some(x);
    a.comparisons
        .iter()
        .map(|c| LookRow {
            rounds: c.look.n as u32,
            workload: c.workload.clone(),
            variant: c.variant.clone(),
            elapsed_sec: elapsed.as_secs_f64(),
            mean_log: if c.look.mean.is_finite() {
                c.look.mean
            } else {
                0.0
            },
            low_log: finite(c.look.low),
            high_log: finite(c.look.high),
            sd_log: c.look.sd,
            decision: c.decision.name().into(),
        })
        .collect()
}
