//! Server executions and shell hooks.
//!
//! A spawned variant runs its own command (any binary: a patched build, valkey-server,
//! another implementation), with `{port}` replaced by a free loopback port and `{dir}` by
//! a fresh working directory, optionally under `taskset -c` for pinning. The runner owns
//! the process: it reads the server's output from a log file (its last lines are shown
//! when the server does not start), waits until it answers `PING`, and stops it with
//! `SHUTDOWN NOSAVE`, killing it if it lingers. An address variant is only checked with
//! `PING`.
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
use std::fs;
use std::io::{self, Read};
use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

static NEXT_DIR: AtomicU64 = AtomicU64::new(0);

/// The file in a server's run directory that names its process: `<pid> <start time>`,
/// the start time in clock ticks since boot as `/proc/<pid>/stat` gives it.
const PID_FILE: &str = "server.pid";

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
    child: Option<Child>,
    pub port: u16,
    pub dir: PathBuf,
    pub command: String,
}

fn free_port() -> io::Result<u16> {
    Ok(std::net::TcpListener::bind(("127.0.0.1", 0))?
        .local_addr()?
        .port())
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
    /// Starts `command` (words with `{port}`/`{dir}` placeholders) and waits for `PING`.
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
        let mut last = None;
        // A port found free can be taken before the server binds it: retry a few times.
        for _ in 0..3 {
            match Self::try_start(variant, command, env, cpus, ready_timeout) {
                Ok(s) => return Ok(s),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| LaunchError::Server {
            variant: variant.into(),
            command: command.join(" "),
            reason: "no attempt was made".into(),
            tail: String::new(),
        }))
    }

    fn try_start(
        variant: &str,
        command: &[String],
        env: &[(String, String)],
        cpus: Option<&str>,
        ready_timeout: Duration,
    ) -> Result<ServerProcess, LaunchError> {
        let fail = |command: String, reason: String, tail: String| LaunchError::Server {
            variant: variant.into(),
            command,
            reason,
            tail,
        };
        let port =
            free_port().map_err(|e| fail(command.join(" "), e.to_string(), String::new()))?;
        let dir = std::env::temp_dir().join(format!(
            "resplab-exp-{}-{}",
            std::process::id(),
            NEXT_DIR.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        let port_s = port.to_string();
        let dir_s = dir.display().to_string();
        let mut words: Vec<String> = command
            .iter()
            .map(|w| crate::words::substitute(w, &[("port", &port_s), ("dir", &dir_s)]))
            .collect();
        if let Some(c) = cpus {
            words.splice(0..0, ["taskset".to_string(), "-c".into(), c.to_string()]);
        }
        let shown = words.join(" ");
        fs::create_dir_all(&dir).map_err(|e| fail(shown.clone(), e.to_string(), String::new()))?;
        let log = fs::File::create(dir.join("server.log"))
            .and_then(|l| Ok((l.try_clone()?, l)))
            .map_err(|e| fail(shown.clone(), e.to_string(), String::new()))?;
        let child = Command::new(&words[0])
            .args(&words[1..])
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(log.0)
            .stderr(log.1)
            // Its own process group: Ctrl-C at the terminal reaches the runner only (it
            // stops the server itself), and a leftover server can be stopped together
            // with any process it started.
            .process_group(0)
            .spawn();
        let child = match child {
            Ok(c) => {
                // Who to stop if this runner dies without cleaning up: the pid and its
                // start time, so that a pid reused by another program is never killed.
                if let Some(start) = process_start_time(c.id()) {
                    let _ = fs::write(dir.join(PID_FILE), format!("{} {start}\n", c.id()));
                }
                c
            }
            Err(e) => {
                let _ = fs::remove_dir_all(&dir);
                return Err(fail(
                    shown,
                    format!("cannot run {}: {e}", words[0]),
                    String::new(),
                ));
            }
        };
        let mut server = ServerProcess {
            child: Some(child),
            port,
            dir,
            command: shown,
        };
        let deadline = Instant::now() + ready_timeout;
        let mut reason;
        loop {
            if let Some(Ok(Some(status))) = server.child.as_mut().map(|c| c.try_wait()) {
                server.child = None;
                reason = format!("it exited with {status}");
                break;
            }
            match ping("127.0.0.1", port, Duration::from_millis(300)) {
                Ok(()) => return Ok(server),
                Err(e) => reason = e,
            }
            if Instant::now() >= deadline {
                reason = format!(
                    "no PONG within {:.1} s (last: {reason})",
                    ready_timeout.as_secs_f64()
                );
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let tail = server.log_tail(20);
        Err(fail(server.command.clone(), reason, tail))
    }

    /// The process id, while it runs (the `taskset` wrapper execs the server, so the
    /// pid is the server's).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The last `n` lines of the server's output.
    pub fn log_tail(&self, n: usize) -> String {
        let text = fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// Stops the server: `SHUTDOWN NOSAVE`, then a kill after 3 s. Idempotent.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Ok(mut c) = Client::connect("127.0.0.1", self.port, Duration::from_millis(500)) {
            let _ = c.call(&["SHUTDOWN", "NOSAVE"]);
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => {
                    // The process group it leads too: a wrapper's children go with it.
                    kill_group(child.id());
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
            }
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop();
        let _ = fs::remove_dir_all(&self.dir);
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
/// crash, a lost terminal) left running, and removes their working directories.
///
/// Every spawned server gets `<tmp>/resplab-exp-<runner pid>-<n>`; a directory whose
/// runner pid no longer exists is an orphan's. Its server is the process its pid file
/// names, if the start time still matches (so a reused pid is never killed), with the
/// process group it leads, wherever its command set its working directory; any other
/// process whose working directory it still is goes too (the `taskset` wrapper execs,
/// so that is the server itself). They are killed: a leftover server would compete with
/// the next trials for CPU and skew them. Directories of live runners, this one
/// included, are left alone. Linux only (it reads `/proc`); elsewhere it finds nothing.
pub fn reap_orphans() -> Vec<Orphan> {
    if !std::path::Path::new("/proc/self").exists() {
        return Vec::new();
    }
    let own = std::process::id();
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return Vec::new();
    };
    let mut dirs: Vec<(u32, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let rest = name.strip_prefix("resplab-exp-")?;
            let (runner, n) = rest.split_once('-')?;
            n.parse::<u64>().ok()?;
            Some((runner.parse::<u32>().ok()?, e.path()))
        })
        .filter(|(runner, _)| *runner != own && !is_running(*runner))
        .collect();
    dirs.sort();
    let mut out = Vec::new();
    for (runner_pid, dir) in dirs {
        let mut pids = Vec::new();
        // The server as recorded at its start, wherever its command moved it (a server
        // given its own `--dir` changes its working directory), and only if it is still
        // the same process (same start time). It leads its own process group: what it
        // started goes with it.
        let recorded = recorded_server(&dir);
        if let Some(pid) = recorded {
            kill_group(pid);
            pids.push(pid);
        }
        for pid in processes_in(&dir) {
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
        for pid in pids {
            let killed = Command::new("kill")
                .args(["-9", &pid.to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if killed || !is_running(pid) {
                out.push(Orphan {
                    pid,
                    runner_pid,
                    dir: dir.clone(),
                });
            }
        }
        let _ = fs::remove_dir_all(&dir);
    }
    out
}

/// The server named by a run directory's pid file, if that very process still runs.
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
/// started), with the `kill` command.
///
/// The `--` matters: without it procps-ng 4.0's `kill -KILL -1234` reads the group's
/// number as something else and signals process group 2 instead, which on some machines
/// holds the session that started us.
pub(crate) fn kill_group(pgid: u32) {
    if pgid <= 1 {
        return;
    }
    let _ = Command::new("kill")
        .args(["-9", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn recorded_server(dir: &std::path::Path) -> Option<u32> {
    let text = fs::read_to_string(dir.join(PID_FILE)).ok()?;
    let mut words = text.split_whitespace();
    let pid: u32 = words.next()?.parse().ok()?;
    let start: u64 = words.next()?.parse().ok()?;
    (process_start_time(pid) == Some(start)).then_some(pid)
}

/// When process `pid` started, in clock ticks since boot (field 22 of
/// `/proc/<pid>/stat`); `None` when it does not exist or that cannot be read.
fn process_start_time(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// Whether a process `pid` exists. A runner's pid reused by another program keeps its
/// directories alive: a missed orphan, never a server of a live run killed.
fn is_running(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The processes whose working directory is `dir`.
fn processes_in(dir: &std::path::Path) -> Vec<u32> {
    let Ok(proc_dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    proc_dir
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let cwd = fs::read_link(e.path().join("cwd")).ok()?;
            (cwd == dir).then_some(pid)
        })
        .collect()
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
        NEXT_DIR.fetch_add(1, Ordering::Relaxed)
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
    let status = fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|s| s.trim().to_string())
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead as _;

    /// Whether `pid` is gone or a zombie waiting for its parent.
    fn dead(pid: u32) -> bool {
        match fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => {
                stat.rfind(')')
                    .and_then(|i| stat[i + 1..].split_whitespace().next())
                    == Some("Z")
            }
        }
    }

    #[test]
    fn kill_group_kills_what_the_leader_started_and_nothing_else() {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 60 & echo $!; wait"])
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut line = String::new();
        io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let grandchild: u32 = line.trim().parse().unwrap();
        assert!(!dead(grandchild));
        kill_group(child.id());
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut leader_gone = false;
        while Instant::now() < deadline {
            leader_gone = leader_gone || child.try_wait().is_ok_and(|s| s.is_some());
            if leader_gone && dead(grandchild) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let survivor = !dead(grandchild);
        if !leader_gone || survivor {
            let _ = Command::new("kill")
                .args(["-9", &grandchild.to_string()])
                .status();
            let _ = child.kill();
        }
        let _ = child.wait();
        assert!(leader_gone, "the group's leader lives on");
        assert!(!survivor, "the group's other member {grandchild} lives on");
        // This test process is still here, and so is its group: nothing else was hit.
        kill_group(0);
        kill_group(1);
    }
}
