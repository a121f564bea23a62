//! [`ThrowawayServer`]: a `redis-server` started for one run and stopped after it.
//!
//! When no target is given, `resplab bench` runs against a fresh server: a free loopback
//! port is picked, `redis-server` from `PATH` is started in its own temporary directory
//! with persistence off (`--save '' --appendonly no`), and the engine waits until it
//! answers `PING`. Dropping the value stops the server with `SHUTDOWN NOSAVE` (killing it
//! if it lingers) and removes the directory.
//!
//! The process itself (run directory, port, log, readiness wait, parent-death signal,
//! reaping of what a killed run left) is [`resplab_sys::process`]'s; this module adds
//! what a Redis-compatible server needs: its arguments, `PING` as the readiness probe and
//! `SHUTDOWN NOSAVE` as the polite stop. A port found free can be taken before the server
//! binds it; start-up therefore retries a few times with fresh ports.

use resplab_sys::process::{Server, Spec, StartError};
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

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
    server: Server,
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

    /// Starts a server with the given options (through [`resplab_sys::process`]: it dies
    /// with this process, and what a killed run left is reaped first).
    ///
    /// # Errors
    /// As [`ThrowawayServer::start`].
    pub fn start_with(opts: &ServerOptions) -> Result<ThrowawayServer, ServerError> {
        let words = |port: u16, dir: &Path| {
            let mut w: Vec<OsString> = vec![opts.binary.clone().into()];
            for a in ["--port", &port.to_string(), "--bind", "127.0.0.1"] {
                w.push(a.into());
            }
            for a in ["--save", "", "--appendonly", "no", "--dir"] {
                w.push(a.into());
            }
            w.push(dir.into());
            w.extend(opts.extra_args.iter().map(OsString::from));
            w
        };
        let spec = Spec {
            label: "server",
            words: &words,
            env: &[],
            ready_timeout: opts.ready_timeout,
            probe_every: Duration::from_millis(10),
            attempts: 4,
        };
        let mut probe = |port| ping(port, Duration::from_millis(500)).map_err(|e| e.to_string());
        let binary = opts.binary.clone();
        match Server::start(&spec, &mut probe) {
            Ok(server) => Ok(ThrowawayServer { server }),
            Err(StartError::NotFound { .. }) => Err(ServerError::NotInstalled { binary }),
            Err(StartError::Io { source, .. }) => Err(ServerError::Spawn { binary, source }),
            Err(StartError::NotReady {
                exited,
                last_probe,
                log_tail,
                ..
            }) => Err(ServerError::NotReady {
                binary,
                reason: match exited {
                    Some(status) => format!("it exited with {status}"),
                    None => format!(
                        "no PONG within {:.1} s (last attempt: {last_probe})",
                        opts.ready_timeout.as_secs_f64()
                    ),
                },
                log_tail,
            }),
        }
    }

    /// The last 20 lines of the server's output.
    pub fn log_tail(&self) -> String {
        self.server.log_tail(20)
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// Always `127.0.0.1`.
    pub fn host(&self) -> &'static str {
        "127.0.0.1"
    }

    /// The server's working directory (removed on drop).
    pub fn dir(&self) -> &Path {
        self.server.dir()
    }

    /// The process id of the server, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.server.pid()
    }

    /// Stops the server now: `SHUTDOWN NOSAVE`, then a kill after 3 s. Idempotent.
    pub fn stop(&mut self) {
        if self.server.pid().is_none() {
            return;
        }
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.server.port())) {
            let _ = s.set_write_timeout(Some(Duration::from_millis(500)));
            let _ = s.write_all(b"*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n");
        }
        if !self
            .server
            .wait_exit(Duration::from_secs(3), Duration::from_millis(5))
        {
            self.server.kill();
        }
    }
}

impl Drop for ThrowawayServer {
    /// Stops the server; the run directory goes with the inner [`Server`].
    fn drop(&mut self) {
        self.stop();
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
