//! `resplab compare`: read result files (or stored experiments), compare every variant
//! with the baseline, print the chosen style, and gate CI on regressions.
//!
//! Inputs are `[label=]FILE` as benchstat takes them; the format of each file is detected
//! from its content (see `resplab_results::import`). `[label=]db:NAME` reads a stored
//! experiment from the results database (`--db PATH`, default `./resplab.db`), paired by
//! round; when it comes first, its first variant is the baseline and its declared primary
//! metric and margin are used. Styles:
//! - `resplab` (default): effect %, CI, p, n, MDE and a verdict per (workload, metric);
//!   `--format text|markdown|json|csv`;
//! - `ministat`: ministat's exact output, one block per (workload, metric), with its flags
//!   `-c -A -n -q -s -w -C -d`;
//! - `benchstat`: benchstat's tables (`--format csv` for its CSV).
//!
//! Exit codes: 0 ok; 1 when `--fail-on-regression PCT` finds a metric significantly worse
//! than the baseline by more than PCT (computed with the default method whatever the
//! style); 2 bad input or usage (the message names the file, line or flag).

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use resplab_report::benchstat::{self, BenchstatOptions};
use resplab_report::ministat::{self, MinistatOptions, NamedSet};
use resplab_report::resplab::{self as default_style, ResplabOptions, SummaryOptions};
use resplab_results::import::{
    load_inputs_with, ImportError, InputSpec, Loaded, Location, PlainOptions, StoredSource,
};
use resplab_results::sample::Observation;
use resplab_results::sample::{Direction, SampleSet};
use resplab_stats::ministat::Confidence;
use resplab_store::ExperimentInfo;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Output style.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Style {
    /// Effect with CI, p, n, MDE and a three-way verdict.
    Resplab,
    /// FreeBSD ministat's output, exactly.
    Ministat,
    /// Go benchstat's tables, exactly.
    Benchstat,
}

/// Output format of the resplab style (benchstat: text or csv).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Json,
    Csv,
}

/// Arguments of `resplab compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Inputs: `[label=]FILE` or `[label=]db:NAME`. Files with the same label form one
    /// sample (each resplab run file is one trial). The first label is the baseline.
    #[arg(required = true, value_name = "[label=]FILE")]
    pub inputs: Vec<String>,
    /// Output style.
    #[arg(long, value_enum, default_value_t = Style::Resplab)]
    pub style: Style,
    /// Label to compare against (default: the first input's label).
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// Equivalence margin in percent: a CI inside ±PCT is reported as EQUIVALENT.
    #[arg(long, value_name = "PCT")]
    pub margin: Option<f64>,
    /// Confidence level in percent (ministat: one of 80, 90, 95, 98, 99, 99.5).
    #[arg(short = 'c', long, value_name = "PCT", default_value_t = 95.0)]
    pub confidence: f64,
    /// Significance level of benchstat's U test.
    #[arg(long, value_name = "ALPHA", default_value_t = 0.05)]
    pub alpha: f64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Exit 1 when any metric is significantly worse than the baseline by more than PCT;
    /// exit 2 when the gate had nothing to judge (the reason is printed).
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<f64>,
    /// Plain numbers (metrics without a direction): higher is better.
    #[arg(long, conflicts_with = "lower_is_better")]
    pub higher_is_better: bool,
    /// Plain numbers (metrics without a direction): lower is better.
    #[arg(long)]
    pub lower_is_better: bool,
    /// ministat -A: statistics only, no plot.
    #[arg(short = 'A')]
    pub no_plot: bool,
    /// ministat -n: summary statistics only, no plot and no test.
    #[arg(short = 'n')]
    pub summary_only: bool,
    /// ministat -q: no legend and no table header.
    #[arg(short = 'q')]
    pub quiet: bool,
    /// ministat -s: mean/median/stddev bars on separate lines.
    #[arg(short = 's')]
    pub separate_bars: bool,
    /// ministat -w: plot width (default 74).
    #[arg(short = 'w', value_name = "WIDTH", default_value_t = 74)]
    pub width: usize,
    /// Pair the i-th file of each label with the i-th file of the others as round i (each
    /// file one trial, run in interleaved order); the comparison is then paired by round.
    #[arg(long)]
    pub paired: bool,
    /// Results database for `db:NAME` inputs (written by `resplab experiment run`).
    #[arg(long, value_name = "PATH", default_value = resplab_store::DEFAULT_DB)]
    pub db: PathBuf,
    /// Plain-number files: column to read, from 1 (reads every input as plain numbers).
    #[arg(short = 'C', value_name = "COLUMN")]
    pub column: Option<usize>,
    /// Plain-number files: field delimiter characters (default space and tab; reads every
    /// input as plain numbers).
    #[arg(short = 'd', value_name = "DELIMS")]
    pub delimiters: Option<String>,
}

