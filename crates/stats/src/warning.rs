//! Every warning resplab gives, as one typed enum whose message says what happened and
//! what to change.
//!
//! Producers build a variant with its numbers: the load engine and `bench` (errors,
//! lost connections, a lagging schedule, a saturated client, …), the shard merge, the
//! comparison statistics (too few trials, high variance, outlier rounds, …) and the
//! comparison report (values left out, unmatched rounds, …). Renderers show
//! [`Warning::kind`] and [`Warning::message`] and never word a warning themselves.
//!
//! On the wire (run record JSON, comparison JSON, the store) a warning is
//! `{"kind": "...", "message": "..."}`; the kind strings are stable identifiers. A
//! warning read back from a record keeps its kind and message as written, as
//! [`Warning::Recorded`]: its numbers live on only in the message.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A warning with its advice.
#[derive(Clone, Debug, PartialEq)]
pub enum Warning {
    // ---- a load run ----
    /// Requests failed (error replies, timeouts, resets), counted per error kind.
    Errors {
        failed: u64,
        requests: u64,
        /// Error kind and count, in the order the run record lists them.
        kinds: Vec<(String, u64)>,
    },
    /// The target could not be reached for part of the run.
    Unreachable {
        unreachable_sec: f64,
        /// Rate over the whole window.
        ops_per_sec: f64,
        /// Rate over the time the target could be reached.
        reachable_ops_per_sec: f64,
    },
    /// Connections were reset and reopened.
    Reconnects {
        reconnects: u64,
        protocol_errors: u64,
    },
    /// The open-loop generator fell behind its schedule.
    ScheduleLag {
        send_lag_p99_9_us: f64,
        limit_us: f64,
        unsent: u64,
    },
    /// A run given `--start-at` began its load late.
    StartLate { late_ms: f64 },
    /// `--insecure`: the server's certificate was not verified.
    TlsInsecure,
    /// The load generator's threads were busy most of the run.
    ClientSaturated { threads: f64, busy_pct: f64 },
    // ---- a merge of shards ----
    /// Shards missing from a merge made with `--partial`.
    PartialMerge {
        /// The missing shards, as `index/count`.
        missing: Vec<String>,
        merged: usize,
        count: u32,
    },
    /// The shards began their load too far apart.
    StartSpread {
        spread_ms: f64,
        /// What the start times were taken from.
        basis: String,
    },
    /// A warning of one shard, carried into the merged record.
    Shard {
        /// 0-based shard index.
        index: u32,
        count: u32,
        host: String,
        warning: Box<Warning>,
    },
    // ---- a comparison ----
    /// Fewer trials than a finite interval needs (`need` per arm, or pairs).
    TooFewTrials {
        /// Trials (or pairs) available.
        have: usize,
        /// Trials (or pairs) needed for a finite interval at this confidence.
        need: usize,
    },
    /// The per-trial variation is high (coefficient of variation above the threshold).
    HighVariance {
        /// Estimated per-trial CV in percent.
        cv_pct: f64,
        /// The threshold in percent.
        threshold_pct: f64,
    },
    /// Trials of the two arms were not interleaved, so they are compared unpaired.
    NotInterleaved,
    /// The two arms ran in different phases of an experiment and are paired by round
    /// number only (same kind as [`Warning::NotInterleaved`]).
    PhasesNotInterleaved { variant: String, baseline: String },
    /// The variant went the way the caller said it cannot plausibly go.
    ImplausibleDirection {
        /// The estimated effect in percent.
        effect_pct: f64,
    },
    /// Rounds far from the others (paired designs).
    OutlierRounds {
        /// The flagged rounds: 0-based positions as the statistics return them, round
        /// numbers of the input once the report has named them.
        rounds: Vec<usize>,
    },
    /// So few pairs that the exact signed-rank test's smallest p-value (every
    /// difference of one sign) is close to α.
    FewPairs {
        /// Pairs available.
        pairs: usize,
        /// The smallest two-sided p-value the test can give, 2/2ⁿ.
        min_p: f64,
    },
    /// A value of an input was flagged on reading and left out.
    FlaggedValue {
        label: String,
        value: f64,
        /// Where it came from (file and line, trial, …).
        origin: String,
        why: String,
    },
    /// One side of a comparison has no usable values.
    NoValues,
    /// A round holds several values of one label, so trials cannot be paired by round.
    RepeatedRounds,
    /// Trials without a partner in the same round, left out of a paired comparison.
    UnmatchedRounds { trials: usize },
    /// Values ≤ 0 (or not finite): no ratio. `error` is the statistics' error text.
    NonPositive { error: String },
    /// Every value of both samples is the same.
    AllEqual,
    /// Any other reason the statistics could not compare two samples.
    NotComparable { error: String },
    // ---- read back ----
    /// A warning read back from a record: its kind and message as written.
    Recorded { kind: String, message: String },
}

