//! The metric rows of a trial's evidence: differences of two readings, per command and
//! per trial, each with its unit and direction.

use super::read::{Buckets, CommandStat, NodeReading};
use super::{Evidence, Hardware, Node, MIN_COMMAND_SHARE};
use resplab_store::{MetricRow, ALL_COMMANDS};
use std::collections::BTreeMap;

/// One node's readings before and after a trial.
pub type Pair<'a> = (&'a Node, &'a NodeReading, &'a NodeReading);

const LOWER: &str = "lower_is_better";
const HIGHER: &str = "higher_is_better";
const UNKNOWN: &str = "unknown";

fn row(
    prefix: &str,
    command: &str,
    name: &str,
    unit: &str,
    direction: &str,
    value: f64,
) -> MetricRow {
    MetricRow {
        command: command.to_string(),
        name: format!("{prefix}{name}"),
        unit: unit.to_string(),
        direction: direction.to_string(),
        value,
    }
}

/// Every row of one group of nodes (the whole target, or one node): commands summed over
/// `masters`, CPU and process counters over `every`; the CPU seconds go to `ev.cpu_sec`.
/// Returns the number of ops the per-op figures are divided by.
pub fn all_rows(
    ev: &mut Evidence,
    prefix: &str,
    masters: &[Pair<'_>],
    every: &[Pair<'_>],
    requests: u64,
) -> f64 {
    let commands = command_deltas(masters);
    let calls: u64 = commands.values().map(|c| c.calls).sum();
    let ops = if calls > 0 { calls } else { requests } as f64;
    command_rows(ev, prefix, &commands, calls);
    latency_rows(ev, prefix, masters, &commands, calls);
    if ops > 0.0 {
        let process = process_rows(ev, prefix, every, ops);
        stats_rows(ev, prefix, masters, every, ops, process.is_some());
        ev.cpu_sec = process.or_else(|| info_cpu_sec(every));
    }
    ops
}

/// Instructions, cycles, IPC and cache misses per op, for the events counted.
pub fn hardware_rows(ev: &mut Evidence, hardware: &Hardware, ops: f64) {
    let Hardware::Counts(counts) = hardware else {
        return;
    };
    let get = |name: &str| counts.iter().find(|(n, _)| n == name).and_then(|(_, v)| *v);
    let all = ALL_COMMANDS;
    if ops > 0.0 {
        let per_op = [
            (
                "instructions",
                "server_instructions_per_op",
                "instructions/op",
            ),
            ("cycles", "server_cycles_per_op", "cycles/op"),
            ("cache-misses", "server_cache_misses_per_op", "misses/op"),
        ];
        for (event, name, unit) in per_op {
            if let Some(v) = get(event) {
                ev.rows.push(row("", all, name, unit, LOWER, v / ops));
            }
        }
    }
    if let (Some(i), Some(c)) = (get("instructions"), get("cycles")) {
        if c > 0.0 {
            ev.rows.push(row(
                "",
                all,
                "server_ipc",
                "instructions/cycle",
                HIGHER,
                i / c,
            ));
        }
    }
}

/// The one line saying which hardware counters are missing and why, if any are.
pub fn hardware_note(hardware: &Hardware) -> Option<String> {
    const WHAT: &str = "no instructions, cycles, IPC or cache misses per op";
    match hardware {
        Hardware::NotCounted => None,
        Hardware::Unavailable(why) => Some(format!("hardware counters unavailable: {why}: {WHAT}")),
        Hardware::Counts(c) => {
            let missing: Vec<&str> = c
                .iter()
                .filter(|(_, v)| v.is_none())
                .map(|(n, _)| n.as_str())
                .collect();
            (!missing.is_empty()).then(|| {
                format!(
                    "hardware counters unavailable: perf stat reports {} <not supported> \
                     (this machine exposes no PMU to the kernel, as in most virtual machines)",
                    missing.join(", ")
                )
            })
        }
    }
}

/// Each command's statistics during the trial, summed over `nodes` (commands without
/// calls left out).
fn command_deltas(nodes: &[Pair<'_>]) -> BTreeMap<String, CommandStat> {
    let mut out: BTreeMap<String, CommandStat> = BTreeMap::new();
    for (_, before, after) in nodes {
        let Some(a) = &after.commandstats else {
            continue;
        };
        let none = BTreeMap::new();
        let b = before.commandstats.as_ref().unwrap_or(&none);
        for (name, s) in a {
            let old = b.get(name).copied().unwrap_or_default();
            let e = out.entry(name.clone()).or_default();
            e.calls += s.calls.saturating_sub(old.calls);
            e.usec += s.usec.saturating_sub(old.usec);
            let diff = |x: Option<u64>, y: Option<u64>| x.map(|x| x.saturating_sub(y.unwrap_or(0)));
            if let Some(f) = diff(s.failed, old.failed) {
                *e.failed.get_or_insert(0) += f;
            }
            if let Some(r) = diff(s.rejected, old.rejected) {
                *e.rejected.get_or_insert(0) += r;
            }
        }
    }
    out.retain(|name, c| c.calls > 0 && !OWN_COMMANDS.contains(&name.as_str()));
    out
}

/// The commands the readings themselves send: never the trial's.
pub const OWN_COMMANDS: &[&str] = &["INFO", "LATENCY|HISTOGRAM"];

/// True when `calls` is a large enough share of the trial's `total` to be a metric.
fn counts(calls: u64, total: u64) -> bool {
    total > 0 && calls as f64 >= MIN_COMMAND_SHARE * total as f64
}

fn command_rows(
    ev: &mut Evidence,
    prefix: &str,
    commands: &BTreeMap<String, CommandStat>,
    total: u64,
) {
    for (name, c) in commands.iter().filter(|(_, c)| counts(c.calls, total)) {
        ev.rows.push(row(
            prefix,
            name,
            "server_calls",
            "calls",
            UNKNOWN,
            c.calls as f64,
        ));
        ev.rows.push(row(
            prefix,
            name,
            "server_usec_per_call",
            "us/call",
            LOWER,
            c.usec as f64 / c.calls as f64,
        ));
        if let Some(f) = c.failed {
            ev.rows.push(row(
                prefix,
                name,
                "server_failed_calls",
                "errors",
                LOWER,
                f as f64,
            ));
        }
        if let Some(r) = c.rejected {
            ev.rows.push(row(
                prefix,
                name,
                "server_rejected_calls",
                "errors",
                LOWER,
                r as f64,
            ));
        }
    }
}

/// `server_p50_us` and `server_p99_us` of each counted command, from the latency
/// histograms' differences summed over `nodes`.
fn latency_rows(
    ev: &mut Evidence,
    prefix: &str,
    nodes: &[Pair<'_>],
    commands: &BTreeMap<String, CommandStat>,
    total: u64,
) {
    for name in commands
        .iter()
        .filter(|(_, c)| counts(c.calls, total))
        .map(|(n, _)| n)
    {
        let mut merged: BTreeMap<u64, u64> = BTreeMap::new();
        for (_, before, after) in nodes {
            let Some(a) = after.latency.as_ref().and_then(|l| l.get(name)) else {
                continue;
            };
            let b = before.latency.as_ref().and_then(|l| l.get(name));
            for (bound, n) in bucket_delta(b, a) {
                *merged.entry(bound).or_default() += n;
            }
        }
        for (q, metric) in [(0.5, "server_p50_us"), (0.99, "server_p99_us")] {
            if let Some(v) = quantile(&merged, q) {
                ev.rows.push(row(prefix, name, metric, "us", LOWER, v));
            }
        }
    }
}

/// The count of each bucket added between two cumulative histograms.
pub fn bucket_delta(before: Option<&Buckets>, after: &Buckets) -> BTreeMap<u64, u64> {
    let per_bucket = |b: &Buckets| -> BTreeMap<u64, u64> {
        let mut prev = 0;
        b.iter()
            .map(|&(bound, cum)| {
                let n = cum.saturating_sub(prev);
                prev = prev.max(cum);
                (bound, n)
            })
            .collect()
    };
    let old = before.map(per_bucket).unwrap_or_default();
    let mut out = per_bucket(after);
    for (bound, n) in out.iter_mut() {
        *n = n.saturating_sub(old.get(bound).copied().unwrap_or(0));
    }
    out.retain(|_, n| *n > 0);
    out
}

/// The `q` quantile of power-of-two buckets (upper bound → count), interpolated
/// linearly inside the bucket it falls in (from half its bound to its bound).
pub fn quantile(buckets: &BTreeMap<u64, u64>, q: f64) -> Option<f64> {
    let total: u64 = buckets.values().sum();
    if total == 0 {
        return None;
    }
    let target = q * total as f64;
    let mut below = 0.0;
    for (&bound, &n) in buckets {
        let n = n as f64;
        if below + n >= target {
            let low = if bound <= 1 { 0.0 } else { bound as f64 / 2.0 };
            return Some(low + (bound as f64 - low) * ((target - below) / n).clamp(0.0, 1.0));
        }
        below += n;
    }
    buckets.keys().next_back().map(|&b| b as f64)
}

/// The change of a numeric field summed over `nodes`; `None` when no node has it both
/// times or it went back (a restarted counter).
fn field_delta(nodes: &[Pair<'_>], field: &str) -> Option<f64> {
    let mut sum = None;
    for (_, b, a) in nodes {
        if let (Some(x), Some(y)) = (b.fields.get(field), a.fields.get(field)) {
            if y < x {
                return None;
            }
            *sum.get_or_insert(0.0) += y - x;
        }
    }
    sum
}

/// Network bytes, expired and evicted keys (`INFO stats`, over the masters) and CPU per
/// op (`INFO cpu`, over every node: the main thread's, and the whole process's unless
/// `have_process` says the process counters measured it to the nanosecond).
fn stats_rows(
    ev: &mut Evidence,
    prefix: &str,
    masters: &[Pair<'_>],
    every: &[Pair<'_>],
    ops: f64,
    have_process: bool,
) {
    let all = ALL_COMMANDS;
    let per_op = [
        (
            "total_net_input_bytes",
            "server_net_in_bytes_per_op",
            "B/op",
        ),
        (
            "total_net_output_bytes",
            "server_net_out_bytes_per_op",
            "B/op",
        ),
    ];
    for (field, name, unit) in per_op {
        if let Some(d) = field_delta(masters, field) {
            ev.rows.push(row(prefix, all, name, unit, LOWER, d / ops));
        }
    }
    for (field, name) in [
        ("expired_keys", "server_expired_keys"),
        ("evicted_keys", "server_evicted_keys"),
    ] {
        if let Some(d) = field_delta(masters, field) {
            ev.rows.push(row(prefix, all, name, "keys", UNKNOWN, d));
        }
    }
    let cpu = [
        ("used_cpu_user", "server_info_cpu_user_us_per_op"),
        ("used_cpu_sys", "server_info_cpu_sys_us_per_op"),
        (
            "used_cpu_user_main_thread",
            "server_main_thread_cpu_user_us_per_op",
        ),
        (
            "used_cpu_sys_main_thread",
            "server_main_thread_cpu_sys_us_per_op",
        ),
    ];
    let skip = if have_process { 2 } else { 0 };
    for (field, name) in cpu.into_iter().skip(skip) {
        if let Some(d) = field_delta(every, field) {
            ev.rows
                .push(row(prefix, all, name, "us/op", LOWER, d * 1e6 / ops));
        }
    }
}

/// `INFO cpu`'s user + system seconds over `nodes`.
fn info_cpu_sec(nodes: &[Pair<'_>]) -> Option<f64> {
    Some(field_delta(nodes, "used_cpu_user")? + field_delta(nodes, "used_cpu_sys")?)
}

/// The process counters of `nodes` per op, when every node's process was read both
/// times; returns their CPU seconds (run time to the nanosecond).
pub fn process_rows(ev: &mut Evidence, prefix: &str, nodes: &[Pair<'_>], ops: f64) -> Option<f64> {
    let mut d = resplab_sys::proc::ProcessCounters::default();
    let mut migrations = Some(0u64);
    for (_, b, a) in nodes {
        let (b, a) = (b.process?, a.process?);
        let sub = |x: u64, y: u64| y.saturating_sub(x);
        d.run_ns += sub(b.run_ns, a.run_ns);
        d.wait_ns += sub(b.wait_ns, a.wait_ns);
        d.voluntary_switches += sub(b.voluntary_switches, a.voluntary_switches);
        d.involuntary_switches += sub(b.involuntary_switches, a.involuntary_switches);
        d.minor_faults += sub(b.minor_faults, a.minor_faults);
        d.major_faults += sub(b.major_faults, a.major_faults);
        d.utime_ticks += sub(b.utime_ticks, a.utime_ticks);
        d.stime_ticks += sub(b.stime_ticks, a.stime_ticks);
        migrations = match (migrations, b.migrations, a.migrations) {
            (Some(m), Some(x), Some(y)) => Some(m + y.saturating_sub(x)),
            _ => None,
        };
    }
    let all = ALL_COMMANDS;
    let run_us = d.run_ns as f64 / 1e3;
    let ticks = (d.utime_ticks + d.stime_ticks) as f64;
    if ticks > 0.0 {
        // The run time to the nanosecond, split as the clock ticks split it.
        let user = run_us * d.utime_ticks as f64 / ticks;
        ev.rows.push(row(
            prefix,
            all,
            "server_cpu_user_us_per_op",
            "us/op",
            LOWER,
            user / ops,
        ));
        ev.rows.push(row(
            prefix,
            all,
            "server_cpu_sys_us_per_op",
            "us/op",
            LOWER,
            (run_us - user) / ops,
        ));
    }
    let mut per_op = vec![
        ("server_run_wait_us_per_op", "us/op", d.wait_ns as f64 / 1e3),
        (
            "server_voluntary_switches_per_op",
            "switches/op",
            d.voluntary_switches as f64,
        ),
        (
            "server_involuntary_switches_per_op",
            "switches/op",
            d.involuntary_switches as f64,
        ),
        (
            "server_minor_faults_per_op",
            "faults/op",
            d.minor_faults as f64,
        ),
        (
            "server_major_faults_per_op",
            "faults/op",
            d.major_faults as f64,
        ),
    ];
    if let Some(m) = migrations {
        per_op.push(("server_migrations_per_op", "migrations/op", m as f64));
    }
    for (name, unit, value) in per_op {
        ev.rows
            .push(row(prefix, all, name, unit, LOWER, value / ops));
    }
    if !prefix.is_empty() {
        // A node's CPU per op; the whole target's is the trial's server CPU.
        ev.rows.push(row(
            prefix,
            all,
            "server_cpu_us_per_op",
            "us/op",
            LOWER,
            run_us / ops,
        ));
    }
    Some(d.run_ns as f64 / 1e9)
}

/// One line for each kind of evidence the target did not give.
pub fn notes(pairs: &[Pair<'_>]) -> Vec<String> {
    let mut out = Vec::new();
    let missing = |f: &dyn Fn(&NodeReading) -> bool| pairs.iter().any(|(_, b, a)| f(b) || f(a));
    if missing(&|r| r.commandstats.is_none()) {
        out.push(
            "the server does not answer INFO commandstats: no per-command server metrics".into(),
        );
    }
    if missing(&|r| r.latency.is_none()) {
        out.push(
            "the server does not answer LATENCY HISTOGRAM (Redis 7+ and Valkey do): no server-side latency quantiles"
                .into(),
        );
    }
    if pairs.iter().any(|(n, _, _)| n.pid.is_none()) {
        out.push(
            "the server was not started by this run (its pid is unknown): no process counters, server CPU from INFO cpu"
                .into(),
        );
    } else if missing(&|r| r.process.is_none()) {
        out.push("the server's /proc entries could not be read: no process counters".into());
    } else if pairs.iter().any(|(_, b, a)| {
        b.process.is_some_and(|p| p.migrations.is_none())
            || a.process.is_some_and(|p| p.migrations.is_none())
    }) {
        out.push(
            "the kernel keeps no /proc/PID/sched (CONFIG_SCHED_DEBUG): no CPU migrations".into(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_differences_and_interpolated_quantiles() {
        let before = vec![(1, 2), (2, 4)];
        let after = vec![(1, 2), (2, 10), (4, 12)];
        let d = bucket_delta(Some(&before), &after);
        assert_eq!(d.into_iter().collect::<Vec<_>>(), vec![(2, 6), (4, 2)]);
        let b: BTreeMap<u64, u64> = [(2, 50), (4, 50)].into_iter().collect();
        assert_eq!(quantile(&b, 0.5), Some(2.0));
        assert_eq!(quantile(&b, 0.75), Some(3.0));
        assert_eq!(quantile(&BTreeMap::new(), 0.5), None);
        let one: BTreeMap<u64, u64> = [(1, 4)].into_iter().collect();
        assert_eq!(quantile(&one, 0.5), Some(0.5));
    }
}
