//! Fuzzes the RESPB request path of `resplab serve`: arbitrary bytes fed to one RESPB
//! connection in pieces cut where the input says must never panic, and every reply the
//! server writes must decode as a RESPB reply frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use resplab_proto::resp::Limits;
use resplab_proto::respb::reply::decode_reply;
use resplab_serve::{db::Db, Config, Conn, Feed, Knobs};

fuzz_target!(|data: &[u8]| {
    let db = Db::default();
    let knobs = Knobs::from_config(&Config::default());
    let mut conn = Conn::new_respb(1);
    let mut out = Vec::new();
    // The first byte chooses the piece size, so frames split at every kind of place.
    let (step, rest) = match data.split_first() {
        Some((s, r)) => (usize::from(*s).max(1), r),
        None => return,
    };
    for piece in rest.chunks(step) {
        let fed = conn.feed(&db, &knobs, piece, &mut out);
        let mut at = 0;
        while at < out.len() {
            match decode_reply(&out[at..], &Limits::default()) {
                Ok(Some((_, _, n))) => at += n,
                other => panic!("the server wrote a reply that does not decode: {other:?}"),
            }
        }
        out.clear();
        if fed == Feed::Close {
            break;
        }
    }
});
