//! The runner's side of a duet ([`crate::duet`]): one execution runs both variants at
//! once. Each variant's server starts pinned to its round's CPU set; each gets its own
//! control connection, hooks, preload and evidence readings; then two load generators,
//! each on a thread pinned to its server's set (the engine's workers inherit the pin),
//! with the same workload and seed and one shared start instant (the engine's
//! `start_at`, as scale-out generators use), measure over the same wall-clock intervals.
//! Both trials are stored in one transaction, so a round is never half a duet.
//!
//! What each trial holds beyond an RMIT trial: its interval series with wall-clock times
//! and histograms (the pairs), and in its server facts (`resplab` section) `duet_cpus`,
//! `duet_partner` and `duet_start_at_unix_ms`. Two checks replace or join the usual
//! ones: `client_cpu` judges both generators together (they share this process, whose
//! CPU time is what the engine reads), and `duet_start` fails a pair whose loads began
//! more than [`START_SKEW_MS`] apart.

use super::*;
use crate::duet::{CpuSets, START_LEAD};
use crate::evidence::{Node, NodeReading};
use crate::words::cpu_list_text;
use resplab_sys::perf::Counting;
use std::time::SystemTime;

/// The most two arms' loads may begin apart and still count as started together.
pub(super) const START_SKEW_MS: f64 = 50.0;

/// One arm of a duet while it runs.
struct Arm {
    slot: TrialSlot,
    cpus: Vec<usize>,
    process: ServerProcess,
    ctl: Client,
    env: Vec<(String, String)>,
    restore: Vec<(String, String)>,
    nodes: Vec<Node>,
    before: Vec<NodeReading>,
    counting: Option<Result<Counting, String>>,
    cfg: RunConfig,
}

/// The CPU sets of a duet on this machine, checked before anything runs.
///
/// # Errors
/// [`RunError::Workload`] with a one-line message: too few CPUs, overlapping or
/// disallowed sets, or a phase (a duet runs its two variants together, never apart).
pub(super) fn duet_sets(exp: &Experiment, only: &[String]) -> Result<Option<CpuSets>, RunError> {
    if exp.order != crate::Order::Duet {
        return Ok(None);
    }
    if !only.is_empty() {
        return Err(RunError::Workload(
            "order = \"duet\" runs both variants at once; it cannot run in phases (--variants)"
                .into(),
        ));
    }
    crate::duet::cpu_sets(exp, &crate::duet::allowed_cpus())
        .map(Some)
        .map_err(RunError::Workload)
}

