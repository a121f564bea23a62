//! Importers: foreign benchmark outputs and resplab run files become [`Observation`]s.
//!
//! `resplab compare` accepts inputs the way benchstat does: `label=path`, or a bare path
//! whose label is the path exactly as typed (which is also how ministat names its data
//! sets). Several inputs with the same label form one sample: each resplab run file is
//! one trial, and the trials of one label are compared with those of another.
//!
//! The format of a file is detected from its content, never from its name:
//!
//! | content | importer |
//! |---|---|
//! | a JSON object with `schema_version` and `commands` | [`resplab`] (`resplab bench --json`) |
//! | a JSON object with `"results"` entries holding `"command"` and `"mean"` | [`hyperfine`] (`--export-json`) |
//! | a JSON object with `"run information"` or `"ALL STATS"` / `"RUN #k RESULTS"` | [`memtier`] (`--json-out-file`) |
//! | a line `Value Percentile TotalCount 1/(1-Percentile)` | [`hdr_text`] (HdrHistogram percentile distribution) |
//! | a legend `"StartTimestamp",…` or `#[Histogram log format version …]` | [`hdr_log`] (HdrHistogram interval log) |
//! | a line `Type Ops/sec …` (a memtier result table) | [`memtier_text`] (memtier's standard output) |
//! | a line `"test","rps",…` | [`redis_benchmark`] `--csv` |
//! | lines `NAME: N requests per second…` or `====== NAME ======` sections | [`redis_benchmark`] `-q` / full text |
//! | lines `BenchmarkName[-N] <iterations> <value> <unit> …` | [`gobench`] (`go test -bench`) |
//! | anything else | [`plain`]: one number per line, as ministat reads it |
//!
//! Importers are pure functions of bytes; only [`load_input`] touches the file system.
//! A stored experiment (`db:NAME`) is loaded through the [`StoredSource`] trait, so the
//! comparison does not care where its [`Observations`] came from.

pub mod gobench;
pub mod hdr;
pub mod hdr_log;
pub mod hdr_text;
pub mod hyperfine;
pub mod memtier;
pub mod memtier_text;
pub mod plain;
pub mod redis_benchmark;
pub mod resplab;

use crate::sample::{Metric, Observation, Observations, Origin};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

pub use plain::PlainOptions;

/// A failure to read or understand an input. Every message names the input, and the
/// line when the format is line oriented.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file could not be read.
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// A line did not have the expected form.
    #[error("{file}:{line}: {message}")]
    Line {
        file: String,
        line: u32,
        message: String,
    },
    /// The file as a whole is not usable (wrong JSON shape, no data).
    #[error("{file}: {message}")]
    File { file: String, message: String },
    /// The input argument itself is malformed.
    #[error("input `{arg}`: {message}")]
    Argument { arg: String, message: String },
}

/// Formats the importers understand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `resplab bench --json` run record.
    Resplab,
    /// memtier_benchmark `--json-out-file`.
    Memtier,
    /// redis-benchmark `--csv`.
    RedisBenchmarkCsv,
    /// redis-benchmark `-q`.
    RedisBenchmarkQuiet,
    /// redis-benchmark full text report.
    RedisBenchmarkText,
    /// `go test -bench` output.
    GoBench,
    /// One number per line (ministat).
    Plain,
    /// hyperfine `--export-json`.
    Hyperfine,
    /// HdrHistogram percentile distribution (`outputPercentileDistribution` text).
    HdrPercentiles,
    /// HdrHistogram interval log (`.hlog`, memtier's `.hgrm`).
    HdrLog,
    /// memtier_benchmark's result tables on standard output.
    MemtierText,
}

impl Format {
    /// Human name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Resplab => "resplab run JSON",
            Format::Memtier => "memtier JSON",
            Format::RedisBenchmarkCsv => "redis-benchmark CSV",
            Format::RedisBenchmarkQuiet => "redis-benchmark -q text",
            Format::RedisBenchmarkText => "redis-benchmark text report",
            Format::GoBench => "go test -bench output",
            Format::Plain => "plain numbers",
            Format::Hyperfine => "hyperfine JSON",
            Format::HdrPercentiles => "HdrHistogram percentile distribution",
            Format::HdrLog => "HdrHistogram interval log",
            Format::MemtierText => "memtier stdout table",
        }
    }
}

