//! The executor of resplab's own load: the workload compiled and run by the engine
//! against the variant's server, in this process.

use super::*;
use crate::model::LoadProtocol;

/// The connection part of a trial's run configuration: `host:port` and the variant's TLS,
/// user and password (read now from the environment variable it names).
///
/// # Errors
/// The password's environment variable is no longer set.
pub(super) fn connect_config(v: &Variant, host: &str, port: u16) -> Result<RunConfig, String> {
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

impl Runner<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn measure(
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
        let mut ctl = ctl;
        let restore = before_measuring(variant, workload, ctl.as_deref_mut(), env)?;
        if let Some(run) = &workload.run {
            return self
                .measure_command(slot, variant, run, host, port, ctl, env, process, restore);
        }
        let ctl = ctl.ok_or_else(|| no_server(variant, workload))?;
        let nodes = self.evidence_nodes(port, process);
        let before = self.read_evidence(base, &nodes, ctl);
        let counting = self.start_counting(&nodes);
        let recording = self.start_profile(&nodes);
        let spec = crate::workload::to_spec(
            workload,
            resplab_workload::seed::trial_seed(exp.seed, slot.round, slot.attempt, slot.workload),
        )
        .map_err(RunError::Workload)?;
        let compiled = crate::workload::compile(workload, &spec).map_err(RunError::Workload)?;
        let mut cfg = trial_config(exp, workload, variant, base, host, port, spec.seed)?;
        let port = self.load_port(variant, &mut cfg)?;
        let started = resplab_store::write::now_unix_ms();
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
        if run.end == RunEnd::Interrupted || self.stop.is_stopped() {
            return Ok(None);
        }
        let hardware = self.finish_counting(counting);
        self.finish_profile(recording);
        let after = self.read_evidence(base, &nodes, ctl);
        let mut info = server_facts(ctl, process);
        let (evidence, server_cpu_sec) = self.finish_evidence(
            &nodes,
            (&before, &after),
            &hardware,
            run.totals.requests,
            &mut info,
        );
        after_trial(variant, Some(ctl), env, restore)?;
        let ran = ("engine", std::mem::take(&mut run.config));
        run.config = stored_config(exp, variant, workload, slot, ran, serde_json::json!(spec));
        if exp.generators.is_empty() {
            run.host = self.host.clone();
        }
        let checks = self.engine_checks(&run, variant, base, workload, generator_failures);
        Ok(Some(NewTrial {
            run,
            server_info: info,
            server_cpu_sec,
            checks,
            evidence,
            ..self.trial_frame(slot, variant, workload, started)
        }))
    }

    /// The wire and port of the variant's load, set on `cfg`: RESP to the server's port,
    /// or RESPB to its RESPB port (the execution's `{respb_port}` or the address's).
    fn load_port(&self, variant: &Variant, cfg: &mut RunConfig) -> Result<u16, RunError> {
        let port = match variant.protocol {
            LoadProtocol::Resp => return Ok(cfg_port(cfg)),
            LoadProtocol::Respb { port: Some(p) } => p,
            LoadProtocol::Respb { port: None } => self.respb_port.ok_or_else(|| {
                RunError::Workload(format!(
                    "variant `{}` has protocol = \"respb\" but its server was started without a {{respb_port}}",
                    variant.name
                ))
            })?,
        };
        cfg.wire = resplab_engine::Wire::Respb;
        if let Target::Tcp { port: p, .. } = &mut cfg.target {
            *p = port;
        }
        Ok(port)
    }

    /// The trial's checks, with the generators' one when the load came from generators.
    fn engine_checks(
        &self,
        run: &RunRecord,
        variant: &Variant,
        base: &Variant,
        workload: &crate::model::Workload,
        generator_failures: Vec<String>,
    ) -> Vec<Check> {
        let mut checks = self.checks(
            run,
            workload.threads,
            variant
                .client_cpus
                .as_deref()
                .or(base.client_cpus.as_deref()),
        );
        if !self.exp.generators.is_empty() {
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
        checks
    }
}

/// The TCP port a configuration connects to (0 for a Unix socket, which variants do
/// not use).
fn cfg_port(cfg: &RunConfig) -> u16 {
    match &cfg.target {
        Target::Tcp { port, .. } => *port,
        _ => 0,
    }
}

/// The error of a workload that needs a server when the variant has none.
fn no_server(variant: &Variant, workload: &crate::model::Workload) -> RunError {
    RunError::Workload(format!(
        "variant `{}` has no server (server = \"none\"); workload `{}` needs one",
        variant.name, workload.name
    ))
}

/// What comes before a trial's load, in order: the `before_trial` hook; for a toggle
/// variant, its configuration set (the old values kept, returned, to restore after), its
/// `toggle_on` hook and its guard time; the workload's preload.
pub(super) fn before_measuring(
    variant: &Variant,
    workload: &crate::model::Workload,
    mut ctl: Option<&mut Client>,
    env: &[(String, String)],
) -> Result<Vec<(String, String)>, RunError> {
    let timeout = variant.hooks.timeout;
    if let Some(cmd) = &variant.hooks.before_trial {
        launch::run_hook(&variant.name, "before_trial", cmd, env, timeout)?;
    }
    let mut restore = Vec::new();
    if let ServerSource::Toggle { on, guard, .. } = &variant.server {
        let ctl = ctl
            .as_deref_mut()
            .ok_or_else(|| no_server(variant, workload))?;
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
            ctl.ok_or_else(|| no_server(variant, workload))?,
            variant,
            workload,
            p,
        )?;
    }
    Ok(restore)
}

/// The engine's configuration for one trial: the base variant's connection, the
/// workload's shape and budget, the experiment's warm-up and the trial's seed.
pub(super) fn trial_config(
    exp: &Experiment,
    workload: &crate::model::Workload,
    variant: &Variant,
    base: &Variant,
    host: &str,
    port: u16,
    seed: u64,
) -> Result<RunConfig, RunError> {
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
    cfg.cluster_wait = exp.cluster_wait;
    cfg.progress_commands = exp.progress_commands;
    cfg.seed = seed;
    cfg.open_loop = workload.rate.map(|rate| OpenLoop {
        rate_per_sec: rate,
        arrivals: workload.arrivals,
    });
    Ok(cfg)
}
