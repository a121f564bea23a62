//! `resplab experiment` for a run until decided: its flags (`--until-decided`,
//! `--max-time`, `--max-rounds`) onto the experiment, and what it prints: after each look, every
//! comparison's interval narrowing and the predicted time to a decision; at the end, the
//! sequential verdict, why the run stopped, and the sensitivity certificate of every
//! verdict; and `--fail-on-regression`'s exit code. The words are
//! `resplab_report::verdict`'s; the numbers come from `resplab_experiment::sequential` and
//! `certificate`.

use resplab_experiment::sequential::{self, Assessment};
use resplab_experiment::Experiment;
use resplab_report::verdict::{
    certificate_line, look_progress_line, sequential_line, stop_sentence,
};
use resplab_store::Store;
use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

/// The half-widths of the previous look, per (workload, variant), to show narrowing.
#[derive(Debug, Default)]
pub(super) struct Looks {
    previous: BTreeMap<(String, String), f64>,
}

impl Looks {
    /// The progress lines of one look, on standard error.
    pub(super) fn show(
        &mut self,
        exp: &Experiment,
        a: &Assessment,
        elapsed: Duration,
        per_round: Duration,
    ) {
        let mut err = std::io::stderr();
        let _ = writeln!(
            err,
            "  look after {} rounds ({:.0} s, ~{:.1} s per round), sequential 95 %:",
            a.rounds,
            elapsed.as_secs_f64(),
            per_round.as_secs_f64()
        );
        for c in &a.comparisons {
            let key = (c.workload.clone(), c.variant.clone());
            let eta = sequential::rounds_to_decision(c, exp.margin)
                .map(|r| (r, per_round * r.min(u32::MAX as usize) as u32));
            let line = look_progress_line(
                &c.workload,
                &c.variant,
                &c.look,
                self.previous.get(&key).copied(),
                eta,
            );
            let _ = writeln!(err, "    {line}");
            self.previous.insert(key, c.look.half_width());
        }
    }
}

/// The final verdict of a run until decided, on standard output: why it stopped, each
/// comparison's sequential interval and decision, the stopping rule.
pub(super) fn print_verdict(
    store: &Store,
    exp: &Experiment,
    experiment_id: i64,
    higher: bool,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout();
    let a = sequential::assess_stored(store, exp)?;
    let _ = writeln!(
        out,
        "verdict ({}, run until decided, paired by round):",
        exp.primary_metric
    );
    match store.sequential_stop(experiment_id)? {
        Some(stop) => {
            let _ = writeln!(
                out,
                "  {}",
                stop_sentence(&stop.reason, stop.rounds as usize, stop.elapsed_sec)
            );
            let _ = writeln!(out, "  rule: {}", stop.rule);
        }
        None => {
            let _ = writeln!(
                out,
                "  sequential run: not stopped yet ({} rounds)",
                a.rounds
            );
        }
    }
    for c in &a.comparisons {
        let line = sequential_line(
            &c.workload,
            &c.variant,
            &c.look,
            c.decision,
            higher,
            exp.margin,
        );
        let _ = writeln!(out, "  {line}");
    }
    Ok(())
}

/// The plan of a run until decided (`--dry-run`): the rule, its limits, the first
/// round's trials and how long a round takes.
pub(super) fn print_plan(exp: &Experiment, until: &resplab_experiment::UntilDecided) {
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "experiment {}: {} variant(s) x {} workload(s), rounds until decided, order {}, seed {}",
        exp.name,
        exp.variants.len(),
        exp.workloads.len(),
        exp.order.name(),
        exp.seed
    );
    let _ = writeln!(out, "rule: {}", sequential::rule_text(exp, until));
    let _ = writeln!(out, "baseline: {}", exp.baseline().name);
    for e in resplab_experiment::plan::round_plan(exp, 0, 0) {
        for t in &e.trials {
            let _ = writeln!(
                out,
                "  round   1  #{:<3} {:<28} {:<20} ~{:.1}s",
                t.position,
                exp.variants[t.variant].name,
                exp.workloads[t.workload].name,
                resplab_experiment::plan::estimate_trial(exp, t.workload).as_secs_f64()
            );
        }
    }
    let _ = writeln!(
        out,
        "each further round runs the same trials in a fresh order; about {:.1} s per round",
        sequential::round_estimate(exp).as_secs_f64()
    );
}

/// The sensitivity certificate line of a stored experiment, on standard output.
pub(super) fn print_certificate(store: &Store, exp: &Experiment) -> anyhow::Result<()> {
    let c = resplab_experiment::certificate::of_experiment(store, exp)?;
    let line = certificate_line(
        c.mde_pct,
        c.rounds,
        c.elapsed_sec,
        c.validation.as_ref().map(|(_, v)| v),
    );
    let _ = writeln!(std::io::stdout(), "  {line}");
    Ok(())
}

/// `--until-decided`, `--max-time`, `--max-rounds` onto the experiment; the exit code
/// when they are wrong (after saying why on one line).
pub(super) fn apply_until(
    exp: &mut Experiment,
    until_decided: bool,
    max_rounds: Option<u32>,
    max_time: Option<&str>,
    variants: &[String],
) -> Option<ExitCode> {
    use resplab_experiment::sequential::{apply_limits, Limit};
    let max_time = match max_time.map(resplab_experiment::words::parse_duration) {
        None => None,
        Some(Ok(d)) if !d.is_zero() => Some(d),
        Some(Ok(_)) => {
            eprintln!("resplab: --max-time: expected a duration above zero, found \"0\"");
            return Some(ExitCode::from(2));
        }
        Some(Err(e)) => {
            eprintln!("resplab: --max-time: {e}");
            return Some(ExitCode::from(2));
        }
    };
    if let Err(e) = apply_limits(exp, until_decided, max_rounds, max_time) {
        let flag = match e.limit {
            Limit::Until => "--until-decided",
            Limit::MaxRounds => "--max-rounds",
            Limit::MaxTime => "--max-time",
        };
        eprintln!("resplab: {flag}: {}", e.message);
        return Some(ExitCode::from(2));
    }
    if exp.until_decided.is_some() && !variants.is_empty() {
        eprintln!(
            "resplab: --variants: a run until decided looks at whole rounds, so it cannot run \
             in phases; give a fixed number of rounds instead"
        );
        return Some(ExitCode::from(2));
    }
    None
}

/// `--fail-on-regression`: exit code 1, naming each comparison decided worse beyond the
/// limit (`resplab_experiment::sequential::regressions`).
pub(super) fn regression_gate(
    store: &Store,
    exp: &Experiment,
    pct: f64,
) -> anyhow::Result<ExitCode> {
    let obs = store.observations(&exp.name)?;
    // A metric read from a command's output carries its direction in the store.
    let higher = obs
        .iter()
        .find(|o| o.metric == exp.primary_metric)
        .and_then(|o| o.direction.as_deref())
        .map_or(
            resplab_store::metrics::higher_is_better(&exp.primary_metric),
            |d| d == "higher_is_better",
        );
    let a = sequential::assess_stored(store, exp)?;
    let worse = sequential::regressions(&a, higher, pct);
    for c in &worse {
        eprintln!(
            "resplab: gate: {} / {}: decided SLOWER by {:.2} % ({}), more than --fail-on-regression {pct} %",
            c.workload,
            c.variant,
            sequential::worse_pct(c, higher).unwrap_or(0.0).abs(),
            exp.primary_metric
        );
    }
    Ok(ExitCode::from(u8::from(!worse.is_empty())))
}
