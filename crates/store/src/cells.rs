//! What a stored experiment still lacks and what its servers ran: the (round, variant,
//! workload) cells not yet stored, which later phases of a phased experiment still have
//! to run, and each variant's server configuration as its first trial recorded it, which
//! the configuration check compares.

use crate::read::{ExperimentStatus, RoundState};
use crate::{Store, StoreError};
use std::collections::BTreeMap;

/// A variant's server settings (`CONFIG GET *`), by setting name.
pub type ServerConfig = BTreeMap<String, String>;

impl Store {
    /// The (round, variant, workload) cells of each round's current attempt not yet
    /// stored, in round, variant and workload order.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn missing_cells(
        &self,
        st: &ExperimentStatus,
    ) -> Result<Vec<(u32, String, String)>, StoreError> {
        let trials = self.trials(st.info.id)?;
        let mut out = Vec::new();
        for (round, state) in st.rounds.iter().enumerate() {
            let attempt = match state {
                RoundState::NotStarted => 0,
                RoundState::Incomplete { attempt, .. } => *attempt,
                _ => continue,
            };
            for v in &st.info.variants {
                for w in &st.info.workloads {
                    let stored = trials.iter().any(|t| {
                        t.round == round as u32
                            && t.attempt == attempt
                            && &t.variant == v
                            && &t.workload == w
                    });
                    if !stored {
                        out.push((round as u32, v.clone(), w.clone()));
                    }
                }
            }
        }
        Ok(out)
    }

    /// Each variant's server configuration as stored with its first trial that has one;
    /// variants without one are left out, and so is everything when the trials cannot
    /// be read (the check that uses them is advisory).
    pub fn first_configs(&self, experiment_id: i64) -> BTreeMap<String, ServerConfig> {
        let Ok(trials) = self.trials(experiment_id) else {
            return BTreeMap::new();
        };
        let mut configs = BTreeMap::new();
        for t in &trials {
            if configs.contains_key(&t.variant) {
                continue;
            }
            if let Ok(mut info) = self.server_info(t.id) {
                if let Some(c) = info.remove("config") {
                    configs.insert(t.variant.clone(), c);
                }
            }
        }
        configs
    }
}
