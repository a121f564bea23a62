//! Run until decided (`until = "decided"`): after every round, a sequential interval
//! for each primary comparison, and the decision to go on or stop.
//!
//! Each primary comparison (workload × variant against the baseline, on the primary
//! metric) gets an interval for the mean of its per-round log ratios by the experiment's
//! rule ([`UntilRule`], part of the stored plan): by default the repeated confidence
//! interval of a group-sequential design that spends α over the rounds the limits allow
//! ([`resplab_stats::sequential::spending`]; the planned rounds are `max_rounds`, or
//! what fits in `max_time` at the pace of the rounds so far, re-estimated at every look
//! from the [`Timeline`] of the looks), or Lai's confidence sequence
//! ([`resplab_stats::sequential::confidence_sequence`], `until_rule = "anytime"`, and
//! every experiment stored before the rule was a choice). The run stops at the start of a round when every comparison
//! is decided (its interval excludes zero, or lies inside ±`margin`), or when the next
//! round would pass `max_time`, or after `max_rounds` rounds; then the comparisons still
//! open are *undecided*, reported with the effect they could have detected. Invalid
//! rounds are not looked at (a later round takes their place); a resumed run recomputes
//! the looks from the stored rounds and counts the wall time already spent from the
//! stored looks, so a kill does not restart the sequence.
//!
//! This module is the rule; the runner calls it between rounds (`runner::sequential`)
//! and the store keeps every look and the reason of the stop.

use crate::model::{Experiment, UntilDecided, UntilRule};
use crate::plan;
use crate::runner::Standing;
use resplab_stats::sequential::spending::{self, Design, LookPlan, Spending};
use resplab_stats::sequential::{confidence_sequence, decide, first_bounded_round, Running};
pub use resplab_stats::sequential::{Decision, Look, Rule, SequenceConfig};
use resplab_store::{LookRow, Store, StoreError};
use std::collections::BTreeMap;
use std::time::Duration;

/// Why a sequential run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// Every primary comparison is decided.
    Decided,
    /// `max_rounds` rounds were run.
    MaxRounds,
    /// The next round would have ended after `max_time`.
    MaxTime,
}

impl StopReason {
    /// `"decided"`, `"max_rounds"` or `"max_time"` (as stored).
    pub fn name(self) -> &'static str {
        match self {
            StopReason::Decided => "decided",
            StopReason::MaxRounds => "max_rounds",
            StopReason::MaxTime => "max_time",
        }
    }

    /// Reads back [`StopReason::name`].
    pub fn from_name(name: &str) -> Option<StopReason> {
        Some(match name {
            "decided" => StopReason::Decided,
            "max_rounds" => StopReason::MaxRounds,
            "max_time" => StopReason::MaxTime,
            _ => return None,
        })
    }
}

/// One comparison's interval at a look.
#[derive(Clone, Debug, PartialEq)]
pub struct ComparisonLook {
    pub workload: String,
    pub variant: String,
    pub look: Look,
    pub decision: Decision,
    /// The rule the interval is by.
    pub rule: Rule,
}

/// Every primary comparison after the latest round.
#[derive(Clone, Debug, PartialEq)]
pub struct Assessment {
    /// Rounds looked at: the fewest paired rounds of any comparison.
    pub rounds: usize,
    pub comparisons: Vec<ComparisonLook>,
}

impl Assessment {
    /// True when every comparison is decided (and there is at least one).
    pub fn all_decided(&self) -> bool {
        !self.comparisons.is_empty() && self.comparisons.iter().all(|c| c.decision.is_decided())
    }
}

/// The settings of the confidence sequence: α = 5 %, tightest near 20 rounds.
pub fn config() -> SequenceConfig {
    SequenceConfig::default()
}

/// The statistics of an experiment's rule.
pub fn rule(until: &UntilDecided) -> Rule {
    let spending = match until.rule {
        UntilRule::Anytime => return Rule::Anytime(config()),
        UntilRule::Spending => Spending::OBrienFleming,
        UntilRule::SpendingPocock => Spending::Pocock,
    };
    Rule::Spending(Design {
        alpha: 0.05,
        spending,
    })
}

/// The wall time of each look (rounds seen → seconds of the sequence at that look): what
/// the spending rule's planned rounds were estimated from. The runner records each look
/// once; a stored experiment reads them back from its looks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    at: BTreeMap<usize, f64>,
}

