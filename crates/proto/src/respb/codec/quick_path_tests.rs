//! The encoder's skipped checks and the decoder's shaped paths, held against the general
//! code they stand in for.

use super::decode::{shape_of, Shape};
use super::encode::{encode_native, is_verbatim};
use super::*;
use crate::resp::Limits;
use crate::respb::table;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Where the encoder skips its check (`is_verbatim`), the check would have passed.
    #[test]
    fn verbatim_frames_pass_the_check(
        cmd in prop::sample::select(table::CORE.iter().chain(table::MODULES.iter()).collect::<Vec<_>>()),
        rest in prop::collection::vec(prop_oneof![
            prop::collection::vec(any::<u8>(), 0..6),
            prop::sample::select(vec!["NX", "XX", "EX", "10", "GET", "KEEPTTL", "-1", "+5"])
                .prop_map(|s| s.as_bytes().to_vec()),
        ], 0..6),
    ) {
        let mut args: Vec<&[u8]> = vec![cmd.name.as_bytes()];
        args.extend(rest.iter().map(Vec::as_slice));
        let mut out = Vec::new();
        if encode_native(&mut out, 0, cmd, &args[1..]).is_some() && is_verbatim(cmd, &out) {
            prop_assert!(Encoder::new().verify(&out, &args), "{} {:?}", cmd.name, rest);
        }
    }
}

/// The check's buffers survive from call to call: the second encoding of a command
/// that is checked reuses the first one's field vector.
#[test]
fn the_encoder_keeps_its_buffers() {
    let mut enc = Encoder::new();
    let mut out = Vec::new();
    enc.encode(&mut out, 0, &[b"LRANGE", b"l", b"0", b"9"]);
    assert!(enc.fields.capacity() >= 3, "{}", enc.fields.capacity());
    assert!(enc.ends.capacity() >= 4 && enc.bytes.capacity() > 0);
    let fields = enc.fields.as_ptr();
    let bytes = enc.bytes.as_ptr();
    enc.encode(&mut out, 0, &[b"LRANGE", b"l", b"1", b"8"]);
    assert_eq!(enc.fields.as_ptr(), fields);
    assert_eq!(enc.bytes.as_ptr(), bytes);
    assert_eq!(enc.names.len(), 1);
}

#[test]
fn common_commands_skip_the_check_only_without_options() {
    let check = |args: &[&[u8]]| {
        let cmd = table::by_name(args[0]).unwrap();
        let mut out = Vec::new();
        encode_native(&mut out, 0, cmd, &args[1..]).unwrap();
        is_verbatim(cmd, &out)
    };
    assert!(check(&[b"GET", b"k"]));
    assert!(check(&[b"SET", b"k", b"v"]));
    assert!(check(&[b"MGET", b"a", b"b", b"c"]));
    assert!(check(&[b"DEL", b"a"]));
    assert!(!check(&[b"SET", b"k", b"v", b"EX", b"10"]));
    assert!(!check(&[b"INCRBY", b"k", b"5"]));
    assert!(!check(&[b"LRANGE", b"l", b"0", b"9"]));
}

fn frame_of(args: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    assert!(matches!(
        encode_command(&mut out, 7, args),
        Encoding::Native(_)
    ));
    out
}

/// The shaped decoders must give exactly what the table interpreter gives (length,
/// fields, or the error with its offset) on every prefix and every one-byte
/// mutation of frames of each shape, under default and tight limits.
#[test]
fn quick_and_table_paths_agree_exactly() {
    let seeds = [
        frame_of(&[b"GET", b"k00001"]),
        frame_of(&[b"GET", b""]),
        frame_of(&[b"HGET", b"h", b"field"]),
        frame_of(&[b"APPEND", b"k", b"value"]),
        frame_of(&[b"SET", b"k", b"v"]),
        frame_of(&[b"SET", b"key", b"value", b"NX", b"EX", b"10"]),
        frame_of(&[b"MGET", b"a", b"bb", b"ccc"]),
        frame_of(&[b"DEL", b"a"]),
        frame_of(&[b"HMGET", b"h", b"f1", b"f2"]),
        frame_of(&[b"JSON.GET", b"k", b"$.a"]),
        frame_of(&[b"BF.ADD", b"bloom", b"k1"]),
        frame_of(&[b"FT.SEARCH", b"idx", b"@name:user1"]),
    ];
    for s in &seeds[..9] {
        let op = u16::from_be_bytes([s[0], s[1]]);
        let cmd = table::core_by_op(op).unwrap();
        assert_ne!(shape_of(cmd.layout), Shape::Generic, "{}", cmd.name);
    }
    let limit_sets = [
        Limits::default(),
        Limits {
            max_bulk_len: 2,
            max_aggregate_len: 1,
            max_depth: 1,
        },
    ];
    let mutations = [0u8, 1, 0x20, 0x7f, 0xff];
    let mut checked = 0usize;
    for limits in &limit_sets {
        let dec = Decoder::new(*limits);
        for seed in &seeds {
            let mut inputs: Vec<Vec<u8>> = (0..=seed.len()).map(|k| seed[..k].to_vec()).collect();
            for i in 0..seed.len() {
                for &m in &mutations {
                    let mut v = seed.clone();
                    v[i] = m;
                    inputs.push(v);
                }
            }
            for input in &inputs {
                let mut quick = Frame::default();
                let mut table = Frame::default();
                let q = dec.decode(input, &mut quick);
                let t = decode_frame(input, limits, &mut table);
                assert_eq!(q, t, "input {input:02x?}");
                if let Ok(Some(_)) = q {
                    assert_eq!(quick, table, "input {input:02x?}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}
