//! Server executions and shell hooks.
//!
//! A spawned variant runs its own command (any binary: a patched build, valkey-server,
//! another implementation), with `{port}` replaced by a free loopback port, `{respb_port}`
//! by a second one (the RESPB port of `resplab serve --respb-port`) and `{dir}` by a
//! fresh working directory, optionally under `taskset -c` for pinning. The runner owns
//! the process, started through `resplab_sys::process` (which also makes it die with
//! the runner and reaps what a killed runner left): it reads the server's output from a
//! log file (its last lines are shown when the server does not start), waits until it
//! answers `PING`, and stops it with `SHUTDOWN NOSAVE`, killing its process group if it
//! lingers. An address variant is only checked with `PING`.
//!
//! Hooks are `sh -c` commands with a timeout; their output is kept to show when they
//! fail. They see `RESPLAB_PORT`, `RESPLAB_HOST`, `RESPLAB_VARIANT` and the variant's
//! `env`.
//!
//! Client pinning: the load generator's threads are pinned by running
//! `taskset -a -p -c LIST <own pid>` on this process for the duration of a trial (all
//! threads, including worker threads started later, which inherit the mask), and the
//! original mask is restored afterwards. This needs no unsafe code.

use crate::client::Client;
use resplab_sys::process::{Server, Spec, StartError};
use std::ffi::OsString;
use std::fs;
use std::io::{self, Read};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

static NEXT_HOOK_LOG: AtomicU64 = AtomicU64::new(0);

/// Why a server or hook failed.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("variant `{variant}`: server command `{command}` did not start: {reason}\nlast lines of its output:\n{tail}")]
    Server {
        variant: String,
        command: String,
        reason: String,
        tail: String,
    },
    #[error("variant `{variant}`: server at {address} does not answer PING: {reason}")]
    Address {
        variant: String,
        address: String,
        reason: String,
    },
    #[error("variant `{variant}`: {hook} hook `{command}` {reason}\nits output:\n{output}")]
    Hook {
        variant: String,
        hook: String,
        command: String,
        reason: String,
        output: String,
    },
    #[error("variant `{variant}`: {what} failed: {reason}")]
    Control {
        variant: String,
        what: String,
        reason: String,
    },
}

/// A server process started for one execution.
#[derive(Debug)]
pub struct ServerProcess {
    server: Server,
    pub port: u16,
    /// The port given as `{respb_port}`, when the command has that placeholder.
    pub respb_port: Option<u16>,
    pub dir: PathBuf,
    pub command: String,
}

/// The launch error of a server that did not start, with its command, the reason and
/// the last lines of its output.
fn start_error(variant: &str, e: StartError, ready_timeout: Duration) -> LaunchError {
    let fail = |command: String, reason: String, tail: String| LaunchError::Server {
        variant: variant.into(),
        command,
        reason,
        tail,
    };
    match e {
        StartError::NotFound { program, command } => fail(
            command,
            format!("cannot run {program}: {}", io::Error::from_raw_os_error(2)),
            String::new(),
        ),
        StartError::Io {
            what,
            command,
            source,
        } => fail(command, format!("{what}: {source}"), String::new()),
        StartError::NotReady {
            command,
            exited,
            last_probe,
            log_tail,
        } => {
            let reason = match exited {
                Some(status) => format!("it exited with {status}"),
                None => format!(
                    "no PONG within {:.1} s (last: {last_probe})",
                    ready_timeout.as_secs_f64()
                ),
            };
            fail(command, reason, log_tail)
        }
    }
}

/// Answers whether `host:port` replies `PONG`.
pub fn ping(host: &str, port: u16, timeout: Duration) -> Result<(), String> {
    let mut c = Client::connect(host, port, timeout).map_err(|e| e.to_string())?;
    match c.call(&["PING"]) {
        Ok(r) if r.text() == "PONG" => Ok(()),
        Ok(r) => Err(format!("expected PONG, found {:?}", r.text())),
        Err(e) => Err(e.to_string()),
    }
}

/// Answers whether the server of `cfg` (its target, TLS, user and password) replies
/// `PONG` after the connection set-up.
///
/// # Errors
/// What failed, in words.
pub fn ping_with(cfg: &resplab_engine::RunConfig, timeout: Duration) -> Result<(), String> {
    let mut c = Client::connect_with(cfg, timeout).map_err(|e| e.to_string())?;
    match c.call(&["PING"]) {
        Ok(r) if r.text() == "PONG" => Ok(()),
        Ok(r) => Err(format!("expected PONG, found {:?}", r.text())),
        Err(e) => Err(e.to_string()),
    }
}

