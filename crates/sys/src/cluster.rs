//! The one way a set of started nodes becomes a local Redis Cluster, as `redis-cli
//! --cluster create` forms one: the 16384 slots split evenly over the first `masters`
//! nodes (`CLUSTER ADDSLOTSRANGE`), every node introduced to the first (`CLUSTER MEET host
//! port bus-port`), each other node made a replica of its master (`CLUSTER REPLICATE`),
//! and a wait until every node says `cluster_state:ok`, knows all the others, every
//! replica's link is up and every node lists every replica.
//!
//! The experiment runner (`cluster = { masters, replicas }` variants) and the test kit
//! both start their nodes with [`crate::process`] and form them here. This module speaks
//! no protocol itself: the caller passes `call(port, words)`, which sends one command to
//! the node on `port` and returns the text of its reply (or why it failed, an error
//! reply included).

use std::time::{Duration, Instant};

/// The flags that make a `redis-server` (or a compatible server) a cluster node with its
/// bus on `bus`, to append to its command.
pub fn node_flags(bus: u16) -> Vec<String> {
    [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-port",
    ]
    .iter()
    .map(|w| (*w).to_string())
    .chain([bus.to_string()])
    .collect()
}

/// One started node: its client port and its cluster bus port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    pub port: u16,
    pub bus: u16,
}

/// A step of the formation that failed, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormError {
    /// What was being done (`CLUSTER MEET`, `cluster_state:ok on every node`, …).
    pub step: String,
    /// What the node answered, or that the time ran out.
    pub reason: String,
}

impl std::fmt::Display for FormError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "forming the cluster ({}): {}", self.step, self.reason)
    }
}

impl std::error::Error for FormError {}

/// Sends one command to the node on a port and returns its reply's text.
pub type Call<'a> = dyn FnMut(u16, &[&str]) -> Result<String, String> + 'a;

/// Forms `nodes` (masters first, then replica `k` of master `m` at `M + m * R + k`) into
/// one cluster within `timeout`; returns the node ids in `nodes` order.
///
/// # Errors
/// The step that failed and what the node said, or the readiness that did not come.
pub fn form(
    nodes: &[Node],
    masters: usize,
    replicas: usize,
    timeout: Duration,
    call: &mut Call<'_>,
) -> Result<Vec<String>, FormError> {
    let masters = masters.clamp(1, nodes.len().max(1));
    let deadline = Instant::now() + timeout;
    let ids = introduce(nodes, masters, call)?;
    wait(deadline, || all_known(nodes, call)).map_err(fail("every node knows every other"))?;
    for (m, id) in ids.iter().enumerate().take(masters) {
        for k in 0..replicas {
            let r = masters + m * replicas + k;
            if let Some(n) = nodes.get(r) {
                call(n.port, &["CLUSTER", "REPLICATE", id]).map_err(fail("CLUSTER REPLICATE"))?;
            }
        }
    }
    let replica_count = nodes.len() - masters;
    wait(deadline, || ready(nodes, masters, replica_count, call))
        .map_err(fail("cluster_state:ok on every node"))?;
    Ok(ids)
}

/// The first steps of [`form`], without any wait: each node's id, the slots split over
/// the first `masters` nodes, every node introduced to the first. The cluster then
/// settles by itself (the gossip spreads the news), which is what a client that starts
/// at once meets; returns the node ids in `nodes` order.
///
/// # Errors
/// The step that failed and what the node said.
pub fn introduce(
    nodes: &[Node],
    masters: usize,
    call: &mut Call<'_>,
) -> Result<Vec<String>, FormError> {
    let masters = masters.clamp(1, nodes.len().max(1));
    let mut ids = Vec::new();
    for n in nodes {
        ids.push(call(n.port, &["CLUSTER", "MYID"]).map_err(fail("CLUSTER MYID"))?);
    }
    for (m, n) in nodes.iter().enumerate().take(masters) {
        let first = (16384 * m / masters).to_string();
        let last = (16384 * (m + 1) / masters - 1).to_string();
        call(n.port, &["CLUSTER", "ADDSLOTSRANGE", &first, &last])
            .map_err(fail("CLUSTER ADDSLOTSRANGE"))?;
    }
    for n in nodes.iter().skip(1) {
        let (port, bus) = (n.port.to_string(), n.bus.to_string());
        call(
            nodes[0].port,
            &["CLUSTER", "MEET", "127.0.0.1", &port, &bus],
        )
        .map_err(fail("CLUSTER MEET"))?;
    }
    Ok(ids)
}