/// Runs `resplab compare`.
///
/// # Errors
/// Bad flags or inputs; the message names the flag, file and line.
pub fn run(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let (text, gate) = execute(&args)?;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(e).context("writing the comparison to standard output");
        }
    }
    Ok(match gate {
        Gate::Regression => ExitCode::from(1),
        Gate::NothingJudged(why) => {
            eprintln!(
                "resplab: --fail-on-regression had nothing to judge, so it cannot pass:\n{}",
                why.iter()
                    .map(|w| format!("  {w}\n"))
                    .collect::<String>()
                    .trim_end()
            );
            ExitCode::from(2)
        }
        Gate::Off | Gate::Passed => ExitCode::SUCCESS,
    })
}

/// What the regression gate decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// No `--fail-on-regression`.
    Off,
    /// Judged rows, none a regression beyond the limit.
    Passed,
    /// A significant regression beyond the limit.
    Regression,
    /// Nothing the gate could judge, with why (one line per reason).
    NothingJudged(Vec<String>),
}

/// Computes the output text and what the regression gate decided, without printing.
///
/// # Errors
/// As [`run`].
pub fn execute(args: &CompareArgs) -> anyhow::Result<(String, Gate)> {
    check_flags(args)?;
    let specs = args
        .inputs
        .iter()
        .map(|a| InputSpec::parse(a))
        .collect::<Result<Vec<_>, _>>()?;
    let mut store = LazyStore {
        path: args.db.clone(),
        store: None,
    };
    let mut loaded = load(args, &specs, &mut store)?;
    let set = samples(args, &mut loaded);
    // A stored experiment given first supplies the baseline (its first variant), the
    // primary metric of the summary and the equivalence margin it declared.
    let stored_first = match specs.first().map(|s| (&s.location, s)) {
        Some((Location::Stored(name), spec)) => match store.store.as_ref() {
            Some(st) => Some((st.experiment(name)?, spec)),
            None => None,
        },
        _ => None,
    };
    let baseline = baseline(args, &loaded.labels, stored_first.as_ref())?;
    let (ropts, sopts) = options(args, &specs, &store, stored_first.as_ref())?;
    // The default comparison is computed only when it is printed or gates the exit code.
    let report = (args.style == Style::Resplab || args.fail_on_regression.is_some())
        .then(|| default_style::compare_with(&set, &baseline, &ropts, &sopts));
    let gate = match (&report, args.fail_on_regression) {
        (Some(r), Some(p)) => gate(r, &set, &loaded.labels, p),
        _ => Gate::Off,
    };
    let mut text = match args.style {
        Style::Resplab => {
            let report = report
                .unwrap_or_else(|| default_style::compare_with(&set, &baseline, &ropts, &sopts));
            let mut text = render_resplab(args.format, &report);
            if args.format == Format::Text {
                text.push_str(&sensitivity(&report, &specs, &mut store)?);
            }
            text
        }
        Style::Ministat => render_ministat(args, &set, &baseline)?,
        Style::Benchstat => render_benchstat(args, &mut loaded, &baseline)?,
    };
    add_notes(args, &loaded.notes, &mut text);
    // The process ends right after printing: releasing millions of observations one by
    // one would cost more than comparing them, so their memory goes back with the process.
    std::mem::forget(set);
    std::mem::forget(loaded);
    Ok((text, gate))
}