impl Warning {
    /// The stable identifier of the warning (`errors`, `too_few_trials`, …).
    pub fn kind(&self) -> &str {
        match self {
            Warning::Errors { .. } => "errors",
            Warning::Unreachable { .. } => "unreachable",
            Warning::Reconnects { .. } => "reconnects",
            Warning::ScheduleLag { .. } => "schedule_lag",
            Warning::StartLate { .. } => "start_late",
            Warning::TlsInsecure => "tls_insecure",
            Warning::ClientSaturated { .. } => "client_saturated",
            Warning::PartialMerge { .. } => "partial_merge",
            Warning::StartSpread { .. } => "start_spread",
            Warning::Shard { warning, .. } => warning.kind(),
            Warning::TooFewTrials { .. } => "too_few_trials",
            Warning::HighVariance { .. } => "high_variance",
            Warning::NotInterleaved | Warning::PhasesNotInterleaved { .. } => "not_interleaved",
            Warning::ImplausibleDirection { .. } => "implausible_direction",
            Warning::OutlierRounds { .. } => "outlier_rounds",
            Warning::FewPairs { .. } => "few_pairs",
            Warning::FlaggedValue { .. } => "flagged_value",
            Warning::NoValues => "no_values",
            Warning::RepeatedRounds => "repeated_rounds",
            Warning::UnmatchedRounds { .. } => "unmatched_rounds",
            Warning::NonPositive { .. } => "non_positive",
            Warning::AllEqual => "all_equal",
            Warning::NotComparable { .. } => "not_comparable",
            Warning::Recorded { kind, .. } => kind,
        }
    }

    /// What happened and what to change, in one line.
    pub fn message(&self) -> String {
        self.run_message()
            .or_else(|| self.merge_message())
            .or_else(|| self.comparison_message())
            .unwrap_or_else(|| match self {
                Warning::Recorded { message, .. } => message.clone(),
                other => format!("{other:?}"),
            })
    }

    /// The warning split for showing many of one kind as one line: the figure particular
    /// to this occurrence (`None` when it has none) and the text every occurrence of the
    /// kind shares (what it means and what to change). Warnings of one kind with the same
    /// shared text are one line, each place with its figure: nine `high_variance`
    /// warnings read "per-trial variation above 5.0%" once.
    pub fn split(&self) -> (Option<String>, String) {
        let (figure, shared) = match self {
            Warning::HighVariance { cv_pct, threshold_pct } => (
                format!("{cv_pct:.1}%"),
                format!("per-trial variation above {threshold_pct:.1}%: pin CPUs, set the governor to performance, lengthen windows, or add rounds"),
            ),
            Warning::TooFewTrials { have, need } => (
                format!("{have}"),
                format!("fewer trials than the {need} a confidence interval needs (10 or more recommended)"),
            ),
            Warning::FewPairs { pairs, min_p } => (
                format!("{pairs} pairs, p ≥ {min_p:.3}"),
                "with few pairs the signed-rank test's p-value has a floor; an effect is found only if it shows in nearly every round, and the MDE is the effect that does so 80% of the time: more rounds detect smaller effects".into(),
            ),
            Warning::ImplausibleDirection { effect_pct } => (
                format!("{effect_pct:+.2}%"),
                "the variant looks better in an implausible direction: suspect code layout or placement bias; compare several builds (link orders, env padding) and check CPU placement".into(),
            ),
            Warning::OutlierRounds { rounds } => (
                format!("rounds {rounds:?}"),
                "rounds far from the others (> 5 MADs), kept; see the leave-one-out lines and check those runs for interference".into(),
            ),
            Warning::UnmatchedRounds { trials } => (
                format!("{trials} trials"),
                "trials without a partner in the same round, left out of the paired comparison; check for failed or missing trials".into(),
            ),
            Warning::ClientSaturated { threads, busy_pct } => (
                format!("{threads} thread(s) {busy_pct:.0}% busy"),
                "the load generator was busy enough that the figures may measure the client, not the server; add --threads or give the client its own CPUs".into(),
            ),
            other => return (None, other.message()),
        };
        (Some(figure), shared)
    }

