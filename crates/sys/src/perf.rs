//! Hardware counters of running processes, counted by `perf stat` attached to their pids.
//!
//! [`Counting::start`] runs `perf stat -x, -e EVENTS -p PID,…` (CSV on its standard
//! error); [`Counting::finish`] stops it with SIGINT, as a user's Ctrl-C would, and reads
//! one line per event: `value,unit,event,…`. A counter the machine lacks (a virtual
//! machine without a PMU) is reported by perf as `<not supported>`, one that never ran as
//! `<not counted>`: both are `None` here, never an error. What stops counting altogether
//! (perf missing, `perf_event_paranoid` too high, the process gone) is an `Err` with one
//! line saying what is missing and how to get it.

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The events counted: instructions, cycles and last-level cache misses.
pub const EVENTS: &[&str] = &["instructions", "cycles", "cache-misses"];

/// A `perf stat` counting attached processes.
#[derive(Debug)]
pub struct Counting {
    child: Child,
    perf: String,
}

/// Each event's count; `None` for a counter the machine does not support.
pub type Counts = Vec<(String, Option<f64>)>;

impl Counting {
    /// Starts counting [`EVENTS`] of `pids` with the `perf` program at `perf`.
    ///
    /// # Errors
    /// One line when perf cannot be started (not installed, not executable).
    pub fn start(perf: &str, pids: &[u32]) -> Result<Counting, String> {
        let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
        let child = Command::new(perf)
            .args(["stat", "-x", ",", "-e", &EVENTS.join(","), "-p", &pids.join(",")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => format!(
                    "`{perf}` is not installed (Debian: apt-get install linux-perf; or set RESPLAB_PERF to its path)"
                ),
                _ => format!("`{perf}` could not be started: {e}"),
            })?;
        Ok(Counting {
            child,
            perf: perf.to_string(),
        })
    }

    /// Stops counting and returns each event's count.
    ///
    /// # Errors
    /// One line when perf counted nothing: what it said (permission, no such process).
    pub fn finish(mut self) -> Result<Counts, String> {
        if matches!(self.child.try_wait(), Ok(None)) {
            if let Ok(pid) = i32::try_from(self.child.id()) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGINT);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while matches!(self.child.try_wait(), Ok(None)) {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return Err(format!("`{}` did not stop within 5 s", self.perf));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut text = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = err.read_to_string(&mut text);
        }
        let counts = parse(&text);
        if counts.is_empty() {
            let said = text.lines().map(str::trim).find(|l| !l.is_empty());
            return Err(format!(
                "`{}` counted nothing: {}",
                self.perf,
                said.unwrap_or("it said nothing")
            ));
        }
        Ok(counts)
    }
}

impl Drop for Counting {
    /// A counting never finished (the trial was interrupted) is killed, not left behind.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The counts of `perf stat -x,` output: one per line naming one of [`EVENTS`].
pub fn parse(text: &str) -> Counts {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let event = f.get(2)?.trim();
            // perf may suffix the event with its modifiers (`cycles:u`).
            let name = event.split(':').next()?;
            EVENTS.contains(&name).then(|| {
                let value = f[0].trim().parse::<f64>().ok().filter(|v| v.is_finite());
                (name.to_string(), value)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_counted_and_unsupported_events() {
        let text = "<not supported>,,instructions,0,100.00,,\n\
                    1234567,,cycles:u,1000,100.00,,\n\
                    <not counted>,,cache-misses,0,0.00,,\n\
                    17,,context-switches,1000,100.00,,\n\
                    Performance counter stats: noise\n";
        assert_eq!(
            parse(text),
            vec![
                ("instructions".to_string(), None),
                ("cycles".to_string(), Some(1234567.0)),
                ("cache-misses".to_string(), None),
            ]
        );
        assert!(parse("").is_empty());
    }

    #[test]
    fn a_missing_perf_is_one_line_naming_it() {
        let e = Counting::start("/nonexistent/perf", &[std::process::id()]).unwrap_err();
        assert!(
            e.contains("/nonexistent/perf") && e.contains("not installed"),
            "{e}"
        );
        assert!(!e.contains('\n'));
    }
}
