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

impl StoredTrial {
    /// The trial an [`Event::Stored`](crate::runner::Event::Stored) names; `None` for
    /// every other event.
    pub fn of(event: &crate::runner::Event<'_>) -> Option<StoredTrial> {
        match event {
            crate::runner::Event::Stored {
                slot,
                variant,
                workload,
                trial_id,
                ..
            } => Some(StoredTrial {
                trial_id: *trial_id,
                variant: variant.to_string(),
                workload: workload.to_string(),
                round: slot.round,
            }),
            _ => None,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::StoredTrial;
    use crate::plan::TrialSlot;
    use crate::runner::Event;

    #[test]
    fn only_a_stored_event_names_a_trial() {
        let slot = TrialSlot {
            round: 2,
            attempt: 1,
            position: 0,
            variant: 1,
            workload: 0,
        };
        let stored = Event::Stored {
            slot,
            variant: "b",
            workload: "get",
            trial_id: 17,
            valid: true,
            failed: Vec::new(),
            primary: Some(1.0),
        };
        let want = StoredTrial {
            trial_id: 17,
            variant: "b".into(),
            workload: "get".into(),
            round: 2,
        };
        assert_eq!(StoredTrial::of(&stored), Some(want));
        let rerun = Event::Rerun {
            round: 2,
            attempt: 1,
        };
        assert_eq!(StoredTrial::of(&rerun), None);
    }
}
