//! The one way to start a server process, and to clean up after a run that was killed.
//!
//! [`Server::start`] gives every server:
//!
//! - a fresh **run directory**, `<tmp>/resplab-<label>-<owner pid>-<n>`, which is also its
//!   working directory, with its output in `server.log` there;
//! - a **free loopback port** ([`crate::port`]), substituted into its command by the
//!   caller; a port found free can be taken before the server binds it, so start-up is
//!   tried again with a fresh port and directory;
//! - a **readiness probe** the caller passes (a closure of the port), so this crate knows
//!   no protocol; the process exiting first ends the wait at once;
//! - its **own process group**: Ctrl-C at a terminal reaches resplab only, which stops the
//!   server itself, and [`Server::kill`] takes along whatever the server started;
//! - a **parent-death signal**: the command runs under util-linux's
//!   `setpriv --pdeathsig KILL`, which asks the kernel to kill the server when the thread
//!   that started it ends, so no server outlives a resplab that was killed (`kill -9`, a
//!   crash, a lost terminal). `setpriv` execs the server, so the pid is the server's. The
//!   signal follows the starting *thread*: start servers from a thread that lives as long
//!   as they do. Where `setpriv` is not installed the server starts without it, and the
//!   next run reaps it;
//! - a **pid file**, `server.pid`, with the server's pid and start time and the owner's
//!   (this process's) pid and start time, as `/proc` gives them.
//!
//! [`reap_leftovers`] (called by every start, and by entry points that want to report
//! what they found) stops what an earlier run left: a run directory whose owner no longer
//! exists (no process with that pid and that start time) names its server by pid and
//! start time; if that very process still runs, it and its process group are killed
//! (never a reused pid), as is any process still working in that directory, and the
//! directory is removed. Directories of live owners, this process's included, are left
//! alone.

use crate::proc;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The file in a run directory that names its server and owner.
pub const PID_FILE: &str = "server.pid";
/// The server's standard output and error, in its run directory.
pub const LOG_FILE: &str = "server.log";

static NEXT_DIR: AtomicU64 = AtomicU64::new(0);

/// What to start, and how to tell that it is ready.
pub struct Spec<'a> {
    /// The run directory's kind, in its name: `<tmp>/resplab-<label>-<pid>-<n>`.
    pub label: &'a str,
    /// The command's words, made from the port and the run directory.
    pub words: Words<'a>,
    /// Extra environment variables.
    pub env: &'a [(String, String)],
    /// How long to wait for the probe to succeed.
    pub ready_timeout: Duration,
    /// The pause between two probes.
    pub probe_every: Duration,
    /// How many ports to try before giving up.
    pub attempts: u32,
}

impl std::fmt::Debug for Spec<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spec")
            .field("label", &self.label)
            .field("ready_timeout", &self.ready_timeout)
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

/// Builds the command's words from the port and the run directory.
pub type Words<'a> = &'a dyn Fn(u16, &Path) -> Vec<OsString>;

/// Why a server did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The program is not on `PATH` (or not at the path given).
    #[error("{program} is not installed")]
    NotFound { program: String, command: String },
    /// A directory, file or process could not be made.
    #[error("{what}: {source}")]
    Io {
        what: String,
        command: String,
        #[source]
        source: io::Error,
    },
    /// It exited, or the probe did not succeed in time.
    #[error("{command} did not become ready")]
    NotReady {
        command: String,
        /// How it exited, if it did.
        exited: Option<ExitStatus>,
        /// The probe's last complaint.
        last_probe: String,
        /// The last lines of its output.
        log_tail: String,
    },
}

impl StartError {
    /// Whether the server exited saying its port was taken: another process bound the
    /// port found free before the server did.
    pub fn is_port_race(&self) -> bool {
        match self {
            StartError::NotReady {
                exited: Some(_),
                log_tail,
                ..
            } => {
                let log = log_tail.to_ascii_lowercase();
                log.contains("address already in use") || log.contains("bind")
            }
            _ => false,
        }
    }
}

