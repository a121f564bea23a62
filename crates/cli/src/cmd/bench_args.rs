//! The flags of `resplab bench`, in redis-benchmark's and memtier_benchmark's vocabulary.
//!
//! The words of the run itself (target, TLS, cluster, load, workload, scale-out) are the
//! engine's [`BenchWords`], flattened in, so they are defined once and converted once
//! ([`resplab_engine::words`]); the flags here are what to do with the result.

use clap::{ArgAction, Args};
use resplab_engine::words::bench::BenchWords;

/// One load run against a Redis-compatible server.
#[derive(Debug, Args)]
#[command(
    disable_help_flag = true,
    after_help = "Exit codes: 0 the run completed; 2 bad input, an unreachable target, an interrupted run or a server lost during the run; 3 the run completed but the target could not be reached for part of it (the record says when)."
)]
pub struct BenchArgs {
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,

    // ---- the run: target, TLS, cluster, load, workload, scale-out ----
    #[command(flatten)]
    pub words: BenchWords,

    // ---- output ----
    /// Write the full result (schema in docs/json.md) to FILE, or - for stdout.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub json: Option<String>,
    /// Print redis-benchmark's CSV layout instead of the table.
    #[arg(long, help_heading = "Output")]
    pub csv: bool,
    /// Print redis-benchmark's quiet layout instead of the table.
    #[arg(short = 'q', long, help_heading = "Output")]
    pub quiet: bool,
    /// Write HdrHistogram percentile files PREFIX_<COMMAND>.hgrm.
    #[arg(long, value_name = "PREFIX", help_heading = "Output")]
    pub hdr_out: Option<String>,
    /// Serve live metrics (Prometheus text format) at http://HOST:PORT/metrics while the
    /// run goes on: requests, errors and latency per command, the phase and its rate.
    #[arg(long, value_name = "HOST:PORT", help_heading = "Output")]
    pub metrics_addr: Option<String>,
    /// Sample the server's stacks with perf record during the run (499 Hz, cpu-clock,
    /// frame pointers; perf from RESPLAB_PERF or the PATH) and write them folded to FILE,
    /// as `resplab profile diff` reads them. The server must be one this run starts (no
    /// target given) or named by --profile-pid.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub profile: Option<std::path::PathBuf>,
    /// The pid of the server --profile samples, for a target this run does not start.
    #[arg(
        long,
        value_name = "PID",
        requires = "profile",
        help_heading = "Output"
    )]
    pub profile_pid: Option<u32>,
    /// Never show the live progress line.
    #[arg(long, help_heading = "Output")]
    pub no_progress: bool,
    /// Cluster: print one table row per node (requests it answered, latency,
    /// redirections it sent).
    #[arg(long, help_heading = "Output")]
    pub per_node: bool,
}