    fn merge_message(&self) -> Option<String> {
        Some(match self {
            Warning::PartialMerge {
                missing,
                merged,
                count,
            } => format!(
                "shard(s) {} missing: the figures cover {merged} of {count} shards, not the whole workload",
                missing.join(", ")
            ),
            Warning::StartSpread { spread_ms, basis } => format!(
                "the shards began {spread_ms:.0} ms apart ({basis}): the first and last intervals of the series hold fewer shards; use --start-at with a time far enough ahead for every shard to connect"
            ),
            Warning::Shard {
                index,
                count,
                host,
                warning,
            } => format!("shard {}/{count} ({host}): {}", index + 1, warning.message()),
            _ => return None,
        })
    }

    fn run_message(&self) -> Option<String> {
        Some(match self {
            Warning::Errors {
                failed,
                requests,
                kinds,
            } => {
                let kinds: Vec<String> = kinds.iter().map(|(k, v)| format!("{k} x{v}")).collect();
                format!(
                    "{failed} of {requests} requests failed ({}); check the commands and the server log",
                    kinds.join(", ")
                )
            }
            Warning::Unreachable {
                unreachable_sec,
                ops_per_sec,
                reachable_ops_per_sec,
            } => format!(
                "the target could not be reached for {unreachable_sec:.1} s of the run: {ops_per_sec:.0} ops/s over the whole window, {reachable_ops_per_sec:.0} ops/s over the time it could be reached; neither is a healthy figure: run again"
            ),
            Warning::Reconnects {
                reconnects,
                protocol_errors,
            } => format!(
                "connections were reset {reconnects} times ({protocol_errors} protocol errors); latency around the resets is not representative"
            ),
            Warning::ScheduleLag {
                send_lag_p99_9_us,
                limit_us,
                unsent,
            } => format!(
                "the load generator fell behind its schedule (send lag p99.9 {send_lag_p99_9_us:.0} us, limit {limit_us:.0} us, {unsent} requests unsent); lower --rate, or raise --threads, --clients or --pipeline"
            ),
            Warning::StartLate { late_ms } => format!(
                "the load began {late_ms:.0} ms after --start-at (the connections were not ready in time, or the time had passed): shards did not start together; give a later --start-at"
            ),
            Warning::TlsInsecure => "--insecure: the server's TLS certificate was NOT verified; anything could have answered on that address".into(),
            Warning::ClientSaturated { threads, busy_pct } => format!(
                "the load generator kept its {threads} thread(s) {busy_pct:.0}% busy: the figures may measure the client, not the server; add --threads or give the client its own CPUs"
            ),
            _ => return None,
        })
    }

    fn comparison_message(&self) -> Option<String> {
        Some(match self {
            Warning::TooFewTrials { have, need } => format!(
                "only {have} trials; at least {need} are needed for a confidence interval (10 or more recommended)"
            ),
            Warning::HighVariance { cv_pct, threshold_pct } => format!(
                "per-trial variation is {cv_pct:.1}% (above {threshold_pct:.1}%): pin CPUs, set the governor to performance, lengthen windows, or add rounds"
            ),
            Warning::NotInterleaved => "trials of the two arms were not interleaved: drift can masquerade as an effect; run randomized interleaved rounds".into(),
            Warning::PhasesNotInterleaved { variant, baseline } => format!(
                "{variant} and {baseline} ran in different phases (not interleaved): their trials are paired by round number only, so drift between the phases (a reboot, another kernel) is confounded with the change"
            ),
            Warning::ImplausibleDirection { effect_pct } => format!(
                "the variant looks {effect_pct:+.2}% in an implausible direction: suspect code layout or placement bias; compare several builds (link orders, env padding) and check CPU placement"
            ),
            Warning::FewPairs { pairs, min_p } => format!(
                "with {pairs} pairs the signed-rank test's p-value cannot go below {min_p:.3} (all {pairs} rounds on one side); an effect is found only if it shows in nearly every round, and the MDE is the effect that does so 80% of the time: more rounds detect smaller effects"
            ),
            Warning::OutlierRounds { rounds } => format!(
                "rounds {rounds:?} lie far from the others (> 5 MADs); they are kept; see the leave-one-out line and check those runs for interference"
            ),
            Warning::FlaggedValue {
                label,
                value,
                origin,
                why,
            } => format!("{label}: value {value} from {origin} left out: {why}"),
            Warning::NoValues => "one side has no usable values; nothing to compare".into(),
            Warning::RepeatedRounds => "a round holds several values of one label (with --paired: several values of this metric per file), so trials cannot be paired by round; compared unpaired".into(),
            Warning::UnmatchedRounds { trials } => format!(
                "{trials} trials have no partner in the same round and were left out of the paired comparison; check for failed or missing trials"
            ),
            Warning::NonPositive { error } => format!(
                "{error}; values ≤ 0 have no ratio: compare them with --style ministat (differences of means) instead"
            ),
            Warning::AllEqual => "every value of both samples is the same; a rank test has nothing to compare".into(),
            Warning::NotComparable { error } => error.clone(),
            _ => return None,
        })
    }
}

