//! benchstat's statistics checked against go-moremath (f10218a, the version benchstat
//! builds with) and against real benchstat output. Expected values are stored in
//! `tests/fixtures` (see its README); no Go toolchain is needed to run these tests.

use resplab_stats::quantile_ci::{median_summary, quantile_ci};
use resplab_stats::utest::{mann_whitney, UMethod};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");

fn parse_list(s: &str) -> Vec<f64> {
    s.split(',').map(|t| t.parse().unwrap()).collect()
}

#[test]
fn u_test_matches_go_moremath() {
    let text = std::fs::read_to_string(format!("{DIR}go_moremath_utest.txt")).unwrap();
    let mut methods = std::collections::HashSet::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('|').collect();
        let (x1, x2) = (parse_list(f[0]), parse_list(f[1]));
        let u: f64 = f[2].parse().unwrap();
        let p: f64 = f[3].parse().unwrap();
        let got = mann_whitney(&x1, &x2).unwrap();
        assert_eq!(got.u1, u, "U for {line}");
        assert!(
            (got.p_value - p).abs() < 1e-12,
            "p {} vs go {p} for {line}",
            got.p_value
        );
        methods.insert(format!("{:?}", got.method));
    }
    assert_eq!(methods.len(), 3, "all three methods exercised: {methods:?}");
}

#[test]
fn quantile_ci_matches_go_moremath() {
    let text = std::fs::read_to_string(format!("{DIR}go_moremath_quantile_ci.txt")).unwrap();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let conf: f64 = f[0].parse().unwrap();
        let n: usize = f[1].parse().unwrap();
        let ci = quantile_ci(n, 0.5, conf).unwrap();
        assert_eq!(ci.lo_order, f[2].parse::<usize>().unwrap(), "lo {line}");
        assert_eq!(ci.hi_order, f[3].parse::<usize>().unwrap(), "hi {line}");
        let achieved: f64 = f[4].parse().unwrap();
        assert!(
            (ci.confidence - achieved).abs() < 1e-12,
            "confidence {} for {line}",
            ci.confidence
        );
        assert_eq!(ci.ambiguous.to_string(), f[5], "ambiguous {line}");
    }
}

#[test]
fn exact_method_choice_follows_benchstat_limits() {
    let a: Vec<f64> = (0..50).map(|i| i as f64).collect();
    let b: Vec<f64> = (0..50).map(|i| i as f64 + 0.5).collect();
    assert_eq!(mann_whitney(&a, &b).unwrap().method, UMethod::Exact);
    let a51: Vec<f64> = (0..51).map(|i| i as f64).collect();
    assert_eq!(mann_whitney(&a51, &b).unwrap().method, UMethod::Normal);
    let t: Vec<f64> = (0..25).map(|i| (i / 2) as f64).collect();
    assert_eq!(mann_whitney(&t, &t).unwrap().method, UMethod::ExactTies);
    let t26: Vec<f64> = (0..26).map(|i| (i / 2) as f64).collect();
    assert_eq!(mann_whitney(&t26, &t).unwrap().method, UMethod::Normal);
    assert!(mann_whitney(&[], &[1.0]).is_err());
    assert!(mann_whitney(&[f64::NAN], &[1.0]).is_err());
}

#[test]
fn median_summary_small_samples() {
    let s = median_summary(&[5.0, 1.0, 3.0], 0.95).unwrap();
    assert_eq!(s.median, 3.0);
    assert!(s.lo.is_infinite() || s.hi.is_infinite());
    assert_eq!(s.need_samples, Some((6, false)));
    assert_eq!(s.pct_range(), None);
    let s = median_summary(&[10.0, 11.0, 9.0, 10.5, 9.5, 10.2], 0.95).unwrap();
    assert_eq!((s.lo, s.hi), (9.0, 11.0));
    assert_eq!(s.median, 10.1);
    assert_eq!(s.need_samples, None);
}
