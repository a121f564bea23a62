//! The result store: one SQLite file holding every experiment, variant, workload and
//! trial resplab ran, with the full latency histograms of each trial.
//!
//! Why SQLite: an experiment runs for minutes to hours, and a crash, a reboot between
//! kernel variants or a Ctrl-C must not cost more than the trial in progress. Each
//! finished trial is written in its own transaction, the database runs in WAL mode with
//! `synchronous=FULL`, so once [`Store::insert_trial`] returns the trial survives a
//! `kill -9` or a power cut. The runner in `resplab-experiment` resumes an interrupted
//! experiment by asking which trials are already stored.
//!
//! Layout (see [`schema`]): `experiments`, `variants`, `workloads`, `trials`, `metrics`
//! (one row per trial, command and metric name), `histograms` (HdrHistogram V2-deflate
//! blobs, nanoseconds) and `environments` (host facts, stored once per distinct host).
//! Migrations are numbered; `PRAGMA user_version` and the `schema_migrations` table both
//! record which ones ran. `history_points` holds the named series of `resplab track`;
//! `profiles` the deflated folded stacks sampled from the server during trials.
//!
//! Reading back: [`Store::observations`] hands `compare` every metric value of the trials
//! that count, tagged with workload, variant and round so trials pair by round; invalid
//! trials stay in the database (nothing is ever deleted) and are reported by
//! [`Store::status`], but only the latest fully valid attempt of each round is observed.
//!
//! Neighbours: `resplab-results` defines the [`RunRecord`] stored in each trial;
//! `resplab-experiment` writes trials; the CLI's `compare db:NAME` and `experiment
//! export` read them.

pub mod calibration;
pub mod cells;
pub mod history;
pub mod metrics;
pub mod profiles;
pub mod read;
pub mod schema;
pub mod sequential;
pub mod source;
pub mod write;

use resplab_results::RunRecord;
use rusqlite::Connection;
use std::path::{Path, PathBuf};

pub use calibration::{CalibrationRow, NewCalibration};
pub use profiles::ProfileRow;
pub use read::{
    not_interleaved, round_states, ExperimentInfo, ExperimentStatus, Observation, PhaseRow,
    RoundState, TrialRow, ALL_COMMANDS,
};
pub use sequential::{LookRow, StopRow};
pub use source::LazyStore;
pub use write::{Check, CommandTrial, MetricRow, NewExperiment, NewTrial, ServerInfo};

/// Default file name of the store, relative to the working directory.
pub const DEFAULT_DB: &str = "resplab.db";

/// A failure to open, migrate, write or read the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite refused an operation.
    #[error("database {path}: {source}")]
    Sqlite {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    /// The file was written by a newer resplab.
    #[error(
        "database {path} has schema version {found}, this build understands up to {expected}; \
         use a newer resplab or another --db file"
    )]
    TooNew {
        path: String,
        found: u32,
        expected: u32,
    },
    /// An experiment of that name already exists with a different definition.
    #[error(
        "experiment `{name}` already exists in {path} with a different definition; \
         use `resplab experiment resume {name}` to continue it, or rename the experiment"
    )]
    Conflict { name: String, path: String },
    /// No experiment of that name.
    #[error(
        "no experiment named `{name}` in {path}; `resplab experiment list` shows the stored ones"
    )]
    NotFound { name: String, path: String },
    /// A stored JSON column could not be read back.
    #[error("database {path}: {what} is not valid JSON: {source}")]
    Json {
        path: String,
        what: String,
        #[source]
        source: serde_json::Error,
    },
    /// A trial with the same (round, attempt, variant, workload) is already stored.
    #[error(
        "trial round {round} attempt {attempt} of variant `{variant}` on workload `{workload}` \
         is already stored"
    )]
    DuplicateTrial {
        round: u32,
        attempt: u32,
        variant: String,
        workload: String,
    },
    /// A trial names a variant or workload its experiment does not have, or a
    /// calibration id is unknown.
    #[error("no {what} named `{name}`")]
    UnknownName { what: &'static str, name: String },
}

/// An open result store.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed) the store at `path` and brings its schema up to date.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when the file cannot be opened or is not a SQLite database;
    /// [`StoreError::TooNew`] when a newer resplab wrote it.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let conn = Connection::open(path).map_err(|e| sqlite_err(path, e))?;
        Store::init(conn, path.to_path_buf())
    }

    /// Opens a private in-memory store (for tests and dry runs).
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory().map_err(|e| sqlite_err(":memory:", e))?;
        Store::init(conn, PathBuf::from(":memory:"))
    }

    fn init(conn: Connection, path: PathBuf) -> Result<Store, StoreError> {
        let mut store = Store { conn, path };
        store.configure()?;
        schema::migrate(&mut store.conn, &store.path)?;
        Ok(store)
    }

    fn configure(&self) -> Result<(), StoreError> {
        // WAL keeps readers (status, export) from blocking the runner; FULL syncs the
        // WAL at every commit, which is what makes a finished trial crash-proof.
        self.conn
            .busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| self.err(e))?;
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let _ = mode; // in-memory databases answer "memory"; that is fine
        self.conn
            .execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// The path the store was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open database.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when the version cannot be read.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        schema::user_version(&self.conn).map_err(|e| self.err(e))
    }

    /// Reads back the full run record of one trial.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] on a database failure (including an unknown id) and
    /// [`StoreError::Json`] when the stored record does not parse.
    pub fn run_record(&self, trial_id: i64) -> Result<RunRecord, StoreError> {
        self.trial_json(trial_id, "run_json", "run record")
    }

    /// One JSON column of one trial, parsed; `what` names it in errors.
    pub(crate) fn trial_json<T: serde::de::DeserializeOwned>(
        &self,
        trial_id: i64,
        column: &'static str,
        what: &str,
    ) -> Result<T, StoreError> {
        let text: String = self
            .conn
            .query_row(
                &format!("SELECT {column} FROM trials WHERE id = ?1"),
                [trial_id],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        serde_json::from_str(&text)
            .map_err(|e| self.json_err(format!("{what} of trial {trial_id}"), e))
    }

    pub(crate) fn err(&self, e: rusqlite::Error) -> StoreError {
        sqlite_err(&self.path, e)
    }

    pub(crate) fn json_err(&self, what: String, source: serde_json::Error) -> StoreError {
        StoreError::Json {
            path: self.path.display().to_string(),
            what,
            source,
        }
    }

    pub(crate) fn path_string(&self) -> String {
        self.path.display().to_string()
    }
}

fn sqlite_err(path: impl AsRef<Path>, source: rusqlite::Error) -> StoreError {
    StoreError::Sqlite {
        path: path.as_ref().display().to_string(),
        source,
    }
}
