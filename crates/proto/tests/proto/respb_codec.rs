//! RESPB codec behaviour beyond the per-opcode bytes: round trips of arbitrary arguments
//! for every command, passthrough fallback, large and binary values, mux ids, control
//! frames, malformed and truncated frames, and the reply encoding.

use crate::common::reply_value;
use proptest::prelude::*;
use resplab_proto::resp::Limits;
use resplab_proto::respb::codec::{
    decode_frame, encode_command, frame_to_args, write_mux_close, write_mux_create,
    write_passthrough_text, Decoder, Encoding, Frame, FrameKind,
};
use resplab_proto::respb::reply::{decode_reply, write_reply};
use resplab_proto::respb::table::{CORE, MODULES};

fn round_trip(mux: u16, args: &[Vec<u8>]) -> (Encoding, Vec<u8>, Vec<Vec<u8>>) {
    let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    let mut out = Vec::new();
    let enc = encode_command(&mut out, mux, &refs);
    let limits = Limits::default();
    let mut frame = Frame::default();
    let n = decode_frame(&out, &limits, &mut frame).unwrap().unwrap();
    assert_eq!(n, out.len());
    assert_eq!(frame.mux, mux);
    let mut back = Vec::new();
    frame_to_args(&frame, &limits, &mut back).unwrap();
    (enc, out, back)
}

fn same_args(a: &[Vec<u8>], b: &[Vec<u8>]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).enumerate().all(|(i, (x, y))| {
            if i == 0 {
                x.eq_ignore_ascii_case(y)
            } else {
                x == y
            }
        })
}

fn arg() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..12),
        "-?[0-9]{1,4}".prop_map(String::into_bytes),
        "[0-9]\\.[0-9]{1,2}".prop_map(String::into_bytes),
        prop::sample::select(vec![
            "NX",
            "XX",
            "EX",
            "PX",
            "GT",
            "LT",
            "WITHSCORES",
            "LIMIT",
            "COUNT",
            "MATCH",
            "FIELDS",
            "LEFT",
            "RIGHT",
            "STREAMS",
            "ITEMS",
            "AUTH",
            "inf",
            "-inf",
            "0",
            "1",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
    ]
}

fn command_names() -> Vec<&'static str> {
    CORE.iter().chain(MODULES.iter()).map(|c| c.name).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, .. ProptestConfig::default() })]

    #[test]
    fn resp_respb_resp_keeps_every_argument(
        name in prop::sample::select(command_names()),
        lower in any::<bool>(),
        rest in prop::collection::vec(arg(), 0..7),
        mux in any::<u16>(),
    ) {
        let mut args = vec![if lower { name.to_ascii_lowercase() } else { name.to_string() }.into_bytes()];
        args.extend(rest);
        let (_, _, back) = round_trip(mux, &args);
        prop_assert!(same_args(&args, &back), "{:?} -> {:?}", args, back);
    }

    #[test]
    fn decoder_never_panics_and_reports_consumed(data in prop::collection::vec(any::<u8>(), 0..64)) {
        let limits = Limits { max_bulk_len: 32, max_aggregate_len: 8, max_depth: 4 };
        let mut frame = Frame::default();
        if let Ok(Some(n)) = decode_frame(&data, &limits, &mut frame) {
            prop_assert!(n <= data.len());
            let mut back = Vec::new();
            let _ = frame_to_args(&frame, &limits, &mut back);
        }
        let _ = decode_reply(&data, &limits);
    }

    #[test]
    fn stream_of_frames_split_anywhere(cmds in prop::collection::vec(
        (prop::sample::select(vec!["GET", "SET", "MGET", "HSET", "ZADD", "PING", "NOSUCH"]),
         prop::collection::vec(arg(), 0..4)), 1..5)) {
        let mut wire = Vec::new();
        let mut all = Vec::new();
        for (name, rest) in &cmds {
            let mut args = vec![name.as_bytes().to_vec()];
            args.extend(rest.iter().cloned());
            let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            encode_command(&mut wire, 7, &refs);
            all.push(args);
        }
        let dec = Decoder::new(Limits::default());
        for cut in 0..=wire.len() {
            let mut pos = 0;
            let mut got = Vec::new();
            let mut frame = Frame::default();
            // First the prefix, then the whole stream, as two reads would deliver it.
            for end in [cut, wire.len()] {
                while let Some(n) = dec.decode(&wire[pos..end], &mut frame).unwrap() {
                    let mut back = Vec::new();
                    frame_to_args(&frame, &Limits::default(), &mut back).unwrap();
                    got.push(back);
                    pos += n;
                }
            }
            prop_assert_eq!(pos, wire.len());
            prop_assert_eq!(got.len(), all.len());
            for (a, b) in all.iter().zip(&got) {
                prop_assert!(same_args(a, b));
            }
        }
    }

    #[test]
    fn replies_round_trip(v in reply_value(), mux in any::<u16>()) {
        let mut out = Vec::new();
        write_reply(&mut out, mux, &v);
        let (m, back, n) = decode_reply(&out, &Limits::default()).unwrap().unwrap();
        prop_assert_eq!(m, mux);
        prop_assert_eq!(n, out.len());
        prop_assert_eq!(back, v);
        for cut in 0..out.len() {
            prop_assert_eq!(decode_reply(&out[..cut], &Limits::default()), Ok(None));
        }
    }
}

