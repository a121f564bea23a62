//! `experiment run --max-error-rate`: the trials of a run whose share of failed requests
//! is above a limit, read back from the store once the run is over.

use resplab_store::{Store, StoreError};

/// A stored trial and where it ran.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredTrial {
    pub trial_id: i64,
    pub variant: String,
    pub workload: String,
    /// 0-based round.
    pub round: u32,
}

/// A trial over the limit, with its figures.
#[derive(Clone, Debug, PartialEq)]
pub struct OverLimit {
    pub trial: StoredTrial,
    /// Failed requests, percent of those sent.
    pub error_pct: f64,
    pub errors: u64,
    pub requests: u64,
}

/// The trials among `trials` whose share of failed requests is above `max_pct`.
///
/// # Errors
/// A stored record that cannot be read back.
pub fn over_limit(
    store: &Store,
    trials: &[StoredTrial],
    max_pct: f64,
) -> Result<Vec<OverLimit>, StoreError> {
    let mut out = Vec::new();
    for t in trials {
        let totals = store.run_record(t.trial_id)?.totals;
        let pct = totals.error_pct();
        if pct > max_pct {
            out.push(OverLimit {
                trial: t.clone(),
                error_pct: pct,
                errors: totals.errors,
                requests: totals.requests.max(totals.errors),
            });
        }
    }
    Ok(out)
}
