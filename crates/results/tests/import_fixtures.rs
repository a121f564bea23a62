//! Importers against real outputs of redis-benchmark, memtier_benchmark, `go test -bench`
//! and ministat data files (copied into tests/fixtures).

#[path = "import_fixtures/hdr_and_memtier_text.rs"]
mod hdr_and_memtier_text;

use resplab_results::import::{
    self, detect, load_inputs, Format, InputSpec, NoStore, PlainOptions,
};
use resplab_results::sample::{Direction, Metric, SampleSet};
use std::path::PathBuf;

fn fixture(rel: &str) -> String {
    let mut p = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    p.push("tests/fixtures");
    p.push(rel);
    p.to_string_lossy().into_owned()
}

fn load(args: &[String]) -> Result<import::Loaded, import::ImportError> {
    let specs: Vec<InputSpec> = args.iter().map(|a| InputSpec::parse(a).unwrap()).collect();
    load_inputs(&specs, &PlainOptions::default(), &mut NoStore)
}

fn values(set: &SampleSet, w: &str, m: &Metric, l: &str) -> Vec<f64> {
    set.get(w, m, l)
        .map(|s| s.values.clone())
        .unwrap_or_default()
}

#[test]
fn detects_every_fixture_format() {
    let cases = [
        (
            "redis-benchmark/default-suite.csv",
            Format::RedisBenchmarkCsv,
        ),
        (
            "redis-benchmark/default-suite.q.txt",
            Format::RedisBenchmarkQuiet,
        ),
        (
            "redis-benchmark/set-get.full.txt",
            Format::RedisBenchmarkText,
        ),
        ("memtier/single.json", Format::Memtier),
        ("memtier/multirun.json", Format::Memtier),
        ("gobench/baseline.txt", Format::GoBench),
        ("ministat/synth-n3.a.txt", Format::Plain),
    ];
    for (f, want) in cases {
        let bytes = std::fs::read(fixture(f)).unwrap();
        assert_eq!(detect(&bytes), want, "{f}");
    }
}

#[test]
fn redis_benchmark_csv_trials_form_samples() {
    let mut args = Vec::new();
    for label in ["baseline", "variant"] {
        for i in 1..=5 {
            args.push(format!(
                "{label}={}",
                fixture(&format!("redis-benchmark/trials/{label}/trial-{i}.csv"))
            ));
        }
    }
    let loaded = load(&args).unwrap();
    let set = SampleSet::from_observations(&loaded.observations);
    let rps = Metric::new("rps", "requests/s", Direction::HigherIsBetter);
    let base = values(&set, "SET", &rps, "baseline");
    assert_eq!(base.len(), 5);
    // Same numbers the ministat fixture was made from.
    let expected: Vec<f64> = std::fs::read_to_string(fixture("ministat/rb-set-rps.baseline.txt"))
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(base, expected);
    assert_eq!(set.labels.len(), 2);
    let p99 = Metric::new("p99_latency_ms", "ms", Direction::LowerIsBetter);
    assert_eq!(values(&set, "GET", &p99, "variant").len(), 5);
    // Trials are numbered per label in file order.
    let trials: Vec<u32> = loaded
        .observations
        .iter()
        .filter(|o| &*o.label == "variant" && &*o.workload == "SET" && o.metric.name == "rps")
        .map(|o| o.trial)
        .collect();
    assert_eq!(trials, vec![0, 1, 2, 3, 4]);
}

