//! Schema and numbered migrations.
//!
//! Each migration is a batch of SQL run in its own transaction together with the bump of
//! `PRAGMA user_version` and a row in `schema_migrations`, so a crash during a migration
//! leaves the database at the previous version. Migrations are only ever appended: a
//! released migration never changes, a new need becomes the next number.

use crate::StoreError;
use rusqlite::Connection;
use std::path::Path;

/// One schema step.
#[derive(Debug)]
pub struct Migration {
    /// The version the database has after this step.
    pub version: u32,
    /// What the step does, stored in `schema_migrations`.
    pub description: &'static str,
    /// The SQL of the step.
    pub sql: &'static str,
}

/// Every migration, in order. The last version is what this build writes.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        description: "experiments, variants, workloads, trials, metrics, histograms, environments",
        sql: r#"
CREATE TABLE experiments (
    id                  INTEGER PRIMARY KEY,
    name                TEXT NOT NULL UNIQUE,
    created_at_unix_ms  INTEGER NOT NULL,
    seed                INTEGER NOT NULL,
    rounds              INTEGER NOT NULL,
    order_kind          TEXT NOT NULL,
    primary_metric      TEXT NOT NULL,
    margin              REAL,
    definition_hash     TEXT NOT NULL,
    spec_text           TEXT NOT NULL,
    spec_json           TEXT NOT NULL,
    state               TEXT NOT NULL DEFAULT 'running',
    finished_at_unix_ms INTEGER
);
CREATE TABLE variants (
    id            INTEGER PRIMARY KEY,
    experiment_id INTEGER NOT NULL REFERENCES experiments(id),
    ordinal       INTEGER NOT NULL,
    name          TEXT NOT NULL,
    spec_json     TEXT NOT NULL,
    UNIQUE (experiment_id, name)
);
CREATE TABLE workloads (
    id            INTEGER PRIMARY KEY,
    experiment_id INTEGER NOT NULL REFERENCES experiments(id),
    ordinal       INTEGER NOT NULL,
    name          TEXT NOT NULL,
    spec_json     TEXT NOT NULL,
    UNIQUE (experiment_id, name)
);
CREATE TABLE environments (
    id                 INTEGER PRIMARY KEY,
    fingerprint        TEXT NOT NULL UNIQUE,
    host_json          TEXT NOT NULL,
    first_seen_unix_ms INTEGER NOT NULL
);
CREATE TABLE trials (
    id                  INTEGER PRIMARY KEY,
    experiment_id       INTEGER NOT NULL REFERENCES experiments(id),
    variant_id          INTEGER NOT NULL REFERENCES variants(id),
    workload_id         INTEGER NOT NULL REFERENCES workloads(id),
    round               INTEGER NOT NULL,
    attempt             INTEGER NOT NULL,
    position            INTEGER NOT NULL,
    started_at_unix_ms  INTEGER NOT NULL,
    finished_at_unix_ms INTEGER NOT NULL,
    valid               INTEGER NOT NULL,
    checks_json         TEXT NOT NULL,
    run_json            TEXT NOT NULL,
    server_info_json    TEXT NOT NULL,
    client_cpu_sec      REAL NOT NULL,
    server_cpu_sec      REAL,
    environment_id      INTEGER REFERENCES environments(id),
    UNIQUE (experiment_id, round, attempt, variant_id, workload_id)
);
CREATE INDEX trials_by_experiment ON trials (experiment_id, round, attempt);
CREATE TABLE metrics (
    trial_id INTEGER NOT NULL REFERENCES trials(id),
    command  TEXT NOT NULL,
    name     TEXT NOT NULL,
    value    REAL NOT NULL,
    PRIMARY KEY (trial_id, command, name)
);
CREATE TABLE histograms (
    trial_id INTEGER NOT NULL REFERENCES trials(id),
    command  TEXT NOT NULL,
    kind     TEXT NOT NULL,
    hdr_v2   BLOB NOT NULL,
    PRIMARY KEY (trial_id, command, kind)
);
"#,
    },
    Migration {
        version: 2,
        description: "calibrations: the noise and budget table measured by resplab calibrate",
        sql: r#"
CREATE TABLE calibrations (
    id                 INTEGER PRIMARY KEY,
    created_at_unix_ms INTEGER NOT NULL,
    hostname           TEXT NOT NULL,
    target             TEXT NOT NULL,
    workload_key       TEXT NOT NULL,
    workload_name      TEXT NOT NULL,
    metric             TEXT NOT NULL,
    result_json        TEXT NOT NULL
);
CREATE INDEX calibrations_lookup ON calibrations (hostname, workload_key, metric, created_at_unix_ms);
"#,
    },
    Migration {
        version: 3,
        description: "open metric list: each metric row may carry its unit and direction; \
                      command workloads keep their command line, exit status and output",
        sql: r#"
ALTER TABLE metrics ADD COLUMN unit TEXT;
ALTER TABLE metrics ADD COLUMN direction TEXT;
CREATE TABLE trial_outputs (
    trial_id  INTEGER PRIMARY KEY REFERENCES trials(id),
    command   TEXT NOT NULL,
    exit_code INTEGER,
    stdout    BLOB NOT NULL,
    stderr    BLOB NOT NULL
);
"#,
    },
    Migration {
        version: 4,
        description: "phases: which variants ran together (experiment run --variants), on what",
        sql: r#"
CREATE TABLE phases (
    id                 INTEGER PRIMARY KEY,
    experiment_id      INTEGER NOT NULL REFERENCES experiments(id),
    ordinal            INTEGER NOT NULL,
    variants_json      TEXT NOT NULL,
    started_at_unix_ms INTEGER NOT NULL,
    record             TEXT NOT NULL
);
ALTER TABLE trials ADD COLUMN phase_id INTEGER REFERENCES phases(id);
"#,
    },
    Migration {
        version: 5,
        description: "runs until decided: each look's anytime-valid interval per comparison, \
                      and the stopping rule and why the run stopped",
        sql: r#"
CREATE TABLE sequential_looks (
    experiment_id INTEGER NOT NULL REFERENCES experiments(id),
    rounds        INTEGER NOT NULL,
    workload      TEXT NOT NULL,
    variant       TEXT NOT NULL,
    elapsed_sec   REAL NOT NULL,
    mean_log      REAL NOT NULL,
    low_log       REAL,
    high_log      REAL,
    sd_log        REAL NOT NULL,
    decision      TEXT NOT NULL,
    PRIMARY KEY (experiment_id, rounds, workload, variant)
);
CREATE TABLE sequential_stops (
    experiment_id      INTEGER PRIMARY KEY REFERENCES experiments(id),
    rule               TEXT NOT NULL,
    reason             TEXT NOT NULL,
    rounds             INTEGER NOT NULL,
    elapsed_sec        REAL NOT NULL,
    stopped_at_unix_ms INTEGER NOT NULL
);
"#,
    },
    Migration {
        version: 6,
        description: "history_points: named series of tracked measurements (resplab track)",
        sql: r#"
CREATE TABLE history_points (
    id                  INTEGER PRIMARY KEY,
    series              TEXT NOT NULL,
    measured_at_unix_ms INTEGER NOT NULL,
    recorded_at_unix_ms INTEGER NOT NULL,
    commit_rev          TEXT,
    host_fingerprint    TEXT NOT NULL,
    host_json           TEXT NOT NULL,
    config_fingerprint  TEXT NOT NULL,
    tags_json           TEXT NOT NULL,
    source              TEXT NOT NULL,
    values_json         TEXT NOT NULL
);
CREATE INDEX history_points_series ON history_points (series, measured_at_unix_ms, id);
"#,
    },
    Migration {
        version: 7,
        description:
            "history_confirmations: the A/B verdicts of change points (resplab history --confirm)",
        sql: r#"
CREATE TABLE history_confirmations (
    id                  INTEGER PRIMARY KEY,
    series              TEXT NOT NULL,
    workload            TEXT NOT NULL,
    metric              TEXT NOT NULL,
    commit_before       TEXT NOT NULL,
    commit_after        TEXT NOT NULL,
    point_id            INTEGER NOT NULL,
    experiment          TEXT NOT NULL,
    confirmed           INTEGER NOT NULL,
    decision            TEXT NOT NULL,
    effect_pct          REAL NOT NULL,
    ci_low_pct          REAL,
    ci_high_pct         REAL,
    rounds              INTEGER NOT NULL,
    recorded_at_unix_ms INTEGER NOT NULL,
    UNIQUE (series, workload, metric, commit_before, commit_after)
);
"#,
    },
    Migration {
        version: 8,
        description: "profiles: the folded stacks sampled from the server during a trial \
                      (an extra, uncounted one or a counted one), deflated, with samples and requests",
        sql: r#"
CREATE TABLE profiles (
    id                  INTEGER PRIMARY KEY,
    experiment_id       INTEGER NOT NULL REFERENCES experiments(id),
    trial_id            INTEGER REFERENCES trials(id),
    variant             TEXT NOT NULL,
    workload            TEXT NOT NULL,
    round               INTEGER NOT NULL,
    attempt             INTEGER NOT NULL,
    counted             INTEGER NOT NULL,
    samples             INTEGER NOT NULL,
    requests            INTEGER NOT NULL,
    sampling            TEXT NOT NULL,
    folded_deflate      BLOB NOT NULL,
    recorded_at_unix_ms INTEGER NOT NULL,
    UNIQUE (experiment_id, round, attempt, variant, workload, counted)
);
"#,
    },
];

