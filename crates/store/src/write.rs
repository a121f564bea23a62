//! Writing experiments and trials.
//!
//! An experiment is registered once with its definition; registering it again with the
//! same definition hash returns the same id (that is how `resume` finds its place), and
//! with a different one is a [`StoreError::Conflict`], so a changed file cannot silently
//! mix its trials with an older experiment of the same name. Each trial is one
//! transaction: the trial row, its metric rows, its histograms and, when new, its
//! environment row commit together or not at all.

use crate::{metrics, Store, StoreError};
use base64::Engine as _;
use resplab_results::{HostInfo, RunRecord};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `INFO` sections of the server, section name → field → value.
pub type ServerInfo = BTreeMap<String, BTreeMap<String, String>>;

/// An experiment to register.
#[derive(Clone, Debug)]
pub struct NewExperiment {
    pub name: String,
    pub seed: u64,
    pub rounds: u32,
    /// `"rmit"`, `"abba"` or `"fixed"`.
    pub order_kind: String,
    pub primary_metric: String,
    pub margin: Option<f64>,
    /// Identifies the definition; equal hashes mean "same experiment".
    pub definition_hash: String,
    /// The experiment file exactly as read.
    pub spec_text: String,
    /// The resolved definition.
    pub spec_json: serde_json::Value,
    /// Variant names with their resolved definitions, baseline first.
    pub variants: Vec<(String, serde_json::Value)>,
    /// Workload names with their resolved definitions.
    pub workloads: Vec<(String, serde_json::Value)>,
}

/// One validity check of a trial.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Check {
    /// Stable identifier: `"errors"`, `"client_cpu"`, `"send_lag"`, `"run_end"`.
    pub name: String,
    pub passed: bool,
    /// What was measured against which limit.
    pub detail: String,
}

/// A finished trial to store.
#[derive(Clone, Debug)]
pub struct NewTrial {
    pub experiment_id: i64,
    pub variant: String,
    pub workload: String,
    pub round: u32,
    /// 0 for the first run of a round, 1.. for reruns of a round with an invalid trial.
    pub attempt: u32,
    /// Place of the trial in its round's order.
    pub position: u32,
    pub started_at_unix_ms: u64,
    pub finished_at_unix_ms: u64,
    pub run: RunRecord,
    pub server_info: ServerInfo,
    pub server_cpu_sec: Option<f64>,
    pub checks: Vec<Check>,
    pub host: HostInfo,
    /// A command workload's trial: its metrics as its output carried them (stored
    /// instead of the figures derived from `run`) and the command's output.
    pub command: Option<CommandTrial>,
    /// The phase this trial ran in ([`Store::begin_phase`]); `None` for a run of every
    /// variant together.
    pub phase: Option<i64>,
    /// What the server said of the trial besides the load's own figures (its command
    /// statistics, counters of its process), stored with the trial's other metrics.
    pub evidence: Vec<MetricRow>,
}

/// What a command workload's trial produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommandTrial {
    /// The metrics read from the command's output, and its wall and CPU time.
    pub metrics: Vec<MetricRow>,
    /// The command line as run.
    pub command: String,
    /// The exit status; `None` when it was killed (timeout, signal) or never started.
    pub exit_code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// One metric of an open list: named, with its unit and direction as the importer that
/// read it says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricRow {
    /// Benchmark, test or command name; [`crate::ALL_COMMANDS`] for trial-level figures.
    pub command: String,
    pub name: String,
    pub unit: String,
    /// `"higher_is_better"`, `"lower_is_better"` or `"unknown"`.
    pub direction: String,
    pub value: f64,
}