#[test]
fn redis_benchmark_quiet_and_full_text_with_carriage_returns() {
    let q = fixture("redis-benchmark/default-suite.q.txt");
    let loaded = load(std::slice::from_ref(&q)).unwrap();
    let set = SampleSet::from_observations(&loaded.observations);
    let rps = Metric::new("rps", "requests/s", Direction::HigherIsBetter);
    assert_eq!(values(&set, "PING_INLINE", &rps, &q), vec![63291.14]);
    assert_eq!(values(&set, "SET", &rps, &q), vec![47619.05]);
    assert!(set.workloads.iter().any(|w| w.starts_with("LPUSH (needed")));
    assert!(set.workloads.iter().all(|w| !w.contains("rps=")));

    let full = fixture("redis-benchmark/set-get.full.txt");
    let loaded = load(std::slice::from_ref(&full)).unwrap();
    let set = SampleSet::from_observations(&loaded.observations);
    assert_eq!(values(&set, "SET", &rps, &full), vec![58997.05]);
    let p95 = Metric::new("p95_latency_ms", "ms", Direction::LowerIsBetter);
    assert_eq!(values(&set, "SET", &p95, &full), vec![0.295]);
    assert_eq!(set.workloads.len(), 2);
}

#[test]
fn memtier_single_multirun_and_arbitrary_commands() {
    let ops = Metric::new("ops_per_sec", "ops/s", Direction::HigherIsBetter);
    let single = fixture("memtier/single.json");
    let set =
        SampleSet::from_observations(&load(std::slice::from_ref(&single)).unwrap().observations);
    assert_eq!(values(&set, "Totals", &ops, &single), vec![77153.95]);
    // Waits has Count 0 and is skipped.
    assert!(!set.workloads.iter().any(|w| &**w == "Waits"));
    // Totals average latency is 0.000 in the JSON; recomputed from the accumulated sum.
    let avg = Metric::new("avg_latency_ms", "ms", Direction::LowerIsBetter);
    let a = values(&set, "Totals", &avg, &single);
    assert!((a[0] - 6459.0 / 50000.0).abs() < 1e-12, "{a:?}");
    let p99 = Metric::new("p99_latency_ms", "ms", Direction::LowerIsBetter);
    assert_eq!(values(&set, "Totals", &p99, &single), vec![0.311]);

    let multi = fixture("memtier/multirun.json");
    let loaded = load(std::slice::from_ref(&multi)).unwrap();
    let set = SampleSet::from_observations(&loaded.observations);
    assert_eq!(
        values(&set, "Totals", &ops, &multi),
        vec![86662.92, 81726.46, 94408.2]
    );
    assert!(loaded
        .notes
        .iter()
        .any(|n| n.contains("BEST/WORST/AGGREGATED")));

    let arb = fixture("memtier/arbitrary.json");
    let set = SampleSet::from_observations(&load(std::slice::from_ref(&arb)).unwrap().observations);
    assert_eq!(values(&set, "Hsets", &ops, &arb).len(), 1);
    assert_eq!(values(&set, "Hgets", &ops, &arb).len(), 1);
}

#[test]
fn memtier_zero_ops_negative_duration_is_flagged_not_fatal() {
    let f = fixture("memtier/quirks/zero-ops-negative-duration.json");
    let loaded = load(std::slice::from_ref(&f)).unwrap();
    let set = SampleSet::from_observations(&loaded.observations);
    let ops = Metric::new("ops_per_sec", "ops/s", Direction::HigherIsBetter);
    let s = set.get("Totals", &ops, &f).unwrap();
    assert!(s.values.is_empty());
    assert_eq!(s.flagged.len(), 1);
    assert!(s.flagged[0].2.contains("-402"), "{}", s.flagged[0].2);
    assert!(loaded.notes.iter().any(|n| n.contains("timing bug")));
    // Latencies of the same run are still there.
    let p50 = Metric::new("p50_latency_ms", "ms", Direction::LowerIsBetter);
    assert_eq!(values(&set, "Totals", &p50, &f), vec![0.111]);
    // The inflated-duration file parses as an ordinary run.
    let g = fixture("memtier/quirks/inflated-duration.json");
    assert!(load(&[g]).is_ok());
}

