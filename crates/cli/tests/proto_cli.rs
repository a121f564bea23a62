//! End-to-end tests of `resplab proto size` with the bench workload vocabulary and of
//! `resplab proto convert` on streams.

use assert_cmd::Command;
use serde_json::Value;

fn resplab() -> Command {
    let mut c = Command::cargo_bin("resplab").expect("the resplab binary is built");
    c.env_remove("REDISCLI_AUTH");
    c
}

fn size_json(args: &[&str]) -> Vec<Value> {
    let out = resplab()
        .args(["proto", "size", "--json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn size_takes_bench_tests_in_phase_order_with_totals() {
    let rows = size_json(&["-t", "set,get", "-d", "10", "-n", "50"]);
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["command"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["SET", "GET", "TOTAL"]);
    for r in &rows[..2] {
        assert_eq!(r["count"], 50);
        assert_eq!(r["respb_passthrough"], 0);
        let resp = r["resp_bytes"].as_f64().unwrap();
        let respb = r["respb_bytes"].as_f64().unwrap();
        assert!(respb < resp, "{r}");
        let saving = r["saving_percent"].as_f64().unwrap();
        assert!((saving - 100.0 * (resp - respb) / resp).abs() < 1e-9);
    }
    // SET key:__rand_int__ <10 bytes>: RESP2 *3 $3 SET $16 key $10 value.
    let set_resp = 4 + (4 + 3 + 2) + (5 + 16 + 2) + (5 + 10 + 2);
    assert_eq!(rows[0]["resp_bytes"], 50 * set_resp);
    // RESPB SET: header 4, key u16+16, value u32+10, flags 1 + int64 8.
    assert_eq!(rows[0]["respb_bytes"], 50 * (4 + 2 + 16 + 4 + 10 + 9));
    let total = &rows[2];
    assert_eq!(total["count"], 100);
    assert_eq!(
        total["resp_bytes"].as_u64().unwrap(),
        rows[0]["resp_bytes"].as_u64().unwrap() + rows[1]["resp_bytes"].as_u64().unwrap()
    );
}

#[test]
fn size_takes_a_memtier_mix_and_command_templates() {
    let rows = size_json(&["--ratio", "1:3", "-n", "400", "--data-size", "32"]);
    let count = |name: &str| {
        rows.iter()
            .find(|r| r["command"] == name)
            .map(|r| r["count"].as_u64().unwrap())
    };
    assert_eq!(count("TOTAL"), Some(400));
    let sets = count("SET").unwrap();
    assert!((60..=140).contains(&sets), "{sets}");
    let rows = size_json(&[
        "--command",
        "HSET __key__ f __data__",
        "--command",
        "GET __key__",
        "-n",
        "100",
    ]);
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["command"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["HSET", "GET", "TOTAL"]);
}

#[test]
fn size_rejects_bad_bench_flags_and_mixed_sources() {
    let out = resplab()
        .args(["proto", "size", "-t", "nosuch"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nosuch") && err.contains("ping_inline"),
        "{err}"
    );
    let out = resplab()
        .args(["proto", "size", "-t", "get", "--workload", "small"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--tests"));
}
