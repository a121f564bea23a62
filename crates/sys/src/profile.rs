//! Sampled stacks of running processes: `perf record` attached to their pids, read back
//! with `perf script` and folded by `inferno`'s collapser into one line per distinct
//! stack (`frame;frame;…;leaf SAMPLES`).
//!
//! [`Recording::start`] runs `perf record -F FREQ -e EVENT -g|--call-graph dwarf -p PID,…`
//! writing to a data file the caller names; [`Recording::finish`] stops it with SIGINT
//! (as a user's Ctrl-C would, so perf writes its file whole), runs `perf script` on the
//! file and folds what it prints. The default event is `cpu-clock`, a software event
//! every kernel has (virtual machines often lack the hardware `cycles`); sampling is by
//! time on the CPU, so a process blocked in a system call is not sampled while it waits.
//!
//! What stops sampling (perf missing, `perf_event_paranoid` too high, the process gone)
//! is an `Err` with one line saying what is missing and how to get it.

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How stacks are unwound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallGraph {
    /// Frame pointers (`-g`): cheap, but frames of code built without them are lost.
    FramePointer,
    /// DWARF unwinding of copied stack memory (`--call-graph dwarf`): complete stacks of
    /// code built without frame pointers, at a higher cost per sample.
    Dwarf,
}

/// What to sample and how.
#[derive(Clone, Debug, PartialEq)]
pub struct Sampling {
    /// The `perf` program.
    pub perf: String,
    /// Samples per second.
    pub frequency: u32,
    pub call_graph: CallGraph,
    /// The event sampled (`cpu-clock`, `cycles`).
    pub event: String,
    /// Kernel stacks too; when false only user space is sampled (`EVENT:u`).
    pub kernel: bool,
}

impl Sampling {
    /// The defaults: `perf` at `perf`, 499 samples per second (a prime, so sampling does
    /// not beat in step with a periodic timer), frame pointers, `cpu-clock`, kernel
    /// stacks where this process may sample them ([`kernel_permitted`]).
    pub fn defaults(perf: &str) -> Sampling {
        Sampling {
            perf: perf.to_string(),
            frequency: 499,
            call_graph: CallGraph::FramePointer,
            event: "cpu-clock".into(),
            kernel: kernel_permitted().is_ok(),
        }
    }
}

/// A `perf record` sampling attached processes.
#[derive(Debug)]
pub struct Recording {
    child: Child,
    perf: String,
    data: PathBuf,
}

/// Folded stacks and their sample count.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stacks {
    /// One line per distinct stack, `frame;…;leaf N`.
    pub folded: String,
    pub samples: u64,
}

/// Whether this process may sample kernel stacks: root, or `perf_event_paranoid` at most 1.
/// `Err` says how to permit it.
///
/// # Errors
/// One line naming the setting and its value.
pub fn kernel_permitted() -> Result<(), String> {
    if nix::unistd::geteuid().is_root() {
        return Ok(());
    }
    match paranoid() {
        Some(p) if p <= 1 => Ok(()),
        Some(p) => Err(format!(
            "kernel stacks need root or kernel.perf_event_paranoid <= 1 (it is {p}; sysctl -w kernel.perf_event_paranoid=1)"
        )),
        None => Ok(()),
    }
}

/// `/proc/sys/kernel/perf_event_paranoid`, when readable.
fn paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

