use super::*;
use crate::history::TrackedValue;

/// A series of `n` points of one line (SET ops/s), point i at level `level(i)` with a
/// small deterministic wobble, on host `host(i)`.
fn series(
    n: usize,
    level: impl Fn(usize) -> f64,
    host: impl Fn(usize) -> &'static str,
) -> Vec<TrackedPoint> {
    (0..n)
        .map(|i| TrackedPoint {
            id: i as i64 + 1,
            measured_at_unix_ms: 1_000 * i as i64,
            commit: Some(format!("c{i:02}")),
            host_fingerprint: host(i).into(),
            host: serde_json::Value::Null,
            config_fingerprint: "cfg".into(),
            tags: Vec::new(),
            source: "test".into(),
            values: vec![TrackedValue {
                workload: "SET".into(),
                metric: "ops_per_sec".into(),
                unit: "ops/s".into(),
                direction: "higher_is_better".into(),
                value: level(i) * (1.0 + 0.004 * (((i * 7) % 5) as f64 - 2.0)),
                trials: 1,
            }],
        })
        .collect()
}

#[test]
fn a_drop_is_found_with_the_commits_either_side_and_gated() {
    let points = series(30, |i| if i < 18 { 100_000.0 } else { 90_000.0 }, |_| "h");
    let a = analyse("nightly", &points, None, &ChangePointConfig::default()).unwrap();
    assert_eq!(a.lines.len(), 1);
    let seg = &a.lines[0].segments[0];
    assert_eq!(a.lines[0].segments.len(), 1);
    assert_eq!(seg.change_points.len(), 1, "{seg:?}");
    let c = &seg.change_points[0];
    assert_eq!(c.index, 18);
    assert_eq!(c.commit_before.as_deref(), Some("c17"));
    assert_eq!(c.commit_after.as_deref(), Some("c18"));
    assert!((c.effect_pct + 10.0).abs() < 0.5, "{c:?}");
    assert!(c.ci_low_pct < c.effect_pct && c.effect_pct < c.ci_high_pct);
    assert_eq!(c.is_regression, Some(true));
    assert_eq!(a.gate(5.0).len(), 1);
    assert!(a.gate(15.0).is_empty());
}

#[test]
fn an_improvement_does_not_fail_the_gate() {
    let points = series(30, |i| if i < 15 { 100.0 } else { 120.0 }, |_| "h");
    let a = analyse("nightly", &points, None, &ChangePointConfig::default()).unwrap();
    let c = &a.lines[0].segments[0].change_points[0];
    assert_eq!(c.is_regression, Some(false));
    assert!(a.gate(1.0).is_empty());
}

#[test]
fn another_host_starts_a_segment_and_is_never_compared_across() {
    // The level moves exactly where the host changes: not a change point.
    let points = series(
        30,
        |i| if i < 15 { 100.0 } else { 80.0 },
        |i| if i < 15 { "old" } else { "new" },
    );
    let a = analyse("nightly", &points, None, &ChangePointConfig::default()).unwrap();
    let segs = &a.lines[0].segments;
    assert_eq!(segs.len(), 2);
    assert_eq!(segs[0].starts_because, None);
    assert_eq!(
        segs[1].starts_because.as_deref(),
        Some("measured on another host")
    );
    assert_eq!((segs[0].points.len(), segs[1].points.len()), (15, 15));
    assert!(segs.iter().all(|s| s.change_points.is_empty()), "{segs:?}");
    assert!(a.gate(1.0).is_empty());
}

#[test]
fn a_metric_filter_keeps_only_its_lines() {
    let points = series(12, |_| 100.0, |_| "h");
    let cfg = ChangePointConfig::default();
    assert_eq!(
        analyse("s", &points, Some("ops_per_sec"), &cfg)
            .unwrap()
            .lines
            .len(),
        1
    );
    assert!(analyse("s", &points, Some("p99_us"), &cfg)
        .unwrap()
        .lines
        .is_empty());
}

fn confirmation(before: &str, after: &str, confirmed: bool) -> Confirmation {
    Confirmation {
        series: "nightly".into(),
        workload: "SET".into(),
        metric: "ops_per_sec".into(),
        commit_before: before.into(),
        commit_after: after.into(),
        point_id: 0,
        experiment: "ab".into(),
        confirmed,
        decision: if confirmed { "lower" } else { "equivalent" }.into(),
        effect_pct: -10.0,
        ci_low_pct: Some(-12.0),
        ci_high_pct: Some(-8.0),
        rounds: 10,
        recorded_at_unix_ms: 0,
    }
}

#[test]
fn the_confirmed_gate_sees_only_confirmed_change_points() {
    let points = series(30, |i| if i < 18 { 100_000.0 } else { 90_000.0 }, |_| "h");
    let mut a = analyse("nightly", &points, None, &ChangePointConfig::default()).unwrap();
    assert_eq!(a.lines[0].segments[0].change_points[0].point_id, 19);
    assert_eq!(a.unconfirmed().len(), 1);
    assert!(a.gate_confirmed(5.0).is_empty(), "nothing confirmed yet");
    // A confirmation of other commits belongs to no change point.
    a.attach(&[confirmation("c16", "c17", true)]);
    assert_eq!(a.unconfirmed().len(), 1);
    a.attach(&[confirmation("c17", "c18", false)]);
    assert!(a.unconfirmed().is_empty());
    assert!(a.gate_confirmed(5.0).is_empty(), "rejected by the A/B");
    a.attach(&[confirmation("c17", "c18", true)]);
    assert_eq!(a.gate_confirmed(5.0).len(), 1);
    assert!(a.gate_confirmed(15.0).is_empty());
}
