//! The RESPB port of `resplab serve`: requests encoded with `resplab-proto`'s codec get
//! replies that decode with its reply decoder, each on its request's mux id; and no byte
//! stream, split anywhere or mutated, makes the RESPB request path panic.

use proptest::prelude::*;
use resplab_proto::resp::value::Value;
use resplab_proto::resp::Limits;
use resplab_proto::respb::codec::{encode_command, write_mux_create, write_passthrough};
use resplab_proto::respb::reply::decode_reply;
use resplab_proto::respb::HANDSHAKE;
use resplab_serve::{db::Db, Config, Conn, Knobs};
use std::io::{Read, Write};
use std::time::Duration;

fn frames(cmds: &[(u16, &[&str])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (mux, args) in cmds {
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        encode_command(&mut out, *mux, &a);
    }
    out
}

fn decode_all(mut buf: &[u8]) -> Vec<(u16, Value)> {
    let mut got = Vec::new();
    while !buf.is_empty() {
        let (mux, v, n) = decode_reply(buf, &Limits::default())
            .expect("a well-formed RESPB reply")
            .expect("a whole reply");
        got.push((mux, v));
        buf = &buf[n..];
    }
    got
}

fn blob(s: &str) -> Value {
    Value::Blob(s.as_bytes().to_vec())
}

#[test]
fn a_respb_port_answers_on_each_requests_mux_id() {
    let server = resplab_serve::start(&Config {
        port: 0,
        respb_port: Some(0),
        ..Config::default()
    })
    .expect("server starts");
    let port = server.respb_port().expect("a RESPB port");
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut req = HANDSHAKE.to_vec();
    write_mux_create(&mut req, 0, 9);
    req.extend(frames(&[
        (7, &["SET", "k", "v1"]),
        (9, &["GET", "k"]),
        (3, &["RPUSH", "l", "a", "b", "c"]),
        (4, &["LRANGE", "l", "0", "-1"]),
        (5, &["HSET", "h", "f", "x"]),
        (6, &["HGETALL", "h"]),
        (8, &["NOSUCHCOMMAND", "x"]),
        (2, &["GET", "missing"]),
    ]));
    write_passthrough(&mut req, 11, &[b"INCRBY", b"n", b"5"]);
    s.write_all(&req).unwrap();
    let want = vec![
        (7, Value::Simple(b"OK".to_vec())),
        (9, blob("v1")),
        (3, Value::Integer(3)),
        (4, Value::Array(vec![blob("a"), blob("b"), blob("c")])),
        (5, Value::Integer(1)),
        (6, Value::Map(vec![(blob("f"), blob("x"))])),
        (2, Value::Null),
        (11, Value::Integer(5)),
    ];
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let got = loop {
        let n = s.read(&mut chunk).expect("replies arrive");
        assert!(n > 0, "the server closed the connection");
        buf.extend_from_slice(&chunk[..n]);
        let mut rest: &[u8] = &buf;
        let mut got = Vec::new();
        while let Ok(Some((mux, v, used))) = decode_reply(rest, &Limits::default()) {
            got.push((mux, v));
            rest = &rest[used..];
        }
        if got.len() == want.len() + 1 {
            break got;
        }
    };
    let (unknown_mux, unknown) = &got[6];
    assert_eq!(*unknown_mux, 8);
    match unknown {
        Value::SimpleError(t) => assert!(t.starts_with(b"ERR unknown command"), "{t:?}"),
        v => panic!("expected an error reply, got {v:?}"),
    }
    let mut rest = got.clone();
    rest.remove(6);
    assert_eq!(rest, want);
}

#[test]
fn a_malformed_frame_gets_an_error_on_mux_zero_and_a_close() {
    let (db, k) = (Db::default(), Knobs::from_config(&Config::default()));
    // Whatever mux id the undecodable bytes seem to carry, the error goes on mux 0.
    for mux in [[0, 0], [0, 7], [0xFF, 0xFF]] {
        let mut c = Conn::new_respb(1);
        let mut out = Vec::new();
        let garbage = [0x03, 0xFF, mux[0], mux[1], 1, 2, 3, 4];
        let fed = c.feed(&db, &k, &garbage, &mut out);
        assert_eq!(fed, resplab_serve::Feed::Close);
        let got = decode_all(&out);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, 0, "error on mux {} for {garbage:?}", got[0].0);
        assert!(matches!(&got[0].1, Value::SimpleError(t) if t.starts_with(b"ERR Protocol error")));
    }
}

