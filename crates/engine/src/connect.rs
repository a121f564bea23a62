//! Opening connections and the connection set-up (`HELLO`, `AUTH`, `SELECT`).
//!
//! With [`Wire::Respb`] the set-up starts with RESPB's four-byte handshake, and every
//! set-up and control call (`AUTH`, `SELECT`, `PING`, `INFO`, `TIME`) goes as a RESPB
//! frame: [`call`] speaks the wire of the stream it is given.
//!
//! Set-up is done with blocking sockets and timeouts, before a connection joins a worker's
//! event loop: it happens once per connection (and once per reconnect), so the simplicity
//! of request–reply code is worth more than not blocking. After set-up the socket is
//! switched to non-blocking mode and handed to `mio`.
//!
//! The same code serves the control connection that fetches `INFO server` when a run
//! starts. Error messages name the step that failed and the server's reply; they never
//! contain the credentials.

use crate::config::{Protocol, RunConfig, Target, Wire};
use crate::error::EngineError;
use resplab_proto::resp::value::{decode, Value};
use resplab_proto::resp::{encode, info, Limits};
use resplab_proto::respb;
use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// A connected blocking socket of either kind.
#[derive(Debug)]
pub(crate) enum StdStream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
    /// A connection that speaks RESPB (its handshake sent): [`call`] encodes requests
    /// and decodes replies in RESPB.
    Respb(Box<StdStream>),
}

impl StdStream {
    pub(crate) fn set_timeouts(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            StdStream::Tcp(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            StdStream::Unix(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            StdStream::Tls(s) => {
                s.sock.set_read_timeout(t)?;
                s.sock.set_write_timeout(t)
            }
            StdStream::Respb(s) => s.set_timeouts(t),
        }
    }

    fn read_timeout(&self) -> Option<Duration> {
        match self {
            StdStream::Tcp(s) => s.read_timeout().ok().flatten(),
            StdStream::Unix(s) => s.read_timeout().ok().flatten(),
            StdStream::Tls(s) => s.sock.read_timeout().ok().flatten(),
            StdStream::Respb(s) => s.read_timeout(),
        }
    }

    /// Converts into a non-blocking `mio` stream.
    pub(crate) fn into_mio(self) -> io::Result<crate::conn::MioStream> {
        self.set_timeouts(None)?;
        match self {
            StdStream::Tcp(s) => {
                s.set_nonblocking(true)?;
                Ok(crate::conn::MioStream::Tcp(mio::net::TcpStream::from_std(
                    s,
                )))
            }
            StdStream::Unix(s) => {
                s.set_nonblocking(true)?;
                Ok(crate::conn::MioStream::Unix(
                    mio::net::UnixStream::from_std(s),
                ))
            }
            StdStream::Tls(s) => {
                let rustls::StreamOwned { conn, sock } = *s;
                sock.set_nonblocking(true)?;
                Ok(crate::conn::MioStream::Tls(Box::new(crate::tls::TlsMio {
                    conn,
                    sock: mio::net::TcpStream::from_std(sock),
                })))
            }
            // The wire format is the worker's business from here on.
            StdStream::Respb(s) => s.into_mio(),
        }
    }
}

impl Read for StdStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            StdStream::Tcp(s) => s.read(buf),
            StdStream::Unix(s) => s.read(buf),
            StdStream::Tls(s) => s.read(buf).map_err(crate::tls::explain_later),
            StdStream::Respb(s) => s.read(buf),
        }
    }
}

impl Write for StdStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            StdStream::Tcp(s) => s.write(buf),
            StdStream::Unix(s) => s.write(buf),
            StdStream::Tls(s) => s.write(buf),
            StdStream::Respb(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            StdStream::Tls(s) => s.flush(),
            StdStream::Respb(s) => s.flush(),
            _ => Ok(()),
        }
    }
}

