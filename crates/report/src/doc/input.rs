//! What a report is made from. The CLI fills these from a stored experiment or from
//! result files; tests fill them by hand.

use crate::resplab::ResplabOptions;
use resplab_results::sample::Observation;
use resplab_results::RunRecord;
use std::sync::Arc;

/// Everything a report shows.
#[derive(Clone, Debug)]
pub struct ReportInput {
    /// Document title, e.g. `Experiment demo`.
    pub title: String,
    /// Where the data came from, for the reader (`experiment demo in demo.db`).
    pub source: String,
    /// Name and version of the program writing the report (`resplab 0.1.0`).
    pub generator: String,
    /// Variant names, baseline first. The index of a name is its colour in every plot.
    pub variants: Vec<String>,
    /// Name of the metric the verdict is about (`ops_per_sec`), as in `observations`.
    pub metric: String,
    /// Confidence and equivalence margin of the verdicts.
    pub options: ResplabOptions,
    /// The experiment's master seed, when there is an experiment.
    pub seed: Option<u64>,
    /// Facts about the experiment shown in the provenance table (name → value), e.g.
    /// order, rounds planned, state.
    pub facts: Vec<(String, String)>,
    /// The experiment file exactly as it was run.
    pub experiment_file: Option<String>,
    /// Each variant's resolved definition (server command, config), as text.
    pub variant_definitions: Vec<(String, String)>,
    /// The values `compare` works on: labels are variant names, workloads match
    /// [`WorkloadInput::name`], rounds pair trials.
    pub observations: Vec<Observation>,
    /// The workloads, in the order the report shows them.
    pub workloads: Vec<WorkloadInput>,
    /// Notes for the reader (importer notes, trials left out and why).
    pub notes: Vec<String>,
    /// The experiment's configuration check, listed whole in the provenance.
    pub config_check: Option<resplab_results::configcheck::ConfigCheck>,
}

/// One workload (or one test of a multi-test workload).
#[derive(Clone, Debug)]
pub struct WorkloadInput {
    /// Name as in the observations (`set`, `suite:GET`).
    pub name: String,
    /// True when the workload enters the summary's geometric mean (a workload's
    /// totals do, its per-test parts do not, or they would count twice).
    pub in_geomean: bool,
    /// The counted trials, in the order they ran.
    pub trials: Vec<TrialInput>,
}

/// One counted trial.
#[derive(Clone, Debug)]
pub struct TrialInput {
    /// Variant name.
    pub variant: String,
    /// Round the trial ran in, when known.
    pub round: Option<u32>,
    /// The trial's value of the report's metric, when it has one.
    pub value: Option<f64>,
    /// The full run record, when the source keeps one.
    pub run: Option<Arc<RunRecord>>,
    /// Which summary of the run this workload is: a command name, or `None` for the
    /// run's totals.
    pub command: Option<String>,
}

impl TrialInput {
    /// The run summary this trial contributes to its workload.
    pub fn summary(&self) -> Option<&resplab_results::Summary> {
        let run = self.run.as_deref()?;
        match &self.command {
            None => Some(&run.totals),
            Some(c) => run.commands.get(c),
        }
    }
}