impl Timeline {
    /// The looks of a stored experiment.
    pub fn from_looks(rows: &[LookRow]) -> Timeline {
        let mut t = Timeline::default();
        for r in rows {
            t.record(r.rounds as usize, r.elapsed_sec);
        }
        t
    }

    /// The first look at `rounds` rounds was at `elapsed_sec` (a later look at the same
    /// rounds does not change it: its α was spent then).
    pub fn record(&mut self, rounds: usize, elapsed_sec: f64) {
        self.at.entry(rounds).or_insert(elapsed_sec);
    }

    /// Seconds at the look after `rounds` rounds; one not recorded is estimated at the
    /// pace of the latest recorded look.
    fn elapsed(&self, rounds: usize) -> Option<f64> {
        if let Some(e) = self.at.get(&rounds) {
            return Some(*e);
        }
        let (&n, &e) = self.at.iter().next_back()?;
        (n > 0).then(|| e / n as f64 * rounds as f64)
    }
}

/// The rounds a run until decided can have in all, as estimated at a look after
/// `rounds` rounds and `elapsed_sec` seconds: `max_rounds`, and no more than fit in
/// `max_time` at the mean pace so far (`round_sec`, the plan's estimate, before the
/// first round). Equal to `rounds` at the look where the limit is reached.
pub fn planned_rounds(
    until: &UntilDecided,
    rounds: usize,
    elapsed_sec: Option<f64>,
    round_sec: f64,
) -> usize {
    let by_rounds = until.max_rounds.map_or(usize::MAX, |r| r as usize);
    let by_time = until.max_time_sec.map_or(usize::MAX, |limit| {
        let elapsed = elapsed_sec.unwrap_or(0.0);
        let pace = if rounds > 0 && elapsed > 0.0 {
            elapsed / rounds as f64
        } else {
            round_sec
        };
        if pace <= 0.0 || !pace.is_finite() {
            return usize::MAX;
        }
        let more = ((limit - elapsed) / pace).floor().max(0.0);
        rounds.saturating_add(more.min(UntilDecided::ROUND_CAP as f64) as usize)
    });
    by_rounds
        .min(by_time)
        .min(UntilDecided::ROUND_CAP as usize)
        .max(rounds)
}

/// The stopping rule in words, as stored with the run and printed with its verdict.
pub fn rule_text(exp: &Experiment, until: &UntilDecided) -> String {
    let mut limits = Vec::new();
    if let Some(r) = until.max_rounds {
        limits.push(format!("max_rounds {r}"));
    }
    if let Some(t) = until.max_time_sec {
        limits.push(format!("max_time {t:.0} s"));
    }
    let margin = exp.margin.map_or("no margin".to_string(), |m| {
        format!("margin ±{:.1} %", m * 100.0)
    });
    let method = match rule(until) {
        Rule::Anytime(cfg) => format!(
            "Lai's confidence sequence for the mean log ratio (alpha {}, rho {:.2})",
            cfg.alpha, cfg.rho
        ),
        Rule::Spending(d) => format!(
            "group-sequential test of the mean log ratio, Lan-DeMets {} alpha spending over \
             the planned rounds (alpha {}, a look after every round from round {}, repeated \
             confidence intervals with t quantiles)",
            match d.spending {
                Spending::OBrienFleming => "O'Brien-Fleming-type",
                Spending::Pocock => "Pocock-type",
            },
            d.alpha,
            spending::FIRST_LOOK
        ),
    };
    format!("until decided: {method}, {margin}, {}", limits.join(", "))
}

/// The interval and decision of every comparison of a stored experiment now, with the
/// planned rounds of its stored looks.
///
/// # Errors
/// A store failure.
pub fn assess_stored(store: &Store, exp: &Experiment) -> Result<Assessment, StoreError> {
    let info = store.experiment(&exp.name)?;
    let timeline = Timeline::from_looks(&store.looks(info.id)?);
    let obs = store.observations(&exp.name)?;
    Ok(assess(exp, &crate::runner::standings(exp, &obs), &timeline))
}