impl Runner<'_> {
    /// Runs one duet execution: both trials at once, stored together.
    pub(super) fn run_duet(
        &mut self,
        exec: &Execution,
        stored: usize,
        outcome: &mut Outcome,
    ) -> Result<(), RunError> {
        let exp = self.exp;
        let sets = self.duet_sets.clone().ok_or_else(|| {
            RunError::Workload("order = \"duet\" without CPU sets for this run".into())
        })?;
        let [a, b] = exec.trials[..] else {
            return Err(RunError::Workload(format!(
                "order = \"duet\": round {} has {} trials to run, expected the pair",
                exec.round,
                exec.trials.len()
            )));
        };
        let (set_a, set_b) = sets.for_round(exec.round);
        for (i, slot) in [a, b].iter().enumerate() {
            (self.on_event)(Event::Trial {
                slot: *slot,
                variant: &exp.variants[slot.variant].name,
                workload: &exp.workloads[slot.workload].name,
                stored: stored + i,
            });
        }
        let start_at = SystemTime::now() + START_LEAD;
        let mut arms = vec![self.arm(a, set_a, start_at)?, self.arm(b, set_b, start_at)?];
        let started = resplab_store::write::now_unix_ms();
        let runs = self.load_both(&arms)?;
        if runs.iter().any(|r| r.end == RunEnd::Interrupted) || self.stop.is_stopped() {
            outcome.interrupted = true;
            return Ok(());
        }
        let start_ms = unix_ms(start_at);
        let skew = start_skew_ms(&runs[0], &runs[1]);
        let total_cpus: usize = arms
            .iter()
            .map(|arm| {
                arm.cpus
                    .len()
                    .min(exp.workloads[a.workload].threads as usize)
            })
            .sum();
        let mut trials = Vec::with_capacity(2);
        let partners = [b.variant, a.variant];
        for ((arm, run), partner) in arms.iter_mut().zip(runs).zip(partners) {
            let mut trial = self.finish_arm(arm, run, started)?;
            let facts = trial.server_info.entry("resplab".into()).or_default();
            facts.insert("duet_cpus".into(), cpu_list_text(&arm.cpus));
            facts.insert("duet_partner".into(), exp.variants[partner].name.clone());
            facts.insert("duet_start_at_unix_ms".into(), start_ms.to_string());
            duet_checks(&mut trial, skew, total_cpus, exp.client_cpu_limit);
            trials.push(trial);
        }
        let ids = self.store.insert_trials(&trials)?;
        for ((arm, trial), id) in arms.iter().zip(&trials).zip(ids) {
            self.announce_stored(&arm.slot, trial, id, outcome);
        }
        drop(arms);
        let standing = self.standing()?;
        (self.on_event)(Event::Standing(&standing));
        Ok(())
    }

    /// Starts one arm: its server pinned to `cpus`, its configuration, hooks and
    /// preload, the first evidence reading, and its engine configuration.
    fn arm(
        &mut self,
        slot: TrialSlot,
        cpus: &[usize],
        start_at: SystemTime,
    ) -> Result<Arm, RunError> {
        let exp = self.exp;
        let variant = &exp.variants[slot.variant];
        let workload = &exp.workloads[slot.workload];
        let ServerSource::Spawn { command } = &variant.server else {
            return Err(RunError::Workload(format!(
                "order = \"duet\": variant `{}` does not start its own server",
                variant.name
            )));
        };
        let text = cpu_list_text(cpus);
        let process = ServerProcess::start(
            &variant.name,
            command,
            &variant.env,
            Some(&text),
            exp.ready_timeout,
        )?;
        let port = process.port;
        let mut ctl = self.control(variant, "127.0.0.1", port)?;
        config_set(&mut ctl, variant, &variant.config)?;
        let env = self.hook_env(variant, "127.0.0.1", port);
        let restore = before_measuring(variant, workload, Some(&mut ctl), &env)?;
        let nodes = self.evidence_nodes(port, Some(&process));
        let before = self.read_evidence(variant, &nodes, &mut ctl);
        let seed =
            resplab_workload::seed::trial_seed(exp.seed, slot.round, slot.attempt, slot.workload);
        let mut cfg = trial_config(exp, workload, variant, variant, "127.0.0.1", port, seed)?;
        cfg.start_at = Some(start_at);
        cfg.series_histograms = true;
        let counting = self.start_counting(&nodes);
        Ok(Arm {
            slot,
            cpus: cpus.to_vec(),
            process,
            ctl,
            env,
            restore,
            nodes,
            before,
            counting,
            cfg,
        })
    }

    /// Both arms' loads at once, each from a thread pinned to its arm's CPUs.
    fn load_both(&self, arms: &[Arm]) -> Result<Vec<RunRecord>, RunError> {
        let exp = self.exp;
        let stop = self.stop;
        let results: Vec<Result<RunRecord, RunError>> = std::thread::scope(|s| {
            let handles: Vec<_> = arms
                .iter()
                .map(|arm| {
                    let variant = &exp.variants[arm.slot.variant];
                    let workload = &exp.workloads[arm.slot.workload];
                    s.spawn(move || {
                        resplab_sys::proc::pin_thread(&arm.cpus).map_err(|reason| {
                            LaunchError::Control {
                                variant: variant.name.clone(),
                                what: "pinning the load generator".into(),
                                reason,
                            }
                        })?;
                        let spec = crate::workload::to_spec(workload, arm.cfg.seed)
                            .map_err(RunError::Workload)?;
                        let compiled = resplab_workload::Workload::new(&spec).map_err(|e| {
                            RunError::Workload(format!("workload `{}`: {e}", workload.name))
                        })?;
                        let mut run = resplab_engine::run(&arm.cfg, &compiled, stop, &mut |_| {})
                            .map_err(|source| RunError::Engine {
                            variant: variant.name.clone(),
                            workload: workload.name.clone(),
                            source,
                        })?;
                        let ran = ("engine", std::mem::take(&mut run.config));
                        let spec = serde_json::json!(spec);
                        run.config = stored_config(exp, variant, workload, &arm.slot, ran, spec);
                        run.config["order"] = "duet".into();
                        Ok(run)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(RunError::Workload("a duet load generator panicked".into()))
                    })
                })
                .collect()
        });
        results.into_iter().collect()
    }

    /// Ends one arm after the load: the evidence again, the server's facts, the
    /// `after_trial` hook, and the trial with its usual checks.
    fn finish_arm(
        &mut self,
        arm: &mut Arm,
        mut run: RunRecord,
        started: u64,
    ) -> Result<NewTrial, RunError> {
        let exp = self.exp;
        let variant = &exp.variants[arm.slot.variant];
        let workload = &exp.workloads[arm.slot.workload];
        let hardware = self.finish_counting(arm.counting.take());
        let after = self.read_evidence(variant, &arm.nodes, &mut arm.ctl);
        let mut info = server_facts(&mut arm.ctl, Some(&arm.process));
        let (evidence, server_cpu_sec) = self.finish_evidence(
            &arm.nodes,
            (&arm.before, &after),
            &hardware,
            run.totals.requests,
            &mut info,
        );
        after_trial(
            variant,
            Some(&mut arm.ctl),
            &arm.env,
            std::mem::take(&mut arm.restore),
        )?;
        run.host = self.host.clone();
        let text = cpu_list_text(&arm.cpus);
        let checks = self.checks(&run, workload.threads, Some(&text));
        Ok(NewTrial {
            run,
            server_info: info,
            server_cpu_sec,
            checks,
            evidence,
            ..self.trial_frame(&arm.slot, variant, workload, started)
        })
    }
}

