//! `resplab compare` once its inputs are read: the checks of its flags, the baseline,
//! the chosen style (resplab's verdicts, ministat's or benchstat's exact output), the
//! regression gate, the sensitivity certificate under the text report and the inputs'
//! notes.
//!
//! What a stored experiment contributes (its baseline, margin, primary metric and seed,
//! the variants that did not run interleaved, its sequential verdict and certificate,
//! phase notes) arrives as plain values in [`StoredFacts`]: the caller reads the store.
//! Nothing here prints; [`Compared`] holds the text for standard output, the lines for
//! standard error and what the gate decided.

use crate::benchstat::{self, BenchstatError, BenchstatOptions};
use crate::ministat::{self, MinistatOptions, NamedSet};
use crate::resplab::{self as default_style, ResplabOptions, SummaryOptions};
use crate::verdict::{certificate_line, SEQUENTIAL_NOTE};
use resplab_results::calibration::Validation;
use resplab_results::import::Loaded;
use resplab_results::sample::{Direction, SampleSet};
use resplab_stats::ministat::Confidence;
use std::collections::BTreeMap;

/// Output style.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Effect with CI, p, n, MDE and a three-way verdict.
    Resplab,
    /// FreeBSD ministat's output, exactly.
    Ministat,
    /// Go benchstat's tables, exactly.
    Benchstat,
}

/// Output format of the resplab style (benchstat: text or csv).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
    Json,
    Csv,
}

/// The choices of `resplab compare`, as given.
#[derive(Clone, Debug)]
pub struct CompareOptions {
    pub style: Style,
    pub format: Format,
    /// The label to compare against (`--baseline`).
    pub baseline: Option<String>,
    /// Equivalence margin in percent (`--margin`).
    pub margin: Option<f64>,
    /// Confidence level in percent (`-c`).
    pub confidence: f64,
    /// Significance level of benchstat's U test (`--alpha`).
    pub alpha: f64,
    /// `--fail-on-regression PCT`.
    pub fail_on_regression: Option<f64>,
    /// The direction of plain numbers that have none (`--higher-is-better` or
    /// `--lower-is-better`).
    pub direction: Option<Direction>,
    /// ministat's flags: `-A`, `-n`, `-q`, `-s` and `-w`.
    pub no_plot: bool,
    pub summary_only: bool,
    pub quiet: bool,
    pub separate_bars: bool,
    pub width: usize,
}

/// A stored experiment given as the first input: it supplies the baseline (its first
/// variant), the primary metric of the summary, the equivalence margin it declared and
/// the seed of its bootstrap.
#[derive(Clone, Debug, Default)]
pub struct StoredFirst {
    /// The input's label, and whether it was written (`label=db:NAME`).
    pub label: String,
    pub explicit_label: bool,
    /// The experiment's variants, baseline first.
    pub variants: Vec<String>,
    /// Its margin as a fraction.
    pub margin: Option<f64>,
    pub primary_metric: String,
    pub seed: u64,
}

