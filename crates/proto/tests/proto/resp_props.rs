//! Property tests of the RESP decoders: round trips, incremental feeding at every split
//! point, agreement between the scanner and the full decoder, and no panics on garbage.

use proptest::prelude::*;
use resplab_proto::resp::encode::{write_command, write_value};
use resplab_proto::resp::request::parse_request;
use resplab_proto::resp::scan::{scan_reply, ReplyClass};
use resplab_proto::resp::value::{decode, Value};
use resplab_proto::resp::{Limits, RespVersion};

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..24)
}

fn line_text() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        any::<u8>().prop_filter("no CR/LF", |b| *b != b'\r' && *b != b'\n'),
        0..16,
    )
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        line_text().prop_map(Value::Simple),
        line_text().prop_map(Value::SimpleError),
        any::<i64>().prop_map(Value::Integer),
        bytes().prop_map(Value::Blob),
        bytes().prop_map(Value::BlobError),
        Just(Value::Null),
        any::<f64>()
            .prop_filter("NaN is not equal to itself", |d| !d.is_nan())
            .prop_map(Value::Double),
        Just(Value::Double(f64::INFINITY)),
        any::<bool>().prop_map(Value::Boolean),
        ("-?[0-9]{1,60}").prop_map(|s| Value::BigNumber(s.into_bytes())),
        (prop::array::uniform3(any::<u8>()), bytes())
            .prop_map(|(format, text)| Value::Verbatim { format, text }),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(5, 48, 6, |inner| {
        let pairs = prop::collection::vec((inner.clone(), inner.clone()), 0..4);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Set),
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Push),
            pairs.clone().prop_map(Value::Map),
            (pairs, inner)
                .prop_filter("an attribute annotates a non-attribute", |(_, v)| {
                    !matches!(v, Value::Attribute { .. })
                })
                .prop_map(|(attrs, v)| Value::Attribute {
                    attrs,
                    value: Box::new(v)
                }),
        ]
    })
}

fn encoded(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    write_value(&mut out, v, RespVersion::Resp3);
    out
}

