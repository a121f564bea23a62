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
//! This module only gathers the data ([`resplab_report::doc::ReportInput`], of a stored
//! experiment through `resplab_experiment::readback`, of files through
//! `resplab_report::doc::input::from_files`) and writes files; the document,
//! its verdicts and plots are built in `resplab_report::doc`.

use anyhow::bail;
use clap::{Args, ValueEnum};
use resplab_report::doc::{self, ReportInput};
use resplab_report::resplab::ResplabOptions;
use resplab_report::target::{
    self, file_stem, plot_folder, Doc, DocFormat, Target, WriteError, Written,
};
use resplab_results::calibration::StoredCalibration;
use resplab_results::import::{InputSpec, Location, NoStore};
use resplab_store::Store;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Output format (`resplab_report::target::DocFormat`).
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

/// Where the report goes, as `resplab_report::target` decides from the flags.
fn report_target(
    asked: Option<ReportFormat>,
    output: Option<&Path>,
    default_stem: &str,
) -> anyhow::Result<Target> {
    let asked = asked.map(|f| match f {
        ReportFormat::Md => DocFormat::Md,
        ReportFormat::Html => DocFormat::Html,
    });
    Ok(target::prepare(asked, output, default_stem)?)
}

/// Writes the document, saying where a report that could not be written was saved.
fn write(target: Target, doc: Doc<'_>) -> anyhow::Result<Written> {
    target.write(doc).map_err(|e| {
        if let WriteError::File(f) = &e {
            crate::output::note_saved_elsewhere(f);
        }
        e.into()
    })
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
    resplab_report::compare::check_confidence_and_margin(args.confidence, args.margin)?;
    let stored = doc::input::stored_name(&args.inputs);
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
    let target = report_target(args.format, args.output.as_deref(), &default_stem)?;
    let document = doc::build(&input)?;
    let written = match target.format {
        DocFormat::Html => write(target, Doc::Html(&doc::html::render(&document)))?,
        DocFormat::Md => {
            let md = doc::markdown::render(&document, &plot_folder(&target.output).1);
            write(
                target,
                Doc::Markdown {
                    text: &md.text,
                    plots: &md.files,
                },
            )?
        }
    };
    println!("{}", written.line());
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
    let store = crate::args::open_store(db)?;
    let stored = resplab_experiment::calibrate::stored::load(&store, db, which)?;
    let id = match &stored {
        StoredCalibration::Calibration { id, .. } | StoredCalibration::Validation { id, .. } => *id,
    };
    let page = resplab_report::calibration::page(&stored, db)?;
    let target = report_target(format, output, &format!("calibration-{id}-report"))?;
    let written = match target.format {
        DocFormat::Md => {
            let plot_dir = plot_folder(&target.output).1;
            let plots: Vec<(String, String)> = page
                .budget
                .iter()
                .map(|(svg, _)| (format!("{plot_dir}/budget.svg"), svg.clone()))
                .collect();
            let md = resplab_report::calibration::markdown(&page, &plot_dir);
            write(
                target,
                Doc::Markdown {
                    text: &md,
                    plots: &plots,
                },
            )?
        }
        DocFormat::Html => write(target, Doc::Html(&resplab_report::calibration::html(&page)))?,
    };
    println!("{}", written.listing());
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
    let store = crate::args::open_store(&args.db)?;
    let cfg = resplab_stats::changepoint::ChangePointConfig::default();
    let analysis =
        resplab_experiment::history::history(&store, series, args.metric.as_deref(), &cfg)?;
    let stem = format!("history-{}-report", file_stem(series));
    let target = report_target(args.format, args.output.as_deref(), &stem)?;
    let written = match target.format {
        DocFormat::Md => {
            let plot_dir = plot_folder(&target.output).1;
            let (md, plots) = resplab_report::history::markdown(&analysis, &plot_dir)?;
            let plots: Vec<(String, String)> = plots
                .into_iter()
                .map(|(name, svg)| (format!("{plot_dir}/{name}"), svg))
                .collect();
            write(
                target,
                Doc::Markdown {
                    text: &md,
                    plots: &plots,
                },
            )?
        }
        DocFormat::Html => write(
            target,
            Doc::Html(&resplab_report::history::html(&analysis)?),
        )?,
    };
    println!("{}", written.line());
    Ok(ExitCode::SUCCESS)
}

fn options(args: &ReportArgs) -> ResplabOptions {
    ResplabOptions {
        confidence: args.confidence / 100.0,
        margin_pct: args.margin,
        not_interleaved: Vec::new(),
    }
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
    Ok(resplab_experiment::readback::report_input(
        &mut store,
        &args.db,
        name,
        args.metric.as_deref(),
        options(args),
    )?)
}

fn from_files(args: &ReportArgs) -> anyhow::Result<ReportInput> {
    let metric = args.metric.as_deref();
    // The store is opened only when an input names a stored experiment.
    if args
        .inputs
        .iter()
        .any(|a| InputSpec::parse(a).is_ok_and(|s| matches!(s.location, Location::Stored(_))))
    {
        let mut store = Store::open(&args.db)?;
        return Ok(doc::input::from_files(
            &args.inputs,
            &mut store,
            metric,
            options(args),
        )?);
    }
    Ok(doc::input::from_files(
        &args.inputs,
        &mut NoStore,
        metric,
        options(args),
    )?)
}