/// One command-line input: `label=path`, `path`, `label=db:NAME` or `db:NAME`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputSpec {
    /// The label the values are reported under.
    pub label: String,
    /// What to read.
    pub location: Location,
    /// True when the label was given as `label=`.
    pub explicit_label: bool,
}

/// Where an input's values come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A file (or `-` for standard input, read by the caller).
    Path(String),
    /// A stored experiment.
    Stored(String),
}

impl InputSpec {
    /// Parses an input argument.
    ///
    /// A bare argument is its own label. `label=rest` labels `rest`; an argument whose
    /// text before `=` is empty is rejected, and so is one whose path is empty.
    ///
    /// # Errors
    /// [`ImportError::Argument`] when the label or the path is empty.
    pub fn parse(arg: &str) -> Result<InputSpec, ImportError> {
        let bad = |message: &str| ImportError::Argument {
            arg: arg.to_string(),
            message: message.to_string(),
        };
        let (label, rest, explicit_label) = match arg.split_once('=') {
            Some((l, r)) => {
                if l.is_empty() {
                    return Err(bad("expected `label=path`, found an empty label"));
                }
                (l.to_string(), r, true)
            }
            None => (arg.to_string(), arg, false),
        };
        if rest.is_empty() {
            return Err(bad("expected a path after `=`, found nothing"));
        }
        let location = match rest.strip_prefix("db:") {
            Some("") => return Err(bad("expected `db:NAME`, found an empty name")),
            Some(name) => Location::Stored(name.to_string()),
            None => Location::Path(rest.to_string()),
        };
        Ok(InputSpec {
            label,
            location,
            explicit_label,
        })
    }
}

/// What an importer produced from one input.
#[derive(Clone, Debug, Default)]
pub struct Imported {
    /// The values, in the order they were read.
    pub observations: Observations,
    /// Things the reader should know (sections skipped, values flagged).
    pub notes: Vec<String>,
    /// The detected format.
    pub format: Option<Format>,
    /// Latency histograms the output carried: memtier's JSON per request type as written,
    /// HdrHistogram files' as rebuilt or summed (see [`hdr`]).
    pub histograms: Vec<ForeignHistogram>,
}

/// A latency histogram a tool's output carried: as the tool wrote it (memtier JSON), or
/// rebuilt from its file in nanoseconds (HdrHistogram percentile text, interval logs).
#[derive(Clone, Debug, PartialEq)]
pub struct ForeignHistogram {
    /// The request type it belongs to (the workload of its observations).
    pub workload: String,
    /// HdrHistogram V2 encoding (plain or compressed), base64.
    pub hdr_base64: String,
    /// Nanoseconds per unit of its values (memtier: microseconds, 1,000).
    pub unit_ns: u64,
    /// True for the histogram of all request types together (memtier's `Totals`, the
    /// `ALL` of an HdrHistogram file without tags).
    pub total: bool,
}

/// Source of stored experiments (`db:NAME` inputs).
pub trait StoredSource {
    /// The observations of stored experiment `name`, labelled by its variants. When the
    /// input carried an explicit label, `label` is it and replaces the variant name for
    /// a single-variant selection.
    ///
    /// # Errors
    /// Any error that names the experiment and what went wrong.
    fn load(&mut self, name: &str, label: Option<&str>) -> Result<Vec<Observation>, ImportError>;
}

/// A [`StoredSource`] for builds without a store: every `db:` input is an error.
#[derive(Debug, Default)]
pub struct NoStore;

impl StoredSource for NoStore {
    fn load(&mut self, name: &str, _label: Option<&str>) -> Result<Vec<Observation>, ImportError> {
        Err(ImportError::Argument {
            arg: format!("db:{name}"),
            message: "stored experiments need a results database (give --db PATH); none is open"
                .to_string(),
        })
    }
}

/// Interns the strings importers hand out, so equal labels, workloads and metrics share
/// one allocation.
#[derive(Debug, Default)]
pub struct Interner {
    strs: HashMap<String, Arc<str>>,
    metrics: HashMap<Metric, Arc<Metric>>,
}

impl Interner {
    /// The shared copy of `s`.
    pub fn str(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.strs.get(s) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(s);
        self.strs.insert(s.to_string(), a.clone());
        a
    }

