//! The runner's side of a trial's server evidence ([`crate::evidence`]): which nodes
//! the target has, reading them around the measurement, and saying once per run what
//! the target could not tell.

use super::*;
use crate::evidence::{self, Hardware, Node, NodeReading};
use resplab_sys::perf::Counting;

impl Runner<'_> {
    /// The nodes of this execution's target: a local cluster's every node, or the one
    /// server at `port` (with its pid when this run started it).
    pub(super) fn evidence_nodes(&self, port: u16, process: Option<&ServerProcess>) -> Vec<Node> {
        if !self.cluster_nodes.is_empty() {
            return self.cluster_nodes.clone();
        }
        let shared = self
            .shared
            .as_ref()
            .filter(|s| s.2.port == port)
            .and_then(|s| s.2.pid());
        vec![Node {
            port,
            pid: process.and_then(ServerProcess::pid).or(shared),
            master: true,
        }]
    }

    /// Reads every node: the first through `ctl`, the others through new control
    /// connections with the variant's connection settings.
    pub(super) fn read_evidence(
        &self,
        base: &Variant,
        nodes: &[Node],
        ctl: &mut Client,
    ) -> Vec<NodeReading> {
        let connect = |port: u16| self.control(base, "127.0.0.1", port).ok();
        evidence::read_all(nodes, ctl, &connect)
    }

    /// Starts counting the hardware events of every node's process, when every pid is
    /// known and counting has not already proved useless in this run.
    pub(super) fn start_counting(&self, nodes: &[Node]) -> Option<Result<Counting, String>> {
        let pids: Vec<u32> = nodes.iter().filter_map(|n| n.pid).collect();
        if self.hardware_off || pids.is_empty() || pids.len() != nodes.len() {
            return None;
        }
        Some(Counting::start(
            self.exp.perf.as_deref().unwrap_or("perf"),
            &pids,
        ))
    }

    /// Stops counting; once counting proves useless (perf cannot run, or the machine
    /// supports none of the events), the rest of the run does not try again.
    pub(super) fn finish_counting(
        &mut self,
        counting: Option<Result<Counting, String>>,
    ) -> Hardware {
        let hardware = match counting {
            None => Hardware::NotCounted,
            Some(Err(why)) => Hardware::Unavailable(why),
            Some(Ok(c)) => match c.finish() {
                Ok(counts) => Hardware::Counts(counts),
                Err(why) => Hardware::Unavailable(why),
            },
        };
        self.hardware_off |= hardware.is_useless();
        hardware
    }

    /// The trial's evidence rows and server CPU seconds; what the target did not tell is
    /// kept with the trial's server facts and, the first time in this run, announced
    /// once the trial is stored ([`Runner::give_notices`]).
    pub(super) fn finish_evidence(
        &mut self,
        nodes: &[Node],
        readings: (&[NodeReading], &[NodeReading]),
        hardware: &Hardware,
        requests: u64,
        info: &mut ServerInfo,
    ) -> (Vec<resplab_store::MetricRow>, Option<f64>) {
        let (before, after) = readings;
        let ev = evidence::derive(nodes, before, after, requests, hardware);
        if !ev.notes.is_empty() {
            info.entry("resplab".into())
                .or_default()
                .insert("evidence_notes".into(), ev.notes.join("; "));
        }
        for note in &ev.notes {
            if self.noticed.insert(note.clone()) {
                self.pending_notices.push(note.clone());
            }
        }
        (ev.rows, ev.cpu_sec)
    }

    /// Announces the notices of the trial just stored.
    pub(super) fn give_notices(&mut self) {
        for note in std::mem::take(&mut self.pending_notices) {
            (self.on_event)(Event::Notice(&note));
        }
    }
}