impl NewTrial {
    /// True when every check passed.
    pub fn is_valid(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A 64-bit FNV-1a fingerprint in hex; stable across builds and platforms.
pub fn fingerprint(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

impl Store {
    /// Registers an experiment, or returns the id of the stored one with the same name
    /// and definition hash.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when the name is taken by a different definition;
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn register_experiment(&mut self, new: &NewExperiment) -> Result<i64, StoreError> {
        let existing: Option<(i64, String)> = self
            .conn
            .query_row(
                "SELECT id, definition_hash FROM experiments WHERE name = ?1",
                [&new.name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        if let Some((id, hash)) = existing {
            if hash == new.definition_hash {
                return Ok(id);
            }
            return Err(StoreError::Conflict {
                name: new.name.clone(),
                path: self.path_string(),
            });
        }
        let path = self.path.clone();
        let err = |e| crate::sqlite_err(&path, e);
        let tx = self.conn.transaction().map_err(err)?;
        tx.execute(
            "INSERT INTO experiments (name, created_at_unix_ms, seed, rounds, order_kind,
                 primary_metric, margin, definition_hash, spec_text, spec_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                new.name,
                now_unix_ms() as i64,
                new.seed as i64,
                new.rounds,
                new.order_kind,
                new.primary_metric,
                new.margin,
                new.definition_hash,
                new.spec_text,
                new.spec_json.to_string(),
            ],
        )
        .map_err(err)?;
        let id = tx.last_insert_rowid();
        for (table, rows) in [("variants", &new.variants), ("workloads", &new.workloads)] {
            for (i, (name, spec)) in rows.iter().enumerate() {
                tx.execute(
                    &format!(
                        "INSERT INTO {table} (experiment_id, ordinal, name, spec_json)
                 VALUES (?1, ?2, ?3, ?4)"
                    ),
                    params![id, i as i64, name, spec.to_string()],
                )
                .map_err(err)?;
            }
        }
        tx.commit().map_err(err)?;
        Ok(id)
    }

    /// Marks an experiment `"running"`, `"finished"` or `"failed"`.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn set_state(&self, experiment_id: i64, state: &str) -> Result<(), StoreError> {
        let finished = (state != "running").then(|| now_unix_ms() as i64);
        self.conn
            .execute(
                "UPDATE experiments SET state = ?1, finished_at_unix_ms = ?2 WHERE id = ?3",
                params![state, finished, experiment_id],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Registers a phase: a run of only some variants (`experiment run --variants`),
    /// with what its `before_phase` hook recorded of the machine. Returns its id.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn begin_phase(
        &mut self,
        experiment_id: i64,
        variants: &[String],
        record: &str,
    ) -> Result<i64, StoreError> {
        let path = self.path.clone();
        let err = |e| crate::sqlite_err(&path, e);
        let ordinal: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM phases WHERE experiment_id = ?1",
                [experiment_id],
                |r| r.get(0),
            )
            .map_err(err)?;
        self.conn
            .execute(
                "INSERT INTO phases (experiment_id, ordinal, variants_json, started_at_unix_ms, record)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    experiment_id,
                    ordinal,
                    serde_json::to_string(variants).unwrap_or_default(),
                    now_unix_ms() as i64,
                    record
                ],
            )
            .map_err(err)?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Stores one finished trial with its metrics, histograms and environment, in one
    /// transaction. Returns the trial id.
    ///
    /// # Errors
    /// [`StoreError::DuplicateTrial`] when that slot is already stored,
    /// [`StoreError::UnknownName`] for a variant or workload the experiment lacks,
    /// [`StoreError::Sqlite`] on a database failure (nothing is then written).
    pub fn insert_trial(&mut self, trial: &NewTrial) -> Result<i64, StoreError> {
        let ids = self.insert_trials(std::slice::from_ref(trial))?;
        Ok(ids[0])
    }

    /// Stores trials that belong together (a duet round's pair) in one transaction:
    /// all of them or, on any error, none. Returns their ids in order.
    ///
    /// # Errors
    /// As [`Store::insert_trial`] for any of them.
    pub fn insert_trials(&mut self, trials: &[NewTrial]) -> Result<Vec<i64>, StoreError> {
        let mut names = Vec::with_capacity(trials.len());
        for trial in trials {
            let variant_id =
                self.name_id("variants", "variant", trial.experiment_id, &trial.variant)?;
            let workload_id = self.name_id(
                "workloads",
                "workload",
                trial.experiment_id,
                &trial.workload,
            )?;
            names.push((variant_id, workload_id));
        }
        let path = self.path.clone();
        let err = |e| crate::sqlite_err(&path, e);
        let tx = self.conn.transaction().map_err(err)?;
        let mut ids = Vec::with_capacity(trials.len());
        for (trial, (variant_id, workload_id)) in trials.iter().zip(names) {
            ids.push(write_trial(&tx, &path, trial, variant_id, workload_id)?);
        }
        tx.commit().map_err(err)?;
        Ok(ids)
    }

    fn name_id(
        &self,
        table: &str,
        what: &'static str,
        experiment_id: i64,
        name: &str,
    ) -> Result<i64, StoreError> {
        self.conn
            .query_row(
                &format!("SELECT id FROM {table} WHERE experiment_id = ?1 AND name = ?2"),
                params![experiment_id, name],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?
            .ok_or_else(|| StoreError::UnknownName {
                what,
                name: name.to_string(),
            })
    }
}

/// Writes one trial, its metrics and histograms inside the caller's transaction.
fn write_trial(
    tx: &rusqlite::Transaction<'_>,
    path: &std::path::Path,
    trial: &NewTrial,
    variant_id: i64,
    workload_id: i64,
) -> Result<i64, StoreError> {
    let err = |e| crate::sqlite_err(path, e);
    let host_json = serde_json::to_string(&trial.host).unwrap_or_default();
    let run_json = serde_json::to_string(&trial.run).unwrap_or_default();
    let checks_json = serde_json::to_string(&trial.checks).unwrap_or_default();
    // No password reaches the file: CONFIG GET * and server commands lose their secrets.
    let mut server_info = trial.server_info.clone();
    resplab_results::secrets::redact_server_info(&mut server_info);
    let info_json = serde_json::to_string(&server_info).unwrap_or_default();
    let env_fp = fingerprint(host_json.as_bytes());
    let env_id = environment_id(tx, &env_fp, &host_json).map_err(err)?;
    let inserted = tx.execute(
        "INSERT INTO trials (experiment_id, variant_id, workload_id, round, attempt, position,
             started_at_unix_ms, finished_at_unix_ms, valid, checks_json, run_json,
             server_info_json, client_cpu_sec, server_cpu_sec, environment_id, phase_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        params![
            trial.experiment_id,
            variant_id,
            workload_id,
            trial.round,
            trial.attempt,
            trial.position,
            trial.started_at_unix_ms as i64,
            trial.finished_at_unix_ms as i64,
            trial.is_valid(),
            checks_json,
            run_json,
            info_json,
            trial.run.client_cpu.total_sec(),
            trial.server_cpu_sec,
            env_id,
            trial.phase,
        ],
    );
    match inserted {
        Ok(_) => {}
        Err(rusqlite::Error::SqliteFailure(f, _))
            if f.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            return Err(StoreError::DuplicateTrial {
                round: trial.round,
                attempt: trial.attempt,
                variant: trial.variant.clone(),
                workload: trial.workload.clone(),
            });
        }
        Err(e) => return Err(err(e)),
    }
    let trial_id = tx.last_insert_rowid();
    insert_metrics(tx, trial_id, trial).map_err(err)?;
    insert_histograms(tx, trial_id, &trial.run).map_err(err)?;
    Ok(trial_id)
}

/// The id of the environment with fingerprint `env_fp`, stored first if it is new.
fn environment_id(
    tx: &rusqlite::Transaction<'_>,
    env_fp: &str,
    host_json: &str,
) -> Result<i64, rusqlite::Error> {
    tx.execute(
        "INSERT OR IGNORE INTO environments (fingerprint, host_json, first_seen_unix_ms)
             VALUES (?1, ?2, ?3)",
        params![env_fp, host_json, now_unix_ms() as i64],
    )?;
    tx.query_row(
        "SELECT id FROM environments WHERE fingerprint = ?1",
        [env_fp],
        |r| r.get(0),
    )
}

/// A trial's metric rows: the run record's for an engine trial; for a command trial, its
/// finite metrics and its output; then the server's evidence for either.
fn insert_metrics(
    tx: &rusqlite::Transaction<'_>,
    trial_id: i64,
    trial: &NewTrial,
) -> Result<(), rusqlite::Error> {
    let mut stmt = tx.prepare(
        "INSERT INTO metrics (trial_id, command, name, value, unit, direction)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    match &trial.command {
        None => {
            for (command, name, value) in metrics::trial_rows(&trial.run, trial.server_cpu_sec) {
                let m = crate::source::metric_of(name);
                stmt.execute(params![
                    trial_id,
                    command,
                    name,
                    value,
                    m.unit,
                    m.direction.as_str()
                ])?;
            }
        }
        Some(c) => {
            insert_rows(&mut stmt, trial_id, &c.metrics)?;
            tx.execute(
                "INSERT INTO trial_outputs (trial_id, command, exit_code, stdout, stderr)
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                params![trial_id, c.command, c.exit_code, c.stdout, c.stderr],
            )?;
        }
    }
    // The server's evidence never replaces a figure of the load's own.
    let mut evidence = tx.prepare(
        "INSERT OR IGNORE INTO metrics (trial_id, command, name, value, unit, direction)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    insert_rows(&mut evidence, trial_id, &trial.evidence)?;
    Ok(())
}

/// Each finite row of `rows` through `stmt`, an INSERT into `metrics` of
/// (trial_id, command, name, value, unit, direction).
fn insert_rows(
    stmt: &mut rusqlite::Statement<'_>,
    trial_id: i64,
    rows: &[MetricRow],
) -> rusqlite::Result<()> {
    for m in rows.iter().filter(|m| m.value.is_finite()) {
        stmt.execute(params![
            trial_id,
            m.command,
            m.name,
            m.value,
            m.unit,
            m.direction
        ])?;
    }
    Ok(())
}

/// A trial's histograms, as raw V2 bytes.
fn insert_histograms(
    tx: &rusqlite::Transaction<'_>,
    trial_id: i64,
    run: &RunRecord,
) -> Result<(), rusqlite::Error> {
    let mut hist = tx.prepare(
        "INSERT INTO histograms (trial_id, command, kind, hdr_v2) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (command, kind, text) in histograms_of(run) {
        // The record carries base64 text; the store keeps the raw V2 bytes. Text
        // that is not base64 (a record from a foreign tool) is simply not stored
        // as a histogram: the run record itself keeps it verbatim.
        if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(text) {
            if !bytes.is_empty() {
                hist.execute(params![trial_id, command, kind, bytes])?;
            }
        }
    }
    Ok(())
}

fn histograms_of(run: &RunRecord) -> Vec<(String, &'static str, &str)> {
    let mut out = vec![(
        crate::ALL_COMMANDS.to_string(),
        "latency",
        run.totals.histogram.as_str(),
    )];
    for (command, s) in &run.commands {
        if command == crate::ALL_COMMANDS {
            continue;
        }
        out.push((command.clone(), "latency", s.histogram.as_str()));
    }
    if let Some(ol) = &run.open_loop {
        out.push((
            crate::ALL_COMMANDS.to_string(),
            "service_time",
            ol.service_time_histogram.as_str(),
        ));
        out.push((
            crate::ALL_COMMANDS.to_string(),
            "send_lag",
            ol.send_lag_histogram.as_str(),
        ));
    }
    out
}
