//! Every file in examples/ parses, and its plan is complete.

use resplab_experiment::{plan, Overrides};
use std::path::PathBuf;

fn examples() -> Vec<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_example_parses_and_plans() {
    let files = examples();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for expected in [
        "demo.toml",
        "memtier-patterns.toml",
        "overhead-sweep.toml",
        "redis-benchmark-suite.toml",
    ] {
        assert!(names.iter().any(|n| n == expected), "missing {expected}");
    }
    for f in files {
        let (exp, _) =
            resplab_experiment::load(&f, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
        let trials: usize = plan::full_plan(&exp).iter().map(|e| e.trials.len()).sum();
        assert_eq!(
            trials,
            exp.rounds as usize * exp.variants.len() * exp.workloads.len(),
            "{}",
            f.display()
        );
        for w in &exp.workloads {
            resplab_experiment::workload::to_spec(w, 1).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

#[test]
fn sweep_expands_params_and_the_demo_is_short() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"));
    let (sweep, _) =
        resplab_experiment::load(&dir.join("overhead-sweep.toml"), &Overrides::default()).unwrap();
    let names: Vec<&str> = sweep.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "slowlog-off",
            "slowlog-10000",
            "slowlog-100",
            "slowlog-0",
            "slowlog-0-toggled"
        ]
    );
    let (demo, _) =
        resplab_experiment::load(&dir.join("demo.toml"), &Overrides::default()).unwrap();
    assert!(plan::estimate_total(&demo).as_secs() < 60);
}
