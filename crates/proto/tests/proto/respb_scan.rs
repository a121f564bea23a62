//! The RESPB reply scanner (`respb::reply::scan_reply`) against the full decoder
//! (`decode_reply`): on complete frames, every prefix of them, mutated frames and random
//! bytes, under default and tight limits, both give the same answer — the same "need
//! more", the same error at the same offset, the same mux id and length — and the
//! scanner's class is what the decoded value is.

use crate::common::reply_value;
use proptest::prelude::*;
use resplab_proto::resp::value::Value;
use resplab_proto::resp::Limits;
use resplab_proto::respb::reply::{decode_reply, scan_reply, write_reply, ReplyClass};

/// What the scanner must say about `buf`, derived from the full decoder.
fn expected(buf: &[u8], limits: &Limits) -> Result<Option<(u16, usize, Class)>, String> {
    match decode_reply(buf, limits) {
        Ok(None) => Ok(None),
        Ok(Some((mux, v, n))) => Ok(Some((mux, n, class_of(&v)))),
        Err(e) => Err(e.to_string()),
    }
}

/// The scanner's class with the error range replaced by the text it points to.
#[derive(Debug, PartialEq)]
enum Class {
    Value,
    Nil,
    Error(Vec<u8>),
    Push,
}

fn class_of(v: &Value) -> Class {
    match v {
        Value::Null => Class::Nil,
        Value::SimpleError(t) | Value::BlobError(t) => Class::Error(t.clone()),
        Value::Push(_) => Class::Push,
        Value::Attribute { value, .. } => class_of(value),
        _ => Class::Value,
    }
}

fn scanned(buf: &[u8], limits: &Limits) -> Result<Option<(u16, usize, Class)>, String> {
    match scan_reply(buf, limits) {
        Ok(None) => Ok(None),
        Ok(Some(s)) => {
            let class = match s.class {
                ReplyClass::Value => Class::Value,
                ReplyClass::Nil => Class::Nil,
                ReplyClass::Push => Class::Push,
                ReplyClass::Error { start, end } => Class::Error(buf[start..end].to_vec()),
            };
            Ok(Some((s.mux, s.consumed, class)))
        }
        Err(e) => Err(e.to_string()),
    }
}

fn limit_sets() -> [Limits; 2] {
    [
        Limits::default(),
        Limits {
            max_bulk_len: 3,
            max_aggregate_len: 2,
            max_depth: 2,
        },
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn agrees_on_complete_frames_and_every_prefix(v in reply_value(), mux in any::<u16>(),
                                                   tail in prop::collection::vec(any::<u8>(), 0..4)) {
        let mut out = Vec::new();
        write_reply(&mut out, mux, &v);
        let len = out.len();
        out.extend_from_slice(&tail);
        for limits in &limit_sets() {
            for cut in 0..=out.len() {
                let buf = &out[..cut];
                prop_assert_eq!(scanned(buf, limits), expected(buf, limits), "cut {} of {:02x?}", cut, out);
            }
        }
        let got = scanned(&out, &Limits::default()).unwrap().unwrap();
        prop_assert_eq!(got, (mux, len, class_of(&v)));
    }

    #[test]
    fn agrees_on_mutated_frames(v in reply_value(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut out = Vec::new();
        write_reply(&mut out, 7, &v);
        let i = at.index(out.len());
        out[i] = byte;
        for limits in &limit_sets() {
            prop_assert_eq!(scanned(&out, limits), expected(&out, limits), "{:02x?}", out);
        }
    }

    #[test]
    fn agrees_on_random_bytes(mut buf in prop::collection::vec(any::<u8>(), 0..48), t in 0x8000u16..0x8010) {
        // Mostly valid type codes up front, so that more than the first check is reached.
        if buf.len() >= 2 {
            buf[..2].copy_from_slice(&t.to_be_bytes());
        }
        for limits in &limit_sets() {
            prop_assert_eq!(scanned(&buf, limits), expected(&buf, limits), "{:02x?}", buf);
        }
    }
}

#[test]
fn classes_of_common_replies() {
    let limits = Limits::default();
    let frame = |v: &Value| {
        let mut out = Vec::new();
        write_reply(&mut out, 3, v);
        out
    };
    let ok = frame(&Value::Simple(b"OK".to_vec()));
    assert_eq!(
        scan_reply(&ok, &limits).unwrap().unwrap().class,
        ReplyClass::Value
    );
    let nil = [0x80, 0x03, 0, 3, 0xFF, 0xFF, 0xFF, 0xFF];
    let s = scan_reply(&nil, &limits).unwrap().unwrap();
    assert_eq!((s.mux, s.consumed, s.class), (3, 8, ReplyClass::Nil));
    let err = frame(&Value::SimpleError(b"WRONGTYPE Operation".to_vec()));
    let s = scan_reply(&err, &limits).unwrap().unwrap();
    let ReplyClass::Error { start, end } = s.class else {
        panic!("{s:?}")
    };
    assert_eq!(&err[start..end], b"WRONGTYPE Operation");
    let e = scan_reply(b"+OK\r\n", &limits).unwrap_err().to_string();
    assert!(e.contains("0x2b4f"), "{e}");
}

/// `Encoder`, which keeps its buffers from call to call, writes exactly what
/// `encode_command` writes, whatever came before (native, passthrough after a failed
/// native attempt, unknown commands, mixed-case names).
#[test]
fn reused_encoder_matches_encode_command() {
    use resplab_proto::respb::codec::{encode_command, Encoder};
    let value = vec![b'x'; 1024];
    let commands: Vec<Vec<&[u8]>> = vec![
        vec![b"GET", b"key:000000000042"],
        vec![b"SET", b"key:000000000042", &value],
        vec![b"SET", b"key", b"v", b"NX", b"EX", b"10"],
        vec![b"set", b"key", b"v", b"EX", b"10", b"NX"],
        vec![b"INCR", b"counter"],
        vec![b"INCRBY", b"k", b"+5"],
        vec![b"LPUSH", b"mylist", b"a"],
        vec![b"MSET", b"a", b"1", b"b", b"2"],
        vec![b"LRANGE", b"mylist", b"0", b"99"],
        vec![b"ZADD", b"z", b"1.5", b"m"],
        vec![b"PING"],
        vec![b"NOT-A-COMMAND", b"x"],
        vec![],
    ];
    let mut enc = Encoder::new();
    for round in 0..3 {
        for (i, args) in commands.iter().enumerate() {
            let (mut a, mut b) = (vec![0xAA], vec![0xAA]);
            let ea = enc.encode(&mut a, i as u16, args);
            let eb = encode_command(&mut b, i as u16, args);
            assert_eq!((&a, ea), (&b, eb), "round {round}, {args:?}");
        }
    }
}
