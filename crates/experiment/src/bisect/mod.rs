//! `resplab bisect`: which commit between a good and a bad one changed the server's
//! performance, found with the experiment runner's fair, interleaved A/B runs.
//!
//! First good against bad, run until decided, gives the effect to look for (the
//! workload with the largest decided effect is followed); then [`search`] bisects the
//! commits between, measuring each candidate against good until its verdict is decided
//! (or the round limit), and cuts the range in two where a candidate sits clearly
//! between levels (two changes). Each commit is checked out in its own worktree and
//! built once ([`build`]); each pair is an ordinary stored experiment ([`pair`]) whose
//! name is fixed by the bisect and the two commits, so rerunning the same bisect after
//! a kill reuses every measured pair, continues the one in progress, and rebuilds
//! nothing. The outcome is also written as JSON next to the worktrees
//! (`CACHE/bisect-ID.json`) after every tested commit. docs/bisect.md states the rules.
//!
//! Neighbours: [`crate::runner`] runs each pair, [`crate::sequential`] decides it,
//! git is asked through [`git`]. What it finds is `resplab_results::bisect`'s plain
//! records, worded by `resplab_report::bisect`.

pub mod build;
pub mod flags;
pub mod git;
pub mod pair;
pub mod search;

use crate::model::{Experiment, TrialBudget};
use crate::resolve::Overrides;
use build::{Builder, Built};
use git::Commit;
use resplab_engine::StopToken;
pub use resplab_results::bisect::{Conclusion, Outcome, StepReport, TestedCommit};
use resplab_stats::sequential::Decision;
use resplab_store::Store;
use search::{Measured, Probe};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a bisect stopped without an answer.
#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    /// Bad input, named by its flag.
    #[error("{flag}: {message}")]
    Input { flag: String, message: String },
    /// The experiment file.
    #[error(transparent)]
    Spec(Box<crate::SpecError>),
    #[error("git: {message}")]
    Git { message: String },
    #[error("{message}")]
    Io { message: String },
    /// A measurement failed (boxed: the runner's error is large).
    #[error(transparent)]
    Run(Box<crate::runner::RunError>),
    #[error(transparent)]
    Store(#[from] resplab_store::StoreError),
    /// The stop token fired; what was measured is stored.
    #[error("interrupted")]
    Interrupted,
}

impl From<crate::SpecError> for BisectError {
    fn from(e: crate::SpecError) -> BisectError {
        BisectError::Spec(Box::new(e))
    }
}

impl From<crate::runner::RunError> for BisectError {
    fn from(e: crate::runner::RunError) -> BisectError {
        BisectError::Run(Box::new(e))
    }
}

/// What to measure: a workload's tests, or an experiment file.
#[derive(Clone, Debug)]
pub enum Source {
    Workload(String),
    Experiment(PathBuf),
}

/// A validated bisect request.
#[derive(Clone, Debug)]
pub struct BisectSpec {
    pub repo: PathBuf,
    pub good: String,
    pub bad: String,
    /// Shell command run in each worktree (`{src}` filled in).
    pub build: String,
    /// Server command with `{port}`, `{dir}`, `{src}`.
    pub server: String,
    pub source: Source,
    /// Worktrees, build results and the bisect's state.
    pub cache: PathBuf,
    pub max_rounds: u32,
    /// Equivalence margin of good against bad (a fraction); the bisect's own margin
    /// is at least this.
    pub margin: Option<f64>,
    pub budget: Option<TrialBudget>,
}

