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

use crate::client::{parse_info, Client};
use crate::launch::{self, LaunchError, ServerProcess};
use crate::model::{Experiment, ServerSource, TrialBudget, Variant};
use crate::plan::{self, Execution, Next, TrialSlot};
use resplab_engine::{Budget, EngineError, OpenLoop, Progress, RunConfig, StopToken, Target};
use resplab_results::{RunEnd, RunRecord};
use resplab_store::{Check, NewExperiment, NewTrial, ServerInfo, Store, StoreError, ALL_COMMANDS};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

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
    };
    let mut outcome = Outcome {
        experiment_id: id,
        trials_run: 0,
        invalid: 0,
        given_up: Vec::new(),
        interrupted: false,
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
                    return Ok(());
                }
                Next::Run(exec) => {
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
            ServerSource::None => match &exp.shared_server {
                None => (String::new(), 0),
                Some(sh) if !sh.per_round => {
                    let p = ServerProcess::start(
                        "[server]",
                        &sh.command,
                        &[],
                        None,
                        exp.ready_timeout,
                    )?;
                    let port = p.port;
                    process = Some(p);
                    ("127.0.0.1".to_string(), port)
                }
                Some(sh) => {
                    let key = (exec.round, exec.attempt);
                    if self.shared.as_ref().map(|s| (s.0, s.1)) != Some(key) {
                        if let Some((_, _, mut old)) = self.shared.take() {
                            old.stop();
                        }
                        let p = ServerProcess::start(
                            "[server]",
                            &sh.command,
                            &[],
                            None,
                            exp.ready_timeout,
                        )?;
                        self.shared = Some((key.0, key.1, p));
                    }
                    let port = self.shared.as_ref().map_or(0, |s| s.2.port);
                    ("127.0.0.1".to_string(), port)
                }
            },
            ServerSource::Toggle { .. } => {
                return Err(RunError::Workload(format!(
                    "variant `{}` is a toggle and has no server of its own",
                    base.name
                )))
            }
        };
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
            let Some(trial) =
                self.run_trial(slot, base, &host, port, ctl.as_mut(), process.as_ref())?
            else {
                outcome.interrupted = true;
                break;
            };
            let valid = trial.is_valid();
            let failed: Vec<Check> = trial.checks.iter().filter(|c| !c.passed).cloned().collect();
            let primary = match &trial.command {
                Some(c) => c
                    .metrics
                    .iter()
                    .find(|m| m.name == exp.primary_metric)
                    .map(|m| m.value),
                None => primary_value(&trial.run, &exp.primary_metric, trial.server_cpu_sec),
            };
            let trial_id = self.store.insert_trial(&trial)?;
            stored += 1;
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
            let standing = self.standing()?;
            (self.on_event)(Event::Standing(&standing));
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
    }

    /// One trial; `None` when the stop token fired during it (nothing is stored).
    fn run_trial(
        &mut self,
        slot: &TrialSlot,
        base: &Variant,
        host: &str,
        port: u16,
        ctl: Option<&mut Client>,
        process: Option<&ServerProcess>,
    ) -> Result<Option<NewTrial>, RunError> {
        let exp = self.exp;
        let variant = &exp.variants[slot.variant];
        let env = self.hook_env(variant, host, port);
        let pin = variant
            .client_cpus
            .as_deref()
            .or(base.client_cpus.as_deref());
        if let Some(cpus) = pin {
            launch::pin_self(cpus).map_err(|reason| LaunchError::Control {
                variant: variant.name.clone(),
                what: "pinning the load generator".into(),
                reason,
            })?;
        }
        let result = self.measure(slot, variant, base, host, port, ctl, &env, process);
        if pin.is_some() {
            if let Some(c) = &self.original_cpus {
                let _ = launch::pin_self(c);
            }
        }
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn measure(
        &mut self,
        slot: &TrialSlot,
        variant: &Variant,
        base: &Variant,
        host: &str,
        port: u16,
        ctl: Option<&mut Client>,
        env: &[(String, String)],
        process: Option<&ServerProcess>,
    ) -> Result<Option<NewTrial>, RunError> {
        let exp = self.exp;
        let workload = &exp.workloads[slot.workload];
        let timeout = variant.hooks.timeout;
        let mut ctl = ctl;
        let no_server = || {
            RunError::Workload(format!(
                "variant `{}` has no server (server = \"none\"); workload `{}` needs one",
                variant.name, workload.name
            ))
        };
        if let Some(cmd) = &variant.hooks.before_trial {
            launch::run_hook(&variant.name, "before_trial", cmd, env, timeout)?;
        }
        let mut restore = Vec::new();
        if let ServerSource::Toggle { on, guard, .. } = &variant.server {
            let ctl = ctl.as_deref_mut().ok_or_else(no_server)?;
            for (k, _) in &variant.config {
                let old = ctl
                    .call(&["CONFIG", "GET", k])
                    .map_err(|e| control_err(variant, "CONFIG GET", e))?;
                if let crate::client::Reply::Array(Some(items)) = old {
                    if let Some(v) = items.get(1) {
                        restore.push((k.clone(), v.text()));
                    }
                }
            }
            config_set(ctl, variant, &variant.config)?;
            if let Some(cmd) = on {
                launch::run_hook(&variant.name, "toggle_on", cmd, env, timeout)?;
            }
            std::thread::sleep(*guard);
        }
        if let Some(p) = &workload.preload {
            preload(
                ctl.as_deref_mut().ok_or_else(no_server)?,
                variant,
                workload,
                p,
            )?;
        }
        if let Some(run) = &workload.run {
            return self
                .measure_command(slot, variant, run, host, port, ctl, env, process, restore);
        }
        let ctl = ctl.ok_or_else(no_server)?;
        let cpu_before = server_cpu(ctl);
        let spec = crate::workload::to_spec(
            workload,
            resplab_workload::seed::trial_seed(exp.seed, slot.round, slot.attempt, slot.workload),
        )
        .map_err(RunError::Workload)?;
        let compiled = resplab_workload::Workload::new(&spec)
            .map_err(|e| RunError::Workload(format!("workload `{}`: {e}", workload.name)))?;
        let mut cfg = connect_config(base, host, port).map_err(|reason| {
            RunError::Launch(LaunchError::Control {
                variant: variant.name.clone(),
                what: "reading the connection settings".into(),
                reason,
            })
        })?;
        cfg.threads = workload.threads;
        cfg.clients = workload.clients;
        cfg.pipeline = workload.pipeline;
        cfg.budget = match workload.budget {
            TrialBudget::Requests(n) => Budget::Requests(n),
            TrialBudget::TestTime(d) => Budget::Duration(d),
        };
        cfg.warmup = exp.warmup;
        cfg.seed = spec.seed;
        cfg.open_loop = workload.rate.map(|rate| OpenLoop {
            rate_per_sec: rate,
            arrivals: if workload.arrivals == "constant" {
                resplab_engine::Arrivals::Constant
            } else {
                resplab_engine::Arrivals::Poisson
            },
        });
        let started = resplab_store::write::now_unix_ms();
        let t0 = Instant::now();
        let on_event = &mut self.on_event;
        let mut generator_failures: Vec<String> = Vec::new();
        let mut run = if exp.generators.is_empty() {
            resplab_engine::run(&cfg, &compiled, self.stop, &mut |p| {
                on_event(Event::Progress(p))
            })
            .map_err(|source| RunError::Engine {
                variant: variant.name.clone(),
                workload: workload.name.clone(),
                source,
            })?
        } else {
            let Some((record, failures)) = self.run_generators(workload, &spec, &cfg, host, port)
            else {
                return Ok(None);
            };
            generator_failures = failures;
            record
        };
        let _ = t0;
        if run.end == RunEnd::Interrupted || self.stop.is_stopped() {
            return Ok(None);
        }
        let cpu_after = server_cpu(ctl);
        let info = server_facts(ctl, process);
        after_trial(variant, Some(ctl), env, restore)?;
        let _ = base;
        run.config = serde_json::json!({
            "engine": run.config,
            "workload": spec,
            "experiment": exp.name,
            "variant": variant.name,
            "workload_name": workload.name,
            "round": slot.round,
            "attempt": slot.attempt,
            "position": slot.position,
        });
        if exp.generators.is_empty() {
            run.host = self.host.clone();
        }
        let server_cpu_sec = match (cpu_before, cpu_after) {
            (Some(a), Some(b)) if b >= a => Some(b - a),
            _ => None,
        };
        let mut checks = self.checks(
            &run,
            workload.threads,
            variant
                .client_cpus
                .as_deref()
                .or(base.client_cpus.as_deref()),
        );
        if !exp.generators.is_empty() {
            checks.push(Check {
                name: "generators".into(),
                passed: generator_failures.is_empty(),
                detail: if generator_failures.is_empty() {
                    format!("{} shards merged", run.shards.len())
                } else {
                    generator_failures.join("; ")
                },
            });
        }
        Ok(Some(NewTrial {
            run,
            server_info: info,
            server_cpu_sec,
            checks,
            ..self.trial_frame(slot, variant, workload, started)
        }))
    }

    /// What every kind of trial records alike: its place in the plan, when it ran (it
    /// ends now) and on what host; the rest is empty for the caller to fill in.
    fn trial_frame(
        &self,
        slot: &TrialSlot,
        variant: &Variant,
        workload: &crate::Workload,
        started: u64,
    ) -> NewTrial {
        NewTrial {
            experiment_id: self.id,
            variant: variant.name.clone(),
            workload: workload.name.clone(),
            round: slot.round,
            attempt: slot.attempt,
            position: slot.position,
            started_at_unix_ms: started,
            finished_at_unix_ms: resplab_store::write::now_unix_ms(),
            host: self.host.clone(),
            run: empty_record(),
            server_info: Default::default(),
            server_cpu_sec: None,
            checks: Vec::new(),
            command: None,
            phase: self.phase,
        }
    }

    /// A command workload's trial: the command runs against the server the execution
    /// started (or the variant's address), its output is read into metrics, and any
    /// failure makes the trial invalid with the reason, naming variant, round and command.
    #[allow(clippy::too_many_arguments)]
    fn measure_command(
        &mut self,
        slot: &TrialSlot,
        variant: &Variant,
        run: &crate::model::CommandRun,
        host: &str,
        port: u16,
        mut ctl: Option<&mut Client>,
        env: &[(String, String)],
        process: Option<&ServerProcess>,
        restore: Vec<(String, String)>,
    ) -> Result<Option<NewTrial>, RunError> {
        let exp = self.exp;
        let workload = &exp.workloads[slot.workload];
        let seed =
            resplab_workload::seed::trial_seed(exp.seed, slot.round, slot.attempt, slot.workload)
                .to_string();
        let round = slot.round.to_string();
        let port_text = port.to_string();
        let uri = format!("redis://{host}:{port}");
        let dir = self.work_dir(variant);
        let filled = crate::command::fill(
            run,
            &[
                ("host", host),
                ("port", &port_text),
                ("uri", &uri),
                ("dir", &dir),
                ("seed", &seed),
                ("round", &round),
                ("variant", &variant.name),
            ],
        )
        .map_err(|e| RunError::Workload(format!("workload `{}`: run: {e}", workload.name)))?;
        let cpu_before = ctl.as_deref_mut().and_then(server_cpu);
        let started = resplab_store::write::now_unix_ms();
        let finished = crate::command::execute(&filled, env, run.timeout, self.stop);
        if finished.interrupted || self.stop.is_stopped() {
            return Ok(None);
        }
        let cpu_after = ctl.as_deref_mut().and_then(server_cpu);
        let mut info = ctl
            .as_deref_mut()
            .map(|c| server_facts(c, process))
            .unwrap_or_default();
        info.entry("resplab".into())
            .or_default()
            .insert("command".into(), filled.display.clone());
        after_trial(variant, ctl, env, restore)?;
        let read = match &finished.failure {
            Some(f) => Err(f.clone()),
            None => crate::command::read_metrics(run.format, &finished),
        };
        let mut histograms = Vec::new();
        let mut total = None;
        let (metrics, check) = match read {
            Ok(readout) => {
                let rows = readout.metrics;
                histograms = readout.histograms;
                total = readout.total;
                let detail = format!(
                    "`{}` exited 0 in {:.2} s; {} metrics read",
                    filled.display,
                    finished.wall.as_secs_f64(),
                    rows.len()
                );
                (
                    rows,
                    Check {
                        name: "command".into(),
                        passed: true,
                        detail,
                    },
                )
            }
            Err(reason) => {
                let tail = crate::launch::last_lines(&finished.stderr, 3);
                let tail = if tail.is_empty() {
                    crate::launch::last_lines(&finished.stdout, 3)
                } else {
                    tail
                };
                let detail = format!(
                    "variant `{}`, round {}: command `{}` {reason}{}",
                    variant.name,
                    slot.round + 1,
                    filled.display,
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!("; its output ends: {tail}")
                    }
                );
                (
                    crate::command::read_metrics(None, &finished)
                        .map(|r| r.metrics)
                        .unwrap_or_default(),
                    Check {
                        name: "command".into(),
                        passed: false,
                        detail,
                    },
                )
            }
        };
        let mut record = empty_record();
        record.started_at_unix_ms = started;
        record.duration_sec = finished.wall.as_secs_f64();
        // The latency histograms the output carried become the record's summaries, so
        // they are stored and the report draws their latency spectrum. Their rates are
        // the tool's own, in the metrics: ops_per_sec here stays 0.
        let summary = |h: &resplab_stats::hist::LatencyHistogram| resplab_results::Summary {
            requests: h.count(),
            latency_us: resplab_engine::latency_us(h),
            histogram: h.to_base64(),
            ..resplab_results::Summary::default()
        };
        for (name, h) in &histograms {
            record.commands.insert(name.clone(), summary(h));
        }
        if let Some(h) = &total {
            record.totals = summary(h);
        }
        record.host = self.host.clone();
        record.config = serde_json::json!({
            "command": filled.display,
            "workload": run,
            "experiment": exp.name,
            "variant": variant.name,
            "workload_name": workload.name,
            "round": slot.round,
            "attempt": slot.attempt,
            "position": slot.position,
        });
        let server_cpu_sec = match (cpu_before, cpu_after) {
            (Some(a), Some(b)) if b >= a => Some(b - a),
            _ => None,
        };
        Ok(Some(NewTrial {
            run: record,
            server_info: info,
            server_cpu_sec,
            checks: vec![check],
            command: Some(resplab_store::CommandTrial {
                metrics,
                command: filled.display,
                exit_code: finished.exit_code,
                stdout: finished.stdout,
                stderr: finished.stderr,
            }),
            ..self.trial_frame(slot, variant, workload, started)
        }))
    }

    /// The variant's own working directory for command workloads (`{dir}`, and
    /// `RESPLAB_DIR` in its hooks): the same for every trial of a run, so a `setup` hook
    /// can build into it what the command then runs.
    fn work_dir(&self, v: &Variant) -> String {
        let dir = std::env::temp_dir().join(format!(
            "resplab-work-{}-{}",
            self.exp.name,
            v.name
                .chars()
                .map(
                    |c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                        c
                    } else {
                        '_'
                    }
                )
                .collect::<String>()
        ));
        let _ = std::fs::create_dir_all(&dir);
        dir.display().to_string()
    }

    /// The trial's load from the `[[generator]]` hosts: one shard each, started together,
    /// merged. `None` when the stop token fired. Failures are returned as messages (the
    /// trial is then invalid) with what the other shards measured.
    fn run_generators(
        &mut self,
        workload: &crate::model::Workload,
        spec: &resplab_workload::WorkloadSpec,
        cfg: &RunConfig,
        host: &str,
        port: u16,
    ) -> Option<(RunRecord, Vec<String>)> {
        use base64::Engine as _;
        let exp = self.exp;
        let spec_json = serde_json::to_vec(spec).unwrap_or_default();
        let mut args: Vec<String> = vec![
            "--seed".into(),
            spec.seed.to_string(),
            "-c".into(),
            cfg.clients.to_string(),
            "-P".into(),
            cfg.pipeline.to_string(),
            "--threads".into(),
            cfg.threads.to_string(),
            "--warmup".into(),
            format!("{}", cfg.warmup.as_secs_f64()),
            "--workload-spec".into(),
            base64::engine::general_purpose::STANDARD.encode(spec_json),
        ];
        // TLS travels as flags (the CA and client certificate paths must exist on every
        // generator host); a user as --user, its password only as REDISCLI_AUTH in the
        // environment the launcher passes on (never on a command line).
        if let Some(t) = &cfg.tls {
            args.push("--tls".into());
            for (flag, path) in [
                ("--cacert", &t.ca_file),
                ("--cacertdir", &t.ca_dir),
                ("--cert", &t.cert),
                ("--key", &t.key),
            ] {
                if let Some(p) = path {
                    args.extend([flag.to_string(), p.display().to_string()]);
                }
            }
            if let Some(sni) = &t.sni {
                args.extend(["--sni".into(), sni.clone()]);
            }
            if t.insecure {
                args.push("--insecure".into());
            }
        }
        if let Some(user) = cfg.credentials.as_ref().and_then(|c| c.user.as_ref()) {
            args.extend(["--user".into(), user.clone()]);
        }
        let auth_env: Vec<(String, String)> = cfg
            .credentials
            .as_ref()
            .map(|c| vec![("REDISCLI_AUTH".to_string(), c.password.clone())])
            .unwrap_or_default();
        let mut expected = exp
            .generators
            .iter()
            .map(|g| g.start_lead)
            .max()
            .unwrap_or_default();
        let phases = workload.tests.len().max(1) as u32;
        match cfg.budget {
            Budget::Requests(n) => {
                args.extend(["-n".into(), n.to_string()]);
                expected += Duration::from_secs(3600);
            }
            Budget::Duration(d) => {
                args.extend(["--test-time".into(), format!("{}", d.as_secs_f64())]);
                expected += (d + cfg.warmup) * phases;
            }
        }
        if let Some(ol) = &cfg.open_loop {
            args.extend([
                "--rate".into(),
                format!("{}", ol.rate_per_sec),
                "--arrivals".into(),
                ol.arrivals.name().into(),
            ]);
        }
        let lead = exp
            .generators
            .iter()
            .map(|g| g.start_lead)
            .max()
            .unwrap_or_default();
        let start_at = resplab_engine::unix_ms_now() / 1e3 + lead.as_secs_f64();
        let commands =
            match crate::generators::shard_commands(&exp.generators, host, port, &args, start_at) {
                Ok(c) => c,
                Err(e) => return Some((empty_record(), vec![e])),
            };
        let results = crate::generators::run_shards(
            &commands,
            &auth_env,
            expected + Duration::from_secs(60),
            self.stop,
        );
        if results.interrupted {
            return None;
        }
        let mut failures = results.failures;
        if results.records.is_empty() {
            failures.push("no generator returned a result".into());
            return Some((empty_record(), failures));
        }
        match resplab_engine::merge::merge(&results.records, !failures.is_empty()) {
            Ok(record) => Some((record, failures)),
            Err(e) => {
                failures.push(e.0);
                Some((empty_record(), failures))
            }
        }
    }

    fn checks(&self, run: &RunRecord, threads: u32, client_cpus: Option<&str>) -> Vec<Check> {
        let mut checks = Vec::new();
        let errors = run.totals.errors + run.connections.protocol_errors;
        checks.push(Check {
            name: "errors".into(),
            passed: errors == 0,
            detail: format!(
                "{} error replies, {} protocol errors (expected 0)",
                run.totals.errors, run.connections.protocol_errors
            ),
        });
        let end_ok = run.end == RunEnd::Completed;
        checks.push(Check {
            name: "run_end".into(),
            passed: end_ok,
            detail: match &run.end {
                RunEnd::Completed => "completed".into(),
                RunEnd::Interrupted => "interrupted".into(),
                RunEnd::ServerLost { message } => format!("server lost: {message}"),
                RunEnd::Unreachable { message, .. } => format!("outage: {message}"),
            },
        });
        let allowed = client_cpus
            .and_then(|c| crate::words::cpu_list_len(c).ok())
            .unwrap_or(self.cores);
        let usable = (threads as usize).min(allowed).max(1) as f64;
        // CPU time is charged in clock ticks (10 ms), so a measured part shorter than
        // MIN_CPU_JUDGE_SEC cannot tell a busy generator from an idle one.
        const MIN_CPU_JUDGE_SEC: f64 = 0.5;
        if run.duration_sec < MIN_CPU_JUDGE_SEC {
            checks.push(Check {
                name: "client_cpu".into(),
                passed: true,
                detail: format!(
                    "not judged: the measured part ({:.3} s) is shorter than {MIN_CPU_JUDGE_SEC} s, too short for CPU accounting in clock ticks",
                    run.duration_sec
                ),
            });
        } else if !run.shards.is_empty() {
            // Each generator on its own host: the busiest one is what could bias.
            let (busy, host) = run
                .shards
                .iter()
                .map(|m| {
                    let cpus = (threads.min(m.host.cores.max(1))).max(1) as f64;
                    (
                        m.client_cpu.total_sec() / (m.duration_sec.max(1e-9) * cpus),
                        m.host.hostname.clone(),
                    )
                })
                .fold((0.0, String::new()), |a, b| if b.0 > a.0 { b } else { a });
            checks.push(Check {
                name: "client_cpu".into(),
                passed: busy < self.exp.client_cpu_limit,
                detail: format!(
                    "the busiest generator ({host}) used {:.0} % of its CPUs (limit {:.0} %)",
                    busy * 100.0,
                    self.exp.client_cpu_limit * 100.0
                ),
            });
        } else {
            let busy = run.client_cpu.total_sec() / (run.duration_sec * usable);
            checks.push(Check {
                name: "client_cpu".into(),
                passed: busy < self.exp.client_cpu_limit,
                detail: format!(
                    "load generator used {:.0} % of {} CPU(s) (limit {:.0} %)",
                    busy * 100.0,
                    usable,
                    self.exp.client_cpu_limit * 100.0
                ),
            });
        }
        if let Some(ol) = &run.open_loop {
            let limit_us = self.exp.send_lag_limit.as_secs_f64() * 1e6;
            let lag = ol.send_lag_us.p99_9;
            checks.push(Check {
                name: "send_lag".into(),
                passed: lag <= limit_us && ol.unsent == 0 && !ol.generator_behind,
                detail: format!(
                    "send lag p99.9 {lag:.0} us (limit {limit_us:.0} us), {} unsent",
                    ol.unsent
                ),
            });
        }
        checks
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

/// What the server was after a trial: `INFO` sections, `CONFIG GET *`, and the pid and
/// command of a server this run started.
fn server_facts(ctl: &mut Client, process: Option<&ServerProcess>) -> ServerInfo {
    let mut info = ServerInfo::new();
    for section in ["server", "memory", "stats", "cpu"] {
        if let Ok(r) = ctl.call(&["INFO", section]) {
            info.extend(parse_info(&r.text()));
        }
    }
    // The configuration as measured, for the check that variants differ only in
    // what they declare (servers without CONFIG GET simply have none).
    if let Ok(crate::client::Reply::Array(Some(items))) = ctl.call(&["CONFIG", "GET", "*"]) {
        let config: BTreeMap<String, String> = items
            .chunks_exact(2)
            .map(|kv| (kv[0].text(), kv[1].text()))
            .collect();
        if !config.is_empty() {
            info.insert("config".into(), config);
        }
    }
    if let Some(p) = process {
        if let Some(pid) = p.pid() {
            info.entry("resplab".into())
                .or_default()
                .insert("server_pid".into(), pid.to_string());
        }
        info.entry("resplab".into())
            .or_default()
            .insert("server_command".into(), p.command.clone());
    }
    info
}

/// The variant's `after_trial` hook, and for a hot-toggle variant its switch-off (the
/// `toggle_off` command, the `CONFIG SET` values of `restore`, the guard time).
fn after_trial(
    variant: &Variant,
    ctl: Option<&mut Client>,
    env: &[(String, String)],
    restore: Vec<(String, String)>,
) -> Result<(), RunError> {
    let timeout = variant.hooks.timeout;
    if let Some(cmd) = &variant.hooks.after_trial {
        launch::run_hook(&variant.name, "after_trial", cmd, env, timeout)?;
    }
    if let ServerSource::Toggle { off, guard, .. } = &variant.server {
        if let Some(cmd) = off {
            launch::run_hook(&variant.name, "toggle_off", cmd, env, timeout)?;
        }
        if let Some(ctl) = ctl {
            config_set(ctl, variant, &restore)?;
        }
        std::thread::sleep(*guard);
    }
    Ok(())
}

fn control_err(v: &Variant, what: &str, e: std::io::Error) -> RunError {
    RunError::Launch(LaunchError::Control {
        variant: v.name.clone(),
        what: what.into(),
        reason: e.to_string(),
    })
}

fn config_set(ctl: &mut Client, v: &Variant, pairs: &[(String, String)]) -> Result<(), RunError> {
    for (k, val) in pairs {
        let r = ctl
            .call(&["CONFIG", "SET", k, val])
            .map_err(|e| control_err(v, &format!("CONFIG SET {k} {val}"), e))?;
        if let crate::client::Reply::Error(e) = r {
            return Err(RunError::Launch(LaunchError::Control {
                variant: v.name.clone(),
                what: format!("CONFIG SET {k} {val}"),
                reason: e,
            }));
        }
    }
    Ok(())
}

fn preload(
    ctl: &mut Client,
    v: &Variant,
    w: &crate::model::Workload,
    p: &crate::model::Preload,
) -> Result<(), RunError> {
    let err = |e| control_err(v, "preload", e);
    let r = ctl.call(&["FLUSHALL"]).map_err(err)?;
    if let crate::client::Reply::Error(e) = r {
        return Err(RunError::Launch(LaunchError::Control {
            variant: v.name.clone(),
            what: "FLUSHALL before preload".into(),
            reason: e,
        }));
    }
    let value = vec![b'x'; p.value_size as usize];
    ctl.set_timeout(Duration::from_secs(60)).map_err(err)?;
    let mut i = 0;
    while i < p.keys {
        let n = (p.keys - i).min(1000);
        let mut buf = Vec::with_capacity(n as usize * (p.value_size as usize + 48));
        for k in i..i + n {
            let key = crate::workload::preload_key(w, &p.key_prefix, k);
            Client::encode(&mut buf, &[b"SET", key.as_bytes(), &value]);
        }
        if let Some(e) = ctl.pipeline(&buf, n as usize).map_err(err)? {
            return Err(RunError::Launch(LaunchError::Control {
                variant: v.name.clone(),
                what: "preload SET".into(),
                reason: e,
            }));
        }
        i += n;
    }
    ctl.set_timeout(Duration::from_secs(10)).map_err(err)?;
    Ok(())
}

/// `used_cpu_sys + used_cpu_user` of the server, from `INFO cpu`.
fn server_cpu(ctl: &mut Client) -> Option<f64> {
    let text = ctl.call(&["INFO", "cpu"]).ok()?.text();
    let info = parse_info(&text);
    let cpu = info.get("cpu")?;
    let f = |k: &str| cpu.get(k).and_then(|v| v.parse::<f64>().ok());
    Some(f("used_cpu_sys")? + f("used_cpu_user")?)
}

fn primary_value(run: &RunRecord, metric: &str, server_cpu: Option<f64>) -> Option<f64> {
    let s = &run.totals;
    let l = &s.latency_us;
    Some(match metric {
        "ops_per_sec" => s.ops_per_sec,
        "mean_us" => l.mean,
        "p50_us" => l.p50,
        "p90_us" => l.p90,
        "p99_us" => l.p99,
        "p99_9_us" => l.p99_9,
        "max_us" => l.max,
        "requests" => s.requests as f64,
        "errors" => s.errors as f64,
        "client_cpu_sec" => run.client_cpu.total_sec(),
        "server_cpu_sec" => server_cpu?,
        "server_cpu_us_per_op" => server_cpu? * 1e6 / (s.requests.max(1) as f64),
        _ => return None,
    })
}

/// The record of a trial whose generators produced nothing: no requests, no time.
fn empty_record() -> RunRecord {
    RunRecord {
        schema_version: resplab_results::SCHEMA_VERSION,
        tool: resplab_results::ToolInfo {
            name: "resplab".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            git_revision: None,
        },
        started_at_unix_ms: resplab_store::write::now_unix_ms(),
        config: serde_json::Value::Null,
        seed: 0,
        load_model: resplab_results::LoadModel::ClosedLoop {
            clients: 0,
            pipeline: 0,
        },
        server: BTreeMap::new(),
        host: resplab_results::HostInfo::default(),
        warmup_sec: 0.0,
        duration_sec: 0.0,
        totals: resplab_results::Summary::default(),
        commands: BTreeMap::new(),
        open_loop: None,
        series: Vec::new(),
        series_interval_sec: 1.0,
        connections: resplab_results::ConnectionStats::default(),
        client_cpu: resplab_results::CpuTime::default(),
        end: RunEnd::Completed,
        warnings: Vec::new(),
        shard: None,
        shards: Vec::new(),
        cluster: None,
        nodes: Default::default(),
    }
}

/// The connection part of a trial's run configuration: `host:port` and the variant's TLS,
/// user and password (read now from the environment variable it names).
///
/// # Errors
/// The password's environment variable is no longer set.
fn connect_config(v: &Variant, host: &str, port: u16) -> Result<RunConfig, String> {
    let mut cfg = RunConfig::new(Target::Tcp {
        host: host.to_string(),
        port,
    });
    let c = &v.connect;
    if let Some(t) = &c.tls {
        cfg.tls = Some(resplab_engine::TlsOptions {
            ca_file: t.cacert.as_ref().map(Into::into),
            ca_dir: t.cacertdir.as_ref().map(Into::into),
            cert: t.cert.as_ref().map(Into::into),
            key: t.key.as_ref().map(Into::into),
            sni: t.sni.clone(),
            insecure: t.insecure,
            protocols: Vec::new(),
            ciphersuites: Vec::new(),
        });
    }
    let password = match &c.password_env {
        Some(var) => Some(std::env::var(var).map_err(|_| {
            format!(
                "variant `{}`: the environment variable {var} (password_env) is not set",
                v.name
            )
        })?),
        None => None,
    };
    if password.is_some() || c.user.is_some() {
        cfg.credentials = Some(resplab_engine::Credentials {
            user: c.user.clone(),
            password: password.unwrap_or_default(),
        });
    }
    Ok(cfg)
}
