//! Server-side evidence per trial: why B is slower, in the server's own words.
//!
//! Before and after each counted trial the runner reads every node of the target
//! ([`read::read_node`]); the differences become metric rows of the trial, each with its
//! unit and direction, so `compare` and `report` give them verdicts like the load's own
//! figures. Per command (the command name in upper case, e.g. `SET`): `server_calls`,
//! `server_usec_per_call`, `server_failed_calls`, `server_rejected_calls` from
//! `INFO commandstats`, and `server_p50_us`, `server_p99_us` from `LATENCY HISTOGRAM`.
//! Per trial: network bytes, expired and evicted keys from `INFO stats`, CPU from
//! `INFO cpu`, and for a server this run started, its process's counters
//! ([`rows::process_rows`]). Names and sources are listed in `docs/evidence.md`.
//!
//! "Per op" is per call the server counted during the trial (the sum of the
//! commandstats calls, warm-up included), or per request the load generator counted
//! when the server keeps no commandstats. A command appears when it had at least
//! [`MIN_COMMAND_SHARE`] of the trial's calls, so the control connection's `INFO` and
//! the connections' set-up commands do not become metrics.
//!
//! A cluster's nodes are read one by one: every figure is kept per node (named
//! `node<i>_…`, masters first as the cluster was formed) and summed — commands over the
//! masters (a replica's calls restate its master's writes), CPU and process counters
//! over every node.

use crate::client::Client;
use resplab_store::MetricRow;

pub mod read;
pub mod rows;

pub use read::{read_node, NodeReading};

/// The smallest share of a trial's calls a command needs to get metrics of its own.
pub const MIN_COMMAND_SHARE: f64 = 0.01;

/// One node of the target as the runner knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub port: u16,
    /// The pid of a server this run started; `None` for a server at an address.
    pub pid: Option<u32>,
    /// False for a cluster's replica.
    pub master: bool,
}

/// The hardware counters of a trial, counted by `perf stat` on the server's pids
/// ([`resplab_sys::perf`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Hardware {
    /// Not counted (no pid known, or already found unavailable in this run).
    #[default]
    NotCounted,
    /// Each event's count, `None` where the machine does not support it.
    Counts(resplab_sys::perf::Counts),
    /// perf could not count: why, in one line.
    Unavailable(String),
}

impl Hardware {
    /// True when counting again in this run would give nothing: perf cannot run, or
    /// every event is unsupported.
    pub fn is_useless(&self) -> bool {
        match self {
            Hardware::NotCounted => false,
            Hardware::Unavailable(_) => true,
            Hardware::Counts(c) => c.iter().all(|(_, v)| v.is_none()),
        }
    }
}

/// What the evidence of one trial came to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evidence {
    pub rows: Vec<MetricRow>,
    /// What the server did not answer, in one line each (for the run's notices).
    pub notes: Vec<String>,
    /// The server's CPU seconds during the trial: its process's run time to the
    /// nanosecond where the pid is known, else `INFO cpu`'s user + system.
    pub cpu_sec: Option<f64>,
}

/// Reads every node: through `first` for the first (the trial's control connection),
/// through a new connection made by `connect` for the others (none when it fails).
pub fn read_all(
    nodes: &[Node],
    first: &mut Client,
    connect: &dyn Fn(u16) -> Option<Client>,
) -> Vec<NodeReading> {
    nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if i == 0 {
                read_node(first, n.pid)
            } else {
                match connect(n.port) {
                    Some(mut c) => read_node(&mut c, n.pid),
                    None => NodeReading {
                        process: n.pid.and_then(resplab_sys::proc::process_counters),
                        ..NodeReading::default()
                    },
                }
            }
        })
        .collect()
}

/// The evidence of a trial from the readings before and after it and its hardware
/// counters; `requests` is what the load generator counted (the denominator when the
/// server keeps no commandstats).
pub fn derive(
    nodes: &[Node],
    before: &[NodeReading],
    after: &[NodeReading],
    requests: u64,
    hardware: &Hardware,
) -> Evidence {
    let mut ev = Evidence::default();
    if nodes.is_empty() || before.len() != nodes.len() || after.len() != nodes.len() {
        return ev;
    }
    let pairs: Vec<(&Node, &NodeReading, &NodeReading)> = nodes
        .iter()
        .zip(before)
        .zip(after)
        .map(|((n, b), a)| (n, b, a))
        .collect();
    let masters: Vec<_> = pairs.iter().copied().filter(|(n, _, _)| n.master).collect();
    let ops = rows::all_rows(&mut ev, "", &masters, &pairs, requests);
    rows::hardware_rows(&mut ev, hardware, ops);
    if nodes.len() > 1 {
        for (i, p) in pairs.iter().enumerate() {
            let mut node = Evidence::default();
            rows::all_rows(&mut node, &format!("node{i}_"), &[*p], &[*p], requests);
            ev.rows.extend(node.rows);
        }
    }
    ev.notes = rows::notes(&pairs);
    ev.notes.extend(rows::hardware_note(hardware));
    ev
}

