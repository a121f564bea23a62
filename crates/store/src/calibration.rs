//! Calibrations: what `resplab calibrate` measured on a machine, kept so that later
//! experiments can say, before they start, what their plan can detect there.
//!
//! A calibration is stored whole as JSON (its shape belongs to the code that measures
//! it) with the keys it is looked up by: the host it ran on, a fingerprint of the
//! workload's shape, and the metric.

use crate::write::now_unix_ms;
use crate::{Store, StoreError};
use rusqlite::{params, OptionalExtension as _};

/// A calibration to store.
#[derive(Clone, Debug, PartialEq)]
pub struct NewCalibration {
    pub hostname: String,
    /// What was measured: the server command or address.
    pub target: String,
    /// Fingerprint of the workload's shape (everything but its name and trial length).
    pub workload_key: String,
    pub workload_name: String,
    pub metric: String,
    pub result: serde_json::Value,
}

/// A stored calibration.
#[derive(Clone, Debug, PartialEq)]
pub struct CalibrationRow {
    pub id: i64,
    pub created_at_unix_ms: i64,
    pub hostname: String,
    pub target: String,
    pub workload_key: String,
    pub workload_name: String,
    pub metric: String,
    pub result: serde_json::Value,
}

impl Store {
    /// Stores a calibration and returns its id.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn insert_calibration(&self, c: &NewCalibration) -> Result<i64, StoreError> {
        self.conn
            .execute(
                "INSERT INTO calibrations (created_at_unix_ms, hostname, target, workload_key,
                     workload_name, metric, result_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    now_unix_ms() as i64,
                    c.hostname,
                    c.target,
                    c.workload_key,
                    c.workload_name,
                    c.metric,
                    c.result.to_string()
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The newest calibration of `hostname` for a workload shape and metric.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] or [`StoreError::Json`] for a stored result that does not
    /// parse.
    pub fn latest_calibration(
        &self,
        hostname: &str,
        workload_key: &str,
        metric: &str,
    ) -> Result<Option<CalibrationRow>, StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT id FROM calibrations
                 WHERE hostname = ?1 AND workload_key = ?2 AND metric = ?3
                 ORDER BY created_at_unix_ms DESC, id DESC LIMIT 1",
                params![hostname, workload_key, metric],
                |r| r.get::<_, i64>(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        match row {
            Some(id) => self.calibration(id).map(Some),
            None => Ok(None),
        }
    }

    /// Every stored calibration, newest first.
    ///
    /// # Errors
    /// As [`Store::latest_calibration`].
    pub fn calibrations(&self) -> Result<Vec<CalibrationRow>, StoreError> {
        let ids: Vec<i64> = {
            let mut stmt = self
                .conn
                .prepare("SELECT id FROM calibrations ORDER BY created_at_unix_ms DESC, id DESC")
                .map_err(|e| self.err(e))?;
            let rows = stmt
                .query_map([], |r| r.get::<_, i64>(0))
                .map_err(|e| self.err(e))?;
            rows.collect::<Result<_, _>>().map_err(|e| self.err(e))?
        };
        ids.into_iter().map(|id| self.calibration(id)).collect()
    }

    /// The calibration with id `id`.
    ///
    /// # Errors
    /// [`StoreError::UnknownName`] for an unknown id, otherwise as
    /// [`Store::latest_calibration`].
    pub fn calibration(&self, id: i64) -> Result<CalibrationRow, StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT id, created_at_unix_ms, hostname, target, workload_key, workload_name,
                     metric, result_json
                 FROM calibrations WHERE id = ?1",
                params![id],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, String>(5)?,
                        r.get::<_, String>(6)?,
                        r.get::<_, String>(7)?,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some((id, created, hostname, target, key, wname, metric, json)) = row else {
            return Err(StoreError::UnknownName {
                what: "calibration",
                name: id.to_string(),
            });
        };
        let result = serde_json::from_str(&json).map_err(|e| StoreError::Json {
            path: self.path_string(),
            what: format!("calibration {id}"),
            source: e,
        })?;
        Ok(CalibrationRow {
            id,
            created_at_unix_ms: created,
            hostname,
            target,
            workload_key: key,
            workload_name: wname,
            metric,
            result,
        })
    }
}