/// The duet's checks on one arm's trial: its loads' start skew, and the client CPU of
/// both generators together (this process's CPU time over both arms' usable CPUs), in
/// place of the single-generator one.
fn duet_checks(trial: &mut NewTrial, skew_ms: Option<f64>, cpus: usize, limit: f64) {
    let run = &trial.run;
    let judged = run.duration_sec >= 0.5;
    let busy = run.client_cpu.total_sec() / (run.duration_sec.max(1e-9) * cpus.max(1) as f64);
    let cpu = Check {
        name: "client_cpu".into(),
        passed: !judged || busy < limit,
        detail: if judged {
            format!(
                "the duet's two load generators together used {:.0} % of their {cpus} CPU(s) (limit {:.0} %)",
                busy * 100.0,
                limit * 100.0
            )
        } else {
            format!(
                "not judged: the measured part ({:.3} s) is shorter than 0.5 s, too short for CPU accounting in clock ticks",
                run.duration_sec
            )
        },
    };
    trial.checks.retain(|c| c.name != "client_cpu");
    trial.checks.push(cpu);
    trial.checks.push(Check {
        name: "duet_start".into(),
        passed: skew_ms.is_some_and(|s| s <= START_SKEW_MS),
        detail: match skew_ms {
            Some(s) => {
                format!("the two arms' loads began {s:.1} ms apart (limit {START_SKEW_MS:.0} ms)")
            }
            None => "the start of an arm's load was not recorded".into(),
        },
    });
}

/// How far apart the two arms' loads began, from each run's record of its start.
fn start_skew_ms(a: &RunRecord, b: &RunRecord) -> Option<f64> {
    let at = |r: &RunRecord| {
        r.shard
            .as_ref()
            .map(|s| s.load_started_unix_ms)
            .filter(|&ms| ms > 0.0)
    };
    Some((at(a)? - at(b)?).abs())
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
