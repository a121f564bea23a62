//! Before the load: what the run learns and prepares on one control connection.
//!
//! The server's `INFO server` (the record's provenance), the offset of the server's clock
//! when shards must line up, whether the target is a Redis Cluster (then its slot map,
//! once every master says it is ready (`cluster_ready`), and the workload's keys
//! tagged so multi-key commands stay in one slot), an open-file
//! limit high enough for every connection, and the workload's set-up commands (such as
//! the list `LRANGE` reads), each sent to the master of its key in a cluster.

use crate::cluster;
use crate::config::RunConfig;
use crate::connect::{self, StdStream};
use crate::error::EngineError;
use resplab_results::ClusterSummary;
use resplab_workload::Workload;
use std::collections::BTreeMap;

/// What the set-up found.
#[derive(Debug)]
pub(super) struct Prepared {
    /// The server's `INFO server` fields.
    pub server: BTreeMap<String, String>,
    /// Offset and round trip (ms) of the server's clock before the load, when measured.
    pub clock_before: Option<(f64, f64)>,
    /// The cluster as found, when the target is one.
    pub cluster: Option<ClusterSummary>,
    /// Its slot map, from which every phase plans its routing.
    pub topology: Option<cluster::Topology>,
    /// The workload with its keys tagged for one slot, when the target is a cluster.
    pub tagged: Option<Workload>,
}

/// Runs the set-up on a control connection to the target.
///
/// # Errors
/// The control connection cannot be made, `--cluster` against a server that is not a
/// cluster node, a slot map that cannot be read, a cluster whose masters are not ready
/// within `cluster_wait`, too low an open-file limit, or a
/// set-up command that fails.
pub(super) fn prepare(cfg: &RunConfig, workload: &Workload) -> Result<Prepared, EngineError> {
    let mut ctl =
        connect::open_ready(cfg, cfg.connect_timeout).map_err(|e| e.into_engine(&cfg.target))?;
    let server = connect::server_info(&mut ctl);
    let clock_before = if cfg.series_histograms || cfg.start_at.is_some() {
        connect::clock_offset(&mut ctl, 5)
    } else {
        None
    };
    let found = find_cluster(cfg, &mut ctl)?;
    let (cluster, topology, tagged) = match found {
        Some((summary, topo)) => {
            // Multi-key tests need their keys in one slot.
            let tagged = workload
                .clone()
                .with_cluster_tags()
                .map_err(|e| EngineError::Workload(e.to_string()))?;
            (Some(summary), Some(topo), Some(tagged))
        }
        None => (None, None, None),
    };
    let workload = tagged.as_ref().unwrap_or(workload);
    let per_client = topology.as_ref().map_or(1, |t| {
        let masters = t.masters().len() as u32;
        if cfg.read_from_replicas {
            t.nodes.len() as u32
        } else {
            masters
        }
    });
    crate::fdlimit::ensure_open_files(crate::fdlimit::files_needed(
        cfg.clients.saturating_mul(per_client.max(1)),
        cfg.effective_threads(),
    ))?;
    send_setup_commands(cfg, workload, topology.as_ref(), &mut ctl)?;
    Ok(Prepared {
        server,
        clock_before,
        cluster,
        topology,
        tagged,
    })
}

/// The cluster behind the target, when `INFO cluster` says it is one: its summary and
/// slot map. `--cluster` (or `--read-from-replicas`) against a single server is refused.
fn find_cluster(
    cfg: &RunConfig,
    ctl: &mut StdStream,
) -> Result<Option<(ClusterSummary, cluster::Topology)>, EngineError> {
    let detected = cluster::is_cluster(ctl);
    if (cfg.cluster || cfg.read_from_replicas) && !detected {
        return Err(EngineError::Workload(format!(
            "--cluster: {} is not a Redis Cluster node (INFO cluster does not say cluster_enabled:1); drop --cluster and --read-from-replicas for a single server",
            cfg.target
        )));
    }
    if !detected {
        return Ok(None);
    }
    let topo = crate::cluster_ready::await_ready(cfg, ctl)?;
    let replicas = topo.nodes.iter().filter(|n| n.master_of.is_some()).count();
    let summary = ClusterSummary {
        mode: if cfg.cluster { "--cluster" } else { "detected" }.into(),
        masters: topo.masters().len() as u32,
        replicas: replicas as u32,
        connections_per_master: cfg.clients,
        read_from_replicas: cfg.read_from_replicas,
        topology_source: topo.source.into(),
        ..ClusterSummary::default()
    };
    Ok(Some((summary, topo)))
}

/// Sends the workload's set-up commands (in a cluster, each to the master of its key);
/// an error reply stops the run.
fn send_setup_commands(
    cfg: &RunConfig,
    workload: &Workload,
    topology: Option<&cluster::Topology>,
    ctl: &mut StdStream,
) -> Result<(), EngineError> {
    for req in workload.setup_requests(0) {
        let args: Vec<&[u8]> = req.args().collect();
        // In a cluster, a set-up command (LPUSH of the list LRANGE reads) goes to the
        // master of its key.
        let reply = match topology {
            Some(topo) => cluster::call_routed(cfg, topo, &args),
            None => connect::call(ctl, &args),
        }
        .map_err(|source| EngineError::Connect {
            target: cfg.target.to_string(),
            source,
        })?;
        if let Some(text) = connect::error_text(&reply) {
            return Err(EngineError::Workload(format!(
                "set-up command {req:?} failed: {text}"
            )));
        }
    }
    Ok(())
}
