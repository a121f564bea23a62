//! Running an experiment: the loop over executions, each trial's life cycle, validity
//! checks, and the commit of each finished trial.
//!
//! Per execution: start the server (or check the address), apply `config`. Per trial:
//! pin the client if asked, run `before_trial`, switch a toggle on (with its guard
//! time), flush and preload when the workload has a preload, snapshot `INFO cpu`,
//! measure through the engine (warm-up included in the engine's run), snapshot `INFO`
//! again, run `after_trial`, switch the toggle off, check validity, and store the trial.
//!
//! The loop asks [`plan::next_execution`] what to do next after every execution, from
//! what the store holds, so `run` and `resume` are the same code: an interrupted
//! experiment continues from its first missing trial, and a `kill -9` loses only the
//! trial in progress. A server that does not start, a failing hook, or an engine error
//! stops the run with an error; trials already stored stay stored.
//!
//! Validity checks (METHOD.md §6.1): zero errors and no protocol errors; the run
//! completed; the load generator used less than `client_cpu_limit` of the CPUs it could
//! use (its threads, at most the CPUs it may run on), otherwise it, not the server, may
//! have been the bottleneck; for open loop, send lag p99.9 within `send_lag_limit` and
//! nothing left unsent. A failed check invalidates the round, which is rerun at the end.
//!
//! Rooms: this module holds the loop over executions (servers, hooks, set-up and
//! teardown); `trial` one trial's life cycle around its measurement; and one executor
//! per kind of workload measures it: `engine` (resplab's own load, in this process),
//! `command` (any benchmark program, its output imported) and `generators` (shards on
//! several load generators, merged).

use crate::client::Client;
use crate::launch::{self, LaunchError, ServerProcess};
use crate::model::{Experiment, ServerSource, TrialBudget, Variant};
use crate::plan::{self, Execution, Next, TrialSlot};
use resplab_engine::{Budget, EngineError, OpenLoop, Progress, RunConfig, StopToken, Target};
use resplab_results::{RunEnd, RunRecord};
use resplab_store::{Check, NewExperiment, NewTrial, ServerInfo, Store, StoreError, ALL_COMMANDS};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

mod command;
mod duet;
mod engine;
mod evidence;
mod generators;
mod profile;
mod sequential;
mod trial;
use engine::*;
use generators::*;
pub use sequential::SequentialEnd;
use trial::*;

/// Why a run stopped with an error (stored trials are kept in every case).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("variant `{variant}`, workload `{workload}`: {source}")]
    Engine {
        variant: String,
        workload: String,
        #[source]
        source: EngineError,
    },
    #[error("{0}")]
    Workload(String),
}

/// The primary metric of every counted round so far, per compared pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    pub workload: String,
    pub variant: String,
    /// (round, baseline value, variant value) of the primary metric.
    pub pairs: Vec<(u32, f64, f64)>,
}

