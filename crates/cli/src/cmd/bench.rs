//! `resplab bench`: one load run, redis-benchmark and memtier_benchmark style.
//!
//! The flags ([`BenchArgs`]) are resolved once (by `resplab_engine::words`) into an
//! engine [`RunConfig`] and a workload; then the run happens, its record is completed
//! (`resplab_engine::record`) and written (JSON first, so nothing measured is lost if a
//! later step fails), and the requested views of it are printed
//! (`resplab_report::run::bench`): the table, redis-benchmark's CSV or quiet layout,
//! HdrHistogram files.
//!
//! With no target, a throwaway `redis-server` is started on a free loopback port with
//! persistence off and stopped when the run ends; the run says so.

pub use super::bench_args::BenchArgs;
use crate::output::{self, progress::ProgressLine};
use anyhow::Context as _;
use resplab_engine::{RunConfig, StopToken};
use resplab_experiment::server_profile::ServerProfile;
use resplab_experiment::throwaway::Throwaway;
use resplab_report::run::bench::{BenchFiles, Layout};
use resplab_report::run::rbcompat::Test;
use resplab_results::{RunEnd, RunRecord};
use resplab_workload::Workload;
use std::process::ExitCode;

/// Runs `resplab bench`.
///
/// # Errors
/// Bad flags, a server that cannot be reached or started, or an output file that cannot
/// be written (exit code 2).
pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let words = resplab_workload::memtier::hint::BenchWords {
        threads: &args.words.threads,
        clients: &args.words.clients,
        tests: args.words.workload.tests.as_deref(),
    };
    if let Some(hint) = resplab_workload::memtier::hint::bench_hint(words) {
        eprintln!("resplab: warning: {hint}");
    }
    let plan = args.words.resolve()?;
    let workload = plan.workload()?;
    // Every output file is opened now, before the first request: a bad path must not
    // cost a whole run.
    let tests = crate::output::tests(&workload);
    let files = BenchFiles::prepare(args.json.as_deref(), args.hdr_out.as_deref(), &tests)?;
    let live = resplab_metrics::Live::new();
    let _endpoint = match &args.metrics_addr {
        Some(addr) => Some(crate::output::metrics::announced(live.serve(addr))?),
        None => None,
    };
    let stop = crate::signal::stop_token();

    let mut config = plan.config.clone();
    config.progress_commands = args.metrics_addr.is_some();
    // Before connecting or starting a server: one open file per connection.
    resplab_engine::fdlimit::ensure_open_files(resplab_engine::fdlimit::files_needed(
        config.clients,
        config.effective_threads(),
    ))
    .with_context(|| format!("-c/--clients {}", config.clients))?;
    let _server = match &plan.target {
        Some(t) => {
            config.target = t.clone();
            None
        }
        None => {
            let server = Throwaway::start(args.words.server_bin.as_deref(), config.clients)?;
            eprintln!("resplab: {}", server.started());
            config.target = server.target();
            Some(server)
        }
    };
    let sampled = match &args.profile {
        Some(path) => Some(ServerProfile::start(
            path,
            args.profile_pid,
            _server.as_ref(),
        )?),
        None => None,
    };
    if let Some(warning) = sampled.as_ref().and_then(ServerProfile::warning) {
        eprintln!("resplab: {warning}");
    }
    announce(&config, &args);
    let result = run_with_progress(&config, &workload, &stop, !args.no_progress, &live);
    let mut record = result.context(format!("run against {}", config.target))?;
    if let Some(line) = sampled.and_then(ServerProfile::finish) {
        eprintln!("resplab: {line}");
    }
    plan.complete(&mut record, &config);
    write_outputs(&record, &tests, &args, files)?;
    let code = exit_code(&record.end);
    match plan.max_error_pct {
        Some(max) if code == ExitCode::SUCCESS => Ok(error_gate(&record, max)),
        _ => Ok(code),
    }
}

/// `--max-error-rate`: exit code 3, with its line on standard error, when the share of
/// failed requests is above `max_pct`.
fn error_gate(record: &RunRecord, max_pct: f64) -> ExitCode {
    let t = &record.totals;
    if t.error_pct() <= max_pct {
        return ExitCode::SUCCESS;
    }
    eprintln!(
        "resplab: {:.3} % of the requests failed ({} of {}), more than --max-error-rate {max_pct} %; exit code {EXIT_ERROR_RATE}",
        t.error_pct(),
        t.errors,
        t.requests.max(t.errors)
    );
    ExitCode::from(EXIT_ERROR_RATE)
}

