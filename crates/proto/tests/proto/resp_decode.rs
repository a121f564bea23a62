//! Unit tests of the RESP2/RESP3 scanner and decoder, one or more per type.

use resplab_proto::resp::encode::{write_command, write_command_iter, write_inline, write_value};
use resplab_proto::resp::scan::{error_kind, scan_reply, ReplyClass, Scanned};
use resplab_proto::resp::value::{decode, Value};
use resplab_proto::resp::{Limits, RespVersion};

fn lim() -> Limits {
    Limits::default()
}

fn full(input: &[u8]) -> (Value, ReplyClass) {
    let (v, n) = decode(input, &lim()).expect("valid").expect("complete");
    assert_eq!(n, input.len(), "decoder consumed everything");
    let s = scan_reply(input, &lim()).expect("valid").expect("complete");
    assert_eq!(s.consumed, input.len(), "scanner consumed everything");
    // Every strict prefix is incomplete for both decoders.
    for cut in 0..input.len() {
        assert_eq!(
            decode(&input[..cut], &lim()),
            Ok(None),
            "decode prefix {cut}"
        );
        assert_eq!(
            scan_reply(&input[..cut], &lim()),
            Ok(None),
            "scan prefix {cut}"
        );
    }
    (v, s.class)
}

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

#[test]
fn simple_string() {
    assert_eq!(
        full(b"+OK\r\n"),
        (Value::Simple(b("OK")), ReplyClass::Value)
    );
    assert_eq!(full(b"+\r\n"), (Value::Simple(vec![]), ReplyClass::Value));
}

#[test]
fn simple_error_and_kinds() {
    let (v, c) = full(b"-ERR unknown command\r\n");
    assert_eq!(v, Value::SimpleError(b("ERR unknown command")));
    assert_eq!(c, ReplyClass::Error);
    assert_eq!(error_kind(b"-WRONGTYPE Operation\r\n"), b"WRONGTYPE");
    assert_eq!(error_kind(b"-ERR\r\n"), b"ERR");
    assert_eq!(error_kind(b"+OK\r\n"), b"");
    assert_eq!(error_kind(b"!10\r\nSYNTAX bad\r\n"), b"SYNTAX");
    assert_eq!(error_kind(b"|1\r\n+a\r\n+b\r\n-LOADING x\r\n"), b"LOADING");
}

#[test]
fn redirections() {
    assert_eq!(full(b"-MOVED 3999 127.0.0.1:6381\r\n").1, ReplyClass::Moved);
    assert_eq!(full(b"-ASK 3999 127.0.0.1:6381\r\n").1, ReplyClass::Ask);
    assert_eq!(full(b"!9\r\nMOVED 1 h\r\n").1, ReplyClass::Moved);
    // Only the exact word counts.
    assert_eq!(full(b"-MOVEDX 1\r\n").1, ReplyClass::Error);
    assert_eq!(full(b"-ASKING\r\n").1, ReplyClass::Error);
}

#[test]
fn integers() {
    assert_eq!(full(b":0\r\n").0, Value::Integer(0));
    assert_eq!(full(b":-42\r\n").0, Value::Integer(-42));
    assert_eq!(
        full(b":9223372036854775807\r\n").0,
        Value::Integer(i64::MAX)
    );
    assert_eq!(
        full(b":-9223372036854775808\r\n").0,
        Value::Integer(i64::MIN)
    );
    assert!(decode(b":9223372036854775808\r\n", &lim()).is_err());
    assert!(scan_reply(b":9223372036854775808\r\n", &lim()).is_err());
    assert!(decode(b":+1\r\n", &lim()).is_err());
    assert!(decode(b":\r\n", &lim()).is_err());
    assert!(decode(b":-\r\n", &lim()).is_err());
    assert!(decode(b":12a\r\n", &lim()).is_err());
}

#[test]
fn bulk_strings_and_nils() {
    assert_eq!(full(b"$5\r\nhello\r\n").0, Value::Blob(b("hello")));
    assert_eq!(full(b"$0\r\n\r\n").0, Value::Blob(vec![]));
    assert_eq!(full(b"$4\r\na\r\nb\r\n").0, Value::Blob(b("a\r\nb")));
    assert_eq!(full(b"$-1\r\n"), (Value::Null, ReplyClass::Nil));
    assert_eq!(full(b"*-1\r\n"), (Value::Null, ReplyClass::Nil));
    assert_eq!(full(b"_\r\n"), (Value::Null, ReplyClass::Nil));
    let big = format!("${}\r\n{}\r\n", 12345, "x".repeat(12345));
    assert_eq!(full(big.as_bytes()).0, Value::Blob(vec![b'x'; 12345]));
}

#[test]
fn blob_error() {
    assert_eq!(
        full(b"!21\r\nSYNTAX invalid syntax\r\n"),
        (
            Value::BlobError(b("SYNTAX invalid syntax")),
            ReplyClass::Error
        )
    );
}

