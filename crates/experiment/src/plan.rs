//! The order trials run in: randomized interleaved rounds.
//!
//! A round runs every (variant, workload) cell once. Running one variant's trials as a
//! block lets machine drift (thermal state, other tenants, page cache) masquerade as a
//! difference between variants; interleaving makes drift hit every variant alike and
//! lets trials pair by round (METHOD.md §5–6.1). Inside a round the order is either:
//!
//! - `rmit`: shuffled afresh for every round and attempt, from the experiment seed, so
//!   no variant always runs first (a fixed order is itself biased under a trend);
//! - `abba`: file order on even rounds and its reverse on odd rounds (counterbalanced).
//! - `fixed`: file order in every round; biased by design, for showing that an A/A
//!   experiment catches an order effect.
//! - `duet`: both variants at the same time, one execution per workload holding both
//!   trials (run together by `runner::duet`); the workloads' order is shuffled.
//!
//! A unit of the order is an *execution*: one server process. Ordinary variants get one
//! execution per trial (a fresh server each time). A hot-toggle variant shares the
//! execution of the variant it toggles: per round and workload, that server runs the
//! base trial and each toggle trial back to back, in shuffled order.
//!
//! The plan is a pure function of the experiment and the round, so `resume` recomputes
//! it and skips what the store already holds; [`next_execution`] is that decision.

use crate::model::{Experiment, Order, ServerSource, TrialBudget};
use resplab_store::{round_states, RoundState, TrialRow};
use std::collections::HashSet;
use std::time::Duration;

/// One trial's place in the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrialSlot {
    pub round: u32,
    /// 0 for the first run of the round, n for its n-th rerun.
    pub attempt: u32,
    /// Place in the round's order (0-based).
    pub position: u32,
    /// Index into [`Experiment::variants`].
    pub variant: usize,
    /// Index into [`Experiment::workloads`].
    pub workload: usize,
}

/// One server execution and the trials it runs, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Execution {
    pub round: u32,
    pub attempt: u32,
    /// The variant whose server (or address) this execution uses.
    pub server_variant: usize,
    pub workload: usize,
    pub trials: Vec<TrialSlot>,
}

/// A small, fixed PRNG (SplitMix64) so that the order depends on the seed alone, not on
/// the version of a random-number crate.
#[derive(Debug)]
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        let out = resplab_workload::seed::splitmix64(self.0);
        self.0 = self.0.wrapping_add(resplab_workload::seed::GOLDEN_GAMMA);
        out
    }

    /// Uniform in `0..n` (n > 0), by widening multiplication.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

fn round_rng(seed: u64, round: u32, attempt: u32) -> SplitMix {
    let mut m = SplitMix(seed ^ 0x5265_7370_6c61_6221);
    let a = m.next();
    let mut m = SplitMix(a ^ (u64::from(round) << 32 | u64::from(attempt)));
    m.next();
    m
}

/// The executions of one round attempt, in the order they run, with positions.
pub fn round_plan(exp: &Experiment, round: u32, attempt: u32) -> Vec<Execution> {
    let mut rng = round_rng(exp.seed, round, attempt);
    let reverse = exp.order == Order::Abba && (round + attempt) % 2 == 1;
    let mut execs = Vec::new();
    for (w, _) in exp.workloads.iter().enumerate() {
        for (v, variant) in exp.variants.iter().enumerate() {
            if matches!(variant.server, ServerSource::Toggle { .. }) {
                continue;
            }
            let mut members = vec![v];
            members.extend(exp.variants.iter().enumerate().filter_map(|(t, tv)| {
                matches!(&tv.server, ServerSource::Toggle { of, .. } if *of == variant.name)
                    .then_some(t)
            }));
            execs.push((v, w, members));
        }
    }
    if exp.order == Order::Duet {
        // One execution per workload runs both variants at once (baseline first).
        execs = (0..exp.workloads.len())
            .map(|w| (0, w, (0..exp.variants.len()).collect()))
            .collect();
    }
    match exp.order {
        Order::Rmit => {
            rng.shuffle(&mut execs);
            for e in &mut execs {
                rng.shuffle(&mut e.2);
            }
        }
        Order::Duet => rng.shuffle(&mut execs),
        Order::Abba if reverse => {
            execs.reverse();
            for e in &mut execs {
                e.2.reverse();
            }
        }
        Order::Abba | Order::Fixed => {}
    }
    let mut position = 0;
    execs
        .into_iter()
        .map(|(server_variant, workload, members)| Execution {
            round,
            attempt,
            server_variant,
            workload,
            trials: members
                .into_iter()
                .map(|variant| {
                    let slot = TrialSlot {
                        round,
                        attempt,
                        position,
                        variant,
                        workload,
                    };
                    position += 1;
                    slot
                })
                .collect(),
        })
        .collect()
}

