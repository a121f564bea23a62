//! The `resplab` binary: parses the command line and hands each subcommand to its module.
//!
//! This is the only crate that prints, reads argv or the environment, or exits. Every
//! subcommand returns an exit code: 0 ok, 1 a significant regression found by a gate, 2 a
//! usage or runtime error; 143 (129) when SIGTERM (SIGHUP) stopped it (see [`signal`]).

mod args;
mod cmd;
mod output;
mod signal;

use clap::{CommandFactory as _, Parser, Subcommand};
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
    /// Append one measurement to a named series (a regression history).
    Track(cmd::track::TrackArgs),
    /// A tracked series with its change points; --gate for CI.
    History(cmd::history::HistoryArgs),
    /// Find the commit that changed the server's performance between a good and a bad one.
    Bisect(Box<cmd::bisect::BisectArgs>),
    /// Markdown or self-contained HTML report with plots of an experiment or result files.
    Report(cmd::report::ReportArgs),
    /// The lab's reference server (RESP2/RESP3, known effects and faults).
    Serve(Box<cmd::serve::ServeArgs>),
    /// A memtier_benchmark command line with memtier's meaning (-c per thread, -n per client).
    Memtier(cmd::memtier::MemtierArgs),
    /// A redis-benchmark (or valkey-benchmark) command line with its meaning and layouts.
    RedisBenchmark(cmd::redis_benchmark::RedisBenchmarkArgs),
    /// Links named memtier_benchmark, redis-benchmark and valkey-benchmark to this binary in DIR.
    InstallLinks(cmd::links::InstallLinksArgs),
    /// Compare sampled profiles: changed functions and a differential flame graph.
    Profile(cmd::profile::ProfileArgs),
    /// One exact result from the results of N generators (bench --shard I/N).
    Merge(cmd::merge::MergeArgs),
    /// This machine's noise, the budget a target effect needs, and an A/A check.
    Calibrate(Box<cmd::calibrate::CalibrateArgs>),
    /// Shell completion script (bash, zsh, fish, elvish, powershell) on standard output.
    Completions(cmd::shell::CompletionsArgs),
    /// Manual page (roff) on standard output, or every page into a folder with -o.
    Man(cmd::shell::ManArgs),
}

fn main() -> ExitCode {
    // Called by another tool's name (a link made by install-links): that mode.
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let named = argv
        .first()
        .and_then(|a| a.to_str())
        .and_then(cmd::links::subcommand_for);
    if let Some(sub) = named {
        argv.insert(1, sub.into());
    }
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            if let Some(hint) = unknown_option_hint(&e) {
                eprintln!("resplab: {hint}");
            }
            return ExitCode::from(code);
        }
    };
    let result: anyhow::Result<ExitCode> = match cli.command {
        Command::Bench(a) => cmd::bench::run(*a),
        Command::Proto(a) => cmd::proto::run(a),
        Command::Experiment(a) => cmd::experiment::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Track(a) => cmd::track::run(a),
        Command::History(a) => cmd::history::run(a),
        Command::Bisect(a) => cmd::bisect::run(*a),
        Command::Report(a) => cmd::report::run(a),
        Command::Memtier(a) => cmd::memtier::run(a),
        Command::RedisBenchmark(a) => cmd::redis_benchmark::run(a),
        Command::InstallLinks(a) => cmd::links::run(&a),
        Command::Merge(a) => cmd::merge::run(a),
        Command::Profile(a) => cmd::profile::run(a),
        Command::Calibrate(a) => cmd::calibrate::run(*a),
        Command::Serve(a) => cmd::serve::run(*a),
        Command::Completions(a) => cmd::shell::completions(&a, Cli::command()),
        Command::Man(a) => cmd::shell::man(&a, Cli::command()),
    };
    signal::exit_code(match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("resplab: {}", error_text(&e));
            ExitCode::from(2)
        }
    })
}

/// An option `resplab bench` does not know but memtier_benchmark or redis-benchmark
/// does: the advice to run `resplab memtier` or `resplab redis-benchmark`.
fn unknown_option_hint(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue};
    if e.kind() != clap::error::ErrorKind::UnknownArgument {
        return None;
    }
    match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => {
            resplab_workload::memtier::hint::unknown_option_hint(arg)
                .or_else(|| resplab_workload::redis_benchmark::unknown_option_hint(arg))
        }
        _ => None,
    }
}

/// The error and its causes on one line, each cause once: library errors often quote
/// their source in their own message already.
fn error_text(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !text.contains(&c) {
            text.push_str(": ");
            text.push_str(&c);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::error_text;

    /// clap's own consistency checks of the whole command definition (conflicting
    /// short flags, bad defaults, missing value names): what completions and the manual
    /// pages are generated from.
    #[test]
    fn the_command_definition_is_consistent() {
        use clap::CommandFactory as _;
        super::Cli::command().debug_assert();
    }

    /// An error that quotes its source in its own message, as many library errors do.
    #[derive(Debug)]
    struct Quoting {
        source: std::io::Error,
    }

    impl std::fmt::Display for Quoting {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "x.json: cannot read: {}", self.source)
        }
    }

    impl std::error::Error for Quoting {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    #[test]
    fn each_cause_is_printed_once() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        let quoted = anyhow::Error::new(Quoting { source: io() });
        assert_eq!(error_text(&quoted), "x.json: cannot read: gone");
        let context = anyhow::Error::new(io()).context("cannot open the store");
        assert_eq!(error_text(&context), "cannot open the store: gone");
    }
}
