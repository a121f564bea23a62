//! The terminal table printed after `resplab bench`: one row per command, then the total.
//!
//! Latency columns are milliseconds, like redis-benchmark and memtier print them. The load
//! model heads the table, because closed-loop latency restates throughput (Little's law)
//! and must never be read as a second result.

use resplab_results::{RunEnd, RunRecord, Summary};
use std::fmt::Write as _;

/// Renders the result table of one run, commands in `order` (names missing from the
/// record are skipped; commands not named in `order` follow in name order).
pub fn render(record: &RunRecord, order: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "load model: {}", record.load_model.label());
    let _ = writeln!(
        out,
        "measured {:.2} s after {:.1} s warm-up, seed {}",
        record.duration_sec, record.warmup_sec, record.seed
    );
    let name_width = record
        .commands
        .keys()
        .map(|k| k.len())
        .chain([5])
        .max()
        .unwrap_or(5);
    header(&mut out, name_width);
    command_rows(&mut out, record, order, name_width);
    open_loop_lines(&mut out, record);
    error_lines(&mut out, record);
    tls_line(&mut out, record);
    cpu_and_end_lines(&mut out, record);
    shard_lines(&mut out, record);
    cluster_line(&mut out, record);
    for w in &record.warnings {
        let _ = writeln!(out, "warning: {}", w.message());
    }
    out
}

/// The column headings, the name column `name_width` wide.
fn header(out: &mut String, name_width: usize) {
    let _ = writeln!(
        out,
        "{:<w$} {:>12} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>10} {:>8}",
        "",
        "ops/s",
        "mean ms",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "KB/s in",
        "KB/s out",
        "errors",
        w = name_width
    );
}

