//! Fuzzes the RESP reply scanner, the full decoder and the request parser on arbitrary
//! bytes: none may panic, and the scanner and the decoder must agree on every input
//! (both complete with the same length, both incomplete, or both reject it).
#![no_main]

use libfuzzer_sys::fuzz_target;
use resplab_proto::resp::request::parse_request;
use resplab_proto::resp::scan::scan_reply;
use resplab_proto::resp::value::decode;
use resplab_proto::resp::Limits;

fn check(data: &[u8], limits: &Limits) {
    let scanned = scan_reply(data, limits);
    let decoded = decode(data, limits);
    match (&scanned, &decoded) {
        (Ok(Some(s)), Ok(Some((_, n)))) => assert_eq!(s.consumed, *n),
        (Ok(None), Ok(None)) | (Err(_), Err(_)) => {}
        _ => panic!("scanner {scanned:?} and decoder {decoded:?} disagree"),
    }
    let mut args = Vec::new();
    if let Ok(Some(n)) = parse_request(data, limits, &mut args) {
        assert!(n <= data.len());
    }
}

fuzz_target!(|data: &[u8]| {
    check(data, &Limits::default());
    // Tight limits exercise the limit paths on short inputs.
    check(
        data,
        &Limits {
            max_bulk_len: 16,
            max_aggregate_len: 4,
            max_depth: 3,
        },
    );
});