/// Checks scanner and decoder agree on `input`: both complete with the same length,
/// both incomplete, or both reject it.
fn agree(input: &[u8], limits: &Limits) -> Result<(), TestCaseError> {
    let s = scan_reply(input, limits);
    let d = decode(input, limits);
    match (&s, &d) {
        (Ok(Some(s)), Ok(Some((_, n)))) => prop_assert_eq!(s.consumed, *n),
        (Ok(None), Ok(None)) | (Err(_), Err(_)) => {}
        _ => prop_assert!(false, "scanner {:?} vs decoder {:?} on {:?}", s, d, input),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn resp3_round_trip(v in value()) {
        let wire = encoded(&v);
        let (back, n) = decode(&wire, &Limits::default()).unwrap().unwrap();
        prop_assert_eq!(n, wire.len());
        prop_assert_eq!(back, v);
    }

    #[test]
    fn resp2_encoding_decodes(v in value()) {
        let mut wire = Vec::new();
        write_value(&mut wire, &v, RespVersion::Resp2);
        let (_, n) = decode(&wire, &Limits::default()).unwrap().unwrap();
        prop_assert_eq!(n, wire.len());
        let s = scan_reply(&wire, &Limits::default()).unwrap().unwrap();
        prop_assert_eq!(s.consumed, wire.len());
    }

    #[test]
    fn every_split_point_feeds_incrementally(vs in prop::collection::vec(value(), 1..4)) {
        let limits = Limits::default();
        let mut wire = Vec::new();
        for v in &vs {
            wire.extend_from_slice(&encoded(v));
        }
        // Whole-buffer decoding: the list of (value, length).
        let mut whole = Vec::new();
        let mut pos = 0;
        while pos < wire.len() {
            let (v, n) = decode(&wire[pos..], &limits).unwrap().unwrap();
            let s = scan_reply(&wire[pos..], &limits).unwrap().unwrap();
            prop_assert_eq!(s.consumed, n);
            whole.push((v, n));
            pos += n;
        }
        prop_assert_eq!(whole.len(), vs.len());
        // Feed the stream as two reads split at every position, as a connection would.
        for split in 0..=wire.len() {
            let mut buf: Vec<u8> = Vec::new();
            let mut got = Vec::new();
            for chunk in [&wire[..split], &wire[split..]] {
                buf.extend_from_slice(chunk);
                loop {
                    let s = scan_reply(&buf, &limits).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    let d = decode(&buf, &limits).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    match (s, d) {
                        (None, None) => break,
                        (Some(s), Some((v, n))) => {
                            prop_assert_eq!(s.consumed, n);
                            got.push((v, n));
                            buf.drain(..n);
                        }
                        (s, d) => prop_assert!(false, "disagree {:?} {:?}", s, d),
                    }
                }
            }
            prop_assert!(buf.is_empty());
            prop_assert_eq!(&got, &whole);
        }
    }

    #[test]
    fn random_bytes_never_panic_and_decoders_agree(input in prop::collection::vec(any::<u8>(), 0..64)) {
        agree(&input, &Limits::default())?;
        let small = Limits { max_bulk_len: 8, max_aggregate_len: 4, max_depth: 3 };
        agree(&input, &small)?;
        let mut args = Vec::new();
        let _ = parse_request(&input, &small, &mut args);
    }

    #[test]
    fn mutated_valid_input_decoders_agree(v in value(), idx in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut wire = encoded(&v);
        let i = idx.index(wire.len());
        wire[i] = byte;
        agree(&wire, &Limits::default())?;
        let small = Limits { max_bulk_len: 8, max_aggregate_len: 4, max_depth: 3 };
        agree(&wire, &small)?;
    }

    #[test]
    fn requests_round_trip(args in prop::collection::vec(bytes(), 1..8)) {
        let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let mut wire = Vec::new();
        write_command(&mut wire, &refs);
        let mut out = Vec::new();
        let n = parse_request(&wire, &Limits::default(), &mut out).unwrap().unwrap();
        prop_assert_eq!(n, wire.len());
        prop_assert_eq!(&out, &refs);
        for cut in 0..wire.len() {
            prop_assert_eq!(parse_request(&wire[..cut], &Limits::default(), &mut out), Ok(None));
        }
        // A command is also a valid reply (an array of bulk strings).
        let s = scan_reply(&wire, &Limits::default()).unwrap().unwrap();
        prop_assert_eq!(s.consumed, wire.len());
        prop_assert_eq!(s.class, ReplyClass::Value);
    }

    /// Streams of commands whose arguments have lengths of one to five digits (the
    /// decoder reads each length form its own way) decode back to the same arguments,
    /// command after command, and every prefix of the stream is "need more" at the cut.
    #[test]
    fn request_streams_with_lengths_of_every_width_round_trip(
        commands in prop::collection::vec(
            prop::collection::vec(
                (0usize..5, any::<u8>()).prop_flat_map(|(width, fill)| {
                    let range = match width {
                        0 => 0usize..10,
                        1 => 10..100,
                        2 => 100..1000,
                        3 => 1000..10_000,
                        _ => 10_000..12_000,
                    };
                    range.prop_map(move |n| vec![fill; n])
                }),
                1..6,
            ),
            1..5,
        )
    ) {
        let mut wire = Vec::new();
        let mut ends = Vec::new();
        for c in &commands {
            let refs: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
            write_command(&mut wire, &refs);
            ends.push(wire.len());
        }
        let mut pos = 0;
        let mut out = Vec::new();
        for (c, &end) in commands.iter().zip(&ends) {
            let n = parse_request(&wire[pos..], &Limits::default(), &mut out).unwrap().unwrap();
            prop_assert_eq!(pos + n, end);
            let want: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(&out, &want);
            // Cut inside this command: need more, whatever follows is not there yet.
            for cut in [pos + 1, pos + (end - pos) / 2, end - 1] {
                if cut > pos && cut < end {
                    prop_assert_eq!(
                        parse_request(&wire[pos..cut], &Limits::default(), &mut out),
                        Ok(None)
                    );
                }
            }
            pos = end;
        }
    }
}

#[test]
fn nan_round_trips_as_nan() {
    let wire = encoded(&Value::Double(f64::NAN));
    assert_eq!(wire, b",nan\r\n");
    match decode(&wire, &Limits::default()).unwrap().unwrap().0 {
        Value::Double(d) => assert!(d.is_nan()),
        other => panic!("expected NaN, got {other:?}"),
    }
}

#[test]
fn inline_requests() {
    let mut out = Vec::new();
    let l = Limits::default();
    assert_eq!(parse_request(b"PING\r\n", &l, &mut out), Ok(Some(6)));
    assert_eq!(out, vec![&b"PING"[..]]);
    assert_eq!(parse_request(b"SET  a\tb\n", &l, &mut out), Ok(Some(9)));
    assert_eq!(out, vec![&b"SET"[..], b"a", b"b"]);
    assert_eq!(parse_request(b"\r\n", &l, &mut out), Ok(Some(2)));
    assert!(out.is_empty());
    assert_eq!(parse_request(b"GET a", &l, &mut out), Ok(None));
    let e = parse_request(b"SET \"a b\"\r\n", &l, &mut out).unwrap_err();
    assert_eq!(e.offset, 4);
}

#[test]
fn owned_request_parser_agrees_with_zero_copy() {
    use resplab_proto::resp::request::parse_request_owned;
    let l = Limits::default();
    let mut wire = Vec::new();
    write_command(&mut wire, &[b"SET", b"k", b""]);
    wire.extend_from_slice(b"PING\r\n");
    let mut allocs = 0;
    let (a, n) = parse_request_owned(&wire, &l, &mut allocs)
        .unwrap()
        .unwrap();
    assert_eq!(a, vec![b"SET".to_vec(), b"k".to_vec(), vec![]]);
    assert_eq!(allocs, 3);
    let (b, m) = parse_request_owned(&wire[n..], &l, &mut allocs)
        .unwrap()
        .unwrap();
    assert_eq!(b, vec![b"PING".to_vec()]);
    assert_eq!(n + m, wire.len());
    assert_eq!(
        parse_request_owned(&wire[..n - 1], &l, &mut allocs),
        Ok(None)
    );
    assert!(parse_request_owned(b"*1\r\n:1\r\n", &l, &mut allocs).is_err());
}