/// The lines on standard error before the run: an unverified TLS certificate, and the
/// seed unless the output is quiet or CSV.
fn announce(config: &RunConfig, output: &BenchArgs) {
    if config.tls.as_ref().is_some_and(|t| t.insecure) {
        eprintln!("resplab: WARNING: --insecure: the server's TLS certificate is not verified");
    }
    if !output.quiet && !output.csv {
        eprintln!(
            "resplab: seed {} ({})",
            config.seed,
            if config.open_loop.is_some() {
                "open loop"
            } else {
                "closed loop"
            }
        );
    }
}

/// Runs the engine, showing its progress on one line of a terminal.
fn run_with_progress(
    config: &RunConfig,
    workload: &Workload,
    stop: &StopToken,
    progress: bool,
    live: &resplab_metrics::Live,
) -> Result<RunRecord, resplab_engine::EngineError> {
    let mut line = ProgressLine::new(progress);
    let mut on_progress = |p: &resplab_engine::Progress| {
        live.observe(p);
        let text = if p.warming_up {
            format!("{}: warming up", p.phase_name)
        } else {
            format!(
                "{}: {:.0}s  {:.0} ops/s now, {:.0} overall  p99 {:.3} ms  errors {}",
                p.phase_name,
                p.elapsed_sec,
                p.ops_per_sec_now,
                p.ops_per_sec_overall,
                p.p99_us_now / 1e3,
                p.errors
            )
        };
        line.show(&text);
    };
    let result = resplab_engine::run(config, workload, stop, &mut on_progress);
    line.clear();
    result
}

/// The exit code of how the run ended, with its line on standard error.
fn exit_code(end: &RunEnd) -> ExitCode {
    match end {
        RunEnd::Completed => ExitCode::SUCCESS,
        RunEnd::Interrupted => {
            eprintln!("resplab: interrupted; the results above cover what was measured");
            ExitCode::from(2)
        }
        RunEnd::ServerLost { message } => {
            eprintln!(
                "resplab: server lost: {message}; the results above cover what was measured before"
            );
            ExitCode::from(2)
        }
        RunEnd::Unreachable { message, .. } => {
            eprintln!(
                "resplab: the run completed with an outage: {message}; exit code {EXIT_OUTAGE}"
            );
            ExitCode::from(EXIT_OUTAGE)
        }
    }
}

/// Exit code of a run that reached its budget although the target could not be reached
/// for part of it (2 is kept for runs that lost the server for good).
pub const EXIT_OUTAGE: u8 = 3;

/// Exit code of a run whose share of failed requests is above `--max-error-rate`.
pub const EXIT_ERROR_RATE: u8 = 3;

/// Writes the record to `--json`'s file (or standard output), the `--hdr-out` files,
/// and prints the run in the layout asked for; the first file that could not be written
/// is the error, after every output was tried.
fn write_outputs(
    record: &RunRecord,
    tests: &[Test<'_>],
    out: &BenchArgs,
    files: BenchFiles,
) -> anyhow::Result<()> {
    let json_to_stdout = out.json.as_deref() == Some("-");
    let json = match out.json {
        Some(_) => serde_json::to_string_pretty(record)?,
        None => String::new(),
    };
    if json_to_stdout {
        println!("{json}");
    }
    let mut failures: Vec<anyhow::Error> = Vec::new();
    for (file, bytes) in files.contents(record, &json) {
        failures.extend(output::finish(file, &bytes).err());
    }
    if out.per_node && record.nodes.is_empty() {
        eprintln!(
            "resplab: --per-node: the target is not a cluster (one server), so there are no per-node rows"
        );
    }
    let layout = Layout {
        csv: out.csv,
        quiet: out.quiet,
        per_node: out.per_node,
    };
    let text = resplab_report::run::bench::text(record, tests, layout);
    if json_to_stdout {
        eprint!("{text}");
    } else {
        crate::output::show(&text);
    }
    failures.into_iter().next().map_or(Ok(()), Err)
}
