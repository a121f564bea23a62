//! A change point re-measured: the paired, interleaved A/B of the commits on either side
//! (`resplab history --confirm`), and what it decided.
//!
//! A change point found in a history is a hypothesis: on a flat series of independent
//! points one in twenty shows a false one, and points that drift together show more. An
//! A/B of the two commits, run until its anytime-valid interval decides, tests it
//! directly. The change is *confirmed* when the A/B decides a difference in the same
//! direction as the change; an A/B that decides the other way, equivalence, or nothing
//! within its time limit leaves it *not confirmed*.

use serde::{Deserialize, Serialize};

/// The A/B verdict of one change point, as stored (`history_confirmations`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Confirmation {
    pub series: String,
    pub workload: String,
    pub metric: String,
    /// The commits on either side of the change: the A/B's baseline and its other variant.
    pub commit_before: String,
    pub commit_after: String,
    /// The tracked point where the new level starts.
    pub point_id: i64,
    /// The stored A/B experiment (`resplab compare db:NAME` reads it).
    pub experiment: String,
    /// The A/B decided a difference in the direction of the change.
    pub confirmed: bool,
    /// The A/B's decision on after ÷ before: `higher`, `lower`, `equivalent`, or
    /// `undecided` when its time limit came first.
    pub decision: String,
    /// The A/B's estimate of after ÷ before − 1, percent, and its anytime-valid 95 %
    /// interval (absent while the interval is unbounded).
    pub effect_pct: f64,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    /// Paired rounds the verdict rests on.
    pub rounds: u32,
    pub recorded_at_unix_ms: i64,
}

impl Confirmation {
    /// Whether a decision on after ÷ before confirms a change of `effect_pct` percent:
    /// `higher` a rise, `lower` a fall.
    pub fn agrees(decision: &str, effect_pct: f64) -> bool {
        match decision {
            "higher" => effect_pct > 0.0,
            "lower" => effect_pct < 0.0,
            _ => false,
        }
    }

    /// `confirmed by A/B: -9.8 % [-11.2, -8.3], 12 rounds (db:NAME)` or `not confirmed
    /// by A/B: equivalent …`.
    pub fn words(&self) -> String {
        let interval = match (self.ci_low_pct, self.ci_high_pct) {
            (Some(l), Some(h)) => format!(" [{l:+.1}, {h:+.1}]"),
            _ => String::new(),
        };
        let (head, what) = if self.confirmed {
            ("confirmed", String::new())
        } else {
            ("NOT confirmed", format!("{}, ", self.decision))
        };
        format!(
            "{head} by A/B: {what}{:+.1} %{interval}, {} rounds (db:{})",
            self.effect_pct, self.rounds, self.experiment
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_confirms_only_a_change_of_its_sign() {
        assert!(Confirmation::agrees("lower", -10.0));
        assert!(!Confirmation::agrees("lower", 10.0));
        assert!(Confirmation::agrees("higher", 3.0));
        assert!(!Confirmation::agrees("equivalent", -10.0));
        assert!(!Confirmation::agrees("undecided", -10.0));
        let mut c = Confirmation {
            series: "s".into(),
            workload: "w".into(),
            metric: "ops_per_sec".into(),
            commit_before: "a".into(),
            commit_after: "b".into(),
            point_id: 3,
            experiment: "confirm-1".into(),
            confirmed: true,
            decision: "lower".into(),
            effect_pct: -9.84,
            ci_low_pct: Some(-11.2),
            ci_high_pct: Some(-8.3),
            rounds: 12,
            recorded_at_unix_ms: 0,
        };
        assert_eq!(
            c.words(),
            "confirmed by A/B: -9.8 % [-11.2, -8.3], 12 rounds (db:confirm-1)"
        );
        c.confirmed = false;
        c.decision = "undecided".into();
        c.ci_low_pct = None;
        assert!(c
            .words()
            .starts_with("NOT confirmed by A/B: undecided, -9.8 %, 12"));
    }
}
