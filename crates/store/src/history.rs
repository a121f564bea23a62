//! Histories: named series of tracked measurements (`resplab track`, `resplab history`).
//!
//! Each tracked measurement is one row of `history_points`: the series it belongs to,
//! when it was measured, the commit it measured, fingerprints of the host and of the
//! configuration (a point is only ever compared with points of the same two), free
//! `k=v` tags, where it came from, and its values — one per workload and metric — as
//! JSON. Rows are only ever appended.
//!
//! The A/B verdict of a change point (`resplab history --confirm`) is one row of
//! `history_confirmations`, one per series, workload, metric and pair of commits, so a
//! second `--confirm` finds it and does not measure it again.

use crate::write::now_unix_ms;
use crate::{Store, StoreError};
use resplab_results::history::{Confirmation, TrackedPoint};
use rusqlite::params;

impl Store {
    /// Appends one measurement to its series and returns its id.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn append_history(&self, series: &str, p: &TrackedPoint) -> Result<i64, StoreError> {
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
                    series,
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

    /// Every point of `series`, oldest measurement first (ties in the order tracked),
    /// each with its id.
    /// An unknown series gives an empty list.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure; [`StoreError::Json`] when a stored
    /// column does not parse.
    pub fn history(&self, series: &str) -> Result<Vec<TrackedPoint>, StoreError> {
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
                |(
                    id,
                    measured,
                    _recorded,
                    commit,
                    hostfp,
                    host,
                    configfp,
                    tags,
                    source,
                    values,
                )| {
                    Ok(TrackedPoint {
                        id,
                        measured_at_unix_ms: measured,
                        commit,
                        host_fingerprint: hostfp,
                        host: self.history_json(id, &host, "host")?,
                        config_fingerprint: configfp,
                        tags: self.history_json(id, &tags, "tags")?,
                        source,
                        values: self.history_json(id, &values, "values")?,
                    })
                },
            )
            .collect()
    }

    fn history_json<T: serde::de::DeserializeOwned>(
        &self,
        id: i64,
        text: &str,
        what: &str,
    ) -> Result<T, StoreError> {
        serde_json::from_str(text)
            .map_err(|e| self.json_err(format!("{what} of history point {id}"), e))
    }

    /// Stores the A/B verdict of a change point (replacing an earlier one of the same
    /// series, workload, metric and commits) and returns its id.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn store_confirmation(&self, c: &Confirmation) -> Result<i64, StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO history_confirmations (series, workload, metric,
                     commit_before, commit_after, point_id, experiment, confirmed, decision,
                     effect_pct, ci_low_pct, ci_high_pct, rounds, recorded_at_unix_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                params![
                    c.series,
                    c.workload,
                    c.metric,
                    c.commit_before,
                    c.commit_after,
                    c.point_id,
                    c.experiment,
                    c.confirmed,
                    c.decision,
                    c.effect_pct,
                    c.ci_low_pct,
                    c.ci_high_pct,
                    c.rounds,
                    c.recorded_at_unix_ms
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Every stored A/B verdict of `series`'s change points, oldest first.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn confirmations(&self, series: &str) -> Result<Vec<Confirmation>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT series, workload, metric, commit_before, commit_after, point_id,
                        experiment, confirmed, decision, effect_pct, ci_low_pct, ci_high_pct,
                        rounds, recorded_at_unix_ms
                 FROM history_confirmations WHERE series = ?1 ORDER BY id",
            )
            .map_err(|e| self.err(e))?;
        stmt.query_map([series], |r| {
            Ok(Confirmation {
                series: r.get(0)?,
                workload: r.get(1)?,
                metric: r.get(2)?,
                commit_before: r.get(3)?,
                commit_after: r.get(4)?,
                point_id: r.get(5)?,
                experiment: r.get(6)?,
                confirmed: r.get(7)?,
                decision: r.get(8)?,
                effect_pct: r.get(9)?,
                ci_low_pct: r.get(10)?,
                ci_high_pct: r.get(11)?,
                rounds: r.get(12)?,
                recorded_at_unix_ms: r.get(13)?,
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.err(e))
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
    use resplab_results::history::TrackedValue;

    fn point(at: i64, value: f64) -> TrackedPoint {
        TrackedPoint {
            id: 0,
            measured_at_unix_ms: at,
            commit: Some(format!("c{at}")),
            host_fingerprint: "h1".into(),
            host: serde_json::json!({"hostname": "vm"}),
            config_fingerprint: "c1".into(),
            tags: vec![("branch".into(), "main".into())],
            source: "run.json".into(),
            values: vec![TrackedValue {
                workload: "SET".into(),
                metric: "ops_per_sec".into(),
                unit: "ops/s".into(),
                direction: "higher_is_better".into(),
                value,
                trials: 3,
            }],
        }
    }

    #[test]
    fn points_come_back_in_measurement_order() {
        let store = Store::open_in_memory().unwrap();
        store.append_history("nightly", &point(30, 3.0)).unwrap();
        let id = store.append_history("nightly", &point(10, 1.0)).unwrap();
        store.append_history("other", &point(20, 2.0)).unwrap();
        let h = store.history("nightly").unwrap();
        assert_eq!(h.len(), 2);
        assert_eq!(
            h[0],
            TrackedPoint {
                id,
                ..point(10, 1.0)
            }
        );
        assert_eq!(h[1].values[0].value, 3.0);
        assert!(store.history("none").unwrap().is_empty());
        assert_eq!(store.history_series().unwrap(), vec!["nightly", "other"]);
    }

    #[test]
    fn a_confirmation_is_kept_once_per_change() {
        let store = Store::open_in_memory().unwrap();
        let mut c = Confirmation {
            series: "nightly".into(),
            workload: "SET".into(),
            metric: "ops_per_sec".into(),
            commit_before: "c1".into(),
            commit_after: "c2".into(),
            point_id: 2,
            experiment: "confirm".into(),
            confirmed: false,
            decision: "undecided".into(),
            effect_pct: -3.0,
            ci_low_pct: None,
            ci_high_pct: None,
            rounds: 4,
            recorded_at_unix_ms: 5,
        };
        store.store_confirmation(&c).unwrap();
        c.confirmed = true;
        c.decision = "lower".into();
        c.ci_low_pct = Some(-4.0);
        c.ci_high_pct = Some(-2.0);
        store.store_confirmation(&c).unwrap();
        assert_eq!(store.confirmations("nightly").unwrap(), vec![c]);
        assert!(store.confirmations("other").unwrap().is_empty());
    }
}
