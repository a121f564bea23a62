//! What a run's record says beyond the measurements: the configuration it ran with (the
//! workload included, secrets left out), the tool that ran it, the warnings its settings
//! call for (an unverified TLS certificate, a client too busy to trust), and a shard's
//! planned place among the generators with the clock facts it measured.

use crate::words::bench::BenchPlan;
use crate::RunConfig;
use resplab_results::{RunRecord, ShardInfo, ToolInfo, Warning};

/// A thread of the load generator busier than this share of the run is saturated.
const SATURATED_BUSY: f64 = 0.8;

/// Stamps `record` with the public form of `config`, the tool (`name`, this version)
/// and the warning of an unverified TLS certificate.
pub fn stamp(record: &mut RunRecord, config: &RunConfig, name: &str) {
    record.config = config.to_public_json();
    record.tool = ToolInfo {
        name: name.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        git_revision: option_env!("RESPLAB_GIT_REVISION").map(str::to_string),
    };
    if config.tls.as_ref().is_some_and(|t| t.insecure) {
        record.warnings.push(Warning::TlsInsecure);
    }
}

impl BenchPlan {
    /// Completes the record of a `resplab bench` run made with `config` (this plan's,
    /// pointed at the server measured): stamped as resplab's, with the workload in its
    /// configuration, a saturation warning when the client threads were busier than
    /// 80 %, and the plan's shard.
    pub fn complete(&self, record: &mut RunRecord, config: &RunConfig) {
        stamp(record, config, "resplab");
        if let Some(obj) = record.config.as_object_mut() {
            obj.insert(
                "workload".into(),
                serde_json::to_value(&self.spec).unwrap_or(serde_json::Value::Null),
            );
        }
        let threads = f64::from(config.effective_threads());
        if record.duration_sec > 0.0 {
            let busy = record.client_cpu.total_sec() / (record.duration_sec * threads);
            if busy > SATURATED_BUSY {
                record.warnings.push(Warning::ClientSaturated {
                    threads,
                    busy_pct: busy * 100.0,
                });
            }
        }
        if let Some(plan) = &self.shard {
            apply_shard_plan(record, plan);
        }
    }
}

/// A shard's record keeps the planned shard and adds the clock facts it measured.
fn apply_shard_plan(record: &mut RunRecord, plan: &ShardInfo) {
    let measured = record.shard.take().unwrap_or_default();
    record.shard = Some(ShardInfo {
        start_at_unix_ms: measured.start_at_unix_ms,
        load_started_unix_ms: measured.load_started_unix_ms,
        clock_offset_ms: measured.clock_offset_ms,
        clock_offset_after_ms: measured.clock_offset_after_ms,
        clock_rtt_ms: measured.clock_rtt_ms,
        ..plan.clone()
    });
}
