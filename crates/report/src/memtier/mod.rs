//! memtier_benchmark's outputs of `resplab memtier` runs: the text report (run
//! information, the statistics table, the latency distribution), the
//! `--json-out-file` document (format version 2) and the `--hdr-file-prefix` files.
//!
//! Each run's [`RunRecord`] is first reduced to a [`Section`]: one row per request type
//! (`Sets`, `Gets`, `Waits` for a SET:GET mix; one per command name for `--command`
//! lines, memtier's default grouping by first word) plus `Totals`, each with its rates
//! and its exact latency histogram. With `--run-count N` the sections are memtier's
//! `BEST RUN RESULTS`, `WORST RUN RESULTS` (by total ops/sec) and `AGGREGATED AVERAGE
//! RESULTS (N runs)` (rates averaged over the runs, histograms merged). The three
//! writers ([`table`], [`json`], [`hdr`]) only format sections; [`files`] opens the
//! output files before a run and fills them after it.
//!
//! Hits and misses (mix only, as in memtier): a GET answered with a nil reply is a
//! miss, any other non-error reply a hit.

pub mod files;
pub mod hdr;
pub mod json;
pub mod table;

use resplab_results::{RunRecord, Summary};
use resplab_stats::hist::LatencyHistogram;

/// What the writers need to know of the command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// `-t`.
    pub threads: u32,
    /// `-c`: connections per thread.
    pub clients_per_thread: u32,
    /// `-n` (per client), or `None` for a `--test-time` run.
    pub requests_per_client: Option<u64>,
    /// `--test-time` seconds, when given.
    pub seconds: Option<u64>,
    /// `--command` mode: the command names of the run, in the order given
    /// (upper case, each once); empty for a SET:GET mix.
    pub commands: Vec<String>,
    /// `--print-percentiles`.
    pub percentiles: Vec<f64>,
    /// `--hide-histogram`.
    pub hide_histogram: bool,
    /// `--cluster-mode`: the table and the JSON have MOVED/sec and ASK/sec.
    pub cluster: bool,
    /// `--clients-start`, `--clients-step`, `--step-duration` (seconds): the JSON has
    /// memtier's `"Active Clients"` per second.
    pub staircase: Option<(u32, u32, u64)>,
}

impl Shape {
    fn is_mix(&self) -> bool {
        self.commands.is_empty()
    }

    /// A staircase's clients per thread during second `sec` of the run: the start, one
    /// step more after each step's duration, at most `--clients`.
    pub fn clients_at(&self, sec: u64) -> u32 {
        match self.staircase {
            Some((start, step, every)) => {
                let steps = sec / every.max(1);
                let n = u64::from(start) + u64::from(step) * steps;
                n.min(u64::from(self.clients_per_thread)) as u32
            }
            None => self.clients_per_thread,
        }
    }
}

/// One row of the table: a request type or the totals.
#[derive(Clone, Debug)]
pub struct TypeStats {
    /// The histogram name memtier uses (`SET`, `GET`, `WAIT`, `HSET`), or `Totals`.
    pub name: String,
    /// Requests answered.
    pub count: f64,
    pub ops_per_sec: f64,
    pub hits_per_sec: f64,
    pub misses_per_sec: f64,
    /// Bytes received and sent per second, in KB (1,024 bytes).
    pub kb_rx_per_sec: f64,
    pub kb_tx_per_sec: f64,
    /// Requests lost to connection failures.
    pub connection_errors: f64,
    /// Cluster redirections per second (`MOVED`, `ASK`): counted for the totals only
    /// (the engine counts them per node, not per command), `None` for a type.
    pub moved_per_sec: Option<f64>,
    pub ask_per_sec: Option<f64>,
    /// Every latency, exactly (nanoseconds).
    pub hist: LatencyHistogram,
}

