//! What the bisect asks of git: the checks of `--repo`, `--good` and `--bad`, the
//! commits between them, and a detached worktree per commit.
//!
//! Every question is one `git` process (`git -C REPO …`); nothing here parses git's
//! files. The candidates are the commits of `git rev-list --first-parent
//! --ancestry-path GOOD..BAD`, oldest first: a merged branch is tested at its merge
//! commit, as `git bisect --first-parent` does.

use super::BisectError;
pub use resplab_results::bisect::Commit;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Runs `git -C repo ARGS`: its standard output (trimmed) or, on failure, its first
/// line of standard error.
fn git(repo: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(err
            .lines()
            .next()
            .unwrap_or("git failed")
            .trim()
            .to_string())
    }
}

/// Checks `--repo`, `--good` and `--bad` and lists the commits from good (first) to
/// bad (last), each with its subject.
///
/// # Errors
/// [`BisectError::Input`] naming the flag: not a git repository, uncommitted changes,
/// an unknown revision, good equal to bad, good not an ancestor of bad.
pub fn commit_range(repo: &Path, good: &str, bad: &str) -> Result<Vec<Commit>, BisectError> {
    let input = |flag: &str, message: String| BisectError::Input {
        flag: flag.to_string(),
        message,
    };
    git(repo, &["rev-parse", "--git-dir"]).map_err(|e| {
        input(
            "--repo",
            format!("{} is not a git repository ({e})", repo.display()),
        )
    })?;
    let dirty = git(repo, &["status", "--porcelain", "--untracked-files=no"])
        .map_err(|e| input("--repo", e))?;
    if !dirty.is_empty() {
        let first = dirty.lines().next().unwrap_or_default().trim();
        return Err(input(
            "--repo",
            format!(
                "{} has uncommitted changes ({} file(s), first `{first}`); commit or stash them first",
                repo.display(),
                dirty.lines().count()
            ),
        ));
    }
    let good_id = resolve(repo, good).map_err(|m| input("--good", m))?;
    let bad_id = resolve(repo, bad).map_err(|m| input("--bad", m))?;
    if good_id == bad_id {
        return Err(input(
            "--bad",
            format!(
                "`{bad}` is the same commit as --good `{good}` ({good_id}); give a later commit"
            ),
        ));
    }
    if git(repo, &["merge-base", "--is-ancestor", &good_id, &bad_id]).is_err() {
        return Err(input(
            "--good",
            format!("`{good}` ({}) is not an ancestor of --bad `{bad}`; expected an older commit of the same history", &good_id[..10]),
        ));
    }
    let range = format!("{good_id}..{bad_id}");
    let listed = git(
        repo,
        &[
            "log",
            "--reverse",
            "--first-parent",
            "--ancestry-path",
            "--format=%H%x09%s",
            &range,
        ],
    )
    .map_err(|e| input("--bad", e))?;
    let mut commits = vec![Commit {
        subject: subject(repo, &good_id),
        id: good_id,
    }];
    for line in listed.lines() {
        let (id, subject) = line.split_once('\t').unwrap_or((line, ""));
        commits.push(Commit {
            id: id.to_string(),
            subject: subject.to_string(),
        });
    }
    if commits.last().map(|c| c.id.as_str()) != Some(bad_id.as_str()) {
        return Err(input(
            "--bad",
            format!("`{bad}` is not reached from --good `{good}` along first parents"),
        ));
    }
    Ok(commits)
}

/// The full id of a revision that names a commit.
fn resolve(repo: &Path, rev: &str) -> Result<String, String> {
    if rev.is_empty() || rev.starts_with('-') {
        return Err(format!("expected a revision, found `{rev}`"));
    }
    git(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .ok()
    .filter(|id| !id.is_empty())
    .ok_or_else(|| format!("unknown revision `{rev}` in the repository"))
}

fn subject(repo: &Path, id: &str) -> String {
    git(repo, &["log", "-1", "--format=%s", id]).unwrap_or_default()
}

/// The worktree of `commit` under `dir` (`dir/ID`), added detached when it is not there
/// yet.
///
/// # Errors
/// [`BisectError::Git`] when `git worktree add` fails.
pub fn worktree(repo: &Path, dir: &Path, commit: &Commit) -> Result<PathBuf, BisectError> {
    let path = dir.join(&commit.id);
    if path.join(".git").exists() {
        return Ok(path);
    }
    std::fs::create_dir_all(dir).map_err(|e| BisectError::Git {
        message: format!("cannot create {}: {e}", dir.display()),
    })?;
    // A worktree whose folder was deleted is still registered: forget those first.
    let _ = git(repo, &["worktree", "prune"]);
    let target = path.to_string_lossy().into_owned();
    git(
        repo,
        &[
            "worktree", "add", "--detach", "--force", &target, &commit.id,
        ],
    )
    .map_err(|e| BisectError::Git {
        message: format!("git worktree add {target} {}: {e}", commit.short()),
    })?;
    Ok(path)
}
