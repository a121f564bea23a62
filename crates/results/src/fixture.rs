//! Run records for tests, built in one place.
//!
//! Tests across the workspace need complete [`RunRecord`]s (the store saves them, the
//! report draws them, `compare` reads them, the merge joins them). [`run_record`] gives
//! one whose every field holds a plain, stated value around the totals a test chooses;
//! a test that needs more (a host, a series, a shard) overrides those fields with struct
//! update syntax, so each test still shows what it cares about.
//!
//! Compiled for this crate's own unit tests and, behind the `fixture` feature, for the
//! integration tests of the crates above (as a dev-dependency feature, so no release
//! build contains it).

use crate::{CpuTime, HostInfo, LatencyUs, LoadModel, RunRecord, Summary, ToolInfo};
use resplab_stats::hist::LatencyHistogram;
use std::collections::BTreeMap;

/// A completed closed-loop run of the current schema (1 client, pipeline 1, seed 1, one second, tool version
/// "0", 0.1 s user and 0.1 s system CPU) whose totals are `totals` and whose only command,
/// SET, has the same summary.
pub fn run_record(totals: Summary) -> RunRecord {
    let mut commands = BTreeMap::new();
    commands.insert("SET".to_string(), totals.clone());
    let tool = ToolInfo {
        name: "resplab".into(),
        version: "0".into(),
        git_revision: None,
    };
    RunRecord {
        config: serde_json::json!({}),
        seed: 1,
        load_model: LoadModel::ClosedLoop {
            clients: 1,
            pipeline: 1,
        },
        duration_sec: 1.0,
        totals,
        commands,
        client_cpu: CpuTime {
            user_sec: 0.1,
            system_sec: 0.1,
        },
        ..RunRecord::empty(tool, 0)
    }
}

/// A summary of `requests` error-free requests at `ops_per_sec` whose histogram is `h`,
/// with the given latencies and byte counts.
pub fn summary(
    requests: u64,
    ops_per_sec: f64,
    latency_us: LatencyUs,
    (bytes_in, bytes_out): (u64, u64),
    h: &LatencyHistogram,
) -> Summary {
    Summary {
        requests,
        errors: 0,
        ops_per_sec,
        latency_us,
        bytes_in,
        bytes_out,
        histogram: h.to_base64(),
        error_kinds: BTreeMap::new(),
        nil_replies: 0,
    }
}

/// The host every fixture that names one runs on: two cores, Linux 6.1.0.
pub fn host(hostname: &str, cpu_model: &str, governor: Option<&str>) -> HostInfo {
    HostInfo {
        hostname: hostname.into(),
        cpu_model: cpu_model.into(),
        cores: 2,
        kernel: "6.1.0".into(),
        os: "linux".into(),
        governor: governor.map(str::to_string),
    }
}

/// xorshift64*: a tiny seeded generator, so a fixture built from it never changes.
#[derive(Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator whose whole sequence follows from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Roughly normal: the sum of four uniforms, centred and scaled.
    pub fn normal(&mut self) -> f64 {
        let s: f64 = (0..4).map(|_| self.next_f64()).sum();
        (s - 2.0) * 1.732
    }
}

/// A stored validation of fixed rounds on throughput, K = 40: A/A sd 5 %, predicted MDE
/// and slowdown 5 % (true effect −4.8 %), each check 30/40 = 75 % [60 %, 87 %] and
/// passing, no coordinated-omission rows; the slowed experiments' sd is `slowed`.
pub fn validation(slowed: Option<f64>) -> crate::calibration::Validation {
    let check = |name: &str| {
        serde_json::json!({"name": name, "hits": 30, "k": 40, "rate": 0.75,
            "ci_low": 0.6, "ci_high": 0.87, "nominal": 0.8, "pass": true, "detail": "d"})
    };
    let mut v = serde_json::json!({
        "schema_version": 4, "hostname": "h", "trial_sec": 0.2, "rounds": 10,
        "method": "rmit", "metric": "ops_per_sec", "sd_log_ratio": 0.05,
        "predicted_mde_pct": 5.0, "slowdown_pct": 5.0, "true_effect_pct": -4.8,
        "false_positives": check("false positives"), "power": check("power"),
        "coverage": check("coverage"), "coordinated_omission": [], "co_pass": true,
        "experiments": []
    });
    if let Some(s) = slowed {
        v["slowed_sd_log_ratio"] = s.into();
    }
    serde_json::from_value(v).expect("the fixture is a valid validation")
}
