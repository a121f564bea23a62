//! `resplab bench --profile FILE`: the stacks of the server a load run measures, sampled
//! by `perf record` (`resplab_sys::profile`) while the run lasts and written to FILE as
//! folded stacks.
//!
//! The server's pid is the one given (`--profile-pid`) or that of the throwaway
//! redis-server the run started ([`crate::throwaway`]); the reference server runs inside
//! this process, so it cannot be sampled apart from the load generator. The output file
//! is created before the run, so a bad path costs no run; where perf cannot run, the run
//! goes on without a profile and [`ServerProfile::warning`] says why.

use crate::throwaway::Throwaway;
use resplab_sys::profile::{Recording, Sampling};
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Why sampling cannot be set up; the run should not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerProfileError {
    #[error("--profile: the started server's pid is unknown")]
    PidUnknown,
    #[error("--profile: the reference server runs inside this process with the load generator; install redis-server (apt-get install redis-server) or give a target and --profile-pid")]
    InProcess,
    #[error("--profile: expected --profile-pid PID for a target this run does not start (or no target, so that bench starts its own server)")]
    NoPid,
    #[error("--profile {}: cannot create: {source}", path.display())]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A server being sampled, or the reason it is not (perf missing or not permitted).
#[derive(Debug)]
pub struct ServerProfile {
    recording: Result<Recording, String>,
    file: File,
    path: PathBuf,
}

impl ServerProfile {
    /// Creates `path` and starts sampling the server: `pid` if given, else the throwaway
    /// redis-server `server`. The `perf` program is `$RESPLAB_PERF` or `perf`.
    ///
    /// # Errors
    /// No pid to sample (see [`ServerProfileError`]) or `path` cannot be created.
    pub fn start(
        path: &Path,
        pid: Option<u32>,
        server: Option<&Throwaway>,
    ) -> Result<ServerProfile, ServerProfileError> {
        let pid = match (pid, server) {
            (Some(pid), _) => pid,
            (None, Some(s @ Throwaway::Redis { .. })) => {
                s.pid().ok_or(ServerProfileError::PidUnknown)?
            }
            (None, Some(Throwaway::Serve(_))) => return Err(ServerProfileError::InProcess),
            (None, None) => return Err(ServerProfileError::NoPid),
        };
        let file = File::create(path).map_err(|source| ServerProfileError::Create {
            path: path.to_path_buf(),
            source,
        })?;
        let perf = std::env::var("RESPLAB_PERF").unwrap_or_else(|_| "perf".into());
        let data =
            std::env::temp_dir().join(format!("resplab-bench-{}.perf.data", std::process::id()));
        Ok(ServerProfile {
            recording: Recording::start(&Sampling::defaults(&perf), &[pid], &data),
            file,
            path: path.to_path_buf(),
        })
    }

    /// The line that says why sampling did not start and the run goes on without it.
    pub fn warning(&self) -> Option<String> {
        self.recording
            .as_ref()
            .err()
            .map(|why| format!("--profile: {why}; the run goes on without a profile"))
    }

    /// Stops sampling and writes the folded stacks; the line that says how many samples
    /// were written where, or why there are none. `None` when sampling never started
    /// ([`ServerProfile::warning`] said so).
    pub fn finish(mut self) -> Option<String> {
        let recording = self.recording.ok()?;
        let path = self.path.display();
        Some(match recording.finish() {
            Ok(stacks) => match self.file.write_all(stacks.folded.as_bytes()) {
                Ok(()) => format!(
                    "--profile: {} samples of the server's stacks in {path}",
                    stacks.samples
                ),
                Err(e) => format!("--profile {path}: cannot write: {e}"),
            },
            Err(why) => format!("--profile: {why}"),
        })
    }
}
