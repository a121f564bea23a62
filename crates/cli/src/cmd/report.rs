//! `resplab report`: a stored experiment, or any inputs `compare` reads, as a Markdown
//! report with SVG plots beside it or as one self-contained HTML file.
//!
//! `resplab report NAME [--db PATH]` reads experiment NAME from the store: its counted
//! trials in run order with their run records (histograms, per-second series, host and
//! server facts), the experiment file and the variants' definitions.
//! `resplab report [label=]FILE…` reads result files exactly as `compare` does; resplab
//! run files also bring their run records, other formats only their numbers (the report
//! then says which plots it had to leave out).
//!
//! This module only gathers the data ([`resplab_report::doc::ReportInput`]) and writes
//! files; the document, its verdicts and plots are built in `resplab_report::doc`.

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use resplab_report::doc::{self, ReportInput, TrialInput, WorkloadInput};
use resplab_report::resplab::ResplabOptions;
use resplab_results::calibration::StoredCalibration;
use resplab_results::import::{
    detect, load_inputs, Format as InputFormat, InputSpec, Location, NoStore, PlainOptions,
    StoredSource,
};
use resplab_results::sample::Observation;
use resplab_results::RunRecord;
use resplab_store::{Store, ALL_COMMANDS};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Markdown, with the plots as SVG files in a folder beside it.
    Md,
    /// One self-contained HTML file (inline SVG and CSS).
    Html,
}

/// Arguments of `resplab report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A stored experiment (`NAME` or `db:NAME`), a stored calibration
    /// (`calibration:ID` or `calibration:latest`), a tracked series (`history:NAME`,
    /// drawn with its change points), or result files as `compare` takes
    /// them (`[label=]FILE`; files with the same label are trials of one variant).
    #[arg(required = true, value_name = "NAME|FILE")]
    pub inputs: Vec<String>,
    /// The result store holding stored experiments.
    #[arg(long, value_name = "PATH", default_value = resplab_store::DEFAULT_DB)]
    pub db: PathBuf,
    /// Output format (default: from the extension of -o, else html).
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// Output file (default: NAME-report.html or .md in the current directory).
    #[arg(short = 'o', long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Metric the verdicts and plots are about (default: the experiment's primary metric,
    /// or ops_per_sec for files).
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Variant to compare against (default: the experiment's baseline or the first label).
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// Equivalence margin in percent (default: the experiment's margin).
    #[arg(long, value_name = "PCT")]
    pub margin: Option<f64>,
    /// Confidence level of the intervals, in percent.
    #[arg(short = 'c', long, value_name = "PCT", default_value_t = 95.0)]
    pub confidence: f64,
}

