//! A fault-injecting RESP server.
//!
//! [`FakeServer`] listens on a free loopback port and answers RESP2 requests (multibulk
//! or inline) with plausible replies: `+PONG` to `PING`, `$-1` to `GET`, a small bulk to
//! `INFO`, `+OK` to anything else. A [`Script`] makes it misbehave in ways a load generator
//! must survive:
//!
//! - `garbage_every`: every Nth request gets bytes that are not RESP;
//! - `truncate_at`: the Kth request gets half a reply, then the connection closes;
//! - `close_after`: the connection closes after K replies;
//! - `error_every`: every Nth request gets `-ERR fake failure` (or the line in
//!   `error_line`, such as `MOVED 3999 127.0.0.1:6381`);
//! - `stall`: before the reply to every Nth request, the server sleeps for a while and
//!   answers nothing meanwhile (replies already due are flushed first).
//!
//! Request numbers count from 1 and are per connection, so a test with one connection
//! knows exactly which request is hit. One thread serves each connection; the server
//! stops on drop.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A stall: sleep `duration` before replying to every `every`th request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stall {
    pub every: u64,
    pub duration: Duration,
}

/// How the fake server misbehaves. The default behaves well.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    pub garbage_every: Option<u64>,
    pub truncate_at: Option<u64>,
    pub close_after: Option<u64>,
    pub error_every: Option<u64>,
    /// The error line sent by `error_every`, without `-` and CRLF (default
    /// `ERR fake failure`).
    pub error_line: Option<String>,
    pub stall: Option<Stall>,
}

/// Counters a test can read while the server runs.
#[derive(Debug, Default)]
pub struct FakeStats {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Requests read (all connections).
    pub requests: AtomicU64,
}

/// A running fake server.
#[derive(Debug)]
pub struct FakeServer {
    port: u16,
    stop: Arc<AtomicBool>,
    stats: Arc<FakeStats>,
    accept: Option<JoinHandle<()>>,
}

impl FakeServer {
    /// Starts a server that follows `script`.
    ///
    /// # Errors
    /// When no loopback port can be bound.
    pub fn start(script: Script) -> io::Result<FakeServer> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(FakeStats::default());
        let accept = {
            let stop = stop.clone();
            let stats = stats.clone();
            std::thread::spawn(move || accept_loop(listener, script, stop, stats))
        };
        Ok(FakeServer {
            port,
            stop,
            stats,
            accept: Some(accept),
        })
    }

    /// The port it listens on (loopback).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Live counters.
    pub fn stats(&self) -> &FakeStats {
        &self.stats
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

fn accept_loop(
    listener: TcpListener,
    script: Script,
    stop: Arc<AtomicBool>,
    stats: Arc<FakeStats>,
) {
    let mut workers = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => {
                stats.connections.fetch_add(1, Ordering::Relaxed);
                let script = script.clone();
                let stop = stop.clone();
                let stats = stats.clone();
                workers.push(std::thread::spawn(move || {
                    let _ = serve(stream, &script, &stop, &stats);
                }));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    for w in workers {
        let _ = w.join();
    }
}

/// Parses one request at the start of `buf`: returns (bytes consumed, first argument).
/// `Ok(None)` means more bytes are needed.
fn parse_request(buf: &[u8]) -> io::Result<Option<(usize, Vec<u8>)>> {
    let Some(eol) = buf.windows(2).position(|w| w == b"\r\n") else {
        return Ok(None);
    };
    if buf.first() != Some(&b'*') {
        // Inline command: words separated by spaces.
        let line = &buf[..eol];
        let first = line
            .split(|&b| b == b' ')
            .next()
            .unwrap_or_default()
            .to_vec();
        return Ok(Some((eol + 2, first)));
    }
    let count = parse_num(&buf[1..eol])?;
    let mut pos = eol + 2;
    let mut first = Vec::new();
    for i in 0..count {
        let rest = &buf[pos..];
        let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
            return Ok(None);
        };
        if rest.first() != Some(&b'$') {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "expected '$'"));
        }
        let len = parse_num(&rest[1..eol])?;
        let start = eol + 2;
        if rest.len() < start + len + 2 {
            return Ok(None);
        }
        if i == 0 {
            first = rest[start..start + len].to_vec();
        }
        pos += start + len + 2;
    }
    Ok(Some((pos, first)))
}