/// Turns a failure's reason into the [`FormError`] of `step`.
fn fail(step: &str) -> impl Fn(String) -> FormError {
    let step = step.to_string();
    move |reason: String| FormError {
        step: step.clone(),
        reason,
    }
}

/// Every node lists every node, none still in handshake or without an address.
fn all_known(nodes: &[Node], call: &mut Call<'_>) -> bool {
    nodes.iter().all(|n| {
        call(n.port, &["CLUSTER", "NODES"]).is_ok_and(|t| {
            t.lines().filter(|l| !l.trim().is_empty()).count() == nodes.len()
                && !t.contains("handshake")
                && !t.contains("noaddr")
        })
    })
}

/// `cluster_state:ok` everywhere, every replica's link up, and every node's view lists
/// every replica (or a client reading the topology from it would miss them).
fn ready(nodes: &[Node], masters: usize, replicas: usize, call: &mut Call<'_>) -> bool {
    let ok = nodes
        .iter()
        .all(|n| call(n.port, &["CLUSTER", "INFO"]).is_ok_and(|t| t.contains("cluster_state:ok")));
    let links = nodes[masters..].iter().all(|n| {
        call(n.port, &["INFO", "replication"]).is_ok_and(|t| t.contains("master_link_status:up"))
    });
    let seen = replicas == 0
        || nodes.iter().all(|n| {
            call(n.port, &["CLUSTER", "NODES"]).is_ok_and(|t| {
                t.lines()
                    .filter_map(|l| l.split_whitespace().nth(2))
                    .filter(|flags| flags.split(',').any(|f| f == "slave"))
                    .count()
                    == replicas
            })
        });
    ok && links && seen
}

fn wait(deadline: Instant, mut ok: impl FnMut() -> bool) -> Result<(), String> {
    while !ok() {
        if Instant::now() > deadline {
            return Err("not within the time limit".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scripted cluster: records every command and answers as formed nodes do.
    #[test]
    fn forms_in_redis_cli_order_and_names_a_failing_step() {
        let nodes: Vec<Node> = (0..4)
            .map(|i| Node {
                port: 7000 + i,
                bus: 17000 + i,
            })
            .collect();
        let mut sent: Vec<String> = Vec::new();
        let nodes_text = "a x myself,master\nb x master\nc x slave\nd x slave\n";
        let mut call = |port: u16, w: &[&str]| -> Result<String, String> {
            sent.push(format!("{port} {}", w.join(" ")));
            Ok(match (w[0], w[1]) {
                ("CLUSTER", "MYID") => format!("id{port}"),
                ("CLUSTER", "NODES") => nodes_text.into(),
                ("CLUSTER", "INFO") => "cluster_state:ok".into(),
                ("INFO", _) => "master_link_status:up".into(),
                _ => "OK".into(),
            })
        };
        let ids = form(&nodes, 2, 1, Duration::from_secs(5), &mut call).unwrap();
        assert_eq!(ids, ["id7000", "id7001", "id7002", "id7003"]);
        assert!(sent.contains(&"7000 CLUSTER ADDSLOTSRANGE 0 8191".to_string()));
        assert!(sent.contains(&"7001 CLUSTER ADDSLOTSRANGE 8192 16383".to_string()));
        assert!(sent.contains(&"7000 CLUSTER MEET 127.0.0.1 7003 17003".to_string()));
        assert!(sent.contains(&"7002 CLUSTER REPLICATE id7000".to_string()));
        assert!(sent.contains(&"7003 CLUSTER REPLICATE id7001".to_string()));

        let mut refuse = |_: u16, w: &[&str]| -> Result<String, String> {
            if w.get(1) == Some(&"MEET") {
                Err("ERR Invalid node address".into())
            } else {
                Ok("x".into())
            }
        };
        let e = form(&nodes, 2, 1, Duration::from_secs(1), &mut refuse).unwrap_err();
        assert_eq!(e.step, "CLUSTER MEET");
        assert!(e.to_string().contains("Invalid node address"), "{e}");
        assert_eq!(node_flags(17001).last().map(String::as_str), Some("17001"));
    }
}
