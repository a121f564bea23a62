//! Runs until decided: every look's interval per comparison (`sequential_looks`) and the
//! stopping rule with the reason the run stopped (`sequential_stops`).
//!
//! A look is keyed by the number of rounds it saw, so a resumed run that looks again at
//! the same rounds replaces the row rather than adding one; the largest stored
//! `elapsed_sec` is the wall time the sequence had used when it was interrupted. Stores
//! written before these tables existed read as "no looks, no stop".

use crate::write::now_unix_ms;
use crate::{Store, StoreError};
use rusqlite::{params, OptionalExtension as _};

/// One comparison's interval at one look (log scale; bounds `None` while unbounded).
#[derive(Clone, Debug, PartialEq)]
pub struct LookRow {
    pub rounds: u32,
    pub workload: String,
    pub variant: String,
    pub elapsed_sec: f64,
    pub mean_log: f64,
    pub low_log: Option<f64>,
    pub high_log: Option<f64>,
    pub sd_log: f64,
    /// `continue`, `higher`, `lower` or `equivalent`.
    pub decision: String,
}

/// How a run until decided ended.
#[derive(Clone, Debug, PartialEq)]
pub struct StopRow {
    /// The stopping rule in words (method, α, margin, limits).
    pub rule: String,
    /// `decided`, `max_rounds` or `max_time`.
    pub reason: String,
    pub rounds: u32,
    pub elapsed_sec: f64,
}

impl Store {
    /// Stores the intervals of one look (replacing a look at the same round count).
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn record_looks(&mut self, experiment_id: i64, rows: &[LookRow]) -> Result<(), StoreError> {
        let path = self.path_string();
        let err = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn.transaction().map_err(err)?;
        for r in rows {
            tx.execute(
                "INSERT OR REPLACE INTO sequential_looks (experiment_id, rounds, workload,
                     variant, elapsed_sec, mean_log, low_log, high_log, sd_log, decision)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    experiment_id,
                    r.rounds,
                    r.workload,
                    r.variant,
                    r.elapsed_sec,
                    r.mean_log,
                    r.low_log,
                    r.high_log,
                    r.sd_log,
                    r.decision
                ],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    /// Every stored look of an experiment, by round count, then workload and variant.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn looks(&self, experiment_id: i64) -> Result<Vec<LookRow>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT rounds, workload, variant, elapsed_sec, mean_log, low_log, high_log,
                     sd_log, decision
                 FROM sequential_looks WHERE experiment_id = ?1
                 ORDER BY rounds, workload, variant",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![experiment_id], |r| {
                Ok(LookRow {
                    rounds: r.get(0)?,
                    workload: r.get(1)?,
                    variant: r.get(2)?,
                    elapsed_sec: r.get(3)?,
                    mean_log: r.get(4)?,
                    low_log: r.get(5)?,
                    high_log: r.get(6)?,
                    sd_log: r.get(7)?,
                    decision: r.get(8)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// The wall time a run until decided had used at its latest stored look (0 if none).
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn sequential_elapsed(&self, experiment_id: i64) -> Result<f64, StoreError> {
        self.conn
            .query_row(
                "SELECT COALESCE(MAX(elapsed_sec), 0) FROM sequential_looks WHERE experiment_id = ?1",
                params![experiment_id],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Records why a run until decided stopped (replacing an earlier stop: a resumed run
    /// that stops again).
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn record_stop(&self, experiment_id: i64, stop: &StopRow) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO sequential_stops (experiment_id, rule, reason, rounds,
                     elapsed_sec, stopped_at_unix_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    experiment_id,
                    stop.rule,
                    stop.reason,
                    stop.rounds,
                    stop.elapsed_sec,
                    now_unix_ms() as i64
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Why a run until decided stopped, if it did.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure.
    pub fn sequential_stop(&self, experiment_id: i64) -> Result<Option<StopRow>, StoreError> {
        self.conn
            .query_row(
                "SELECT rule, reason, rounds, elapsed_sec FROM sequential_stops
                 WHERE experiment_id = ?1",
                params![experiment_id],
                |r| {
                    Ok(StopRow {
                        rule: r.get(0)?,
                        reason: r.get(1)?,
                        rounds: r.get(2)?,
                        elapsed_sec: r.get(3)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_and_stops_round_trip_and_a_look_again_replaces() {
        let mut s = Store::open_in_memory().unwrap();
        s.conn
            .execute_batch(
                "INSERT INTO experiments (id, name, created_at_unix_ms, seed, rounds, order_kind,
                     primary_metric, definition_hash, spec_text, spec_json)
                 VALUES (1, 'e', 0, 1, 10, 'rmit', 'ops_per_sec', 'h', '', '{}')",
            )
            .unwrap();
        let look = |rounds: u32, elapsed: f64, low: Option<f64>| LookRow {
            rounds,
            workload: "w".into(),
            variant: "b".into(),
            elapsed_sec: elapsed,
            mean_log: -0.1,
            low_log: low,
            high_log: low.map(|l| l + 0.05),
            sd_log: 0.02,
            decision: "continue".into(),
        };
        assert_eq!(s.sequential_elapsed(1).unwrap(), 0.0);
        s.record_looks(1, &[look(5, 10.0, None)]).unwrap();
        s.record_looks(1, &[look(6, 12.0, Some(-0.2))]).unwrap();
        s.record_looks(1, &[look(6, 13.0, Some(-0.2))]).unwrap();
        let got = s.looks(1).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].low_log, None);
        assert_eq!(got[1].elapsed_sec, 13.0);
        assert_eq!(s.sequential_elapsed(1).unwrap(), 13.0);
        assert_eq!(s.sequential_stop(1).unwrap(), None);
        let stop = StopRow {
            rule: "r".into(),
            reason: "decided".into(),
            rounds: 6,
            elapsed_sec: 13.0,
        };
        s.record_stop(1, &stop).unwrap();
        assert_eq!(s.sequential_stop(1).unwrap(), Some(stop));
    }
}