fn stream() -> Vec<u8> {
    let mut s = HANDSHAKE.to_vec();
    s.extend(frames(&[
        (1, &["SET", "a", "xyz"]),
        (2, &["GET", "a"]),
        (3, &["MSET", "b", "1", "c", "2"]),
        (4, &["MGET", "a", "b", "c", "d"]),
        (5, &["ZADD", "z", "1", "m", "2", "n"]),
        (6, &["ZRANGE", "z", "0", "-1", "WITHSCORES"]),
        (7, &["SADD", "s", "p", "q"]),
        (8, &["INCR", "b"]),
    ]));
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A request stream split at any two places gives the same replies as sent whole.
    #[test]
    fn split_streams_give_the_same_replies(a in 0usize..400, b in 0usize..400) {
        let s = stream();
        let (mut a, mut b) = (a % (s.len() + 1), b % (s.len() + 1));
        if a > b { std::mem::swap(&mut a, &mut b); }
        let k = Knobs::from_config(&Config::default());
        let whole = {
            let (db, mut c, mut out) = (Db::default(), Conn::new_respb(1), Vec::new());
            c.feed(&db, &k, &s, &mut out);
            out
        };
        let (db, mut c, mut out) = (Db::default(), Conn::new_respb(1), Vec::new());
        for part in [&s[..a], &s[a..b], &s[b..]] {
            c.feed(&db, &k, part, &mut out);
        }
        prop_assert_eq!(decode_all(&out).len(), 8);
        prop_assert_eq!(out, whole);
    }

    /// Mutated and random bytes never panic the RESPB request path.
    #[test]
    fn mutated_streams_never_panic(
        edits in proptest::collection::vec((0usize..400, any::<u8>()), 0..8),
        cut in 0usize..400,
        noise in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut s = stream();
        for (at, b) in edits {
            let i = at % s.len();
            s[i] = b;
        }
        s.truncate(cut % (s.len() + 1));
        s.extend(noise);
        let (db, k) = (Db::default(), Knobs::from_config(&Config::default()));
        let mut c = Conn::new_respb(1);
        let mut out = Vec::new();
        let mid = s.len() / 2;
        c.feed(&db, &k, &s[..mid], &mut out);
        c.feed(&db, &k, &s[mid..], &mut out);
    }
}

/// The fault knobs act alike on both ports: a command that sets `garbage-every` gets its
/// own reply, and the garbage starts with the next command (the RESPB port used to
/// decide after the command ran and replaced the `CONFIG SET` reply itself).
#[test]
fn a_garbage_knob_set_by_a_command_counts_from_the_next_command_on_both_ports() {
    let k = Knobs::from_config(&Config::default());
    let db = Db::default();
    let mut resp = Conn::new(1);
    let mut out = Vec::new();
    let mut req = Vec::new();
    for args in [&["CONFIG", "SET", "garbage-every", "1"][..], &["PING"]] {
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        resplab_proto::resp::encode::write_command(&mut req, &a);
    }
    resp.feed(&db, &k, &req, &mut out);
    assert_eq!(
        out,
        [b"+OK\r\n".as_slice(), resplab_serve::GARBAGE].concat()
    );
    let k = Knobs::from_config(&Config::default());
    let mut respb = Conn::new_respb(2);
    let mut out = Vec::new();
    let req = frames(&[
        (1, &["CONFIG", "SET", "garbage-every", "1"]),
        (2, &["PING"]),
    ]);
    respb.feed(&db, &k, &req, &mut out);
    let garbage = out.len() - resplab_serve::GARBAGE.len();
    assert_eq!(&out[garbage..], resplab_serve::GARBAGE);
    assert_eq!(
        decode_all(&out[..garbage]),
        vec![(1, Value::Simple(b"OK".to_vec()))]
    );
}
