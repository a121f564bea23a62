//! Sampled profiles (`profiles`): the folded stacks of the server during one trial,
//! deflated, with the samples and the requests they cover (so a report can normalise
//! per request) and how they were sampled.
//!
//! A profile comes from an extra, uncounted trial (no trial row: its numbers are never
//! observed) or from a counted trial (`trial_id` set). Each profile is one row written in
//! one statement, so an interrupted run leaves a profile whole or absent; a profile
//! whose extra trial was interrupted is simply missing (resume does not redo it).

use crate::write::now_unix_ms;
use crate::{Store, StoreError};
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use rusqlite::params;
use std::io::{Read as _, Write as _};

/// One trial's profile.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileRow {
    pub experiment_id: i64,
    /// The counted trial sampled; `None` for an extra, uncounted trial.
    pub trial_id: Option<i64>,
    pub variant: String,
    pub workload: String,
    pub round: u32,
    pub attempt: u32,
    /// Folded stacks, `frame;…;leaf SAMPLES` per line.
    pub folded: String,
    pub samples: u64,
    /// The requests of the sampled trial.
    pub requests: u64,
    /// How the stacks were sampled (`perf record -F 499 -e cpu-clock -g`).
    pub sampling: String,
}

impl ProfileRow {
    /// True when the profile comes from a counted trial.
    pub fn is_counted(&self) -> bool {
        self.trial_id.is_some()
    }
}

impl Store {
    /// Stores one profile (replacing one of the same trial slot and kind).
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn insert_profile(&mut self, p: &ProfileRow) -> Result<(), StoreError> {
        let mut enc = DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        let blob = enc
            .write_all(p.folded.as_bytes())
            .and_then(|()| enc.finish())
            .map_err(|e| self.err(rusqlite::Error::ToSqlConversionFailure(Box::new(e))))?;
        self.conn
            .execute(
                "INSERT OR REPLACE INTO profiles (experiment_id, trial_id, variant, workload,
                     round, attempt, counted, samples, requests, sampling, folded_deflate,
                     recorded_at_unix_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    p.experiment_id,
                    p.trial_id,
                    p.variant,
                    p.workload,
                    p.round,
                    p.attempt,
                    p.is_counted(),
                    p.samples as i64,
                    p.requests as i64,
                    p.sampling,
                    blob,
                    now_unix_ms()
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Every profile of an experiment, by workload, variant, round and attempt; stores
    /// written before profiles existed have none.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure or a blob that does not inflate.
    pub fn profiles(&self, experiment_id: i64) -> Result<Vec<ProfileRow>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT trial_id, variant, workload, round, attempt, samples, requests,
                     sampling, folded_deflate
                 FROM profiles WHERE experiment_id = ?1
                 ORDER BY workload, variant, round, attempt, counted",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![experiment_id], |r| {
                let blob: Vec<u8> = r.get(8)?;
                let mut folded = String::new();
                DeflateDecoder::new(blob.as_slice())
                    .read_to_string(&mut folded)
                    .map_err(|e| {
                        rusqlite::Error::FromSqlConversionFailure(
                            8,
                            rusqlite::types::Type::Blob,
                            Box::new(e),
                        )
                    })?;
                Ok(ProfileRow {
                    experiment_id,
                    trial_id: r.get(0)?,
                    variant: r.get(1)?,
                    workload: r.get(2)?,
                    round: r.get(3)?,
                    attempt: r.get(4)?,
                    samples: r.get::<_, i64>(5)?.max(0) as u64,
                    requests: r.get::<_, i64>(6)?.max(0) as u64,
                    sampling: r.get(7)?,
                    folded,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_round_trips_deflated_and_replaces_its_slot() {
        let mut s = Store::open_in_memory().unwrap();
        let id = s
            .register_experiment(&crate::NewExperiment {
                name: "p".into(),
                seed: 1,
                rounds: 1,
                order_kind: "rmit".into(),
                primary_metric: "ops_per_sec".into(),
                margin: None,
                definition_hash: "h".into(),
                spec_text: String::new(),
                spec_json: serde_json::json!({}),
                variants: vec![("a".into(), serde_json::json!({}))],
                workloads: vec![("w".into(), serde_json::json!({}))],
            })
            .unwrap();
        let folded = "main;serve;dict_add 30\nmain;serve;write 20\n".repeat(50);
        let mut row = ProfileRow {
            experiment_id: id,
            trial_id: None,
            variant: "a".into(),
            workload: "w".into(),
            round: 0,
            attempt: 0,
            folded: folded.clone(),
            samples: 2500,
            requests: 1000,
            sampling: "perf record -F 499 -e cpu-clock -g".into(),
        };
        s.insert_profile(&row).unwrap();
        row.samples = 2600;
        s.insert_profile(&row).unwrap();
        let back = s.profiles(id).unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0], row);
        assert!(!back[0].is_counted());
        let stored: Vec<u8> = s
            .conn
            .query_row("SELECT folded_deflate FROM profiles", [], |r| r.get(0))
            .unwrap();
        assert!(stored.len() * 10 < folded.len(), "{} bytes", stored.len());
    }
}
