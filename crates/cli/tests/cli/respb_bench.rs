//! `resplab bench --protocol respb` against a real `resplab serve --respb-port` and
//! against a fake RESPB peer: the catalog runs with exact counts and no error, error
//! replies are counted by kind, malformed reply frames are protocol errors (never a
//! panic), and the combinations RESPB does not go with are refused naming the flags.

use crate::common::{resplab, text, Serve};
use resplab_proto::resp::value::Value;
use resplab_proto::resp::Limits;
use resplab_proto::respb::codec::{Decoder, Frame, FrameKind};
use resplab_proto::respb::reply::write_reply;
use resplab_proto::respb::HANDSHAKE;
use serde_json::Value as Json;
use std::io::{Read, Write};
use std::net::TcpListener;

/// `resplab serve` with a RESPB port besides its RESP one.
fn start(flags: &[&str]) -> Serve {
    let mut all = vec!["--respb-port", "0"];
    all.extend_from_slice(flags);
    Serve::start(&all)
}

fn bench(port: u16, args: &[&str]) -> (Json, i32) {
    let port = port.to_string();
    let mut all = vec![
        "bench",
        "-p",
        &port,
        "--protocol",
        "respb",
        "--no-progress",
        "--json",
        "-",
    ];
    all.extend_from_slice(args);
    let out = resplab(&all);
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().unwrap_or(-1))
}

