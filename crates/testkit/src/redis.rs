//! A real `redis-server` for integration tests.
//!
//! [`RedisServer::start`] picks a free loopback port, starts `redis-server` from `PATH`
//! in a fresh temporary directory with persistence off, and waits until it answers `PING`.
//! Dropping the value stops the server (`SHUTDOWN NOSAVE`, then a kill if it lingers) and
//! removes the directory. [`RedisServer::kill`] ends it abruptly, for tests of a server
//! that goes away mid-run.

use crate::client::{Client, Reply};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

static NEXT_DIR: AtomicU64 = AtomicU64::new(0);

/// A running `redis-server` owned by a test.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
    socket: Option<PathBuf>,
    /// The whole command line after `redis-server`, for [`RedisServer::restart`].
    args: Vec<std::ffi::OsString>,
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

    /// Starts a server with extra command-line arguments (e.g. `["--requirepass", "pw"]`).
    ///
    /// # Errors
    /// As [`RedisServer::start`].
    pub fn start_with(extra: &[&str], unix_socket: bool) -> io::Result<RedisServer> {
        let mut last_err = None;
        for _ in 0..5 {
            match Self::try_start(extra, unix_socket) {
                Ok(s) => return Ok(s),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(e),
                Err(e) => last_err = Some(e),
            }
        }
        Err(last_err.unwrap_or_else(|| io::Error::other("redis-server did not start")))
    }

    fn try_start(extra: &[&str], unix_socket: bool) -> io::Result<RedisServer> {
        let port = crate::free_port()?;
        let dir = std::env::temp_dir().join(format!(
            "resplab-testkit-{}-{}",
            std::process::id(),
            NEXT_DIR.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir)?;
        let socket = unix_socket.then(|| dir.join("redis.sock"));
        let mut args: Vec<std::ffi::OsString> = Vec::new();
        for a in ["--port", &port.to_string(), "--bind", "127.0.0.1"] {
            args.push(a.into());
        }
        for a in ["--save", "", "--appendonly", "no", "--dir"] {
            args.push(a.into());
        }
        args.push(dir.clone().into());
        if let Some(path) = &socket {
            args.push("--unixsocket".into());
            args.push(path.clone().into());
            args.push("--unixsocketperm".into());
            args.push("700".into());
        }
        args.extend(extra.iter().map(std::ffi::OsString::from));
        let child = Self::spawn(&dir, &args)?;
        let mut server = RedisServer {
            child: Some(child),
            port,
            dir,
            socket,
            args,
        };
        server.wait_ready(Duration::from_secs(10))?;
        Ok(server)
    }

    /// Starts the server again on the same port, folder and settings (after
    /// [`RedisServer::kill`], or killing it first): a server that comes back.
    ///
    /// # Errors
    /// As [`RedisServer::start`].
    pub fn restart(&mut self) -> io::Result<()> {
        self.kill();
        self.child = Some(Self::spawn(&self.dir, &self.args)?);
        self.wait_ready(Duration::from_secs(10))
    }

    fn spawn(dir: &Path, args: &[std::ffi::OsString]) -> io::Result<Child> {
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("redis.log"))?;
        let mut cmd = Command::new("redis-server");
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        cmd.spawn().map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    "redis-server is not on PATH (install it: apt-get install redis-server)",
                )
            } else {
                e
            }
        })
    }

    fn wait_ready(&mut self, timeout: Duration) -> io::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Some(status) = child.try_wait()? {
                    self.child = None;
                    return Err(io::Error::other(format!(
                        "redis-server exited with {status} before answering PING; log:\n{}",
                        self.log_tail()
                    )));
                }
            }
            if let Ok(mut c) = Client::connect(&self.addr()) {
                match c.cmd(&["PING"]) {
                    Ok(Reply::Simple(s)) if s == "PONG" => return Ok(()),
                    // A server with a password answers, just not to PING.
                    Ok(Reply::Error(e)) if e.starts_with("NOAUTH") => return Ok(()),
                    _ => {}
                }
            }
            if Instant::now() > deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "redis-server did not answer PING within {timeout:?}; log:\n{}",
                        self.log_tail()
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The last lines of the server's log.
    pub fn log_tail(&self) -> String {
        let text = fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// The TCP port the server listens on (loopback).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
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
        self.child.as_ref().map(Child::id)
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
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let mut refused = false;
            if let Ok(mut c) = self.client() {
                // A password-protected server refuses SHUTDOWN: kill it instead.
                refused = matches!(c.cmd(&["SHUTDOWN", "NOSAVE"]), Ok(Reply::Error(_)));
            }
            let deadline = if refused {
                Instant::now()
            } else {
                Instant::now() + Duration::from_secs(3)
            };
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => break,
                    Ok(None) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    _ => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                }
            }
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}