/// The whole first pass: every round's attempt 0.
pub fn full_plan(exp: &Experiment) -> Vec<Execution> {
    (0..exp.rounds)
        .flat_map(|r| round_plan(exp, r, 0))
        .collect()
}

/// What is left to do, given what is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Next {
    /// Run this execution (its `trials` are only those not yet stored).
    Run(Execution),
    /// Every round is valid, or out of reruns.
    Done {
        /// Rounds that stayed invalid after `max_reruns` reruns.
        given_up: Vec<u32>,
    },
}

/// Decides the next execution: first every round's missing trials in round order, then
/// a rerun of each round whose latest attempt holds an invalid trial (up to
/// `max_reruns` per round).
pub fn next_execution(exp: &Experiment, stored: &[TrialRow]) -> Next {
    next_execution_of(exp, stored, &std::collections::BTreeSet::new())
}

/// [`next_execution`] limited to the trials of the variants in `only` (every variant
/// when empty): a phase. Rounds stay incomplete until every phase has run, and a rerun
/// of an invalid round is run, phase by phase, by the calls that name its variants.
pub fn next_execution_of(
    exp: &Experiment,
    stored: &[TrialRow],
    only: &std::collections::BTreeSet<usize>,
) -> Next {
    let have: HashSet<(u32, u32, &str, &str)> = stored
        .iter()
        .map(|t| (t.round, t.attempt, t.variant.as_str(), t.workload.as_str()))
        .collect();
    let cells = exp.variants.len() * exp.workloads.len();
    let states = round_states(stored, exp.rounds, cells);
    let missing = |round: u32, attempt: u32| -> Option<Execution> {
        round_plan(exp, round, attempt)
            .into_iter()
            .find_map(|mut e| {
                e.trials.retain(|s| {
                    (only.is_empty() || only.contains(&s.variant))
                        && !have.contains(&(
                            s.round,
                            s.attempt,
                            exp.variants[s.variant].name.as_str(),
                            exp.workloads[s.workload].name.as_str(),
                        ))
                });
                (!e.trials.is_empty()).then_some(e)
            })
    };
    for (round, state) in states.iter().enumerate().take(exp.rounds as usize) {
        let round = round as u32;
        let attempt = match *state {
            RoundState::NotStarted => 0,
            RoundState::Incomplete { attempt, .. } => attempt,
            _ => continue,
        };
        if let Some(e) = missing(round, attempt) {
            return Next::Run(e);
        }
    }
    let mut given_up = Vec::new();
    for (round, state) in states.iter().enumerate().take(exp.rounds as usize) {
        if let RoundState::Invalid { attempt } = *state {
            if attempt < exp.max_reruns {
                if let Some(e) = missing(round as u32, attempt + 1) {
                    return Next::Run(e);
                }
            } else {
                given_up.push(round as u32);
            }
        }
    }
    Next::Done { given_up }
}

/// Throughput assumed for request budgets when estimating durations.
pub const ASSUMED_OPS_PER_SEC: f64 = 50_000.0;

/// A rough wall-clock estimate of one trial of (variant, workload), excluding the
/// server start.
pub fn estimate_trial(exp: &Experiment, workload: usize) -> Duration {
    let w = &exp.workloads[workload];
    // aliases such as `ping` and `lrange` stand for several phases
    let phases = w.tests.names().len().max(1) as f64;
    let per_phase = match w.budget {
        TrialBudget::TestTime(d) => d.as_secs_f64(),
        TrialBudget::Requests(n) => n as f64 / w.rate.unwrap_or(ASSUMED_OPS_PER_SEC),
    };
    let preload = w
        .preload
        .as_ref()
        .map_or(0.0, |p| p.keys as f64 / 200_000.0);
    Duration::from_secs_f64(phases * (per_phase + exp.warmup.as_secs_f64()) + preload)
}

/// A rough estimate of the whole first pass: the sum of its executions'
/// [`estimate_execution`].
pub fn estimate_total(exp: &Experiment) -> Duration {
    full_plan(exp)
        .iter()
        .map(|e| estimate_execution(exp, e))
        .sum()
}

/// A rough estimate of one execution: one server start (about 0.3 s), its trials and
/// the guard time of each toggle switch; a duet's two trials run at once, after a
/// shared start [`crate::duet::START_LEAD`] ahead.
pub fn estimate_execution(exp: &Experiment, e: &Execution) -> Duration {
    let mut total = Duration::from_millis(300);
    if exp.order == Order::Duet {
        return total + crate::duet::START_LEAD + estimate_trial(exp, e.workload);
    }
    for s in &e.trials {
        total += estimate_trial(exp, s.workload);
        if let ServerSource::Toggle { guard, .. } = &exp.variants[s.variant].server {
            total += *guard * 2;
        }
    }
    total
}
