//! The words of `resplab experiment run` (and `resume`) besides its verdicts: the plan
//! of `--dry-run`, the line of each trial as it runs, reruns, looks, the summary when it
//! ends, and the gates' reasons. `resplab_experiment::narrate` decides what to say and
//! when (it knows the runner's events); this module only words plain values. The
//! verdicts themselves are [`crate::verdict`]'s.

use crate::verdict::minutes;
use std::fmt::Write as _;
use std::time::Duration;

/// The plan of an experiment, as `--dry-run` prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanView {
    pub name: String,
    pub variants: usize,
    pub workloads: usize,
    /// Fixed rounds, or `None` for a run until decided (its first round is listed).
    pub rounds: Option<u32>,
    pub order: String,
    pub seed: u64,
    /// The stopping rule of a run until decided.
    pub rule: Option<String>,
    pub baseline: String,
    pub trials: Vec<PlanTrial>,
    /// Fixed rounds: the whole run; until decided: one round.
    pub estimate: Duration,
    /// The request rate a request budget's estimate assumes.
    pub assumed_ops_per_sec: f64,
}

/// One planned trial.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanTrial {
    /// The round as listed.
    pub round: u32,
    pub position: u32,
    pub variant: String,
    pub workload: String,
    pub estimate: Duration,
}

/// The plan as text, one line each.
pub fn plan_text(p: &PlanView) -> String {
    let mut s = String::new();
    let shape = format!(
        "experiment {}: {} variant(s) x {} workload(s)",
        p.name, p.variants, p.workloads
    );
    match p.rounds {
        Some(r) => {
            let _ = writeln!(
                s,
                "{shape} x {r} rounds, order {}, seed {}",
                p.order, p.seed
            );
        }
        None => {
            let _ = writeln!(
                s,
                "{shape}, rounds until decided, order {}, seed {}",
                p.order, p.seed
            );
        }
    }
    if let Some(rule) = &p.rule {
        let _ = writeln!(s, "rule: {rule}");
    }
    let _ = writeln!(s, "baseline: {}", p.baseline);
    for t in &p.trials {
        let _ = writeln!(
            s,
            "  round {:>3}  #{:<3} {:<28} {:<20} ~{:.1}s",
            t.round,
            t.position,
            t.variant,
            t.workload,
            t.estimate.as_secs_f64()
        );
    }
    let _ = match p.rounds {
        Some(_) => writeln!(
            s,
            "estimated duration: {} (request budgets assume {} ops/s; plus reruns of invalid rounds)",
            minutes(p.estimate.as_secs_f64()),
            p.assumed_ops_per_sec
        ),
        None => writeln!(
            s,
            "each further round runs the same trials in a fresh order; about {:.1} s per round",
            p.estimate.as_secs_f64()
        ),
    };
    s
}

/// The line that opens a run of fixed rounds.
pub fn start_line(name: &str, planned: usize, stored: usize, left: Duration) -> String {
    format!(
        "experiment {name}: {planned} trials planned, {stored} already stored, about {} to go",
        minutes(left.as_secs_f64())
    )
}

/// The line that opens a run until decided.
pub fn start_until_line(name: &str, rule: &str, stored: usize) -> String {
    format!("experiment {name}: {rule}; {stored} trials already stored")
}

/// The start of a trial's line, finished by [`stored_line`]: `round` from 0, `rounds`
/// `None` for a run until decided without a round limit.
pub fn trial_start(
    round: u32,
    rounds: Option<u32>,
    attempt: u32,
    position: u32,
    variant: &str,
    workload: &str,
) -> String {
    let attempt = if attempt > 0 {
        format!(" (rerun {attempt})")
    } else {
        String::new()
    };
    let of = rounds.map_or(" (until decided)".to_string(), |r| format!("/{r}"));
    format!(
        "round {}{of}{attempt} #{}: {variant} / {workload} ... ",
        round + 1,
        position + 1
    )
}

/// The end of a trial's line: its primary metric, and why it is invalid (`failed`).
pub fn stored_line(metric: &str, primary: Option<f64>, valid: bool, failed: &[String]) -> String {
    let value = primary.map_or("-".to_string(), |v| format!("{v:.1}"));
    if valid {
        format!("{metric} {value}")
    } else {
        format!("{metric} {value} INVALID ({})", failed.join("; "))
    }
}

/// A round run again because a trial in it failed a check (`round` from 0).
pub fn rerun_line(round: u32, attempt: u32) -> String {
    format!(
        "round {} had an invalid trial: running it again (attempt {attempt})",
        round + 1
    )
}

/// The head of a run until decided's look.
pub fn look_head(rounds: usize, elapsed: Duration, per_round: Duration) -> String {
    format!(
        "  look after {rounds} rounds ({:.0} s, ~{:.1} s per round), sequential 95 %:",
        elapsed.as_secs_f64(),
        per_round.as_secs_f64()
    )
}

/// What the run did, when it ends: `rounds` is `None` for a run until decided without
/// a round limit.
pub fn summary_line(
    trials: usize,
    took: Duration,
    invalid: usize,
    valid_rounds: usize,
    rounds: Option<u32>,
) -> String {
    let of = rounds.map_or(String::new(), |r| format!(" of {r}"));
    format!(
        "{trials} trials run in {} ({invalid} invalid); {valid_rounds}{of} rounds valid",
        minutes(took.as_secs_f64())
    )
}

/// An interrupted run, and how to continue it.
pub fn interrupted_line(name: &str, db: &str) -> String {
    format!("interrupted: run `resplab experiment resume {name} --db {db}` to continue")
}

/// A failed run, and how to continue it once fixed.
pub fn failed_line(name: &str) -> String {
    format!("stored trials are kept; fix the problem and run `resplab experiment resume {name}`")
}