#[test]
fn the_bench_catalog_runs_over_respb_with_exact_counts() {
    let _lane = crate::common::shared();
    let s = start(&["--threads", "2"]);
    let (rec, code) = bench(s.respb_port.unwrap(), &["-n", "2000", "-c", "8"]);
    assert_eq!(code, 0, "{:#}", rec["end"]);
    assert_eq!(rec["config"]["protocol"], "respb");
    assert_eq!(rec["totals"]["errors"], 0, "{:#}", rec["totals"]);
    assert_eq!(rec["connections"]["protocol_errors"], 0);
    let cmds = rec["commands"].as_object().unwrap();
    assert!(cmds.len() >= 20, "{:?}", cmds.keys());
    for (name, c) in cmds {
        assert_eq!(c["requests"], 2000, "{name}");
        assert!(c["bytes_in"].as_u64().unwrap() > 0, "{name}");
    }
    // Pipelined, several connections per thread: every reply matched to its request.
    let (rec, code) = bench(
        s.respb_port.unwrap(),
        &[
            "-t",
            "set,get,lrange",
            "-n",
            "3000",
            "-P",
            "16",
            "-c",
            "4",
            "--threads",
            "2",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(rec["totals"]["errors"], 0, "{:#}", rec["totals"]);
    assert_eq!(rec["commands"]["GET"]["requests"], 3000);
    // GET of a 3-byte value: an 11-byte header and length plus the value, per reply.
    assert_eq!(rec["commands"]["GET"]["bytes_in"], 3000 * (4 + 4 + 3));
}

#[test]
fn error_replies_over_respb_are_counted_by_kind() {
    let _lane = crate::common::shared();
    let s = start(&[]);
    let (rec, code) = bench(
        s.respb_port.unwrap(),
        &[
            "-n",
            "200",
            "-c",
            "1",
            "--command",
            "SET strkey abc",
            "--command",
            "LPUSH strkey x",
        ],
    );
    assert_eq!(code, 0);
    assert_eq!(rec["commands"]["SET"]["errors"], 0);
    let lpush = &rec["commands"]["LPUSH"];
    assert_eq!(lpush["requests"], 100, "{lpush:#}");
    assert_eq!(lpush["error_kinds"]["WRONGTYPE"], 100, "{lpush:#}");
    assert_eq!(rec["connections"]["protocol_errors"], 0);
}

#[test]
fn malformed_respb_replies_are_protocol_errors() {
    let _lane = crate::common::shared();
    // serve replacing every 50th reply by bytes that are not RESPB.
    let s = start(&["--garbage-every", "50"]);
    let (rec, code) = bench(
        s.respb_port.unwrap(),
        &["-t", "get", "-n", "3000", "-c", "2"],
    );
    assert_eq!(code, 0, "{:#}", rec["end"]);
    assert!(
        rec["connections"]["protocol_errors"].as_u64().unwrap() >= 10,
        "{:#}",
        rec["connections"]
    );
    assert!(
        rec["commands"]["GET"]["error_kinds"]["protocol_error"]
            .as_u64()
            .unwrap()
            >= 10
    );

    // A fake peer: set-up answered, then a GET reply whose boolean byte is 7, and one on a
    // mux id no request used.
    for bad in [vec![0x80, 0x06, 0, 0, 7], vec![0x80, 0x05, 0, 9]] {
        let port = fake_peer(bad);
        let out = resplab(&[
            "bench",
            "-p",
            &port.to_string(),
            "--protocol",
            "respb",
            "-t",
            "get",
            "-n",
            "20",
            "-c",
            "1",
            "--no-progress",
            "--json",
            "-",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let rec: Json = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            rec["connections"]["protocol_errors"].as_u64().unwrap() >= 1,
            "{rec:#}"
        );
        assert_eq!(
            rec["commands"]["GET"]["error_kinds"]["protocol_error"], 20,
            "{rec:#}"
        );
    }
}

/// A RESPB peer that answers `PING` with `PONG`, other set-up commands with an error,
/// and every `GET` with `bad`.
fn fake_peer(bad: Vec<u8>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { return };
            let bad = bad.clone();
            std::thread::spawn(move || {
                let dec = Decoder::new(Limits::default());
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let mut at = 0;
                while let Ok(n) = sock.read(&mut chunk) {
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if at == 0 && buf.starts_with(&HANDSHAKE) {
                        at = HANDSHAKE.len();
                    }
                    let mut out = Vec::new();
                    loop {
                        let mut frame = Frame::default();
                        let Ok(Some(used)) = dec.decode(&buf[at..], &mut frame) else {
                            break;
                        };
                        let name = match frame.kind {
                            FrameKind::Command(c) => c.name,
                            _ => "",
                        };
                        match name {
                            "PING" => write_reply(&mut out, 0, &Value::Simple(b"PONG".to_vec())),
                            "GET" => out.extend_from_slice(&bad),
                            _ => write_reply(&mut out, 0, &Value::SimpleError(b"ERR no".to_vec())),
                        }
                        at += used;
                    }
                    if sock.write_all(&out).is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

#[test]
fn combinations_respb_does_not_go_with_are_refused() {
    let _lane = crate::common::shared();
    for (extra, named) in [
        (&["--resp", "3"][..], "--resp 3"),
        (&["--tls", "--insecure"][..], "--tls"),
        (&["--cluster"][..], "--cluster"),
    ] {
        let mut args = vec!["bench", "-p", "1", "--protocol", "respb", "-n", "1"];
        args.extend_from_slice(extra);
        let out = resplab(&args);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(2), "{t}");
        assert!(t.contains("--protocol respb") && t.contains(named), "{t}");
        assert!(!t.contains("panicked"), "{t}");
    }
    let out = resplab(&["bench", "--protocol", "respb", "-n", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("--protocol"), "{}", text(&out));
    let out = resplab(&["bench", "-p", "1", "--protocol", "resb", "-n", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("resp or respb"), "{}", text(&out));
}

/// The engine's control client (what experiments and the engine's own set-up use) speaks
/// RESPB when the configuration says so: calls, a pipeline and INFO.
#[test]
fn the_control_client_speaks_respb() {
    let _lane = crate::common::shared();
    use resplab_engine::control::{encode_command, reply_text, ControlClient};
    use resplab_engine::{RunConfig, Target, Wire};
    let s = start(&[]);
    let mut cfg = RunConfig::new(Target::Tcp {
        host: "127.0.0.1".into(),
        port: s.respb_port.unwrap(),
    });
    cfg.wire = Wire::Respb;
    cfg.db = Some(3);
    let mut c = ControlClient::connect(&cfg, std::time::Duration::from_secs(5)).unwrap();
    assert_eq!(reply_text(&c.call_str(&["SET", "a", "1"]).unwrap()), "OK");
    let mut pipe = Vec::new();
    encode_command(&mut pipe, &[b"SET", b"b", b"2"]);
    encode_command(&mut pipe, &[b"INCRBY", b"b", b"+5"]); // goes as passthrough
    assert_eq!(c.pipeline(&pipe, 2).unwrap(), None);
    assert_eq!(reply_text(&c.call_str(&["MGET", "a", "b"]).unwrap()), "1 7");
    assert_eq!(reply_text(&c.call_str(&["DBSIZE"]).unwrap()), "2");
    assert!(reply_text(&c.call_str(&["INFO", "server"]).unwrap()).contains("resplab"));
}

/// A connection the server drops is opened again with the handshake and its set-up, and
/// the run goes on over RESPB: every request is answered or counted as lost.
#[test]
fn dropped_respb_connections_reconnect() {
    let _lane = crate::common::shared();
    let s = start(&["--drop-every", "100"]);
    let (rec, code) = bench(
        s.respb_port.unwrap(),
        &["-t", "get", "-n", "3000", "-c", "2", "-P", "4"],
    );
    assert_eq!(code, 0, "{:#}", rec["end"]);
    assert!(
        rec["connections"]["reconnects"].as_u64().unwrap() >= 10,
        "{:#}",
        rec["connections"]
    );
    assert_eq!(rec["connections"]["protocol_errors"], 0);
    let get = &rec["commands"]["GET"];
    let lost = get["error_kinds"]["connection_lost"].as_u64().unwrap();
    assert_eq!(get["requests"].as_u64().unwrap() + lost, 3000, "{get:#}");
}