/// What happens, for the caller to show.
#[derive(Debug)]
pub enum BisectEvent<'a> {
    /// The commits from good to bad are listed.
    Range {
        commits: &'a [Commit],
    },
    Built {
        commit: &'a Commit,
        built: &'a Built,
    },
    /// An experiment of these commits (the first is its baseline) begins, or is found
    /// finished in the store (`stored`).
    Measure {
        sides: &'a [&'a Commit],
        experiment: &'a str,
        stored: bool,
    },
    Run(crate::runner::Event<'a>),
    Tested(&'a TestedCommit),
}

/// Runs a bisect (or continues one: see the module documentation).
///
/// # Errors
/// [`BisectError`]: bad input (exit 2 for the caller), a failed run, an interruption.
/// What was stored stays stored.
pub fn run(
    spec: &BisectSpec,
    store: &mut Store,
    stop: &StopToken,
    on_event: &mut dyn FnMut(BisectEvent<'_>),
) -> Result<Outcome, BisectError> {
    let server = pair::server_words(&spec.server)?;
    let commits = git::commit_range(&spec.repo, &spec.good, &spec.bad)?;
    let overrides = Overrides {
        budget: spec.budget,
        ..Overrides::default()
    };
    let (template, text) = match &spec.source {
        Source::Workload(tests) => pair::workload_template(tests, &overrides)?,
        Source::Experiment(path) => crate::load(path, &overrides)?,
    };
    let last = commits.len() - 1;
    let id = bisect_id(spec, &commits, &template);
    on_event(BisectEvent::Range { commits: &commits });
    let mut lab = Lab {
        spec,
        commits: &commits,
        builder: Builder {
            repo: spec.repo.clone(),
            cache: spec.cache.clone(),
            command: spec.build.clone(),
        },
        template,
        text,
        server,
        id: id.clone(),
        store,
        stop,
        on_event,
        follow: None,
        srcs: BTreeMap::new(),
        logs: BTreeMap::new(),
        names: BTreeMap::new(),
        partial: None,
    };
    build_ends(&mut lab, last)?;
    let top = lab.measure(0, last, spec.margin)?;
    let mut outcome = Outcome {
        id,
        good: commits[0].clone(),
        bad: commits[last].clone(),
        between: last - 1,
        metric: lab.template.primary_metric.clone(),
        higher_is_better: resplab_store::metrics::higher_is_better(&lab.template.primary_metric),
        margin: None,
        effect: top.clone(),
        effect_experiment: lab.names.get(&(0, last)).cloned().unwrap_or_default(),
        conclusion: Conclusion::NoEffect,
        tested: Vec::new(),
        steps: Vec::new(),
        cache: spec.cache.clone(),
    };
    if !search::is_step(&top, 0.0) {
        lab.save(&outcome);
        return Ok(outcome);
    }
    let user_floor = spec.margin.map_or(0.0, f64::ln_1p);
    let floor = (top.mean.abs() / 3.0).max(user_floor);
    outcome.margin = Some(search::margin_of(floor));
    lab.partial = Some(Outcome {
        conclusion: Conclusion::Searching,
        ..outcome.clone()
    });
    let found = search::search(&mut lab, last, top, floor)?;
    conclude(&mut outcome, &found, &lab, &commits);
    lab.save(&outcome);
    Ok(outcome)
}

/// Builds both ends first: a build that fails at good or bad would skip every candidate.
fn build_ends(lab: &mut Lab<'_>, last: usize) -> Result<(), BisectError> {
    for (i, flag) in [(0, "--good"), (last, "--bad")] {
        if !lab.build(i)? {
            return Err(BisectError::Input {
                flag: "--build".into(),
                message: format!(
                    "the build command fails at {flag} {} (its output: {}); every candidate would be skipped",
                    lab.commits[i].short(),
                    lab.logs.get(&i).map_or(String::new(), |p| p.display().to_string())
                ),
            });
        }
    }
    Ok(())
}

/// The search's findings written into the outcome: every tested commit, the steps and
/// the conclusion they make.
fn conclude(outcome: &mut Outcome, found: &search::Found, lab: &Lab<'_>, commits: &[Commit]) {
    outcome.tested = found.tested.iter().map(|t| lab.report(t)).collect();
    outcome.steps = found
        .steps
        .iter()
        .map(|s| StepReport {
            commits: commits[s.first..=s.last].to_vec(),
            against: commits[s.against].clone(),
            effect: s.effect.clone(),
        })
        .collect();
    outcome.conclusion = match outcome.steps.as_slice() {
        [one] if one.commits.len() == 1 => Conclusion::Culprit,
        [_] => Conclusion::Range,
        _ => Conclusion::Steps,
    };
}

/// The bisect's identity: its commits, build, server and template experiment.
fn bisect_id(spec: &BisectSpec, commits: &[Commit], template: &Experiment) -> String {
    let mut t = template.clone();
    t.name = String::new();
    let key = format!(
        "{}\n{}\n{}\n{}\n{}\n{}",
        commits[0].id,
        commits[commits.len() - 1].id,
        spec.build,
        spec.server,
        spec.max_rounds,
        t.to_json()
    );
    resplab_store::write::fingerprint(key.as_bytes())[..8].to_string()
}

/// The real probe: worktrees, builds and stored experiments.
struct Lab<'a> {
    spec: &'a BisectSpec,
    commits: &'a [Commit],
    builder: Builder,
    template: Experiment,
    text: String,
    server: Vec<String>,
    id: String,
    store: &'a mut Store,
    stop: &'a StopToken,
    on_event: &'a mut dyn FnMut(BisectEvent<'_>),
    /// The followed workload, once good against bad chose it.
    follow: Option<String>,
    srcs: BTreeMap<usize, PathBuf>,
    logs: BTreeMap<usize, PathBuf>,
    /// The experiment of each measured (base, candidate).
    names: BTreeMap<(usize, usize), String>,
    /// The outcome so far, saved after each tested commit.
    partial: Option<Outcome>,
}

