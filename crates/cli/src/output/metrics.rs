//! `--metrics-addr`: the live metrics endpoint of bench, experiment run and serve, and
//! its line on standard error.

use resplab_metrics::{Endpoint, MetricsError};

/// The endpoint as started, announced with its URL (an address that cannot be used is
/// the command's error, before anything is measured).
pub fn announced(started: Result<Endpoint, MetricsError>) -> anyhow::Result<Endpoint> {
    let e = started?;
    eprintln!("resplab: live metrics at http://{}/metrics", e.local_addr());
    Ok(e)
}
