//! The RESPB side of a connection: frames in, reply frames out, each reply on its
//! request's mux id.
//!
//! A frame is decoded with `resplab-proto`'s RESPB decoder and turned back into the RESP
//! arguments it stands for, so every command runs through the same [`commands::execute`]
//! as on the RESP port, in the RESP3 dialect (the RESPB reply encoding has a form for
//! every RESP3 type). The RESP3 reply is then decoded and re-encoded as a RESPB reply
//! frame carrying the request's mux id. That costs a copy per reply, which the
//! end-to-end protocol figures include; it keeps one implementation of every command.
//!
//! The four-byte handshake a client may send first (`D3 C1 01 00`) is consumed when
//! present. `MUX_CREATE` and `MUX_CLOSE` frames are accepted without a reply: any mux id
//! may carry commands, and replies always name the id their request came on.

use crate::commands::{self, After};
use crate::db::Db;
use crate::{Conn, Fate, Feed, Knobs, GARBAGE};
use resplab_proto::resp::value::{decode, Value};
use resplab_proto::resp::Limits;
use resplab_proto::respb::codec::{frame_to_args, Decoder, Frame, FrameKind};
use resplab_proto::respb::reply::write_reply;
use resplab_proto::respb::HANDSHAKE;

/// Limits of requests on the RESPB port (as on the RESP port).
pub(crate) const LIMITS: Limits = Limits {
    max_bulk_len: 512 * 1024 * 1024,
    max_aggregate_len: 1 << 20,
    max_depth: 8,
};

/// Per-connection RESPB state.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RespbState {
    /// The first four bytes have been looked at (a handshake there was consumed).
    pub started: bool,
}

impl Conn {
    /// Runs every complete RESPB frame in `buf`, appending reply frames to `out`;
    /// returns the bytes consumed and what the transport should do.
    pub(crate) fn feed_respb(
        &mut self,
        db: &Db,
        knobs: &Knobs,
        buf: &[u8],
        out: &mut Vec<u8>,
    ) -> (usize, Feed) {
        let mut at = 0;
        if !self.respb.is_some_and(|s| s.started) {
            if buf.len() < HANDSHAKE.len() && HANDSHAKE.starts_with(buf) {
                return (0, Feed::Open);
            }
            if buf.starts_with(&HANDSHAKE) {
                at = HANDSHAKE.len();
            }
            self.respb = Some(RespbState { started: true });
        }
        self.session.resp3 = true;
        let decoder = decoder();
        let mut frame = Frame::default();
        let mut args: Vec<Vec<u8>> = Vec::new();
        let mut reply = Vec::new();
        loop {
            let rest = buf.get(at..).unwrap_or_default();
            let used = match decoder.decode(rest, &mut frame) {
                Ok(None) => return (at, Feed::Open),
                Ok(Some(n)) => n,
                Err(e) => {
                    // Bytes that do not decode have no trustworthy mux id: the error
                    // goes on the default channel, mux 0.
                    let text = format!("ERR Protocol error: {e}");
                    write_reply(out, 0, &Value::SimpleError(text.into_bytes()));
                    return (at, Feed::Close);
                }
            };
            at += used;
            if matches!(frame.kind, FrameKind::MuxCreate(_) | FrameKind::MuxClose(_)) {
                continue;
            }
            let mux = frame.mux;
            if let Err(e) = frame_to_args(&frame, &LIMITS, &mut args) {
                let text = format!("ERR Protocol error: {e}");
                write_reply(out, mux, &Value::SimpleError(text.into_bytes()));
                return (at, Feed::Close);
            }
            let fate = self.fate(knobs);
            if fate == Fate::Drop {
                return (at, Feed::Close);
            }
            let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            reply.clear();
            let after = commands::execute(db, knobs, &mut self.session, &refs, &mut reply);
            self.session.resp3 = true;
            if fate == Fate::Garbage {
                out.extend_from_slice(GARBAGE);
            } else {
                reencode(&reply, mux, out);
            }
            if after == After::Close {
                return (at, Feed::Close);
            }
        }
    }
}

/// The RESPB decoder: an immutable opcode table, built once rather than per read.
fn decoder() -> &'static Decoder {
    static DECODER: std::sync::OnceLock<Decoder> = std::sync::OnceLock::new();
    DECODER.get_or_init(|| Decoder::new(LIMITS))
}

/// Re-encodes the RESP3 replies in `resp` as RESPB reply frames on `mux`.
fn reencode(resp: &[u8], mux: u16, out: &mut Vec<u8>) {
    let limits = Limits::default();
    let mut at = 0;
    while at < resp.len() {
        match decode(resp.get(at..).unwrap_or_default(), &limits) {
            Ok(Some((v, n))) => {
                write_reply(out, mux, &v);
                at += n;
            }
            // The server's own replies are whole and well formed; should one not be,
            // the client still gets an answer on its mux id.
            _ => {
                let text = b"ERR internal: reply could not be encoded as RESPB".to_vec();
                write_reply(out, mux, &Value::SimpleError(text));
                return;
            }
        }
    }
}
