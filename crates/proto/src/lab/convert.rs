//! `proto convert`: a request stream rewritten from one wire format to the other, read
//! and written in [`CHUNK`]-sized pieces through [`RequestStream`], so memory stays
//! bounded by the largest request. What converted before a malformed request has been
//! written when the error is returned; a reader that closed the output (`| head`) ends
//! the writing quietly, not the conversion.

use super::stream::RequestStream;
use super::{LabError, Wire};
use crate::resp::encode::write_command;
use crate::respb::codec::encode_command;
use std::io::{ErrorKind, Read, Write};

/// Bytes read from the input at a time; also the output flush threshold.
pub const CHUNK: usize = 64 * 1024;

/// Why a conversion stopped.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("cannot read {name}: {source}")]
    Read {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the converted output: {0}")]
    Write(#[source] std::io::Error),
    #[error(transparent)]
    Input(#[from] LabError),
}

/// Converts every request of `input` (in `from`, called `name` in errors) into `to` on
/// `output`; RESPB frames carry `mux` when given, else the input's mux id (0 from RESP).
/// Returns how many requests were converted.
///
/// # Errors
/// The input cannot be read or is malformed (with its byte offset), or the output
/// cannot be written.
pub fn convert(
    input: &mut dyn Read,
    output: &mut dyn Write,
    (from, to): (Wire, Wire),
    mux: Option<u16>,
    name: &str,
) -> Result<usize, ConvertError> {
    let mut sink = Sink {
        out: output,
        buf: Vec::with_capacity(2 * CHUNK),
        closed: false,
    };
    let mut stream = RequestStream::new(from, name);
    let mut tmp = vec![0u8; CHUNK];
    let result = loop {
        let n = match read_some(input, &mut tmp) {
            Ok(n) => n,
            Err(source) => {
                let name = name.to_string();
                break Err(ConvertError::Read { name, source });
            }
        };
        if n == 0 {
            break stream.finish().map_err(ConvertError::from);
        }
        let fed = stream.feed(tmp.get(..n).unwrap_or(&[]), &mut |args, m| {
            match to {
                Wire::Resp => write_command(&mut sink.buf, args),
                Wire::Respb => {
                    encode_command(&mut sink.buf, mux.unwrap_or(m), args);
                }
            }
            sink.flush_if(CHUNK)
        });
        if let Err(e) = fed {
            break Err(e);
        }
    };
    // What converted cleanly before a bad request is kept.
    let finished = sink.finish();
    let count = result?;
    finished?;
    Ok(count)
}

/// Reads into `tmp` until data, end of input (0) or an error other than an interrupt.
fn read_some(input: &mut dyn Read, tmp: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match input.read(tmp) {
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

/// Where converted bytes go, in [`CHUNK`]-sized writes.
struct Sink<'a> {
    out: &'a mut dyn Write,
    buf: Vec<u8>,
    /// The reader closed the output (`| head`): discard the rest quietly.
    closed: bool,
}

impl Sink<'_> {
    /// Writes out the buffered bytes if there are at least `min` of them.
    fn flush_if(&mut self, min: usize) -> Result<(), ConvertError> {
        if self.buf.len() < min.max(1) {
            return Ok(());
        }
        if !self.closed {
            match self.out.write_all(&self.buf) {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::BrokenPipe => self.closed = true,
                Err(e) => return Err(ConvertError::Write(e)),
            }
        }
        self.buf.clear();
        Ok(())
    }

    fn finish(mut self) -> Result<(), ConvertError> {
        self.flush_if(1)?;
        match self.out.flush() {
            Err(e) if e.kind() != ErrorKind::BrokenPipe => Err(ConvertError::Write(e)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resp_to_respb_and_back_gives_the_same_bytes() {
        let resp = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
        let mut respb = Vec::new();
        let n = convert(
            &mut &resp[..],
            &mut respb,
            (Wire::Resp, Wire::Respb),
            None,
            "in",
        );
        assert_eq!(n.unwrap(), 2);
        let mut back = Vec::new();
        let n = convert(
            &mut &respb[..],
            &mut back,
            (Wire::Respb, Wire::Resp),
            None,
            "in",
        );
        assert_eq!(n.unwrap(), 2);
        assert_eq!(back, resp);
    }

    #[test]
    fn what_came_before_a_malformed_request_is_written() {
        let input = b"*1\r\n$4\r\nPING\r\n*x\r\n";
        let mut out = Vec::new();
        let e = convert(
            &mut &input[..],
            &mut out,
            (Wire::Resp, Wire::Resp),
            None,
            "in",
        );
        assert!(matches!(e, Err(ConvertError::Input(_))));
        assert_eq!(out, b"*1\r\n$4\r\nPING\r\n");
    }
}
