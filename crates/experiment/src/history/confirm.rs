//! `resplab history --confirm`: each change point not yet confirmed, re-measured as a
//! paired, interleaved A/B of the commits on either side, run until decided.
//!
//! The A/B is an ordinary experiment, run and stored by the runner like any other (so
//! an interrupted one resumes when `--confirm` is given again with the same servers): the
//! definition of the stored experiment the tracked point was measured by — its workload,
//! its variant's settings, trial length and seed — with two variants, named after the
//! commits, whose servers the user names per commit, the change's metric as the primary
//! metric, and the rule of a run until decided (`crate::sequential`) within a time
//! limit. Its verdict on after ÷ before confirms the change when it is decided in the
//! change's direction (`results::history::Confirmation`). Every plan is made, and every
//! server command checked, before the first trial runs.

use super::HistoryError;
use crate::model::{Experiment, ServerSource, Variant};
use crate::runner::{self, Event};
use crate::sequential;
use resplab_engine::StopToken;
use resplab_results::history::{fingerprint, ChangeAt, Confirmation, HistoryAnalysis, HistoryLine};
use resplab_store::Store;
use std::time::Duration;

/// How the server of each commit is started.
#[derive(Clone, Debug, PartialEq)]
pub enum Servers {
    /// One command for every commit (`--server`): `{commit}` is replaced by the revision;
    /// `{port}` and `{dir}` are filled in per trial as in an experiment file.
    Template(String),
    /// A command per revision (`--server-for REV=CMD`).
    PerCommit(Vec<(String, String)>),
}

impl Servers {
    /// The servers of `--server CMD` or `--server-for REV=CMD…` (`--confirm` needs one).
    ///
    /// # Errors
    /// [`HistoryError::Input`] naming the flag: neither given, or a `--server-for`
    /// without `REV=`.
    pub fn from_flags(
        template: Option<&str>,
        per_commit: &[String],
    ) -> Result<Servers, HistoryError> {
        if let Some(t) = template {
            return Ok(Servers::Template(t.to_string()));
        }
        if per_commit.is_empty() {
            return Err(HistoryError::Input(
                "--confirm: expected the servers to measure: --server \"CMD with {port} {commit}\" \
                 or --server-for REV=CMD per commit"
                    .into(),
            ));
        }
        per_commit
            .iter()
            .map(|s| match s.split_once('=') {
                Some((r, c)) if !r.is_empty() => Ok((r.to_string(), c.to_string())),
                _ => Err(HistoryError::Input(format!(
                    "--server-for: expected REV=CMD, found `{s}`"
                ))),
            })
            .collect::<Result<_, _>>()
            .map(Servers::PerCommit)
    }

    /// Checks every command: each must listen on `{port}`, and a template must name
    /// `{commit}` (otherwise both sides would run the same server).
    ///
    /// # Errors
    /// [`HistoryError::Input`] naming the flag and the command.
    pub fn check(&self) -> Result<(), HistoryError> {
        let no_port = |flag: &str, cmd: &str| {
            HistoryError::Input(format!(
                "{flag}: expected a command with {{port}} in it (a free port is chosen for \
                 every trial), found \"{cmd}\""
            ))
        };
        match self {
            Servers::Template(t) if !t.contains("{port}") => Err(no_port("--server", t)),
            Servers::Template(t) if !t.contains("{commit}") => Err(HistoryError::Input(format!(
                "--server: expected {{commit}} in the command (else both commits run the same \
                 server), found \"{t}\""
            ))),
            Servers::Template(_) => Ok(()),
            Servers::PerCommit(list) => match list.iter().find(|(_, c)| !c.contains("{port}")) {
                Some((rev, c)) => Err(no_port(&format!("--server-for {rev}"), c)),
                None => Ok(()),
            },
        }
    }

    /// The command words of `rev`'s server.
    fn command_for(&self, rev: &str) -> Result<Vec<String>, HistoryError> {
        let text = match self {
            Servers::Template(t) => t.replace("{commit}", rev),
            Servers::PerCommit(list) => match list.iter().find(|(r, _)| r == rev) {
                Some((_, c)) => c.clone(),
                None => {
                    return Err(HistoryError::Input(format!(
                        "--server-for: no server for commit `{rev}` (a change point lies \
                         next to it); give --server-for {rev}=CMD"
                    )))
                }
            },
        };
        crate::words::split_words(&text)
            .map_err(|e| HistoryError::Input(format!("server of commit `{rev}`: {e}")))
    }
}

