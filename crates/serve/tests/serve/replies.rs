//! Every command's reply, byte for byte: `fixtures/replies.txt` holds requests (one a
//! line, arguments split on spaces) that walk each command through its arities, options,
//! wrong types and both dialects; `fixtures/replies.golden` holds the bytes the server
//! answered, recorded from the server as it was before its command table was split into
//! families (`RESPLAB_RECORD_REPLIES=PATH` writes the transcript anew). Only replies
//! that do not depend on the clock, the process or hash order are asked for.

use resplab_serve::{db::Db, Config, Conn, Feed, Knobs};
use std::fmt::Write as _;

const REQUESTS: &str = include_str!("../fixtures/replies.txt");
const GOLDEN: &str = include_str!("../fixtures/replies.golden");

/// Bytes as printable text: backslash escapes for CR, LF, backslash and anything
/// outside printable ASCII.
fn escape(bytes: &[u8]) -> String {
    let mut s = String::new();
    for &b in bytes {
        match b {
            b'\r' => s.push_str("\\r"),
            b'\n' => s.push_str("\\n"),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(b as char),
            _ => {
                let _ = write!(s, "\\x{b:02x}");
            }
        }
    }
    s
}

/// The transcript of running every request of `requests` on one connection.
fn transcript(requests: &str) -> String {
    let (db, knobs) = (Db::default(), Knobs::from_config(&Config::default()));
    let mut conn = Conn::new(7);
    let mut text = String::new();
    let v = env!("CARGO_PKG_VERSION");
    let version = format!("${}\\r\\n{v}", v.len());
    for line in requests.lines() {
        let args: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
        let mut req = Vec::new();
        resplab_proto::resp::encode::write_command(&mut req, &args);
        let mut out = Vec::new();
        let fed = conn.feed(&db, &knobs, &req, &mut out);
        let close = if fed == Feed::Close { " (close)" } else { "" };
        // The version is the package's, not part of what is pinned here.
        let reply = escape(&out).replace(&version, "{version}");
        let _ = writeln!(text, "> {line}\n< {reply}{close}");
    }
    text
}

#[test]
fn every_reply_is_the_recorded_one() {
    let got = transcript(REQUESTS);
    if let Ok(path) = std::env::var("RESPLAB_RECORD_REPLIES") {
        std::fs::write(path, &got).expect("transcript written");
    }
    for (i, (g, want)) in got.lines().zip(GOLDEN.lines()).enumerate() {
        assert_eq!(g, want, "transcript line {}", i + 1);
    }
    assert_eq!(
        got.lines().count(),
        GOLDEN.lines().count(),
        "transcript length"
    );
}
