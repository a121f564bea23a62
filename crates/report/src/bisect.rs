//! What `resplab bisect` prints: a line per event while it runs (the range, builds,
//! measured pairs, trials, tested commits) and its outcome — good against bad, every
//! tested commit against the commits either side of the change, and the culprit, range
//! or steps found. Each measured pair is worded by [`crate::verdict::sequential_line`],
//! like every run until decided. The records are `resplab_results::bisect`'s.

use crate::verdict::sequential_line;
use resplab_results::bisect::{Class, Commit, Conclusion, Measured, Outcome, TestedCommit};
use std::fmt::Write as _;
use std::path::Path;

/// The whole outcome as text, one line each.
pub fn outcome_text(o: &Outcome) -> String {
    let mut s = String::new();
    let higher = o.higher_is_better;
    let _ = writeln!(
        s,
        "bisect {}..{} ({} commits between), {}:",
        o.good.short(),
        o.bad.short(),
        o.between,
        o.metric
    );
    let good_bad = verdict(&o.effect, o.bad.short(), higher, None);
    let _ = writeln!(s, "  good→bad: {good_bad}");
    if o.conclusion == Conclusion::NoEffect {
        s.push_str("  good and bad are not decided different: nothing to bisect (more --max-rounds, a longer --test-time, or a wider --margin may decide it)\n");
        return s;
    }
    s.push_str(
        "tested (each against the commits before and after the change it was placed between):\n",
    );
    for t in &o.tested {
        tested_block(&mut s, t, higher, o.margin);
    }
    steps_text(&mut s, o);
    s
}

/// How a class reads in a list of tested commits.
pub fn class_name(c: Class) -> &'static str {
    match c {
        Class::Before => "before the change",
        Class::After => "after the change",
        Class::Split => "between levels: a second change",
        Class::Undecided => "undecided (skipped)",
        Class::Skipped => "does not build (skipped)",
    }
}

/// The range from good to bad, when it is listed (`commits` holds both ends).
pub fn range_line(commits: &[Commit]) -> String {
    match commits {
        [first, .., last] => format!(
            "bisect {}..{}: {} commit(s) between",
            first.short(),
            last.short(),
            commits.len() - 2
        ),
        _ => "bisect: fewer than two commits".into(),
    }
}

/// A commit built now.
pub fn built_line(commit: &Commit) -> String {
    format!("built {} {}", commit.short(), commit.subject)
}

/// A commit whose build failed, with where its output is.
pub fn build_failed_line(commit: &Commit, log: &Path) -> String {
    format!(
        "build fails at {} {} (skipped; output in {})",
        commit.short(),
        commit.subject,
        log.display()
    )
}

/// An experiment of `sides` (the first its baseline) begins, or is found `stored`.
pub fn measure_line(sides: &[&Commit], experiment: &str, stored: bool) -> String {
    format!(
        "measuring {} (experiment {experiment}{})",
        sides
            .iter()
            .map(|c| c.short())
            .collect::<Vec<_>>()
            .join(" vs "),
        if stored { ", stored" } else { "" }
    )
}

/// One stored trial of a measured pair (`round` counts from 0).
pub fn round_line(round: u32, variant: &str, primary: Option<f64>, valid: bool) -> String {
    format!(
        "  round {} {variant}: {}{}",
        round + 1,
        primary.map_or("-".into(), |v| format!("{v:.1}")),
        if valid { "" } else { " INVALID" }
    )
}

/// A commit as it is classified.
pub fn tested_line(t: &TestedCommit) -> String {
    format!(
        "  {} {}: {}",
        t.commit.short(),
        t.commit.subject,
        class_name(t.class)
    )
}

/// A verdict line of a measured pair, in the words of every verdict.
fn verdict(m: &Measured, variant: &str, higher: bool, margin: Option<f64>) -> String {
    sequential_line(&m.workload, variant, &m.look(), m.decision, higher, margin)
}

/// A tested commit with its class and each of its measured pairs.
fn tested_block(s: &mut String, t: &TestedCommit, higher: bool, margin: Option<f64>) {
    let _ = writeln!(
        s,
        "  {} {} — {}",
        t.commit.short(),
        t.commit.subject,
        class_name(t.class)
    );
    for (m, other) in [(&t.effect, &t.against), (&t.effect_against_end, &t.end)] {
        if let Some(m) = m {
            let line = verdict(m, t.commit.short(), higher, margin);
            let _ = writeln!(s, "      against {}: {line}", other.short());
        }
    }
}

