//! `resplab bisect`'s flags, as the user typed them, read into a [`BisectSpec`]: the
//! margin (a percentage) and test time checked, the measured workload or experiment
//! file, and the cache folder (by default `<db name>-bisect` beside the result store).
//! Every refusal is a [`BisectError::Input`] that names its flag.

use super::{BisectError, BisectSpec, Source};
use crate::model::TrialBudget;
use crate::words::parse_positive_duration;
use std::path::{Path, PathBuf};

/// The flags of `resplab bisect`, as given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Given {
    pub repo: PathBuf,
    pub good: String,
    pub bad: String,
    pub build: String,
    pub server: String,
    pub workload: Option<String>,
    pub experiment: Option<PathBuf>,
    /// The result store (`--db`), beside which the default cache lies.
    pub db: PathBuf,
    pub cache: Option<PathBuf>,
    pub max_rounds: u32,
    /// `--margin`, in percent.
    pub margin: Option<String>,
    pub test_time: Option<String>,
}

/// The validated request of the flags `given`.
///
/// # Errors
/// [`BisectError::Input`] naming `--margin` (not a number from 0 to 99), `--test-time`
/// (not a positive duration) or `--workload` (neither it nor `--experiment` given).
pub fn spec(given: Given) -> Result<BisectSpec, BisectError> {
    let input = |flag: &str, message: String| BisectError::Input {
        flag: flag.into(),
        message,
    };
    let margin = match &given.margin {
        Some(m) => Some(
            resplab_engine::words::number("--margin", m, 0.0, 99.0)
                .map_err(|e| input("--margin", e.to_string()))?
                / 100.0,
        ),
        None => None,
    };
    let budget = match &given.test_time {
        Some(t) => Some(TrialBudget::TestTime(
            parse_positive_duration(t).map_err(|e| input("--test-time", e))?,
        )),
        None => None,
    };
    let source = match (given.workload, given.experiment) {
        (Some(w), _) => Source::Workload(w),
        (None, Some(f)) => Source::Experiment(f),
        (None, None) => {
            return Err(input(
                "--workload",
                "expected --workload TESTS or --experiment FILE".into(),
            ))
        }
    };
    let cache = given.cache.unwrap_or_else(|| default_cache(&given.db));
    let cache = std::path::absolute(&cache).unwrap_or(cache);
    Ok(BisectSpec {
        repo: given.repo,
        good: given.good,
        bad: given.bad,
        build: given.build,
        server: given.server,
        source,
        cache,
        max_rounds: given.max_rounds,
        margin,
        budget,
    })
}

/// `<db name>-bisect` in the result store's folder.
fn default_cache(db: &Path) -> PathBuf {
    let stem = db
        .file_stem()
        .map_or("resplab".into(), |s| s.to_string_lossy().into_owned());
    db.with_file_name(format!("{stem}-bisect"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given() -> Given {
        Given {
            workload: Some("get".into()),
            db: PathBuf::from("/tmp/lab/results.db"),
            max_rounds: 30,
            ..Given::default()
        }
    }

    #[test]
    fn the_cache_defaults_to_beside_the_store_and_the_margin_is_a_fraction() {
        let s = spec(Given {
            margin: Some("2.5".into()),
            ..given()
        })
        .unwrap();
        assert_eq!(s.cache, PathBuf::from("/tmp/lab/results-bisect"));
        assert_eq!(s.margin, Some(0.025));
        assert!(matches!(s.source, Source::Workload(ref w) if w == "get"));
    }

    #[test]
    fn refusals_name_their_flag() {
        let flag = |g: Given| match spec(g) {
            Err(BisectError::Input { flag, .. }) => flag,
            other => panic!("expected an input error, found {other:?}"),
        };
        let bad_margin = Given {
            margin: Some("100".into()),
            ..given()
        };
        assert_eq!(flag(bad_margin), "--margin");
        let bad_time = Given {
            test_time: Some("0s".into()),
            ..given()
        };
        assert_eq!(flag(bad_time), "--test-time");
        let nothing = Given {
            workload: None,
            ..given()
        };
        assert_eq!(flag(nothing), "--workload");
    }
}