/// What the stored experiments among the inputs add, read by the caller.
#[derive(Clone, Debug, Default)]
pub struct StoredFacts {
    /// The first input, when it is a stored experiment.
    pub first: Option<StoredFirst>,
    /// Variants of a phased experiment that did not run with its baseline.
    pub not_interleaved: Vec<String>,
    /// Notes of phased experiments (in what order each phase ran), added to the inputs'.
    pub phase_notes: Vec<String>,
    /// A run until decided given first: how it stopped and each comparison's
    /// anytime-valid verdict, worded by `verdict`.
    pub sequential: Option<Vec<String>>,
    /// The first stored experiment's sensitivity certificate, worded.
    pub certificate: Option<String>,
    /// The newest `calibrate --validate` result of this host for fixed rounds, per
    /// validated metric, for a certificate worded here from the comparison (it quotes
    /// only the validation of the comparison's own metric).
    pub validation_here: BTreeMap<String, Validation>,
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

/// A finished comparison.
#[derive(Debug)]
pub struct Compared {
    /// For standard output.
    pub text: String,
    /// For standard error, each line ending in a newline.
    pub stderr: String,
    pub gate: Gate,
    /// The samples compared, handed back so that a process about to exit can leave
    /// their memory to the system instead of freeing millions of values one by one.
    pub samples: SampleSet,
}

/// Why a comparison could not be made; every message names the flag or input.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A flag value that cannot be used here.
    #[error("{0}")]
    Flag(String),
    /// ministat could not render a (workload, metric) block.
    #[error("{0}")]
    Ministat(String),
    #[error(transparent)]
    Benchstat(#[from] BenchstatError),
}

/// Checks `-c/--confidence` (a percentage strictly between 0 and 100) and `--margin` (a
/// positive percentage), as `compare` and `report` take them.
///
/// # Errors
/// A message naming the flag, what it expects and what it found.
pub fn check_confidence_and_margin(
    confidence: f64,
    margin: Option<f64>,
) -> Result<(), CompareError> {
    if !(confidence > 0.0 && confidence < 100.0) {
        return Err(CompareError::Flag(format!(
            "--confidence: expected a percentage between 0 and 100, found {confidence}"
        )));
    }
    if let Some(m) = margin {
        if !(m > 0.0 && m.is_finite()) {
            return Err(CompareError::Flag(format!(
                "--margin: expected a positive percentage, found {m}"
            )));
        }
    }
    Ok(())
}

/// The checks of the options that a flag parser cannot express, in the order they are
/// reported, with `-C` and `-d` of plain-number files.
///
/// # Errors
/// The first flag that is out of range.
pub fn check(
    opts: &CompareOptions,
    column: Option<usize>,
    delimiters: Option<&str>,
) -> Result<(), CompareError> {
    if column == Some(0) {
        return Err(CompareError::Flag(
            "-C: expected a column number from 1, found 0".into(),
        ));
    }
    if delimiters == Some("") {
        return Err(CompareError::Flag(
            "-d: expected at least one delimiter character, found an empty string".into(),
        ));
    }
    check_confidence_and_margin(opts.confidence, opts.margin)?;
    if !(opts.alpha > 0.0 && opts.alpha < 1.0) {
        return Err(CompareError::Flag(format!(
            "--alpha: expected a significance level between 0 and 1 (e.g. 0.05), found {}",
            opts.alpha
        )));
    }
    if let Some(p) = opts.fail_on_regression {
        if !(p >= 0.0 && p.is_finite()) {
            return Err(CompareError::Flag(format!(
                "--fail-on-regression: expected a percentage ≥ 0, found {p}"
            )));
        }
    }
    Ok(())
}

/// Compares every label of `loaded` with the baseline in the chosen style.
///
/// # Errors
/// An unknown `--baseline`, a confidence ministat does not support, a format the style
/// cannot print, or a block that cannot be rendered.
pub fn compare(
    loaded: &mut Loaded,
    opts: &CompareOptions,
    facts: &StoredFacts,
) -> Result<Compared, CompareError> {
    if let Some(d) = opts.direction {
        loaded.observations.direct_unknown(d);
    }
    loaded.notes.extend(facts.phase_notes.iter().cloned());
    let set = samples(opts, loaded);
    let baseline = baseline(opts, &loaded.labels, facts.first.as_ref())?;
    let (ropts, sopts) = options(opts, facts);
    let mut stderr = String::new();
    // The default comparison is computed only when it is printed or gates the exit code.
    let report = (opts.style == Style::Resplab || opts.fail_on_regression.is_some())
        .then(|| default_style::compare_with(&set, &baseline, &ropts, &sopts));
    let gate = match (&report, opts.fail_on_regression) {
        (Some(r), Some(p)) => gate(r, &set, &loaded.labels, p, &mut stderr),
        _ => Gate::Off,
    };
    let mut text = match opts.style {
        Style::Resplab => {
            let report = report
                .unwrap_or_else(|| default_style::compare_with(&set, &baseline, &ropts, &sopts));
            let mut text = render_resplab(opts.format, &report);
            if opts.format == Format::Text {
                text.push_str(&sensitivity(&report, facts));
            }
            text
        }
        Style::Ministat => render_ministat(opts, &set, &baseline)?,
        Style::Benchstat => render_benchstat(opts, loaded, &baseline, &mut stderr)?,
    };
    add_notes(opts, &loaded.notes, &mut text, &mut stderr);
    Ok(Compared {
        text,
        stderr,
        gate,
        samples: set,
    })
}

/// Whether the default text report is printed, the only output that carries the
/// sensitivity certificate (so the caller reads what it needs only then).
pub fn shows_sensitivity(opts: &CompareOptions) -> bool {
    opts.style == Style::Resplab && opts.format == Format::Text
}

/// The samples every style but benchstat works on (and the regression gate); the
/// observation list is dropped when no later step reads it.
fn samples(opts: &CompareOptions, loaded: &mut Loaded) -> SampleSet {
    // benchstat's layout works on the observations themselves; the samples are built
    // for every other style and for the regression gate.
    let set = if opts.style != Style::Benchstat || opts.fail_on_regression.is_some() {
        SampleSet::from_observations(loaded.observations.iter())
    } else {
        SampleSet::default()
    };
    if opts.style != Style::Benchstat {
        // Only benchstat's layout reads the observations again: the rest works on the
        // samples, so the list goes now (a long per-request log is mostly this list).
        loaded.observations = Default::default();
    }
    set
}

/// The baseline label: `--baseline`, else a stored experiment's first variant, else the
/// first input.
fn baseline(
    opts: &CompareOptions,
    labels: &[String],
    stored_first: Option<&StoredFirst>,
) -> Result<String, CompareError> {
    Ok(match &opts.baseline {
        Some(b) => {
            if !labels.iter().any(|l| l == b) {
                return Err(CompareError::Flag(format!(
                    "--baseline: expected one of the input labels ({}), found `{b}`",
                    labels.join(", ")
                )));
            }
            b.clone()
        }
        None => match stored_first {
            Some(first) => {
                let variant = first.variants.first().cloned().unwrap_or_default();
                match (first.explicit_label, first.variants.len()) {
                    (false, _) => variant,
                    (true, 1) => first.label.clone(),
                    (true, _) => format!("{}/{variant}", first.label),
                }
            }
            None => labels.first().cloned().unwrap_or_default(),
        },
    })
}

/// The options of the default comparison and its summary, from the flags and from a
/// stored experiment given first.
fn options(opts: &CompareOptions, facts: &StoredFacts) -> (ResplabOptions, SummaryOptions) {
    let first = facts.first.as_ref();
    let ropts = ResplabOptions {
        not_interleaved: facts.not_interleaved.clone(),
        confidence: opts.confidence / 100.0,
        margin_pct: opts
            .margin
            .or_else(|| first.and_then(|f| f.margin).map(|m| m * 100.0)),
    };
    // A stored experiment's bootstrap is seeded with the experiment's seed, as in
    // `resplab report`, so both show the same interval.
    let sopts = SummaryOptions {
        primary_metric: first.map(|f| f.primary_metric.clone()),
        seed: first.map_or(SummaryOptions::default().seed, |f| f.seed),
    };
    (ropts, sopts)
}

/// What `--fail-on-regression P` decides from the default comparison; what it could not
/// judge is noted when something else was judged.
fn gate(
    report: &default_style::Report,
    set: &SampleSet,
    labels: &[String],
    p: f64,
    stderr: &mut String,
) -> Gate {
    let coverage = default_style::gate_coverage(report, set, labels);
    if coverage.is_empty() {
        return Gate::NothingJudged(coverage.not_judged);
    }
    for n in &coverage.not_judged {
        stderr.push_str(&format!(
            "resplab: note: not judged by --fail-on-regression: {n}\n"
        ));
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
    opts: &CompareOptions,
    loaded: &mut Loaded,
    baseline: &str,
    stderr: &mut String,
) -> Result<String, CompareError> {
    let bopts = BenchstatOptions {
        confidence: opts.confidence / 100.0,
        alpha: opts.alpha,
    };
    // The baseline label goes first; the list is handed over and dropped once
    // benchstat's tables are built.
    let obs = std::mem::take(&mut loaded.observations);
    Ok(match opts.format {
        Format::Csv => {
            let (csv, warnings) = benchstat::render_csv_owned(obs, baseline, &bopts)?;
            stderr.push_str(&warnings);
            csv
        }
        Format::Text => benchstat::render_text_owned(obs, baseline, &bopts)?,
        f => {
            return Err(CompareError::Flag(format!(
                "--format: benchstat style prints text or csv, found {f:?}"
            )))
        }
    })
}

/// The verdict's sensitivity certificate, after the default text report: what the
/// comparison could detect, how long a stored experiment took, and the error rates
/// `calibrate --validate` measured on this host; for a run until decided, first its
/// anytime-valid verdict (the table's fixed-sample intervals do not allow for its looks).
fn sensitivity(report: &default_style::Report, facts: &StoredFacts) -> String {
    let mut text = String::from("\n");
    if let Some(lines) = &facts.sequential {
        text.push_str(&format!("note: {SEQUENTIAL_NOTE}:\n"));
        for line in lines {
            text.push_str(&format!("  {line}\n"));
        }
    }
    let line = facts.certificate.clone().unwrap_or_else(|| {
        let metric = report.rows.first().map(|r| r.metric.as_str());
        let (mde, n) = report.sensitivity(metric);
        let validation = facts.validation_here.get(metric.unwrap_or("ops_per_sec"));
        // A comparison of stored results is judged as fixed rounds.
        certificate_line(
            mde,
            n,
            None,
            validation,
            resplab_results::calibration::Sought::RMIT,
        )
    });
    text.push_str(&line);
    text.push('\n');
    text
}

/// The inputs' notes: after the default text report, on standard error otherwise.
fn add_notes(opts: &CompareOptions, notes: &[String], text: &mut String, stderr: &mut String) {
    if shows_sensitivity(opts) && !notes.is_empty() {
        text.push_str("\nnotes:\n");
        for n in notes {
            text.push_str(&format!("  {n}\n"));
        }
    } else {
        for n in notes {
            stderr.push_str(&format!("resplab: note: {n}\n"));
        }
    }
}

fn render_ministat(
    opts: &CompareOptions,
    set: &SampleSet,
    baseline: &str,
) -> Result<String, CompareError> {
    let confidence = Confidence::from_percent(opts.confidence).map_err(|_| {
        CompareError::Flag(format!(
            "-c: ministat supports confidence 80, 90, 95, 98, 99 or 99.5, found {}",
            opts.confidence
        ))
    })?;
    let mopts = MinistatOptions {
        confidence,
        width: opts.width,
        separate_bars: opts.separate_bars,
        no_plot: opts.no_plot,
        summary_only: opts.summary_only,
        quiet: opts.quiet,
        ..Default::default()
    };
    let groups = ministat_groups(set, baseline);
    let mut out = String::new();
    let many = groups.len() > 1;
    for (i, (w, m, sets)) in groups.iter().enumerate() {
        if many {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&format!("# {w} {m}\n"));
        }
        let text = ministat::render(sets, &mopts).map_err(|e| {
            CompareError::Ministat(if many {
                format!("{w} {m}: {e}")
            } else {
                e.to_string()
            })
        })?;
        out.push_str(&text);
    }
    Ok(out)
}

/// One ministat block per (workload, metric) that has data: the baseline's set first.
fn ministat_groups(set: &SampleSet, baseline: &str) -> Vec<(String, String, Vec<NamedSet>)> {
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
                groups.push((w.to_string(), m.to_string(), sets));
            }
        }
    }
    groups
}