/// Runs `resplab report`.
///
/// # Errors
/// Bad flags, an unknown experiment, unreadable inputs or an output that cannot be
/// written; the message names the flag, file or experiment.
pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    if let [one] = args.inputs.as_slice() {
        if let Some(which) = one.strip_prefix("calibration:") {
            return calibration(&args.db, which, args.format, args.output.as_deref());
        }
        if let Some(series) = one.strip_prefix("history:") {
            return history(&args, series);
        }
    }
    crate::args::check_confidence_and_margin(args.confidence, args.margin)?;
    let stored = stored_name(&args.inputs);
    let (mut input, default_stem) = match &stored {
        Some(name) => (
            from_store(&args, name)?,
            format!("{}-report", file_stem(name)),
        ),
        None => (from_files(&args)?, "resplab-report".to_string()),
    };
    if let Some(b) = &args.baseline {
        let Some(pos) = input.variants.iter().position(|v| v == b) else {
            bail!(
                "--baseline: expected one of the variants ({}), found `{b}`",
                input.variants.join(", ")
            );
        };
        let v = input.variants.remove(pos);
        input.variants.insert(0, v);
    }
    let (format, output, file) = report_target(args.format, args.output.as_deref(), &default_stem)?;
    let document = doc::build(&input)?;
    match format {
        ReportFormat::Html => {
            let html = doc::html::render(&document);
            crate::output::finish(file, html.as_bytes())?;
            println!("wrote {}", output.display());
        }
        ReportFormat::Md => {
            let (dir, plot_dir) = plot_folder(&output);
            let md = doc::markdown::render(&document, &plot_dir);
            let base = output.parent().unwrap_or(Path::new(""));
            if !md.files.is_empty() {
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("cannot create the plot folder {}", dir.display()))?;
            }
            for (rel, svg) in &md.files {
                let p = base.join(rel);
                std::fs::write(&p, svg)
                    .with_context(|| format!("cannot write plot {}", p.display()))?;
            }
            crate::output::finish(file, md.text.as_bytes())?;
            println!(
                "wrote {} and {} plots in {}",
                output.display(),
                md.files.len(),
                dir.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `resplab report calibration:ID|latest`: a stored calibration (or `--validate` run) as
/// its own report, rendered by `resplab_report::calibration`; in Markdown the budget plot
/// is a file in the plot folder beside it.
///
/// # Errors
/// No store at `db`, no such calibration (the message lists the stored ones), a stored
/// result this build cannot read, or an output that cannot be written.
fn calibration(
    db: &Path,
    which: &str,
    format: Option<ReportFormat>,
    output: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    if !db.exists() {
        bail!(
            "--db {}: no result store there (run resplab calibrate first, or give --db)",
            db.display()
        );
    }
    let store =
        Store::open(db).with_context(|| format!("opening the result store {}", db.display()))?;
    let stored = resplab_experiment::calibrate::stored::load(&store, db, which)?;
    let id = match &stored {
        StoredCalibration::Calibration { id, .. } | StoredCalibration::Validation { id, .. } => *id,
    };
    let page = resplab_report::calibration::page(&stored, db)?;
    let (format, output, file) =
        report_target(format, output, &format!("calibration-{id}-report"))?;
    match format {
        ReportFormat::Md => {
            let mut wrote = vec![output.display().to_string()];
            let (dir, plot_dir) = plot_folder(&output);
            if let Some((svg, _)) = &page.budget {
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("cannot create the plot folder {}", dir.display()))?;
                let plot = dir.join("budget.svg");
                std::fs::write(&plot, svg)
                    .with_context(|| format!("cannot write plot {}", plot.display()))?;
                wrote.push(plot.display().to_string());
            }
            let md = resplab_report::calibration::markdown(&page, &plot_dir);
            crate::output::finish(file, md.as_bytes())?;
            println!("wrote {}", wrote.join(" and "));
        }
        ReportFormat::Html => {
            crate::output::finish(file, resplab_report::calibration::html(&page).as_bytes())?;
            println!("wrote {}", output.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `resplab report history:NAME`: a tracked series, each workload × metric (or only
/// `--metric`) drawn with its change points by `resplab_report::history`.
///
/// # Errors
/// No store at `--db`, an unknown series, or an output that cannot be written.
fn history(args: &ReportArgs, series: &str) -> anyhow::Result<ExitCode> {
    if !args.db.exists() {
        bail!(
            "--db {}: no result store there (resplab track creates it)",
            args.db.display()
        );
    }
    let store = Store::open(&args.db)
        .with_context(|| format!("opening the result store {}", args.db.display()))?;
    let cfg = resplab_stats::changepoint::ChangePointConfig::default();
    let analysis =
        resplab_experiment::history::history(&store, series, args.metric.as_deref(), &cfg)?;
    let stem = format!("history-{}-report", file_stem(series));
    let (format, output, file) = report_target(args.format, args.output.as_deref(), &stem)?;
    match format {
        ReportFormat::Md => {
            let (dir, plot_dir) = plot_folder(&output);
            let (md, plots) = resplab_report::history::markdown(&analysis, &plot_dir)?;
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create the plot folder {}", dir.display()))?;
            for (name, svg) in &plots {
                let p = dir.join(name);
                std::fs::write(&p, svg)
                    .with_context(|| format!("cannot write plot {}", p.display()))?;
            }
            file.finish(md.as_bytes())?;
            println!(
                "wrote {} and {} plots in {}",
                output.display(),
                plots.len(),
                dir.display()
            );
        }
        ReportFormat::Html => {
            file.finish(resplab_report::history::html(&analysis)?.as_bytes())?;
            println!("wrote {}", output.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Where a report goes: the format asked for (else the one `-o`'s extension names: HTML
/// unless `.md`/`.markdown`) and the file (`-o`, else `{default_stem}.md|html`), its
/// folder made when missing and the file prepared for writing, so that a path that cannot
/// be written fails before any work.
///
/// # Errors
/// A folder that cannot be made or a file that cannot be written, naming `-o`.
fn report_target(
    asked: Option<ReportFormat>,
    output: Option<&Path>,
    default_stem: &str,
) -> anyhow::Result<(ReportFormat, PathBuf, crate::output::OutFile)> {
    let format = asked.unwrap_or(
        match output.and_then(|p| p.extension()).and_then(|e| e.to_str()) {
            Some("md" | "markdown") => ReportFormat::Md,
            _ => ReportFormat::Html,
        },
    );
    let output = output.map(Path::to_path_buf).unwrap_or_else(|| {
        PathBuf::from(match format {
            ReportFormat::Md => format!("{default_stem}.md"),
            ReportFormat::Html => format!("{default_stem}.html"),
        })
    });
    // The Markdown form puts its plots beside the report, in its folder.
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            std::fs::create_dir_all(parent).with_context(|| {
                format!(
                    "-o {}: cannot create the folder {}",
                    output.display(),
                    parent.display()
                )
            })?;
        }
    }
    let file = crate::output::OutFile::prepare("-o", &output)?;
    Ok((format, output, file))
}

/// The folder of a Markdown report's plots: its path, and its name as the report links
/// it (`REPORT-plots`, beside the report).
fn plot_folder(output: &Path) -> (PathBuf, String) {
    let stem = output
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("report");
    let name = format!("{stem}-plots");
    (output.parent().unwrap_or(Path::new("")).join(&name), name)
}

/// The experiment name when the inputs name one stored experiment: `db:NAME`, or a single
/// bare word that is not an existing file.
fn stored_name(inputs: &[String]) -> Option<String> {
    if inputs.len() != 1 {
        return None;
    }
    let a = &inputs[0];
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

fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

fn options(args: &ReportArgs, margin_fraction: Option<f64>) -> ResplabOptions {
    ResplabOptions {
        confidence: args.confidence / 100.0,
        margin_pct: args.margin.or(margin_fraction.map(|m| m * 100.0)),
        not_interleaved: Vec::new(),
    }
}

fn generator() -> String {
    format!("resplab {}", env!("CARGO_PKG_VERSION"))
}

fn from_store(args: &ReportArgs, name: &str) -> anyhow::Result<ReportInput> {
    if !args.db.exists() {
        bail!(
            "--db {}: no such file; expected the result store of `resplab experiment run` \
             (or give result files instead of an experiment name)",
            args.db.display()
        );
    }
    let mut store = Store::open(&args.db)?;
    let status = store.status(name)?;
    let info = status.info.clone();
    let (spec_text, spec_json) = store.experiment_spec(info.id)?;
    let metric = args
        .metric
        .clone()
        .unwrap_or_else(|| info.primary_metric.clone());
    let observations: Vec<Observation> = StoredSource::load(&mut store, name, None)?;
    let (workloads, counted_trials) = stored_workloads(&store, name, &info, &metric)?;
    let variant_definitions = doc::input::variant_definitions(&info.variants, &spec_json);
    let config_check = resplab_experiment::Experiment::from_json(&spec_json)
        .ok()
        .and_then(|exp| resplab_experiment::configcheck::gather(&store, &exp, info.id));
    let notes = stored_notes(&store, name, &status)?;
    let valid = status.valid_rounds();
    let facts = stored_facts(&status, counted_trials);
    Ok(ReportInput {
        title: format!("Experiment {}", info.name),
        source: format!(
            "Experiment {} from {}: {} variants × {} workloads, {} counted rounds",
            info.name,
            args.db.display(),
            info.variants.len(),
            info.workloads.len(),
            valid
        ),
        generator: generator(),
        variants: info.variants.clone(),
        metric,
        options: ResplabOptions {
            not_interleaved: store.not_interleaved_variants(name)?,
            ..options(args, info.margin)
        },
        seed: Some(info.seed),
        facts,
        experiment_file: Some(spec_text),
        variant_definitions,
        observations,
        workloads,
        notes,
        config_check,
        profiles: stored_profiles(&store, info.id)?,
    })
}

/// The report's workloads from the counted trials of a stored experiment: one per
/// workload, and one per command when a workload ran several; with how many trials
/// were counted.
fn stored_workloads(
    store: &Store,
    name: &str,
    info: &resplab_store::ExperimentInfo,
    metric: &str,
) -> anyhow::Result<(Vec<WorkloadInput>, usize)> {
    let stored = store.observations(name)?;
    // (trial, command, metric) → value, and the commands of each workload.
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

/// The notes of a stored experiment: its phases, the rounds not counted and every
/// trial left out with the check it failed.
/// The stored profiles of an experiment, as the report reads them.
fn stored_profiles(store: &Store, id: i64) -> anyhow::Result<Vec<doc::ProfileInput>> {
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

fn stored_notes(
    store: &Store,
    name: &str,
    status: &resplab_store::ExperimentStatus,
) -> anyhow::Result<Vec<String>> {
    // A phased experiment's variants were not interleaved: said first, with each
    // phase's run order.
    let mut notes = store.phase_notes(name)?;
    let sequential = sensitivity_notes(store, name, &mut notes)?;
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

/// The sensitivity certificate of a stored experiment and, for a run until decided, its
/// anytime-valid verdict (the tables' fixed-sample intervals do not allow for its looks);
/// true for a run until decided.
fn sensitivity_notes(store: &Store, name: &str, notes: &mut Vec<String>) -> anyhow::Result<bool> {
    use resplab_experiment::certificate;
    use resplab_report::verdict::{
        certificate_line, sequential_line, stop_sentence, SEQUENTIAL_NOTE,
    };
    let info = store.experiment(name)?;
    let sequential = certificate::sequential_of_stored(store, name)?;
    if let Some((stop, a)) = &sequential {
        let higher = resplab_store::metrics::higher_is_better(&info.primary_metric);
        notes.push(SEQUENTIAL_NOTE.to_string());
        if let Some(stop) = stop {
            notes.push(stop_sentence(
                &stop.reason,
                stop.rounds as usize,
                stop.elapsed_sec,
            ));
        }
        for c in &a.comparisons {
            notes.push(sequential_line(
                &c.workload,
                &c.variant,
                &c.look,
                c.decision,
                higher,
                info.margin,
            ));
        }
    }
    if let Some(c) = certificate::of_stored(store, name)? {
        notes.push(certificate_line(
            c.mde_pct,
            c.rounds,
            c.elapsed_sec,
            c.validation.as_ref().map(|(_, v)| v),
        ));
    }
    Ok(sequential.is_some())
}

/// The facts table of a stored experiment.
fn stored_facts(
    status: &resplab_store::ExperimentStatus,
    counted_trials: usize,
) -> Vec<(String, String)> {
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

fn from_files(args: &ReportArgs) -> anyhow::Result<ReportInput> {
    let specs = args
        .inputs
        .iter()
        .map(|a| InputSpec::parse(a))
        .collect::<Result<Vec<_>, _>>()?;
    let plain = PlainOptions::default();
    let loaded = if specs
        .iter()
        .any(|s| matches!(s.location, Location::Stored(_)))
    {
        let mut store = Store::open(&args.db)?;
        load_inputs(&specs, &plain, &mut store)?
    } else {
        load_inputs(&specs, &plain, &mut NoStore)?
    };
    // Run records of resplab run files, by the file name the observations cite.
    let mut records: HashMap<String, Arc<RunRecord>> = HashMap::new();
    for s in &specs {
        if let Location::Path(p) = &s.location {
            if p == "-" || records.contains_key(p) {
                continue;
            }
            let bytes = std::fs::read(p).with_context(|| format!("{p}: cannot read"))?;
            if detect(&bytes) == InputFormat::Resplab {
                let r: RunRecord = serde_json::from_slice(&bytes)
                    .with_context(|| format!("{p}: expected a resplab run record"))?;
                records.insert(p.clone(), Arc::new(r));
            }
        }
    }
    let (metric, workloads) =
        doc::input::from_observations(&loaded.observations, &records, args.metric.as_deref());
    let shown: Vec<&str> = args.inputs.iter().map(String::as_str).collect();
    Ok(ReportInput {
        title: "resplab report".into(),
        source: format!("Inputs: {}", shown.join(", ")),
        generator: generator(),
        variants: loaded.labels.clone(),
        metric,
        options: options(args, None),
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