/// The schema version this build writes.
pub fn current_version() -> u32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

pub(crate) fn user_version(conn: &Connection) -> Result<u32, rusqlite::Error> {
    conn.query_row("PRAGMA user_version", [], |r| r.get::<_, u32>(0))
}

/// Brings the database up to [`current_version`].
pub(crate) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let err = |e| StoreError::Sqlite {
        path: path.display().to_string(),
        source: e,
    };
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version            INTEGER PRIMARY KEY,
             description        TEXT NOT NULL,
             applied_at_unix_ms INTEGER NOT NULL
         );",
    )
    .map_err(err)?;
    let found = user_version(conn).map_err(err)?;
    if found > current_version() {
        return Err(StoreError::TooNew {
            path: path.display().to_string(),
            found,
            expected: current_version(),
        });
    }
    for m in MIGRATIONS.iter().filter(|m| m.version > found) {
        // Another process may open the same new file at the same moment: take the write
        // lock first (waiting up to the busy timeout) and look at the version again
        // under it, so each migration runs exactly once.
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        if user_version(&tx).map_err(err)? >= m.version {
            tx.commit().map_err(err)?;
            continue;
        }
        tx.execute_batch(m.sql).map_err(err)?;
        tx.execute(
            "INSERT INTO schema_migrations (version, description, applied_at_unix_ms)
             VALUES (?1, ?2, ?3)",
            rusqlite::params![m.version, m.description, crate::write::now_unix_ms()],
        )
        .map_err(err)?;
        tx.pragma_update(None, "user_version", m.version)
            .map_err(err)?;
        tx.commit().map_err(err)?;
    }
    Ok(())
}
