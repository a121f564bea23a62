//! The metric rows derived from one trial.
//!
//! A comparison works on one number per trial, so every figure a user may declare as the
//! primary metric is flattened into `(command, name, value)` rows at insert time. The
//! command is the test name from the run record (`"SET"`, `"LRANGE_100"`) or
//! [`crate::ALL_COMMANDS`] for the totals; trial-level figures (CPU time) use the latter
//! too. Names carry their unit, like the run record's fields.

use resplab_results::{RunRecord, Summary};

/// Metric names derived from every command summary, with a one-line meaning each.
pub const SUMMARY_METRICS: &[(&str, &str)] = &[
    (
        "ops_per_sec",
        "requests per second of the measured part (higher is better)",
    ),
    ("mean_us", "mean latency in microseconds"),
    ("p50_us", "median latency in microseconds"),
    ("p90_us", "90th percentile latency in microseconds"),
    ("p99_us", "99th percentile latency in microseconds"),
    ("p99_9_us", "99.9th percentile latency in microseconds"),
    ("max_us", "largest latency in microseconds"),
    ("requests", "replies received"),
    ("errors", "error replies"),
];

/// Trial-level metric names (stored under [`crate::ALL_COMMANDS`]).
pub const TRIAL_METRICS: &[(&str, &str)] = &[
    (
        "client_cpu_us_per_op",
        "load-generator CPU microseconds per request (lower is better)",
    ),
    (
        "client_cpu_sec",
        "CPU time of the load generator during the measured part (raw seconds: exported, \
         not compared, since it grows with the number of requests served)",
    ),
    (
        "server_cpu_sec",
        "CPU time of the server during the trial: its process's run time to the \
         nanosecond where the run started it, else INFO cpu (raw seconds: exported, not \
         compared)",
    ),
    (
        "server_cpu_us_per_op",
        "server CPU microseconds per request (lower is better)",
    ),
    (
        "wire_bytes_per_op",
        "bytes on the wire per request, both directions, of the measured part (lower is \
         better; RESP against RESPB)",
    ),
];

/// The server's evidence of a trial (see `docs/evidence.md`): per command (stored under
/// the command's name, `SET`) from `INFO commandstats` and `LATENCY HISTOGRAM`, per trial
/// from `INFO stats`, `INFO cpu` and, for a server the run started, its process's
/// counters in `/proc`. "Per op" is per call the server counted. A cluster keeps each
/// node's too, as `node<i>_<name>`.
pub const EVIDENCE_METRICS: &[(&str, &str)] = &[
    ("server_calls", "calls of the command the server counted (raw: exported, not compared)"),
    ("server_usec_per_call", "server microseconds per call of the command (INFO commandstats)"),
    ("server_failed_calls", "calls of the command that failed (Redis 7+)"),
    ("server_rejected_calls", "calls of the command rejected before running (Redis 7+)"),
    ("server_p50_us", "server-side median latency of the command (LATENCY HISTOGRAM)"),
    ("server_p99_us", "server-side 99th percentile latency of the command (LATENCY HISTOGRAM)"),
    ("server_net_in_bytes_per_op", "bytes the server read from the network per op"),
    ("server_net_out_bytes_per_op", "bytes the server wrote to the network per op"),
    ("server_expired_keys", "keys expired during the trial (raw: exported, not compared)"),
    ("server_evicted_keys", "keys evicted during the trial (raw: exported, not compared)"),
    ("server_info_cpu_user_us_per_op", "server user CPU microseconds per op, from INFO cpu"),
    ("server_info_cpu_sys_us_per_op", "server system CPU microseconds per op, from INFO cpu"),
    ("server_main_thread_cpu_user_us_per_op", "main thread user CPU per op, from INFO cpu"),
    ("server_main_thread_cpu_sys_us_per_op", "main thread system CPU per op, from INFO cpu"),
    ("server_cpu_user_us_per_op", "server process user CPU microseconds per op (run time to the nanosecond, split as clock ticks split it)"),
    ("server_cpu_sys_us_per_op", "server process system CPU microseconds per op (as above)"),
    ("server_run_wait_us_per_op", "microseconds the server's threads waited for a CPU per op"),
    ("server_voluntary_switches_per_op", "voluntary context switches of the server per op"),
    ("server_involuntary_switches_per_op", "involuntary context switches of the server per op"),
    ("server_migrations_per_op", "CPU migrations of the server's threads per op"),
    ("server_minor_faults_per_op", "minor page faults of the server per op"),
    ("server_major_faults_per_op", "major page faults of the server per op"),
    ("server_instructions_per_op", "instructions the server executed per op (perf stat; where the machine has a PMU)"),
    ("server_cycles_per_op", "CPU cycles of the server per op (perf stat; where the machine has a PMU)"),
    ("server_ipc", "instructions per cycle of the server (higher is better)"),
    ("server_cache_misses_per_op", "cache misses of the server per op (perf stat; where the machine has a PMU)"),
];