/// Why a connection could not be set up.
#[derive(Debug)]
pub(crate) enum SetupError {
    /// The socket could not be opened or broke during set-up.
    Io(io::Error),
    /// The server answered a set-up step with an error.
    Refused { step: &'static str, reply: String },
}

impl SetupError {
    pub(crate) fn into_engine(self, target: &Target) -> EngineError {
        match self {
            SetupError::Io(source) => EngineError::Connect {
                target: target.to_string(),
                source,
            },
            SetupError::Refused { step, reply } => EngineError::Handshake {
                target: target.to_string(),
                step,
                reply,
            },
        }
    }
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::Io(e) => write!(f, "{e}"),
            SetupError::Refused { step, reply } => write!(f, "{step} answered {reply}"),
        }
    }
}

impl From<io::Error> for SetupError {
    fn from(e: io::Error) -> Self {
        SetupError::Io(e)
    }
}

/// Opens a socket to the target, with `timeout` for connecting and for each set-up step,
/// and runs the TLS handshake when `tls` is given.
pub(crate) fn open(
    target: &Target,
    tls: Option<&crate::config::TlsOptions>,
    timeout: Duration,
) -> io::Result<StdStream> {
    let stream = match target {
        Target::Tcp { host, port } => {
            let mut last = None;
            let mut found = None;
            for addr in (host.as_str(), *port).to_socket_addrs()? {
                match TcpStream::connect_timeout(&addr, timeout) {
                    Ok(s) => {
                        found = Some(s);
                        break;
                    }
                    Err(e) => last = Some(e),
                }
            }
            let s = match found {
                Some(s) => s,
                None => {
                    return Err(last.unwrap_or_else(|| {
                        io::Error::new(
                            io::ErrorKind::NotFound,
                            format!("{host} resolves to no address"),
                        )
                    }))
                }
            };
            s.set_nodelay(true)?;
            match tls {
                Some(opts) => {
                    s.set_read_timeout(Some(timeout))?;
                    s.set_write_timeout(Some(timeout))?;
                    StdStream::Tls(Box::new(crate::tls::handshake(opts, host, s)?))
                }
                None => StdStream::Tcp(s),
            }
        }
        Target::Unix { .. } if tls.is_some() => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "TLS over a Unix socket is not supported: connect over TCP for TLS",
            ))
        }
        Target::Unix { path } => StdStream::Unix(UnixStream::connect(path)?),
    };
    stream.set_timeouts(Some(timeout))?;
    Ok(stream)
}

/// Sends one command and reads its complete reply, in RESP or (on a
/// [`StdStream::Respb`] connection) as a RESPB frame on mux id 0 and its reply frame.
pub(crate) fn call(stream: &mut StdStream, args: &[&[u8]]) -> io::Result<Value> {
    let mut out = Vec::with_capacity(64);
    encode_request(stream, &mut out, args);
    stream.write_all(&out)?;
    stream.flush()?;
    let limits = Limits::default();
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        match decode_reply_on(stream, &buf, &limits) {
            Ok(Some((value, _))) => return Ok(value),
            Ok(None) => {}
            Err(e) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("malformed reply: {e}"),
                ))
            }
        }
        let plain = matches!(stream, StdStream::Tcp(_));
        let n = stream.read(&mut chunk).map_err(|e| {
            if plain && e.kind() == io::ErrorKind::ConnectionReset {
                io::Error::new(
                    e.kind(),
                    "the server reset the connection during set-up (if it is a TLS port, give --tls or use rediss://)",
                )
            } else {
                e
            }
        })?;
        if n == 0 {
            let hint = if matches!(stream, StdStream::Tcp(_)) {
                " (if it is a TLS port, give --tls or use rediss://)"
            } else {
                ""
            };
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the server closed the connection during set-up{hint}"),
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
        // A TLS record (handshake 0x16 or alert 0x15, version 3.x) where RESP was expected.
        if buf.len() >= 2 && matches!(buf[0], 0x15 | 0x16) && buf[1] == 0x03 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the server answered with TLS: this is a TLS port; give --tls (or use rediss://)",
            ));
        }
    }
}

/// Appends the command `args` in the wire format of `stream`: RESP, or a RESPB frame on
/// mux id 0.
pub(crate) fn encode_request(stream: &StdStream, out: &mut Vec<u8>, args: &[&[u8]]) {
    if matches!(stream, StdStream::Respb(_)) {
        respb::codec::encode_command(out, 0, args);
    } else {
        encode::write_command(out, args);
    }
}