#[cfg(test)]
mod tests {
    use super::read::CommandStat;
    use super::*;
    use resplab_sys::proc::ProcessCounters;
    use std::collections::BTreeMap;

    fn reading(set_calls: u64, usec: u64, run_ns: u64, pid: bool) -> NodeReading {
        let stats: BTreeMap<String, CommandStat> = [
            (
                "SET".to_string(),
                CommandStat {
                    calls: set_calls,
                    usec,
                    failed: Some(0),
                    rejected: None,
                },
            ),
            (
                "INFO".to_string(),
                CommandStat {
                    calls: 3,
                    usec: 30,
                    ..CommandStat::default()
                },
            ),
        ]
        .into_iter()
        .collect();
        NodeReading {
            commandstats: Some(stats),
            fields: [("total_net_input_bytes".to_string(), set_calls as f64 * 40.0)]
                .into_iter()
                .collect(),
            latency: Some(
                [("SET".to_string(), vec![(1, set_calls / 2), (2, set_calls)])]
                    .into_iter()
                    .collect(),
            ),
            process: pid.then_some(ProcessCounters {
                run_ns,
                utime_ticks: run_ns / 10_000_000,
                migrations: Some(1),
                ..ProcessCounters::default()
            }),
        }
    }

    fn value(ev: &Evidence, command: &str, name: &str) -> Option<f64> {
        ev.rows
            .iter()
            .find(|r| r.command == command && r.name == name)
            .map(|r| r.value)
    }

    #[test]
    fn a_cluster_has_rows_per_node_and_summed_over_its_masters() {
        let node = |port, master| Node {
            port,
            pid: Some(u32::from(port)),
            master,
        };
        let nodes = [node(1, true), node(2, true), node(3, false)];
        let before = [
            reading(0, 0, 0, true),
            reading(0, 0, 0, true),
            reading(0, 0, 0, true),
        ];
        let after = [
            reading(600, 1200, 300_000_000, true),
            reading(400, 400, 200_000_000, true),
            // The replica's calls restate its masters' writes: not summed.
            reading(1000, 500, 100_000_000, true),
        ];
        let ev = derive(&nodes, &before, &after, 1000, &Hardware::NotCounted);
        assert_eq!(value(&ev, "SET", "server_calls"), Some(1000.0));
        assert_eq!(value(&ev, "SET", "server_usec_per_call"), Some(1.6));
        assert_eq!(value(&ev, "SET", "node0_server_calls"), Some(600.0));
        assert_eq!(value(&ev, "SET", "node1_server_usec_per_call"), Some(1.0));
        assert_eq!(value(&ev, "SET", "node2_server_calls"), Some(1000.0));
        // `INFO` had 0 calls between the readings: not a metric.
        assert_eq!(value(&ev, "INFO", "server_calls"), None);
        // CPU over every node, to the nanosecond.
        assert_eq!(ev.cpu_sec, Some(0.6));
        assert_eq!(value(&ev, ALL, "node0_server_cpu_us_per_op"), Some(500.0));
        assert_eq!(value(&ev, ALL, "server_net_in_bytes_per_op"), Some(40.0));
        assert!(value(&ev, "SET", "server_p50_us").is_some());
        assert!(ev.notes.is_empty(), "{:?}", ev.notes);
        // Every summed name is in the store's catalog, so primary_metric may name it.
        for r in ev.rows.iter().filter(|r| !r.name.starts_with("node")) {
            assert!(
                resplab_store::metrics::is_known_metric(&r.name),
                "{} is not in the catalog",
                r.name
            );
        }
    }

    const ALL: &str = resplab_store::ALL_COMMANDS;

    #[test]
    fn a_server_that_answers_less_has_fewer_metrics_and_says_so() {
        let nodes = [Node {
            port: 1,
            pid: None,
            master: true,
        }];
        let mut before = reading(0, 0, 0, false);
        let mut after = reading(100, 100, 0, false);
        for r in [&mut before, &mut after] {
            r.commandstats = None;
            r.latency = None;
        }
        after.fields.insert("used_cpu_user".into(), 0.5);
        before.fields.insert("used_cpu_user".into(), 0.25);
        after.fields.insert("used_cpu_sys".into(), 0.5);
        before.fields.insert("used_cpu_sys".into(), 0.5);
        let ev = derive(&nodes, &[before], &[after], 50, &Hardware::NotCounted);
        assert_eq!(ev.cpu_sec, Some(0.25));
        // Per op falls back to the load generator's requests.
        assert_eq!(value(&ev, ALL, "server_net_in_bytes_per_op"), Some(80.0));
        assert!(ev.rows.iter().all(|r| r.command == ALL));
        assert_eq!(ev.notes.len(), 3, "{:?}", ev.notes);
        assert!(derive(&nodes, &[], &[], 1, &Hardware::NotCounted)
            .rows
            .is_empty());
    }
}