/// True when `name` is a metric the store records.
pub fn is_known_metric(name: &str) -> bool {
    SUMMARY_METRICS
        .iter()
        .chain(TRIAL_METRICS)
        .chain(EVIDENCE_METRICS)
        .any(|(n, _)| *n == name)
}

/// Raw CPU seconds: they grow with the requests a trial served, so a variant that
/// served fewer would look better. Stored and exported, but compared only when an
/// experiment names one as its primary metric; `*_cpu_us_per_op` is the comparable form.
pub const RAW_SECONDS_METRICS: &[&str] = &["client_cpu_sec", "server_cpu_sec"];

/// Units of raw totals: like [`RAW_SECONDS_METRICS`], a server's call and key counts
/// (`server_calls`, `server_expired_keys`) restate how much load a trial carried, so they
/// are stored and exported but compared only when named as the primary metric.
pub const RAW_COUNT_UNITS: &[&str] = &["calls", "keys"];

/// True when a stored metric is a raw total ([`RAW_SECONDS_METRICS`], [`RAW_COUNT_UNITS`]).
pub fn is_raw_total(name: &str, unit: Option<&str>) -> bool {
    RAW_SECONDS_METRICS.contains(&name) || unit.is_some_and(|u| RAW_COUNT_UNITS.contains(&u))
}

/// True when larger values of `name` are better (throughput); false for latencies,
/// CPU costs and error counts. A name from a command's output that is itself a unit
/// (`rps`, `MB/s`) says so; otherwise the direction stored with the rows decides
/// ([`crate::Observation::direction`]).
pub fn higher_is_better(name: &str) -> bool {
    name == "ops_per_sec"
        || name == "requests"
        || resplab_results::sample::Direction::for_unit(name)
            == resplab_results::sample::Direction::HigherIsBetter
}

pub(crate) fn summary_rows(summary: &Summary) -> [(&'static str, f64); 9] {
    let l = &summary.latency_us;
    [
        ("ops_per_sec", summary.ops_per_sec),
        ("mean_us", l.mean),
        ("p50_us", l.p50),
        ("p90_us", l.p90),
        ("p99_us", l.p99),
        ("p99_9_us", l.p99_9),
        ("max_us", l.max),
        ("requests", summary.requests as f64),
        ("errors", summary.errors as f64),
    ]
}

/// All metric rows of a trial: `(command, name, value)`.
pub(crate) fn trial_rows(
    run: &RunRecord,
    server_cpu_sec: Option<f64>,
) -> Vec<(String, &'static str, f64)> {
    let mut rows = Vec::new();
    for (name, value) in summary_rows(&run.totals) {
        rows.push((crate::ALL_COMMANDS.to_string(), name, value));
    }
    for (command, summary) in &run.commands {
        if command == crate::ALL_COMMANDS {
            continue;
        }
        for (name, value) in summary_rows(summary) {
            rows.push((command.clone(), name, value));
        }
    }
    rows.push((
        crate::ALL_COMMANDS.to_string(),
        "client_cpu_sec",
        run.client_cpu.total_sec(),
    ));
    if run.totals.requests > 0 {
        rows.push((
            crate::ALL_COMMANDS.to_string(),
            "client_cpu_us_per_op",
            run.client_cpu.total_sec() * 1e6 / run.totals.requests as f64,
        ));
    }
    if run.totals.requests > 0 && run.totals.bytes_in + run.totals.bytes_out > 0 {
        rows.push((
            crate::ALL_COMMANDS.to_string(),
            "wire_bytes_per_op",
            (run.totals.bytes_in + run.totals.bytes_out) as f64 / run.totals.requests as f64,
        ));
    }
    if let Some(cpu) = server_cpu_sec {
        rows.push((crate::ALL_COMMANDS.to_string(), "server_cpu_sec", cpu));
        if run.totals.requests > 0 {
            rows.push((
                crate::ALL_COMMANDS.to_string(),
                "server_cpu_us_per_op",
                cpu * 1e6 / run.totals.requests as f64,
            ));
        }
    }
    rows.retain(|(_, _, v)| v.is_finite());
    rows
}