impl ServerProcess {
    /// Starts `command` (words with `{port}`/`{respb_port}`/`{dir}` placeholders) and
    /// waits for `PING` on `{port}`.
    ///
    /// # Errors
    /// [`LaunchError::Server`] with the command and the last lines of its output.
    pub fn start(
        variant: &str,
        command: &[String],
        env: &[(String, String)],
        cpus: Option<&str>,
        ready_timeout: Duration,
    ) -> Result<ServerProcess, LaunchError> {
        // A fresh RESPB port with every attempt: a lost race for either port is retried.
        let wants_respb = command.iter().any(|w| w.contains("{respb_port}"));
        let respb_port = std::cell::Cell::new(None);
        let words = |port: u16, dir: &Path| -> Vec<OsString> {
            let port_s = port.to_string();
            let dir_s = dir.display().to_string();
            let respb = if wants_respb {
                respb_port.set(resplab_sys::port::free_port().ok());
                respb_port.get()
            } else {
                None
            };
            let respb_s = respb.map_or_else(|| "{respb_port}".to_string(), |p| p.to_string());
            let fill = [
                ("port", port_s.as_str()),
                ("respb_port", respb_s.as_str()),
                ("dir", dir_s.as_str()),
            ];
            let mut words: Vec<OsString> = command
                .iter()
                .map(|w| crate::words::substitute(w, &fill).into())
                .collect();
            if let Some(c) = cpus {
                words.splice(0..0, ["taskset".into(), "-c".into(), c.into()]);
            }
            words
        };
        let spec = Spec {
            label: "exp",
            words: &words,
            env,
            ready_timeout,
            probe_every: Duration::from_millis(20),
            // A port found free can be taken before the server binds it: retry a few times.
            attempts: 3,
        };
        let mut probe = |port| ping("127.0.0.1", port, Duration::from_millis(300));
        let fail = |command: String, reason: String, tail: String| LaunchError::Server {
            variant: variant.into(),
            command,
            reason,
            tail,
        };
        match Server::start(&spec, &mut probe) {
            Ok(_) if wants_respb && respb_port.get().is_none() => Err(fail(
                command.join(" "),
                "no free port was found for {respb_port}".into(),
                String::new(),
            )),
            Ok(server) => Ok(ServerProcess {
                port: server.port(),
                respb_port: respb_port.get(),
                dir: server.dir().to_path_buf(),
                command: server.command(),
                server,
            }),
            Err(e) => Err(start_error(variant, e, ready_timeout)),
        }
    }

    /// The process id, while it runs (the `taskset` wrapper execs the server, so the
    /// pid is the server's).
    pub fn pid(&self) -> Option<u32> {
        self.server.pid()
    }

    /// The last `n` lines of the server's output.
    pub fn log_tail(&self, n: usize) -> String {
        self.server.log_tail(n)
    }

    /// Stops the server: `SHUTDOWN NOSAVE`, then a kill of its process group (a
    /// wrapper's children go with it) after 3 s. Idempotent.
    pub fn stop(&mut self) {
        if self.server.pid().is_none() {
            return;
        }
        if let Ok(mut c) = Client::connect("127.0.0.1", self.port, Duration::from_millis(500)) {
            let _ = c.call(&["SHUTDOWN", "NOSAVE"]);
        }
        if !self
            .server
            .wait_exit(Duration::from_secs(3), Duration::from_millis(10))
        {
            self.server.kill();
        }
    }
}

impl Drop for ServerProcess {
    /// Stops the server; the run directory goes with the inner [`Server`].
    fn drop(&mut self) {
        self.stop();
    }
}

/// A server that an interrupted run left behind and [`reap_orphans`] stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Orphan {
    /// The server's process id.
    pub pid: u32,
    /// The runner that started it (no longer running).
    pub runner_pid: u32,
    /// Its working directory, now removed.
    pub dir: PathBuf,
}

/// Stops the servers that a runner killed without a chance to clean up (`kill -9`, a
/// crash, a lost terminal) left running, and removes their run directories: the reaping
/// of [`resplab_sys::process::reap_leftovers`], which every server start also does,
/// here for the runner to report what it found. A leftover server would compete with the
/// next trials for CPU and skew them.
pub fn reap_orphans() -> Vec<Orphan> {
    resplab_sys::process::reap_leftovers()
        .into_iter()
        .map(|l| Orphan {
            pid: l.pid,
            runner_pid: l.owner_pid,
            dir: l.dir,
        })
        .collect()
}

/// A child started in its own process group with its standard output and error read by
/// two threads (each up to a limit), so a chatty child never blocks on a full pipe.
#[derive(Debug)]
pub struct Captured {
    pub child: Child,
    stdout: std::thread::JoinHandle<Vec<u8>>,
    stderr: std::thread::JoinHandle<Vec<u8>>,
}