/// One change point's A/B, ready to run.
#[derive(Clone, Debug)]
pub struct ConfirmPlan {
    pub workload: String,
    pub metric: String,
    pub commit_before: String,
    pub commit_after: String,
    pub point_id: i64,
    /// The history's effect, percent: the direction the A/B must confirm.
    pub effect_pct: f64,
    /// The experiment that measures it (named `confirm-…`).
    pub experiment: Experiment,
    /// The workload name of the A/B's comparison that decides it.
    compared: String,
}

/// The A/B of every change point of `analysis` without a stored confirmation, in the
/// order of the lines; nothing is run.
///
/// # Errors
/// [`HistoryError::Input`] when a change point has no commit on a side, its point was
/// not measured by a stored experiment, or a server is missing; store failures.
pub fn plans(
    store: &Store,
    analysis: &HistoryAnalysis,
    servers: &Servers,
    max_time: Duration,
) -> Result<Vec<ConfirmPlan>, HistoryError> {
    servers.check()?;
    let points = store.history(&analysis.series)?;
    analysis
        .unconfirmed()
        .into_iter()
        .map(|(line, change)| {
            let source = points
                .iter()
                .find(|p| p.id == change.point_id)
                .map_or("", |p| p.source.as_str());
            plan(
                store,
                &analysis.series,
                line,
                change,
                source,
                servers,
                max_time,
            )
        })
        .collect()
}

fn plan(
    store: &Store,
    series: &str,
    line: &HistoryLine,
    change: &ChangeAt,
    source: &str,
    servers: &Servers,
    max_time: Duration,
) -> Result<ConfirmPlan, HistoryError> {
    let at = format!(
        "change point at point {} of {} {}",
        change.point_id, line.workload, line.metric
    );
    let (Some(before), Some(after)) = (&change.commit_before, &change.commit_after) else {
        return Err(HistoryError::Input(format!(
            "{at}: a commit is missing on one side (track points with --commit), so there \
             is nothing to re-measure"
        )));
    };
    if before == after {
        return Err(HistoryError::Input(format!(
            "{at}: both sides are commit `{before}`; an A/B needs two commits"
        )));
    }
    let Some(name) = source.strip_prefix("db:") else {
        return Err(HistoryError::Input(format!(
            "{at}: the point was tracked from files ({source}); --confirm re-measures points \
             tracked from a stored experiment (`resplab track --experiment-name`), whose \
             definition gives the workload"
        )));
    };
    let info = store.find_experiment(name)?.ok_or_else(|| {
        HistoryError::Input(format!(
            "{at}: experiment `{name}` it was measured by is not in {}",
            store.path().display()
        ))
    })?;
    let (_, json) = store.experiment_spec(info.id)?;
    let tracked =
        Experiment::from_json(&json).map_err(|e| HistoryError::Input(format!("{at}: {e}")))?;
    let mut exp = ab_experiment(&tracked, line, before, after, servers)
        .map_err(|e| HistoryError::Input(format!("{at}: {e}")))?;
    sequential::apply_limits(&mut exp, true, None, Some(max_time))
        .map_err(|e| HistoryError::Input(format!("--max-time: {}", e.message)))?;
    exp.name = format!(
        "confirm-{series}-{before}-{after}-{}",
        &fingerprint(&exp.to_json())[..8]
    );
    let compared = line
        .workload
        .split_once('/')
        .filter(|_| tracked.variants.len() > 1)
        .map_or(line.workload.clone(), |(_, w)| w.to_string());
    Ok(ConfirmPlan {
        workload: line.workload.clone(),
        metric: line.metric.clone(),
        commit_before: before.clone(),
        commit_after: after.clone(),
        point_id: change.point_id,
        effect_pct: change.effect_pct,
        experiment: exp,
        compared,
    })
}