impl TypeStats {
    /// memtier's row label: `Sets`, `Hsets`, `Totals`.
    pub fn label(&self) -> String {
        if self.name == "Totals" {
            return self.name.clone();
        }
        let lower = self.name.to_ascii_lowercase();
        let mut chars = lower.chars();
        match chars.next() {
            Some(c) => format!("{}{}s", c.to_ascii_uppercase(), chars.as_str()),
            None => "s".into(),
        }
    }
}

/// One result section (a run, or a derived best/worst/average).
#[derive(Clone, Debug)]
pub struct Section {
    /// `ALL STATS`, `RUN #2 RESULTS`, `BEST RUN RESULTS`, …
    pub title: String,
    /// The request types, in memtier's order.
    pub types: Vec<TypeStats>,
    pub totals: TypeStats,
    /// Wall-clock start and finish, ms since the epoch.
    pub start_ms: u64,
    pub finish_ms: u64,
    pub interrupted: bool,
    /// Per-second totals: (second since the start, requests answered).
    pub series: Vec<(u64, u64)>,
}

/// The sections memtier prints for `runs` (one record per run): `ALL STATS` for one run;
/// for several, each run (with `print_all_runs`), then best, worst and the average.
pub fn sections(shape: &Shape, runs: &[RunRecord], print_all_runs: bool) -> Vec<Section> {
    let each: Vec<Section> = runs.iter().map(|r| section(shape, r, "")).collect();
    if each.len() == 1 {
        let mut only = each;
        only[0].title = "ALL STATS".into();
        return only;
    }
    let mut out = Vec::new();
    if print_all_runs {
        for (i, s) in each.iter().enumerate() {
            let mut s = s.clone();
            s.title = format!("RUN #{} RESULTS", i + 1);
            out.push(s);
        }
    }
    let by_rate =
        |a: &&Section, b: &&Section| a.totals.ops_per_sec.total_cmp(&b.totals.ops_per_sec);
    if let (Some(best), Some(worst)) = (each.iter().max_by(by_rate), each.iter().min_by(by_rate)) {
        let mut best = best.clone();
        best.title = "BEST RUN RESULTS".into();
        let mut worst = worst.clone();
        worst.title = "WORST RUN RESULTS".into();
        out.push(best);
        out.push(worst);
    }
    out.push(average(&each));
    out
}

/// One run's section.
fn section(shape: &Shape, r: &RunRecord, title: &str) -> Section {
    let secs = r.duration_sec;
    let names: Vec<String> = if shape.is_mix() {
        vec!["SET".into(), "GET".into(), "WAIT".into()]
    } else {
        shape.commands.clone()
    };
    let mut types = Vec::new();
    for name in &names {
        // A command given twice is recorded as NAME and NAME#2: memtier groups them.
        let parts: Vec<&Summary> = r
            .commands
            .iter()
            .filter(|(k, _)| k.split('#').next() == Some(name.as_str()))
            .map(|(_, s)| s)
            .collect();
        types.push(type_stats(
            name,
            &parts,
            secs,
            shape.is_mix() && name == "GET",
        ));
    }
    let mut totals = type_stats("Totals", &[&r.totals], secs, false);
    if let Some(c) = r.cluster.as_ref().filter(|_| secs > 0.0) {
        totals.moved_per_sec = Some(c.moved as f64 / secs);
        totals.ask_per_sec = Some(c.ask as f64 / secs);
    }
    if shape.is_mix() {
        totals.hits_per_sec = types[1].hits_per_sec;
        totals.misses_per_sec = types[1].misses_per_sec;
    }
    let start_ms = r.started_at_unix_ms + (r.warmup_sec * 1000.0) as u64;
    Section {
        title: title.to_string(),
        types,
        totals,
        start_ms,
        finish_ms: start_ms + (secs * 1000.0).round() as u64,
        interrupted: !matches!(r.end, resplab_results::RunEnd::Completed),
        series: per_second(r),
    }
}