fn parse_num(text: &[u8]) -> io::Result<usize> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|&n| n <= 64 << 20)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "expected a length"))
}

fn is_nth(every: Option<u64>, n: u64) -> bool {
    matches!(every, Some(e) if e > 0 && n.is_multiple_of(e))
}

fn serve(
    mut stream: TcpStream,
    script: &Script,
    stop: &AtomicBool,
    stats: &FakeStats,
) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_millis(20)))?;
    stream.set_nodelay(true)?;
    let mut inbuf: Vec<u8> = Vec::new();
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut served: u64 = 0;
    while !stop.load(Ordering::Relaxed) {
        let n = match stream.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            Err(e) => return Err(e),
        };
        inbuf.extend_from_slice(&chunk[..n]);
        let mut pos = 0;
        while let Some((used, name)) = parse_request(&inbuf[pos..])? {
            pos += used;
            served += 1;
            stats.requests.fetch_add(1, Ordering::Relaxed);
            if let Some(stall) = script.stall {
                if is_nth(Some(stall.every), served) {
                    stream.write_all(&out)?;
                    out.clear();
                    std::thread::sleep(stall.duration);
                }
            }
            if script.truncate_at == Some(served) {
                out.extend_from_slice(b"$10\r\nhalf");
                stream.write_all(&out)?;
                return Ok(());
            }
            if is_nth(script.garbage_every, served) {
                out.extend_from_slice(b"?this is not RESP\r\n");
            } else if is_nth(script.error_every, served) {
                out.push(b'-');
                let line = script.error_line.as_deref().unwrap_or("ERR fake failure");
                out.extend_from_slice(line.as_bytes());
                out.extend_from_slice(b"\r\n");
            } else {
                out.extend_from_slice(reply_for(&name));
            }
            if script.close_after == Some(served) {
                stream.write_all(&out)?;
                return Ok(());
            }
        }
        inbuf.drain(..pos);
        if !out.is_empty() {
            stream.write_all(&out)?;
            out.clear();
        }
    }
    Ok(())
}

fn reply_for(name: &[u8]) -> &'static [u8] {
    if name.eq_ignore_ascii_case(b"PING") {
        b"+PONG\r\n"
    } else if name.eq_ignore_ascii_case(b"GET") {
        b"$-1\r\n"
    } else if name.eq_ignore_ascii_case(b"INFO") {
        b"$46\r\n# Server\r\nredis_version:0.0.0\r\nfake_server:1\r\n\r\n"
    } else if name.eq_ignore_ascii_case(b"HELLO") {
        b"-ERR unknown command 'HELLO'\r\n"
    } else {
        b"+OK\r\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Client, Reply};

    #[test]
    fn parses_pipelined_and_partial_requests() {
        let buf = b"*1\r\n$4\r\nPING\r\nGET k\r\n*2\r\n$3\r\nSET";
        let (n, name) = parse_request(buf).unwrap().unwrap();
        assert_eq!(name, b"PING");
        let (m, name) = parse_request(&buf[n..]).unwrap().unwrap();
        assert_eq!(name, b"GET");
        assert!(parse_request(&buf[n + m..]).unwrap().is_none());
    }

    #[test]
    fn info_reply_length_is_right() {
        let r = reply_for(b"INFO");
        let body = &r[5..r.len() - 2];
        assert_eq!(body.len(), 46);
    }

    #[test]
    fn scripted_errors_and_closes() {
        let server = FakeServer::start(Script {
            error_every: Some(2),
            close_after: Some(3),
            ..Script::default()
        })
        .unwrap();
        let mut c = Client::connect(&server.addr()).unwrap();
        assert_eq!(c.cmd(&["PING"]).unwrap(), Reply::Simple("PONG".into()));
        assert!(matches!(
            c.cmd(&["SET", "a", "b"]).unwrap(),
            Reply::Error(_)
        ));
        assert_eq!(c.cmd(&["GET", "a"]).unwrap(), Reply::Bulk(None));
        assert!(c.cmd(&["PING"]).is_err());
        assert_eq!(server.stats().requests.load(Ordering::Relaxed), 3);
    }
}