#[test]
fn doubles() {
    assert_eq!(full(b",1.5\r\n").0, Value::Double(1.5));
    assert_eq!(full(b",-0.25e3\r\n").0, Value::Double(-250.0));
    assert_eq!(full(b",10\r\n").0, Value::Double(10.0));
    assert_eq!(full(b",inf\r\n").0, Value::Double(f64::INFINITY));
    assert_eq!(full(b",-inf\r\n").0, Value::Double(f64::NEG_INFINITY));
    match full(b",nan\r\n").0 {
        Value::Double(d) => assert!(d.is_nan()),
        other => panic!("expected a NaN double, got {other:?}"),
    }
    assert!(decode(b",\r\n", &lim()).is_err());
    assert!(scan_reply(b",1.2.3\r\n", &lim()).is_err());
}

#[test]
fn booleans() {
    assert_eq!(full(b"#t\r\n").0, Value::Boolean(true));
    assert_eq!(full(b"#f\r\n").0, Value::Boolean(false));
    assert!(decode(b"#x\r\n", &lim()).is_err());
    assert!(scan_reply(b"#tt\r\n", &lim()).is_err());
}

#[test]
fn big_numbers() {
    assert_eq!(
        full(b"(3492890328409238509324850943850943825024385\r\n").0,
        Value::BigNumber(b("3492890328409238509324850943850943825024385"))
    );
    assert_eq!(full(b"(-1\r\n").0, Value::BigNumber(b("-1")));
    assert!(decode(b"(\r\n", &lim()).is_err());
    assert!(decode(b"(12x\r\n", &lim()).is_err());
    assert!(scan_reply(b"(-\r\n", &lim()).is_err());
}

#[test]
fn verbatim() {
    assert_eq!(
        full(b"=15\r\ntxt:Some string\r\n").0,
        Value::Verbatim {
            format: *b"txt",
            text: b("Some string")
        }
    );
    assert!(decode(b"=3\r\ntxt\r\n", &lim()).is_err());
    assert!(scan_reply(b"=5\r\ntxtxy\r\n", &lim()).is_err());
}

#[test]
fn arrays_maps_sets_push() {
    assert_eq!(
        full(b"*2\r\n:1\r\n$1\r\na\r\n").0,
        Value::Array(vec![Value::Integer(1), Value::Blob(b("a"))])
    );
    assert_eq!(full(b"*0\r\n").0, Value::Array(vec![]));
    assert_eq!(
        full(b"%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n").0,
        Value::Map(vec![
            (Value::Simple(b("first")), Value::Integer(1)),
            (Value::Simple(b("second")), Value::Integer(2)),
        ])
    );
    assert_eq!(
        full(b"~3\r\n+a\r\n+b\r\n#t\r\n").0,
        Value::Set(vec![
            Value::Simple(b("a")),
            Value::Simple(b("b")),
            Value::Boolean(true)
        ])
    );
    let (v, c) = full(b">2\r\n+message\r\n+hi\r\n");
    assert_eq!(
        v,
        Value::Push(vec![Value::Simple(b("message")), Value::Simple(b("hi"))])
    );
    assert_eq!(c, ReplyClass::Push);
    assert_eq!(
        full(b"*2\r\n*1\r\n_\r\n%0\r\n").0,
        Value::Array(vec![Value::Array(vec![Value::Null]), Value::Map(vec![])])
    );
}

#[test]
fn attributes() {
    let input =
        b"|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n*2\r\n:2039123\r\n:9543892\r\n";
    let (v, c) = full(input);
    assert_eq!(c, ReplyClass::Value);
    match v {
        Value::Attribute { attrs, value } => {
            assert_eq!(attrs.len(), 1);
            assert_eq!(
                *value,
                Value::Array(vec![Value::Integer(2039123), Value::Integer(9543892)])
            );
        }
        other => panic!("expected an attribute, got {other:?}"),
    }
    // An attribute inside an array is not an element.
    let (v, _) = full(b"*2\r\n:1\r\n|1\r\n+ttl\r\n:3600\r\n:2\r\n");
    match v {
        Value::Array(items) => assert_eq!(items.len(), 2),
        other => panic!("expected an array, got {other:?}"),
    }
    // The class is that of the annotated reply.
    assert_eq!(full(b"|0\r\n-ERR x\r\n").1, ReplyClass::Error);
    assert_eq!(full(b"|0\r\n_\r\n").1, ReplyClass::Nil);
    // Chained attributes are rejected by both decoders.
    assert!(decode(b"|0\r\n|0\r\n:1\r\n", &lim()).is_err());
    assert!(scan_reply(b"|0\r\n|0\r\n:1\r\n", &lim()).is_err());
    assert!(decode(b"*1\r\n|0\r\n|0\r\n:1\r\n", &lim()).is_err());
    assert!(scan_reply(b"*1\r\n|0\r\n|0\r\n:1\r\n", &lim()).is_err());
}

