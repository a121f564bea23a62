//! Run until decided (`until = "decided"`): after every round, an anytime-valid interval
//! for each primary comparison, and the decision to go on or stop.
//!
//! Each primary comparison (workload × variant against the baseline, on the primary
//! metric) gets the confidence sequence of [`resplab_stats::sequential`] for the mean of
//! its per-round log ratios. The run stops at the start of a round when every comparison
//! is decided (its interval excludes zero, or lies inside ±`margin`), or when the next
//! round would pass `max_time`, or after `max_rounds` rounds; then the comparisons still
//! open are *undecided*, reported with the effect they could have detected. Invalid
//! rounds are not looked at (a later round takes their place); a resumed run recomputes
//! the looks from the stored rounds and counts the wall time already spent from the
//! stored looks, so a kill does not restart the sequence.
//!
//! This module is the rule; the runner calls it between rounds (`runner::sequential`)
//! and the store keeps every look and the reason of the stop.

use crate::model::{Experiment, UntilDecided};
use crate::plan;
use crate::runner::Standing;
use resplab_stats::sequential::{confidence_sequence, decide, first_bounded_round};
pub use resplab_stats::sequential::{Decision, Look, SequenceConfig};
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

/// The settings of the interval: α = 5 %, tightest near 20 rounds.
pub fn config() -> SequenceConfig {
    SequenceConfig::default()
}

/// The stopping rule in words, as stored with the run and printed with its verdict.
pub fn rule_text(exp: &Experiment, until: &UntilDecided) -> String {
    let cfg = config();
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
    format!(
        "until decided: Lai's confidence sequence for the mean log ratio (alpha {}, rho {:.2}), \
         {margin}, {}",
        cfg.alpha,
        cfg.rho,
        limits.join(", ")
    )
}

/// The interval and decision of every comparison, from the runner's standings.
pub fn assess(exp: &Experiment, standings: &[Standing]) -> Assessment {
    let cfg = config();
    let comparisons: Vec<ComparisonLook> = standings
        .iter()
        .map(|s| {
            let d: Vec<f64> = s
                .pairs
                .iter()
                .filter(|(_, a, b)| *a > 0.0 && *b > 0.0)
                .map(|(_, a, b)| (b / a).ln())
                .collect();
            let look = confidence_sequence(&d, &cfg);
            ComparisonLook {
                workload: s.workload.clone(),
                variant: s.variant.clone(),
                look,
                decision: decide(&look, exp.margin),
            }
        })
        .collect();
    Assessment {
        rounds: comparisons.iter().map(|c| c.look.n).min().unwrap_or(0),
        comparisons,
    }
}

/// Rounds still needed, at the spread seen so far, until this comparison's interval is
/// narrow enough to decide: to exclude zero at the current estimate, or to fit inside
/// the margin. `None` when no decision is in sight within the round cap.
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
    let need = resplab_stats::sequential::rounds_to_width(
        &config(),
        look.sd,
        target,
        look.n,
        UntilDecided::ROUND_CAP as usize,
    )?;
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
    let first = first_bounded_round(&config());
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

    #[test]
    fn a_clear_slowdown_is_decided_and_noise_is_not() {
        let slow: Vec<f64> = (0..12).map(|i| 0.9 + 0.01 * f64::from(i % 3)).collect();
        let a = assess(&exp(None), &[standing(&slow)]);
        assert_eq!(a.rounds, 12);
        assert_eq!(a.comparisons[0].decision, Decision::Lower);
        assert!(a.all_decided());
        let noise: Vec<f64> = (0..12)
            .map(|i| 1.0 + 0.05 * f64::from(i % 3) - 0.05)
            .collect();
        let a = assess(&exp(None), &[standing(&noise)]);
        assert!(!a.all_decided());
        assert!(rounds_to_decision(&a.comparisons[0], None).is_none());
        let a = assess(&exp(Some(0.5)), &[standing(&noise)]);
        assert_eq!(a.comparisons[0].decision, Decision::Equivalent);
    }

    #[test]
    fn the_gate_takes_decided_worse_comparisons_beyond_the_limit() {
        let slow: Vec<f64> = (0..12).map(|i| 0.9 + 0.01 * f64::from(i % 3)).collect();
        let a = assess(&exp(None), &[standing(&slow)]);
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
        let a = assess(&exp(None), &[standing(&noise)]);
        assert!(regressions(&a, true, 0.0).is_empty());
    }

    #[test]
    fn limits_are_checked() {
        let e = exp(None);
        let few = UntilDecided {
            max_rounds: Some(3),
            max_time_sec: None,
        };
        assert_eq!(check(&e, &few).unwrap_err().limit, Limit::MaxRounds);
        let short = UntilDecided {
            max_rounds: None,
            max_time_sec: Some(0.01),
        };
        assert_eq!(check(&e, &short).unwrap_err().limit, Limit::MaxTime);
        let fine = UntilDecided {
            max_rounds: Some(50),
            max_time_sec: Some(3600.0),
        };
        assert!(check(&e, &fine).is_ok());
        assert!(rule_text(&e, &fine).contains("max_rounds 50, max_time 3600 s"));
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
}
