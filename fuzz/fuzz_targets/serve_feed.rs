//! Fuzzes the request path of `resplab serve`: arbitrary bytes, fed to one connection in
//! pieces cut where the input says, must never panic, whatever commands they spell.
#![no_main]

use libfuzzer_sys::fuzz_target;
use resplab_serve::{db::Db, Config, Conn, Knobs};

fuzz_target!(|data: &[u8]| {
    let db = Db::default();
    let knobs = Knobs::from_config(&Config::default());
    let mut conn = Conn::new(1);
    let mut out = Vec::new();
    // The first byte chooses the piece size, so requests split at every kind of place.
    let (step, rest) = match data.split_first() {
        Some((s, r)) => (usize::from(*s).max(1), r),
        None => return,
    };
    for piece in rest.chunks(step) {
        if conn.feed(&db, &knobs, piece, &mut out) == resplab_serve::Feed::Close {
            break;
        }
        out.clear();
    }
});