#[test]
fn go_bench_units_config_and_procs_suffix() {
    let base = fixture("gobench/baseline.txt");
    let loaded = load(&[format!("base={base}")]).unwrap();
    let set = SampleSet::from_observations(&loaded.observations);
    let ns = Metric::from_unit("ns/op", "ns/op");
    assert_eq!(ns.direction, Direction::LowerIsBetter);
    assert_eq!(
        values(&set, "Ping-2", &ns, "base"),
        vec![150674.0, 132669.0, 122805.0, 141860.0, 126919.0, 119767.0]
    );
    let allocs = Metric::from_unit("allocs/op", "allocs/op");
    assert_eq!(values(&set, "Pipeline-2", &allocs, "base"), vec![78.0; 6]);
    assert_eq!(set.workloads.len(), 5);
    assert_eq!(set.metrics.len(), 3);
    let cfg = set.configs.get("Ping-2").unwrap();
    assert_eq!(
        cfg.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        vec!["goos", "goarch", "pkg", "cpu"]
    );
    assert_eq!(cfg[3].1, "AMD EPYC");
}

#[test]
fn plain_numbers_skip_comments() {
    let f = fixture("ministat/synth-n3.a.txt");
    let loaded = load(std::slice::from_ref(&f)).unwrap();
    let set = SampleSet::from_observations(&loaded.observations);
    let m = import::plain::plain_metric();
    assert_eq!(values(&set, "", &m, &f), vec![10.21, 10.48, 10.37]);
    assert_eq!(loaded.observations.get(0).unwrap().origin.line, Some(2));
}

#[test]
fn unreadable_and_unknown_inputs_name_file_and_line() {
    let missing = fixture("nope.txt");
    let err = load(std::slice::from_ref(&missing))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(&missing) && err.contains("cannot read"),
        "{err}"
    );

    let dir = std::env::temp_dir().join(format!("resplab-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "1\n2\nthree point five\n").unwrap();
    let bad = bad.to_string_lossy().into_owned();
    let err = load(std::slice::from_ref(&bad)).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("{bad}:3: expected a number")),
        "{err}"
    );

    let json = dir.join("other.json");
    std::fs::write(&json, "{\"hello\": 1}").unwrap();
    let err = load(&[json.to_string_lossy().into_owned()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("expected memtier JSON"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);

    let err = load(&["db:exp".to_string()]).unwrap_err().to_string();
    assert!(err.contains("db:exp"), "{err}");
}

#[test]
fn resplab_run_records_are_one_trial_each() {
    use resplab_results::{fixture, CpuTime, LatencyUs, RunRecord, Summary, ToolInfo};
    let make = |ops: f64| RunRecord {
        tool: ToolInfo {
            name: "resplab".into(),
            version: "0.1.0".into(),
            git_revision: None,
        },
        commands: [(
            "GET".to_string(),
            Summary {
                requests: 10,
                ops_per_sec: ops,
                ..Default::default()
            },
        )]
        .into_iter()
        .collect(),
        client_cpu: CpuTime::default(),
        ..fixture::run_record(Summary {
            requests: 10,
            ops_per_sec: ops,
            latency_us: LatencyUs {
                p99: 12.0,
                ..Default::default()
            },
            ..Default::default()
        })
    };
    let dir = std::env::temp_dir().join(format!("resplab-runs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut args = Vec::new();
    for (i, ops) in [100.0, 110.0, 105.0].into_iter().enumerate() {
        let p = dir.join(format!("run{i}.json"));
        std::fs::write(&p, serde_json::to_vec(&make(ops)).unwrap()).unwrap();
        args.push(format!("a={}", p.to_string_lossy()));
    }
    let loaded = load(&args).unwrap();
    let set = SampleSet::from_observations(&loaded.observations);
    let ops = Metric::new("ops_per_sec", "ops/s", Direction::HigherIsBetter);
    assert_eq!(values(&set, "GET", &ops, "a"), vec![100.0, 110.0, 105.0]);
    let p99 = Metric::new("p99_latency_us", "us", Direction::LowerIsBetter);
    assert_eq!(values(&set, "ALL", &p99, "a"), vec![12.0; 3]);
    let _ = std::fs::remove_dir_all(&dir);
}
