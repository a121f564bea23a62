//! `resplab bisect`'s flags, as the user typed them, read into a [`BisectSpec`]: the
//! margin (a percentage) and test time checked, the measured workload or experiment
//! file, and the cache folder (by default `<db name>-bisect` beside the result store).
//! Every refusal is a [`BisectError::Input`] that names its flag.

use super::{BisectError, BisectSpec, Source};
use crate::model::TrialBudget;
use crate::words::parse_positive_duration;
use std::path::{Path, PathBuf};

/// The flags of `resplab bisect`, as given.
#[derive(Clone, Debug, Default, PartialEq, clap::Args)]
pub struct Given {
    /// The git repository (no uncommitted changes to tracked files).
    #[arg(long, value_name = "DIR")]
    pub repo: PathBuf,
    /// A commit with the old performance.
    #[arg(long, value_name = "REV")]
    pub good: String,
    /// A later commit with the new performance.
    #[arg(long, value_name = "REV")]
    pub bad: String,
    /// Shell command that builds a commit, run in its worktree ({src}).
    #[arg(long, value_name = "CMD")]
    pub build: String,
    /// Server command: {port} (required), {dir} (a fresh directory), {src} (the worktree).
    #[arg(long, value_name = "CMD")]
    pub server: String,
    /// The workload: redis-benchmark tests (e.g. `get` or `set,get`).
    #[arg(long, value_name = "TESTS")]
    pub workload: Option<String>,
    /// The workload, budgets and metric of an experiment file (its variants are replaced).
    #[arg(long, value_name = "FILE")]
    pub experiment: Option<PathBuf>,
    /// The result store (SQLite).
    #[arg(long, default_value = resplab_store::DEFAULT_DB)]
    pub db: PathBuf,
    /// Worktrees and build results (default: DB's folder, `<db name>-bisect`).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Most rounds of each measured pair.
    #[arg(long, value_name = "N", default_value_t = 30)]
    pub max_rounds: u32,
    /// Equivalence margin in percent (good against bad is decided equivalent inside it).
    #[arg(long, value_name = "PCT")]
    pub margin: Option<String>,
    /// Measured time of each test phase of a trial (e.g. 1s).
    #[arg(long, value_name = "DUR")]
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
