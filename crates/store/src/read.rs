//! Reading experiments back: listing, status, the observations `compare` pairs by round,
//! and exports.
//!
//! Which trials count: a round may have several attempts (a trial that failed a validity
//! check invalidates its whole round, which the runner reruns as the next attempt). The
//! attempt that counts is the latest one that is complete (every variant × workload cell
//! stored) and entirely valid. Rounds without such an attempt contribute nothing, but
//! their trials stay stored and show in `status` and in exports, marked.

use crate::write::Check;
use crate::{Store, StoreError};
use resplab_results::csv;
use rusqlite::{params, OptionalExtension};
use serde::Serialize;
use std::collections::BTreeMap;

/// The command name under which run totals and trial-level metrics are stored.
pub const ALL_COMMANDS: &str = "all";

/// A stored experiment's header.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ExperimentInfo {
    pub id: i64,
    pub name: String,
    pub created_at_unix_ms: i64,
    pub finished_at_unix_ms: Option<i64>,
    pub seed: u64,
    pub rounds: u32,
    pub order_kind: String,
    pub primary_metric: String,
    pub margin: Option<f64>,
    /// `"running"` (also: interrupted), `"phased"` (a phase ended with other variants'
    /// trials still to run), `"finished"` or `"failed"`.
    pub state: String,
    pub definition_hash: String,
    /// Variant names, baseline first.
    pub variants: Vec<String>,
    /// Workload names in file order.
    pub workloads: Vec<String>,
}

impl ExperimentInfo {
    /// Trials one attempt of a round holds.
    pub fn cells(&self) -> usize {
        self.variants.len() * self.workloads.len()
    }
}

/// One stored trial, without its run record.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TrialRow {
    pub id: i64,
    pub variant: String,
    pub workload: String,
    pub round: u32,
    pub attempt: u32,
    pub position: u32,
    pub started_at_unix_ms: i64,
    pub finished_at_unix_ms: i64,
    pub valid: bool,
    pub checks: Vec<Check>,
    pub client_cpu_sec: f64,
    pub server_cpu_sec: Option<f64>,
    /// The phase the trial ran in (`None`: a run of every variant together).
    pub phase: Option<i64>,
}

/// One phase of an experiment: a run of only some of its variants.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PhaseRow {
    pub id: i64,
    /// 0-based, in the order the phases were run.
    pub ordinal: u32,
    pub variants: Vec<String>,
    pub started_at_unix_ms: i64,
    /// What the `before_phase` hook printed (the kernel, the scheduler in use, …).
    pub record: String,
}

/// Variants whose trials were never run in one phase together: drift between the
/// phases (a reboot, another kernel) is confounded with their difference.
pub fn not_interleaved(trials: &[TrialRow], a: &str, b: &str) -> bool {
    let phases = |v: &str| -> std::collections::BTreeSet<Option<i64>> {
        trials
            .iter()
            .filter(|t| t.variant == v)
            .map(|t| t.phase)
            .collect()
    };
    let (pa, pb) = (phases(a), phases(b));
    !pa.is_empty() && !pb.is_empty() && pa.is_disjoint(&pb)
}

/// Where one round stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RoundState {
    /// Nothing stored yet.
    NotStarted,
    /// `attempt` is complete and valid: its trials count.
    Valid { attempt: u32 },
    /// The latest attempt has `missing` trials still to run.
    Incomplete { attempt: u32, missing: usize },
    /// The latest attempt is complete but a trial failed a check: the round needs a rerun.
    Invalid { attempt: u32 },
}

/// Counts for `resplab experiment status`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ExperimentStatus {
    pub info: ExperimentInfo,
    pub trials_stored: usize,
    pub trials_valid: usize,
    pub trials_invalid: usize,
    /// State of each planned round (0-based index = round number).
    pub rounds: Vec<RoundState>,
    /// The failed checks of invalid trials: (round, attempt, variant, workload, check).
    pub failures: Vec<(u32, u32, String, String, Check)>,
}

impl ExperimentStatus {
    /// Rounds whose trials count.
    pub fn valid_rounds(&self) -> usize {
        self.rounds
            .iter()
            .filter(|r| matches!(r, RoundState::Valid { .. }))
            .count()
    }
}

