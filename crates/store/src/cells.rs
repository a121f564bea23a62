//! What a stored experiment still lacks: the (round, variant, workload) cells not yet
//! stored, which later phases of a phased experiment still have to run.

use crate::read::{ExperimentStatus, RoundState};
use crate::{Store, StoreError};

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
}
