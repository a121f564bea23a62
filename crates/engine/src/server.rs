//! [`ThrowawayServer`]: a `redis-server` started for one run and stopped after it.
//!
//! When no target is given, `resplab bench` runs against a fresh server: a free loopback
//! port is picked, `redis-server` from `PATH` is started in its own temporary directory
//! with persistence off (`--save '' --appendonly no`), and the engine waits until it
//! answers `PING`. Dropping the value stops the server with `SHUTDOWN NOSAVE` (killing it
//! if it lingers) and removes the directory. The experiment runner uses the same type for
//! variants it starts itself, with extra arguments.
//!
//! The port is found by binding port 0 and releasing it, so another process can take it
//! before the server binds; start-up therefore retries a few times with fresh ports.

use std::fs;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How a throwaway server failed to start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The binary is not installed.
    #[error("{binary} is not on PATH; install it (Debian/Ubuntu: apt-get install redis-server) or give a target with --host/--port or --socket")]
    NotInstalled { binary: String },
    /// The process could not be spawned or its directory created.
    #[error("cannot start {binary}: {source}")]
    Spawn {
        binary: String,
        #[source]
        source: io::Error,
    },
    /// It exited or did not answer `PING` in time.
    #[error("{binary} did not become ready: {reason}; last lines of its output:\n{log_tail}")]
    NotReady {
        binary: String,
        reason: String,
        log_tail: String,
    },
}

static NEXT_DIR: AtomicU64 = AtomicU64::new(0);

/// Options for [`ThrowawayServer::start_with`].
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Program to run (default `redis-server`, looked up on `PATH`).
    pub binary: String,
    /// Extra command-line arguments, appended after resplab's own.
    pub extra_args: Vec<String>,
    /// How long to wait for `PING` to succeed.
    pub ready_timeout: Duration,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            binary: "redis-server".into(),
            extra_args: Vec::new(),
            ready_timeout: Duration::from_secs(10),
        }
    }
}

/// A running server owned by this process; stopped on drop.
#[derive(Debug)]
pub struct ThrowawayServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
    binary: String,
}

impl ThrowawayServer {
    /// Starts `redis-server` with default options.
    ///
    /// # Errors
    /// [`ServerError::NotInstalled`] when `redis-server` is not on `PATH`; otherwise
    /// when it cannot be spawned or does not answer `PING` within 10 s.
    pub fn start() -> Result<ThrowawayServer, ServerError> {
        Self::start_with(&ServerOptions::default())
    }

    /// Starts a server with the given options.
    ///
    /// # Errors
    /// As [`ThrowawayServer::start`].
    pub fn start_with(opts: &ServerOptions) -> Result<ThrowawayServer, ServerError> {
        let mut last = None;
        for _ in 0..4 {
            match Self::try_start(opts) {
                Ok(s) => return Ok(s),
                Err(e @ ServerError::NotInstalled { .. }) => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| ServerError::NotReady {
            binary: opts.binary.clone(),
            reason: "no attempt was made".into(),
            log_tail: String::new(),
        }))
    }

    fn try_start(opts: &ServerOptions) -> Result<ThrowawayServer, ServerError> {
        let spawn_err = |source| ServerError::Spawn {
            binary: opts.binary.clone(),
            source,
        };
        let port = std::net::TcpListener::bind(("127.0.0.1", 0))
            .and_then(|l| l.local_addr())
            .map_err(spawn_err)?
            .port();
        let dir = std::env::temp_dir().join(format!(
            "resplab-server-{}-{}",
            std::process::id(),
            NEXT_DIR.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(spawn_err)?;
        let log = fs::File::create(dir.join("server.log")).map_err(spawn_err)?;
        let log2 = log.try_clone().map_err(spawn_err)?;
        let child = Command::new(&opts.binary)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(&dir)
            .args(&opts.extra_args)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .spawn();
        let child = match child {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let _ = fs::remove_dir_all(&dir);
                return Err(ServerError::NotInstalled {
                    binary: opts.binary.clone(),
                });
            }
            Err(e) => {
                let _ = fs::remove_dir_all(&dir);
                return Err(spawn_err(e));
            }
        };
        let mut server = ThrowawayServer {
            child: Some(child),
            port,
            dir,
            binary: opts.binary.clone(),
        };
        server.wait_ready(opts.ready_timeout)?;
        Ok(server)
    }

    fn wait_ready(&mut self, timeout: Duration) -> Result<(), ServerError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    self.child = None;
                    return Err(self.not_ready(format!("it exited with {status}")));
                }
            }
            let last_reason = match ping(self.port, Duration::from_millis(500)) {
                Ok(()) => return Ok(()),
                Err(e) => e.to_string(),
            };
            if Instant::now() >= deadline {
                return Err(self.not_ready(format!(
                    "no PONG within {:.1} s (last attempt: {last_reason})",
                    timeout.as_secs_f64()
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn not_ready(&self, reason: String) -> ServerError {
        ServerError::NotReady {
            binary: self.binary.clone(),
            reason,
            log_tail: self.log_tail(),
        }
    }

    /// The last 20 lines of the server's output.
    pub fn log_tail(&self) -> String {
        let text = fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Always `127.0.0.1`.
    pub fn host(&self) -> &'static str {
        "127.0.0.1"
    }

    /// The server's working directory (removed on drop).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The process id of the server, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Stops the server now: `SHUTDOWN NOSAVE`, then a kill after 3 s. Idempotent.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) {
            let _ = s.set_write_timeout(Some(Duration::from_millis(500)));
            let _ = s.write_all(b"*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n");
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            match child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return;
                }
            }
        }
    }
}

impl Drop for ThrowawayServer {
    fn drop(&mut self) {
        self.stop();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Sends `PING` and expects `+PONG`.
fn ping(port: u16, timeout: Duration) -> io::Result<()> {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut s = TcpStream::connect_timeout(&addr, timeout)?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    s.write_all(b"PING\r\n")?;
    let mut buf = [0u8; 64];
    let mut got = 0;
    while got < 7 {
        let n = s.read(&mut buf[got..])?;
        if n == 0 {
            break;
        }
        got += n;
    }
    if buf[..got].starts_with(b"+PONG\r\n") {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "expected +PONG, found {:?}",
            String::from_utf8_lossy(&buf[..got])
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_binary_says_how_to_install() {
        let err = ThrowawayServer::start_with(&ServerOptions {
            binary: "resplab-no-such-server-binary".into(),
            ..ServerOptions::default()
        })
        .unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ServerError::NotInstalled { .. }));
        assert!(text.contains("apt-get install redis-server"), "{text}");
    }

    #[test]
    fn bad_arguments_show_the_log() {
        let err = ThrowawayServer::start_with(&ServerOptions {
            extra_args: vec!["--no-such-option".into(), "1".into()],
            ready_timeout: Duration::from_secs(5),
            ..ServerOptions::default()
        })
        .unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ServerError::NotReady { .. }), "{text}");
        assert!(text.contains("no-such-option"), "{text}");
    }

    #[test]
    fn starts_and_stops() {
        let mut s = ThrowawayServer::start().unwrap();
        ping(s.port(), Duration::from_secs(1)).unwrap();
        let dir = s.dir().to_path_buf();
        s.stop();
        assert!(ping(s.port(), Duration::from_millis(200)).is_err());
        drop(s);
        assert!(!dir.exists());
    }
}
