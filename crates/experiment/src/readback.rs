//! Stored experiments read back for `resplab compare` and `resplab report`: the store's
//! rows turned into the plain values `resplab_report` works on ([`compare_facts`] for a
//! comparison, [`report_input`] for a report), so that the report crate never knows the
//! store. A stored experiment's sensitivity lines — a run until decided's stop and
//! anytime-valid verdicts, the certificate — are worded once here for both
//! ([`stored_sensitivity`]) with `report::verdict`'s words. `experiment list` and
//! `experiment status` read theirs here too ([`list_rows`], [`status_view`]).

use crate::certificate;
use resplab_report::compare::{StoredFacts, StoredFirst};
use resplab_report::doc::{self, ReportInput, TrialInput, WorkloadInput};
use resplab_report::resplab::ResplabOptions;
use resplab_report::status::{Failure, ListRow, StatusView};
use resplab_report::verdict::{certificate_line, sequential_line, stop_sentence, SEQUENTIAL_NOTE};
use resplab_results::import::{ImportError, InputSpec, Location, StoredSource};
use resplab_results::RunRecord;
use resplab_store::{ExperimentInfo, ExperimentStatus, LazyStore, Store, StoreError, ALL_COMMANDS};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

/// Why a stored experiment could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum ReadbackError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error(transparent)]
    Profile(#[from] resplab_report::profile::FoldedError),
}

/// A stored experiment's sensitivity, worded: for a run until decided, how it stopped
/// with its stopping rule and each comparison's sequential verdict; its certificate.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoredSensitivity {
    pub sequential: Option<Vec<String>>,
    pub certificate: Option<String>,
}

/// The sensitivity lines of stored experiment `name`.
///
/// # Errors
/// A store failure.
pub fn stored_sensitivity(store: &Store, name: &str) -> Result<StoredSensitivity, StoreError> {
    let sequential = match certificate::sequential_of_stored(store, name)? {
        Some((stop, a)) => {
            let info = store.experiment(name)?;
            let higher = resplab_store::metrics::higher_is_better(&info.primary_metric);
            let mut lines = Vec::new();
            if let Some(stop) = stop {
                lines.push(stop_sentence(
                    &stop.reason,
                    stop.rounds as usize,
                    stop.elapsed_sec,
                ));
                // The rule it ran with, as stored: a rule chosen otherwise today does
                // not change how a stored run was judged.
                lines.push(format!("rule: {}", stop.rule));
            }
            for c in &a.comparisons {
                lines.push(sequential_line(
                    &c.workload,
                    &c.variant,
                    &c.look,
                    c.decision,
                    higher,
                    info.margin,
                ));
            }
            Some(lines)
        }
        None => None,
    };
    let certificate = certificate::of_stored(store, name)?.map(|c| {
        certificate_line(
            c.mde_pct,
            c.rounds,
            c.elapsed_sec,
            c.validation.as_ref().map(|(_, v)| v),
            c.sought,
        )
    });
    Ok(StoredSensitivity {
        sequential,
        certificate,
    })
}

/// What the stored experiments among a comparison's inputs add (the store was opened by
/// loading them); with `sensitivity`, also the lines under the text report, for which
/// the store is opened when it exists even if no input named it (this host's newest
/// `calibrate --validate`).
///
/// # Errors
/// A store failure.
pub fn compare_facts(
    store: &mut LazyStore,
    specs: &[InputSpec],
    sensitivity: bool,
) -> Result<StoredFacts, StoreError> {
    let mut facts = StoredFacts::default();
    if let Some(st) = store.store.as_ref() {
        for s in specs {
            if let Location::Stored(name) = &s.location {
                // A phased experiment says that its variants were not interleaved, and
                // in what order each phase ran.
                for n in st.phase_notes(name)? {
                    facts.phase_notes.push(format!("db:{name}: {n}"));
                }
                facts
                    .not_interleaved
                    .extend(st.not_interleaved_variants(name)?);
            }
        }
        if let Some(
            spec @ InputSpec {
                location: Location::Stored(name),
                ..
            },
        ) = specs.first()
        {
            facts.first = Some(stored_first(&st.experiment(name)?, spec));
        }
    }
    if !sensitivity {
        return Ok(facts);
    }
    let Some(st) = store.open_if_present() else {
        return Ok(facts);
    };
    if let Some(Location::Stored(name)) = specs.first().map(|s| &s.location) {
        let s = stored_sensitivity(st, name)?;
        facts.sequential = s.sequential;
        facts.certificate = s.certificate;
    }
    if facts.certificate.is_none() {
        // A comparison of stored results is judged as fixed rounds.
        for metric in crate::calibrate::validate::METRICS {
            if let Some((_, v)) = certificate::newest_validation_for(
                st,
                resplab_results::calibration::Sought::RMIT,
                metric,
            ) {
                facts.validation_here.insert(metric.to_string(), v);
            }
        }
    }
    Ok(facts)
}