/// The interval and decision of every comparison, from the runner's standings; the
/// spending rule's planned rounds at each look come from `timeline`.
pub fn assess(exp: &Experiment, standings: &[Standing], timeline: &Timeline) -> Assessment {
    let mut crit = Criticals::new(exp, timeline);
    let comparisons: Vec<ComparisonLook> = standings
        .iter()
        .map(|s| {
            let d: Vec<f64> = s
                .pairs
                .iter()
                .filter(|(_, a, b)| *a > 0.0 && *b > 0.0)
                .map(|(_, a, b)| (b / a).ln())
                .collect();
            let look = crit.look(&d);
            ComparisonLook {
                workload: s.workload.clone(),
                variant: s.variant.clone(),
                look,
                decision: decide(&look, exp.margin),
                rule: crit.rule(),
            }
        })
        .collect();
    Assessment {
        rounds: comparisons.iter().map(|c| c.look.n).min().unwrap_or(0),
        comparisons,
    }
}

/// The interval of one comparison's log ratios by the experiment's rule, with the
/// spending rule's critical value computed once per round count.
struct Criticals<'a> {
    exp: &'a Experiment,
    timeline: &'a Timeline,
    by_rounds: BTreeMap<usize, f64>,
}

impl<'a> Criticals<'a> {
    fn new(exp: &'a Experiment, timeline: &'a Timeline) -> Self {
        Criticals {
            exp,
            timeline,
            by_rounds: BTreeMap::new(),
        }
    }

    /// The experiment's limits (a fixed-round one's read as `max_rounds`).
    fn until(&self) -> UntilDecided {
        self.exp.until_decided.unwrap_or(UntilDecided {
            max_rounds: Some(self.exp.rounds),
            max_time_sec: None,
            rule: UntilRule::default(),
        })
    }

    fn rule(&self) -> Rule {
        rule(&self.until())
    }

    fn look(&mut self, d: &[f64]) -> Look {
        let until = self.until();
        let design = match rule(&until) {
            Rule::Anytime(cfg) => return confidence_sequence(d, &cfg),
            Rule::Spending(design) => design,
        };
        let mut r = Running::default();
        for &x in d.iter().filter(|x| x.is_finite()) {
            r.push(x);
        }
        let n = r.n();
        let round_sec = round_estimate(self.exp).as_secs_f64();
        let timeline = self.timeline;
        let crit = *self.by_rounds.entry(n).or_insert_with(|| {
            let looks: Vec<LookPlan> = (spending::FIRST_LOOK..=n)
                .map(|k| LookPlan {
                    rounds: k,
                    planned: planned_rounds(&until, k, timeline.elapsed(k), round_sec),
                })
                .collect();
            spending::z_boundaries(&design, &looks)
                .last()
                .map_or(f64::INFINITY, |z| spending::t_critical(*z, n))
        });
        r.look_at(crit)
    }
}

/// Rounds still needed, at the spread seen so far, until this comparison's interval is
/// narrow enough to decide: to exclude zero at the current estimate, or to fit inside
/// the margin. `None` when no decision is in sight within the round cap. For a spending
/// rule the critical value of the current look is assumed to hold (it only falls at
/// later looks, so the prediction errs long).
pub fn rounds_to_decision(c: &ComparisonLook, margin: Option<f64>) -> Option<usize> {
    if c.decision.is_decided() {
        return Some(0);
    }
    let look = &c.look;
    if look.n < 2 || look.sd <= 0.0 {
        return None;
    }
    let to_exclude = look.mean.abs();
    let to_fit = margin.map_or(0.0, |m| ((1.0 + m).ln() - look.mean.abs()).max(0.0));
    let target = to_exclude.max(to_fit);
    let cap = UntilDecided::ROUND_CAP as usize;
    let need = match c.rule {
        Rule::Anytime(cfg) => {
            resplab_stats::sequential::rounds_to_width(&cfg, look.sd, target, look.n, cap)?
        }
        Rule::Spending(_) => {
            if !look.is_bounded() || target <= 0.0 {
                return None;
            }
            let crit = look.half_width() * (look.n as f64).sqrt() / look.sd;
            let n = ((crit * look.sd / target).powi(2)).ceil();
            if !(n.is_finite() && n <= cap as f64) {
                return None;
            }
            (n as usize).max(look.n)
        }
    };
    Some(need.saturating_sub(look.n))
}