/// The wire form of a warning.
#[derive(Serialize, Deserialize)]
struct Wire<K, M> {
    kind: K,
    message: M,
}

impl Serialize for Warning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Wire {
            kind: self.kind(),
            message: self.message(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Warning {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = Wire::<String, String>::deserialize(d)?;
        Ok(Warning::Recorded {
            kind: w.kind,
            message: w.message,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_form_is_kind_and_message_and_reads_back() {
        let w = Warning::Reconnects {
            reconnects: 3,
            protocol_errors: 1,
        };
        let json = serde_json::to_string(&w).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"reconnects","message":"connections were reset 3 times (1 protocol errors); latency around the resets is not representative"}"#
        );
        let back: Warning = serde_json::from_str(&json).unwrap();
        assert_eq!(back.kind(), "reconnects");
        assert_eq!(back.message(), w.message());
        assert!(matches!(back, Warning::Recorded { .. }));
    }

    #[test]
    fn a_shard_warning_keeps_its_kind_and_names_the_shard() {
        let w = Warning::Shard {
            index: 1,
            count: 4,
            host: "gen-b".into(),
            warning: Box::new(Warning::TlsInsecure),
        };
        assert_eq!(w.kind(), "tls_insecure");
        assert!(w.message().starts_with("shard 2/4 (gen-b): --insecure: "));
    }

    #[test]
    fn every_variant_has_a_kind_and_a_message() {
        let all = [
            Warning::Errors {
                failed: 2,
                requests: 10,
                kinds: vec![("ERR".into(), 2)],
            },
            Warning::ScheduleLag {
                send_lag_p99_9_us: 1500.0,
                limit_us: 1000.0,
                unsent: 7,
            },
            Warning::ClientSaturated {
                threads: 2.0,
                busy_pct: 93.0,
            },
            Warning::PartialMerge {
                missing: vec!["2/3".into()],
                merged: 2,
                count: 3,
            },
            Warning::NotInterleaved,
            Warning::PhasesNotInterleaved {
                variant: "b".into(),
                baseline: "a".into(),
            },
            Warning::UnmatchedRounds { trials: 2 },
            Warning::NotComparable {
                error: "too few".into(),
            },
        ];
        for w in &all {
            assert!(!w.kind().is_empty());
            assert!(!w.message().is_empty(), "{w:?}");
        }
        assert_eq!(
            all[0].message(),
            "2 of 10 requests failed (ERR x2); check the commands and the server log"
        );
        assert_eq!(all[5].kind(), "not_interleaved");
        assert!(all[3]
            .message()
            .starts_with("shard(s) 2/3 missing: the figures cover 2 of 3"));
    }

    #[test]
    fn warnings_of_one_kind_share_their_text_and_keep_their_figures() {
        let a = Warning::HighVariance {
            cv_pct: 17.4,
            threshold_pct: 5.0,
        };
        let b = Warning::HighVariance {
            cv_pct: 8.5,
            threshold_pct: 5.0,
        };
        assert_ne!(a.message(), b.message());
        assert_eq!(a.split().1, b.split().1);
        assert_eq!(a.split().0.as_deref(), Some("17.4%"));
        let plain = Warning::NotInterleaved;
        assert_eq!(plain.split(), (None, plain.message()));
    }
}
