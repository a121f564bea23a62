//! The ministat and benchstat renderers against the real tools' outputs on the same data
//! (fixtures copied from the outputs of Debian ministat 20150715 and benchstat v2).

use resplab_report::benchstat::{self, BenchstatOptions};
use resplab_report::ministat::{self, MinistatOptions, NamedSet};
use resplab_results::import::{load_inputs, InputSpec, NoStore, PlainOptions};
use resplab_stats::ministat::Confidence;
use std::path::PathBuf;

fn dir(sub: &str) -> PathBuf {
    let mut p = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    p.push("tests/fixtures");
    p.push(sub);
    p
}

fn plain_set(name: &str) -> NamedSet {
    let path = dir("ministat").join(name);
    let spec = InputSpec::parse(&path.to_string_lossy()).unwrap();
    let opts = PlainOptions {
        force: true,
        ..Default::default()
    };
    let loaded = load_inputs(&[spec], &opts, &mut NoStore).unwrap();
    NamedSet {
        name: name.to_string(),
        points: loaded.observations.iter().map(|o| o.value).collect(),
    }
}

#[test]
fn every_ministat_fixture_matches_byte_for_byte() {
    let index = std::fs::read_to_string(dir("ministat").join("index.txt")).unwrap();
    let mut checked = 0;
    for line in index.lines().filter(|l| !l.starts_with('#')) {
        let Some((out_file, rest)) = line.split_once(": ") else {
            continue;
        };
        let cmd = rest.split("   --").next().unwrap();
        let mut args = cmd.split_whitespace().skip(1);
        let mut opts = MinistatOptions::default();
        let mut files = Vec::new();
        while let Some(a) = args.next() {
            match a {
                "-c" => {
                    let c: f64 = args.next().unwrap().parse().unwrap();
                    opts.confidence = Confidence::from_percent(c).unwrap();
                }
                "-A" => opts.no_plot = true,
                "-s" => opts.separate_bars = true,
                "-n" => opts.summary_only = true,
                f => files.push(plain_set(f)),
            }
        }
        let want = std::fs::read_to_string(dir("ministat").join(out_file)).unwrap();
        let got = ministat::render(&files, &opts).unwrap();
        assert_eq!(got, want, "{cmd}");
        checked += 1;
    }
    assert!(checked >= 14, "only {checked} fixtures checked");
}

fn gobench(labels: &[&str]) -> Vec<resplab_results::sample::Observation> {
    let specs: Vec<InputSpec> = labels
        .iter()
        .map(|l| {
            let p = dir("gobench").join(l);
            InputSpec::parse(&format!("{l}={}", p.to_string_lossy())).unwrap()
        })
        .collect();
    load_inputs(&specs, &PlainOptions::default(), &mut NoStore)
        .unwrap()
        .observations
        .to_vec()
}

#[test]
fn benchstat_text_matches_three_columns() {
    let obs = gobench(&["baseline.txt", "disabled.txt", "enabled.txt"]);
    let got = benchstat::render_text(&obs, &BenchstatOptions::default()).unwrap();
    let want =
        std::fs::read_to_string(dir("benchstat").join("baseline-disabled-enabled.txt")).unwrap();
    assert_eq!(got, want);
}

#[test]
fn benchstat_text_and_csv_match_two_columns() {
    let obs = gobench(&["baseline.txt", "enabled.txt"]);
    let got = benchstat::render_text(&obs, &BenchstatOptions::default()).unwrap();
    let want = std::fs::read_to_string(dir("benchstat").join("baseline-vs-enabled.txt")).unwrap();
    assert_eq!(got, want);
    let (csv, warnings) = benchstat::render_csv(&obs, &BenchstatOptions::default()).unwrap();
    let want_csv =
        std::fs::read_to_string(dir("benchstat").join("baseline-vs-enabled.csv")).unwrap();
    let want_warn =
        std::fs::read_to_string(dir("benchstat").join("baseline-vs-enabled.csv.stderr.txt"))
            .unwrap();
    // Every cell is identical, the full-precision geomean summaries included.
    for (g, w) in csv.lines().zip(want_csv.lines()) {
        assert_eq!(g, w);
    }
    assert_eq!(csv.lines().count(), want_csv.lines().count());
    assert_eq!(warnings, want_warn);
}
