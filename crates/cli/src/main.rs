//! The `resplab` binary: parses the command line and hands each subcommand to its module.
//!
//! This is the only crate that prints, reads argv or the environment, or exits. Every
//! subcommand returns an exit code: 0 ok, 1 a significant regression found by a gate, 2 a
//! usage or runtime error.

mod cmd;
mod output;
mod resolve;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// resplab: measure whether a change makes a Redis-compatible server faster or slower,
/// by how much, and how sure we are.
#[derive(Debug, Parser)]
#[command(name = "resplab", version, about, max_term_width = 100)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// One load run (redis-benchmark and memtier_benchmark flags).
    Bench(Box<cmd::bench::BenchArgs>),
    /// The protocol lab: RESP/RESPB conversion, wire sizes and decoder benchmarks.
    Proto(cmd::proto::ProtoArgs),
    /// Run, resume, list, inspect and export A/B experiments.
    Experiment(cmd::experiment::ExperimentArgs),
    /// Compare result files or stored experiments: ministat, benchstat or resplab style.
    Compare(cmd::compare::CompareArgs),
    /// Markdown or self-contained HTML report with plots of an experiment or result files.
    Report(cmd::report::ReportArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result: anyhow::Result<ExitCode> = match cli.command {
        Command::Bench(a) => cmd::bench::run(*a),
        Command::Proto(a) => cmd::proto::run(a),
        Command::Experiment(a) => cmd::experiment::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Report(a) => cmd::report::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("resplab: {e:#}");
            ExitCode::from(2)
        }
    }
}
