//! Stored calibrations as their report shows them: one by id or the newest, with the
//! newest `--validate` run of the same host beside a calibration.

use super::CalibrateError;
use resplab_results::calibration::{
    Calibration, Method, Sought, StoredCalibration, Validation, VALIDATION_KEY,
};
use resplab_store::{CalibrationRow, Store};
use std::path::Path;

/// The calibration `which` (an id, or `latest`) of the store at `db` (named in errors).
///
/// # Errors
/// `which` is neither, no such calibration (the message lists the stored ones), or a
/// stored result this build cannot read.
pub fn load(store: &Store, db: &Path, which: &str) -> Result<StoredCalibration, CalibrateError> {
    let all = store.calibrations()?;
    let row = if which == "latest" {
        all.iter().max_by_key(|c| (c.created_at_unix_ms, c.id))
    } else {
        let id: i64 = which.parse().map_err(|_| {
            CalibrateError::Invalid(format!(
                "calibration:{which}: expected calibration:ID (a number) or calibration:latest"
            ))
        })?;
        all.iter().find(|c| c.id == id)
    };
    let Some(row) = row else {
        let ids: Vec<String> = all.iter().map(|c| c.id.to_string()).collect();
        let known = if ids.is_empty() {
            "the store has no calibration".to_string()
        } else {
            format!("stored: {}", ids.join(", "))
        };
        return Err(CalibrateError::Invalid(format!(
            "calibration:{which}: no such calibration in {} ({known})",
            db.display()
        )));
    };
    let unreadable = |source| {
        CalibrateError::Stored {
        what: format!(
            "calibration {} was stored by a resplab whose calibration format this build cannot read",
            row.id
        ),
        source,
    }
    };
    let is_validation = |r: &CalibrationRow| r.workload_key == VALIDATION_KEY;
    if is_validation(row) {
        let v: Validation = serde_json::from_value(row.result.clone()).map_err(unreadable)?;
        return Ok(StoredCalibration::Validation {
            id: row.id,
            validation: Box::new(v),
        });
    }
    let cal: Calibration = serde_json::from_value(row.result.clone()).map_err(unreadable)?;
    let checks = all
        .iter()
        .filter(|r| is_validation(r) && r.hostname == row.hostname)
        .max_by_key(|r| (r.created_at_unix_ms, r.id))
        .and_then(|r| {
            serde_json::from_value::<Validation>(r.result.clone())
                .ok()
                .map(|v| (r.id, Box::new(v)))
        });
    Ok(StoredCalibration::Calibration {
        id: row.id,
        calibration: Box::new(cal),
        checks,
    })
}

/// The newest `--validate` result of `hostname` for `sought` (method and stopping rule)
/// and `metric`, with its id, if one is stored and this build can read it: what a
/// verdict's sensitivity certificate quotes (error rates measured for another method,
/// rule or metric do not vouch for this one).
///
/// # Errors
/// A store failure.
pub fn newest_validation(
    store: &Store,
    hostname: &str,
    sought: Sought,
    metric: &str,
) -> Result<Option<(i64, Validation)>, CalibrateError> {
    let all = store.calibrations()?;
    Ok(all
        .into_iter()
        .filter(|r| r.workload_key == VALIDATION_KEY && r.hostname == hostname)
        .filter_map(|r| {
            let mut v = serde_json::from_value::<Validation>(r.result).ok()?;
            with_rule(store, &mut v);
            (sought.is_met_by(&v) && v.metric == metric).then_some((r.created_at_unix_ms, r.id, v))
        })
        .max_by_key(|(at, id, _)| (*at, *id))
        .map(|(_, id, v)| (id, v)))
}

/// A validation of runs until decided stored before its rule was kept (schema version
/// 2) learns it from its own experiments: the rule in the first stored definition that
/// ran until decided. Rows whose experiments are gone keep the default of their time.
pub fn with_rule(store: &Store, v: &mut Validation) {
    if v.method != Method::UntilDecided || v.until_rule.is_some() {
        return;
    }
    v.until_rule = v.experiments.iter().find_map(|name| {
        let info = store.experiment(name).ok()?;
        let (_, json) = store.experiment_spec(info.id).ok()?;
        crate::Experiment::from_json(&json)
            .ok()?
            .until_decided
            .map(|u| u.rule)
    });
}
