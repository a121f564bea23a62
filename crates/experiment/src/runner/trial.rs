//! One trial's life cycle around its measurement: set-up (before_trial hook, toggle on,
//! preload, the first reading of the server's evidence), the measurement by the executor
//! of the workload's kind, then the evidence again, after_trial, toggle off, the validity checks, and the commit
//! of the finished trial.

use super::*;

/// What the server was after a trial: `INFO` sections, `CONFIG GET *`, and the pid and
/// command of a server this run started.
pub(super) fn server_facts(ctl: &mut Client, process: Option<&ServerProcess>) -> ServerInfo {
    let mut info = ServerInfo::new();
    for section in ["server", "memory", "stats", "cpu"] {
        if let Ok(r) = ctl.call(&["INFO", section]) {
            info.extend(resplab_proto::resp::info::sections(&r.text()));
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
pub(super) fn after_trial(
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

pub(super) fn config_set(
    ctl: &mut Client,
    v: &Variant,
    pairs: &[(String, String)],
) -> Result<(), RunError> {
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

pub(super) fn preload(
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

pub(super) fn primary_value(run: &RunRecord, metric: &str, server_cpu: Option<f64>) -> Option<f64> {
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
        "wire_bytes_per_op" => (s.bytes_in + s.bytes_out) as f64 / (s.requests.max(1) as f64),
        _ => return None,
    })
}

impl Runner<'_> {
    /// One trial; `None` when the stop token fired during it (nothing is stored).
    pub(super) fn run_trial(
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

    /// What every kind of trial records alike: its place in the plan, when it ran (it
    /// ends now) and on what host; the rest is empty for the caller to fill in.
    pub(super) fn trial_frame(
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
            evidence: Vec::new(),
        }
    }

    pub(super) fn checks(
        &self,
        run: &RunRecord,
        threads: u32,
        client_cpus: Option<&str>,
    ) -> Vec<Check> {
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
        checks.push(self.client_cpu_check(run, threads, client_cpus));
        if let Some(ol) = &run.open_loop {
            let limit_us = self.exp.send_lag_limit.as_secs_f64() * 1e6;
            let lag = ol.send_lag_us.p99_9;
            checks.push(Check {
                name: "send_lag".into(),
                // One limit, the documented `send_lag_limit`: the bench's own
                // `generator_behind` flag applies its internal limit and is not consulted.
                passed: lag <= limit_us && ol.unsent == 0,
                detail: format!(
                    "send lag p99.9 {lag:.0} us (limit {limit_us:.0} us), {} unsent",
                    ol.unsent
                ),
            });
        }
        checks
    }

    /// Whether the load generator kept clear of its CPU limit: the busiest generator's
    /// share of its CPUs, or this process's share of the CPUs its threads may use; not
    /// judged on a measured part too short for CPU accounting.
    fn client_cpu_check(&self, run: &RunRecord, threads: u32, client_cpus: Option<&str>) -> Check {
        let allowed = client_cpus
            .and_then(|c| crate::words::cpu_list_len(c).ok())
            .unwrap_or(self.cores);
        let usable = (threads as usize).min(allowed).max(1) as f64;
        // CPU time is charged in clock ticks (10 ms), so a measured part shorter than
        // MIN_CPU_JUDGE_SEC cannot tell a busy generator from an idle one.
        const MIN_CPU_JUDGE_SEC: f64 = 0.5;
        if run.duration_sec < MIN_CPU_JUDGE_SEC {
            Check {
                name: "client_cpu".into(),
                passed: true,
                detail: format!(
                    "not judged: the measured part ({:.3} s) is shorter than {MIN_CPU_JUDGE_SEC} s, too short for CPU accounting in clock ticks",
                    run.duration_sec
                ),
            }
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
            Check {
                name: "client_cpu".into(),
                passed: busy < self.exp.client_cpu_limit,
                detail: format!(
                    "the busiest generator ({host}) used {:.0} % of its CPUs (limit {:.0} %)",
                    busy * 100.0,
                    self.exp.client_cpu_limit * 100.0
                ),
            }
        } else {
            let busy = run.client_cpu.total_sec() / (run.duration_sec * usable);
            Check {
                name: "client_cpu".into(),
                passed: busy < self.exp.client_cpu_limit,
                detail: format!(
                    "load generator used {:.0} % of {} CPU(s) (limit {:.0} %)",
                    busy * 100.0,
                    usable,
                    self.exp.client_cpu_limit * 100.0
                ),
            }
        }
    }
}

/// The config stored with a trial: what ran (`ran`: `("engine", its config)` or
/// `("command", the command line)`), the workload it ran, and the trial's place in the
/// experiment (keys are stored sorted, so their order here does not matter).
pub(super) fn stored_config(
    exp: &Experiment,
    variant: &Variant,
    workload: &crate::Workload,
    slot: &TrialSlot,
    ran: (&str, serde_json::Value),
    spec: serde_json::Value,
) -> serde_json::Value {
    let mut config = serde_json::json!({
        "workload": spec,
        "experiment": exp.name,
        "variant": variant.name,
        "workload_name": workload.name,
        "round": slot.round,
        "attempt": slot.attempt,
        "position": slot.position,
    });
    config[ran.0] = ran.1;
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trial_stores_what_ran_its_workload_and_its_place() {
        let text = "[experiment]\nname = \"e\"\nrounds = 2\n\n\
                    [[variant]]\nname = \"a\"\nserver = \"none\"\n\n\
                    [[variant]]\nname = \"b\"\nserver = \"none\"\n\n\
                    [[workload]]\nname = \"w\"\nrun = \"true\"\nformat = \"numbers\"\n";
        let exp = crate::resolve::parse("(t)", text, &crate::Overrides::default()).unwrap();
        let slot = TrialSlot {
            round: 1,
            attempt: 2,
            position: 1,
            variant: 1,
            workload: 0,
        };
        let ran = ("engine", serde_json::json!({"seed": 7}));
        let spec = serde_json::json!({"tests": ["set"]});
        let c = stored_config(&exp, &exp.variants[1], &exp.workloads[0], &slot, ran, spec);
        assert_eq!(
            c,
            serde_json::json!({
                "engine": {"seed": 7},
                "workload": {"tests": ["set"]},
                "experiment": "e",
                "variant": "b",
                "workload_name": "w",
                "round": 1,
                "attempt": 2,
                "position": 1,
            })
        );
        let ran = ("command", "redis-cli INCR k".into());
        let c = stored_config(
            &exp,
            &exp.variants[0],
            &exp.workloads[0],
            &slot,
            ran,
            1.into(),
        );
        assert_eq!(c["command"], "redis-cli INCR k");
        assert_eq!(c["variant"], "a");
        assert!(c.get("engine").is_none(), "{c}");
    }
}
