//! Stored experiments as a comparison source: `resplab compare db:NAME`.
//!
//! [`Store`] implements the results crate's [`StoredSource`], turning each counted
//! trial's metric rows into [`Observation`]s labelled by variant and tagged with their
//! round, so the comparison pairs trials by round. The workload of an observation is
//! the experiment's workload name for run totals and `workload:COMMAND` for each test of
//! a multi-test workload (`suite:GET`), so every redis-benchmark test gets its own line.
//! Invalid trials and rounds without a valid attempt are not observed (they stay in the
//! store and show in `experiment status`). [`LazyStore`] opens the store only when a
//! `db:` input asks for it.

use crate::{Store, ALL_COMMANDS};
use resplab_results::import::{ImportError, StoredSource};
use resplab_results::sample::{Direction, Metric, Observation, Origin};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

/// Unit and direction of a stored metric name.
pub fn metric_of(name: &str) -> Metric {
    let (unit, direction) = match name {
        "ops_per_sec" => ("ops/s", Direction::HigherIsBetter),
        "requests" => ("requests", Direction::HigherIsBetter),
        "errors" => ("errors", Direction::LowerIsBetter),
        "client_cpu_sec" | "server_cpu_sec" => ("s", Direction::LowerIsBetter),
        "server_cpu_us_per_op" | "client_cpu_us_per_op" => ("us/op", Direction::LowerIsBetter),
        "wire_bytes_per_op" => ("B/op", Direction::LowerIsBetter),
        n if n.ends_with("_us") => ("us", Direction::LowerIsBetter),
        _ => ("", Direction::Unknown),
    };
    Metric::new(name, unit, direction)
}

/// The metric of a stored row: its own unit and direction when it carries them (every
/// row since the metric list became open), else what [`metric_of`] knows of its name.
fn stored_metric(o: &crate::Observation) -> Metric {
    match (&o.unit, &o.direction) {
        (Some(unit), Some(direction)) => {
            Metric::new(o.metric.clone(), unit.clone(), direction_of(direction))
        }
        _ => metric_of(&o.metric),
    }
}

/// The direction named by [`Direction::as_str`].
pub fn direction_of(name: &str) -> Direction {
    match name {
        "higher_is_better" => Direction::HigherIsBetter,
        "lower_is_better" => Direction::LowerIsBetter,
        _ => Direction::Unknown,
    }
}

impl StoredSource for Store {
    fn load(&mut self, name: &str, label: Option<&str>) -> Result<Vec<Observation>, ImportError> {
        let arg = format!("db:{name}");
        let mut obs = self.observations(name).map_err(|e| ImportError::Argument {
            arg: arg.clone(),
            message: e.to_string(),
        })?;
        let info = self.experiment(name).map_err(|e| ImportError::Argument {
            arg: arg.clone(),
            message: e.to_string(),
        })?;
        let timed = self.time_bound_workloads(info.id);
        backfill_client_cpu_per_op(&mut obs);
        // Raw CPU seconds and a server's raw call counts restate how many requests a
        // trial served; `requests` restates throughput when trials were time-bound.
        // None gets a verdict of its own (all stay in `experiment export`), unless the
        // experiment chose it.
        obs.retain(|o| {
            o.metric == info.primary_metric
                || !(crate::metrics::is_raw_total(&o.metric, o.unit.as_deref())
                    || (o.metric == "requests" && timed.contains(&o.workload)))
        });
        let rows = CommandRows::of(&obs);
        let single_variant = info.variants.len() == 1;
        let out = to_observations(obs, &rows, label, single_variant, &arg);
        if out.is_empty() {
            return Err(ImportError::Argument {
                arg,
                message:
                    "the experiment has no valid rounds yet; `resplab experiment status` shows why"
                        .into(),
            });
        }
        Ok(out)
    }
}

/// Which per-command rows are observed: those of a workload with more than one command,
/// or whose totals do not restate them (a command workload's benchmark has no `all` row
/// of its metrics).
struct CommandRows {
    commands: HashMap<String, std::collections::BTreeSet<String>>,
    totals: std::collections::HashSet<(String, String)>,
}

impl CommandRows {
    fn of(obs: &[crate::Observation]) -> Self {
        let mut commands: HashMap<String, std::collections::BTreeSet<String>> = HashMap::new();
        let mut totals: std::collections::HashSet<(String, String)> = Default::default();
        for o in obs {
            if o.command != ALL_COMMANDS {
                commands
                    .entry(o.workload.clone())
                    .or_default()
                    .insert(o.command.clone());
            } else {
                totals.insert((o.workload.clone(), o.metric.clone()));
            }
        }
        CommandRows { commands, totals }
    }

    /// The workload an observed row is shown under, or `None` when it is not observed.
    fn workload(&self, o: &crate::Observation) -> Option<String> {
        if o.command == ALL_COMMANDS {
            Some(o.workload.clone())
        } else if self
            .commands
            .get(o.workload.as_str())
            .is_some_and(|c| c.len() > 1)
            || !self
                .totals
                .contains(&(o.workload.clone(), o.metric.clone()))
        {
            Some(format!("{}:{}", o.workload, o.command))
        } else {
            None
        }
    }
}