    /// The shared copy of `m`.
    pub fn metric(&mut self, m: Metric) -> Arc<Metric> {
        if let Some(a) = self.metrics.get(&m) {
            return a.clone();
        }
        let a = Arc::new(m.clone());
        self.metrics.insert(m, a.clone());
        a
    }
}

/// Context handed to every importer: the label, the file name to cite, and the interner.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub label: Arc<str>,
    pub file: Arc<str>,
    pub interner: &'a mut Interner,
}

impl Ctx<'_> {
    /// A new observation of this input.
    pub fn observation(
        &mut self,
        workload: &str,
        metric: &Arc<Metric>,
        value: f64,
        line: Option<u32>,
    ) -> Observation {
        Observation {
            label: self.label.clone(),
            workload: self.interner.str(workload),
            metric: metric.clone(),
            value,
            round: None,
            trial: 0,
            origin: Origin {
                file: self.file.clone(),
                line,
            },
            config: None,
            flag: None,
        }
    }

    pub(crate) fn line_error(&self, line: u32, message: impl Into<String>) -> ImportError {
        ImportError::Line {
            file: self.file.to_string(),
            line,
            message: message.into(),
        }
    }

    pub(crate) fn file_error(&self, message: impl Into<String>) -> ImportError {
        ImportError::File {
            file: self.file.to_string(),
            message: message.into(),
        }
    }
}

/// Detects the format of `bytes`.
pub fn detect(bytes: &[u8]) -> Format {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(1 << 16)]);
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') {
        // memtier's JSON as `resplab memtier` writes it carries resplab's records under
        // one extra key; memtier's own top-level keys decide.
        if trimmed.contains("\"run information\"") && trimmed.contains("\"configuration\"") {
            return Format::Memtier;
        }
        if trimmed.contains("\"schema_version\"") && trimmed.contains("\"commands\"") {
            return Format::Resplab;
        }
        if hyperfine::looks_like(trimmed) {
            return Format::Hyperfine;
        }
        return Format::Memtier;
    }
    let mut saw_bench = false;
    for raw in text.split(['\n', '\r']) {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if hdr_text::is_header(line) {
            return Format::HdrPercentiles;
        }
        if hdr_log::is_marker(line) {
            return Format::HdrLog;
        }
        if memtier_text::is_header(line) {
            return Format::MemtierText;
        }
        if line.starts_with("\"test\",\"rps\"") {
            return Format::RedisBenchmarkCsv;
        }
        if line.starts_with("====== ") && line.ends_with(" ======") {
            return Format::RedisBenchmarkText;
        }
        if redis_benchmark::parse_quiet_line(line).is_some() {
            return Format::RedisBenchmarkQuiet;
        }
        if gobench::is_result_line(line) {
            saw_bench = true;
        }
    }
    if saw_bench {
        return Format::GoBench;
    }
    Format::Plain
}

/// Imports one file's bytes, detecting the format.
///
/// # Errors
/// [`ImportError`] naming the file and, for line formats, the line.
pub fn import_bytes(
    bytes: &[u8],
    ctx: &mut Ctx<'_>,
    plain: &PlainOptions,
) -> Result<Imported, ImportError> {
    let format = if plain.force {
        Format::Plain
    } else {
        detect(bytes)
    };
    let mut imported = match format {
        Format::Resplab => resplab::import(bytes, ctx)?,
        Format::Memtier => memtier::import(bytes, ctx)?,
        Format::RedisBenchmarkCsv => redis_benchmark::import_csv(bytes, ctx)?,
        Format::RedisBenchmarkQuiet | Format::RedisBenchmarkText => {
            redis_benchmark::import_text(bytes, ctx)?
        }
        Format::GoBench => gobench::import(bytes, ctx)?,
        Format::Plain => plain::import(bytes, ctx, plain)?,
        Format::Hyperfine => hyperfine::import(bytes, ctx)?,
        Format::HdrPercentiles => hdr_text::import(bytes, ctx)?,
        Format::HdrLog => hdr_log::import(bytes, ctx)?,
        Format::MemtierText => memtier_text::import(bytes, ctx)?,
    };
    imported.format = Some(format);
    Ok(imported)
}

