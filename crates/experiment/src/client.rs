//! A small blocking RESP2 client for the control plane of a trial: `PING`, `CONFIG
//! SET`/`GET`, `INFO`, `FLUSHALL` and the pipelined preload.
//!
//! The measured load goes through `resplab-engine`; this client only prepares and
//! inspects the server between measurements, where simplicity beats speed. Replies are
//! read with limits (no bulk over 64 MiB, no array over 1 M elements, depth 8), so a
//! misbehaving server cannot make it allocate without bound.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// A decoded reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Status(String),
    Error(String),
    Integer(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// The reply as text (status, bulk or error text).
    pub fn text(&self) -> String {
        match self {
            Reply::Status(s) | Reply::Error(s) => s.clone(),
            Reply::Integer(i) => i.to_string(),
            Reply::Bulk(Some(b)) => String::from_utf8_lossy(b).into_owned(),
            Reply::Bulk(None) | Reply::Array(None) => String::new(),
            Reply::Array(Some(items)) => {
                items.iter().map(Reply::text).collect::<Vec<_>>().join(" ")
            }
        }
    }
}

/// One control connection.
#[derive(Debug)]
pub struct Client {
    reader: BufReader<TcpStream>,
}

const MAX_BULK: usize = 64 << 20;
const MAX_ARRAY: usize = 1 << 20;

fn bad(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

impl Client {
    /// Connects with `timeout` for the connection and for each read and write.
    ///
    /// # Errors
    /// Name resolution or connection failures.
    pub fn connect(host: &str, port: u16, timeout: Duration) -> io::Result<Client> {
        let addrs: Vec<SocketAddr> = (host, port).to_socket_addrs()?.collect();
        let mut last = io::Error::new(io::ErrorKind::NotFound, format!("{host} has no address"));
        for a in addrs {
            match TcpStream::connect_timeout(&a, timeout) {
                Ok(s) => {
                    s.set_read_timeout(Some(timeout))?;
                    s.set_write_timeout(Some(timeout))?;
                    let _ = s.set_nodelay(true);
                    return Ok(Client {
                        reader: BufReader::new(s),
                    });
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Sets the read timeout (long commands such as a big preload need more).
    ///
    /// # Errors
    /// As [`TcpStream::set_read_timeout`].
    pub fn set_timeout(&mut self, timeout: Duration) -> io::Result<()> {
        self.reader.get_ref().set_read_timeout(Some(timeout))
    }

    /// Appends one command in RESP form to `out`.
    pub fn encode(out: &mut Vec<u8>, args: &[&[u8]]) {
        out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
    }

    /// Sends one command and reads its reply.
    ///
    /// # Errors
    /// I/O failures and malformed replies (error replies are `Ok(Reply::Error)`).
    pub fn call(&mut self, args: &[&str]) -> io::Result<Reply> {
        let mut out = Vec::new();
        let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        Self::encode(&mut out, &a);
        self.reader.get_mut().write_all(&out)?;
        self.read_reply(0).map_err(|e| match e.kind() {
            // A server that accepted the connection but does not answer: say so in words.
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "no reply to {} within {:.1} s: something accepts connections there but does not answer",
                    args.first().copied().unwrap_or(""),
                    self.reader
                        .get_ref()
                        .read_timeout()
                        .ok()
                        .flatten()
                        .unwrap_or_default()
                        .as_secs_f64()
                ),
            ),
            _ => e,
        })
    }

    /// Sends already encoded commands and reads `count` replies, returning the first
    /// error reply if any.
    ///
    /// # Errors
    /// I/O failures and malformed replies.
    pub fn pipeline(&mut self, encoded: &[u8], count: usize) -> io::Result<Option<String>> {
        self.reader.get_mut().write_all(encoded)?;
        let mut first_error = None;
        for _ in 0..count {
            if let Reply::Error(e) = self.read_reply(0)? {
                first_error.get_or_insert(e);
            }
        }
        Ok(first_error)
    }

    fn read_line(&mut self) -> io::Result<String> {
        let mut line = Vec::new();
        let n = (&mut self.reader)
            .take(64 * 1024)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        if !line.ends_with(b"\r\n") {
            return Err(bad(
                "reply line longer than 64 KiB or not ended by CRLF".into()
            ));
        }
        line.truncate(line.len() - 2);
        Ok(String::from_utf8_lossy(&line).into_owned())
    }

    fn read_reply(&mut self, depth: usize) -> io::Result<Reply> {
        if depth > 8 {
            return Err(bad("reply nested deeper than 8 levels".into()));
        }
        let line = self.read_line()?;
        let (kind, rest) = line.split_at(line.len().min(1));
        let len = |rest: &str| -> io::Result<i64> {
            rest.parse::<i64>()
                .map_err(|_| bad(format!("expected a length, found {rest:?}")))
        };
        match kind {
            "+" => Ok(Reply::Status(rest.to_string())),
            "-" => Ok(Reply::Error(rest.to_string())),
            ":" => Ok(Reply::Integer(len(rest)?)),
            "$" => {
                let n = len(rest)?;
                if n < 0 {
                    return Ok(Reply::Bulk(None));
                }
                let n = n as usize;
                if n > MAX_BULK {
                    return Err(bad(format!(
                        "bulk reply of {n} bytes is over the 64 MiB limit"
                    )));
                }
                let mut buf = vec![0u8; n + 2];
                self.reader.read_exact(&mut buf)?;
                buf.truncate(n);
                Ok(Reply::Bulk(Some(buf)))
            }
            "*" => {
                let n = len(rest)?;
                if n < 0 {
                    return Ok(Reply::Array(None));
                }
                let n = n as usize;
                if n > MAX_ARRAY {
                    return Err(bad(format!(
                        "array reply of {n} elements is over the limit"
                    )));
                }
                let mut items = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    items.push(self.read_reply(depth + 1)?);
                }
                Ok(Reply::Array(Some(items)))
            }
            _ => Err(bad(format!("expected a RESP2 reply, found {line:?}"))),
        }
    }
}

/// Parses `INFO` text into `section → field → value` (section names lower-case).
pub fn parse_info(
    text: &str,
) -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>> {
    let mut out: std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>> =
        Default::default();
    let mut section = String::from("default");
    for line in text.lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("# ") {
            section = name.trim().to_ascii_lowercase();
        } else if let Some((k, v)) = line.split_once(':') {
            out.entry(section.clone())
                .or_default()
                .insert(k.to_string(), v.to_string());
        }
    }
    out
}
