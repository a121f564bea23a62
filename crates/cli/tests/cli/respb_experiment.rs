//! RESP against RESPB as an ordinary experiment: examples/respb-vs-resp.toml runs against
//! `resplab serve` (two ports per server, the load of one variant in RESPB), is stored,
//! compared and reported; a RESPB variant without a RESPB port is refused before
//! anything runs.

use crate::common::BIN;
use std::path::{Path, PathBuf};

fn example() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/respb-vs-resp.toml"
    ))
}

/// `resplab ARGS` in `dir` with the binary's folder first on `PATH`, as the example's
/// server command (`resplab serve …`) needs: exit code, stdout, stderr.
fn run(args: &[&str], dir: &Path) -> (i32, String, String) {
    let bin_dir = Path::new(BIN).parent().expect("the binary has a folder");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    crate::common::run_in_with(args, dir, &[("PATH", &path)])
}

#[test]
fn a_resp_against_respb_experiment_runs_is_stored_compared_and_reported() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = example().to_string_lossy().into_owned();
    let (code, out, err) = run(
        &[
            "experiment",
            "run",
            &file,
            "--smoke",
            "--rounds",
            "6",
            "-q",
            "--db",
            "r.db",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("get / respb vs baseline"), "{out}");
    let (code, out, _) = run(
        &[
            "experiment",
            "status",
            "respb-vs-resp-smoke",
            "--db",
            "r.db",
        ],
        dir.path(),
    );
    assert!(code == 0 && out.contains("rounds valid: 6/6"), "{out}");

    // The load of `respb` went over RESPB: a small GET's frames are about a third
    // smaller on the wire, in every round, so the comparison is decided.
    let (code, out, err) = run(
        &[
            "compare",
            "db:respb-vs-resp-smoke",
            "--db",
            "r.db",
            "--format",
            "json",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let row = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["workload"] == "get" && r["metric"] == "wire_bytes_per_op")
        .unwrap_or_else(|| panic!("no wire_bytes_per_op row for get: {out}"));
    let (resp, respb) = (
        row["baseline_median"].as_f64().unwrap(),
        row["variant_median"].as_f64().unwrap(),
    );
    assert!(respb < 0.8 * resp, "RESPB {respb} B/op vs RESP {resp} B/op");
    assert_eq!(row["verdict"], "faster", "{row}");
    for metric in ["ops_per_sec", "p99_us", "client_cpu_us_per_op"] {
        assert!(
            json["rows"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["workload"] == "get" && r["metric"] == metric),
            "no {metric} row: {out}"
        );
    }

    let (code, _, err) = run(
        &[
            "report",
            "respb-vs-resp-smoke",
            "--db",
            "r.db",
            "-o",
            "r.html",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(
        html.contains("wire_bytes_per_op"),
        "the report has the wire-bytes row"
    );
}

#[test]
fn respb_against_a_redis_server_variant_is_a_one_line_error_and_exit_2() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let example = std::fs::read_to_string(example()).unwrap();
    let (head, tail) = example
        .split_once("name = \"respb\"")
        .expect("the example has a respb variant");
    let tail = tail.replacen(
        "resplab serve --port {port} --respb-port {respb_port}",
        "redis-server --port {port} --save ''",
        1,
    );
    let text = format!("{head}name = \"respb\"{tail}");
    assert!(
        text.contains("redis-server"),
        "the example changed its layout"
    );
    std::fs::write(dir.path().join("bad.toml"), text).unwrap();
    let (code, out, err) = run(
        &["experiment", "run", "bad.toml", "--db", "bad.db"],
        dir.path(),
    );
    assert_eq!(code, 2, "{out}\n{err}");
    let line = err.trim();
    assert!(
        line.contains("bad.toml:") && line.contains("needs a server with a RESPB port"),
        "{line}"
    );
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(!dir.path().join("bad.db").exists(), "nothing is created");
}