/// Decodes the reply at the start of `buf` in the wire format of `stream`: its value and
/// length, or `None` for a prefix of one.
pub(crate) fn decode_reply_on(
    stream: &StdStream,
    buf: &[u8],
    limits: &Limits,
) -> Result<Option<(Value, usize)>, String> {
    if matches!(stream, StdStream::Respb(_)) {
        decode_respb(buf, limits)
    } else {
        decode(buf, limits).map_err(|e| e.to_string())
    }
}

/// Decodes a RESPB reply frame, which must be on mux id 0 (where every request goes).
/// A reply that starts like RESP says so: the port is not a RESPB port.
fn decode_respb(buf: &[u8], limits: &Limits) -> Result<Option<(Value, usize)>, String> {
    match respb::reply::decode_reply(buf, limits) {
        Ok(Some((0, value, n))) => Ok(Some((value, n))),
        Ok(Some((mux, _, _))) => Err(format!(
            "a RESPB reply on mux id {mux}, where requests go on mux id 0"
        )),
        Ok(None) => Ok(None),
        Err(_) if buf.first().is_some_and(|b| b"+-:$*_%~>|!=(,#".contains(b)) => Err(
            "the server answered in RESP, not RESPB: give its RESPB port (resplab serve --respb-port), or drop --protocol respb".into(),
        ),
        Err(e) => Err(e.to_string()),
    }
}

/// Server clock minus this host's clock in ms, and the round trip it was measured over,
/// from the `TIME` call with the shortest round trip of `tries` (the estimate is off by at
/// most half that round trip). `None` when the server does not answer `TIME` usefully.
pub(crate) fn clock_offset(stream: &mut StdStream, tries: usize) -> Option<(f64, f64)> {
    let mut best: Option<(f64, f64)> = None;
    for _ in 0..tries.max(1) {
        let before = unix_ms_now();
        let reply = call(stream, &[b"TIME"]).ok()?;
        let after = unix_ms_now();
        let parts = match &reply {
            Value::Array(items) if items.len() == 2 => items,
            _ => return None,
        };
        let number = |v: &Value| -> Option<f64> {
            match v {
                Value::Blob(b) | Value::Simple(b) => std::str::from_utf8(b).ok()?.parse().ok(),
                Value::Integer(i) => Some(*i as f64),
                _ => None,
            }
        };
        let server_ms = number(&parts[0])? * 1e3 + number(&parts[1])? / 1e3;
        let rtt = (after - before).max(0.0);
        let offset = server_ms - (before + after) / 2.0;
        if best.is_none_or(|(_, r)| rtt < r) {
            best = Some((offset, rtt));
        }
    }
    best
}

/// This host's wall clock, ms since the Unix epoch, with sub-millisecond precision.
pub fn unix_ms_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1e3)
        .unwrap_or(0.0)
}

/// A set-up step whose reply did not come in time says so in words: the socket's
/// "Resource temporarily unavailable" means a server that accepted the connection (the
/// kernel does that for a stopped or wedged process too) but does not answer.
fn silent(e: io::Error, step: &str, timeout: Option<Duration>) -> io::Error {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "no reply to {step} within {:.1} s: something accepts connections there but does not answer",
                timeout.unwrap_or_default().as_secs_f64()
            ),
        ),
        _ => e,
    }
}

/// The text of an error reply, or `None` for any other reply.
pub(crate) fn error_text(v: &Value) -> Option<String> {
    match v {
        Value::SimpleError(t) | Value::BlobError(t) => {
            Some(String::from_utf8_lossy(t).into_owned())
        }
        Value::Attribute { value, .. } => error_text(value),
        _ => None,
    }
}

fn step(stream: &mut StdStream, name: &'static str, args: &[&[u8]]) -> Result<Value, SetupError> {
    let reply = call(stream, args).map_err(|e| silent(e, name, stream.read_timeout()))?;
    match error_text(&reply) {
        Some(text) => Err(SetupError::Refused {
            step: name,
            reply: text,
        }),
        None => Ok(reply),
    }
}

