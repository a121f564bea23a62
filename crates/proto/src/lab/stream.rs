//! A request stream read piece by piece, for `proto convert`: the caller feeds the bytes
//! as they arrive and is handed every complete request (its arguments and RESPB mux id);
//! only the unfinished request is kept between pieces, so memory stays bounded by the
//! largest request rather than the input. Byte offsets in errors count from the start of
//! the stream, and what was handed out before a malformed request stays handed out.

use super::{LabError, Wire};
use crate::resp::request::parse_request;
use crate::resp::Limits;
use crate::respb::codec::{frame_to_args, Decoder, Frame, FrameKind};

/// What a stream hands every complete request to: its arguments and its mux id.
pub type EachRequest<'a, E> = dyn FnMut(&[&[u8]], u16) -> Result<(), E> + 'a;

/// The requests of one RESP or RESPB stream, fed in pieces.
#[derive(Debug)]
pub struct RequestStream {
    wire: Wire,
    /// The stream's name in errors (a file name, `stdin`).
    name: String,
    limits: Limits,
    decoder: Decoder,
    /// The unfinished request.
    buf: Vec<u8>,
    /// Stream offset of `buf[0]`.
    base: usize,
    count: usize,
    owned: Vec<Vec<u8>>,
}

impl RequestStream {
    /// An empty stream of `wire` requests, called `name` in errors.
    pub fn new(wire: Wire, name: &str) -> RequestStream {
        let limits = Limits::default();
        RequestStream {
            wire,
            name: name.to_string(),
            limits,
            decoder: Decoder::new(limits),
            buf: Vec::new(),
            base: 0,
            count: 0,
            owned: Vec::new(),
        }
    }

    /// Appends `bytes` and calls `each(arguments, mux)` for every request they complete
    /// (RESP requests have mux 0; empty RESP requests and RESPB frames that are not
    /// commands are skipped).
    ///
    /// # Errors
    /// A malformed request or passthrough payload (as a [`LabError`] with the stream's
    /// name and byte offset), or the first error `each` returns.
    pub fn feed<E: From<LabError>>(
        &mut self,
        bytes: &[u8],
        each: &mut EachRequest<'_, E>,
    ) -> Result<(), E> {
        self.buf.extend_from_slice(bytes);
        let mut pos = 0usize;
        let result = match self.wire {
            Wire::Resp => self.feed_resp(&mut pos, each),
            Wire::Respb => self.feed_respb(&mut pos, each),
        };
        self.buf.drain(..pos);
        self.base += pos;
        result
    }

    /// The number of requests handed out, once the input has ended.
    ///
    /// # Errors
    /// The stream ends inside a request.
    pub fn finish(self) -> Result<usize, LabError> {
        if self.buf.is_empty() {
            return Ok(self.count);
        }
        let (name, base) = (&self.name, self.base);
        Err(LabError(match self.wire {
            Wire::Resp => format!("{name}: truncated RESP request at byte {base}"),
            Wire::Respb => format!("{name}: truncated RESPB frame at byte {base}"),
        }))
    }

    fn feed_resp<E: From<LabError>>(
        &mut self,
        pos: &mut usize,
        each: &mut EachRequest<'_, E>,
    ) -> Result<(), E> {
        let mut args = Vec::new();
        while let Some(rest) = self.buf.get(*pos..).filter(|r| !r.is_empty()) {
            match parse_request(rest, &self.limits, &mut args) {
                Ok(Some(k)) => {
                    if !args.is_empty() {
                        each(&args, 0)?;
                        self.count += 1;
                    }
                    *pos += k;
                }
                Ok(None) => break,
                Err(e) => {
                    let e = e.shifted(self.base + *pos);
                    return Err(LabError(format!("{}: malformed RESP: {e}", self.name)).into());
                }
            }
        }
        Ok(())
    }

    fn feed_respb<E: From<LabError>>(
        &mut self,
        pos: &mut usize,
        each: &mut EachRequest<'_, E>,
    ) -> Result<(), E> {
        let mut frame = Frame::default();
        while let Some(rest) = self.buf.get(*pos..).filter(|r| !r.is_empty()) {
            match self.decoder.decode(rest, &mut frame) {
                Ok(Some(k)) => {
                    if matches!(frame.kind, FrameKind::Command(_) | FrameKind::Passthrough) {
                        let at = self.base + *pos;
                        frame_to_args(&frame, &self.limits, &mut self.owned).map_err(|e| {
                            LabError(format!(
                                "{}: bad passthrough payload in the frame at byte {at}: {}",
                                self.name,
                                e.shifted(at + 8)
                            ))
                        })?;
                        let refs: Vec<&[u8]> = self.owned.iter().map(Vec::as_slice).collect();
                        each(&refs, frame.mux)?;
                        self.count += 1;
                    }
                    *pos += k;
                }
                Ok(None) => break,
                Err(e) => {
                    let e = e.shifted(self.base + *pos);
                    return Err(LabError(format!("{}: malformed RESPB: {e}", self.name)).into());
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(wire: Wire, pieces: &[&[u8]]) -> Result<Vec<Vec<Vec<u8>>>, LabError> {
        let mut stream = RequestStream::new(wire, "in");
        let mut out = Vec::new();
        for p in pieces {
            stream.feed(p, &mut |args: &[&[u8]], _| -> Result<(), LabError> {
                out.push(args.iter().map(|a| a.to_vec()).collect());
                Ok(())
            })?;
        }
        stream.finish()?;
        Ok(out)
    }

    #[test]
    fn a_request_split_across_pieces_is_handed_out_once_whole() {
        let got = collect(
            Wire::Resp,
            &[b"*2\r\n$3\r\nGET\r\n$1", b"\r\nk\r\n*1\r\n$4\r\nPING\r\n"],
        )
        .unwrap();
        assert_eq!(
            got,
            vec![vec![b"GET".to_vec(), b"k".to_vec()], vec![b"PING".to_vec()]]
        );
    }

    #[test]
    fn errors_count_bytes_from_the_start_of_the_stream() {
        let e = collect(Wire::Resp, &[b"*1\r\n$4\r\nPING\r\n", b"*1\r\n$4\r\nPI"]).unwrap_err();
        assert_eq!(e.0, "in: truncated RESP request at byte 14");
        let e = collect(Wire::Resp, &[b"*1\r\n$4\r\nPING\r\n", b"*x\r\n"]).unwrap_err();
        assert!(e.0.starts_with("in: malformed RESP: "), "{}", e.0);
        assert!(
            e.0.ends_with("at byte 15: expected a decimal digit, found byte 0x78 ('x')"),
            "{}",
            e.0
        );
    }
}
