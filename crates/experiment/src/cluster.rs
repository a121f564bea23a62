//! `cluster = { masters = M, replicas = R }` variants: a fresh local Redis Cluster for
//! each trial, started from the variant's `server` command and torn down after it.
//!
//! Every node is the variant's command (with its own `{port}` and `{dir}`) plus the
//! cluster flags of `redis-server`: `--cluster-enabled yes --cluster-config-file
//! nodes.conf --cluster-port P`, each node's bus on a free port of its own. The nodes
//! are then formed into one cluster by the one cluster former,
//! [`resplab_sys::cluster::form`], the way `redis-cli --cluster create` does it.

use crate::client::{Client, Reply};
use crate::launch::{LaunchError, ServerProcess};
use resplab_sys::cluster::{self, Node};
use std::time::Duration;

/// A running cluster of one trial.
#[derive(Debug)]
pub struct LocalCluster {
    /// Masters first, then the replicas (replica `k` of master `m` at `M + m * R + k`).
    pub nodes: Vec<ServerProcess>,
    /// How many of `nodes` are masters.
    pub masters: usize,
}

impl LocalCluster {
    /// Starts `masters × (1 + replicas)` nodes from `command` and forms the cluster
    /// ([`resplab_sys::cluster::form`]), within `timeout` for the whole formation.
    ///
    /// # Errors
    /// A node that does not start ([`LaunchError::Server`]), or a cluster that does not
    /// form ([`LaunchError::Control`], naming the step and what the node answered).
    pub fn start(
        variant: &str,
        command: &[String],
        env: &[(String, String)],
        cpus: Option<&str>,
        masters: usize,
        replicas: usize,
        timeout: Duration,
    ) -> Result<LocalCluster, LaunchError> {
        let masters = masters.max(1);
        let fail = |what: &str, reason: String| LaunchError::Control {
            variant: variant.into(),
            what: format!("forming the cluster ({what})"),
            reason,
        };
        let mut nodes = Vec::new();
        let mut plan = Vec::new();
        for _ in 0..masters * (1 + replicas) {
            let bus =
                resplab_sys::port::free_port().map_err(|e| fail("a bus port", e.to_string()))?;
            let mut words = command.to_vec();
            words.extend(cluster::node_flags(bus));
            let node = ServerProcess::start(variant, &words, env, cpus, timeout)?;
            plan.push(Node {
                port: node.port,
                bus,
            });
            nodes.push(node);
        }
        let cluster = LocalCluster { nodes, masters };
        let mut call = |port: u16, args: &[&str]| -> Result<String, String> {
            let mut c = Client::connect("127.0.0.1", port, Duration::from_secs(5))
                .map_err(|e| e.to_string())?;
            match c.call(args).map_err(|e| e.to_string())? {
                Reply::Error(e) => Err(format!("{} answered -{e}", args.join(" "))),
                r => Ok(r.text()),
            }
        };
        cluster::form(&plan, masters, replicas, timeout, &mut call)
            .map_err(|e| fail(&e.step, e.reason))?;
        Ok(cluster)
    }

    /// The port of the first master: where the trial's load connects.
    pub fn seed_port(&self) -> u16 {
        self.nodes.first().map_or(0, |n| n.port)
    }

    /// Every node for the trial's server evidence: port, pid and whether it is a master.
    pub fn evidence_nodes(&self) -> Vec<crate::evidence::Node> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| crate::evidence::Node {
                port: n.port,
                pid: n.pid(),
                master: i < self.masters,
            })
            .collect()
    }

    /// Stops every node.
    pub fn stop(&mut self) {
        for n in &mut self.nodes {
            n.stop();
        }
    }
}
