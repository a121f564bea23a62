//! A blocking RESP2 client for tests.
//!
//! It sends one command, reads one reply and returns it as a [`Reply`] tree. It is meant
//! for inspecting a server around a test (`DBSIZE`, `KEYS *`, `CLIENT KILL`), not for load;
//! it parses only what RESP2 servers send and reports anything else as an error.

use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One RESP2 reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `+OK`
    Simple(String),
    /// `-ERR …`
    Error(String),
    /// `:42`
    Integer(i64),
    /// `$3\r\nfoo` or the nil bulk `$-1`.
    Bulk(Option<Vec<u8>>),
    /// `*2\r\n…` or the nil array `*-1`.
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// The integer of an integer reply.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Reply::Integer(v) => Some(*v),
            _ => None,
        }
    }

    /// The payload of a bulk or simple string reply, as text.
    pub fn as_text(&self) -> Option<String> {
        match self {
            Reply::Simple(s) => Some(s.clone()),
            Reply::Bulk(Some(b)) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        }
    }

    /// The elements of an array reply, as text (nil elements are skipped).
    pub fn as_text_list(&self) -> Vec<String> {
        match self {
            Reply::Array(Some(items)) => items.iter().filter_map(Reply::as_text).collect(),
            _ => Vec::new(),
        }
    }
}

/// A blocking connection to a RESP2 server.
#[derive(Debug)]
pub struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    /// Connects to `addr` (`host:port`) with a 5 s timeout on every operation.
    ///
    /// # Errors
    /// When the connection cannot be made.
    pub fn connect(addr: &str) -> io::Result<Client> {
        let stream = TcpStream::connect(addr)?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        stream.set_write_timeout(Some(Duration::from_secs(5)))?;
        stream.set_nodelay(true)?;
        let writer = stream.try_clone()?;
        Ok(Client {
            reader: BufReader::new(stream),
            writer,
        })
    }

    /// Sends one command and reads its reply.
    ///
    /// # Errors
    /// On I/O errors, timeouts, or a reply that is not RESP2.
    pub fn cmd(&mut self, args: &[&str]) -> io::Result<Reply> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&out)?;
        read_reply(&mut self.reader, 0)
    }
}

fn bad(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

fn read_line(r: &mut impl BufRead) -> io::Result<String> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "server closed the connection before a full reply",
        ));
    }
    let trimmed = line
        .strip_suffix("\r\n")
        .ok_or_else(|| bad(format!("expected a line ending in CRLF, found {line:?}")))?;
    Ok(trimmed.to_string())
}

fn parse_len(text: &str) -> io::Result<i64> {
    text.parse::<i64>()
        .map_err(|_| bad(format!("expected a length, found {text:?}")))
}

fn read_reply(r: &mut impl BufRead, depth: usize) -> io::Result<Reply> {
    if depth > 32 {
        return Err(bad("reply nested deeper than 32 levels".into()));
    }
    let line = read_line(r)?;
    let (kind, rest) = line.split_at(line.len().min(1));
    match kind {
        "+" => Ok(Reply::Simple(rest.to_string())),
        "-" => Ok(Reply::Error(rest.to_string())),
        ":" => Ok(Reply::Integer(parse_len(rest)?)),
        "$" => {
            let n = parse_len(rest)?;
            if n < 0 {
                return Ok(Reply::Bulk(None));
            }
            let n = usize::try_from(n).map_err(|_| bad(format!("bulk length {n}")))?;
            if n > 64 << 20 {
                return Err(bad(format!("bulk of {n} bytes is larger than 64 MiB")));
            }
            let mut buf = vec![0u8; n + 2];
            r.read_exact(&mut buf)?;
            if &buf[n..] != b"\r\n" {
                return Err(bad("expected CRLF after a bulk string".into()));
            }
            buf.truncate(n);
            Ok(Reply::Bulk(Some(buf)))
        }
        "*" => {
            let n = parse_len(rest)?;
            if n < 0 {
                return Ok(Reply::Array(None));
            }
            if n > 1 << 24 {
                return Err(bad(format!("array of {n} elements is too long")));
            }
            let mut items = Vec::new();
            for _ in 0..n {
                items.push(read_reply(r, depth + 1)?);
            }
            Ok(Reply::Array(Some(items)))
        }
        _ => Err(bad(format!(
            "expected a RESP2 type byte (+ - : $ *), found {line:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_replies() {
        let bytes = b"*3\r\n+OK\r\n$3\r\nfoo\r\n*2\r\n:5\r\n$-1\r\n".to_vec();
        let mut r = BufReader::new(bytes.as_slice());
        let reply = read_reply(&mut r, 0).unwrap();
        assert_eq!(
            reply,
            Reply::Array(Some(vec![
                Reply::Simple("OK".into()),
                Reply::Bulk(Some(b"foo".to_vec())),
                Reply::Array(Some(vec![Reply::Integer(5), Reply::Bulk(None)])),
            ]))
        );
    }

    #[test]
    fn rejects_unknown_type_bytes() {
        let mut r = BufReader::new(&b"%1\r\n"[..]);
        assert!(read_reply(&mut r, 0).is_err());
        let mut r = BufReader::new(&b"$5\r\nab"[..]);
        assert!(read_reply(&mut r, 0).is_err());
    }
}