/// One row per command in `order`, then the others, then the total when there are
/// several commands.
fn command_rows(out: &mut String, record: &RunRecord, order: &[String], name_width: usize) {
    let mut names: Vec<&String> = order
        .iter()
        .filter(|n| record.commands.contains_key(*n))
        .collect();
    for name in record.commands.keys() {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    for name in names {
        row(
            out,
            name,
            &record.commands[name],
            record.duration_sec,
            name_width,
        );
    }
    if record.commands.len() != 1 {
        row(
            out,
            "TOTAL",
            &record.totals,
            record.duration_sec,
            name_width,
        );
    }
}

/// Service time and send lag of an open-loop run.
fn open_loop_lines(out: &mut String, record: &RunRecord) {
    if let Some(ol) = &record.open_loop {
        let _ = writeln!(
            out,
            "service time (from actual send): p50 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms",
            ol.service_time_us.p50 / 1e3,
            ol.service_time_us.p99 / 1e3,
            ol.service_time_us.p99_9 / 1e3
        );
        let _ = writeln!(
            out,
            "send lag (actual - intended): p50 {:.1} us, p99.9 {:.1} us (limit {:.1} us), unsent {}",
            ol.send_lag_us.p50, ol.send_lag_us.p99_9, ol.send_lag_limit_us, ol.unsent
        );
    }
}

/// Connection trouble and the error replies of each command.
fn error_lines(out: &mut String, record: &RunRecord) {
    let c = &record.connections;
    if c.reconnects > 0 || c.protocol_errors > 0 {
        let _ = writeln!(
            out,
            "connections: {} opened, {} reconnects, {} protocol errors",
            c.opened, c.reconnects, c.protocol_errors
        );
    }
    for (name, s) in &record.commands {
        if !s.error_kinds.is_empty() {
            let kinds: Vec<String> = s
                .error_kinds
                .iter()
                .map(|(k, n)| format!("{k} x{n}"))
                .collect();
            let _ = writeln!(out, "errors in {name}: {}", kinds.join(", "));
        }
    }
}

/// The connection set-up cost of a TLS run.
fn tls_line(out: &mut String, record: &RunRecord) {
    if let (Some(s), Some(tls)) = (&record.connections.setup_us, record.config.get("tls")) {
        let _ = writeln!(
            out,
            "TLS{}: connection set-up (connect, handshake, AUTH/HELLO) p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms; not in the figures above",
            if tls["insecure"].as_bool() == Some(true) {
                " without certificate verification (--insecure)"
            } else {
                ""
            },
            s.p50 / 1e3,
            s.p99 / 1e3,
            s.max / 1e3
        );
    }
}

/// Client CPU per request, how the run ended and the throughput while the target was
/// reachable.
fn cpu_and_end_lines(out: &mut String, record: &RunRecord) {
    let requests = record.totals.requests.max(1) as f64;
    let _ = writeln!(
        out,
        "client CPU: {:.2} s user + {:.2} s system = {:.2} us per request",
        record.client_cpu.user_sec,
        record.client_cpu.system_sec,
        record.client_cpu.total_sec() * 1e6 / requests
    );
    match &record.end {
        RunEnd::Completed => {}
        RunEnd::Interrupted => {
            let _ = writeln!(out, "run interrupted: the figures cover what was measured");
        }
        RunEnd::ServerLost { message } => {
            let _ = writeln!(
                out,
                "server lost ({message}): the figures cover what was measured before"
            );
        }
        RunEnd::Unreachable { message, .. } => {
            let _ = writeln!(out, "outage: {message}");
        }
    }
    if let Some(up) = record.connections.ops_per_sec_while_reachable {
        let _ = writeln!(
            out,
            "throughput: {:.2} served requests per second over the whole {:.2} s window, {:.2} over the {:.2} s the target could be reached",
            record.totals.ops_per_sec,
            record.duration_sec,
            up,
            (record.duration_sec - record.connections.unreachable_sec).max(0.0)
        );
    }
}

/// The cluster topology and the redirections followed.
fn cluster_line(out: &mut String, record: &RunRecord) {
    if let Some(c) = &record.cluster {
        let _ = writeln!(
            out,
            "cluster ({}): {} masters, {} replicas (from {}); {} connections to each master ({} clients, one connection to every master each){}; followed {} MOVED, {} ASK, {} TRYAGAIN",
            if c.mode == "detected" { "detected: the target says cluster_enabled:1" } else { "--cluster" },
            c.masters,
            c.replicas,
            c.topology_source,
            c.connections_per_master,
            c.connections_per_master,
            if c.read_from_replicas { "; reads from replicas" } else { "" },
            c.moved,
            c.ask,
            c.tryagain
        );
    }
}

/// One row per cluster node (`--per-node`): the requests it answered and the
/// redirections it sent. Empty for a run that was not against a cluster.
pub fn render_nodes(record: &RunRecord) -> String {
    let mut out = String::new();
    if record.nodes.is_empty() {
        return out;
    }
    let width = record
        .nodes
        .keys()
        .map(|k| k.len() + 10)
        .chain([12])
        .max()
        .unwrap_or(12);
    let _ = writeln!(
        out,
        "{:<w$} {:>12} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8}",
        "node",
        "ops/s",
        "mean ms",
        "p50 ms",
        "p99 ms",
        "max ms",
        "errors",
        "MOVED",
        "ASK",
        "TRYAGAIN",
        w = width
    );
    for (name, n) in &record.nodes {
        let s = &n.summary;
        let _ = writeln!(
            out,
            "{:<w$} {:>12.2} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>8} {:>8} {:>8} {:>8}",
            format!("{name} {}", n.role),
            s.ops_per_sec,
            s.latency_us.mean / 1e3,
            s.latency_us.p50 / 1e3,
            s.latency_us.p99 / 1e3,
            s.latency_us.max / 1e3,
            s.errors,
            n.moved,
            n.ask,
            n.tryagain,
            w = width
        );
    }
    out
}

/// A shard run says which shard it was; a merged record lists its shards.
fn shard_lines(out: &mut String, record: &RunRecord) {
    if let Some(s) = &record.shard {
        let clock = match (s.clock_offset_ms, s.clock_rtt_ms) {
            (Some(o), Some(r)) => {
                format!("server clock {o:+.1} ms from this host's (TIME, round trip {r:.2} ms)")
            }
            _ => "server clock offset unknown (no TIME)".to_string(),
        };
        let _ = writeln!(
            out,
            "shard {}/{} of master seed {} ({}); {clock}; merge the shards with resplab merge",
            s.index + 1,
            s.count,
            s.master_seed,
            if s.per_shard {
                "-c, -n and --rate per shard"
            } else {
                "its share of -c, -n and --rate"
            }
        );
    }
    if record.shards.is_empty() {
        return;
    }
    let count = record.shards.first().map_or(0, |m| m.shard.count);
    let spread = match resplab_results::merge::start_spread(&record.shards) {
        Some((ms, basis)) => format!("starts {ms:.1} ms apart ({basis})"),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "merged from {} of {count} shards, histograms added exactly; {spread}",
        record.shards.len()
    );
    for m in &record.shards {
        let requests = m.totals.requests.max(1) as f64;
        let _ = writeln!(
            out,
            "  shard {}/{count} on {}: {:.2} ops/s, p99 {:.3} ms, {} requests, client CPU {:.2} us per request{}",
            m.shard.index + 1,
            if m.host.hostname.is_empty() { "?" } else { m.host.hostname.as_str() },
            m.totals.ops_per_sec,
            m.totals.latency_us.p99 / 1e3,
            m.totals.requests,
            m.client_cpu.total_sec() * 1e6 / requests,
            match &m.end {
                RunEnd::Completed => "",
                _ => " (did not complete)",
            }
        );
    }
}

fn row(out: &mut String, name: &str, s: &Summary, duration_sec: f64, width: usize) {
    let secs = if duration_sec > 0.0 {
        duration_sec
    } else {
        1.0
    };
    let l = &s.latency_us;
    let _ = writeln!(
        out,
        "{:<w$} {:>12.2} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>10.2} {:>10.2} {:>8}",
        name,
        s.ops_per_sec,
        l.mean / 1e3,
        l.p50 / 1e3,
        l.p90 / 1e3,
        l.p99 / 1e3,
        l.p99_9 / 1e3,
        l.max / 1e3,
        s.bytes_in as f64 / 1024.0 / secs,
        s.bytes_out as f64 / 1024.0 / secs,
        s.errors,
        w = width
    );
}
