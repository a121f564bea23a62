//! Histories: named series of tracked measurements (`resplab track`, `resplab history`).
//!
//! Each tracked measurement is one row of `history_points`: the series it belongs to,
//! when it was measured, the commit it measured, fingerprints of the host and of the
//! configuration (a point is only ever compared with points of the same two), free
//! `k=v` tags, where it came from, and its values — one per workload and metric — as
//! JSON. Rows are only ever appended.

use crate::write::now_unix_ms;
use crate::{Store, StoreError};
use rusqlite::params;
use serde::{Deserialize, Serialize};

/// One value of a tracked measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryValue {
    pub workload: String,
    pub metric: String,
    pub unit: String,
    /// `higher_is_better`, `lower_is_better` or `unknown`.
    pub direction: String,
    pub value: f64,
}

/// A measurement to append to a series.
#[derive(Clone, Debug, PartialEq)]
pub struct NewHistoryPoint {
    pub series: String,
    pub measured_at_unix_ms: i64,
    pub commit: Option<String>,
    pub host_fingerprint: String,
    /// The host facts the fingerprint was taken of, as JSON.
    pub host: serde_json::Value,
    pub config_fingerprint: String,
    pub tags: Vec<(String, String)>,
    /// What the values were read from (a file name or `db:NAME`).
    pub source: String,
    pub values: Vec<HistoryValue>,
}

/// A stored measurement of a series.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryPoint {
    pub id: i64,
    pub recorded_at_unix_ms: i64,
    pub point: NewHistoryPoint,
}

impl Store {
    /// Appends one measurement to its series and returns its id.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn append_history(&self, p: &NewHistoryPoint) -> Result<i64, StoreError> {
        let values = serde_json::to_string(&p.values)
            .map_err(|e| self.json_err("history values".into(), e))?;
        let tags =
            serde_json::to_string(&p.tags).map_err(|e| self.json_err("history tags".into(), e))?;
        self.conn
            .execute(
                "INSERT INTO history_points (series, measured_at_unix_ms, recorded_at_unix_ms,
                     commit_rev, host_fingerprint, host_json, config_fingerprint, tags_json,
                     source, values_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    p.series,
                    p.measured_at_unix_ms,
                    now_unix_ms() as i64,
                    p.commit,
                    p.host_fingerprint,
                    p.host.to_string(),
                    p.config_fingerprint,
                    tags,
                    p.source,
                    values
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Every point of `series`, oldest measurement first (ties in the order tracked).
    /// An unknown series gives an empty list.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure; [`StoreError::Json`] when a stored
    /// column does not parse.
    pub fn history(&self, series: &str) -> Result<Vec<HistoryPoint>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, measured_at_unix_ms, recorded_at_unix_ms, commit_rev,
                        host_fingerprint, host_json, config_fingerprint, tags_json, source,
                        values_json
                 FROM history_points WHERE series = ?1 ORDER BY measured_at_unix_ms, id",
            )
            .map_err(|e| self.err(e))?;
        type Row = (
            i64,
            i64,
            i64,
            Option<String>,
            String,
            String,
            String,
            String,
            String,
            String,
        );
        let rows: Vec<Row> = stmt
            .query_map([series], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                    r.get(9)?,
                ))
            })
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))?;
        rows.into_iter()
            .map(
                |(id, measured, recorded, commit, hostfp, host, configfp, tags, source, values)| {
                    let what = |w: &str| format!("{w} of history point {id}");
                    Ok(HistoryPoint {
                        id,
                        recorded_at_unix_ms: recorded,
                        point: NewHistoryPoint {
                            series: series.to_string(),
                            measured_at_unix_ms: measured,
                            commit,
                            host_fingerprint: hostfp,
                            host: serde_json::from_str(&host)
                                .map_err(|e| self.json_err(what("host"), e))?,
                            config_fingerprint: configfp,
                            tags: serde_json::from_str(&tags)
                                .map_err(|e| self.json_err(what("tags"), e))?,
                            source,
                            values: serde_json::from_str(&values)
                                .map_err(|e| self.json_err(what("values"), e))?,
                        },
                    })
                },
            )
            .collect()
    }

    /// Names of every tracked series, sorted.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn history_series(&self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT DISTINCT series FROM history_points ORDER BY series")
            .map_err(|e| self.err(e))?;
        stmt.query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(series: &str, at: i64, value: f64) -> NewHistoryPoint {
        NewHistoryPoint {
            series: series.into(),
            measured_at_unix_ms: at,
            commit: Some(format!("c{at}")),
            host_fingerprint: "h1".into(),
            host: serde_json::json!({"hostname": "vm"}),
            config_fingerprint: "c1".into(),
            tags: vec![("branch".into(), "main".into())],
            source: "run.json".into(),
            values: vec![HistoryValue {
                workload: "SET".into(),
                metric: "ops_per_sec".into(),
                unit: "ops/s".into(),
                direction: "higher_is_better".into(),
                value,
            }],
        }
    }

    #[test]
    fn points_come_back_in_measurement_order() {
        let store = Store::open_in_memory().unwrap();
        store.append_history(&point("nightly", 30, 3.0)).unwrap();
        store.append_history(&point("nightly", 10, 1.0)).unwrap();
        store.append_history(&point("other", 20, 2.0)).unwrap();
        let h = store.history("nightly").unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].point, point("nightly", 10, 1.0));
        assert_eq!(h[1].point.values[0].value, 3.0);
        assert!(store.history("none").unwrap().is_empty());
        assert_eq!(store.history_series().unwrap(), vec!["nightly", "other"]);
    }
}
