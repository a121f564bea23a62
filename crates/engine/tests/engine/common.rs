//! Helpers shared by the engine's integration tests.
#![allow(dead_code)]

use resplab_engine::{run, Budget, Progress, RunConfig, StopToken, Target};
use resplab_results::RunRecord;
use resplab_stats::hist::LatencyHistogram;
use resplab_workload::{TestName, TestsSpec, Workload, WorkloadKind, WorkloadSpec};
use std::time::Duration;

pub fn tcp_config(port: u16) -> RunConfig {
    let mut cfg = RunConfig::new(Target::Tcp {
        host: "127.0.0.1".into(),
        port,
    });
    cfg.clients = 4;
    cfg.budget = Budget::Requests(1000);
    cfg.request_timeout = Duration::from_secs(5);
    cfg
}

pub fn tests_workload(tests: &[TestName], random_keyspace: Option<u64>, seed: u64) -> Workload {
    let spec = WorkloadSpec {
        seed,
        kind: WorkloadKind::Tests(TestsSpec {
            tests: tests.to_vec(),
            random_keyspace,
            data_size: 3,
        }),
        setup_commands: Vec::new(),
    };
    Workload::new(&spec).expect("valid workload")
}

pub fn run_quiet(cfg: &RunConfig, wl: &Workload) -> RunRecord {
    run(cfg, wl, &StopToken::new(), &mut |_: &Progress| {}).expect("run succeeds")
}

/// How many recorded values in a base64 histogram are at least `ns`.
pub fn count_at_least(histogram_b64: &str, ns: u64) -> u64 {
    let h = LatencyHistogram::from_base64(histogram_b64).expect("valid histogram");
    h.as_hdr()
        .iter_recorded()
        .filter(|v| v.value_iterated_to() >= ns)
        .map(|v| v.count_at_value())
        .sum()
}

pub fn hist_count(histogram_b64: &str) -> u64 {
    LatencyHistogram::from_base64(histogram_b64)
        .expect("valid histogram")
        .count()
}
