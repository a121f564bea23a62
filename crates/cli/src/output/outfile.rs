//! Output files that are checked before anything is measured.
//!
//! A run must never be lost to an output path. Every file a command will write is opened
//! (created) before the first request, so a missing folder or a read-only path fails in
//! the first second with the flag named, not after the whole run. If writing still fails
//! at the end (the disk filled up, the folder was removed), the bytes go to a file in the
//! temporary folder instead, and its path is printed.

use anyhow::Context as _;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// A file that was opened for writing before the work began.
#[derive(Debug)]
pub struct OutFile {
    flag: String,
    path: PathBuf,
    file: Option<File>,
    /// The file did not exist before: remove it again if nothing is ever written.
    created: bool,
}

impl OutFile {
    /// Opens `path` for writing (creating it) on behalf of `flag`.
    ///
    /// # Errors
    /// The path cannot be created or written, with the flag, the path and the reason.
    pub fn prepare(flag: &str, path: impl AsRef<Path>) -> anyhow::Result<Self> {
        let path = path.as_ref().to_path_buf();
        if path.as_os_str().is_empty() {
            anyhow::bail!("{flag}: expected a file path, found an empty value");
        }
        if path.is_dir() {
            anyhow::bail!(
                "{flag} {}: expected a file path, found a folder",
                path.display()
            );
        }
        let existed = path.exists();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| {
                let hint = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() && !p.exists() => {
                        format!(" (the folder {} does not exist)", p.display())
                    }
                    _ => String::new(),
                };
                anyhow::anyhow!(
                    "{flag} {}: cannot write there{hint}: {e}; nothing was measured",
                    path.display()
                )
            })?;
        Ok(OutFile {
            flag: flag.to_string(),
            path,
            file: Some(file),
            created: !existed,
        })
    }

    /// Writes `bytes` as the whole content of the file. If that fails, writes them to a
    /// file in the temporary folder, prints where, and still returns the first error.
    ///
    /// # Errors
    /// The file could not be written (the bytes are then saved elsewhere if possible).
    pub fn finish(mut self, bytes: &[u8]) -> anyhow::Result<()> {
        let file = self.file.take();
        let result = (|| -> std::io::Result<()> {
            let mut f = match file {
                Some(f) => f,
                None => std::fs::File::create(&self.path)?,
            };
            f.set_len(0)?;
            f.write_all(bytes)?;
            f.flush()?;
            f.sync_data().or_else(|e| {
                // Pipes and character devices cannot be synced; that is not a failure.
                if e.kind() == std::io::ErrorKind::InvalidInput {
                    Ok(())
                } else {
                    Err(e)
                }
            })
        })();
        self.created = false;
        match result {
            Ok(()) => Ok(()),
            Err(e) => {
                let first = anyhow::anyhow!(
                    "{} {}: cannot write the file: {e}",
                    self.flag,
                    self.path.display()
                );
                match save_elsewhere(&self.path, bytes) {
                    Ok(saved) => {
                        eprintln!(
                            "resplab: {} {} could not be written ({e}); saved to {} instead",
                            self.flag,
                            self.path.display(),
                            saved.display()
                        );
                        Err(first.context(format!("saved to {} instead", saved.display())))
                    }
                    Err(e2) => Err(first.context(format!("and no copy could be saved: {e2}"))),
                }
            }
        }
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        // Never written (the run failed before it had results): leave no empty file behind.
        if self.created {
            self.file.take();
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Writes `bytes` to a new file in the temporary folder named after `original`.
fn save_elsewhere(original: &Path, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    let name = original
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let dir = std::env::temp_dir();
    for i in 0..1000u32 {
        let candidate = dir.join(format!("resplab-{}-{i}-{name}", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(mut f) => {
                f.write_all(bytes)
                    .with_context(|| format!("writing {}", candidate.display()))?;
                return Ok(candidate);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", candidate.display())),
        }
    }
    anyhow::bail!("no free file name in {}", dir.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_folder_fails_before_anything_is_done() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("no-such-dir").join("r.json");
        let e = OutFile::prepare("--json", &bad).unwrap_err().to_string();
        assert!(e.starts_with("--json "), "{e}");
        assert!(e.contains("does not exist"), "{e}");
    }

    #[test]
    fn an_unused_file_is_removed_and_a_used_one_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        drop(OutFile::prepare("--json", &p).unwrap());
        assert!(!p.exists());
        OutFile::prepare("--json", &p)
            .unwrap()
            .finish(b"{}\n")
            .unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{}\n");
        // An existing file is kept when unused, and replaced whole when written.
        drop(OutFile::prepare("--json", &p).unwrap());
        assert_eq!(std::fs::read(&p).unwrap(), b"{}\n");
        OutFile::prepare("--json", &p)
            .unwrap()
            .finish(b"1")
            .unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"1");
    }

    #[test]
    fn a_write_that_fails_at_the_end_is_saved_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let p = sub.join("r.json");
        let mut out = OutFile::prepare("--json", &p).unwrap();
        // The folder disappears during the run.
        out.file = None;
        std::fs::remove_file(&p).unwrap();
        std::fs::remove_dir(&sub).unwrap();
        let e = format!("{:#}", out.finish(b"measured").unwrap_err());
        let saved = e
            .split("saved to ")
            .nth(1)
            .and_then(|s| s.split(" instead").next())
            .unwrap_or_else(|| panic!("no saved path in: {e}"));
        assert_eq!(std::fs::read(saved).unwrap(), b"measured");
        std::fs::remove_file(saved).unwrap();
    }
}