fn stored_first(info: &ExperimentInfo, spec: &InputSpec) -> StoredFirst {
    StoredFirst {
        label: spec.label.clone(),
        explicit_label: spec.explicit_label,
        variants: info.variants.clone(),
        margin: info.margin,
        primary_metric: info.primary_metric.clone(),
        seed: info.seed,
    }
}

/// The report of stored experiment `name` (read from the store at `db`): its counted
/// trials in run order with their run records, the experiment file, the variants'
/// definitions, the configuration check, facts and notes. `options` are the flags'; a
/// margin not given comes from the experiment.
///
/// # Errors
/// An unknown experiment or a store failure.
pub fn report_input(
    store: &mut Store,
    db: &Path,
    name: &str,
    metric: Option<&str>,
    options: ResplabOptions,
) -> Result<ReportInput, ReadbackError> {
    let status = store.status(name)?;
    let info = status.info.clone();
    let (spec_text, spec_json) = store.experiment_spec(info.id)?;
    let metric = metric.map_or_else(|| info.primary_metric.clone(), str::to_string);
    let observations = StoredSource::load(store, name, None)?;
    let (workloads, counted_trials) = stored_workloads(store, name, &info, &metric)?;
    let variant_definitions = doc::input::variant_definitions(&info.variants, &spec_json);
    let config_check = crate::Experiment::from_json(&spec_json)
        .ok()
        .and_then(|exp| crate::configcheck::gather(store, &exp, info.id));
    let notes = stored_notes(store, name, &status)?;
    Ok(ReportInput {
        title: format!("Experiment {}", info.name),
        source: format!(
            "Experiment {} from {}: {} variants × {} workloads, {} counted rounds",
            info.name,
            db.display(),
            info.variants.len(),
            info.workloads.len(),
            status.valid_rounds()
        ),
        generator: doc::input::generator(),
        variants: info.variants.clone(),
        metric,
        options: ResplabOptions {
            not_interleaved: store.not_interleaved_variants(name)?,
            margin_pct: options.margin_pct.or(info.margin.map(|m| m * 100.0)),
            ..options
        },
        seed: Some(info.seed),
        facts: stored_facts(&status, counted_trials),
        experiment_file: Some(spec_text),
        variant_definitions,
        observations,
        workloads,
        notes,
        config_check,
        profiles: stored_profiles(store, info.id)?,
    })
}

/// The stored profiles of an experiment, as the report reads them.
fn stored_profiles(store: &Store, id: i64) -> Result<Vec<doc::ProfileInput>, ReadbackError> {
    let mut out = Vec::new();
    for p in store.profiles(id)? {
        let what = format!("stored profile of {} round {}", p.variant, p.round);
        out.push(doc::ProfileInput {
            folded: resplab_report::profile::Folded::parse(&what, &p.folded)?,
            counted: p.is_counted(),
            workload: p.workload,
            variant: p.variant,
            requests: p.requests,
            sampling: p.sampling,
        });
    }
    Ok(out)
}

/// The report's workloads from the counted trials of a stored experiment: one per
/// workload, and one per command when a workload ran several; with how many trials
/// were counted.
fn stored_workloads(
    store: &Store,
    name: &str,
    info: &ExperimentInfo,
    metric: &str,
) -> Result<(Vec<WorkloadInput>, usize), StoreError> {
    let stored = store.observations(name)?;
    // (trial, command) → value of the metric, and the commands of each workload.
    let mut values: HashMap<(i64, &str), f64> = HashMap::new();
    let mut commands: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut counted: BTreeSet<i64> = BTreeSet::new();
    for o in &stored {
        counted.insert(o.trial_id);
        if o.metric == metric {
            values.insert((o.trial_id, o.command.as_str()), o.value);
        }
        if o.command != ALL_COMMANDS {
            commands
                .entry(o.workload.as_str())
                .or_default()
                .insert(o.command.as_str());
        }
    }
    let trials: Vec<_> = store
        .trials(info.id)?
        .into_iter()
        .filter(|t| counted.contains(&t.id))
        .collect();
    let mut runs: HashMap<i64, Arc<RunRecord>> = HashMap::new();
    for t in &trials {
        runs.insert(t.id, Arc::new(store.run_record(t.id)?));
    }
    let mut workloads = Vec::new();
    for w in &info.workloads {
        let mine: Vec<_> = trials.iter().filter(|t| &t.workload == w).collect();
        let trial_inputs = |command: Option<&str>| -> Vec<TrialInput> {
            mine.iter()
                .map(|t| TrialInput {
                    variant: t.variant.clone(),
                    round: Some(t.round),
                    value: values
                        .get(&(t.id, command.unwrap_or(ALL_COMMANDS)))
                        .copied(),
                    run: runs.get(&t.id).cloned(),
                    command: command.map(str::to_string),
                })
                .collect()
        };
        workloads.push(WorkloadInput {
            name: w.clone(),
            in_geomean: true,
            trials: trial_inputs(None),
        });
        if let Some(cs) = commands.get(w.as_str()).filter(|c| c.len() > 1) {
            for c in cs {
                workloads.push(WorkloadInput {
                    name: format!("{w}:{c}"),
                    in_geomean: false,
                    trials: trial_inputs(Some(c)),
                });
            }
        }
    }
    Ok((workloads, trials.len()))
}