/// The checks of the flags that clap cannot express, in the order they are reported.
fn check_flags(args: &CompareArgs) -> anyhow::Result<()> {
    if let Some(c) = args.column {
        if c == 0 {
            bail!("-C: expected a column number from 1, found 0");
        }
    }
    if let Some(d) = &args.delimiters {
        if d.is_empty() {
            bail!("-d: expected at least one delimiter character, found an empty string");
        }
    }
    crate::args::check_confidence_and_margin(args.confidence, args.margin)?;
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        bail!(
            "--alpha: expected a significance level between 0 and 1 (e.g. 0.05), found {}",
            args.alpha
        );
    }
    if let Some(p) = args.fail_on_regression {
        if !(p >= 0.0 && p.is_finite()) {
            bail!("--fail-on-regression: expected a percentage ≥ 0, found {p}");
        }
    }
    Ok(())
}

/// Reads every input, applies the declared direction to metrics that have none, and
/// adds the phase notes of stored phased experiments.
fn load(args: &CompareArgs, specs: &[InputSpec], store: &mut LazyStore) -> anyhow::Result<Loaded> {
    let plain = PlainOptions {
        column: args.column.unwrap_or(1),
        delimiters: args
            .delimiters
            .as_deref()
            .unwrap_or(" \t")
            .as_bytes()
            .to_vec(),
        force: args.column.is_some() || args.delimiters.is_some(),
    };
    let mut loaded = load_inputs_with(specs, &plain, store, args.paired)?;
    if args.higher_is_better {
        loaded
            .observations
            .direct_unknown(Direction::HigherIsBetter);
    } else if args.lower_is_better {
        loaded.observations.direct_unknown(Direction::LowerIsBetter);
    }
    // A phased experiment says that its variants were not interleaved, and in what
    // order each phase ran.
    for s in specs {
        if let (Location::Stored(name), Some(st)) = (&s.location, store.store.as_ref()) {
            for n in st.phase_notes(name)? {
                loaded.notes.push(format!("db:{name}: {n}"));
            }
        }
    }
    Ok(loaded)
}

/// The samples every style but benchstat works on (and the regression gate); the
/// observation list is dropped when no later step reads it.
fn samples(args: &CompareArgs, loaded: &mut Loaded) -> SampleSet {
    // benchstat's layout works on the observations themselves; the samples are built
    // for every other style and for the regression gate.
    let set = if args.style != Style::Benchstat || args.fail_on_regression.is_some() {
        SampleSet::from_observations(loaded.observations.iter())
    } else {
        SampleSet::default()
    };
    if args.style != Style::Benchstat {
        // Only benchstat's layout reads the observations again: the rest works on the
        // samples, so the list goes now (a long per-request log is mostly this list).
        loaded.observations = Default::default();
    }
    set
}

/// The baseline label: `--baseline`, else a stored experiment's first variant, else the
/// first input.
fn baseline(
    args: &CompareArgs,
    labels: &[String],
    stored_first: Option<&(ExperimentInfo, &InputSpec)>,
) -> anyhow::Result<String> {
    Ok(match &args.baseline {
        Some(b) => {
            if !labels.iter().any(|l| l == b) {
                bail!(
                    "--baseline: expected one of the input labels ({}), found `{b}`",
                    labels.join(", ")
                );
            }
            b.clone()
        }
        None => match stored_first {
            Some((info, spec)) => {
                let first = info.variants.first().cloned().unwrap_or_default();
                match (spec.explicit_label, info.variants.len()) {
                    (false, _) => first,
                    (true, 1) => spec.label.clone(),
                    (true, _) => format!("{}/{first}", spec.label),
                }
            }
            None => labels.first().cloned().unwrap_or_default(),
        },
    })
}