/// The steps found: a culprit, or a range of commits, each with its effect.
fn steps_text(s: &mut String, o: &Outcome) {
    if o.steps.len() > 1 {
        let _ = writeln!(
            s,
            "{} changes in the range (not one culprit):",
            o.steps.len()
        );
    }
    for step in &o.steps {
        let Some(last) = step.commits.last() else {
            continue;
        };
        match step.commits.as_slice() {
            [c] => {
                let _ = writeln!(s, "culprit: {} {}", c.id, c.subject);
            }
            many => {
                let listed = many
                    .iter()
                    .map(|c| format!("{} {}", c.short(), c.subject))
                    .collect::<Vec<_>>()
                    .join(", ");
                let _ = writeln!(
                    s,
                    "culprit: one of {} commits ({}..{}; the others do not build or were undecided): {listed}",
                    many.len(),
                    many[0].short(),
                    last.short()
                );
            }
        }
        let effect = verdict(&step.effect, last.short(), o.higher_is_better, o.margin);
        let _ = writeln!(s, "  effect against {}: {effect}", step.against.short());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use resplab_results::bisect::StepReport;
    use resplab_stats::sequential::Decision;

    fn commit(n: u8) -> Commit {
        Commit {
            id: format!("{n:02}{}", "ab".repeat(19)),
            subject: format!("change {n}"),
        }
    }

    fn measured(mean: f64, decision: Decision) -> Measured {
        Measured {
            workload: "get".into(),
            rounds: 6,
            mean,
            low: mean - 0.02,
            high: mean + 0.02,
            decision,
        }
    }

    fn outcome(conclusion: Conclusion) -> Outcome {
        let tested = TestedCommit {
            commit: commit(2),
            against: commit(0),
            end: commit(4),
            class: Class::After,
            effect: Some(measured(-0.2, Decision::Lower)),
            effect_against_end: Some(measured(0.0, Decision::Equivalent)),
            experiment: Some("bisect-x".into()),
            build_log: None,
        };
        Outcome {
            id: "abcd".into(),
            good: commit(0),
            bad: commit(4),
            between: 3,
            metric: "ops_per_sec".into(),
            higher_is_better: true,
            margin: Some(0.05),
            effect: measured(-0.2, Decision::Lower),
            effect_experiment: "bisect-y".into(),
            conclusion,
            tested: vec![tested],
            steps: vec![StepReport {
                commits: vec![commit(2)],
                against: commit(1),
                effect: measured(-0.2, Decision::Lower),
            }],
            cache: "/tmp/cache".into(),
        }
    }

    #[test]
    fn no_effect_says_there_is_nothing_to_bisect_and_stops() {
        let text = outcome_text(&outcome(Conclusion::NoEffect));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[0].starts_with("bisect 00abababab..04abababab "),
            "{text}"
        );
        assert!(lines[0].ends_with("(3 commits between), ops_per_sec:"));
        assert!(
            lines[1].starts_with("  good→bad: get / 04abababab vs baseline: SLOWER"),
            "{text}"
        );
        assert!(lines[2].contains("nothing to bisect"));
    }

    #[test]
    fn a_culprit_is_named_with_its_full_id_and_its_effect() {
        let text = outcome_text(&outcome(Conclusion::Culprit));
        assert!(
            text.contains("  02abababab change 2 — after the change\n"),
            "{text}"
        );
        assert!(text.contains("      against 00abababab: get / 02abababab"));
        assert!(text.contains("      against 04abababab: "));
        assert!(text.contains(&format!("culprit: {} change 2\n", commit(2).id)));
        assert!(text.contains("  effect against 01abababab: "));
        assert!(!text.contains("changes in the range"));
    }

    #[test]
    fn two_steps_and_a_range_are_told_apart() {
        let mut o = outcome(Conclusion::Steps);
        o.steps.push(StepReport {
            commits: vec![commit(3), commit(4)],
            against: commit(2),
            effect: measured(0.1, Decision::Higher),
        });
        let text = outcome_text(&o);
        assert!(
            text.contains("2 changes in the range (not one culprit):"),
            "{text}"
        );
        assert!(text.contains(
            "culprit: one of 2 commits (03abababab..04abababab; the others do not build or were undecided): 03abababab change 3, 04abababab change 4"
        ));
    }

    #[test]
    fn event_lines() {
        let c = [commit(0), commit(1), commit(2)];
        assert_eq!(
            range_line(&c),
            "bisect 00abababab..02abababab: 1 commit(s) between"
        );
        assert_eq!(built_line(&c[1]), "built 01abababab change 1");
        assert_eq!(
            build_failed_line(&c[1], Path::new("/c/b.log")),
            "build fails at 01abababab change 1 (skipped; output in /c/b.log)"
        );
        assert_eq!(
            measure_line(&[&c[0], &c[2]], "e1", true),
            "measuring 00abababab vs 02abababab (experiment e1, stored)"
        );
        assert_eq!(
            round_line(0, "b", Some(12.34), false),
            "  round 1 b: 12.3 INVALID"
        );
        assert_eq!(round_line(2, "a", None, true), "  round 3 a: -");
        let t = &outcome(Conclusion::Culprit).tested[0];
        assert_eq!(tested_line(t), "  02abababab change 2: after the change");
    }
}