impl Recording {
    /// Starts sampling `pids` into the file `data` (replaced if present).
    ///
    /// # Errors
    /// One line when perf cannot be started (not installed, not executable) or no pid
    /// is given.
    pub fn start(s: &Sampling, pids: &[u32], data: &Path) -> Result<Recording, String> {
        if pids.is_empty() {
            return Err("no server process to sample (the runner did not start it)".into());
        }
        let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
        let event = if s.kernel {
            s.event.clone()
        } else {
            format!("{}:u", s.event)
        };
        let _ = std::fs::remove_file(data);
        let mut cmd = Command::new(&s.perf);
        cmd.args(["record", "-q", "-F", &s.frequency.to_string(), "-e", &event]);
        match s.call_graph {
            CallGraph::FramePointer => cmd.arg("-g"),
            CallGraph::Dwarf => cmd.args(["--call-graph", "dwarf"]),
        };
        cmd.args(["-p", &pids.join(","), "-o"]).arg(data);
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| not_started(&s.perf, &e))?;
        Ok(Recording {
            child,
            perf: s.perf.clone(),
            data: data.to_path_buf(),
        })
    }

    /// Stops sampling and returns the folded stacks; the data file is removed.
    ///
    /// # Errors
    /// One line when perf recorded nothing readable: what it said (permission, no such
    /// process), or why `perf script` failed.
    pub fn finish(mut self) -> Result<Stacks, String> {
        let said = self.stop()?;
        let out = Command::new(&self.perf)
            // No period field: inferno would weigh each sample by it (nanoseconds for
            // cpu-clock), and a profile here counts samples.
            .args(["script", "-F", "comm,pid,tid,time,event,ip,sym,dso", "-i"])
            .arg(&self.data)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| not_started(&self.perf, &e))?;
        let _ = std::fs::remove_file(&self.data);
        if !out.status.success() {
            let why = first_line(&said)
                .or_else(|| first_line(&String::from_utf8_lossy(&out.stderr)))
                .unwrap_or_else(|| format!("it exited with {}", out.status));
            return Err(format!("`{}` recorded no samples: {why}", self.perf));
        }
        fold(&out.stdout)
    }

    /// SIGINT, then waits up to 10 s; returns what perf record said on its error output.
    fn stop(&mut self) -> Result<String, String> {
        if matches!(self.child.try_wait(), Ok(None)) {
            if let Ok(pid) = i32::try_from(self.child.id()) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGINT);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while matches!(self.child.try_wait(), Ok(None)) {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return Err(format!("`{}` record did not stop within 10 s", self.perf));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut text = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = err.read_to_string(&mut text);
        }
        Ok(text)
    }
}

impl Drop for Recording {
    /// A recording never finished (the trial was interrupted) is killed and its file
    /// removed, not left behind.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_file(&self.data);
    }
}

/// Folds the text of `perf script` with inferno's perf collapser.
///
/// # Errors
/// What the collapser reports.
pub fn fold(script: &[u8]) -> Result<Stacks, String> {
    use inferno::collapse::Collapse as _;
    let mut folder =
        inferno::collapse::perf::Folder::from(inferno::collapse::perf::Options::default());
    let mut folded = Vec::new();
    folder
        .collapse(script, &mut folded)
        .map_err(|e| format!("folding perf script output: {e}"))?;
    let folded = String::from_utf8_lossy(&folded).into_owned();
    let samples = folded
        .lines()
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum();
    Ok(Stacks { folded, samples })
}

fn not_started(perf: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => format!(
            "`{perf}` is not installed (Debian: apt-get install linux-perf; or name its path with perf = \"…\" in [profile] or RESPLAB_PERF)"
        ),
        _ => format!("`{perf}` could not be started: {e}"),
    }
}

fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "redis-server 100/100 1.000: cpu-clock: \n\
\tffffffff81711bbb do_fsync+0x3b ([kernel.kallsyms])\n\
\t55d0c0a0 flushAppendOnlyFile+0x10 (/usr/bin/redis-server)\n\
\t55d0c0b0 main+0x20 (/usr/bin/redis-server)\n\
\n\
redis-server 100/100 1.001: cpu-clock: \n\
\t55d0c0c0 dictFind+0x3b (/usr/bin/redis-server)\n\
\t55d0c0b0 main+0x20 (/usr/bin/redis-server)\n\
\n";

    #[test]
    fn folds_perf_script_output_into_stacks_with_their_samples() {
        let s = fold(SCRIPT.as_bytes()).unwrap();
        assert_eq!(s.samples, 2);
        assert!(
            s.folded
                .contains("redis-server;main;flushAppendOnlyFile;do_fsync 1"),
            "{}",
            s.folded
        );
        assert!(s.folded.contains("redis-server;main;dictFind 1"));
        assert_eq!(fold(b"").unwrap().samples, 0);
    }

    #[test]
    fn a_missing_perf_is_one_line_naming_it() {
        let s = Sampling {
            perf: "/nonexistent/perf".into(),
            frequency: 99,
            call_graph: CallGraph::FramePointer,
            event: "cpu-clock".into(),
            kernel: true,
        };
        let e = Recording::start(&s, &[std::process::id()], Path::new("/tmp/x.data")).unwrap_err();
        assert!(
            e.contains("/nonexistent/perf") && e.contains("not installed"),
            "{e}"
        );
        assert!(!e.contains('\n'));
        assert!(Recording::start(&s, &[], Path::new("/tmp/x.data")).is_err());
    }
}