/// One metric value of one counted trial, tagged for pairing by round.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Observation {
    pub trial_id: i64,
    pub workload: String,
    pub variant: String,
    pub round: u32,
    pub attempt: u32,
    /// Test or command name, or [`ALL_COMMANDS`].
    pub command: String,
    pub metric: String,
    pub value: f64,
    /// The unit stored with the value (`None` for rows written before the metric list
    /// was open: [`crate::source::metric_of`] knows those by name).
    pub unit: Option<String>,
    /// `"higher_is_better"`, `"lower_is_better"` or `"unknown"`, stored with the value.
    pub direction: Option<String>,
}

/// Computes the state of each round `0..rounds` from the stored trials.
pub fn round_states(trials: &[TrialRow], rounds: u32, cells: usize) -> Vec<RoundState> {
    // (round, attempt) → (stored, all valid)
    let mut by_attempt: BTreeMap<(u32, u32), (usize, bool)> = BTreeMap::new();
    for t in trials {
        let e = by_attempt.entry((t.round, t.attempt)).or_insert((0, true));
        e.0 += 1;
        e.1 &= t.valid;
    }
    let max_round = trials.iter().map(|t| t.round + 1).max().unwrap_or(0);
    (0..rounds.max(max_round))
        .map(|round| {
            let attempts: Vec<(u32, usize, bool)> = by_attempt
                .range((round, 0)..=(round, u32::MAX))
                .map(|(&(_, a), &(n, ok))| (a, n, ok))
                .collect();
            if let Some(&(a, _, _)) = attempts.iter().rev().find(|(_, n, ok)| *n >= cells && *ok) {
                return RoundState::Valid { attempt: a };
            }
            match attempts.last() {
                None => RoundState::NotStarted,
                Some(&(a, n, _)) if n < cells => RoundState::Incomplete {
                    attempt: a,
                    missing: cells - n,
                },
                Some(&(a, _, _)) => RoundState::Invalid { attempt: a },
            }
        })
        .collect()
}

