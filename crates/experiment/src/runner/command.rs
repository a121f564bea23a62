//! The executor of a command workload: any benchmark program, run with the trial's
//! address and seed filled in, its output read through `results::import` into the
//! trial's run record.

use super::*;

impl Runner<'_> {
    /// A command workload's trial: the command runs against the server the execution
    /// started (or the variant's address), its output is read into metrics, and any
    /// failure makes the trial invalid with the reason, naming variant, round and command.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn measure_command(
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
        let filled = self.fill_command(slot, variant, run, host, port)?;
        let nodes = self.evidence_nodes(port, process);
        let before = ctl
            .as_deref_mut()
            .map(|c| self.read_evidence(variant, &nodes, c));
        let counting = self.start_counting(&nodes);
        let started = resplab_store::write::now_unix_ms();
        let finished = crate::command::execute(&filled, env, run.timeout, self.stop);
        if finished.interrupted || self.stop.is_stopped() {
            return Ok(None);
        }
        let hardware = self.finish_counting(counting);
        let after = ctl
            .as_deref_mut()
            .map(|c| self.read_evidence(variant, &nodes, c));
        let mut info = ctl
            .as_deref_mut()
            .map(|c| server_facts(c, process))
            .unwrap_or_default();
        let (evidence, server_cpu_sec) = match (&before, &after) {
            (Some(b), Some(a)) => self.finish_evidence(&nodes, (b, a), &hardware, 0, &mut info),
            _ => (Vec::new(), None),
        };
        info.entry("resplab".into())
            .or_default()
            .insert("command".into(), filled.display.clone());
        after_trial(variant, ctl, env, restore)?;
        let (readout, check) = command_outcome(slot, variant, run, &filled, &finished);
        let mut record = command_record(&readout, started, &finished);
        record.host = self.host.clone();
        record.config = stored_config(
            exp,
            variant,
            workload,
            slot,
            ("command", filled.display.clone().into()),
            serde_json::json!(run),
        );
        Ok(Some(NewTrial {
            run: record,
            server_info: info,
            server_cpu_sec,
            checks: vec![check],
            command: Some(resplab_store::CommandTrial {
                metrics: readout.metrics,
                command: filled.display,
                exit_code: finished.exit_code,
                stdout: finished.stdout,
                stderr: finished.stderr,
            }),
            evidence,
            ..self.trial_frame(slot, variant, workload, started)
        }))
    }

    /// The trial's command line, its placeholders filled with the trial's address,
    /// working directory, seed, round and variant.
    fn fill_command(
        &self,
        slot: &TrialSlot,
        variant: &Variant,
        run: &crate::model::CommandRun,
        host: &str,
        port: u16,
    ) -> Result<crate::command::Filled, RunError> {
        let exp = self.exp;
        let workload = &exp.workloads[slot.workload];
        let seed =
            resplab_workload::seed::trial_seed(exp.seed, slot.round, slot.attempt, slot.workload)
                .to_string();
        let round = slot.round.to_string();
        let port_text = port.to_string();
        let uri = format!("redis://{host}:{port}");
        let dir = self.work_dir(variant);
        crate::command::fill(
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
        .map_err(|e| RunError::Workload(format!("workload `{}`: run: {e}", workload.name)))
    }

    /// The variant's own working directory for command workloads (`{dir}`, and
    /// `RESPLAB_DIR` in its hooks): the same for every trial of a run, so a `setup` hook
    /// can build into it what the command then runs.
    pub(super) fn work_dir(&self, v: &Variant) -> String {
        let dir = self.work_dir_path(v);
        let _ = std::fs::create_dir_all(&dir);
        dir.display().to_string()
    }

    /// Where [`Runner::work_dir`] puts a variant's working directory.
    pub(super) fn work_dir_path(&self, v: &Variant) -> std::path::PathBuf {
        std::env::temp_dir().join(format!(
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
        ))
    }
}

/// What the command's run gave: its metrics (and histograms) read in its format, and the
/// trial's `command` check. A failure (of the run or of the reading) fails the check with
/// the reason and the end of the output, and keeps only the wall and CPU time.
fn command_outcome(
    slot: &TrialSlot,
    variant: &Variant,
    run: &crate::model::CommandRun,
    filled: &crate::command::Filled,
    finished: &crate::command::Finished,
) -> (crate::command::Readout, Check) {
    let read = match &finished.failure {
        Some(f) => Err(f.clone()),
        None => crate::command::read_metrics(run.format, finished),
    };
    match read {
        Ok(readout) => {
            let detail = format!(
                "`{}` exited 0 in {:.2} s; {} metrics read",
                filled.display,
                finished.wall.as_secs_f64(),
                readout.metrics.len()
            );
            (
                readout,
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
            let metrics = crate::command::read_metrics(None, finished)
                .map(|r| r.metrics)
                .unwrap_or_default();
            let readout = crate::command::Readout {
                metrics,
                histograms: Vec::new(),
                total: None,
            };
            (
                readout,
                Check {
                    name: "command".into(),
                    passed: false,
                    detail,
                },
            )
        }
    }
}

/// The trial's run record: its start and wall time, and the latency histograms the
/// output carried as the record's summaries, so they are stored and the report draws
/// their latency spectrum. Their rates are the tool's own, in the metrics: ops_per_sec
/// here stays 0.
fn command_record(
    readout: &crate::command::Readout,
    started: u64,
    finished: &crate::command::Finished,
) -> RunRecord {
    let mut record = empty_record();
    record.started_at_unix_ms = started;
    record.duration_sec = finished.wall.as_secs_f64();
    let summary = |h: &resplab_stats::hist::LatencyHistogram| resplab_results::Summary {
        requests: h.count(),
        latency_us: resplab_results::LatencyUs::from_histogram(h),
        histogram: h.to_base64(),
        ..resplab_results::Summary::default()
    };
    for (name, h) in &readout.histograms {
        record.commands.insert(name.clone(), summary(h));
    }
    if let Some(h) = &readout.total {
        record.totals = summary(h);
    }
    record
}