/// The observed rows as comparison observations: labelled (by `label`, and the variant
/// when there are several), numbered per label, workload and metric, with shared strings
/// and metrics.
fn to_observations(
    obs: Vec<crate::Observation>,
    rows: &CommandRows,
    label: Option<&str>,
    single_variant: bool,
    arg: &str,
) -> Vec<Observation> {
    let file: Arc<str> = Arc::from(arg);
    let mut strs: HashMap<String, Arc<str>> = HashMap::new();
    let mut intern = |s: String| {
        strs.entry(s.clone())
            .or_insert_with(|| Arc::from(s))
            .clone()
    };
    let mut metric_cache: HashMap<(String, Option<String>, Option<String>), Arc<Metric>> =
        HashMap::new();
    let mut counters: BTreeMap<(Arc<str>, Arc<str>, String), u32> = BTreeMap::new();
    let mut out = Vec::with_capacity(obs.len());
    for o in obs {
        let Some(workload) = rows.workload(&o) else {
            continue;
        };
        let label = match label {
            Some(l) if single_variant => l.to_string(),
            Some(l) => format!("{l}/{}", o.variant),
            None => o.variant.clone(),
        };
        let label = intern(label);
        let workload = intern(workload);
        let metric = metric_cache
            .entry((o.metric.clone(), o.unit.clone(), o.direction.clone()))
            .or_insert_with(|| Arc::new(stored_metric(&o)))
            .clone();
        let counter = counters
            .entry((label.clone(), workload.clone(), o.metric.clone()))
            .or_insert(0);
        let trial = *counter;
        *counter += 1;
        out.push(Observation {
            label,
            workload,
            metric,
            value: o.value,
            round: Some(o.round),
            trial,
            origin: Origin {
                file: file.clone(),
                line: None,
            },
            config: None,
            flag: None,
        });
    }
    out
}

impl Store {
    /// Names of the workloads whose trials ran for a fixed time (their `requests` is the
    /// throughput again). Unknown when the stored definition cannot be read: none.
    fn time_bound_workloads(&self, experiment_id: i64) -> std::collections::HashSet<String> {
        let Ok((_, json)) = self.experiment_spec(experiment_id) else {
            return Default::default();
        };
        json.get("workloads")
            .and_then(|w| w.as_array())
            .map(|list| {
                list.iter()
                    .filter(|w| w.get("budget").and_then(|b| b.get("test_time")).is_some())
                    .filter_map(|w| w.get("name").and_then(|n| n.as_str()).map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Trials stored before `client_cpu_us_per_op` existed get it from their raw CPU
/// seconds and request count.
fn backfill_client_cpu_per_op(obs: &mut Vec<crate::Observation>) {
    let mut by_trial: HashMap<i64, (Option<f64>, Option<f64>, bool, usize)> = HashMap::new();
    for (i, o) in obs.iter().enumerate() {
        if o.command != ALL_COMMANDS {
            continue;
        }
        let e = by_trial.entry(o.trial_id).or_insert((None, None, false, i));
        match o.metric.as_str() {
            "client_cpu_sec" => e.0 = Some(o.value),
            "requests" => e.1 = Some(o.value),
            "client_cpu_us_per_op" => e.2 = true,
            _ => {}
        }
    }
    let mut extra = Vec::new();
    for (cpu, requests, has, i) in by_trial.into_values() {
        if let (Some(cpu), Some(n), false) = (cpu, requests, has) {
            if n > 0.0 {
                let mut o = obs[i].clone();
                o.metric = "client_cpu_us_per_op".into();
                o.value = cpu * 1e6 / n;
                extra.push(o);
            }
        }
    }
    extra.sort_by_key(|o| o.trial_id);
    obs.extend(extra);
}

/// The result store opened on the first `db:NAME` input, so that comparing files only
/// never touches (or creates) it.
#[derive(Debug)]
pub struct LazyStore {
    /// Where the store is.
    pub path: PathBuf,
    /// The store, once a `db:` input (or [`LazyStore::open_if_present`]) opened it.
    pub store: Option<Store>,
}

impl LazyStore {
    /// A store at `path`, not opened yet.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        LazyStore {
            path: path.into(),
            store: None,
        }
    }

    /// The store, opened now when a file is there (an unreadable one counts as absent).
    pub fn open_if_present(&mut self) -> Option<&Store> {
        if self.store.is_none() && self.path.is_file() {
            self.store = Store::open(&self.path).ok();
        }
        self.store.as_ref()
    }
}

impl StoredSource for LazyStore {
    fn load(&mut self, name: &str, label: Option<&str>) -> Result<Vec<Observation>, ImportError> {
        if self.store.is_none() {
            if !self.path.is_file() {
                return Err(ImportError::Argument {
                    arg: format!("db:{name}"),
                    message: format!(
                        "expected a results database at `{}` (--db PATH, written by `resplab \
                         experiment run`), found no such file",
                        self.path.display()
                    ),
                });
            }
            let store = Store::open(&self.path).map_err(|e| ImportError::Argument {
                arg: format!("--db {}", self.path.display()),
                message: e.to_string(),
            })?;
            self.store = Some(store);
        }
        match self.store.as_mut() {
            Some(s) => s.load(name, label),
            None => Err(ImportError::Argument {
                arg: format!("db:{name}"),
                message: "the results database is not open".into(),
            }),
        }
    }
}
