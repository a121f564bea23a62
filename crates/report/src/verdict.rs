//! The words of a verdict, in one place: the label a table shows (`FASTER`, `SLOWER`,
//! `EQUIVALENT`, …), the verdict of a bare interval (a geomean's), and the running
//! verdict line `resplab experiment run` prints after every round and at the end.
//!
//! The numbers behind a verdict come from [`resplab_stats::verdict`]; this module only
//! names them. Runs until decided have their own lines ([`sequential_line`],
//! [`look_progress_line`], [`stop_sentence`]), and every verdict its sensitivity
//! certificate ([`certificate_line`]). A metric with a direction is FASTER or SLOWER whichever way it is better
//! (a lower latency is FASTER); a metric without one is HIGHER or LOWER.

use resplab_results::sample::Direction;
use resplab_stats::sequential::{Decision, Look};
use resplab_stats::verdict::{compare_paired, min_pairs, CompareConfig, Verdict as StatsVerdict};
use serde::Serialize;

/// The verdict as printed: the stats verdict in the words of the metric's direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The variant is better than the baseline (interval excludes zero).
    Faster,
    /// The variant is worse than the baseline (interval excludes zero).
    Slower,
    /// The metric has no direction and went up (interval excludes zero).
    Higher,
    /// The metric has no direction and went down (interval excludes zero).
    Lower,
    /// The interval lies inside ±margin.
    Equivalent,
    /// None of the above: look at the MDE.
    Inconclusive,
    /// Too few trials for an interval, or values that have no ratio.
    NoVerdict,
}

impl Verdict {
    /// Upper-case label for tables.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Faster => "FASTER",
            Verdict::Slower => "SLOWER",
            Verdict::Higher => "HIGHER",
            Verdict::Lower => "LOWER",
            Verdict::Equivalent => "EQUIVALENT",
            Verdict::Inconclusive => "INCONCLUSIVE",
            Verdict::NoVerdict => "NO VERDICT",
        }
    }

    /// The verdict in a sentence of the running verdict line: the label, except that an
    /// equivalence names its margin (a fraction), an inconclusive result says that no
    /// difference was proven, and a missing verdict says why.
    pub fn sentence(self, margin: Option<f64>) -> String {
        match self {
            Verdict::Equivalent => {
                format!("EQUIVALENT within ±{:.1} %", margin.unwrap_or(0.0) * 100.0)
            }
            Verdict::Inconclusive => "no difference proven".into(),
            Verdict::NoVerdict => "too few rounds for a verdict".into(),
            other => other.label().into(),
        }
    }

    /// The stats verdict in the words of `direction`.
    pub fn from_stats(v: StatsVerdict, direction: Direction) -> Verdict {
        let plain = direction == Direction::Unknown;
        match v {
            StatsVerdict::Better if plain => Verdict::Higher,
            StatsVerdict::Worse if plain => Verdict::Lower,
            StatsVerdict::Better => Verdict::Faster,
            StatsVerdict::Worse => Verdict::Slower,
            StatsVerdict::Equivalent => Verdict::Equivalent,
            StatsVerdict::Inconclusive => Verdict::Inconclusive,
            StatsVerdict::TooFewTrials => Verdict::NoVerdict,
        }
    }
}

/// The verdict of an effect's interval (percent): better or worse when it excludes zero,
/// equivalent when it lies inside ±`margin_pct`, inconclusive otherwise. For a geomean,
/// whose bootstrap interval has no test of its own.
pub fn interval_verdict(
    low_pct: f64,
    high_pct: f64,
    direction: Direction,
    margin_pct: Option<f64>,
) -> Verdict {
    let up = low_pct > 0.0;
    let down = high_pct < 0.0;
    match direction {
        _ if !up && !down => match margin_pct {
            Some(m) if low_pct > -m && high_pct < m => Verdict::Equivalent,
            _ => Verdict::Inconclusive,
        },
        Direction::Unknown if up => Verdict::Higher,
        Direction::Unknown => Verdict::Lower,
        Direction::HigherIsBetter if up => Verdict::Faster,
        Direction::LowerIsBetter if down => Verdict::Faster,
        _ => Verdict::Slower,
    }
}

