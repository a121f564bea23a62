//! What `resplab bisect` found, as plain records: the commits, each measured pair's
//! anytime-valid interval and decision, each tested commit's class, the steps and the
//! conclusion. `resplab_experiment::bisect` fills them in (and writes them as JSON next
//! to its worktrees); `resplab_report::bisect` words them. The JSON form is this module's
//! serde shape (docs/bisect.md).

use resplab_stats::sequential::{Decision, Look};
use serde::Serialize;
use std::path::PathBuf;

/// One commit: its full id and the first line of its message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Commit {
    pub id: String,
    pub subject: String,
}

impl Commit {
    /// The first 10 hex digits of the id.
    pub fn short(&self) -> &str {
        &self.id[..self.id.len().min(10)]
    }
}

/// One comparison of a candidate against a base on the followed workload: the
/// anytime-valid interval of the mean log ratio, and its decision.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Measured {
    pub workload: String,
    pub rounds: usize,
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    #[serde(serialize_with = "decision_name")]
    pub decision: Decision,
}

fn decision_name<S: serde::Serializer>(d: &Decision, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(d.name())
}

impl Measured {
    /// The interval as a [`Look`], for the verdict's wording.
    pub fn look(&self) -> Look {
        Look {
            n: self.rounds,
            mean: self.mean,
            low: self.low,
            high: self.high,
            sd: 0.0,
        }
    }

    /// Decided higher or lower (not equivalent, not open).
    pub fn is_different(&self) -> bool {
        matches!(self.decision, Decision::Higher | Decision::Lower)
    }

    /// The other way round: `base` against `cand` from `cand` against `base`.
    pub fn reversed(&self) -> Measured {
        Measured {
            workload: self.workload.clone(),
            rounds: self.rounds,
            mean: -self.mean,
            low: -self.high,
            high: -self.low,
            decision: match self.decision {
                Decision::Higher => Decision::Lower,
                Decision::Lower => Decision::Higher,
                d => d,
            },
        }
    }
}

/// What a tested commit was found to be (the search's rules: `experiment::bisect::search`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Before,
    After,
    Split,
    Undecided,
    Skipped,
}

/// One tested commit, as reported.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TestedCommit {
    pub commit: Commit,
    pub against: Commit,
    /// The commit at the level after the change it was also measured against.
    pub end: Commit,
    pub class: Class,
    /// Against `against`, and against `end` (log ratios).
    pub effect: Option<Measured>,
    pub effect_against_end: Option<Measured>,
    pub experiment: Option<String>,
    pub build_log: Option<PathBuf>,
}

/// One step: the commit that made it (or the commits, when skipped ones hide which).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepReport {
    pub commits: Vec<Commit>,
    pub against: Commit,
    pub effect: Measured,
}

/// How a bisect ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Conclusion {
    /// Still searching (the state written while the bisect runs).
    Searching,
    /// Good against bad was not decided different: nothing to look for.
    NoEffect,
    /// One step, one commit.
    Culprit,
    /// One step in a range of commits (skipped ones between).
    Range,
    /// More than one step.
    Steps,
}

/// Everything a bisect found.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Outcome {
    pub id: String,
    pub good: Commit,
    pub bad: Commit,
    /// Commits strictly between good and bad.
    pub between: usize,
    pub metric: String,
    pub higher_is_better: bool,
    pub margin: Option<f64>,
    pub effect: Measured,
    pub effect_experiment: String,
    pub conclusion: Conclusion,
    pub tested: Vec<TestedCommit>,
    pub steps: Vec<StepReport>,
    pub cache: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(mean: f64, decision: Decision) -> Measured {
        Measured {
            workload: "get".into(),
            rounds: 8,
            mean,
            low: mean - 0.1,
            high: mean + 0.1,
            decision,
        }
    }

    #[test]
    fn reversed_swaps_the_interval_and_the_decision() {
        let r = m(-0.7, Decision::Lower).reversed();
        assert_eq!(r.decision, Decision::Higher);
        assert!((r.low - 0.6).abs() < 1e-12 && (r.high - 0.8).abs() < 1e-12);
        assert!(r.is_different());
        assert!(!m(0.0, Decision::Equivalent).is_different());
    }

    #[test]
    fn short_ids_are_ten_digits_at_most() {
        let c = Commit {
            id: "0123456789abcdef".into(),
            subject: "s".into(),
        };
        assert_eq!(c.short(), "0123456789");
        let c = Commit {
            id: "abc".into(),
            subject: "s".into(),
        };
        assert_eq!(c.short(), "abc");
    }

    #[test]
    fn the_decision_is_written_by_its_name() {
        let v = serde_json::to_value(m(0.2, Decision::Higher)).unwrap();
        assert_eq!(v["decision"], Decision::Higher.name());
    }
}
