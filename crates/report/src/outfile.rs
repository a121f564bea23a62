//! Output files that are checked before anything is measured.
//!
//! A run must never be lost to an output path. Every file a command will write is opened
//! (created) before the first request, so a missing folder or a read-only path fails in
//! the first second with the flag named, not after the whole run. If writing still fails
//! at the end (the disk filled up, the folder was removed), the bytes go to a file in the
//! temporary folder instead, and the error says where ([`OutFileError::SavedElsewhere`]:
//! the caller tells the user).

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

/// Why an output file cannot be used. Each message starts with the flag that named it.
#[derive(Debug, thiserror::Error)]
pub enum OutFileError {
    #[error("{flag}: expected a file path, found an empty value")]
    Empty { flag: String },
    #[error("{flag} {}: expected a file path, found a folder", path.display())]
    Folder { flag: String, path: PathBuf },
    /// The file cannot be created (said before anything is measured).
    #[error("{flag} {}: cannot write there{hint}: {error}; nothing was measured", path.display())]
    Open {
        flag: String,
        path: PathBuf,
        /// A missing folder, named.
        hint: String,
        error: std::io::Error,
    },
    /// Writing failed at the end; the bytes were saved to `saved` instead.
    #[error("saved to {} instead", saved.display())]
    SavedElsewhere {
        saved: PathBuf,
        #[source]
        first: WriteFailed,
    },
    /// Writing failed at the end, and so did saving a copy.
    #[error("and no copy could be saved: {why}")]
    NotSaved {
        why: String,
        #[source]
        first: WriteFailed,
    },
}

/// The first failure to write an output file at the end of a run.
#[derive(Debug, thiserror::Error)]
#[error("{flag} {}: cannot write the file: {error}", path.display())]
pub struct WriteFailed {
    pub flag: String,
    pub path: PathBuf,
    pub error: std::io::Error,
}

impl OutFile {
    /// Opens `path` for writing (creating it) on behalf of `flag`.
    ///
    /// # Errors
    /// The path cannot be created or written, with the flag, the path and the reason.
    pub fn prepare(flag: &str, path: impl AsRef<Path>) -> Result<Self, OutFileError> {
        let path = path.as_ref().to_path_buf();
        let flag = flag.to_string();
        if path.as_os_str().is_empty() {
            return Err(OutFileError::Empty { flag });
        }
        if path.is_dir() {
            return Err(OutFileError::Folder { flag, path });
        }
        let existed = path.exists();
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path);
        let file = match opened {
            Ok(f) => f,
            Err(error) => {
                let hint = match path.parent() {
                    Some(p) if !p.as_os_str().is_empty() && !p.exists() => {
                        format!(" (the folder {} does not exist)", p.display())
                    }
                    _ => String::new(),
                };
                return Err(OutFileError::Open {
                    flag,
                    path,
                    hint,
                    error,
                });
            }
        };
        Ok(OutFile {
            flag,
            path,
            file: Some(file),
            created: !existed,
        })
    }

    /// Writes `bytes` as the whole content of the file. If that fails, writes them to a
    /// file in the temporary folder and says where in the error.
    ///
    /// # Errors
    /// The file could not be written: [`OutFileError::SavedElsewhere`] with the copy's
    /// path, or [`OutFileError::NotSaved`].
    pub fn finish(mut self, bytes: &[u8]) -> Result<(), OutFileError> {
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
        let Err(error) = result else { return Ok(()) };
        let first = WriteFailed {
            flag: self.flag.clone(),
            path: self.path.clone(),
            error,
        };
        Err(match save_elsewhere(&self.path, bytes) {
            Ok(saved) => OutFileError::SavedElsewhere { saved, first },
            Err(why) => OutFileError::NotSaved { why, first },
        })
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

/// Writes `bytes` to a new file in the temporary folder named after `original`; the
/// error says which step failed.
fn save_elsewhere(original: &Path, bytes: &[u8]) -> Result<PathBuf, String> {
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
                    .map_err(|_| format!("writing {}", candidate.display()))?;
                return Ok(candidate);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => return Err(format!("creating {}", candidate.display())),
        }
    }
    Err(format!("no free file name in {}", dir.display()))
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
        let err = out.finish(b"measured").unwrap_err();
        let e = format!(
            "{err}: {}",
            std::error::Error::source(&err)
                .map(ToString::to_string)
                .unwrap_or_default()
        );
        let saved = e
            .split("saved to ")
            .nth(1)
            .and_then(|s| s.split(" instead").next())
            .unwrap_or_else(|| panic!("no saved path in: {e}"));
        assert_eq!(std::fs::read(saved).unwrap(), b"measured");
        std::fs::remove_file(saved).unwrap();
    }
}