/// A running server process owned by this process: killed and its run directory removed
/// on drop.
#[derive(Debug)]
pub struct Server {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
    /// The command as given (without the `setpriv` wrapper).
    words: Vec<OsString>,
    env: Vec<(String, String)>,
}

impl Server {
    /// Reaps leftovers of killed runs, then starts the server of `spec` and waits until
    /// `probe(port)` succeeds; tried `spec.attempts` times with fresh ports.
    ///
    /// # Errors
    /// [`StartError::NotFound`] at once when the program is not installed; otherwise the
    /// last attempt's error.
    pub fn start(
        spec: &Spec<'_>,
        probe: &mut dyn FnMut(u16) -> Result<(), String>,
    ) -> Result<Server, StartError> {
        reap_leftovers();
        let mut last = None;
        for _ in 0..spec.attempts.max(1) {
            match Self::try_start(spec, probe) {
                Ok(s) => return Ok(s),
                // Only a lost race for the port is worth another port: a server that
                // runs but does not answer in time has had its `ready_timeout`.
                Err(e) if e.is_port_race() => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.expect("at least one attempt"))
    }

    fn try_start(
        spec: &Spec<'_>,
        probe: &mut dyn FnMut(u16) -> Result<(), String>,
    ) -> Result<Server, StartError> {
        let io_err = |what: &str, source| StartError::Io {
            what: what.into(),
            command: String::new(),
            source,
        };
        let port = crate::port::free_port().map_err(|e| io_err("finding a free port", e))?;
        let dir = std::env::temp_dir().join(format!(
            "resplab-{}-{}-{}",
            spec.label,
            std::process::id(),
            NEXT_DIR.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(|e| io_err("creating the run directory", e))?;
        let mut server = Server {
            child: None,
            port,
            words: (spec.words)(port, &dir),
            dir,
            env: spec.env.to_vec(),
        };
        server.spawn()?;
        server.wait_ready(spec.ready_timeout, spec.probe_every, probe)?;
        Ok(server)
    }

    /// Starts the command again in the same run directory, on the same port (after
    /// [`Server::kill`], or killing it first), and waits for `probe` as
    /// [`Server::start`] does: a server that comes back.
    ///
    /// # Errors
    /// As [`Server::start`], after one attempt.
    pub fn restart(
        &mut self,
        ready_timeout: Duration,
        probe_every: Duration,
        probe: &mut dyn FnMut(u16) -> Result<(), String>,
    ) -> Result<(), StartError> {
        self.kill();
        self.spawn()?;
        self.wait_ready(ready_timeout, probe_every, probe)
    }

    fn spawn(&mut self) -> Result<(), StartError> {
        let shown = self.command();
        let io_err = |what: &str, source| StartError::Io {
            what: what.into(),
            command: shown.clone(),
            source,
        };
        let Some(first) = self.words.first() else {
            return Err(io_err("starting", io::Error::other("empty command")));
        };
        let given = first.to_string_lossy().into_owned();
        let program = find_program(Path::new(first)).ok_or_else(|| StartError::NotFound {
            program: given.clone(),
            command: shown.clone(),
        })?;
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(LOG_FILE))
            .map_err(|e| io_err("creating the log file", e))?;
        let log2 = log
            .try_clone()
            .map_err(|e| io_err("creating the log file", e))?;
        let mut cmd = match find_program(Path::new("setpriv")) {
            Some(setpriv) => {
                let mut c = Command::new(setpriv);
                c.args(["--pdeathsig", "KILL", "--"]).arg(&program);
                c
            }
            None => Command::new(&program),
        };
        let child = cmd
            .args(&self.words[1..])
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .process_group(0)
            .spawn()
            .map_err(|e| io_err(&format!("cannot run {given}"), e))?;
        self.write_pid_file(child.id());
        self.child = Some(child);
        Ok(())
    }

    /// Who to stop if this process dies without cleaning up: the server and this
    /// process, each by pid and start time.
    fn write_pid_file(&self, pid: u32) {
        let own = std::process::id();
        if let (Some(start), Some(own_start)) = (proc::start_time(pid), proc::start_time(own)) {
            let _ = fs::write(
                self.dir.join(PID_FILE),
                format!("{pid} {start} {own} {own_start}\n"),
            );
        }
    }

    fn wait_ready(
        &mut self,
        ready_timeout: Duration,
        probe_every: Duration,
        probe: &mut dyn FnMut(u16) -> Result<(), String>,
    ) -> Result<(), StartError> {
        let deadline = Instant::now() + ready_timeout;
        let mut last_probe = String::new();
        let exited = loop {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                self.child = None;
                break Some(status);
            }
            match probe(self.port) {
                Ok(()) => return Ok(()),
                Err(e) => last_probe = e,
            }
            if Instant::now() >= deadline {
                break None;
            }
            std::thread::sleep(probe_every);
        };
        self.kill();
        Err(StartError::NotReady {
            command: self.command(),
            exited,
            last_probe,
            log_tail: self.log_tail(20),
        })
    }

    /// The loopback port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its run directory (removed on drop).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The command as started, its words joined by spaces.
    pub fn command(&self) -> String {
        let words: Vec<String> = self
            .words
            .iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        words.join(" ")
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The last `n` lines of its output.
    pub fn log_tail(&self, n: usize) -> String {
        let text = fs::read_to_string(self.dir.join(LOG_FILE)).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// Waits up to `within` for the server to exit (after the caller asked it to);
    /// true when it has (or was not running).
    pub fn wait_exit(&mut self, within: Duration, poll: Duration) -> bool {
        let deadline = Instant::now() + within;
        while let Some(child) = self.child.as_mut() {
            match child.try_wait() {
                Ok(Some(_)) => self.child = None,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(poll),
                _ => return false,
            }
        }
        true
    }

    /// Kills the server and its process group at once (SIGKILL) and waits for it.
    /// Idempotent.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_group(child.id());
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// `program` as an absolute path: looked up on `PATH` when it is a bare name, made
/// absolute against the current directory when relative; `None` when there is no such
/// file. (The server runs in its run directory, so a relative path must not be read
/// from there.)
fn find_program(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 || program.is_absolute() {
        let path = std::env::current_dir().ok()?.join(program);
        return path.is_file().then_some(path);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| {
            use std::os::unix::fs::PermissionsExt as _;
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
        .map(|p| std::env::current_dir().map_or(p.clone(), |cwd| cwd.join(&p)))
}

/// Sends SIGKILL to the process group `pgid` leads (a server and what it started).
/// Groups 0 and 1 are never signalled.
pub fn kill_group(pgid: u32) {
    if pgid <= 1 {
        return;
    }
    if let Ok(pgid) = i32::try_from(pgid) {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
}

/// A server that a killed run left running, stopped by [`reap_leftovers`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leftover {
    /// The server's process id.
    pub pid: u32,
    /// The process that started it (no longer running).
    pub owner_pid: u32,
    /// Its run directory, now removed.
    pub dir: PathBuf,
}

/// What a run directory's pid file says.
#[derive(Debug, PartialEq, Eq)]
struct PidFile {
    server: (u32, u64),
    /// The owner's pid and start time (files of older versions carry only the server).
    owner: Option<(u32, u64)>,
}

fn parse_pid_file(text: &str) -> Option<PidFile> {
    let n: Vec<u64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let pid = |v: u64| u32::try_from(v).ok();
    match n[..] {
        [p, s] => Some(PidFile {
            server: (pid(p)?, s),
            owner: None,
        }),
        [p, s, o, os] => Some(PidFile {
            server: (pid(p)?, s),
            owner: Some((pid(o)?, os)),
        }),
        _ => None,
    }
}

/// The owner pid in a run directory's name, `resplab-<label>-<pid>-<n>`.
fn owner_in_name(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("resplab-")?;
    let mut parts = rest.rsplitn(3, '-');
    parts.next()?.parse::<u64>().ok()?;
    let pid = parts.next()?.parse().ok()?;
    parts.next().filter(|label| !label.is_empty())?;
    Some(pid)
}

/// Stops the servers that runs killed without a chance to clean up left running, and
/// removes their run directories (see the module's documentation). Linux only (it reads
/// `/proc`); elsewhere it finds nothing.
pub fn reap_leftovers() -> Vec<Leftover> {
    let own = std::process::id();
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else {
        return Vec::new();
    };
    let mut dirs: Vec<(u32, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| Some((owner_in_name(e.file_name().to_str()?)?, e.path())))
        .filter(|(owner, _)| *owner != own)
        .collect();
    dirs.sort();
    let mut out = Vec::new();
    for (named_owner, dir) in dirs {
        let file = fs::read_to_string(dir.join(PID_FILE))
            .ok()
            .and_then(|t| parse_pid_file(&t));
        let owner_alive = match file.as_ref().and_then(|f| f.owner) {
            Some((pid, start)) => proc::is_alive(pid, start),
            // Without the owner's start time, any process with its pid keeps the
            // directory: a missed leftover, never a server of a live run killed.
            None => proc::stat(named_owner).is_some(),
        };
        if owner_alive {
            continue;
        }
        let owner_pid = file
            .as_ref()
            .and_then(|f| f.owner)
            .map_or(named_owner, |o| o.0);
        for pid in reap_dir(&dir, file.as_ref()) {
            out.push(Leftover {
                pid,
                owner_pid,
                dir: dir.clone(),
            });
        }
        let _ = fs::remove_dir_all(&dir);
    }
    out
}

/// Kills the server a dead owner's run directory names (if it is still that process)
/// with its group, and any process still working in the directory; returns their pids.
fn reap_dir(dir: &Path, file: Option<&PidFile>) -> Vec<u32> {
    let mut pids = Vec::new();
    if let Some((pid, start)) = file.map(|f| f.server) {
        if proc::is_alive(pid, start) {
            if proc::stat(pid).is_some_and(|s| s.pgrp == pid) {
                kill_group(pid);
            }
            pids.push(pid);
        }
    }
    for pid in proc::pids_in(dir) {
        if !pids.contains(&pid) {
            pids.push(pid);
        }
    }
    pids.retain(|&pid| {
        i32::try_from(pid).is_ok_and(|p| kill(Pid::from_raw(p), Signal::SIGKILL).is_ok())
            || proc::stat(pid).is_none()
    });
    pids
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead as _;

    /// Whether `pid` is gone or a zombie waiting for its parent.
    fn dead(pid: u32) -> bool {
        proc::stat(pid).is_none_or(|s| s.state == 'Z')
    }

    fn wait_dead(pid: u32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !dead(pid) {
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    fn sleeper_words(secs: &'static str) -> impl Fn(u16, &Path) -> Vec<OsString> {
        move |_, _| vec!["sleep".into(), secs.into()]
    }

    fn spec<'a>(words: Words<'a>, timeout_ms: u64) -> Spec<'a> {
        Spec {
            label: "systest",
            words,
            env: &[],
            ready_timeout: Duration::from_millis(timeout_ms),
            probe_every: Duration::from_millis(10),
            attempts: 1,
        }
    }

    #[test]
    fn starts_probes_writes_its_pid_file_and_cleans_up() {
        let words = sleeper_words("60");
        let mut probes = 0;
        let mut probe = |_port: u16| {
            probes += 1;
            if probes < 3 {
                Err("not yet".to_string())
            } else {
                Ok(())
            }
        };
        let server = Server::start(&spec(&words, 5000), &mut probe).unwrap();
        let pid = server.pid().unwrap();
        let dir = server.dir().to_path_buf();
        assert_eq!(probes, 3);
        let file = parse_pid_file(&fs::read_to_string(dir.join(PID_FILE)).unwrap()).unwrap();
        assert_eq!(file.server, (pid, proc::start_time(pid).unwrap()));
        assert_eq!(file.owner.unwrap().0, std::process::id());
        assert_eq!(proc::stat(pid).unwrap().pgrp, pid, "its own process group");
        // `setpriv` execs the server: the pid is the server's.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut cmdline = String::new();
        while !cmdline.ends_with("/sleep 60") && Instant::now() < deadline {
            cmdline = proc::cmdline(pid).unwrap();
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(cmdline.ends_with("/sleep 60"), "{cmdline}");
        drop(server);
        assert!(wait_dead(pid));
        assert!(!dir.exists());
    }

    #[test]
    fn a_missing_program_is_not_found_and_an_exit_is_not_ready() {
        let missing = |_: u16, _: &Path| vec![OsString::from("resplab-no-such-program")];
        let err = Server::start(&spec(&missing, 1000), &mut |_| Ok(())).unwrap_err();
        assert!(matches!(err, StartError::NotFound { .. }), "{err:?}");
        let failing = |_: u16, _: &Path| {
            ["sh", "-c", "echo broken config >&2; exit 3"]
                .map(OsString::from)
                .to_vec()
        };
        let err = Server::start(&spec(&failing, 5000), &mut |_| Err("no".into())).unwrap_err();
        match err {
            StartError::NotReady {
                exited, log_tail, ..
            } => {
                assert_eq!(exited.and_then(|s| s.code()), Some(3));
                assert!(log_tail.contains("broken config"), "{log_tail}");
            }
            other => panic!("{other:?}"),
        }
        let words = sleeper_words("60");
        let err = Server::start(&spec(&words, 100), &mut |_| Err("silent".into())).unwrap_err();
        assert!(
            matches!(&err, StartError::NotReady { exited: None, last_probe, .. } if last_probe == "silent"),
            "{err:?}"
        );
    }

    /// A server that runs but never answers fails after one `ready_timeout`, however
    /// many attempts a lost port race would get; one that exits saying its port was
    /// taken is tried again on a fresh port.
    #[test]
    fn only_a_lost_port_race_is_retried() {
        let words = sleeper_words("60");
        let mut s = spec(&words, 300);
        s.attempts = 3;
        let t0 = Instant::now();
        let err = Server::start(&s, &mut |_| Err("silent".into())).unwrap_err();
        assert!(
            matches!(err, StartError::NotReady { exited: None, .. }),
            "{err:?}"
        );
        assert!(
            t0.elapsed() < Duration::from_millis(900),
            "{:?}",
            t0.elapsed()
        );
        let taken = |_: u16, _: &Path| {
            [
                "sh",
                "-c",
                "echo 'bind: Address already in use' >&2; exit 1",
            ]
            .map(OsString::from)
            .to_vec()
        };
        let mut s = spec(&taken, 2000);
        s.attempts = 3;
        let err = Server::start(&s, &mut |_| Err("no".into())).unwrap_err();
        assert!(err.is_port_race(), "{err:?}");
    }

    #[test]
    fn the_server_dies_with_the_thread_that_started_it() {
        let words = sleeper_words("60");
        let (pid, dir) = std::thread::spawn(move || {
            // Ready once `setpriv` had the time to set the signal and exec (a server whose
            // starter ended before that is left to the reaper).
            let mut probes = 0;
            let mut probe = |_| {
                probes += 1;
                if probes > 30 {
                    Ok(())
                } else {
                    Err(String::new())
                }
            };
            let server = Server::start(&spec(&words, 5000), &mut probe).unwrap();
            let out = (server.pid().unwrap(), server.dir().to_path_buf());
            // Forgotten, not dropped: only the parent-death signal can stop it now.
            std::mem::forget(server);
            out
        })
        .join()
        .unwrap();
        let ok = wait_dead(pid);
        kill_group(pid);
        let _ = fs::remove_dir_all(dir);
        assert!(ok, "server {pid} outlived the thread that started it");
    }

    #[test]
    fn kill_group_kills_what_the_leader_started() {
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
        let _ = child.wait();
        let gone = wait_dead(grandchild);
        if !gone {
            let _ = kill(Pid::from_raw(grandchild as i32), Signal::SIGKILL);
        }
        assert!(gone, "the group's other member {grandchild} lives on");
        // This test process is still here: nothing else was hit.
        kill_group(0);
        kill_group(1);
    }

    #[test]
    fn pid_files_and_directory_names_are_read() {
        assert_eq!(
            parse_pid_file("12 345 67 890\n"),
            Some(PidFile {
                server: (12, 345),
                owner: Some((67, 890))
            })
        );
        assert_eq!(parse_pid_file("12 345").unwrap().owner, None);
        assert!(parse_pid_file("12").is_none());
        assert!(parse_pid_file("x y").is_none());
        assert_eq!(owner_in_name("resplab-exp-4242-7"), Some(4242));
        assert_eq!(owner_in_name("resplab-testkit-1-0"), Some(1));
        assert_eq!(owner_in_name("resplab-4242-7"), None);
        assert_eq!(owner_in_name("resplab-hook-12-3.log"), None);
        assert_eq!(owner_in_name("other-exp-1-2"), None);
    }

    /// A leftover as a killed run leaves it: a process in its own group, and a run
    /// directory (its name naming `named_owner`) whose pid file names it and `owner`.
    /// The directory appears whole (made aside, then renamed), as a concurrent reaper
    /// must never see it without its pid file. Returns the process.
    fn plant_leftover(tmp: &Path, named_owner: u32, owner: (u32, u64)) -> (Child, PathBuf) {
        let aside = tmp.join(format!("planting-{}-{named_owner}", std::process::id()));
        fs::create_dir_all(&aside).unwrap();
        let child = Command::new("sleep")
            .arg("60")
            .process_group(0)
            .spawn()
            .unwrap();
        let start = proc::start_time(child.id()).unwrap();
        fs::write(
            aside.join(PID_FILE),
            format!("{} {start} {} {}\n", child.id(), owner.0, owner.1),
        )
        .unwrap();
        let dir = tmp.join(format!("resplab-systest-{named_owner}-0"));
        fs::rename(&aside, &dir).unwrap();
        (child, dir)
    }

    #[test]
    fn a_dead_owners_server_is_reaped_and_a_live_owners_is_not() {
        let tmp = std::env::temp_dir();
        // A dead owner: the pid of a finished child (and a start time no process has).
        let mut gone = Command::new("true").spawn().unwrap();
        let dead_owner = gone.id();
        gone.wait().unwrap();
        let (mut orphan, orphan_dir) = plant_leftover(&tmp, dead_owner, (dead_owner, 1));
        // A live owner: this very process, as another owner would look to the reaper
        // (the reaper skips its own directories by name, so the name carries pid 1, a
        // process that always exists, and the file names this process).
        let own = std::process::id();
        let own_start = proc::start_time(own).unwrap();
        let (mut kept, kept_dir) = plant_leftover(&tmp, 1, (own, own_start));
        let reaped = reap_leftovers();
        // Another resplab on this machine may reap the orphan first: what counts is that
        // it was killed and its directory removed, and that the live owner's was not.
        let deadline = Instant::now() + Duration::from_secs(5);
        let orphan_status = loop {
            match orphan.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => break None,
            }
        };
        if orphan_status.is_none() {
            let _ = orphan.kill();
            let _ = orphan.wait();
        }
        let kept_alive = kept.try_wait().is_ok_and(|s| s.is_none());
        let _ = kept.kill();
        let _ = kept.wait();
        let kept_dir_there = kept_dir.exists();
        let _ = fs::remove_dir_all(&kept_dir);
        assert!(orphan_status.is_some(), "the orphan lives on: {reaped:?}");
        assert!(!orphan_dir.exists());
        assert!(kept_alive, "a live owner's server was reaped: {reaped:?}");
        assert!(kept_dir_there);
    }
}
