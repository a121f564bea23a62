//! End-to-end tests of `resplab proto size` with the bench workload vocabulary and of
//! `resplab proto convert` on streams.

use crate::common::command;

use serde_json::Value;

fn size_json(args: &[&str]) -> Vec<Value> {
    let out = command()
        .args(["proto", "size", "--json"])
        .args(args)
        .output()
        .unwrap();
    crate::common::assert_ok(&out);
    serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn size_takes_bench_tests_in_phase_order_with_totals() {
    let _lane = crate::common::shared();
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
    let _lane = crate::common::shared();
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
    let _lane = crate::common::shared();
    let out = command()
        .args(["proto", "size", "-t", "nosuch"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nosuch") && err.contains("ping_inline"),
        "{err}"
    );
    let out = command()
        .args(["proto", "size", "-t", "get", "--workload", "small"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--tests"));
}

fn resp_stream(n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let key = format!("key:{i:06}");
        let val = "v".repeat(i % 37);
        out.extend_from_slice(
            format!(
                "*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n${}\r\n{val}\r\n",
                key.len(),
                val.len()
            )
            .as_bytes(),
        );
    }
    out
}

fn convert(from: &str, to: &str, input: &[u8]) -> std::process::Output {
    command()
        .args(["proto", "convert", "--from", from, "--to", to])
        .write_stdin(input.to_vec())
        .output()
        .unwrap()
}

#[test]
fn convert_streams_across_read_boundaries_and_round_trips() {
    let _lane = crate::common::shared();
    // About 300 KB: several 64 KiB reads, requests split across them.
    let mut resp = resp_stream(6000);
    // One value larger than a read, so the buffer has to grow for it.
    let big = vec![b'x'; 200_000];
    resp.extend_from_slice(
        format!("*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n${}\r\n", big.len()).as_bytes(),
    );
    resp.extend_from_slice(&big);
    resp.extend_from_slice(b"\r\n");
    assert!(resp.len() > 4 * 64 * 1024);
    let respb = convert("resp", "respb", &resp);
    crate::common::assert_ok(&respb);
    assert!(respb.stdout.len() < resp.len());
    let back = convert("respb", "resp", &respb.stdout);
    crate::common::assert_ok(&back);
    assert_eq!(back.stdout, resp);
}

#[test]
fn convert_reports_exact_stream_offsets_past_the_first_read() {
    let _lane = crate::common::shared();
    let good = resp_stream(5000);
    assert!(good.len() > 2 * 64 * 1024);
    // A request whose second argument does not start with '$'.
    let mut bad = good.clone();
    bad.extend_from_slice(b"*2\r\n$3\r\nGET\r\n#oops\r\n");
    let at = good.len() + 13;
    let out = convert("resp", "respb", &bad);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("at byte {at}:")), "{err}");
    // What came before the bad request was converted and written.
    let ok = convert("resp", "respb", &good);
    assert_eq!(out.stdout, ok.stdout);

    // A truncated last request: the offset is where it starts.
    let mut cut = good.clone();
    cut.extend_from_slice(b"*2\r\n$3\r\nGET\r\n$5\r\nab");
    let out = convert("resp", "respb", &cut);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("truncated RESP request at byte {}", good.len())),
        "{err}"
    );

    // The same for RESPB: an unknown opcode after the first read.
    let respb = convert("resp", "respb", &good).stdout;
    assert!(respb.len() > 64 * 1024);
    let mut bad = respb.clone();
    bad.extend_from_slice(&[0x0E, 0xEE, 0, 0]);
    let out = convert("respb", "resp", &bad);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("at byte {}:", respb.len())), "{err}");
}