/// The options of the default comparison and its summary, from the flags and from a
/// stored experiment given first.
fn options(
    args: &CompareArgs,
    specs: &[InputSpec],
    store: &LazyStore,
    stored_first: Option<&(ExperimentInfo, &InputSpec)>,
) -> anyhow::Result<(ResplabOptions, SummaryOptions)> {
    // Variants of a stored phased experiment that did not run with its baseline.
    let mut not_interleaved = Vec::new();
    for s in specs {
        if let (Location::Stored(name), Some(st)) = (&s.location, store.store.as_ref()) {
            not_interleaved.extend(st.not_interleaved_variants(name)?);
        }
    }
    let ropts = ResplabOptions {
        not_interleaved,
        confidence: args.confidence / 100.0,
        margin_pct: args.margin.or_else(|| {
            stored_first
                .and_then(|(info, _)| info.margin)
                .map(|m| m * 100.0)
        }),
    };
    // A stored experiment's bootstrap is seeded with the experiment's seed, as in
    // `resplab report`, so both show the same interval.
    let sopts = SummaryOptions {
        primary_metric: stored_first.map(|(info, _)| info.primary_metric.clone()),
        seed: stored_first.map_or(SummaryOptions::default().seed, |(info, _)| info.seed),
    };
    Ok((ropts, sopts))
}

/// What `--fail-on-regression P` decides from the default comparison; what it could not
/// judge is noted on standard error when something else was judged.
fn gate(report: &default_style::Report, set: &SampleSet, labels: &[String], p: f64) -> Gate {
    let coverage = default_style::gate_coverage(report, set, labels);
    if coverage.is_empty() {
        return Gate::NothingJudged(coverage.not_judged);
    }
    for n in &coverage.not_judged {
        eprintln!("resplab: note: not judged by --fail-on-regression: {n}");
    }
    if default_style::has_regression(report, p) {
        Gate::Regression
    } else {
        Gate::Passed
    }
}

fn render_resplab(format: Format, report: &default_style::Report) -> String {
    match format {
        Format::Text => default_style::render_text(report),
        Format::Markdown => default_style::render_markdown(report),
        Format::Json => default_style::render_json(report),
        Format::Csv => default_style::render_csv(report),
    }
}

fn render_benchstat(
    args: &CompareArgs,
    loaded: &mut Loaded,
    baseline: &str,
) -> anyhow::Result<String> {
    let bopts = BenchstatOptions {
        confidence: args.confidence / 100.0,
        alpha: args.alpha,
    };
    // The baseline label goes first; the list is handed over and dropped once
    // benchstat's tables are built.
    let obs = std::mem::take(&mut loaded.observations);
    Ok(match args.format {
        Format::Csv => {
            let (csv, warnings) = benchstat::render_csv_owned(obs, baseline, &bopts)?;
            if !warnings.is_empty() {
                eprint!("{warnings}");
            }
            csv
        }
        Format::Text => benchstat::render_text_owned(obs, baseline, &bopts)?,
        f => bail!("--format: benchstat style prints text or csv, found {f:?}"),
    })
}