/// Requests per whole second of the run (the record's series may be finer: 0.1 s for
/// short runs). A sample counts in the second its interval began.
fn per_second(r: &RunRecord) -> Vec<(u64, u64)> {
    let step = if r.series_interval_sec > 0.0 {
        r.series_interval_sec
    } else {
        1.0
    };
    let mut out: Vec<(u64, u64)> = Vec::new();
    for s in &r.series {
        let sec = ((s.t_sec - step).max(0.0) + 1e-9).floor() as u64;
        match out.last_mut() {
            Some((last, n)) if *last == sec => *n += s.requests,
            _ => out.push((sec, s.requests)),
        }
    }
    out
}

fn type_stats(name: &str, parts: &[&Summary], secs: f64, hits: bool) -> TypeStats {
    let per_sec = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
    let mut hist = LatencyHistogram::new();
    let (mut count, mut nils, mut errors, mut rx, mut tx, mut lost) = (0, 0, 0, 0, 0, 0);
    for s in parts {
        if let Ok(h) = LatencyHistogram::from_base64(&s.histogram) {
            hist.merge(&h);
        }
        count += s.requests;
        nils += s.nil_replies;
        errors += s.errors;
        rx += s.bytes_in;
        tx += s.bytes_out;
        lost += s.error_kinds.get("connection_lost").copied().unwrap_or(0);
    }
    TypeStats {
        name: name.to_string(),
        count: count as f64,
        ops_per_sec: per_sec(count),
        hits_per_sec: if hits {
            per_sec(count.saturating_sub(nils + errors))
        } else {
            0.0
        },
        misses_per_sec: if hits { per_sec(nils) } else { 0.0 },
        kb_rx_per_sec: per_sec(rx) / 1024.0,
        kb_tx_per_sec: per_sec(tx) / 1024.0,
        connection_errors: lost as f64,
        moved_per_sec: None,
        ask_per_sec: None,
        hist,
    }
}

/// memtier's aggregated average: rates and counts averaged over the runs, latency
/// histograms merged.
fn average(runs: &[Section]) -> Section {
    let n = runs.len().max(1) as f64;
    let avg = |rows: Vec<&TypeStats>| {
        let mut out = rows[0].clone();
        out.hist = LatencyHistogram::new();
        let sum = |f: fn(&TypeStats) -> f64| rows.iter().map(|r| f(r)).sum::<f64>() / n;
        out.count = sum(|r| r.count);
        out.ops_per_sec = sum(|r| r.ops_per_sec);
        out.hits_per_sec = sum(|r| r.hits_per_sec);
        out.misses_per_sec = sum(|r| r.misses_per_sec);
        out.kb_rx_per_sec = sum(|r| r.kb_rx_per_sec);
        out.kb_tx_per_sec = sum(|r| r.kb_tx_per_sec);
        out.connection_errors = sum(|r| r.connection_errors);
        if rows.iter().all(|r| r.moved_per_sec.is_some()) {
            out.moved_per_sec = Some(sum(|r| r.moved_per_sec.unwrap_or(0.0)));
            out.ask_per_sec = Some(sum(|r| r.ask_per_sec.unwrap_or(0.0)));
        }
        for r in &rows {
            out.hist.merge(&r.hist);
        }
        out
    };
    let first = &runs[0];
    Section {
        title: format!("AGGREGATED AVERAGE RESULTS ({} runs)", runs.len()),
        types: (0..first.types.len())
            .map(|i| avg(runs.iter().map(|s| &s.types[i]).collect()))
            .collect(),
        totals: avg(runs.iter().map(|s| &s.totals).collect()),
        start_ms: first.start_ms,
        finish_ms: runs.last().map_or(first.finish_ms, |s| s.finish_ms),
        interrupted: runs.iter().any(|s| s.interrupted),
        series: Vec::new(),
    }
}

/// Milliseconds of a nanosecond latency.
fn ms(ns: f64) -> f64 {
    ns / 1e6
}

#[cfg(test)]
mod tests;