/// A rough duration of one round (its trials and server starts), from the plan.
pub fn round_estimate(exp: &Experiment) -> Duration {
    plan::round_plan(exp, 0, 0)
        .iter()
        .map(|e| plan::estimate_execution(exp, e))
        .sum()
}

/// Which setting a [`LimitError`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Run until decided itself (no limit given).
    Until,
    MaxRounds,
    MaxTime,
}

/// Makes `exp` a run until decided, or changes its limits, from the command line:
/// `until` asks for it; `max_rounds` and `max_time` replace the file's limits. Nothing
/// given leaves `exp` as it is.
///
/// # Errors
/// [`LimitError`]: a limit given for an experiment that is not run until decided, no
/// limit at all, or a limit too small to decide ([`check`]).
pub fn apply_limits(
    exp: &mut Experiment,
    until: bool,
    max_rounds: Option<u32>,
    max_time: Option<Duration>,
) -> Result<(), LimitError> {
    if !until && exp.until_decided.is_none() {
        let given = if max_rounds.is_some() {
            Some(Limit::MaxRounds)
        } else {
            max_time.map(|_| Limit::MaxTime)
        };
        return match given {
            Some(limit) => Err(LimitError {
                limit,
                message: "applies only to a run until decided (--until-decided, or \
                          until = \"decided\" in the file)"
                    .into(),
            }),
            None => Ok(()),
        };
    }
    let mut u = exp.until_decided.unwrap_or(UntilDecided {
        max_rounds: None,
        max_time_sec: None,
        rule: UntilRule::default(),
    });
    if max_rounds.is_some() {
        u.max_rounds = max_rounds;
    }
    if let Some(t) = max_time {
        u.max_time_sec = Some(t.as_secs_f64());
    }
    if u.max_rounds.is_none() && u.max_time_sec.is_none() {
        return Err(LimitError {
            limit: Limit::Until,
            message: "needs a limit: --max-time, --max-rounds or both".into(),
        });
    }
    check(exp, &u)?;
    exp.until_decided = Some(u);
    exp.rounds = u.rounds();
    Ok(())
}

/// `experiment run`'s `--until-decided`, `--max-rounds`, `--max-time` (as typed) and
/// `--variants` onto `exp`: the limits applied ([`apply_limits`]), and a run until
/// decided never split into phases.
///
/// # Errors
/// The flag at fault and why, for one line and exit code 2.
pub fn apply_flags(
    exp: &mut Experiment,
    until: bool,
    max_rounds: Option<u32>,
    max_time: Option<&str>,
    variants: &[String],
) -> Result<(), (&'static str, String)> {
    let max_time = max_time
        .map(crate::words::parse_positive_duration)
        .transpose()
        .map_err(|e| ("--max-time", e))?;
    if let Err(e) = apply_limits(exp, until, max_rounds, max_time) {
        let flag = match e.limit {
            Limit::Until => "--until-decided",
            Limit::MaxRounds => "--max-rounds",
            Limit::MaxTime => "--max-time",
        };
        return Err((flag, e.message));
    }
    if exp.until_decided.is_some() && !variants.is_empty() {
        return Err((
            "--variants",
            "a run until decided looks at whole rounds, so it cannot run in phases; give a \
             fixed number of rounds instead"
                .into(),
        ));
    }
    Ok(())
}

/// A limit that cannot give a decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitError {
    pub limit: Limit,
    pub message: String,
}

/// Checks that the limits leave room for a decision: `max_rounds` at least the first
/// round the interval can be finite, `max_time` at least one round.
///
/// # Errors
/// [`LimitError`] naming the limit, what was expected and what was found.
pub fn check(exp: &Experiment, until: &UntilDecided) -> Result<(), LimitError> {
    let first = match rule(until) {
        Rule::Anytime(cfg) => first_bounded_round(&cfg),
        Rule::Spending(_) => spending::FIRST_LOOK,
    };
    if let Some(r) = until.max_rounds {
        if (r as usize) < first {
            return Err(LimitError {
                limit: Limit::MaxRounds,
                message: format!(
                    "expected at least {first} rounds (the sequential interval is unbounded \
                     before), found {r}"
                ),
            });
        }
    }
    if let Some(t) = until.max_time_sec {
        let round = round_estimate(exp).as_secs_f64();
        if t < round {
            return Err(LimitError {
                limit: Limit::MaxTime,
                message: format!(
                    "expected at least one round's time (about {round:.1} s for this \
                     experiment), found {t:.1} s"
                ),
            });
        }
    }
    Ok(())
}