/// Imports `bytes` that are expected to be in `format` (a command workload's declared
/// output format). The content still decides between the variants of one tool's output
/// (redis-benchmark CSV, `-q` or full text), so the same bytes give the same values as
/// when `compare` reads them from a file.
///
/// # Errors
/// [`ImportError::File`] when the content is of another format (naming the one it looks
/// like), or the importer's own error.
pub fn import_as(
    bytes: &[u8],
    ctx: &mut Ctx<'_>,
    format: Format,
    plain: &PlainOptions,
) -> Result<Imported, ImportError> {
    if format == Format::Plain {
        let forced = PlainOptions {
            force: true,
            ..plain.clone()
        };
        return import_bytes(bytes, ctx, &forced);
    }
    let found = detect(bytes);
    let family = |f: Format| match f {
        Format::RedisBenchmarkCsv | Format::RedisBenchmarkQuiet | Format::RedisBenchmarkText => {
            Format::RedisBenchmarkText
        }
        other => other,
    };
    if family(found) != family(format) {
        return Err(ctx.file_error(format!(
            "expected {} output, found what looks like {}",
            format.name(),
            found.name()
        )));
    }
    import_bytes(bytes, ctx, plain)
}

/// Everything read from all inputs of one comparison.
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    /// All observations, trial indices numbered per (label, workload, metric).
    pub observations: Observations,
    /// Notes from the importers, each prefixed with its file.
    pub notes: Vec<String>,
    /// Labels in the order the inputs named them.
    pub labels: Vec<String>,
}

/// Loads every input in order. Files are read from disk (`-` is standard input);
/// `db:NAME` inputs come from `store`. Inputs sharing a label form one sample, with
/// trial indices continuing across files.
///
/// # Errors
/// The first input that cannot be read or parsed.
pub fn load_inputs(
    specs: &[InputSpec],
    plain: &PlainOptions,
    store: &mut dyn StoredSource,
) -> Result<Loaded, ImportError> {
    load_inputs_with(specs, plain, store, false)
}

/// As [`load_inputs`]; with `pair_files`, the i-th file of each label (counted from 0 in
/// the order given) is round i, so the comparison pairs the i-th files of two labels
/// (the files of one label must then hold one value per workload and metric each).
/// Labels with different numbers of files get a note; their extra files have no
/// partner. Stored experiments keep their own rounds.
///
/// # Errors
/// The first input that cannot be read or parsed.
pub fn load_inputs_with(
    specs: &[InputSpec],
    plain: &PlainOptions,
    store: &mut dyn StoredSource,
    pair_files: bool,
) -> Result<Loaded, ImportError> {
    let mut interner = Interner::default();
    let mut loaded = Loaded::default();
    let mut files_per_label: Vec<(String, u32)> = Vec::new();
    for spec in specs {
        if !loaded.labels.contains(&spec.label) && matches!(spec.location, Location::Path(_)) {
            loaded.labels.push(spec.label.clone());
        }
        match &spec.location {
            Location::Stored(name) => {
                let obs = store.load(name, spec.explicit_label.then_some(spec.label.as_str()))?;
                for o in &obs {
                    if !loaded.labels.iter().any(|l| **l == *o.label) {
                        loaded.labels.push(o.label.to_string());
                    }
                }
                loaded.observations.extend(obs);
            }
            Location::Path(path) => {
                let mut imported = load_input(path, &spec.label, plain, &mut interner)?;
                if pair_files {
                    let round = match files_per_label.iter_mut().find(|(l, _)| *l == spec.label) {
                        Some((_, n)) => {
                            *n += 1;
                            *n - 1
                        }
                        None => {
                            files_per_label.push((spec.label.clone(), 1));
                            0
                        }
                    };
                    imported.observations.set_round_all(round);
                }
                loaded.notes.extend(imported.notes);
                if loaded.observations.is_empty() {
                    loaded.observations = imported.observations;
                } else {
                    loaded.observations.append(imported.observations);
                }
            }
        }
    }
    if files_per_label
        .iter()
        .any(|(_, n)| Some(n) != files_per_label.first().map(|(_, n)| n))
    {
        let counts: Vec<String> = files_per_label
            .iter()
            .map(|(l, n)| format!("{l}: {n}"))
            .collect();
        loaded.notes.push(format!(
            "--paired: the labels have different numbers of files ({}); files beyond the \
             shortest label's count have no partner and are left out of paired comparisons",
            counts.join(", ")
        ));
    }
    // Trial indices are numbered per (label, workload, metric) as the list is read.
    Ok(loaded)
}

