//! `resplab memtier ARGS…` (also `memtier_benchmark ARGS…` through a link): a
//! memtier_benchmark command line with memtier's meaning, run by resplab's engine.
//!
//! The arguments go untouched to `resplab_workload::memtier::parse`; the engine config
//! comes from `resplab_engine::memtier`, the outputs from `resplab_report::memtier`.
//! This file runs the `--run-count` runs and writes what they produced: the text report
//! (standard output or `-o`), `--json-out-file`, `--hdr-file-prefix` files. Every file is
//! opened before the first request, so a bad path costs no run.

use crate::output::progress::ProgressLine;
use anyhow::Context as _;
use clap::Args;
use resplab_engine::Target;
use resplab_report::memtier::files::MemtierFiles;
use resplab_report::memtier::Shape;
use resplab_results::{RunEnd, RunRecord};
use resplab_workload::memtier::{self as mt, Invocation, MemtierPlan, RunLength};
use std::process::ExitCode;

/// `resplab memtier`: every argument is memtier_benchmark's (`resplab memtier --help`).
#[derive(Debug, Args)]
#[command(disable_help_flag = true, disable_version_flag = true)]
pub struct MemtierArgs {
    /// memtier_benchmark's options, e.g. `-t 4 -c 50 -n 10000 --ratio 1:10`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<String>,
}

/// Runs a memtier command line.
///
/// # Errors
/// A refused or malformed option (exit 2), a server that cannot be reached, or an
/// output file that cannot be written.
pub fn run(args: MemtierArgs) -> anyhow::Result<ExitCode> {
    let mut plan = match mt::parse(&args.args)? {
        Invocation::Help => {
            print!("{}", usage());
            return Ok(ExitCode::SUCCESS);
        }
        Invocation::Version => {
            println!(
                "resplab {} (memtier_benchmark command lines)",
                env!("CARGO_PKG_VERSION")
            );
            return Ok(ExitCode::SUCCESS);
        }
        Invocation::Run(plan) => *plan,
    };
    if let (true, RunLength::RequestsPerClient(n)) = (plan.all_keys, plan.length) {
        println!("setting requests to {n}");
    }
    if plan.randomize {
        plan.workload.seed = clock_seed();
    }
    let config = resplab_engine::memtier::run_config(&plan)?;
    let workload = plan.compile()?;
    let o = &plan.output;
    let files = MemtierFiles::prepare(
        o.out_file.as_deref(),
        o.json_out_file.as_deref(),
        o.hdr_file_prefix.as_deref(),
    )?;
    resplab_engine::fdlimit::ensure_open_files(resplab_engine::fdlimit::files_needed(
        config.clients,
        config.effective_threads(),
    ))
    .context("--clients × --threads")?;
    let stop = crate::signal::stop_token();
    announce(&plan, &config.target);
    let mut runs = Vec::new();
    for n in 1..=plan.run_count {
        let mut line = ProgressLine::new(true);
        let mut show = |p: &resplab_engine::Progress| {
            line.show(&format!(
                "[RUN #{n} {:.0} secs] {} conns: {:.0} ops/sec (avg: {:.0}), p99 {:.3} msec",
                p.elapsed_sec,
                config.clients,
                p.ops_per_sec_now,
                p.ops_per_sec_overall,
                p.p99_us_now / 1e3
            ))
        };
        let result = resplab_engine::run(&config, &workload, &stop, &mut show);
        line.clear();
        let mut record = result.with_context(|| format!("run against {}", config.target))?;
        resplab_engine::record::stamp(&mut record, &config, "resplab memtier");
        let ended = record.end.clone();
        runs.push(record);
        if ended != RunEnd::Completed {
            break;
        }
    }
    write(files, &plan, &runs)?;
    Ok(exit_code(&runs))
}

/// What memtier says on standard error before it starts, and the load model.
fn announce(plan: &MemtierPlan, target: &Target) {
    eprintln!(
        "resplab memtier: {} threads × {} connections per thread against {target}, seed {}",
        plan.threads, plan.clients_per_thread, plan.workload.seed
    );
    if plan.connection.tls.as_ref().is_some_and(|t| t.skip_verify) {
        eprintln!("resplab memtier: WARNING: --tls-skip-verify: the server's TLS certificate is not verified");
    }
    match plan.rate_limit_per_connection {
        Some(r) => eprintln!(
            "resplab memtier: --rate-limiting {r}: open loop at {r} requests/s per connection ({} in all), latency timed from each request's intended send time",
            r * plan.connections()
        ),
        None => eprintln!("resplab memtier: closed loop, as memtier_benchmark"),
    }
}

/// Writes every output; the first failure is returned after all were tried.
fn write(files: MemtierFiles, plan: &MemtierPlan, runs: &[RunRecord]) -> anyhow::Result<()> {
    let configuration = || resplab_engine::memtier::configuration(plan);
    let shape = shape(plan);
    let c = files.contents(&shape, runs, plan.output.print_all_runs, configuration);
    if let Some(text) = c.stdout {
        crate::output::show(&text);
    }
    let mut failures: Vec<anyhow::Error> = Vec::new();
    for (file, bytes) in c.files {
        failures.extend(crate::output::finish(file, &bytes).err());
    }
    failures.extend(c.failures.into_iter().map(anyhow::Error::from));
    failures.into_iter().next().map_or(Ok(()), Err)
}

fn shape(plan: &MemtierPlan) -> Shape {
    let (requests_per_client, seconds) = match plan.length {
        RunLength::RequestsPerClient(n) => (Some(n), None),
        RunLength::Seconds(s) => (None, Some(s)),
    };
    Shape {
        threads: plan.threads,
        clients_per_thread: plan.clients_per_thread,
        requests_per_client,
        seconds,
        commands: plan.command_names(),
        percentiles: plan.output.percentiles.clone(),
        hide_histogram: plan.output.hide_histogram,
        cluster: plan.connection.cluster,
        staircase: plan.life.staircase.map(|s| (s.start, s.step, s.step_sec)),
    }
}

fn exit_code(runs: &[RunRecord]) -> ExitCode {
    match runs.last().map(|r| &r.end) {
        Some(RunEnd::Completed) => ExitCode::SUCCESS,
        Some(RunEnd::Interrupted) => {
            eprintln!("resplab memtier: interrupted; the results above cover what was measured");
            ExitCode::from(2)
        }
        Some(RunEnd::ServerLost { message } | RunEnd::Unreachable { message, .. }) => {
            eprintln!("resplab memtier: {message}; the results above cover what was measured");
            ExitCode::from(2)
        }
        None => ExitCode::from(2),
    }
}

/// A seed from the clock (`--randomize`).
fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
}

fn usage() -> String {
    let options: Vec<String> = mt::args::names().map(|n| format!("--{n}")).collect();
    format!(
        "Usage: resplab memtier [memtier_benchmark options]\n\
         Runs a memtier_benchmark command line with memtier's meaning on resplab's engine:\n\
         -t threads, -c clients per thread, -n requests per client. Options resplab cannot\n\
         honour are refused with the reason (exit code 2). See docs/memtier.md.\n\n\
         Options: {}\n",
        options.join(" ")
    )
}
