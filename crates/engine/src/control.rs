//! [`ControlClient`]: the one blocking client for everything that is not measured load —
//! preparing and inspecting a server between trials (`CONFIG SET`, `INFO`, `FLUSHALL`,
//! a pipelined preload), checking that it is up, and the engine's own set-up calls.
//!
//! It connects exactly as the measured connections do ([`crate::RunConfig`]'s target,
//! TLS settings, user and password, RESP version and database, through the same set-up
//! code), so a server behind TLS or an ACL user is prepared the same way it is loaded.
//! Replies are decoded with `resplab-proto`'s full decoder under control-plane limits (no
//! bulk string over 64 MiB, no aggregate over 1 M elements, depth 8), so a misbehaving
//! server cannot make it allocate without bound. With a [`crate::Wire::Respb`]
//! configuration it speaks RESPB, as the measured connections do (`connect` encodes and
//! decodes for both).

use crate::config::RunConfig;
use crate::connect::{self, StdStream};
use crate::error::EngineError;
use resplab_proto::resp::encode;
use resplab_proto::resp::request::parse_request;
pub use resplab_proto::resp::value::Value;
use resplab_proto::resp::Limits;
use std::io::{self, Read, Write};
use std::time::Duration;

/// Limits of control-plane replies.
const LIMITS: Limits = Limits {
    max_bulk_len: 64 << 20,
    max_aggregate_len: 1 << 20,
    max_depth: 8,
};

/// One blocking control connection.
#[derive(Debug)]
pub struct ControlClient {
    stream: StdStream,
    /// Bytes read past the last reply (a pipeline's later replies).
    buf: Vec<u8>,
    timeout: Duration,
}

impl ControlClient {
    /// Connects to `cfg.target` and runs the connection set-up `cfg` asks for (TLS
    /// handshake, `HELLO`/`AUTH`, `SELECT`, or a `PING`), with `timeout` for connecting
    /// and for every reply.
    ///
    /// # Errors
    /// [`EngineError::Connect`] or [`EngineError::Handshake`], in the words the measured
    /// connections use.
    pub fn connect(cfg: &RunConfig, timeout: Duration) -> Result<ControlClient, EngineError> {
        let stream = connect::open_ready_to(cfg, &cfg.target, false, timeout)
            .map_err(|e| e.into_engine(&cfg.target))?;
        Ok(ControlClient {
            stream,
            buf: Vec::new(),
            timeout,
        })
    }

    /// Changes the limit for each read and write.
    ///
    /// # Errors
    /// When the socket refuses the setting.
    pub fn set_timeout(&mut self, timeout: Duration) -> io::Result<()> {
        self.timeout = timeout;
        self.stream.set_timeouts(Some(timeout))
    }

    /// Sends one command and returns its reply (an error reply is `Ok`, see
    /// [`connect::error_text`]).
    ///
    /// # Errors
    /// I/O failures, a closed connection, a malformed reply, or no reply in time (said in
    /// words: a server that accepts connections but does not answer).
    pub fn call(&mut self, args: &[&[u8]]) -> io::Result<Value> {
        let mut out = Vec::with_capacity(64);
        connect::encode_request(&self.stream, &mut out, args);
        self.send(&out)?;
        let name = args
            .first()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .unwrap_or_default();
        self.read_reply(&name)
    }

    /// [`ControlClient::call`] with text arguments.
    ///
    /// # Errors
    /// As [`ControlClient::call`].
    pub fn call_str(&mut self, args: &[&str]) -> io::Result<Value> {
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        self.call(&a)
    }

    /// Sends already encoded commands (RESP, see [`encode_command`]; re-encoded as RESPB
    /// frames on a RESPB connection) and reads `count` replies; returns the text of the
    /// first error reply, if any.
    ///
    /// # Errors
    /// As [`ControlClient::call`], and malformed RESP in `encoded` on a RESPB connection.
    pub fn pipeline(&mut self, encoded: &[u8], count: usize) -> io::Result<Option<String>> {
        if matches!(self.stream, StdStream::Respb(_)) {
            let frames = respb_frames(&self.stream, encoded)?;
            self.send(&frames)?;
        } else {
            self.send(encoded)?;
        }
        let mut first_error = None;
        for _ in 0..count {
            let reply = self.read_reply("a pipelined command")?;
            if let Some(e) = connect::error_text(&reply) {
                first_error.get_or_insert(e);
            }
        }
        Ok(first_error)
    }

    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)?;
        self.stream.flush()
    }

    fn read_reply(&mut self, what: &str) -> io::Result<Value> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match connect::decode_reply_on(&self.stream, &self.buf, &LIMITS) {
                Ok(Some((value, used))) => {
                    self.buf.drain(..used);
                    return Ok(value);
                }
                Ok(None) => {}
                Err(e) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("malformed reply: {e}"),
                    ))
                }
            }
            let n = match self.stream.read(&mut chunk) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "no reply to {what} within {:.1} s: something accepts connections there but does not answer",
                            self.timeout.as_secs_f64()
                        ),
                    ))
                }
                Err(e) => return Err(e),
            };
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection",
                ));
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

/// The RESP requests in `encoded` as RESPB frames.
fn respb_frames(stream: &StdStream, encoded: &[u8]) -> io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(encoded.len());
    let mut args = Vec::new();
    let mut at = 0;
    while at < encoded.len() {
        let rest = encoded.get(at..).unwrap_or_default();
        match parse_request(rest, &LIMITS, &mut args) {
            Ok(Some(n)) if n > 0 => {
                connect::encode_request(stream, &mut out, &args);
                at += n;
            }
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("pipelined commands: no complete RESP request at byte {at}"),
                ))
            }
        }
    }
    Ok(out)
}

/// Appends the RESP encoding of the command `args` (name first) to `out`, for
/// [`ControlClient::pipeline`].
pub fn encode_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    encode::write_command(out, args);
}

/// The text of an error reply, or `None` for any other reply.
pub fn error_text(v: &Value) -> Option<String> {
    connect::error_text(v)
}

/// A reply as text: a simple, bulk or verbatim string, an error's text, an integer, or
/// an aggregate's elements joined by spaces; empty for null.
pub fn reply_text(v: &Value) -> String {
    match v {
        Value::Simple(b)
        | Value::Blob(b)
        | Value::SimpleError(b)
        | Value::BlobError(b)
        | Value::BigNumber(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Verbatim { text, .. } => String::from_utf8_lossy(text).into_owned(),
        Value::Integer(i) => i.to_string(),
        Value::Double(d) => d.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::Null => String::new(),
        Value::Array(items) | Value::Set(items) | Value::Push(items) => {
            items.iter().map(reply_text).collect::<Vec<_>>().join(" ")
        }
        Value::Map(pairs) => pairs
            .iter()
            .flat_map(|(k, v)| [reply_text(k), reply_text(v)])
            .collect::<Vec<_>>()
            .join(" "),
        Value::Attribute { value, .. } => reply_text(value),
    }
}
