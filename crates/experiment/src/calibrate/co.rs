//! The coordinated-omission check of `calibrate --validate`: an open-loop run against
//! `resplab serve` stalling 100 ms every second, at 2,000 requests per second. The
//! analytic latency tail is P(L > x) ≈ (D − x)/P for x < D (METHOD §6.5; the utilisation
//! is well below 1 %, so its factor is left out): p99 at 90 ms, p99.9 at 99 ms. A tool
//! that timed from the actual send instead of the intended one would see a fraction.

use super::CalibrateError;
use resplab_engine::{Arrivals, Budget, OpenLoop, RunConfig, StopToken, Target};
use resplab_workload::{TestName, TestsSpec, Workload, WorkloadKind, WorkloadSpec};
use std::time::Duration;

/// The stall and its period.
const STALL_MS: u64 = 100;
const EVERY_S: f64 = 1.0;

/// Runs the check. Returns (quantile, measured ms, expected ms, within ±10 %).
///
/// # Errors
/// The server cannot be started or the run fails.
pub fn check() -> Result<Vec<(String, f64, f64, bool)>, CalibrateError> {
    let fail = |what: &str| {
        let what = what.to_string();
        move |e: Box<dyn std::error::Error + Send + Sync>| CalibrateError::Check { what, source: e }
    };
    let server = resplab_serve::start(&resplab_serve::Config {
        port: 0,
        stall_ms: STALL_MS,
        stall_every_s: EVERY_S,
        ..resplab_serve::Config::default()
    })
    .map_err(|e| fail("starting resplab serve for the coordinated-omission check")(e.into()))?;
    let mut cfg = RunConfig::new(Target::Tcp {
        host: "127.0.0.1".into(),
        port: server.port(),
    });
    cfg.clients = 4;
    cfg.budget = Budget::Duration(Duration::from_secs(8));
    cfg.open_loop = Some(OpenLoop {
        rate_per_sec: 2000.0,
        arrivals: Arrivals::Constant,
    });
    let spec = WorkloadSpec {
        seed: 1,
        kind: WorkloadKind::Tests(TestsSpec {
            tests: vec![TestName::Get],
            random_keyspace: None,
            data_size: 3,
        }),
        setup_commands: Vec::new(),
    };
    let wl = Workload::new(&spec).map_err(|e| CalibrateError::Invalid(e.to_string()))?;
    let rec = resplab_engine::run(&cfg, &wl, &StopToken::new(), &mut |_| {})
        .map_err(|e| fail("the coordinated-omission run")(e.into()))?;
    drop(server);
    let h = resplab_stats::hist::LatencyHistogram::from_base64(&rec.totals.histogram)
        .map_err(|e| CalibrateError::Invalid(e.to_string()))?;
    Ok(judge(|q| h.percentile_ns(q) as f64 / 1e6))
}

/// The measured quantiles (from `measured_ms`) against the analytic ones.
fn judge(measured_ms: impl Fn(f64) -> f64) -> Vec<(String, f64, f64, bool)> {
    let d = STALL_MS as f64;
    let p = EVERY_S * 1000.0;
    [99.0, 99.9]
        .iter()
        .map(|q| {
            let expected = d - (1.0 - q / 100.0) * p;
            let measured = measured_ms(*q);
            (
                format!("p{q}"),
                measured,
                expected,
                (measured / expected - 1.0).abs() <= 0.10,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_analytic_tail_is_the_stall_less_the_quantile_of_the_period() {
        let right = judge(|q| if q == 99.0 { 92.0 } else { 97.0 });
        let names: Vec<&str> = right.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["p99", "p99.9"]);
        assert!((right[0].2 - 90.0).abs() < 1e-9 && (right[1].2 - 99.0).abs() < 1e-9);
        assert!(right.iter().all(|c| c.3), "{right:?}");
        // Timed from the actual send, a stall hides in one slow request per period.
        let omitted = judge(|_| 1.0);
        assert!(omitted.iter().all(|c| !c.3), "{omitted:?}");
    }
}