fn args(line: &[&[u8]]) -> Vec<Vec<u8>> {
    line.iter().map(|a| a.to_vec()).collect()
}

#[test]
fn seventy_kilobyte_value_uses_four_byte_length() {
    let big = vec![b'x'; 70 * 1024];
    let (enc, out, back) = round_trip(0, &args(&[b"SET", b"k", &big]));
    assert!(matches!(enc, Encoding::Native(_)));
    assert_eq!(&out[7..11], &(70u32 * 1024).to_be_bytes());
    assert_eq!(back[2], big);
}

#[test]
fn seventy_kilobyte_key_or_element_goes_through_passthrough() {
    let big = vec![b'k'; 70 * 1024];
    for cmd in [&args(&[b"GET", &big]), &args(&[b"LPUSH", b"l", &big])] {
        let (enc, out, back) = round_trip(3, cmd);
        assert_eq!(enc, Encoding::Passthrough);
        assert_eq!(&out[..4], &[0xFF, 0xFF, 0, 3]);
        assert_eq!(&back, cmd);
    }
}

#[test]
fn empty_and_binary_arguments() {
    let bin: Vec<u8> = (0..=255u8).collect();
    let cmd = args(&[b"SET", b"", &bin]);
    let (enc, _, back) = round_trip(0, &cmd);
    assert!(matches!(enc, Encoding::Native(_)));
    assert_eq!(back, cmd);
    let cmd = args(&[b"MGET", b"\r\n", b"", b"\x00\xff"]);
    assert_eq!(round_trip(0, &cmd).2, cmd);
}

#[test]
fn non_zero_mux_ids_are_kept() {
    for mux in [1u16, 0x1234, 0xFFFF] {
        let (_, out, _) = round_trip(mux, &args(&[b"GET", b"k"]));
        assert_eq!(&out[2..4], &mux.to_be_bytes());
        let (_, out, _) = round_trip(mux, &args(&[b"JSON.GET", b"k"]));
        assert_eq!(&out[2..4], &mux.to_be_bytes());
    }
}

#[test]
fn resolutions_fall_back_to_passthrough_rather_than_lose_arguments() {
    for cmd in [
        args(&[b"SET", b"k", b"v", b"EX", b"10", b"NX"]), // option order the layout does not keep
        args(&[b"INCRBY", b"k", b"+5"]),                  // non-canonical integer
        args(&[b"INCRBY", b"k", b"007"]),
        args(&[b"ZADD", b"z", b"1.50", b"m"]), // non-canonical double
        args(&[b"ZRANGEBYSCORE", b"z", b"(1", b"+inf"]), // exclusive and infinite bounds
        args(&[b"FT.SEARCH", b"idx", b"q", b"LIMIT", b"0", b"10"]), // FT options
        args(&[b"LPOP", b"l", b"65535"]),      // count equal to the absent marker
        args(&[b"BLPOP", b"l", b"0.5"]),       // float timeout
        args(&[b"ZRANDMEMBER", b"z", b"-3"]),  // negative count
        args(&[b"set", b"k", b"v", b"ex", b"10"]), // lower-case options
        args(&[b"NOSUCHCOMMAND", b"a"]),
        args(&[b"GET"]), // wrong arity
    ] {
        let (enc, _, back) = round_trip(0, &cmd);
        assert_eq!(enc, Encoding::Passthrough, "{cmd:?}");
        assert_eq!(back, cmd);
    }
    // EXPIRE always carries its flags byte; KEYS has no count (the layout tables win over
    // the converter's I2 and I3 deviations).
    let (_, out, _) = round_trip(0, &args(&[b"EXPIRE", b"k", b"10"]));
    assert_eq!(out.len(), 4 + 3 + 8 + 1);
    let (_, out, _) = round_trip(0, &args(&[b"KEYS", b"*"]));
    assert_eq!(out, [0x02, 0xCC, 0, 0, 0, 1, b'*']);
}

