//! `resplab track` and `resplab history`: append one measurement to a named series,
//! and analyse a series for change points.
//!
//! A measurement comes from a stored experiment or from files any importer of
//! `resplab compare` reads (`resplab bench --json` run records among them). Its values
//! are the medians of its trials per workload and metric (`results::history::values_of`);
//! its host fingerprint is taken of the host facts the run record carries, or, for
//! foreign files, of this machine (`engine::host::detect`: such files are taken to be
//! measured where they are tracked); its configuration fingerprint is taken of the
//! resolved configuration without its seeds and the port of a throwaway server, or of
//! the experiment's definition without its name, or, for foreign files, of their format
//! and the workloads and metrics they hold. The analysis is `results::history::analyse`;
//! the A/B that confirms a change point is [`confirm`]'s.

pub mod confirm;
mod source;

use resplab_results::history::{analyse, HistoryAnalysis, TrackedPoint};
use resplab_stats::changepoint::ChangePointConfig;
use resplab_store::{Store, StoreError};

pub use source::{measure, TrackSource};

/// Why a measurement could not be tracked or a history not read.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An input did not import.
    #[error(transparent)]
    Import(#[from] resplab_results::import::ImportError),
    /// The input held nothing to track, or inputs disagree.
    #[error("{0}")]
    Input(String),
    /// No series of that name.
    #[error("no series named `{name}` in {path}; tracked series: {known}")]
    UnknownSeries {
        name: String,
        path: String,
        known: String,
    },
    /// The change-point search refused its configuration.
    #[error("change points: {0}")]
    Stats(#[from] resplab_stats::StatsError),
    /// A confirming A/B failed (what it stored stays stored); boxed, as a run's errors
    /// are large beside the others.
    #[error(transparent)]
    Run(Box<crate::runner::RunError>),
    /// A confirming A/B was interrupted (what it stored stays stored).
    #[error("interrupted during A/B `{0}`: give --confirm again to resume it")]
    Interrupted(String),
}

/// What `resplab track` was asked to append.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackRequest {
    pub series: String,
    pub commit: Option<String>,
    /// When the measurement was taken; `None`: when the run record says it started, or
    /// now.
    pub when_unix_ms: Option<i64>,
    pub tags: Vec<(String, String)>,
    pub source: TrackSource,
}

/// `resplab track --tag K=V…`: each tag split at its first `=` into a key, never empty,
/// and a value.
///
/// # Errors
/// [`HistoryError::Input`] naming `--tag` and the tag without a key or `=`.
pub fn parse_tags(tags: &[String]) -> Result<Vec<(String, String)>, HistoryError> {
    tags.iter()
        .map(|t| match t.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(HistoryError::Input(format!(
                "--tag: expected key=value, found `{t}`"
            ))),
        })
        .collect()
}

/// Measures the request's source and appends the point to its series.
///
/// # Errors
/// [`HistoryError`] when the source does not import or holds no values; nothing is
/// stored then.
pub fn track(store: &mut Store, req: &TrackRequest) -> Result<TrackedPoint, HistoryError> {
    let mut point = measure(store, &req.source)?;
    if let Some(at) = req.when_unix_ms {
        point.measured_at_unix_ms = at;
    }
    point.commit = req.commit.clone();
    point.tags = req.tags.clone();
    point.id = store.append_history(&req.series, &point)?;
    Ok(point)
}

/// Reads `series` and finds its change points; `metric` keeps only that metric's lines.
///
/// # Errors
/// [`HistoryError::UnknownSeries`] when nothing was tracked under that name.
pub fn history(
    store: &Store,
    series: &str,
    metric: Option<&str>,
    cfg: &ChangePointConfig,
) -> Result<HistoryAnalysis, HistoryError> {
    let points = store.history(series)?;
    if points.is_empty() {
        let known = store.history_series()?;
        return Err(HistoryError::UnknownSeries {
            name: series.to_string(),
            path: store.path().display().to_string(),
            known: if known.is_empty() {
                "none".into()
            } else {
                known.join(", ")
            },
        });
    }
    let mut analysis = analyse(series, &points, metric, cfg)?;
    analysis.attach(&store.confirmations(series)?);
    Ok(analysis)
}

#[cfg(test)]
mod tests {
    use super::parse_tags;

    #[test]
    fn tags_split_at_the_first_equals_sign_and_need_a_key() {
        let tags = parse_tags(&["os=linux".into(), "opt=a=b".into(), "empty=".into()]).unwrap();
        let pairs: Vec<(&str, &str)> = tags.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(pairs, [("os", "linux"), ("opt", "a=b"), ("empty", "")]);
        for bad in ["=v", "novalue"] {
            let e = parse_tags(&[bad.into()]).unwrap_err().to_string();
            assert_eq!(e, format!("--tag: expected key=value, found `{bad}`"));
        }
    }
}
