//! A fixed, seeded experiment for report tests: three variants, two workloads, eight
//! interleaved rounds, with full run records (histograms and per-second series).

use resplab_report::doc::{ReportInput, TrialInput, WorkloadInput};
use resplab_report::resplab::ResplabOptions;
use resplab_results::sample::{Direction, Metric, Observation, Origin};
use resplab_results::{fixture, CpuTime, LatencyUs, LoadModel, RunRecord, SecondSample, ToolInfo};
use resplab_stats::hist::LatencyHistogram;
use std::collections::BTreeMap;
use std::sync::Arc;

use resplab_results::fixture::Rng;

pub const VARIANTS: [&str; 3] = ["baseline", "io-threads-4", "appendfsync-always"];
pub const WORKLOADS: [(&str, f64, f64); 2] = [("set", 120_000.0, 60.0), ("get", 150_000.0, 45.0)];
/// Throughput factor and latency factor of each variant.
pub const EFFECTS: [(f64, f64); 3] = [(1.0, 1.0), (1.06, 0.95), (0.80, 1.3)];
pub const ROUNDS: u32 = 8;

/// One synthetic run.
pub fn run_record(variant: usize, workload: usize, round: u32) -> RunRecord {
    let (name, base_ops, base_lat_us) = WORKLOADS[workload];
    let (f_ops, f_lat) = EFFECTS[variant];
    let mut rng = Rng::new(1000 * workload as u64 + 100 * variant as u64 + u64::from(round) + 7);
    let drift = 1.0 - 0.004 * f64::from(round);
    let ops = base_ops * f_ops * drift * (1.0 + 0.01 * rng.normal());
    let mut h = LatencyHistogram::new();
    for i in 0..4000u64 {
        let mut us = base_lat_us * f_lat * (0.35 * rng.normal()).exp();
        if i % 500 == 0 {
            us *= 8.0 * f_lat;
        }
        h.record_n((us * 1000.0).max(1.0) as u64, 5);
    }
    let latency_us = LatencyUs::from_histogram(&h);
    let series = (1..=5)
        .map(|s| {
            let o = ops * (1.0 + 0.02 * rng.normal());
            SecondSample {
                t_sec: f64::from(s),
                requests: o as u64,
                errors: 0,
                ops_per_sec: o,
                latency_us: LatencyUs {
                    p99: latency_us.p99 * (1.0 + 0.05 * rng.normal()),
                    ..latency_us.clone()
                },
                unix_ms: None,
                histogram: None,
            }
        })
        .collect();
    let summary = fixture::summary((ops * 5.0) as u64, ops, latency_us, (1000, 2000), &h);
    let mut commands = BTreeMap::new();
    commands.insert(name.to_ascii_uppercase(), summary.clone());
    let mut server = BTreeMap::new();
    server.insert("redis_version".to_string(), "7.0.15".to_string());
    server.insert("redis_mode".to_string(), "standalone".to_string());
    server.insert("process_id".to_string(), format!("{}", 4000 + round));
    RunRecord {
        tool: ToolInfo {
            name: "resplab".into(),
            version: "0.1.0".into(),
            git_revision: Some("abc1234".into()),
        },
        started_at_unix_ms: 1_700_000_000_000 + u64::from(round) * 60_000,
        config: serde_json::json!({"tests": name, "clients": 8, "pipeline": 1}),
        seed: 42 + u64::from(round),
        load_model: LoadModel::ClosedLoop {
            clients: 8,
            pipeline: 1,
        },
        server,
        host: fixture::host("bench-1", "Example CPU @ 3.0GHz", Some("performance")),
        warmup_sec: 0.2,
        duration_sec: 5.0,
        commands,
        series,
        client_cpu: CpuTime {
            user_sec: 0.5,
            system_sec: 0.5,
        },
        ..fixture::run_record(summary)
    }
}

/// The order of the variants in round `r` (a fixed shuffle per round).
pub fn round_order(r: u32) -> [usize; 3] {
    const ORDERS: [[usize; 3]; 6] = [
        [0, 1, 2],
        [2, 0, 1],
        [1, 2, 0],
        [0, 2, 1],
        [1, 0, 2],
        [2, 1, 0],
    ];
    ORDERS[(r as usize * 5 + 1) % 6]
}

/// The fixture as report input.
pub fn input() -> ReportInput {
    let ops = Arc::new(Metric::new(
        "ops_per_sec",
        "ops/s",
        Direction::HigherIsBetter,
    ));
    let p99 = Arc::new(Metric::new("p99_us", "us", Direction::LowerIsBetter));
    let mut observations = Vec::new();
    let mut workloads = Vec::new();
    for (wi, (w, _, _)) in WORKLOADS.iter().enumerate() {
        let mut trials = Vec::new();
        for r in 0..ROUNDS {
            for v in round_order(r) {
                let run = Arc::new(run_record(v, wi, r));
                for (m, val) in [
                    (&ops, run.totals.ops_per_sec),
                    (&p99, run.totals.latency_us.p99),
                ] {
                    observations.push(Observation {
                        label: Arc::from(VARIANTS[v]),
                        workload: Arc::from(*w),
                        metric: m.clone(),
                        value: val,
                        round: Some(r),
                        trial: r,
                        origin: Origin {
                            file: Arc::from("db:fixture"),
                            line: None,
                        },
                        config: None,
                        flag: None,
                    });
                }
                trials.push(TrialInput {
                    variant: VARIANTS[v].to_string(),
                    round: Some(r),
                    value: Some(run.totals.ops_per_sec),
                    run: Some(run),
                    command: None,
                });
            }
        }
        workloads.push(WorkloadInput {
            name: w.to_string(),
            in_geomean: true,
            trials,
        });
    }
    ReportInput {
        title: "Experiment fixture".into(),
        source: "Experiment fixture (synthetic, seeded)".into(),
        generator: "resplab test".into(),
        variants: VARIANTS.iter().map(|s| s.to_string()).collect(),
        metric: "ops_per_sec".into(),
        options: ResplabOptions {
            confidence: 0.95,
            margin_pct: Some(2.0),
            not_interleaved: Vec::new(),
        },
        seed: Some(20240601),
        facts: vec![("trial order".into(), "rmit".into())],
        experiment_file: Some("[experiment]\nname = \"fixture\"\nrounds = 8\n".into()),
        variant_definitions: vec![(
            "baseline".into(),
            "{\n  \"name\": \"baseline\",\n  \"server\": \"redis-server --port {port}\"\n}".into(),
        )],
        observations,
        workloads,
        notes: Vec::new(),
        config_check: None,
        profiles: Vec::new(),
    }
}
