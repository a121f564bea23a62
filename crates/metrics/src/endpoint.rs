//! The HTTP endpoint: `GET /metrics` answered with the text of the moment.
//!
//! One thread blocks in `accept` and answers each connection in turn: it reads the
//! request head (at most [`MAX_HEAD`] bytes, within [`IO_TIMEOUT`]), calls the render
//! function and writes one HTTP/1.1 response, then closes the connection. A scraper asks
//! once every few seconds, so one request at a time is plenty, and the thread costs
//! nothing between scrapes. Dropping the [`Endpoint`] stops the thread (a connection to
//! itself wakes the blocked `accept`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Longest request head read.
pub const MAX_HEAD: usize = 8192;

/// Limit for reading a request and writing its response.
pub const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// Why the endpoint could not start.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// The address is not HOST:PORT.
    #[error("--metrics-addr '{addr}': expected HOST:PORT (such as 127.0.0.1:9464 or [::1]:9464): {reason}")]
    Address { addr: String, reason: String },
    /// The address could not be bound.
    #[error("--metrics-addr '{addr}': cannot listen: {source}")]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
}

/// What the endpoint serves: the whole text of one scrape.
pub type Render = Arc<dyn Fn() -> String + Send + Sync>;

/// A running endpoint; stops when dropped.
pub struct Endpoint {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("addr", &self.addr)
            .finish()
    }
}

impl Endpoint {
    /// Listens on `addr` (`HOST:PORT`; port 0 takes a free port) and serves `render`.
    ///
    /// # Errors
    /// [`MetricsError::Address`] for an address that is not HOST:PORT or does not
    /// resolve, [`MetricsError::Bind`] when it cannot be bound.
    pub fn start(addr: &str, render: Render) -> Result<Endpoint, MetricsError> {
        let bad = |reason: String| MetricsError::Address {
            addr: addr.to_string(),
            reason,
        };
        if !addr.contains(':') {
            return Err(bad("no port".into()));
        }
        let resolved = addr
            .to_socket_addrs()
            .map_err(|e| bad(e.to_string()))?
            .next()
            .ok_or_else(|| bad("the host resolves to no address".into()))?;
        let listener = TcpListener::bind(resolved).map_err(|source| MetricsError::Bind {
            addr: addr.to_string(),
            source,
        })?;
        let local = listener.local_addr().map_err(|source| MetricsError::Bind {
            addr: addr.to_string(),
            source,
        })?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("resplab-metrics".into())
            .spawn(move || serve(&listener, &flag, &render))
            .map_err(|source| MetricsError::Bind {
                addr: addr.to_string(),
                source,
            })?;
        Ok(Endpoint {
            addr: local,
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on (the port chosen when 0 was given).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, IO_TIMEOUT);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(listener: &TcpListener, stop: &AtomicBool, render: &Render) {
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        // A scraper that misbehaves loses its answer, never the run.
        if let Ok(mut s) = conn {
            let _ = answer(&mut s, render);
        }
    }
}

/// Reads one request head and writes the response.
fn answer(s: &mut TcpStream, render: &Render) -> std::io::Result<()> {
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    let head = read_head(s)?;
    let line = head.lines().next().unwrap_or_default();
    let mut words = line.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    let (status, body, kind) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => (
            "200 OK",
            render(),
            "text/plain; version=0.0.4; charset=utf-8",
        ),
        ("GET" | "HEAD", _) => (
            "404 Not Found",
            "not found: the metrics are at /metrics\n".into(),
            "text/plain; charset=utf-8",
        ),
        _ => (
            "405 Method Not Allowed",
            "only GET /metrics\n".into(),
            "text/plain; charset=utf-8",
        ),
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if method != "HEAD" {
        out.push_str(&body);
    }
    s.write_all(out.as_bytes())?;
    s.flush()
}

/// The request up to its blank line (or [`MAX_HEAD`] bytes).
fn read_head(s: &mut TcpStream) -> std::io::Result<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while buf.len() < MAX_HEAD && !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = s.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(addr: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_the_text_at_metrics_and_nothing_elsewhere() {
        let e = Endpoint::start("127.0.0.1:0", Arc::new(|| "up 1\n".to_string())).unwrap();
        let a = e.local_addr();
        let ok = get(a, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(ok.starts_with("HTTP/1.1 200 OK\r\n"), "{ok}");
        assert!(ok.contains("version=0.0.4"), "{ok}");
        assert!(ok.ends_with("\r\n\r\nup 1\n"), "{ok}");
        assert!(get(a, "GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(a, "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        drop(e);
        assert!(TcpStream::connect(a).is_err());
    }

    #[test]
    fn bad_addresses_say_what_was_expected() {
        for bad in [
            "9464",
            "no-such-host.invalid:1",
            "127.0.0.1:99999",
            "127.0.0.1:x",
        ] {
            let e = Endpoint::start(bad, Arc::new(String::new))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(&format!("--metrics-addr '{bad}'")), "{e}");
        }
    }
}
