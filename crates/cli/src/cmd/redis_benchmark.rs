//! `resplab redis-benchmark ARGS…` (also `redis-benchmark ARGS…` or
//! `valkey-benchmark ARGS…` through a link): a redis-benchmark command line with its
//! meaning, run by resplab's engine.
//!
//! The arguments go untouched to `resplab_workload::redis_benchmark::parse`; the run's
//! configuration comes from `resplab_engine::words::redis_benchmark` (bench's words), the
//! layout the line asks for from `resplab_report::run::rbtext::for_line` (its full text, or
//! `rbcompat`'s for `-q` and `--csv`).
//! This file reads `-x`'s argument from standard input, runs the tests (again and again
//! with `-l`) and prints.

use crate::output::progress::ProgressLine;
use anyhow::Context as _;
use clap::Args;
use resplab_report::run::rbtext;
use resplab_results::{RunEnd, RunRecord};
use resplab_workload::redis_benchmark::{self as rb, Invocation, RbLine};
use resplab_workload::Workload;
use std::io::Read as _;
use std::process::ExitCode;

/// `resplab redis-benchmark`: every argument is redis-benchmark's.
#[derive(Debug, Args)]
#[command(disable_help_flag = true, disable_version_flag = true)]
pub struct RedisBenchmarkArgs {
    /// redis-benchmark's options and an optional command, e.g. `-t set,get -n 100000 -q`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<String>,
}

/// Runs a redis-benchmark command line.
///
/// # Errors
/// A refused or malformed option (exit 2), standard input that cannot be read for
/// `-x`, or a server that cannot be reached.
pub fn run(args: RedisBenchmarkArgs) -> anyhow::Result<ExitCode> {
    let mut line = match rb::parse(&args.args)? {
        Invocation::Help => {
            print!("{}", usage());
            return Ok(ExitCode::SUCCESS);
        }
        Invocation::Version => {
            println!(
                "resplab {} (redis-benchmark command lines)",
                env!("CARGO_PKG_VERSION")
            );
            return Ok(ExitCode::SUCCESS);
        }
        Invocation::Run(line) => *line,
    };
    // redis-benchmark titles a command by the words of its line, without what -x reads.
    let title = line.command_title();
    if line.last_arg_from_stdin {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("-x: reading the last argument from standard input")?;
        let text = String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("-x: standard input is not UTF-8 text"))?;
        line.command.push(text);
    }
    let plan = resplab_engine::words::redis_benchmark::resolve(&line)?;
    let workload = plan.workload()?;
    let config = plan.config;
    resplab_engine::fdlimit::ensure_open_files(resplab_engine::fdlimit::files_needed(
        config.clients,
        config.effective_threads(),
    ))
    .with_context(|| format!("-c {}", config.clients))?;
    let stop = crate::signal::stop_token();
    if line.idle {
        println!(
            "Creating {} idle connections and waiting forever (Ctrl+C when done)",
            config.clients
        );
        resplab_engine::idle::hold(&config, &stop)
            .with_context(|| format!("idle connections to {}", config.target))?;
        return Ok(ExitCode::SUCCESS);
    }
    loop {
        let mut progress = ProgressLine::new(!line.quiet && !line.csv);
        let mut show = |p: &resplab_engine::Progress| {
            progress.show(&format!(
                "{}: rps={:.1} (overall: {:.1})",
                p.phase_name, p.ops_per_sec_now, p.ops_per_sec_overall
            ))
        };
        let result = resplab_engine::run(&config, &workload, &stop, &mut show);
        progress.clear();
        let record = result.with_context(|| format!("run against {}", config.target))?;
        print(&line, &title, &config, &workload, &record);
        if line.looping && record.end == RunEnd::Interrupted {
            // Ctrl-C is how a loop ends.
            return Ok(ExitCode::SUCCESS);
        }
        if record.end != RunEnd::Completed {
            return Ok(exit_code(&record.end));
        }
        if !line.looping {
            return Ok(ExitCode::SUCCESS);
        }
    }
}

/// Prints the run in the layout the line asks for.
fn print(
    line: &RbLine,
    command_title: &str,
    config: &resplab_engine::RunConfig,
    workload: &Workload,
    r: &RunRecord,
) {
    let layout = rbtext::LineLayout {
        csv: line.csv,
        quiet: line.quiet,
        clients: config.clients,
        threads: config.threads,
        data_size: line.data_size.as_deref(),
        command_title: (!line.command.is_empty()).then_some(command_title),
    };
    let text = rbtext::for_line(&layout, &crate::output::tests(workload), r);
    crate::output::show(&text);
}

fn exit_code(end: &RunEnd) -> ExitCode {
    let why = match end {
        RunEnd::Completed => return ExitCode::SUCCESS,
        RunEnd::Interrupted => "interrupted".to_string(),
        RunEnd::ServerLost { message } | RunEnd::Unreachable { message, .. } => message.clone(),
    };
    eprintln!("resplab redis-benchmark: {why}; the results above cover what was measured");
    ExitCode::from(2)
}

fn usage() -> String {
    "Usage: resplab redis-benchmark [redis-benchmark options] [COMMAND ARGS...]\n\
     Runs a redis-benchmark (or valkey-benchmark) command line with its meaning on\n\
     resplab's engine: -c connections in all, -n requests of each test, each test on\n\
     fresh connections; no -h/-p/-s/-u measures 127.0.0.1:6379. Prints redis-benchmark's\n\
     layouts (-q, --csv, or the full text). Options resplab cannot honour (-e,\n\
     --tls-ciphers, --sequential) are refused with the reason (exit code 2).\n\
     See docs/redis-benchmark.md.\n\n\
     Options: -h -p -s -a --user -u -c -n -d --dbnum -3 --threads --cluster\n\
     --enable-tracking -k -r -P -q\n\
     --precision --csv -l -t -x --seed --tls --sni --cacert --cacertdir --insecure --cert\n\
     --key --tls-ciphersuites --rps --duration --warmup --help --version\n"
        .to_string()
}