impl Captured {
    /// Spawns `cmd` (stdin closed, stdout and stderr piped, its own process group).
    ///
    /// # Errors
    /// When the program cannot be started.
    pub fn spawn(cmd: &mut Command, out_limit: u64, err_limit: u64) -> io::Result<Captured> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()?;
        let reader = |s: Option<Box<dyn Read + Send>>, limit: u64| {
            std::thread::spawn(move || {
                let mut b = Vec::new();
                if let Some(s) = s {
                    let _ = s.take(limit).read_to_end(&mut b);
                }
                b
            })
        };
        let stdout = reader(
            child.stdout.take().map(|s| Box::new(s) as Box<_>),
            out_limit,
        );
        let stderr = reader(
            child.stderr.take().map(|s| Box::new(s) as Box<_>),
            err_limit,
        );
        Ok(Captured {
            child,
            stdout,
            stderr,
        })
    }

    /// Kills the child's whole group (what it started may still hold the pipes open) and
    /// returns what it printed: (stdout, stderr).
    pub fn finish(mut self) -> (Vec<u8>, Vec<u8>) {
        kill_group(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
        (
            self.stdout.join().unwrap_or_default(),
            self.stderr.join().unwrap_or_default(),
        )
    }
}

/// The last `n` non-empty lines of `bytes`, joined by ` | `, for messages: control
/// characters escaped ([`printable`]) and at most [`TAIL_CHARS`] characters kept, so a
/// program's output can neither drive the terminal nor flood it.
pub fn last_lines(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let joined = lines[lines.len().saturating_sub(n)..].join(" | ");
    let shown = printable(&joined);
    let count = shown.chars().count();
    if count <= TAIL_CHARS {
        return shown;
    }
    let tail: String = shown.chars().skip(count - TAIL_CHARS).collect();
    format!("…{tail}")
}

/// How many characters of a program's output a message quotes at most.
pub const TAIL_CHARS: usize = 600;

/// `text` with every control character (escape sequences, bells, carriage returns,
/// backspaces) and every bidirectional override shown as an escape (`\u{1b}`), so
/// text from another program can be printed to a terminal as it is.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if (c.is_control() && c != '\t') || bidi {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Sends SIGKILL to the process group `pgid` leads (a launcher or server and what it
/// started).
pub(crate) fn kill_group(pgid: u32) {
    resplab_sys::process::kill_group(pgid);
}

/// Runs a hook with `sh -c`, killing it after `timeout`.
///
/// # Errors
/// [`LaunchError::Hook`] when it exits non-zero, cannot start, or times out; the error
/// carries its output.
pub fn run_hook(
    variant: &str,
    hook: &str,
    command: &str,
    env: &[(String, String)],
    timeout: Duration,
) -> Result<(), LaunchError> {
    let out_path = std::env::temp_dir().join(format!(
        "resplab-hook-{}-{}.log",
        std::process::id(),
        NEXT_HOOK_LOG.fetch_add(1, Ordering::Relaxed)
    ));
    let fail = |reason: String, output: String| LaunchError::Hook {
        variant: variant.into(),
        hook: hook.into(),
        command: command.into(),
        reason,
        output,
    };
    let file = fs::File::create(&out_path)
        .and_then(|f| Ok((f.try_clone()?, f)))
        .map_err(|e| fail(format!("cannot start: {e}"), String::new()))?;
    let child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(file.0)
        .stderr(file.1)
        .spawn();
    let mut child = child.map_err(|e| fail(format!("cannot start: {e}"), String::new()))?;
    let deadline = Instant::now() + timeout;
    let result = loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break Ok(()),
            Ok(Some(status)) => break Err(format!("failed ({status})")),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(format!(
                    "timed out after {:.1} s and was killed",
                    timeout.as_secs_f64()
                ));
            }
            Err(e) => break Err(e.to_string()),
        }
    };
    let mut output = String::new();
    if let Ok(mut f) = fs::File::open(&out_path) {
        let mut buf = Vec::new();
        let _ = f.by_ref().take(1 << 20).read_to_end(&mut buf);
        output = String::from_utf8_lossy(&buf).into_owned();
    }
    let _ = fs::remove_file(&out_path);
    let lines: Vec<&str> = output.lines().collect();
    let tail = lines[lines.len().saturating_sub(30)..].join("\n");
    result.map_err(|reason| fail(reason, tail))
}

/// The CPU list this process may run on now (`Cpus_allowed_list`), if readable.
pub fn own_cpu_list() -> Option<String> {
    resplab_sys::proc::cpus_allowed_list()
}

/// Pins every thread of this process to `cpus` with `taskset -a -p -c`.
///
/// # Errors
/// A message with `taskset`'s output when it is missing or refuses.
pub fn pin_self(cpus: &str) -> Result<(), String> {
    let out = Command::new("taskset")
        .args(["-a", "-p", "-c", cpus, &std::process::id().to_string()])
        .output()
        .map_err(|e| format!("cannot run taskset (util-linux): {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "taskset -a -p -c {cpus} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
