//! [`EngineError`]: why a run could not start or could not go on.
//!
//! Failures of single requests (error replies, protocol errors, dropped connections) are
//! not errors of the run: they are counted in the [`resplab_results::RunRecord`]. An
//! `EngineError` means there is nothing to measure: the configuration is inconsistent,
//! the target refuses connections or authentication from the start, or a worker thread
//! could not be started. A server that disappears *during* a run is not an error either:
//! the run ends with `RunEnd::ServerLost` and its partial results.

use std::io;

/// Why a run could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A configuration value is out of range or two values conflict.
    #[error("invalid run configuration: {field} is {found}, expected {expected}")]
    InvalidConfig {
        field: &'static str,
        expected: String,
        found: String,
    },
    /// The first connection to the target failed.
    #[error("cannot connect to {target}: {source}")]
    Connect {
        target: String,
        #[source]
        source: io::Error,
    },
    /// The server refused the connection set-up (AUTH, HELLO or SELECT).
    #[error("{target} refused the connection set-up: {step} answered {reply}")]
    Handshake {
        target: String,
        step: &'static str,
        reply: String,
    },
    /// The workload cannot be run as configured.
    #[error("workload: {0}")]
    Workload(String),
    /// The run needs more open files than this process may have.
    #[error("{needed} open files are needed (one per connection and a few more), but the hard limit of this process is {hard}{}; raise it (ulimit -Hn, /etc/security/limits.conf, LimitNOFILE= for a service) or use fewer connections", reason.as_ref().map(|r| format!(" and the soft limit could not be raised: {r}")).unwrap_or_default())]
    OpenFiles {
        needed: u64,
        hard: u64,
        reason: Option<String>,
    },
    /// A master of the cluster was not ready (`cluster_state:ok` and the seed's slot map)
    /// within the configured wait; raise `--cluster-wait` or repair the node.
    #[error("the cluster is not ready after {:.1} s: {nodes}; a run now would count its CLUSTERDOWN replies as the server's errors (wait longer with --cluster-wait, or repair the node)", waited.as_secs_f64())]
    ClusterNotReady {
        waited: std::time::Duration,
        /// Each master not ready: its address and what it said.
        nodes: String,
    },
    /// A worker thread could not be started or ended abnormally.
    #[error("worker thread failed: {0}")]
    Worker(String),
}