/// What the runner reports as it goes.
#[derive(Debug)]
pub enum Event<'a> {
    /// The run begins: how many trials the first pass has and how many are stored.
    Start {
        planned: usize,
        stored: usize,
        estimate: Duration,
    },
    /// A hook or toggle step, for verbose displays.
    Step { variant: &'a str, what: String },
    /// A trial begins.
    Trial {
        slot: TrialSlot,
        variant: &'a str,
        workload: &'a str,
        /// Trials stored so far (all attempts).
        stored: usize,
    },
    /// Once per second of measurement.
    Progress(&'a Progress),
    /// A trial was committed.
    Stored {
        slot: TrialSlot,
        variant: &'a str,
        workload: &'a str,
        trial_id: i64,
        valid: bool,
        failed: Vec<Check>,
        primary: Option<f64>,
    },
    /// Paired primary-metric values of counted rounds, after each stored trial.
    Standing(&'a [Standing]),
    /// A round will be rerun because a trial in it failed a check.
    Rerun { round: u32, attempt: u32 },
    /// A run until decided looked at a new round: every comparison's anytime-valid
    /// interval, the wall time used, and how long one more round takes.
    Look {
        assessment: &'a crate::sequential::Assessment,
        elapsed: Duration,
        per_round: Duration,
    },
    /// Something the target cannot tell (a section it does not answer, counters this
    /// machine lacks): said once per run, never a failure.
    Notice(&'a str),
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub experiment_id: i64,
    /// Trials stored by this call.
    pub trials_run: usize,
    pub invalid: usize,
    /// Rounds that stayed invalid after every allowed rerun.
    pub given_up: Vec<u32>,
    /// The stop token fired; the trial in progress was discarded.
    pub interrupted: bool,
    /// A run until decided stopped: why, after how many rounds and how long.
    pub sequential: Option<SequentialEnd>,
}

/// Registers the experiment (or finds it, for a resume) and returns its id.
///
/// # Errors
/// [`StoreError::Conflict`] when the name is taken by a different definition.
pub fn register(store: &mut Store, exp: &Experiment, spec_text: &str) -> Result<i64, StoreError> {
    store.register_experiment(&NewExperiment {
        name: exp.name.clone(),
        seed: exp.seed,
        rounds: exp.rounds,
        order_kind: exp.order.name().into(),
        primary_metric: exp.primary_metric.clone(),
        margin: exp.margin,
        definition_hash: exp.definition_hash(),
        spec_text: spec_text.into(),
        spec_json: exp.to_json(),
        variants: exp
            .variants
            .iter()
            .map(|v| (v.name.clone(), serde_json::to_value(v).unwrap_or_default()))
            .collect(),
        workloads: exp
            .workloads
            .iter()
            .map(|w| (w.name.clone(), serde_json::to_value(w).unwrap_or_default()))
            .collect(),
    })
}

struct Runner<'a> {
    exp: &'a Experiment,
    store: &'a mut Store,
    id: i64,
    stop: &'a StopToken,
    on_event: &'a mut dyn FnMut(Event<'_>),
    setup_done: BTreeSet<usize>,
    original_cpus: Option<String>,
    host: resplab_results::HostInfo,
    cores: usize,
    /// Variants this run is limited to (a phase); empty: every variant.
    only: BTreeSet<usize>,
    /// The stored phase of this run, when limited.
    phase: Option<i64>,
    /// The `[server]` of this round (round, attempt, process) when it runs per round.
    shared: Option<(u32, u32, ServerProcess)>,
    /// The RESPB port (`{respb_port}`) of the server of the execution in progress.
    respb_port: Option<u16>,
    /// The looks of a run until decided.
    seq: Option<sequential::SeqState>,
    /// The nodes of this execution's local cluster (empty for a single server).
    cluster_nodes: Vec<crate::evidence::Node>,
    /// Notices already given in this run, and those to give after the trial is stored.
    noticed: BTreeSet<String>,
    pending_notices: Vec<String>,
    /// Hardware counting proved useless in this run (no perf, no PMU): not tried again.
    hardware_off: bool,
    /// The trial in progress is sampled (`[profile]`).
    profile_now: bool,
    /// Sampling proved impossible in this run (no perf, no permission): not tried again.
    profile_off: bool,
    /// The stacks of the trial just sampled, until stored.
    captured: Option<resplab_sys::profile::Stacks>,
    /// Numbers the data files of this run's recordings.
    profile_seq: u64,
    /// A duet's two CPU sets (`order = "duet"` only).
    duet_sets: Option<crate::duet::CpuSets>,
}

/// Runs (or resumes) an experiment until every round is valid or out of reruns, the
/// stop token fires, or something fails.
///
/// # Errors
/// [`RunError`]; trials stored before the error stay stored.
pub fn run(
    exp: &Experiment,
    spec_text: &str,
    store: &mut Store,
    stop: &StopToken,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Outcome, RunError> {
    run_phase(exp, spec_text, store, stop, &[], on_event)
}

/// Runs only the trials of the variants named in `only` (all when empty): one phase of
/// an experiment whose variants cannot be live together (a kernel per boot). The
/// experiment's `before_phase` hook runs first and what it prints is stored with the
/// phase; later calls with the other variants fill in the rest of every round.
///
/// # Errors
/// [`RunError`]: an unknown variant name, a failing `before_phase` hook, or any error
/// of [`run`]; trials stored before the error stay stored.
pub fn run_phase(
    exp: &Experiment,
    spec_text: &str,
    store: &mut Store,
    stop: &StopToken,
    only: &[String],
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<Outcome, RunError> {
    let selected = selected_variants(exp, only)?;
    let duet_sets = duet::duet_sets(exp, only)?;
    let id = register(store, exp, spec_text)?;
    let phase = if selected.is_empty() {
        None
    } else {
        let record = before_phase(exp, stop)?;
        Some(store.begin_phase(id, only, &record)?)
    };
    store.set_state(id, "running")?;
    let stored = store.trials(id)?.len();
    let planned = plan::full_plan(exp).iter().map(|e| e.trials.len()).sum();
    on_event(Event::Start {
        planned,
        stored,
        estimate: plan::estimate_total(exp),
    });
    // A resumed run until decided continues the sequence's clock.
    let seq = match exp.until_decided {
        Some(_) => Some(sequential::SeqState::new(Duration::from_secs_f64(
            store.sequential_elapsed(id)?,
        ))),
        None => None,
    };
    let mut r = Runner {
        exp,
        store,
        id,
        stop,
        on_event,
        setup_done: BTreeSet::new(),
        original_cpus: launch::own_cpu_list(),
        host: resplab_engine::host::detect(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        only: selected,
        phase,
        shared: None,
        respb_port: None,
        seq,
        cluster_nodes: Vec::new(),
        noticed: BTreeSet::new(),
        pending_notices: Vec::new(),
        hardware_off: false,
        profile_now: false,
        profile_off: false,
        captured: None,
        profile_seq: 0,
        duet_sets,
    };
    let mut outcome = Outcome {
        experiment_id: id,
        trials_run: 0,
        invalid: 0,
        given_up: Vec::new(),
        interrupted: false,
        sequential: None,
    };
    let result = r.run_all(&mut outcome);
    if let Some((_, _, mut p)) = r.shared.take() {
        p.stop();
    }
    r.teardown();
    if let Some(c) = &r.original_cpus {
        let _ = launch::pin_self(c);
    }
    match &result {
        // A phase that leaves other variants' cells to later phases is not the end.
        Ok(()) if !outcome.interrupted && r.phase.is_some() && has_missing_cells(r.store, exp)? => {
            r.store.set_state(id, "phased")?
        }
        Ok(()) if !outcome.interrupted => r.store.set_state(id, "finished")?,
        Ok(()) => {}
        Err(_) => {
            let _ = r.store.set_state(id, "failed");
        }
    }
    result.map(|()| outcome)
}

/// The indexes of the variants named in `only`.
fn selected_variants(exp: &Experiment, only: &[String]) -> Result<BTreeSet<usize>, RunError> {
    let mut selected = BTreeSet::new();
    for name in only {
        let i = exp.variant_index(name).ok_or_else(|| {
            RunError::Workload(format!(
                "--variants: no variant named `{name}`; variants are: {}",
                exp.variants
                    .iter()
                    .map(|v| v.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        selected.insert(i);
    }
    Ok(selected)
}

/// A server started (or found) for one execution, stopped when it ends.
struct Started {
    host: String,
    port: u16,
    process: Option<ServerProcess>,
    cluster: Option<crate::cluster::LocalCluster>,
}

impl Runner<'_> {
    fn run_all(&mut self, outcome: &mut Outcome) -> Result<(), RunError> {
        let mut announced: BTreeSet<(u32, u32)> = BTreeSet::new();
        loop {
            if self.stop.is_stopped() {
                outcome.interrupted = true;
                return Ok(());
            }
            let stored = self.store.trials(self.id)?;
            match plan::next_execution_of(self.exp, &stored, &self.only) {
                Next::Done { given_up } => {
                    outcome.given_up = given_up;
                    return self.sequential_finish(outcome);
                }
                Next::Run(exec) => {
                    if self.sequential_gate(&exec, &stored, outcome)? {
                        return Ok(());
                    }
                    if exec.attempt > 0 && announced.insert((exec.round, exec.attempt)) {
                        (self.on_event)(Event::Rerun {
                            round: exec.round,
                            attempt: exec.attempt,
                        });
                    }
                    self.run_execution(&exec, stored.len(), outcome)?;
                }
            }
        }
    }

    fn run_execution(
        &mut self,
        exec: &Execution,
        mut stored: usize,
        outcome: &mut Outcome,
    ) -> Result<(), RunError> {
        let exp = self.exp;
        let base = &exp.variants[exec.server_variant];
        for slot in &exec.trials {
            self.ensure_setup(slot.variant)?;
        }
        if exp.order == crate::Order::Duet {
            return self.run_duet(exec, stored, outcome);
        }
        let Started {
            host,
            port,
            process,
            cluster,
        } = self.start_server(exec, base)?;
        self.respb_port = process.as_ref().and_then(|p| p.respb_port);
        self.cluster_nodes = cluster
            .as_ref()
            .map(|c| c.evidence_nodes())
            .unwrap_or_default();
        let mut ctl = match &base.server {
            ServerSource::None if port == 0 => None,
            _ => Some(self.control(base, &host, port)?),
        };
        if let Some(c) = ctl.as_mut() {
            config_set(c, base, &base.config)?;
        }
        for slot in &exec.trials {
            if self.stop.is_stopped() {
                outcome.interrupted = true;
                break;
            }
            let variant = &exp.variants[slot.variant];
            let workload = &exp.workloads[slot.workload];
            (self.on_event)(Event::Trial {
                slot: *slot,
                variant: &variant.name,
                workload: &workload.name,
                stored,
            });
            self.profile_now = self.profiles_counted();
            let trial = self.run_trial(slot, base, &host, port, ctl.as_mut(), process.as_ref());
            self.profile_now = false;
            let Some(trial) = trial? else {
                self.captured = None;
                outcome.interrupted = true;
                break;
            };
            let trial_id = self.store_trial(slot, &trial, outcome)?;
            self.keep_profile(slot, Some(trial_id), trial.run.totals.requests)?;
            stored += 1;
            let standing = self.standing()?;
            (self.on_event)(Event::Standing(&standing));
        }
        // The execution's extra, sampled trials come after all of its counted ones, so
        // their load precedes no counted trial on this server.
        for slot in &exec.trials {
            if outcome.interrupted {
                break;
            }
            let at = (host.as_str(), port);
            outcome.interrupted =
                !self.extra_profile_trial(slot, base, at, ctl.as_mut(), process.as_ref())?;
        }
        drop(ctl);
        if let Some(mut p) = process {
            p.stop();
        }
        if let Some(mut c) = cluster {
            c.stop();
        }
        Ok(())
    }

    /// The server of an execution: a local cluster, a spawned server, a checked address,
    /// the `[server]` section's (started per execution, or once per round), or none.
    fn start_server(&mut self, exec: &Execution, base: &Variant) -> Result<Started, RunError> {
        let exp = self.exp;
        let mut process = None;
        let mut cluster = None;
        let (host, port) = match &base.server {
            ServerSource::Cluster {
                command,
                masters,
                replicas,
            } => {
                let c = crate::cluster::LocalCluster::start(
                    &base.name,
                    command,
                    &base.env,
                    base.server_cpus.as_deref(),
                    *masters as usize,
                    *replicas as usize,
                    exp.ready_timeout.max(Duration::from_secs(30)),
                )?;
                let port = c.seed_port();
                cluster = Some(c);
                ("127.0.0.1".to_string(), port)
            }
            ServerSource::Spawn { command } => {
                let p = ServerProcess::start(
                    &base.name,
                    command,
                    &base.env,
                    base.server_cpus.as_deref(),
                    exp.ready_timeout,
                )?;
                let port = p.port;
                process = Some(p);
                ("127.0.0.1".to_string(), port)
            }
            ServerSource::Address { host, port } => {
                let cfg =
                    connect_config(base, host, *port).map_err(|reason| LaunchError::Address {
                        variant: base.name.clone(),
                        address: format!("{host}:{port}"),
                        reason,
                    })?;
                launch::ping_with(&cfg, exp.ready_timeout).map_err(|reason| {
                    LaunchError::Address {
                        variant: base.name.clone(),
                        address: format!("{host}:{port}"),
                        reason,
                    }
                })?;
                (host.clone(), *port)
            }
            ServerSource::None => {
                let (host, port, p) = self.shared_server(exec)?;
                process = p;
                (host, port)
            }
            ServerSource::Toggle { .. } => {
                return Err(RunError::Workload(format!(
                    "variant `{}` is a toggle and has no server of its own",
                    base.name
                )))
            }
        };
        Ok(Started {
            host,
            port,
            process,
            cluster,
        })
    }

    /// The `[server]` section's server for a variant without its own: started for this
    /// execution (returned, to stop when it ends), or once per round attempt (kept by the
    /// runner); none without a `[server]` section.
    fn shared_server(
        &mut self,
        exec: &Execution,
    ) -> Result<(String, u16, Option<ServerProcess>), RunError> {
        let timeout = self.exp.ready_timeout;
        let start =
            |command: &[String]| ServerProcess::start("[server]", command, &[], None, timeout);
        match &self.exp.shared_server {
            None => Ok((String::new(), 0, None)),
            Some(sh) if !sh.per_round => {
                let p = start(&sh.command)?;
                let port = p.port;
                Ok(("127.0.0.1".to_string(), port, Some(p)))
            }
            Some(sh) => {
                let key = (exec.round, exec.attempt);
                if self.shared.as_ref().map(|s| (s.0, s.1)) != Some(key) {
                    if let Some((_, _, mut old)) = self.shared.take() {
                        old.stop();
                    }
                    self.shared = Some((key.0, key.1, start(&sh.command)?));
                }
                let port = self.shared.as_ref().map_or(0, |s| s.2.port);
                Ok(("127.0.0.1".to_string(), port, None))
            }
        }
    }

    /// Stores a finished trial, counts it, and reports it with its primary value;
    /// returns its id.
    fn store_trial(
        &mut self,
        slot: &TrialSlot,
        trial: &NewTrial,
        outcome: &mut Outcome,
    ) -> Result<i64, RunError> {
        let trial_id = self.store.insert_trial(trial)?;
        self.announce_stored(slot, trial, trial_id, outcome);
        Ok(trial_id)
    }

    /// Counts a trial just stored and reports it with its primary value.
    fn announce_stored(
        &mut self,
        slot: &TrialSlot,
        trial: &NewTrial,
        trial_id: i64,
        outcome: &mut Outcome,
    ) {
        let exp = self.exp;
        let variant = &exp.variants[slot.variant];
        let workload = &exp.workloads[slot.workload];
        let valid = trial.is_valid();
        let failed: Vec<Check> = trial.checks.iter().filter(|c| !c.passed).cloned().collect();
        let primary = match &trial.command {
            Some(c) => c
                .metrics
                .iter()
                .find(|m| m.name == exp.primary_metric)
                .map(|m| m.value),
            None => {
                primary_value(&trial.run, &exp.primary_metric, trial.server_cpu_sec).or_else(|| {
                    // A metric of the server's evidence, for the whole trial.
                    trial
                        .evidence
                        .iter()
                        .find(|m| m.name == exp.primary_metric && m.command == ALL_COMMANDS)
                        .map(|m| m.value)
                })
            }
        };
        outcome.trials_run += 1;
        if !valid {
            outcome.invalid += 1;
        }
        (self.on_event)(Event::Stored {
            slot: *slot,
            variant: &variant.name,
            workload: &workload.name,
            trial_id,
            valid,
            failed,
            primary,
        });
        self.give_notices();
    }

    fn control(&self, v: &Variant, host: &str, port: u16) -> Result<Client, RunError> {
        let cfg = connect_config(v, host, port).map_err(|reason| {
            RunError::Launch(LaunchError::Control {
                variant: v.name.clone(),
                what: format!("connecting to {host}:{port}"),
                reason,
            })
        })?;
        Client::connect_with(&cfg, Duration::from_secs(10)).map_err(|e| {
            RunError::Launch(LaunchError::Control {
                variant: v.name.clone(),
                what: format!("connecting to {host}:{port}"),
                reason: e.to_string(),
            })
        })
    }

    fn hook_env(&self, v: &Variant, host: &str, port: u16) -> Vec<(String, String)> {
        let mut env = v.env.clone();
        env.push(("RESPLAB_HOST".into(), host.into()));
        env.push(("RESPLAB_PORT".into(), port.to_string()));
        env.push(("RESPLAB_VARIANT".into(), v.name.clone()));
        env.push(("RESPLAB_EXPERIMENT".into(), self.exp.name.clone()));
        if self.exp.workloads.iter().any(|w| w.run.is_some()) {
            env.push(("RESPLAB_DIR".into(), self.work_dir(v)));
        }
        env
    }

    fn ensure_setup(&mut self, variant: usize) -> Result<(), RunError> {
        if !self.setup_done.insert(variant) {
            return Ok(());
        }
        let v = &self.exp.variants[variant];
        if let Some(cmd) = &v.hooks.setup {
            (self.on_event)(Event::Step {
                variant: &v.name,
                what: format!("setup: {cmd}"),
            });
            launch::run_hook(
                &v.name,
                "setup",
                cmd,
                &self.hook_env(v, "", 0),
                v.hooks.timeout,
            )?;
        }
        Ok(())
    }

    fn teardown(&mut self) {
        for &i in &self.setup_done {
            let v = &self.exp.variants[i];
            if let Some(cmd) = &v.hooks.teardown {
                let _ = launch::run_hook(
                    &v.name,
                    "teardown",
                    cmd,
                    &self.hook_env(v, "", 0),
                    v.hooks.timeout,
                );
            }
        }
        // The working directories live as long as the run that made them.
        for v in &self.exp.variants {
            let _ = std::fs::remove_dir_all(self.work_dir_path(v));
        }
    }

    fn standing(&self) -> Result<Vec<Standing>, RunError> {
        let obs = self.store.observations(&self.exp.name)?;
        Ok(standings(self.exp, &obs))
    }
}

/// The primary metric's per-round pairs of every (workload, variant), from the counted
/// observations: the run totals for resplab's own load, and for a command workload whose
/// output carries the metric per benchmark or test, one standing for each of those
/// (named `workload:COMMAND`).
pub fn standings(exp: &Experiment, obs: &[resplab_store::Observation]) -> Vec<Standing> {
    let metric = &exp.primary_metric;
    let base = &exp.baseline().name;
    let mut out = Vec::new();
    for w in &exp.workloads {
        // The totals carry the metric for resplab's own load; a command workload's
        // output may carry it per benchmark or test only: one standing for each.
        let mut commands: Vec<&str> = Vec::new();
        for o in obs
            .iter()
            .filter(|o| o.workload == w.name && &o.metric == metric)
        {
            if !commands.contains(&o.command.as_str()) {
                commands.push(&o.command);
            }
        }
        if commands.contains(&ALL_COMMANDS) || commands.is_empty() {
            commands = vec![ALL_COMMANDS];
        }
        for command in commands {
            let value = |variant: &str, round: u32| {
                obs.iter()
                    .find(|o| {
                        o.workload == w.name
                            && o.variant == variant
                            && o.round == round
                            && o.command == command
                            && &o.metric == metric
                    })
                    .map(|o| o.value)
            };
            let rounds: BTreeSet<u32> = obs.iter().map(|o| o.round).collect();
            for v in exp.variants.iter().skip(1) {
                let pairs = rounds
                    .iter()
                    .filter_map(|&r| Some((r, value(base, r)?, value(&v.name, r)?)))
                    .collect();
                out.push(Standing {
                    workload: if command == ALL_COMMANDS {
                        w.name.clone()
                    } else {
                        format!("{}:{command}", w.name)
                    },
                    variant: v.name.clone(),
                    pairs,
                });
            }
        }
    }
    out
}

/// True when some round's current attempt still lacks a trial (a later phase's).
fn has_missing_cells(store: &Store, exp: &Experiment) -> Result<bool, RunError> {
    let status = store.status(&exp.name)?;
    Ok(status.rounds.iter().any(|r| {
        matches!(
            r,
            resplab_store::RoundState::NotStarted | resplab_store::RoundState::Incomplete { .. }
        )
    }))
}

/// Runs the experiment's `before_phase` hook (if any) and returns what it printed.
fn before_phase(exp: &Experiment, stop: &StopToken) -> Result<String, RunError> {
    let Some(cmd) = &exp.before_phase else {
        return Ok(String::new());
    };
    let filled = crate::command::Filled {
        display: cmd.clone(),
        argv: vec!["sh".into(), "-c".into(), cmd.clone()],
        cwd: None,
    };
    let env = [("RESPLAB_EXPERIMENT".to_string(), exp.name.clone())];
    let done = crate::command::execute(&filled, &env, Duration::from_secs(60), stop);
    if let Some(f) = done.failure {
        return Err(RunError::Launch(LaunchError::Hook {
            variant: "(every variant of this phase)".into(),
            hook: "before_phase".into(),
            command: cmd.clone(),
            reason: f,
            output: crate::launch::last_lines(&done.stderr, 5),
        }));
    }
    let mut record = String::from_utf8_lossy(&done.stdout).into_owned();
    record.push_str(&String::from_utf8_lossy(&done.stderr));
    Ok(record)
}

fn control_err(v: &Variant, what: &str, e: std::io::Error) -> RunError {
    RunError::Launch(LaunchError::Control {
        variant: v.name.clone(),
        what: what.into(),
        reason: e.to_string(),
    })
}