#[test]
fn sizes_match_the_digest() {
    let size = |a: &[&[u8]]| round_trip(0, &args(a)).1.len();
    assert_eq!(size(&[b"GET", b"mykey"]), 11);
    assert_eq!(size(&[b"SET", b"foo", b"hello"]), 27);
    assert_eq!(size(&[b"SET", b"mykey", b"hello"]), 29);
    assert_eq!(
        size(&[b"JSON.SET", b"profile", b".name", b"\"John Doe\""]),
        39
    );
    assert_eq!(size(&[b"ZADD", b"myset", b"1.5", b"foo"]), 27);
    assert_eq!(size(&[b"MGET", b"k1", b"k2", b"k3"]), 18);
    assert_eq!(size(&[b"MSET", b"k1", b"1", b"k2", b"2", b"k3", b"3"]), 33);
    assert_eq!(size(&[b"SADD", b"myset", b"x", b"y", b"z"]), 22);
    // Passthrough of SET foo bar: 8-byte header + 31 bytes of RESP.
    let mut out = Vec::new();
    write_passthrough_text(
        &mut out,
        0,
        b"*3\r\n$3\r\nSET\r\n$3\r\nfoo\r\n$3\r\nbar\r\n",
    );
    assert_eq!(out.len(), 39);
    assert_eq!(&out[4..8], &[0, 0, 0, 0x1F]);
}

#[test]
fn mux_control_frames() {
    let mut out = Vec::new();
    write_mux_create(&mut out, 0, 9);
    write_mux_close(&mut out, 0, 9);
    assert_eq!(out, [0xFF, 0x00, 0, 0, 0, 9, 0xFF, 0x01, 0, 0, 0, 9]);
    let mut frame = Frame::default();
    let limits = Limits::default();
    assert_eq!(decode_frame(&out, &limits, &mut frame), Ok(Some(6)));
    assert_eq!(frame.kind, FrameKind::MuxCreate(9));
    assert_eq!(decode_frame(&out[6..], &limits, &mut frame), Ok(Some(6)));
    assert_eq!(frame.kind, FrameKind::MuxClose(9));
    let mut back = Vec::new();
    assert!(frame_to_args(&frame, &limits, &mut back).is_err());
}

#[test]
fn malformed_frames_are_errors_with_offsets() {
    let limits = Limits::default();
    let mut frame = Frame::default();
    // Unknown core opcode.
    let e = decode_frame(&[0x04, 0x00, 0, 0], &limits, &mut frame).unwrap_err();
    assert_eq!(e.offset, 0);
    assert!(e.to_string().contains("0x0400"), "{e}");
    // A response opcode is not a request.
    assert!(decode_frame(&[0x80, 0x00, 0, 0], &limits, &mut frame).is_err());
    // Unknown module command.
    let e = decode_frame(&[0xF0, 0, 0, 0, 0, 9, 0, 0], &limits, &mut frame).unwrap_err();
    assert_eq!(e.offset, 4);
    // The "absent" marker in a required key.
    let e = decode_frame(&[0, 0, 0, 0, 0xFF, 0xFF], &limits, &mut frame).unwrap_err();
    assert_eq!(e.offset, 4);
    // Undefined flag bits in EXPIRE.
    let mut f = vec![0x02, 0xC3, 0, 0, 0, 1, b'k'];
    f.extend_from_slice(&10i64.to_be_bytes());
    f.push(0x80);
    let e = decode_frame(&f, &limits, &mut frame).unwrap_err();
    assert_eq!(e.offset, 15);
    // Enum index out of range (LINSERT).
    let f = [0x00, 0x4A, 0, 0, 0, 1, b'l', 7];
    assert_eq!(decode_frame(&f, &limits, &mut frame).unwrap_err().offset, 7);
    // A value longer than the limit is refused before anything is read.
    let small = Limits {
        max_bulk_len: 4,
        ..Limits::default()
    };
    let f = [0x00, 0x01, 0, 0, 0, 1, b'k', 0, 0, 0, 5];
    assert_eq!(decode_frame(&f, &small, &mut frame).unwrap_err().offset, 7);
    // Passthrough whose payload is not one request is rejected on conversion.
    let mut out = Vec::new();
    write_passthrough_text(&mut out, 0, b"*1\r\n$4\r\nPING\r\nextra");
    decode_frame(&out, &limits, &mut frame).unwrap();
    let mut back = Vec::new();
    assert!(frame_to_args(&frame, &limits, &mut back).is_err());
}

#[test]
fn truncated_frames_need_more() {
    let limits = Limits::default();
    let mut frame = Frame::default();
    let (_, out, _) = round_trip(0, &args(&[b"HSET", b"h", b"f", b"v", b"g", b"w"]));
    for cut in 0..out.len() {
        assert_eq!(decode_frame(&out[..cut], &limits, &mut frame), Ok(None));
    }
}
