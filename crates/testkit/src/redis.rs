//! A real `redis-server` for integration tests.
//!
//! [`RedisServer::start`] picks a free loopback port, starts `redis-server` from `PATH`
//! in a fresh temporary directory with persistence off, and waits until it answers `PING`,
//! all through the production process starter (`resplab_sys::process`), so tests run the
//! same start, stop and reaping code as resplab.
//! Dropping the value stops the server (`SHUTDOWN NOSAVE`, then a kill if it lingers) and
//! removes the directory. [`RedisServer::kill`] ends it abruptly, for tests of a server
//! that goes away mid-run.

use crate::client::{Client, Reply};
use resplab_sys::process::{Server, Spec, StartError};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const READY_TIMEOUT: Duration = Duration::from_secs(10);
const PROBE_EVERY: Duration = Duration::from_millis(10);

/// A running `redis-server` owned by a test.
#[derive(Debug)]
pub struct RedisServer {
    server: Server,
    socket: Option<PathBuf>,
}

impl RedisServer {
    /// Starts a server with default settings.
    ///
    /// # Errors
    /// When `redis-server` is not on `PATH` or does not answer `PING` within 10 s.
    pub fn start() -> io::Result<RedisServer> {
        Self::start_with(&[], false)
    }

    /// Starts a server that also listens on a Unix socket (see [`RedisServer::socket_path`]).
    ///
    /// # Errors
    /// As [`RedisServer::start`].
    pub fn start_with_socket() -> io::Result<RedisServer> {
        Self::start_with(&[], true)
    }

    /// Starts a server with extra command-line arguments (e.g. `["--requirepass", "pw"]`),
    /// through the production process starter (`resplab_sys::process`).
    ///
    /// # Errors
    /// As [`RedisServer::start`].
    pub fn start_with(extra: &[&str], unix_socket: bool) -> io::Result<RedisServer> {
        let words = |port: u16, dir: &Path| {
            let mut args: Vec<OsString> = vec!["redis-server".into()];
            for a in ["--port", &port.to_string(), "--bind", "127.0.0.1"] {
                args.push(a.into());
            }
            for a in ["--save", "", "--appendonly", "no", "--dir"] {
                args.push(a.into());
            }
            args.push(dir.into());
            if unix_socket {
                args.push("--unixsocket".into());
                args.push(dir.join("redis.sock").into());
                args.push("--unixsocketperm".into());
                args.push("700".into());
            }
            args.extend(extra.iter().map(OsString::from));
            args
        };
        let spec = Spec {
            label: "testkit",
            words: &words,
            env: &[],
            ready_timeout: READY_TIMEOUT,
            probe_every: PROBE_EVERY,
            attempts: 5,
        };
        let server = Server::start(&spec, &mut probe).map_err(start_error)?;
        let socket = unix_socket.then(|| server.dir().join("redis.sock"));
        Ok(RedisServer { server, socket })
    }

    /// Starts the server again on the same port, folder and settings (after
    /// [`RedisServer::kill`], or killing it first): a server that comes back.
    ///
    /// # Errors
    /// As [`RedisServer::start`].
    pub fn restart(&mut self) -> io::Result<()> {
        self.server
            .restart(READY_TIMEOUT, PROBE_EVERY, &mut probe)
            .map_err(start_error)
    }

    /// The last lines of the server's log.
    pub fn log_tail(&self) -> String {
        self.server.log_tail(20)
    }

    /// The TCP port the server listens on (loopback).
    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port())
    }

    /// The Unix socket path, when started with [`RedisServer::start_with_socket`].
    pub fn socket_path(&self) -> Option<&Path> {
        self.socket.as_deref()
    }

    /// A new blocking client connected to the server.
    ///
    /// # Errors
    /// When the server does not accept the connection.
    pub fn client(&self) -> io::Result<Client> {
        Client::connect(&self.addr())
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.server.pid()
    }

    /// Sends a signal by name (`"STOP"`, `"CONT"`, `"TERM"`) with the `kill` command.
    ///
    /// # Errors
    /// When the server is not running or `kill` fails.
    pub fn signal(&self, name: &str) -> io::Result<()> {
        let pid = self
            .pid()
            .ok_or_else(|| io::Error::other("the server is not running"))?;
        let status = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(pid.to_string())
            .status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "kill -{name} {pid} failed: {status}"
            )))
        }
    }

    /// Kills the server at once (SIGKILL) and waits for it to exit.
    pub fn kill(&mut self) {
        self.server.kill();
    }
}

impl Drop for RedisServer {
    /// `SHUTDOWN NOSAVE`, then a kill if it lingers; the run directory goes with the
    /// inner [`Server`].
    fn drop(&mut self) {
        if self.server.pid().is_none() {
            return;
        }
        let mut refused = false;
        if let Ok(mut c) = self.client() {
            // A password-protected server refuses SHUTDOWN: kill it instead.
            refused = matches!(c.cmd(&["SHUTDOWN", "NOSAVE"]), Ok(Reply::Error(_)));
        }
        let grace = if refused {
            Duration::ZERO
        } else {
            Duration::from_secs(3)
        };
        if !self.server.wait_exit(grace, PROBE_EVERY) {
            self.server.kill();
        }
    }
}

/// Ready when it answers `PING` (or, with a password, refuses it with `NOAUTH`).
fn probe(port: u16) -> Result<(), String> {
    let mut c = Client::connect(&format!("127.0.0.1:{port}")).map_err(|e| e.to_string())?;
    match c.cmd(&["PING"]) {
        Ok(Reply::Simple(s)) if s == "PONG" => Ok(()),
        // A server with a password answers, just not to PING.
        Ok(Reply::Error(e)) if e.starts_with("NOAUTH") => Ok(()),
        other => Err(format!("{other:?}")),
    }
}

/// The starter's error in the words tests have always seen.
fn start_error(e: StartError) -> io::Error {
    match e {
        StartError::NotFound { .. } => io::Error::new(
            io::ErrorKind::NotFound,
            "redis-server is not on PATH (install it: apt-get install redis-server)",
        ),
        StartError::Io { what, source, .. } => {
            io::Error::new(source.kind(), format!("{what}: {source}"))
        }
        StartError::NotReady {
            exited: Some(status),
            log_tail,
            ..
        } => io::Error::other(format!(
            "redis-server exited with {status} before answering PING; log:\n{log_tail}"
        )),
        StartError::NotReady {
            exited: None,
            log_tail,
            ..
        } => io::Error::new(
            io::ErrorKind::TimedOut,
            format!("redis-server did not answer PING within {READY_TIMEOUT:?}; log:\n{log_tail}"),
        ),
    }
}
