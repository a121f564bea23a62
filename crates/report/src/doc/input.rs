//! What a report is made from. `resplab_experiment::readback` fills these from a stored
//! experiment, [`from_files`] from result files as `compare` reads them (with
//! [`from_observations`] and [`variant_definitions`] doing what needs no disk); tests
//! fill them by hand. [`stored_name`] tells the two kinds of input apart.

use crate::resplab::ResplabOptions;
use resplab_results::import::{self, ImportError, InputSpec, PlainOptions, StoredSource};
use resplab_results::sample::{Observation, Observations};
use resplab_results::RunRecord;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

/// The experiment name when the inputs name one stored experiment: `db:NAME`, or a single
/// bare word that is not an existing file.
pub fn stored_name(inputs: &[String]) -> Option<String> {
    let [a] = inputs else {
        return None;
    };
    if let Some(n) = a.strip_prefix("db:") {
        return Some(n.to_string());
    }
    // A path (a separator, or a file extension) that does not exist is a mistyped file,
    // reported as such by the importer, not an experiment name.
    let looks_like_path = a.contains('/') || Path::new(a).extension().is_some();
    if a.contains('=') || looks_like_path || Path::new(a).exists() {
        return None;
    }
    Some(a.clone())
}

/// A report of result files given as `compare` takes them (`[label=]FILE`, or
/// `[label=]db:NAME` read from `store`): resplab run files bring their run records,
/// other formats only their numbers.
///
/// # Errors
/// An input that does not parse or import; the message names it.
pub fn from_files(
    inputs: &[String],
    store: &mut dyn StoredSource,
    metric: Option<&str>,
    options: ResplabOptions,
) -> Result<ReportInput, ImportError> {
    let specs = inputs
        .iter()
        .map(|a| InputSpec::parse(a))
        .collect::<Result<Vec<_>, _>>()?;
    let loaded = import::load_inputs(&specs, &PlainOptions::default(), store)?;
    // Run records of resplab run files, by the file name the observations cite.
    let records = import::resplab::run_records(&specs)?;
    let (metric, workloads) = from_observations(&loaded.observations, &records, metric);
    Ok(ReportInput {
        title: "resplab report".into(),
        source: format!("Inputs: {}", inputs.join(", ")),
        generator: generator(),
        variants: loaded.labels.clone(),
        metric,
        options,
        seed: None,
        facts: Vec::new(),
        experiment_file: None,
        variant_definitions: Vec::new(),
        observations: loaded.observations.to_vec(),
        workloads,
        notes: loaded.notes,
        config_check: None,
        profiles: Vec::new(),
    })
}

/// The program writing a report, as its [`ReportInput::generator`] names it.
pub fn generator() -> String {
    format!("resplab {}", env!("CARGO_PKG_VERSION"))
}

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
    /// Sampled profiles of the server, one per sampled trial (none: no profiles section).
    pub profiles: Vec<ProfileInput>,
}

/// The server's stacks sampled during one trial.
#[derive(Clone, Debug)]
pub struct ProfileInput {
    pub workload: String,
    pub variant: String,
    pub folded: crate::profile::Folded,
    /// The requests of the sampled trial.
    pub requests: u64,
    /// From a counted trial; false for an extra, uncounted one.
    pub counted: bool,
    /// How the stacks were sampled (`perf record -F 499 -e cpu-clock -g`).
    pub sampling: String,
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

/// The metric and workloads of a report on result files: `metric` if given, else
/// `ops_per_sec` where the files have it, else the first metric read; one workload per
/// workload name in first-seen order, with one trial per observation of the metric.
/// `records` are the run records of resplab run files, by the file name observations
/// cite: a trial of one of them keeps its record, and its workload other than `ALL` is a
/// command of that run. When an `ALL` workload is present only it enters the summary's
/// geometric mean.
pub fn from_observations(
    observations: &Observations,
    records: &HashMap<String, Arc<RunRecord>>,
    metric: Option<&str>,
) -> (String, Vec<WorkloadInput>) {
    let mut metrics: Vec<String> = Vec::new();
    for o in observations.iter() {
        if !metrics.contains(&o.metric.name) {
            metrics.push(o.metric.name.clone());
        }
    }
    let metric = match metric {
        Some(m) => m.to_string(),
        None if metrics.iter().any(|m| m == "ops_per_sec") => "ops_per_sec".to_string(),
        None => metrics.first().cloned().unwrap_or_default(),
    };
    let mut names: Vec<String> = Vec::new();
    let mut trials: BTreeMap<String, Vec<TrialInput>> = BTreeMap::new();
    for o in observations.iter().filter(|o| o.metric.name == metric) {
        let w = o.workload.to_string();
        if !names.contains(&w) {
            names.push(w.clone());
        }
        let run = records.get(&*o.origin.file).cloned();
        let command = match (&run, &*o.workload) {
            (Some(_), "ALL") | (None, _) => None,
            (Some(_), c) => Some(c.to_string()),
        };
        trials.entry(w).or_default().push(TrialInput {
            variant: o.label.to_string(),
            round: o.round,
            value: o.flag.is_none().then_some(o.value),
            run,
            command,
        });
    }
    let has_all = names.iter().any(|n| n == "ALL");
    let workloads = names
        .iter()
        .map(|n| WorkloadInput {
            name: n.clone(),
            in_geomean: !has_all || n == "ALL",
            trials: trials.remove(n).unwrap_or_default(),
        })
        .collect();
    (metric, workloads)
}

/// Each variant's definition in a stored experiment's JSON (`variants[].name`), as
/// pretty JSON; variants without one are left out.
pub fn variant_definitions(
    variants: &[String],
    spec_json: &serde_json::Value,
) -> Vec<(String, String)> {
    variants
        .iter()
        .filter_map(|v| {
            let def = spec_json
                .get("variants")?
                .as_array()?
                .iter()
                .find(|d| d.get("name").and_then(|n| n.as_str()) == Some(v.as_str()))?;
            Some((v.clone(), serde_json::to_string_pretty(def).ok()?))
        })
        .collect()
}