/// The verdict's sensitivity certificate, after the default text report: what the
/// comparison could detect, how long a stored experiment took, and the error rates
/// `calibrate --validate` measured on this host; for a run until decided, first its
/// anytime-valid verdict (the table's fixed-sample intervals do not allow for its looks).
fn sensitivity(
    report: &default_style::Report,
    specs: &[InputSpec],
    store: &mut LazyStore,
) -> anyhow::Result<String> {
    use resplab_experiment::certificate;
    use resplab_report::verdict::{
        certificate_line, sequential_line, stop_sentence, SEQUENTIAL_NOTE,
    };
    if store.store.is_none() && store.path.is_file() {
        store.store = resplab_store::Store::open(&store.path).ok();
    }
    let stored = match (specs.first().map(|s| &s.location), store.store.as_ref()) {
        (Some(Location::Stored(name)), Some(st)) => Some((st, name.as_str())),
        _ => None,
    };
    let mut text = String::from("\n");
    let cert = match stored {
        Some((st, name)) => certificate::of_stored(st, name)?,
        None => None,
    };
    if let Some((st, name)) = stored {
        if let Some((stop, a)) = certificate::sequential_of_stored(st, name)? {
            let higher =
                resplab_store::metrics::higher_is_better(&st.experiment(name)?.primary_metric);
            let margin = st.experiment(name)?.margin;
            text.push_str(&format!("note: {SEQUENTIAL_NOTE}:\n"));
            if let Some(stop) = stop {
                text.push_str(&format!(
                    "  {}\n",
                    stop_sentence(&stop.reason, stop.rounds as usize, stop.elapsed_sec)
                ));
            }
            for c in &a.comparisons {
                let line =
                    sequential_line(&c.workload, &c.variant, &c.look, c.decision, higher, margin);
                text.push_str(&format!("  {line}\n"));
            }
        }
    }
    let line = match cert {
        Some(c) => certificate_line(
            c.mde_pct,
            c.rounds,
            c.elapsed_sec,
            c.validation.as_ref().map(|(_, v)| v),
        ),
        None => {
            let metric = report.rows.first().map(|r| r.metric.as_str());
            let (mde, n) = report.sensitivity(metric);
            let validation = store.store.as_ref().and_then(|s| {
                certificate::newest_validation_for(
                    s,
                    resplab_results::calibration::Method::Rmit,
                    metric.unwrap_or("ops_per_sec"),
                )
            });
            certificate_line(mde, n, None, validation.as_ref().map(|(_, v)| v))
        }
    };
    text.push_str(&line);
    text.push('\n');
    Ok(text)
}

/// The inputs' notes: after the default text report, on standard error otherwise.
fn add_notes(args: &CompareArgs, notes: &[String], text: &mut String) {
    if args.style == Style::Resplab && !notes.is_empty() && args.format == Format::Text {
        text.push_str("\nnotes:\n");
        for n in notes {
            text.push_str(&format!("  {n}\n"));
        }
    } else {
        for n in notes {
            eprintln!("resplab: note: {n}");
        }
    }
}

/// Opens the results database on the first `db:NAME` input, so file-only comparisons
/// never touch (or create) it.
struct LazyStore {
    path: PathBuf,
    store: Option<resplab_store::Store>,
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
            let store =
                resplab_store::Store::open(&self.path).map_err(|e| ImportError::Argument {
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

fn render_ministat(args: &CompareArgs, set: &SampleSet, baseline: &str) -> anyhow::Result<String> {
    let confidence = Confidence::from_percent(args.confidence).map_err(|_| {
        anyhow::anyhow!(
            "-c: ministat supports confidence 80, 90, 95, 98, 99 or 99.5, found {}",
            args.confidence
        )
    })?;
    let opts = MinistatOptions {
        confidence,
        width: args.width,
        separate_bars: args.separate_bars,
        no_plot: args.no_plot,
        summary_only: args.summary_only,
        quiet: args.quiet,
        ..Default::default()
    };
    let mut labels: Vec<&str> = vec![baseline];
    labels.extend(set.labels.iter().map(|l| &**l).filter(|l| *l != baseline));
    let mut groups = Vec::new();
    for w in &set.workloads {
        for m in &set.metrics {
            let sets: Vec<NamedSet> = labels
                .iter()
                .filter_map(|l| {
                    // In input order: ministat's stable sort keeps equal values (0 and
                    // -0) in the order they were read, and its minimum shows it.
                    set.get(w, m, l).map(|s| NamedSet {
                        name: (*l).to_string(),
                        points: s.values.clone(),
                    })
                })
                .collect();
            if !sets.is_empty() {
                groups.push((w.clone(), m.clone(), sets));
            }
        }
    }
    let mut out = String::new();
    let many = groups.len() > 1;
    for (i, (w, m, sets)) in groups.iter().enumerate() {
        if many {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&format!("# {w} {m}\n"));
        }
        let text = ministat::render(sets, &opts).map_err(|e| {
            if many {
                anyhow::anyhow!("{w} {m}: {e}")
            } else {
                anyhow::anyhow!("{e}")
            }
        })?;
        out.push_str(&text);
    }
    Ok(out)
}
