//! `cluster = { masters = M, replicas = R }` variants: a fresh local Redis Cluster for
//! each trial, started from the variant's `server` command and torn down after it.
//!
//! Every node is the variant's command (with its own `{port}` and `{dir}`) plus the
//! cluster flags of `redis-server`: `--cluster-enabled yes --cluster-config-file
//! nodes.conf --cluster-port P`, each node's bus on a free port of its own. The nodes
//! are then formed into one cluster the way `redis-cli --cluster create` does it: the
//! 16384 slots split evenly over the first M nodes (`CLUSTER ADDSLOTSRANGE`), every node
//! introduced to the first (`CLUSTER MEET host port bus-port`), each of the other nodes
//! made a replica of its master (`CLUSTER REPLICATE`), and the runner waits until every
//! node says `cluster_state:ok`, knows all the others, and every replica's link is up.

use crate::client::{Client, Reply};
use crate::launch::{LaunchError, ServerProcess};
use std::time::{Duration, Instant};

/// A running cluster of one trial.
#[derive(Debug)]
pub struct LocalCluster {
    /// Masters first, then the replicas (replica `k` of master `m` at `M + m * R + k`).
    pub nodes: Vec<ServerProcess>,
}

impl LocalCluster {
    /// Starts `masters × (1 + replicas)` nodes from `command` and forms the cluster,
    /// within `timeout` for the whole formation.
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
        let (nodes, buses) = start_nodes(
            variant,
            command,
            env,
            cpus,
            masters * (1 + replicas),
            timeout,
            &fail,
        )?;
        let cluster = LocalCluster { nodes };
        let deadline = Instant::now() + timeout;
        let ports: Vec<u16> = cluster.nodes.iter().map(|n| n.port).collect();
        let ids = assign_and_meet(&ports, &buses, masters, &fail)?;
        let all_known = || {
            ports.iter().all(|&p| {
                cluster_call(p, &["CLUSTER", "NODES"]).is_ok_and(|r| {
                    let t = r.text();
                    t.lines().filter(|l| !l.trim().is_empty()).count() == ports.len()
                        && !t.contains("handshake")
                        && !t.contains("noaddr")
                })
            })
        };
        wait(deadline, all_known).map_err(|()| {
            fail(
                "every node knows every other",
                "not within the time limit".into(),
            )
        })?;
        for (m, id) in ids.iter().enumerate().take(masters) {
            for k in 0..replicas {
                let r = masters + m * replicas + k;
                cluster_call(ports[r], &["CLUSTER", "REPLICATE", id])
                    .map_err(|e| fail("CLUSTER REPLICATE", e))?;
            }
        }
        let ready = || {
            let ok = ports.iter().all(|&p| {
                cluster_call(p, &["CLUSTER", "INFO"])
                    .is_ok_and(|r| r.text().contains("cluster_state:ok"))
            });
            let links = ports[masters..].iter().all(|&p| {
                cluster_call(p, &["INFO", "replication"])
                    .is_ok_and(|r| r.text().contains("master_link_status:up"))
            });
            ok && links
        };
        wait(deadline, ready).map_err(|()| {
            fail(
                "cluster_state:ok on every node",
                "not within the time limit".into(),
            )
        })?;
        Ok(cluster)
    }

    /// The port of the first master: where the trial's load connects.
    pub fn seed_port(&self) -> u16 {
        self.nodes.first().map_or(0, |n| n.port)
    }

    /// Stops every node.
    pub fn stop(&mut self) {
        for n in &mut self.nodes {
            n.stop();
        }
    }
}

fn wait(deadline: Instant, ok: impl Fn() -> bool) -> Result<(), ()> {
    while !ok() {
        if Instant::now() > deadline {
            return Err(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Starts `count` cluster-enabled nodes from `command`, each with a free bus port;
/// returns them with their bus ports.
fn start_nodes(
    variant: &str,
    command: &[String],
    env: &[(String, String)],
    cpus: Option<&str>,
    count: usize,
    timeout: Duration,
    fail: &dyn Fn(&str, String) -> LaunchError,
) -> Result<(Vec<ServerProcess>, Vec<u16>), LaunchError> {
    let mut nodes = Vec::new();
    let mut buses = Vec::new();
    for _ in 0..count {
        let bus = resplab_sys::port::free_port().map_err(|e| fail("a bus port", e.to_string()))?;
        let mut words = command.to_vec();
        for w in [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-port",
        ] {
            words.push(w.to_string());
        }
        words.push(bus.to_string());
        nodes.push(ServerProcess::start(variant, &words, env, cpus, timeout)?);
        buses.push(bus);
    }
    Ok((nodes, buses))
}

/// Calls one node on loopback; an error reply is an error naming the command.
fn cluster_call(port: u16, args: &[&str]) -> Result<Reply, String> {
    let mut c =
        Client::connect("127.0.0.1", port, Duration::from_secs(5)).map_err(|e| e.to_string())?;
    match c.call(args).map_err(|e| e.to_string())? {
        Reply::Error(e) => Err(format!("{} answered -{e}", args.join(" "))),
        r => Ok(r),
    }
}

/// Reads every node's id, gives each master its share of the slots and has the first
/// node meet the others; returns the ids.
fn assign_and_meet(
    ports: &[u16],
    buses: &[u16],
    masters: usize,
    fail: &dyn Fn(&str, String) -> LaunchError,
) -> Result<Vec<String>, LaunchError> {
    let mut ids = Vec::new();
    for &p in ports {
        ids.push(
            cluster_call(p, &["CLUSTER", "MYID"])
                .map_err(|e| fail("CLUSTER MYID", e))?
                .text(),
        );
    }
    for (m, &p) in ports.iter().enumerate().take(masters) {
        let first = (16384 * m / masters).to_string();
        let last = (16384 * (m + 1) / masters - 1).to_string();
        cluster_call(p, &["CLUSTER", "ADDSLOTSRANGE", &first, &last])
            .map_err(|e| fail("CLUSTER ADDSLOTSRANGE", e))?;
    }
    for (k, &p) in ports.iter().enumerate().skip(1) {
        cluster_call(
            ports[0],
            &[
                "CLUSTER",
                "MEET",
                "127.0.0.1",
                &p.to_string(),
                &buses[k].to_string(),
            ],
        )
        .map_err(|e| fail("CLUSTER MEET", e))?;
    }
    Ok(ids)
}