impl Store {
    /// Every stored experiment, oldest first.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn list_experiments(&self) -> Result<Vec<ExperimentInfo>, StoreError> {
        let names: Vec<String> = {
            let mut stmt = self
                .conn
                .prepare("SELECT name FROM experiments ORDER BY id")
                .map_err(|e| self.err(e))?;
            let rows = stmt.query_map([], |r| r.get(0)).map_err(|e| self.err(e))?;
            rows.collect::<Result<_, _>>().map_err(|e| self.err(e))?
        };
        let mut out = Vec::with_capacity(names.len());
        for n in names {
            if let Some(info) = self.find_experiment(&n)? {
                out.push(info);
            }
        }
        Ok(out)
    }

    /// The experiment of that name, if stored.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn find_experiment(&self, name: &str) -> Result<Option<ExperimentInfo>, StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT id, name, created_at_unix_ms, finished_at_unix_ms, seed, rounds,
                        order_kind, primary_metric, margin, state, definition_hash
                 FROM experiments WHERE name = ?1",
                [name],
                |r| {
                    Ok(ExperimentInfo {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        created_at_unix_ms: r.get(2)?,
                        finished_at_unix_ms: r.get(3)?,
                        seed: r.get::<_, i64>(4)? as u64,
                        rounds: r.get(5)?,
                        order_kind: r.get(6)?,
                        primary_metric: r.get(7)?,
                        margin: r.get(8)?,
                        state: r.get(9)?,
                        definition_hash: r.get(10)?,
                        variants: Vec::new(),
                        workloads: Vec::new(),
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some(mut info) = row else {
            return Ok(None);
        };
        info.variants = self.names("variants", info.id)?;
        info.workloads = self.names("workloads", info.id)?;
        Ok(Some(info))
    }

    /// The experiment of that name.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is none.
    pub fn experiment(&self, name: &str) -> Result<ExperimentInfo, StoreError> {
        self.find_experiment(name)?
            .ok_or_else(|| StoreError::NotFound {
                name: name.to_string(),
                path: self.path_string(),
            })
    }

    /// The stored definition (`spec_text`, `spec_json`) of an experiment.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] or [`StoreError::Json`].
    pub fn experiment_spec(
        &self,
        experiment_id: i64,
    ) -> Result<(String, serde_json::Value), StoreError> {
        let (text, json): (String, String) = self
            .conn
            .query_row(
                "SELECT spec_text, spec_json FROM experiments WHERE id = ?1",
                [experiment_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| self.err(e))?;
        let value = serde_json::from_str(&json)
            .map_err(|e| self.json_err("experiment definition".into(), e))?;
        Ok((text, value))
    }

    fn names(&self, table: &str, experiment_id: i64) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT name FROM {table} WHERE experiment_id = ?1 ORDER BY ordinal"
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([experiment_id], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Every stored trial of an experiment, in the order they ran.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] or [`StoreError::Json`].
    pub fn trials(&self, experiment_id: i64) -> Result<Vec<TrialRow>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT t.id, v.name, w.name, t.round, t.attempt, t.position,
                        t.started_at_unix_ms, t.finished_at_unix_ms, t.valid, t.checks_json,
                        t.client_cpu_sec, t.server_cpu_sec, t.phase_id
                 FROM trials t JOIN variants v ON v.id = t.variant_id
                               JOIN workloads w ON w.id = t.workload_id
                 WHERE t.experiment_id = ?1
                 ORDER BY t.id",
            )
            .map_err(|e| self.err(e))?;
        let raw = stmt
            .query_map([experiment_id], |r| {
                Ok((
                    TrialRow {
                        id: r.get(0)?,
                        variant: r.get(1)?,
                        workload: r.get(2)?,
                        round: r.get(3)?,
                        attempt: r.get(4)?,
                        position: r.get(5)?,
                        started_at_unix_ms: r.get(6)?,
                        finished_at_unix_ms: r.get(7)?,
                        valid: r.get(8)?,
                        checks: Vec::new(),
                        client_cpu_sec: r.get(10)?,
                        server_cpu_sec: r.get(11)?,
                        phase: r.get(12)?,
                    },
                    r.get::<_, String>(9)?,
                ))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in raw {
            let (mut t, checks) = row.map_err(|e| self.err(e))?;
            t.checks = serde_json::from_str(&checks)
                .map_err(|e| self.json_err(format!("checks of trial {}", t.id), e))?;
            out.push(t);
        }
        Ok(out)
    }

    /// Where an experiment stands.
    ///
    /// # Errors
    /// [`StoreError::NotFound`], [`StoreError::Sqlite`] or [`StoreError::Json`].
    pub fn status(&self, name: &str) -> Result<ExperimentStatus, StoreError> {
        let info = self.experiment(name)?;
        let trials = self.trials(info.id)?;
        let mut rounds = round_states(&trials, info.rounds, info.cells());
        // A run until decided plans rounds up to its cap; those it never began (it
        // stopped, or has not reached them) are not rounds of it.
        if !self.looks(info.id)?.is_empty() {
            while matches!(rounds.last(), Some(RoundState::NotStarted)) {
                rounds.pop();
            }
        }
        let failures = trials
            .iter()
            .filter(|t| !t.valid)
            .flat_map(|t| {
                t.checks.iter().filter(|c| !c.passed).map(move |c| {
                    (
                        t.round,
                        t.attempt,
                        t.variant.clone(),
                        t.workload.clone(),
                        c.clone(),
                    )
                })
            })
            .collect();
        Ok(ExperimentStatus {
            trials_stored: trials.len(),
            trials_valid: trials.iter().filter(|t| t.valid).count(),
            trials_invalid: trials.iter().filter(|t| !t.valid).count(),
            rounds,
            failures,
            info,
        })
    }

    /// The ids of the trials that count: those of each round's counted attempt.
    fn counted_trials(&self, info: &ExperimentInfo) -> Result<Vec<TrialRow>, StoreError> {
        let trials = self.trials(info.id)?;
        let states = round_states(&trials, info.rounds, info.cells());
        Ok(trials
            .into_iter()
            .filter(|t| {
                matches!(states.get(t.round as usize),
                    Some(RoundState::Valid { attempt }) if *attempt == t.attempt)
            })
            .collect())
    }

    /// Every metric value of the trials that count, for pairing by round: one
    /// observation per (workload, variant, round, command, metric).
    ///
    /// # Errors
    /// [`StoreError::NotFound`], [`StoreError::Sqlite`] or [`StoreError::Json`].
    pub fn observations(&self, name: &str) -> Result<Vec<Observation>, StoreError> {
        let info = self.experiment(name)?;
        let counted = self.counted_trials(&info)?;
        let mut stmt = self
            .conn
            .prepare(
                "SELECT command, name, value, unit, direction FROM metrics
                 WHERE trial_id = ?1 ORDER BY rowid",
            )
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for t in &counted {
            let rows = stmt
                .query_map(params![t.id], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get(2)?,
                        r.get::<_, Option<String>>(3)?,
                        r.get::<_, Option<String>>(4)?,
                    ))
                })
                .map_err(|e| self.err(e))?;
            for row in rows {
                let (command, metric, value, unit, direction) = row.map_err(|e| self.err(e))?;
                out.push(Observation {
                    trial_id: t.id,
                    workload: t.workload.clone(),
                    variant: t.variant.clone(),
                    round: t.round,
                    attempt: t.attempt,
                    command,
                    metric,
                    value,
                    unit,
                    direction,
                });
            }
        }
        Ok(out)
    }

    /// The variants of a phased experiment that ran in other phases than its baseline
    /// (first variant): their comparisons are paired by round number only.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] or [`StoreError::Sqlite`].
    pub fn not_interleaved_variants(&self, name: &str) -> Result<Vec<String>, StoreError> {
        let info = self.experiment(name)?;
        if self.phases(info.id)?.is_empty() {
            return Ok(Vec::new());
        }
        let trials = self.trials(info.id)?;
        let base = info.variants.first().cloned().unwrap_or_default();
        Ok(info
            .variants
            .iter()
            .skip(1)
            .filter(|v| not_interleaved(&trials, &base, v))
            .cloned()
            .collect())
    }

    /// What a reader of a phased experiment must know: each variant that never ran in
    /// a phase with the baseline (so drift between the phases is confounded with the
    /// change), and each phase's variants, run order and `before_phase` record. Empty
    /// for an experiment run with every variant together.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] or [`StoreError::Sqlite`].
    pub fn phase_notes(&self, name: &str) -> Result<Vec<String>, StoreError> {
        let info = self.experiment(name)?;
        let phases = self.phases(info.id)?;
        if phases.is_empty() {
            return Ok(Vec::new());
        }
        let trials = self.trials(info.id)?;
        let mut notes = Vec::new();
        let base = info.variants.first().cloned().unwrap_or_default();
        for v in self.not_interleaved_variants(name)? {
            notes.push(format!(
                "{v} vs {base}: NOT INTERLEAVED: they ran in different phases, so drift \
                 between the phases (a reboot, another kernel) is confounded with the \
                 change; trials are paired by round number only"
            ));
        }
        for p in &phases {
            let order: Vec<String> = trials
                .iter()
                .filter(|t| t.phase == Some(p.id))
                .map(|t| format!("r{}:{}/{}", t.round + 1, t.variant, t.workload))
                .collect();
            let record = p.record.lines().next().unwrap_or("").trim();
            notes.push(format!(
                "phase {} ({}): run order {}{}",
                p.ordinal + 1,
                p.variants.join(", "),
                if order.is_empty() {
                    "(no trials)".to_string()
                } else {
                    order.join(" ")
                },
                if record.is_empty() {
                    String::new()
                } else {
                    format!("; before_phase: {record}")
                }
            ));
        }
        Ok(notes)
    }

    /// The phases of an experiment, in the order they ran.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn phases(&self, experiment_id: i64) -> Result<Vec<PhaseRow>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, ordinal, variants_json, started_at_unix_ms, record FROM phases
                 WHERE experiment_id = ?1 ORDER BY ordinal",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([experiment_id], |r| {
                Ok(PhaseRow {
                    id: r.get(0)?,
                    ordinal: r.get(1)?,
                    variants: serde_json::from_str(&r.get::<_, String>(2)?).unwrap_or_default(),
                    started_at_unix_ms: r.get(3)?,
                    record: r.get(4)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// The command line, exit status and output stored with a command workload's trial
    /// (`None` for a trial of the bench vocabulary).
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn trial_output(
        &self,
        trial_id: i64,
    ) -> Result<Option<crate::write::CommandTrial>, StoreError> {
        self.conn
            .query_row(
                "SELECT command, exit_code, stdout, stderr FROM trial_outputs WHERE trial_id = ?1",
                [trial_id],
                |r| {
                    Ok(crate::write::CommandTrial {
                        metrics: Vec::new(),
                        command: r.get(0)?,
                        exit_code: r.get(1)?,
                        stdout: r.get(2)?,
                        stderr: r.get(3)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// The server facts stored with trial `trial_id` (`INFO` sections, `config` from
    /// `CONFIG GET *`, and resplab's own notes).
    ///
    /// # Errors
    /// SQLite errors, an unknown trial, or stored JSON that does not parse.
    pub fn server_info(&self, trial_id: i64) -> Result<crate::write::ServerInfo, StoreError> {
        // Files written before secrets were hidden on write lose them on read.
        let mut info: crate::write::ServerInfo =
            self.trial_json(trial_id, "server_info_json", "server INFO")?;
        resplab_results::secrets::redact_server_info(&mut info);
        Ok(info)
    }

    /// The whole experiment as one JSON document: header, every trial (counted or not)
    /// with its checks, metrics, server INFO and run record.
    ///
    /// # Errors
    /// [`StoreError::NotFound`], [`StoreError::Sqlite`] or [`StoreError::Json`].
    pub fn export_json(&self, name: &str) -> Result<serde_json::Value, StoreError> {
        let status = self.status(name)?;
        let counted: std::collections::HashSet<i64> = self
            .counted_trials(&status.info)?
            .iter()
            .map(|t| t.id)
            .collect();
        let mut trials = Vec::new();
        for t in self.trials(status.info.id)? {
            let run: serde_json::Value = self.trial_json(t.id, "run_json", "run record")?;
            let info: serde_json::Value =
                self.trial_json(t.id, "server_info_json", "server INFO")?;
            // Files written before secrets were hidden on write lose them here too.
            let info = match serde_json::from_value::<crate::write::ServerInfo>(info.clone()) {
                Ok(mut typed) => {
                    resplab_results::secrets::redact_server_info(&mut typed);
                    serde_json::to_value(typed).unwrap_or(info)
                }
                Err(_) => info,
            };
            let mut metrics = serde_json::Map::new();
            for (command, metric, value) in self.metric_rows(t.id)? {
                let entry = metrics
                    .entry(command)
                    .or_insert_with(|| serde_json::Value::Object(Default::default()));
                if let serde_json::Value::Object(m) = entry {
                    m.insert(metric, serde_json::json!(value));
                }
            }
            let mut v = serde_json::to_value(&t)
                .map_err(|e| self.json_err(format!("trial {}", t.id), e))?;
            if let serde_json::Value::Object(m) = &mut v {
                m.insert("counted".into(), counted.contains(&t.id).into());
                m.insert("metrics".into(), serde_json::Value::Object(metrics));
                m.insert("server_info".into(), info);
                m.insert("run".into(), run);
                if let Some(c) = self.trial_output(t.id)? {
                    m.insert(
                        "command_output".into(),
                        serde_json::json!({
                            "command": c.command,
                            "exit_code": c.exit_code,
                            "stdout": String::from_utf8_lossy(&c.stdout),
                            "stderr": String::from_utf8_lossy(&c.stderr),
                        }),
                    );
                }
            }
            trials.push(v);
        }
        Ok(serde_json::json!({
            "experiment": status.info,
            "rounds": status.rounds,
            "trials": trials,
        }))
    }

    /// The whole experiment as CSV: one line per trial, command and metric, with a
    /// header line. Text fields are quoted when they need it.
    ///
    /// # Errors
    /// [`StoreError::NotFound`], [`StoreError::Sqlite`] or [`StoreError::Json`].
    pub fn export_csv(&self, name: &str) -> Result<String, StoreError> {
        let info = self.experiment(name)?;
        let counted: std::collections::HashSet<i64> =
            self.counted_trials(&info)?.iter().map(|t| t.id).collect();
        let mut out = String::from(
            "experiment,workload,variant,round,attempt,position,valid,counted,command,metric,value\n",
        );
        for t in self.trials(info.id)? {
            for (command, metric, value) in self.metric_rows(t.id)? {
                out.push_str(&format!(
                    "{},{},{},{},{},{},{},{},{},{},{}\n",
                    csv::field(&info.name),
                    csv::field(&t.workload),
                    csv::field(&t.variant),
                    t.round,
                    t.attempt,
                    t.position,
                    t.valid,
                    counted.contains(&t.id),
                    csv::field(&command),
                    csv::field(&metric),
                    value
                ));
            }
        }
        Ok(out)
    }

    fn metric_rows(&self, trial_id: i64) -> Result<Vec<(String, String, f64)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT command, name, value FROM metrics WHERE trial_id = ?1 ORDER BY rowid")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([trial_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// The raw HdrHistogram V2 bytes of one trial's histogram
    /// (`kind` = `"latency"`, `"service_time"` or `"send_lag"`).
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn histogram(
        &self,
        trial_id: i64,
        command: &str,
        kind: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        self.conn
            .query_row(
                "SELECT hdr_v2 FROM histograms WHERE trial_id = ?1 AND command = ?2 AND kind = ?3",
                params![trial_id, command, kind],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))
    }
}
