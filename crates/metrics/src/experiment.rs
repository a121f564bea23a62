//! An experiment's events as live metrics: the trial running, the trials stored, each
//! second's progress, and the running verdicts in the words of `report::verdict`.

use crate::live::{Live, TrialState, VerdictRow};
use resplab_experiment::runner::Event;
use resplab_report::verdict::standing_figures;

/// What an experiment's metrics need to know besides its events.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub rounds: u32,
    /// The primary metric is better when higher (ops/s) rather than lower (latency).
    pub higher_is_better: bool,
    /// The equivalence margin, a fraction.
    pub margin: Option<f64>,
}

/// Takes one event of the runner.
pub fn observe(live: &Live, plan: &Plan, ev: &Event<'_>) {
    match ev {
        Event::Start {
            planned, stored, ..
        } => live.plan(*planned, *stored),
        Event::Trial {
            slot,
            variant,
            workload,
            stored,
        } => live.trial(
            variant,
            workload,
            TrialState {
                round: slot.round + 1,
                rounds: plan.rounds,
                stored: *stored,
                planned: 0,
            },
        ),
        Event::Progress(p) => live.observe(p),
        Event::Stored { .. } => live.stored_one(),
        Event::Standing(standing) => live.verdicts(
            standing
                .iter()
                .map(|s| {
                    let f = standing_figures(&s.pairs, plan.higher_is_better, plan.margin);
                    VerdictRow {
                        workload: s.workload.clone(),
                        variant: s.variant.clone(),
                        verdict: f.verdict.label().to_string(),
                        rounds: f.rounds,
                        effect_pct: f.effect_pct,
                    }
                })
                .collect(),
        ),
        Event::Step { .. } | Event::Rerun { .. } | Event::Look { .. } | Event::Notice(_) => {}
    }
}