/// Whether a decided comparison made the primary metric worse: `Some(effect %)` when its
/// interval excludes zero on the worse side (lower for a metric where higher is better,
/// higher otherwise), `None` for a faster, equivalent or undecided one. The effect is the
/// ratio of the estimate, in percent of the baseline.
pub fn worse_pct(c: &ComparisonLook, higher_is_better: bool) -> Option<f64> {
    let worse = if higher_is_better {
        Decision::Lower
    } else {
        Decision::Higher
    };
    (c.decision == worse).then(|| c.look.mean.exp_m1() * 100.0)
}

/// The regression gate of a run until decided: every comparison decided worse by more
/// than `pct_limit` percent (the estimate's size; its interval already excludes zero).
pub fn regressions(a: &Assessment, higher_is_better: bool, pct_limit: f64) -> Vec<&ComparisonLook> {
    a.comparisons
        .iter()
        .filter(|c| worse_pct(c, higher_is_better).is_some_and(|e| e.abs() > pct_limit))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standing(ratios: &[f64]) -> Standing {
        Standing {
            workload: "w".into(),
            variant: "b".into(),
            pairs: ratios
                .iter()
                .enumerate()
                .map(|(i, r)| (i as u32, 1000.0, 1000.0 * r))
                .collect(),
        }
    }

    fn exp(margin: Option<f64>) -> Experiment {
        let text = "[experiment]\nname = \"s\"\ntest_time = \"1s\"\n\
                    [[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n\
                    [[workload]]\nname = \"w\"\ntests = \"set\"\n";
        let mut e = crate::resolve::parse("s.toml", text, &Default::default()).unwrap();
        e.margin = margin;
        e
    }

    /// A run until decided of at most 12 rounds.
    fn dexp(margin: Option<f64>) -> Experiment {
        let mut e = decided_exp("", "max_rounds = 12");
        e.margin = margin;
        e
    }

    #[test]
    fn a_clear_slowdown_is_decided_and_noise_is_not() {
        let slow: Vec<f64> = (0..12).map(|i| 0.9 + 0.01 * f64::from(i % 3)).collect();
        let a = assess(&dexp(None), &[standing(&slow)], &Timeline::default());
        assert_eq!(a.rounds, 12);
        assert_eq!(a.comparisons[0].decision, Decision::Lower);
        assert!(a.all_decided());
        let noise: Vec<f64> = (0..12)
            .map(|i| 1.0 + 0.05 * f64::from(i % 3) - 0.05)
            .collect();
        let a = assess(&dexp(None), &[standing(&noise)], &Timeline::default());
        assert!(!a.all_decided());
        assert!(rounds_to_decision(&a.comparisons[0], None).is_none());
        let a = assess(&dexp(Some(0.5)), &[standing(&noise)], &Timeline::default());
        assert_eq!(a.comparisons[0].decision, Decision::Equivalent);
    }

    #[test]
    fn the_gate_takes_decided_worse_comparisons_beyond_the_limit() {
        let slow: Vec<f64> = (0..12).map(|i| 0.9 + 0.01 * f64::from(i % 3)).collect();
        let a = assess(&dexp(None), &[standing(&slow)], &Timeline::default());
        let e = worse_pct(&a.comparisons[0], true).unwrap();
        assert!((-10.0..-8.0).contains(&e), "{e}");
        assert_eq!(regressions(&a, true, 5.0).len(), 1);
        assert!(regressions(&a, true, 12.0).is_empty());
        // Lower is better: the same fall is an improvement.
        assert!(worse_pct(&a.comparisons[0], false).is_none());
        assert!(regressions(&a, false, 0.0).is_empty());
        let noise: Vec<f64> = (0..12)
            .map(|i| 1.0 + 0.05 * f64::from(i % 3) - 0.05)
            .collect();
        let a = assess(&dexp(None), &[standing(&noise)], &Timeline::default());
        assert!(regressions(&a, true, 0.0).is_empty());
    }

    #[test]
    fn limits_are_checked() {
        let e = exp(None);
        let few = UntilDecided {
            max_rounds: Some(2),
            max_time_sec: None,
            rule: UntilRule::default(),
        };
        assert_eq!(check(&e, &few).unwrap_err().limit, Limit::MaxRounds);
        let short = UntilDecided {
            max_rounds: None,
            max_time_sec: Some(0.01),
            rule: UntilRule::default(),
        };
        assert_eq!(check(&e, &short).unwrap_err().limit, Limit::MaxTime);
        let fine = UntilDecided {
            max_rounds: Some(50),
            max_time_sec: Some(3600.0),
            rule: UntilRule::default(),
        };
        assert!(check(&e, &fine).is_ok());
        assert!(rule_text(&e, &fine).contains("max_rounds 50, max_time 3600 s"));
    }

    fn until(max_rounds: Option<u32>, max_time_sec: Option<f64>, rule: UntilRule) -> UntilDecided {
        UntilDecided {
            max_rounds,
            max_time_sec,
            rule,
        }
    }

    #[test]
    fn planned_rounds_follow_the_limits_and_the_pace() {
        let spend = UntilRule::Spending;
        assert_eq!(
            planned_rounds(&until(Some(40), None, spend), 5, Some(10.0), 2.0),
            40
        );
        // 60 s at 2 s a round: 10 rounds done in 20 s, 20 more fit.
        let timed = until(None, Some(60.0), spend);
        assert_eq!(planned_rounds(&timed, 10, Some(20.0), 1.0), 30);
        assert_eq!(planned_rounds(&timed, 0, None, 3.0), 20);
        // Both limits: the smaller; the limit reached: the rounds so far.
        assert_eq!(
            planned_rounds(&until(Some(25), Some(60.0), spend), 10, Some(20.0), 1.0),
            25
        );
        assert_eq!(planned_rounds(&timed, 29, Some(59.0), 1.0), 29);
        let mut line = Timeline::default();
        line.record(10, 20.0);
        line.record(10, 25.0);
        assert_eq!(line.elapsed(10), Some(20.0));
        assert_eq!(line.elapsed(20), Some(40.0));
        assert_eq!(Timeline::default().elapsed(3), None);
    }

    fn decided_exp(rule: &str, limits: &str) -> Experiment {
        let text = format!(
            "[experiment]\nname = \"s\"\ntest_time = \"1s\"\nuntil = \"decided\"\n{limits}\n\
             {rule}\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n\
             [[workload]]\nname = \"w\"\ntests = \"set\"\n"
        );
        crate::resolve::parse("s.toml", &text, &Default::default()).unwrap()
    }

    #[test]
    fn the_rule_is_chosen_in_the_file_and_kept_in_the_stored_plan() {
        let new = decided_exp("", "max_rounds = 30");
        assert_eq!(new.until_decided.unwrap().rule, UntilRule::Spending);
        let any = decided_exp("until_rule = \"anytime\"", "max_rounds = 30");
        assert_eq!(any.until_decided.unwrap().rule, UntilRule::Anytime);
        let pocock = decided_exp("until_rule = \"spending-pocock\"", "max_rounds = 30");
        assert_eq!(
            pocock.until_decided.unwrap().rule,
            UntilRule::SpendingPocock
        );
        assert!(rule_text(&new, &new.until_decided.unwrap()).contains("O'Brien-Fleming"));
        // Stored and read back, the rule is kept; a plan stored before the key existed
        // reads as the confidence sequence it ran with.
        let back = Experiment::from_json(&new.to_json()).unwrap();
        assert_eq!(back.until_decided.unwrap().rule, UntilRule::Spending);
        let mut old = new.to_json();
        old["until_decided"].as_object_mut().unwrap().remove("rule");
        let back = Experiment::from_json(&old).unwrap();
        assert_eq!(back.until_decided.unwrap().rule, UntilRule::Anytime);
    }

    #[test]
    fn a_bad_rule_is_a_spanned_error() {
        let text = "[experiment]\nname = \"s\"\ntest_time = \"1s\"\nuntil = \"decided\"\n\
                    max_rounds = 30\nuntil_rule = \"bayes\"\n[[variant]]\nname = \"a\"\n\
                    [[variant]]\nname = \"b\"\n[[workload]]\nname = \"w\"\ntests = \"set\"\n";
        let err = crate::resolve::parse("s.toml", text, &Default::default()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("s.toml:6:"), "{msg}");
        assert!(
            msg.contains(
                "expected one of \"spending\", \"spending-pocock\", \"anytime\", found \"bayes\""
            ),
            "{msg}"
        );
        let text = text.replace("until = \"decided\"\nmax_rounds = 30\n", "rounds = 5\n");
        let err = crate::resolve::parse("s.toml", &text, &Default::default()).unwrap_err();
        assert!(
            err.to_string()
                .contains("until_rule applies only with until = \"decided\""),
            "{err}"
        );
    }

    #[test]
    fn the_spending_interval_is_narrower_than_the_sequence_at_the_horizon() {
        // 30 rounds of a noisy 4 % slowdown, planned for 30: at the last look the
        // spending rule's repeated interval is narrower than the confidence sequence's.
        let ratios: Vec<f64> = (0..30)
            .map(|i| 0.96 * (1.0 + 0.06 * (f64::from(i * 7 % 11) - 5.0) / 5.0))
            .collect();
        let spend = decided_exp("", "max_rounds = 30");
        let any = decided_exp("until_rule = \"anytime\"", "max_rounds = 30");
        let s = assess(&spend, &[standing(&ratios)], &Timeline::default());
        let a = assess(&any, &[standing(&ratios)], &Timeline::default());
        let (s, a) = (&s.comparisons[0].look, &a.comparisons[0].look);
        assert!(s.half_width() < 0.8 * a.half_width(), "{s:?} vs {a:?}");
        assert!((s.mean - a.mean).abs() < 1e-12);
    }

    #[test]
    fn a_spending_look_predicts_rounds_at_its_critical_value() {
        // Half-width 0.08 at 10 rounds and sd 0.1: critical value 0.8·√10 ≈ 2.53; to
        // exclude zero at a mean of 0.05 the half-width must fall below 0.05, at
        // n = (2.53 · 0.1 / 0.05)² ≈ 25.6, so 16 more rounds.
        let c = ComparisonLook {
            workload: "w".into(),
            variant: "b".into(),
            look: Look {
                n: 10,
                mean: 0.05,
                low: -0.03,
                high: 0.13,
                sd: 0.1,
            },
            decision: Decision::Continue,
            rule: rule(&until(Some(100), None, UntilRule::Spending)),
        };
        assert_eq!(rounds_to_decision(&c, None), Some(16));
        let open = ComparisonLook {
            look: Look {
                low: f64::NEG_INFINITY,
                high: f64::INFINITY,
                ..c.look
            },
            ..c.clone()
        };
        assert_eq!(rounds_to_decision(&open, None), None);
    }

    #[test]
    fn limits_from_flags() {
        let mut e = exp(None);
        let hour = Some(Duration::from_secs(3600));
        assert_eq!(
            apply_limits(&mut e, false, None, hour).unwrap_err().limit,
            Limit::MaxTime
        );
        assert_eq!(
            apply_limits(&mut e, true, None, None).unwrap_err().limit,
            Limit::Until
        );
        apply_limits(&mut e, false, None, None).unwrap();
        assert!(e.until_decided.is_none());
        apply_limits(&mut e, true, None, hour).unwrap();
        assert_eq!(e.rounds, UntilDecided::ROUND_CAP);
        apply_limits(&mut e, false, Some(40), None).unwrap();
        assert_eq!(e.rounds, 40);
        assert_eq!(e.until_decided.unwrap().max_time_sec, Some(3600.0));
    }

    #[test]
    fn run_flags_name_the_flag_at_fault() {
        let mut e = exp(None);
        let err = apply_flags(&mut e, true, None, Some("soon"), &[]).unwrap_err();
        assert_eq!(err.0, "--max-time");
        let err = apply_flags(&mut e, false, Some(4), None, &[]).unwrap_err();
        assert_eq!(err.0, "--max-rounds");
        let a = vec!["a".to_string()];
        let err = apply_flags(&mut e, true, None, Some("1h"), &a).unwrap_err();
        assert_eq!(err.0, "--variants");
        assert!(err.1.contains("cannot run in phases"), "{}", err.1);
        let mut e = exp(None);
        apply_flags(&mut e, false, None, None, &a).unwrap();
        assert!(e.until_decided.is_none());
    }
}