/// The notes of a stored experiment: its phases, its sensitivity, the rounds not
/// counted and every trial left out with the check it failed.
fn stored_notes(
    store: &Store,
    name: &str,
    status: &ExperimentStatus,
) -> Result<Vec<String>, StoreError> {
    // A phased experiment's variants were not interleaved: said first, with each
    // phase's run order.
    let mut notes = store.phase_notes(name)?;
    let sensitivity = stored_sensitivity(store, name)?;
    let sequential = sensitivity.sequential.is_some();
    if let Some(lines) = sensitivity.sequential {
        notes.push(SEQUENTIAL_NOTE.to_string());
        notes.extend(lines);
    }
    notes.extend(sensitivity.certificate);
    let planned = status.info.rounds as usize;
    let valid = status.valid_rounds();
    if valid < planned && !sequential {
        notes.push(format!(
            "{valid} of {planned} planned rounds are complete and valid; only those are counted \
             (`resplab experiment status {name}` shows the rest)"
        ));
    }
    for (round, attempt, variant, workload, check) in &status.failures {
        notes.push(format!(
            "left out: round {round} attempt {attempt}, {variant} on {workload}: check {} failed ({})",
            check.name, check.detail
        ));
    }
    Ok(notes)
}

/// The facts table of a stored experiment.
fn stored_facts(status: &ExperimentStatus, counted_trials: usize) -> Vec<(String, String)> {
    let info = &status.info;
    let planned = info.rounds as usize;
    vec![
        ("experiment".to_string(), info.name.clone()),
        ("state".to_string(), info.state.clone()),
        ("trial order".to_string(), info.order_kind.clone()),
        (
            "rounds".to_string(),
            format!("{} counted of {planned} planned", status.valid_rounds()),
        ),
        (
            "trials".to_string(),
            format!(
                "{} stored, {counted_trials} counted, {} invalid",
                status.trials_stored, status.trials_invalid
            ),
        ),
        ("definition hash".to_string(), info.definition_hash.clone()),
    ]
}

/// Valid rounds of planned (`3/5`), or of a run until decided (`3/seq`).
fn rounds_text(store: &Store, valid: usize, id: i64, rounds: u32) -> Result<String, StoreError> {
    Ok(if store.looks(id)?.is_empty() {
        format!("{valid}/{rounds}")
    } else {
        format!("{valid}/seq")
    })
}

/// Every stored experiment, as `experiment list` shows it.
///
/// # Errors
/// A store failure.
pub fn list_rows(store: &Store) -> Result<Vec<ListRow>, StoreError> {
    let mut rows = Vec::new();
    for e in store.list_experiments()? {
        let st = store.status(&e.name)?;
        rows.push(ListRow {
            rounds: rounds_text(store, st.valid_rounds(), e.id, e.rounds)?,
            variants: e.variants.len(),
            trials: st.trials_stored,
            name: e.name,
            state: e.state,
        });
    }
    Ok(rows)
}

/// Stored experiment `name` as `experiment status` shows it.
///
/// # Errors
/// [`StoreError::NotFound`] for an unknown name, or a store failure.
pub fn status_view(store: &Store, name: &str) -> Result<StatusView, StoreError> {
    let st = store.status(name)?;
    let i = &st.info;
    let mut missing: Vec<(u32, String)> = Vec::new();
    for (round, v, _) in store.missing_cells(&st)? {
        if !missing.contains(&(round, v.clone())) {
            missing.push((round, v));
        }
    }
    let round_states = st
        .rounds
        .iter()
        .map(|state| {
            serde_json::to_value(state)
                .ok()
                .and_then(|v| v["state"].as_str().map(str::to_string))
                .unwrap_or_else(|| "?".into())
        })
        .collect();
    Ok(StatusView {
        name: i.name.clone(),
        state: i.state.clone(),
        seed: i.seed,
        order_kind: i.order_kind.clone(),
        variants: i.variants.clone(),
        workloads: i.workloads.clone(),
        trials_stored: st.trials_stored,
        trials_valid: st.trials_valid,
        trials_invalid: st.trials_invalid,
        rounds: rounds_text(store, st.valid_rounds(), i.id, i.rounds)?,
        stop: store
            .sequential_stop(i.id)?
            .map(|s| stop_sentence(&s.reason, s.rounds as usize, s.elapsed_sec)),
        round_states,
        failures: st
            .failures
            .iter()
            .map(|(round, attempt, variant, workload, c)| Failure {
                round: *round,
                attempt: *attempt,
                variant: variant.clone(),
                workload: workload.clone(),
                check: c.name.clone(),
                detail: c.detail.clone(),
            })
            .collect(),
        missing,
        notes: store.phase_notes(&i.name)?,
    })
}