/// Opens a connection and runs the set-up the configuration asks for: `HELLO 3` (with
/// `AUTH` inside when credentials are given) or `AUTH`, then `SELECT`, then `CLIENT
/// TRACKING on`; or just `PING` when none of them is needed.
pub(crate) fn open_ready(cfg: &RunConfig, timeout: Duration) -> Result<StdStream, SetupError> {
    open_ready_to(cfg, &cfg.target, false, timeout)
}

/// [`open_ready`] to another node than the configured target (a cluster node), with
/// `READONLY` after the set-up when `readonly` (a replica that serves reads).
pub(crate) fn open_ready_to(
    cfg: &RunConfig,
    target: &Target,
    readonly: bool,
    timeout: Duration,
) -> Result<StdStream, SetupError> {
    let mut s = open_set_up(cfg, target, timeout, true)?;
    if readonly {
        step(&mut s, "READONLY", &[b"READONLY"])?;
    }
    Ok(s)
}

/// A connection opened again after a number of requests ([`crate::Renew`]): the set-up
/// the configuration asks for, without the `PING` that proves a server is there (it just
/// answered on the connection this one replaces), so the server sees what the tools
/// that renew connections make it see.
pub(crate) fn open_renewed(
    cfg: &RunConfig,
    target: &Target,
    timeout: Duration,
) -> Result<StdStream, SetupError> {
    open_set_up(cfg, target, timeout, false)
}

/// Opens a connection (with RESPB's handshake when asked) and runs its set-up; `prove`:
/// a `PING` when the set-up asks nothing of the server.
fn open_set_up(
    cfg: &RunConfig,
    target: &Target,
    timeout: Duration,
    prove: bool,
) -> Result<StdStream, SetupError> {
    let mut s = open(target, cfg.tls.as_ref(), timeout)?;
    if cfg.wire == Wire::Respb {
        s.write_all(&respb::HANDSHAKE)?;
        s = StdStream::Respb(Box::new(s));
    }
    ready(cfg, &mut s, prove)?;
    Ok(s)
}

fn ready(cfg: &RunConfig, s: &mut StdStream, prove: bool) -> Result<(), SetupError> {
    match (cfg.protocol, &cfg.credentials) {
        (Protocol::Resp3, None) => {
            step(s, "HELLO 3", &[b"HELLO", b"3"])?;
        }
        (Protocol::Resp3, Some(c)) => {
            let user = c.user.as_deref().unwrap_or("default");
            step(
                s,
                "HELLO 3 AUTH",
                &[
                    b"HELLO",
                    b"3",
                    b"AUTH",
                    user.as_bytes(),
                    c.password.as_bytes(),
                ],
            )?;
        }
        (Protocol::Resp2, Some(c)) => match &c.user {
            Some(user) => {
                step(
                    s,
                    "AUTH",
                    &[b"AUTH", user.as_bytes(), c.password.as_bytes()],
                )?;
            }
            None => {
                step(s, "AUTH", &[b"AUTH", c.password.as_bytes()])?;
            }
        },
        (Protocol::Resp2, None) => {}
    }
    if let Some(db) = cfg.db {
        step(s, "SELECT", &[b"SELECT", db.to_string().as_bytes()])?;
    }
    if cfg.client_tracking {
        step(s, "CLIENT TRACKING on", &[b"CLIENT", b"TRACKING", b"on"])?;
    }
    let asked = cfg.credentials.is_some() || cfg.db.is_some() || cfg.client_tracking;
    if prove && cfg.protocol == Protocol::Resp2 && !asked {
        // Nothing was asked of the server yet. A kernel completes TCP handshakes for a
        // process that is stopped or wedged, so only an answer proves the server is there;
        // without this, a reconnect to such a server would count as a success.
        step(s, "PING", &[b"PING"])?;
    }
    Ok(())
}

/// Fetches `INFO server` and parses its `key:value` lines. A server without `INFO` (or
/// one that answers with an error) yields an empty map: it is provenance, not a
/// requirement.
pub(crate) fn server_info(stream: &mut StdStream) -> BTreeMap<String, String> {
    let text = match call(stream, &[b"INFO", b"server"]) {
        Ok(Value::Blob(b)) | Ok(Value::Verbatim { text: b, .. }) => b,
        _ => return BTreeMap::new(),
    };
    info::fields(&String::from_utf8_lossy(&text))
}
