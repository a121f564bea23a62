//! Cluster readiness: before a run measures a Redis Cluster, every master that serves
//! slots must say `cluster_state:ok` and describe the same slot map as the seed.
//!
//! A cluster that was just formed answers its first requests with `CLUSTERDOWN` for a
//! while: one master already knows every slot is served, the others have not heard it
//! yet through the gossip. A run started then counts thousands of failed requests that
//! describe the formation, not the server. So the set-up asks each master in turn —
//! `CLUSTER INFO` for its state, `CLUSTER SHARDS` (or `CLUSTER SLOTS`) for its view of
//! the slots — and tries again every [`POLL`] until all agree or `cluster_wait` has
//! passed; then the run is refused, naming each master that was not ready and what it
//! said ([`EngineError::ClusterNotReady`]).

use crate::cluster::{Topology, NO_NODE};
use crate::config::{RunConfig, Target};
use crate::connect::{self, StdStream};
use crate::error::EngineError;
use resplab_proto::resp::value::Value;
use std::time::{Duration, Instant};

/// Pause between two rounds of questions.
const POLL: Duration = Duration::from_millis(100);

/// Waits until every master of the cluster behind `ctl` (a control connection to the
/// seed) is ready, and returns the slot map they agree on.
///
/// # Errors
/// [`EngineError::ClusterNotReady`] naming each master that still was not ready when
/// `cfg.cluster_wait` ran out, and what it said; [`EngineError::Workload`] when the seed gives no slot map.
pub(crate) fn await_ready(cfg: &RunConfig, ctl: &mut StdStream) -> Result<Topology, EngineError> {
    let started = Instant::now();
    let deadline = started + cfg.cluster_wait;
    loop {
        let topo = Topology::fetch(ctl, &cfg.target, cfg.tls.is_some())
            .map_err(|e| EngineError::Workload(format!("cluster at {}: {e}", cfg.target)));
        let problems = match topo {
            Ok(topo) => {
                let found = unready(cfg, &topo);
                if found.is_empty() {
                    return Ok(topo);
                }
                Ok(found)
            }
            Err(e) => Err(e),
        };
        if Instant::now() + POLL > deadline {
            return Err(match problems {
                Err(seed_error) => seed_error,
                Ok(found) => EngineError::ClusterNotReady {
                    waited: started.elapsed(),
                    nodes: found.join("; "),
                },
            });
        }
        std::thread::sleep(POLL);
    }
}

/// Each master (in slot order) that is unreachable, not `cluster_state:ok`, or
/// describes another slot map than `seed`: its address and what it said. Empty when
/// every master is ready.
fn unready(cfg: &RunConfig, seed: &Topology) -> Vec<String> {
    let want = owners(seed);
    seed.masters()
        .into_iter()
        .filter_map(|m| {
            let target = &seed.nodes[m].target;
            not_ready(cfg, target, &want).map(|why| format!("{target} {why}"))
        })
        .collect()
}

/// Why the master at `target` is not ready, or `None` when it is.
fn not_ready(cfg: &RunConfig, target: &Target, want: &[Option<String>]) -> Option<String> {
    let mut s = match connect::open_ready_to(cfg, target, false, cfg.connect_timeout) {
        Ok(s) => s,
        Err(e) => return Some(format!("cannot be reached: {e}")),
    };
    let state = cluster_state(&mut s);
    if state != "ok" {
        return Some(format!("says cluster_state:{state}"));
    }
    match Topology::fetch(&mut s, target, cfg.tls.is_some()) {
        Ok(view) => first_difference(want, &owners(&view)),
        Err(e) => Some(e),
    }
}

/// `cluster_state` of the node (`ok`, `fail`), or why it could not be read.
fn cluster_state(s: &mut StdStream) -> String {
    match connect::call(s, &[b"CLUSTER", b"INFO"]) {
        Ok(Value::Blob(b)) | Ok(Value::Verbatim { text: b, .. }) => {
            resplab_proto::resp::info::fields(&String::from_utf8_lossy(&b))
                .get("cluster_state")
                .map_or_else(
                    || "unknown (CLUSTER INFO has no cluster_state)".into(),
                    |v| v.trim().to_string(),
                )
        }
        Ok(other) => format!(
            "unknown (CLUSTER INFO answered {})",
            connect::error_text(&other).unwrap_or_else(|| "no text".into())
        ),
        Err(e) => format!("unknown (CLUSTER INFO failed: {e})"),
    }
}

/// The address of the master of each slot (`None`: unserved).
fn owners(t: &Topology) -> Vec<Option<String>> {
    t.slots
        .iter()
        .map(|&n| {
            (n != NO_NODE)
                .then(|| t.nodes.get(usize::from(n)).map(|x| x.target.to_string()))
                .flatten()
        })
        .collect()
}

/// The first slot whose master differs between the seed's map and a node's, in words.
fn first_difference(seed: &[Option<String>], node: &[Option<String>]) -> Option<String> {
    let slot = seed.iter().zip(node).position(|(a, b)| a != b)?;
    let say = |o: &Option<String>| o.clone().unwrap_or_else(|| "no node".into());
    Some(format!(
        "disagrees on the slot map: slot {slot} is served by {} there and by {} at the seed",
        say(&node[slot]),
        say(&seed[slot])
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(owners: &[(usize, &str)]) -> Vec<Option<String>> {
        let mut out = vec![None; resplab_proto::resp::cluster::SLOTS];
        let mut at = 0;
        for &(n, who) in owners {
            for s in out.iter_mut().skip(at).take(n) {
                *s = Some(who.to_string());
            }
            at += n;
        }
        out
    }

    #[test]
    fn equal_maps_agree_and_the_first_difference_is_named() {
        let a = map(&[(8192, "127.0.0.1:1"), (8192, "127.0.0.1:2")]);
        assert_eq!(first_difference(&a, &a.clone()), None);
        let b = map(&[(8192, "127.0.0.1:1")]);
        assert_eq!(
            first_difference(&a, &b).unwrap(),
            "disagrees on the slot map: slot 8192 is served by no node there and by 127.0.0.1:2 at the seed"
        );
    }
}