/// Reads and imports one file (or standard input for `-`).
///
/// # Errors
/// [`ImportError::Io`] when the file cannot be read, or the importer's error.
pub fn load_input(
    path: &str,
    label: &str,
    plain: &PlainOptions,
    interner: &mut Interner,
) -> Result<Imported, ImportError> {
    let (bytes, shown) = if path == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf).map_err(|source| {
            ImportError::Io {
                file: "<stdin>".into(),
                source,
            }
        })?;
        (buf, "<stdin>".to_string())
    } else {
        let p = Path::new(path);
        let bytes = std::fs::read(p).map_err(|source| ImportError::Io {
            file: path.to_string(),
            source,
        })?;
        (bytes, path.to_string())
    };
    let label = interner.str(label);
    let file = interner.str(&shown);
    let mut ctx = Ctx {
        label,
        file,
        interner,
    };
    let mut imported = import_bytes(&bytes, &mut ctx, plain)?;
    drop(bytes);
    imported.observations.shrink_to_fit();
    Ok(imported)
}

/// Numbers trials 0, 1, 2, … per (label, workload, metric) in reading order.
///
/// Cost: O(n) with one hash lookup per run of equal keys.
pub fn number_trials(observations: &mut [Observation]) {
    type Key = (Arc<str>, Arc<str>, Arc<Metric>);
    let mut next: HashMap<Key, u32> = HashMap::new();
    let mut i = 0;
    while i < observations.len() {
        let key = (
            observations[i].label.clone(),
            observations[i].workload.clone(),
            observations[i].metric.clone(),
        );
        let counter = next.entry(key.clone()).or_insert(0);
        let mut j = i;
        while j < observations.len()
            && Arc::ptr_eq(&observations[j].label, &key.0)
            && Arc::ptr_eq(&observations[j].workload, &key.1)
            && Arc::ptr_eq(&observations[j].metric, &key.2)
        {
            observations[j].trial = *counter;
            *counter += 1;
            j += 1;
        }
        i = j;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_specs() {
        let s = InputSpec::parse("old=a/b.txt").unwrap();
        assert_eq!(s.label, "old");
        assert_eq!(s.location, Location::Path("a/b.txt".into()));
        let s = InputSpec::parse("a/b.txt").unwrap();
        assert_eq!(s.label, "a/b.txt");
        let s = InputSpec::parse("db:exp1").unwrap();
        assert_eq!(s.location, Location::Stored("exp1".into()));
        assert!(InputSpec::parse("=x").is_err());
        assert!(InputSpec::parse("x=").is_err());
        assert!(InputSpec::parse("x=db:").is_err());
    }

    #[test]
    fn detects_formats() {
        assert_eq!(detect(b"1\n2\n3\n"), Format::Plain);
        assert_eq!(
            detect(b"goos: linux\nBenchmarkX-2 \t 100\t 5 ns/op\n"),
            Format::GoBench
        );
        assert_eq!(
            detect(b"\"test\",\"rps\",\"avg_latency_ms\"\n"),
            Format::RedisBenchmarkCsv
        );
        assert_eq!(
            detect(b"SET: 100.00 requests per second, p50=0.1 msec\n"),
            Format::RedisBenchmarkQuiet
        );
        assert_eq!(detect(b"  {\"configuration\":{}}"), Format::Memtier);
        assert_eq!(
            detect(b"       Value   Percentile   TotalCount 1/(1-Percentile)\n\n"),
            Format::HdrPercentiles
        );
        assert_eq!(
            detect(b"#[Histogram log format version 1.2]\n"),
            Format::HdrLog
        );
        assert_eq!(
            detect(b"#[StartTime: 1.000 (seconds since epoch)]\n\"StartTimestamp\",\"Interval_Length\"\n"),
            Format::HdrLog
        );
        assert_eq!(
            detect(b"ALL STATS\n====\nType Ops/sec Avg. Latency KB/sec\n"),
            Format::MemtierText
        );
        // Neighbours that must keep their own formats.
        assert_eq!(detect(b"# Value Percentile\n1\n2\n"), Format::Plain);
        assert_eq!(
            detect(b"Type     <= msec         Percent\nSET 0.031 0.000\n"),
            Format::Plain
        );
    }
}