/// The tracked experiment narrowed to the line's workload and variant, with the two
/// commits' servers as its variants and the line's metric as its primary metric.
fn ab_experiment(
    tracked: &Experiment,
    line: &HistoryLine,
    before: &str,
    after: &str,
    servers: &Servers,
) -> Result<Experiment, HistoryError> {
    let (variant, workload) = match line.workload.split_once('/') {
        Some((v, w)) if tracked.variants.len() > 1 => (Some(v), w),
        _ => (None, line.workload.as_str()),
    };
    let base = variant
        .and_then(|v| tracked.variants.iter().find(|x| x.name == v))
        .unwrap_or_else(|| tracked.baseline());
    let w = tracked
        .workloads
        .iter()
        .find(|w| w.name == workload || workload.strip_prefix(&format!("{}:", w.name)).is_some())
        .ok_or_else(|| {
            HistoryError::Input(format!(
                "the experiment it was measured by has no workload `{workload}`"
            ))
        })?;
    let side = |rev: &str| -> Result<Variant, HistoryError> {
        let mut v = base.clone();
        v.name = rev.to_string();
        v.server = ServerSource::Spawn {
            command: servers.command_for(rev)?,
        };
        Ok(v)
    };
    let mut exp = tracked.clone();
    exp.variants = vec![side(before)?, side(after)?];
    exp.workloads = vec![w.clone()];
    exp.primary_metric = line.metric.clone();
    exp.shared_server = None;
    exp.before_phase = None;
    Ok(exp)
}

/// Runs one plan's A/B (or resumes it) and stores its confirmation.
///
/// # Errors
/// [`HistoryError::Run`] when the experiment fails, [`HistoryError::Interrupted`] when
/// the stop token fires; what was measured stays stored and no confirmation is.
pub fn run(
    store: &mut Store,
    series: &str,
    plan: &ConfirmPlan,
    stop: &StopToken,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Confirmation, HistoryError> {
    let exp = &plan.experiment;
    let text = format!(
        "# resplab history {series} --confirm: {} against {} on {} {}\n{}",
        plan.commit_after,
        plan.commit_before,
        plan.workload,
        plan.metric,
        serde_json::to_string_pretty(&exp.to_json()).unwrap_or_default()
    );
    let outcome = runner::run(exp, &text, store, stop, on_event)
        .map_err(|e| HistoryError::Run(Box::new(e)))?;
    if outcome.interrupted {
        return Err(HistoryError::Interrupted(exp.name.clone()));
    }
    let a = sequential::assess_stored(store, exp)?;
    let c = a
        .comparisons
        .iter()
        .find(|c| c.workload == plan.compared)
        .or(a.comparisons.first())
        .ok_or_else(|| {
            HistoryError::Input(format!(
                "A/B `{}`: no valid round of {} to compare",
                exp.name, plan.metric
            ))
        })?;
    let decision = match c.decision {
        sequential::Decision::Continue => "undecided",
        d => d.name(),
    };
    let pct = |x: f64| x.is_finite().then(|| x.exp_m1() * 100.0);
    let confirmation = Confirmation {
        series: series.to_string(),
        workload: plan.workload.clone(),
        metric: plan.metric.clone(),
        commit_before: plan.commit_before.clone(),
        commit_after: plan.commit_after.clone(),
        point_id: plan.point_id,
        experiment: exp.name.clone(),
        confirmed: Confirmation::agrees(decision, plan.effect_pct),
        decision: decision.to_string(),
        effect_pct: c.look.mean.exp_m1() * 100.0,
        ci_low_pct: pct(c.look.low),
        ci_high_pct: pct(c.look.high),
        rounds: c.look.n as u32,
        recorded_at_unix_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64),
    };
    store.store_confirmation(&confirmation)?;
    Ok(confirmation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_commands_are_checked_and_filled_per_commit() {
        let t = Servers::Template("srv --port {port} --build {commit}".into());
        assert!(t.check().is_ok());
        assert_eq!(
            t.command_for("abc").unwrap(),
            vec!["srv", "--port", "{port}", "--build", "abc"]
        );
        let e = Servers::Template("srv --port 7000 {commit}".into())
            .check()
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--server: expected a command with {port}"),
            "{e}"
        );
        let e = Servers::Template("srv --port {port}".into())
            .check()
            .unwrap_err();
        assert!(e.to_string().contains("expected {commit}"), "{e}");
        let p = Servers::PerCommit(vec![("a".into(), "x --port {port}".into())]);
        assert!(p.check().is_ok());
        let e = p.command_for("b").unwrap_err().to_string();
        assert!(e.contains("no server for commit `b`"), "{e}");
        let e = Servers::PerCommit(vec![("a".into(), "x".into())])
            .check()
            .unwrap_err();
        assert!(e.to_string().starts_with("--server-for a: expected"), "{e}");
    }
}