/// A p-value to three decimals; `<0.001` rather than a p of `0.000`.
pub fn fmt_p_value(p: f64) -> String {
    if p < 0.0005 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// The running verdict of one workload and variant as figures: what the line of
/// [`standing_line`] says, for a display that is not a line (a metrics endpoint).
#[derive(Clone, Debug, PartialEq)]
pub struct StandingFigures {
    /// `NoVerdict` below the rounds an interval needs.
    pub verdict: Verdict,
    /// Rounds with a value on both sides.
    pub rounds: usize,
    /// The effect, percent: the estimate with an interval, else the ratio so far.
    pub effect_pct: Option<f64>,
}

/// The figures of the running verdict of (round, baseline, variant) values of the
/// primary metric; `margin` is a fraction (0.01 for ±1 %).
pub fn standing_figures(
    pairs: &[(u32, f64, f64)],
    higher_is_better: bool,
    margin: Option<f64>,
) -> StandingFigures {
    let (a, b) = positive_pairs(pairs);
    let rounds = a.len();
    match compared(&a, &b, higher_is_better, margin) {
        Some(Ok(c)) => StandingFigures {
            verdict: Verdict::from_stats(c.verdict, metric_direction(higher_is_better)),
            rounds,
            effect_pct: Some(c.effect_pct),
        },
        _ => StandingFigures {
            verdict: Verdict::NoVerdict,
            rounds,
            effect_pct: ratio_so_far_pct(&a, &b),
        },
    }
}

/// The running verdict of one workload and variant of an experiment, from the
/// (round, baseline, variant) values of its primary metric, as one line:
/// `set / v1 vs baseline: SLOWER: -3.10 % [-4.02 %, -2.20 %], p = 0.031, n = 6, MDE …`.
/// Below the rounds an interval needs, the line gives the ratio so far instead.
/// `margin` is a fraction (0.01 for ±1 %).
pub fn standing_line(
    workload: &str,
    variant: &str,
    pairs: &[(u32, f64, f64)],
    higher_is_better: bool,
    margin: Option<f64>,
) -> String {
    let head = format!("{workload} / {variant} vs baseline:");
    let (a, b) = positive_pairs(pairs);
    let n = a.len();
    let c = match compared(&a, &b, higher_is_better, margin) {
        None => {
            let ratio = ratio_so_far_pct(&a, &b)
                .map_or(String::new(), |r| format!(", ratio so far {r:+.2} %"));
            let need = min_pairs(0.95);
            return format!("{head} {n} round(s){ratio}; need >= {need} rounds for a 95 % CI");
        }
        Some(Err(e)) => return format!("{head} {e}"),
        Some(Ok(c)) => c,
    };
    let mde = c
        .mde_signed_pct()
        .map_or(String::new(), |m| format!(", MDE {m:.2} % at 80 % power"));
    let body = format!(
        "{:+.2} % [{:+.2} %, {:+.2} %], p = {}, n = {n}{mde}",
        c.effect_pct,
        c.ci_low_pct,
        c.ci_high_pct,
        fmt_p_value(c.p_value)
    );
    let verdict =
        Verdict::from_stats(c.verdict, metric_direction(higher_is_better)).sentence(margin);
    format!("{head} {verdict}: {body}")
}

/// The pairs whose two values are positive (a ratio needs both), split.
fn positive_pairs(pairs: &[(u32, f64, f64)]) -> (Vec<f64>, Vec<f64>) {
    pairs
        .iter()
        .filter(|(_, a, b)| *a > 0.0 && *b > 0.0)
        .map(|(_, a, b)| (*a, *b))
        .unzip()
}

/// The geometric mean ratio of `b` to `a` so far, percent (`None` without pairs).
fn ratio_so_far_pct(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len();
    (n > 0).then(|| {
        let mean = a.iter().zip(b).map(|(a, b)| (b / a).ln()).sum::<f64>() / n as f64;
        (mean.exp() - 1.0) * 100.0
    })
}

/// The paired comparison, or `None` below the rounds a 95 % interval needs.
fn compared(
    a: &[f64],
    b: &[f64],
    higher_is_better: bool,
    margin: Option<f64>,
) -> Option<Result<resplab_stats::verdict::Comparison, String>> {
    if a.len() < min_pairs(0.95) {
        return None;
    }
    let direction = if higher_is_better {
        resplab_stats::verdict::Direction::HigherIsBetter
    } else {
        resplab_stats::verdict::Direction::LowerIsBetter
    };
    let mut cfg = CompareConfig::new(direction);
    cfg.margin_pct = margin.map(|m| m * 100.0);
    Some(compare_paired(a, b, &cfg).map_err(|e| e.to_string()))
}

fn metric_direction(higher_is_better: bool) -> Direction {
    if higher_is_better {
        Direction::HigherIsBetter
    } else {
        Direction::LowerIsBetter
    }
}

/// One comparison of a run until decided, at a look, as the progress display and the
/// final verdict word it: the effect with its sequential 95 % interval (repeated or
/// anytime-valid, as the rule says) and what it
/// means, e.g. `set / v1 vs baseline: SLOWER: -9.80 % [-13.10 %, -6.40 %] sequential
/// 95 %, 14 rounds`. Undecided at the stop, the line says what could have been detected.
pub fn sequential_line(
    workload: &str,
    variant: &str,
    look: &Look,
    decision: Decision,
    higher_is_better: bool,
    margin: Option<f64>,
) -> String {
    let head = format!("{workload} / {variant} vs baseline:");
    let pct = |x: f64| x.exp_m1() * 100.0;
    let n = look.n;
    if !look.is_bounded() {
        let so_far = if n > 0 {
            format!(", ratio so far {:+.2} %", pct(look.mean))
        } else {
            String::new()
        };
        return format!("{head} {n} round(s){so_far}; the sequential interval is not yet finite");
    }
    let words = match decision {
        Decision::Continue => "undecided".to_string(),
        Decision::Equivalent => Verdict::Equivalent.sentence(margin),
        Decision::Higher | Decision::Lower => {
            let up = decision == Decision::Higher;
            if up == higher_is_better {
                "FASTER"
            } else {
                "SLOWER"
            }
            .to_string()
        }
    };
    let mde = match (decision, look.mde80()) {
        (Decision::Continue, Some(m)) => format!("; could detect ±{:.2} % (MDE80)", pct(m)),
        _ => String::new(),
    };
    format!(
        "{head} {words}: {:+.2} % [{:+.2} %, {:+.2} %] sequential 95 %, {n} rounds{mde}",
        pct(look.mean),
        pct(look.low),
        pct(look.high)
    )
}

/// The progress line of one comparison after a look of a run until decided: the
/// interval, how much it narrowed since the previous look (`previous_half`, log scale),
/// and the predicted rounds and time to a decision (`None`: none in sight).
pub fn look_progress_line(
    workload: &str,
    variant: &str,
    look: &Look,
    previous_half: Option<f64>,
    to_decision: Option<(usize, std::time::Duration)>,
) -> String {
    let pct = |x: f64| x.exp_m1() * 100.0;
    if !look.is_bounded() {
        return format!(
            "{workload} / {variant}: {} round(s), interval not yet finite",
            look.n
        );
    }
    let half = look.half_width();
    let was = previous_half
        .filter(|p| p.is_finite())
        .map_or(String::new(), |p| format!(", was ±{:.2} %", pct(p)));
    let eta = match to_decision {
        Some((0, _)) => "decided".to_string(),
        Some((r, t)) => format!("decision in ~{r} rounds (~{})", minutes(t.as_secs_f64())),
        None => "no decision in sight at this spread".to_string(),
    };
    format!(
        "{workload} / {variant}: {:+.2} % [{:+.2} %, {:+.2} %] (±{:.2} %{was}); {eta}",
        pct(look.mean),
        pct(look.low),
        pct(look.high),
        pct(half)
    )
}

/// Why a run until decided stopped, in a sentence: `sequential run: stopped after 14
/// rounds in 4.2 min: every comparison decided`.
pub fn stop_sentence(reason: &str, rounds: usize, elapsed_sec: f64) -> String {
    let why = match reason {
        "decided" => "every comparison decided",
        "max_rounds" => "max_rounds reached, undecided comparisons remain",
        "max_time" => "max_time reached, undecided comparisons remain",
        other => other,
    };
    format!(
        "sequential run: stopped after {rounds} rounds in {}: {why}",
        minutes(elapsed_sec)
    )
}

/// The sensitivity certificate of a verdict: what the experiment could detect, how long
/// it took, and the error rates `calibrate --validate` measured on this host (or that
/// none is stored).
pub fn certificate_line(
    mde_pct: Option<f64>,
    rounds: usize,
    elapsed_sec: Option<f64>,
    validation: Option<&resplab_results::calibration::Validation>,
    sought: resplab_results::calibration::Sought,
) -> String {
    let took = elapsed_sec.map_or(String::new(), |s| format!(" in {}", minutes(s)));
    let detect = match mde_pct {
        Some(m) => format!("could detect ±{m:.2} % (MDE80) after {rounds} rounds{took}"),
        None => format!("{rounds} rounds{took} are too few to say what it could detect"),
    };
    let rates = match validation {
        Some(v) => format!(
            "calibrate --validate ({} on {}) on this host measured false positives {}/{} \
             ({:.1} %) and power {}/{} ({:.1} %) at a {:.1} % slowdown ({} rounds of {} s){}",
            sought.describe(),
            v.metric,
            v.false_positives.hits,
            v.false_positives.k,
            v.false_positives.rate * 100.0,
            v.power.hits,
            v.power.k,
            v.power.rate * 100.0,
            v.slowdown_pct,
            v.rounds,
            v.trial_sec,
            drift_clause(v)
        ),
        None => match sought.rule {
            Some(rule) => format!(
                "no calibrate --validate result of {} is stored for this host: none stored \
                 for this rule ({}), so its false-positive rate and power are not measured here",
                sought.method.name(),
                rule.name()
            ),
            None => format!(
                "no calibrate --validate result of {} is stored for this host, so its \
                 false-positive rate and power are not measured here",
                sought.method.name()
            ),
        },
    };
    format!("sensitivity: {detect}; {rates}")
}

/// What the certificate adds to a validation whose power check failed while the power
/// its slowed experiments' own noise predicts lies inside the measured interval: that
/// the noise changed after the prediction, so the power figure speaks of that change
/// more than of the method. Empty otherwise.
fn drift_clause(v: &resplab_results::calibration::Validation) -> String {
    let p = &v.power;
    match v.expected_power {
        Some(e) if !p.pass && p.ci_low <= e && e <= p.ci_high => format!(
            " (the noise changed after that validation's prediction: its slowed experiments' own noise predicts {:.1} % power)",
            100.0 * e
        ),
        _ => String::new(),
    }
}

/// The note on a run until decided's fixed-sample table: its intervals do not allow for
/// the looks that chose when to stop, the sequential ones do.
pub const SEQUENTIAL_NOTE: &str = "this experiment ran until decided: the fixed-sample \
    intervals of the table do not allow for the looks that chose when it stopped; its \
    verdict is the sequential interval (the rule line says which)";

/// Seconds as `42 s`, `3.5 min` or `1.2 h`: how long a run took or will take (whole
/// seconds; minutes and hours as calibrations word them).
pub fn minutes(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else {
        resplab_results::calibration::secs_text(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use resplab_results::calibration::{Method, Sought, UntilRule};

    #[test]
    fn tiny_p_values_are_not_printed_as_zero() {
        assert_eq!(fmt_p_value(0.0312), "0.031");
        assert_eq!(fmt_p_value(0.0005), "0.001");
        assert_eq!(fmt_p_value(0.0004), "<0.001");
        assert_eq!(fmt_p_value(0.0), "<0.001");
    }

    #[test]
    fn interval_verdicts_follow_the_direction_and_the_margin() {
        use Direction::*;
        assert_eq!(
            interval_verdict(1.0, 3.0, HigherIsBetter, None),
            Verdict::Faster
        );
        assert_eq!(
            interval_verdict(1.0, 3.0, LowerIsBetter, None),
            Verdict::Slower
        );
        assert_eq!(
            interval_verdict(-3.0, -1.0, LowerIsBetter, None),
            Verdict::Faster
        );
        assert_eq!(
            interval_verdict(-3.0, -1.0, HigherIsBetter, None),
            Verdict::Slower
        );
        assert_eq!(interval_verdict(1.0, 3.0, Unknown, None), Verdict::Higher);
        assert_eq!(interval_verdict(-3.0, -1.0, Unknown, None), Verdict::Lower);
        assert_eq!(
            interval_verdict(-1.0, 2.0, HigherIsBetter, Some(5.0)),
            Verdict::Equivalent
        );
        assert_eq!(
            interval_verdict(-1.0, 6.0, HigherIsBetter, Some(5.0)),
            Verdict::Inconclusive
        );
        assert_eq!(
            interval_verdict(-1.0, 2.0, HigherIsBetter, None),
            Verdict::Inconclusive
        );
    }

    #[test]
    fn standing_line_words_every_state() {
        let rounds = |ratio: f64| -> Vec<(u32, f64, f64)> {
            (0..8)
                .map(|r| {
                    let base = 1000.0 + f64::from(r);
                    (r, base, base * ratio * (1.0 + f64::from(r % 3) * 1e-3))
                })
                .collect()
        };
        let early = standing_line("set", "v1", &rounds(0.9)[..2], true, None);
        assert!(
            early.starts_with("set / v1 vs baseline: 2 round(s), ratio so far -"),
            "{early}"
        );
        assert!(
            early.ends_with("; need >= 6 rounds for a 95 % CI"),
            "{early}"
        );
        let none = standing_line("set", "v1", &[], true, None);
        assert_eq!(
            none,
            "set / v1 vs baseline: 0 round(s); need >= 6 rounds for a 95 % CI"
        );
        let slower = standing_line("set", "v1", &rounds(0.9), true, None);
        assert!(
            slower.starts_with("set / v1 vs baseline: SLOWER: -"),
            "{slower}"
        );
        assert!(slower.contains(", p = 0.008, n = 8, MDE "), "{slower}");
        // Lower is better: a drop is FASTER, as in the comparison table.
        let faster = standing_line("get", "v2", &rounds(0.9), false, None);
        assert!(
            faster.starts_with("get / v2 vs baseline: FASTER: -"),
            "{faster}"
        );
        let same = standing_line("get", "v2", &rounds(1.0), true, Some(0.05));
        assert!(
            same.starts_with("get / v2 vs baseline: EQUIVALENT within ±5.0 %: "),
            "{same}"
        );
    }

    #[test]
    fn sequential_words() {
        let look = |mean: f64, half: f64| Look {
            n: 14,
            mean,
            low: mean - half,
            high: mean + half,
            sd: 0.05,
        };
        let slow = sequential_line("set", "v1", &look(-0.1, 0.03), Decision::Lower, true, None);
        assert!(
            slow.starts_with("set / v1 vs baseline: SLOWER: -9.52 % ["),
            "{slow}"
        );
        assert!(slow.ends_with("sequential 95 %, 14 rounds"), "{slow}");
        let open = sequential_line("set", "v1", &look(0.0, 0.1), Decision::Continue, true, None);
        assert!(
            open.contains("undecided: ") && open.contains("(MDE80)"),
            "{open}"
        );
        let eq = sequential_line(
            "set",
            "v1",
            &look(0.0, 0.01),
            Decision::Equivalent,
            true,
            Some(0.02),
        );
        assert!(eq.contains("EQUIVALENT within ±2.0 %"), "{eq}");
        let p = look_progress_line(
            "set",
            "v1",
            &look(0.0, 0.05),
            Some(0.08),
            Some((20, std::time::Duration::from_secs(300))),
        );
        assert!(
            p.contains("was ±8.33 %") && p.ends_with("decision in ~20 rounds (~5.0 min)"),
            "{p}"
        );
        assert_eq!(
            stop_sentence("max_time", 30, 90.0),
            "sequential run: stopped after 30 rounds in 90 s: max_time reached, undecided comparisons remain"
        );
        let rmit = Sought {
            method: Method::Rmit,
            rule: None,
        };
        let few = certificate_line(None, 2, Some(2.0), None, rmit);
        assert!(few.starts_with("sensitivity: 2 rounds in 2 s are too few to say what it could detect; no calibrate"), "{few}");
        let seq = Sought {
            method: Method::UntilDecided,
            rule: Some(UntilRule::SpendingPocock),
        };
        let none = certificate_line(None, 2, None, None, seq);
        assert!(
            none.ends_with("no calibrate --validate result of until-decided is stored for this host: none stored for this rule (spending-pocock), so its false-positive rate and power are not measured here"),
            "{none}"
        );
        // A stored validation is quoted; a failed power check that its own noise
        // explains says so, one that it does not explain does not.
        let mut v = resplab_results::fixture::validation(Some(0.08));
        let quoted = certificate_line(Some(3.0), 10, Some(60.0), Some(&v), rmit);
        assert!(
            quoted.ends_with("measured false positives 30/40 (75.0 %) and power 30/40 (75.0 %) at a 5.0 % slowdown (10 rounds of 0.2 s)"),
            "{quoted}"
        );
        v.power.pass = false;
        v.expected_power = Some(0.7);
        let drifted = certificate_line(Some(3.0), 10, Some(60.0), Some(&v), rmit);
        assert!(
            drifted.ends_with("(the noise changed after that validation's prediction: its slowed experiments' own noise predicts 70.0 % power)"),
            "{drifted}"
        );
        v.expected_power = Some(0.95);
        let unexplained = certificate_line(Some(3.0), 10, Some(60.0), Some(&v), rmit);
        assert!(
            unexplained.ends_with("(10 rounds of 0.2 s)"),
            "{unexplained}"
        );
        let c = certificate_line(Some(3.0), 10, Some(60.0), None, rmit);
        assert!(
            c.starts_with(
                "sensitivity: could detect ±3.00 % (MDE80) after 10 rounds in 60 s; no calibrate"
            ),
            "{c}"
        );
    }
}
