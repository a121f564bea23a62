//! Each candidate's build, once per commit: `--build` runs with `sh -c` in the commit's
//! worktree (`{src}` filled in), and its result is kept in the cache as a file named
//! after the commit (`builds/ID.ok` or `builds/ID.failed`, with the build command in
//! it), so a rerun of the bisect — after a kill, or with more rounds — does not build
//! a commit again. A different build command builds again. The output of every build
//! is kept in `builds/ID.log`.

use super::git::{self, Commit};
use super::BisectError;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where a commit's build stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Built {
    /// Built (now, or by an earlier run: `cached`), in this worktree.
    Ok { src: PathBuf, cached: bool },
    /// The build command failed; its output is in `log`.
    Failed { log: PathBuf, cached: bool },
}

/// The cache of worktrees and build results of one repository.
#[derive(Clone, Debug)]
pub struct Builder {
    pub repo: PathBuf,
    pub cache: PathBuf,
    /// The build command, `{src}` still to fill in.
    pub command: String,
}

impl Builder {
    /// The worktree of `commit`, built.
    ///
    /// # Errors
    /// [`BisectError::Git`] when the worktree cannot be made, [`BisectError::Io`] when
    /// the build cannot be started or its result not written.
    pub fn build(&self, commit: &Commit) -> Result<Built, BisectError> {
        let src = git::worktree(&self.repo, &self.cache.join("worktrees"), commit)?;
        let dir = self.cache.join("builds");
        let ok = dir.join(format!("{}.ok", commit.id));
        let failed = dir.join(format!("{}.failed", commit.id));
        let log = dir.join(format!("{}.log", commit.id));
        if read(&ok).as_deref() == Some(self.command.as_str()) {
            return Ok(Built::Ok { src, cached: true });
        }
        if read(&failed).as_deref() == Some(self.command.as_str()) {
            return Ok(Built::Failed { log, cached: true });
        }
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, &e))?;
        let line = self.command.replace("{src}", &src.to_string_lossy());
        let output = Command::new("sh")
            .arg("-c")
            .arg(&line)
            .current_dir(&src)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| BisectError::Io {
                message: format!("cannot run the build command `{line}`: {e}"),
            })?;
        let mut text = output.stdout;
        text.extend_from_slice(&output.stderr);
        std::fs::write(&log, &text).map_err(|e| io(&log, &e))?;
        let (mark, other) = if output.status.success() {
            (&ok, &failed)
        } else {
            (&failed, &ok)
        };
        let _ = std::fs::remove_file(other);
        std::fs::write(mark, &self.command).map_err(|e| io(mark, &e))?;
        Ok(if output.status.success() {
            Built::Ok { src, cached: false }
        } else {
            Built::Failed { log, cached: false }
        })
    }
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn io(path: &Path, e: &std::io::Error) -> BisectError {
    BisectError::Io {
        message: format!("cannot write {}: {e}", path.display()),
    }
}