/// Rounds (from 0) that stayed invalid after every rerun.
pub fn given_up_line(rounds: &[u32]) -> String {
    format!(
        "rounds {:?} stayed invalid after every rerun; they are stored but not compared",
        rounds.iter().map(|r| r + 1).collect::<Vec<_>>()
    )
}

/// No valid round: nothing to compare.
pub fn no_valid_round_line(name: &str) -> String {
    format!(
        "no round of `{name}` was valid, so there is nothing to compare: see the INVALID \
         reasons above (`resplab experiment status {name}` lists every check)"
    )
}

/// The head of the final verdict.
pub fn verdict_head(metric: &str, until_decided: bool) -> String {
    if until_decided {
        format!("verdict ({metric}, run until decided, paired by round):")
    } else {
        format!("verdict ({metric}, paired by round):")
    }
}

/// Appended to a verdict whose variant ran in another phase than the baseline.
pub const NOT_INTERLEAVED: &str = " [NOT INTERLEAVED: run in different phases; drift \
    between them is confounded with the change]";

/// A run until decided that has not stopped yet.
pub fn not_stopped_line(rounds: usize) -> String {
    format!("sequential run: not stopped yet ({rounds} rounds)")
}

/// Cells of a phased experiment still to run.
pub fn still_to_run_line(cells: usize, name: &str) -> String {
    format!(
        "still to run: {cells} (round, variant) cells; `resplab experiment status {name}` lists them"
    )
}

/// Where the results are and how to see them in detail.
pub fn stored_as_line(name: &str, db: &str) -> String {
    format!("stored as `{name}` in {db}; details: resplab compare db:{name} --db {db}")
}

/// A stored trial by its round (from 0), variant, workload and id.
pub fn trial_name(round: u32, variant: &str, workload: &str, trial_id: i64) -> String {
    format!(
        "round {} {variant} / {workload} (trial {trial_id})",
        round + 1
    )
}

/// One trial (its [`trial_name`]) over `--max-error-rate`.
pub fn error_gate_line(
    trial: &str,
    error_pct: f64,
    failed: u64,
    sent: u64,
    max_pct: f64,
) -> String {
    format!(
        "{trial}: {error_pct:.3} % of the requests failed ({failed} of {sent}), more than --max-error-rate {max_pct} %"
    )
}

/// One comparison decided worse than `--fail-on-regression` allows.
pub fn regression_gate_line(
    workload: &str,
    variant: &str,
    worse_pct: f64,
    metric: &str,
    limit_pct: f64,
) -> String {
    format!(
        "gate: {workload} / {variant}: decided SLOWER by {worse_pct:.2} % ({metric}), more than --fail-on-regression {limit_pct} %"
    )
}

/// A variant that does not verify its server's certificate.
pub fn insecure_line(variant: &str) -> String {
    format!(
        "WARNING: variant `{variant}`: insecure = true: the server's TLS certificate is not verified"
    )
}

/// A server an interrupted earlier run left running, now stopped.
pub fn reaped_line(pid: u32, dir: &std::path::Path, runner_pid: u32) -> String {
    format!(
        "stopped server pid {pid} in {}, left running by an interrupted run (pid {runner_pid}); \
         it would have competed with these trials for CPU",
        dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(rounds: Option<u32>) -> PlanView {
        PlanView {
            name: "e".into(),
            variants: 2,
            workloads: 1,
            rounds,
            order: "random".into(),
            seed: 7,
            rule: rounds.is_none().then(|| "until decided".into()),
            baseline: "a".into(),
            trials: vec![PlanTrial {
                round: 1,
                position: 0,
                variant: "a".into(),
                workload: "get".into(),
                estimate: Duration::from_millis(1500),
            }],
            estimate: Duration::from_secs(90),
            assumed_ops_per_sec: 100000.0,
        }
    }

    #[test]
    fn a_fixed_plan_lists_its_trials_and_its_duration() {
        let text = plan_text(&plan(Some(3)));
        assert_eq!(
            text,
            "experiment e: 2 variant(s) x 1 workload(s) x 3 rounds, order random, seed 7\n\
             baseline: a\n  \
             round   1  #0   a                            get                  ~1.5s\n\
             estimated duration: 90 s (request budgets assume 100000 ops/s; plus reruns of invalid rounds)\n"
        );
    }

    #[test]
    fn a_plan_until_decided_states_its_rule_and_round_time() {
        let text = plan_text(&plan(None));
        assert!(text.starts_with(
            "experiment e: 2 variant(s) x 1 workload(s), rounds until decided, order random, seed 7\nrule: until decided\nbaseline: a\n"
        ), "{text}");
        assert!(text.ends_with("about 90.0 s per round\n"), "{text}");
    }

    #[test]
    fn trial_lines() {
        assert_eq!(
            trial_start(0, Some(5), 0, 1, "b", "get"),
            "round 1/5 #2: b / get ... "
        );
        assert_eq!(
            trial_start(2, None, 1, 0, "b", "get"),
            "round 3 (until decided) (rerun 1) #1: b / get ... "
        );
        assert_eq!(
            stored_line("ops_per_sec", Some(10.26), true, &[]),
            "ops_per_sec 10.3"
        );
        assert_eq!(
            stored_line("ops_per_sec", None, false, &["x".into(), "y".into()]),
            "ops_per_sec - INVALID (x; y)"
        );
        assert_eq!(
            summary_line(4, Duration::from_secs(3), 1, 2, Some(3)),
            "4 trials run in 3 s (1 invalid); 2 of 3 rounds valid"
        );
        assert_eq!(
            given_up_line(&[0, 2]),
            "rounds [1, 3] stayed invalid after every rerun; they are stored but not compared"
        );
    }
}