#[test]
fn pipelined_replies_are_delimited_one_by_one() {
    let stream = b"+OK\r\n$3\r\nfoo\r\n:7\r\n";
    let mut pos = 0;
    let mut classes = vec![];
    while pos < stream.len() {
        let Scanned { consumed, class } = scan_reply(&stream[pos..], &lim()).unwrap().unwrap();
        classes.push(class);
        pos += consumed;
    }
    assert_eq!(classes, vec![ReplyClass::Value; 3]);
}

#[test]
fn limits_are_checked_before_allocating() {
    let l = Limits {
        max_bulk_len: 10,
        max_aggregate_len: 3,
        max_depth: 2,
    };
    let e = decode(b"$11\r\n", &l).unwrap_err();
    assert_eq!(e.offset, 1);
    assert!(e.to_string().contains("at most 10"), "{e}");
    assert!(scan_reply(b"$11\r\n", &l).is_err());
    assert!(decode(b"*4\r\n", &l).is_err());
    assert!(scan_reply(b"%4\r\n", &l).is_err());
    assert!(decode(b"*1\r\n*1\r\n:1\r\n", &l).is_ok());
    assert!(decode(b"*1\r\n*1\r\n*1\r\n:1\r\n", &l).is_err());
    assert!(scan_reply(b"*1\r\n*1\r\n*1\r\n:1\r\n", &l).is_err());
    // Empty aggregates do not open a level.
    assert!(decode(b"*1\r\n*1\r\n*0\r\n", &l).unwrap().is_some());
    assert!(scan_reply(b"*1\r\n*1\r\n*0\r\n", &l).unwrap().is_some());
    // A huge count in a short buffer is "need more", not an allocation.
    assert_eq!(decode(b"*16777216\r\n", &Limits::default()), Ok(None));
    // A simple string line longer than the bulk limit is rejected without waiting for CR.
    assert!(scan_reply(b"+aaaaaaaaaaaaaaaaaaaa", &l).is_err());
    // Deep nesting far beyond the hard ceiling cannot exhaust the stack.
    let deep = "*1\r\n".repeat(100_000);
    let huge = Limits {
        max_depth: usize::MAX,
        ..Limits::default()
    };
    assert!(decode(deep.as_bytes(), &huge).is_err());
    assert!(scan_reply(deep.as_bytes(), &huge).is_err());
}

#[test]
fn malformed_input_names_offset_expected_and_found() {
    let e = decode(b"*1\r\n$3\r\nfooXY", &lim()).unwrap_err();
    assert_eq!(e.offset, 11);
    assert_eq!(
        e.to_string(),
        "at byte 11: expected CRLF after a payload of 3 bytes, found byte 0x58 ('X')"
    );
    let e = scan_reply(b"?", &lim()).unwrap_err();
    assert_eq!(e.offset, 0);
    let e = decode(b"$3\r\nfoo\rX", &lim()).unwrap_err();
    assert_eq!(e.offset, 8);
    assert!(decode(b"$-2\r\n", &lim()).is_err());
    assert!(decode(b"%-1\r\n", &lim()).is_err());
    assert!(decode(b"$?\r\n", &lim()).is_err());
    assert!(decode(b"+OK\rX", &lim()).is_err());
}

#[test]
fn request_encoding() {
    let mut out = Vec::new();
    write_command(&mut out, &[b"SET", b"key", b"value"]);
    assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n");
    out.clear();
    let args: Vec<&[u8]> = vec![b"GET", b""];
    write_command_iter(&mut out, args.iter().copied());
    assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$0\r\n\r\n");
    out.clear();
    let long = vec![b'v'; 1234];
    write_command(&mut out, &[b"SET", b"k", &long]);
    assert!(out.starts_with(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1234\r\nvvv"));
    out.clear();
    write_inline(&mut out, &[b"PING"]);
    assert_eq!(out, b"PING\r\n");
    out.clear();
    write_inline(&mut out, &[b"SET", b"a b", b"", b"q\"\x01"]);
    assert_eq!(out, b"SET \"a b\" \"\" \"q\\x22\\x01\"\r\n");
}

#[test]
fn reply_encoding_resp2_mapping() {
    let mut out = Vec::new();
    let v = Value::Map(vec![(Value::Simple(b("a")), Value::Double(1.5))]);
    write_value(&mut out, &v, RespVersion::Resp2);
    assert_eq!(out, b"*2\r\n+a\r\n$3\r\n1.5\r\n");
    out.clear();
    write_value(&mut out, &Value::Null, RespVersion::Resp2);
    write_value(&mut out, &Value::Boolean(true), RespVersion::Resp2);
    write_value(
        &mut out,
        &Value::SimpleError(b("ERR a\r\nb")),
        RespVersion::Resp2,
    );
    assert_eq!(out, b"$-1\r\n:1\r\n-ERR a  b\r\n");
    out.clear();
    write_value(
        &mut out,
        &Value::Double(f64::NEG_INFINITY),
        RespVersion::Resp3,
    );
    write_value(&mut out, &Value::Simple(b("a\nb")), RespVersion::Resp3);
    assert_eq!(out, b",-inf\r\n$3\r\na\nb\r\n");
}