impl Lab<'_> {
    fn report(&self, t: &search::Tested) -> TestedCommit {
        TestedCommit {
            commit: self.commits[t.commit].clone(),
            against: self.commits[t.against].clone(),
            end: self.commits[t.end].clone(),
            class: t.class,
            effect: t.measured.clone(),
            effect_against_end: t.against_end.clone(),
            experiment: self.names.get(&(t.against, t.commit)).cloned(),
            build_log: self.logs.get(&t.commit).cloned(),
        }
    }

    /// Writes the outcome next to the worktrees; a failure to write loses nothing
    /// measured (the store has it), so it is not an error.
    fn save(&self, outcome: &Outcome) {
        let path = self.spec.cache.join(format!("bisect-{}.json", self.id));
        if let Ok(text) = serde_json::to_string_pretty(outcome) {
            let _ = std::fs::write(path, text + "\n");
        }
    }

    fn src(&self, i: usize) -> Result<&Path, BisectError> {
        self.srcs
            .get(&i)
            .map(PathBuf::as_path)
            .ok_or_else(|| BisectError::Io {
                message: format!(
                    "commit {} is measured before it is built",
                    self.commits[i].short()
                ),
            })
    }

    /// The comparison of each variant after the baseline on the followed workload
    /// (chosen at the first look: the largest decided effect, else the first workload).
    fn pick(
        &mut self,
        exp: &Experiment,
        a: &crate::sequential::Assessment,
    ) -> Result<Vec<Measured>, BisectError> {
        if self.follow.is_none() {
            let chosen = a
                .comparisons
                .iter()
                .filter(|c| matches!(c.decision, Decision::Higher | Decision::Lower))
                .max_by(|x, y| x.look.mean.abs().total_cmp(&y.look.mean.abs()))
                .or(a.comparisons.first());
            self.follow = chosen.map(|c| c.workload.clone());
        }
        let follow = self.follow.clone().unwrap_or_default();
        exp.variants[1..]
            .iter()
            .map(|v| {
                let c = a
                    .comparisons
                    .iter()
                    .find(|c| c.workload == follow && c.variant == v.name)
                    .ok_or_else(|| BisectError::Io {
                        message: format!(
                            "experiment {}: no comparison of {} on workload {follow}",
                            exp.name, v.name
                        ),
                    })?;
                Ok(Measured {
                    workload: c.workload.clone(),
                    rounds: c.look.n,
                    mean: c.look.mean,
                    low: c.look.low,
                    high: c.look.high,
                    decision: c.decision,
                })
            })
            .collect()
    }

    /// Runs (or finds finished) the experiment of `sides` (the first is the baseline)
    /// and returns each other side against the first.
    fn measure_sides(
        &mut self,
        sides: &[usize],
        margin: Option<f64>,
    ) -> Result<Vec<Measured>, BisectError> {
        let commits = self.commits;
        let srcs = sides
            .iter()
            .map(|&i| self.src(i).map(Path::to_path_buf))
            .collect::<Result<Vec<_>, _>>()?;
        let with_src: Vec<pair::Side<'_>> = sides
            .iter()
            .zip(&srcs)
            .map(|(&i, src)| pair::Side {
                commit: &commits[i],
                src,
            })
            .collect();
        let exp = pair::experiment(
            &self.template,
            &self.server,
            &self.id,
            &with_src,
            margin,
            self.spec.max_rounds,
        )?;
        let finished = self
            .store
            .find_experiment(&exp.name)?
            .is_some_and(|i| i.state == "finished");
        (self.on_event)(BisectEvent::Measure {
            sides: &with_src.iter().map(|s| s.commit).collect::<Vec<_>>(),
            experiment: &exp.name,
            stored: finished,
        });
        if !finished {
            let text = pair::spec_text(&exp, &self.text);
            let on_event = &mut *self.on_event;
            let outcome = crate::runner::run(&exp, &text, self.store, self.stop, &mut |ev| {
                on_event(BisectEvent::Run(ev))
            })?;
            if outcome.interrupted {
                return Err(BisectError::Interrupted);
            }
        }
        let a = crate::sequential::assess_stored(self.store, &exp)?;
        let measured = self.pick(&exp, &a)?;
        self.names.insert((sides[1], sides[0]), exp.name);
        Ok(measured)
    }
}

impl Probe for Lab<'_> {
    fn tested(&mut self, t: &search::Tested) {
        let report = self.report(t);
        (self.on_event)(BisectEvent::Tested(&report));
        if let Some(mut o) = self.partial.take() {
            o.tested.push(report);
            self.save(&o);
            self.partial = Some(o);
        }
    }

    fn build(&mut self, i: usize) -> Result<bool, BisectError> {
        if self.stop.is_stopped() {
            return Err(BisectError::Interrupted);
        }
        let built = self.builder.build(&self.commits[i])?;
        (self.on_event)(BisectEvent::Built {
            commit: &self.commits[i],
            built: &built,
        });
        Ok(match built {
            Built::Ok { src, .. } => {
                self.srcs.insert(i, src);
                true
            }
            Built::Failed { log, .. } => {
                self.logs.insert(i, log);
                false
            }
        })
    }

    fn measure(
        &mut self,
        base: usize,
        cand: usize,
        margin: Option<f64>,
    ) -> Result<Measured, BisectError> {
        let mut m = self.measure_sides(&[base, cand], margin)?;
        self.names
            .insert((base, cand), self.names[&(cand, base)].clone());
        Ok(m.remove(0))
    }

    fn measure_between(
        &mut self,
        base: usize,
        cand: usize,
        end: usize,
        margin: Option<f64>,
    ) -> Result<(Measured, Measured), BisectError> {
        let m = self.measure_sides(&[cand, base, end], margin)?;
        Ok((m[0].reversed(), m[1].reversed()))
    }
}
