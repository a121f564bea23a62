//! The `resplab` binary's integration tests, one test binary for the whole crate: each
//! module is one command or concern, `common` holds what they share (running the binary,
//! the lanes that let a timing test run alone, the oracles). One binary links once and
//! runs its tests two at a time across modules, where one binary per file linked each
//! file again and ran the files one after another.
//!
//! A new test file is a module here. Tests run in one process: none may change the
//! process's current directory or environment (give them to the child `Command`), bind a
//! fixed port, or write outside its own temporary directory, and each takes
//! [`common::shared`] or, when it asserts a timing, [`common::alone`]. Fixtures are read
//! from `CARGO_MANIFEST_DIR` (`tests/memtier`, `tests/redis_benchmark`); insta keeps its
//! snapshots in `tests/cli/snapshots`.

mod common;

mod bench_cli;
mod bisect_cli;
mod calibrate_cli;
mod calibrate_validate;
mod ci_recipe;
mod cluster;
mod compare_cli;
mod compare_crosscheck;
mod config_check;
mod connection_life;
mod evidence;
mod experiment_aa;
mod experiment_commands;
mod experiment_duet;
mod experiment_errors;
mod experiment_examples;
mod experiment_generators;
mod experiment_resume;
mod experiment_targets;
mod experiment_tool_lines;
mod experiment_until;
mod history_cli;
mod history_confirm;
mod memtier_cli;
mod memtier_commands;
mod memtier_oracle;
mod metrics_cli;
mod process_lifetime;
mod profile_cli;
mod profiles;
mod proto_cli;
mod redis_benchmark_cli;
mod redis_benchmark_oracle;
mod report_stored;
mod respb_bench;
mod respb_experiment;
mod scale_out;
mod serve_cli;
mod shell_cli;
mod tls;
