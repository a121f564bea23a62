//! The runner's side of a trial's server evidence ([`crate::evidence`]): which nodes
//! the target has, reading them around the measurement, and saying once per run what
//! the target could not tell.

use super::*;
use crate::evidence::{self, Node, NodeReading};

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

    /// The trial's evidence rows and server CPU seconds; what the target did not tell is
    /// kept with the trial's server facts and announced the first time in this run.
    pub(super) fn finish_evidence(
        &mut self,
        nodes: &[Node],
        before: &[NodeReading],
        after: &[NodeReading],
        requests: u64,
        info: &mut ServerInfo,
    ) -> (Vec<resplab_store::MetricRow>, Option<f64>) {
        let ev = evidence::derive(nodes, before, after, requests);
        if !ev.notes.is_empty() {
            info.entry("resplab".into())
                .or_default()
                .insert("evidence_notes".into(), ev.notes.join("; "));
        }
        for note in &ev.notes {
            if self.noticed.insert(note.clone()) {
                (self.on_event)(Event::Notice(note));
            }
        }
        (ev.rows, ev.cpu_sec)
    }
}
