//! Where a report document goes (`resplab report -o`): its format, asked for or read
//! from the file's extension; its file, given or named after what it reports; the
//! folder of a Markdown report's plots beside it. The file is prepared before any work
//! ([`crate::outfile`]), so a path that cannot be written fails first.

use crate::outfile::{OutFile, OutFileError};
use std::path::{Path, PathBuf};

/// The form of a report document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocFormat {
    /// Markdown, with the plots as SVG files in a folder beside it.
    Md,
    /// One self-contained HTML file (inline SVG and CSS).
    Html,
}

/// Why the report's file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("-o {output}: cannot create the folder {folder}: {source}")]
    Folder {
        output: String,
        folder: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    File(#[from] OutFileError),
}

/// A report's format, path and prepared file.
#[derive(Debug)]
pub struct Target {
    pub format: DocFormat,
    pub output: PathBuf,
    pub file: OutFile,
}

/// Where a report goes: the format asked for (else the one `-o`'s extension names: HTML
/// unless `.md`/`.markdown`) and the file (`-o`, else `{default_stem}.md|html`), its
/// folder made when missing and the file prepared for writing.
///
/// # Errors
/// A folder that cannot be made or a file that cannot be written, naming `-o`.
pub fn prepare(
    asked: Option<DocFormat>,
    output: Option<&Path>,
    default_stem: &str,
) -> Result<Target, TargetError> {
    let format = asked.unwrap_or(
        match output.and_then(|p| p.extension()).and_then(|e| e.to_str()) {
            Some("md" | "markdown") => DocFormat::Md,
            _ => DocFormat::Html,
        },
    );
    let output = output.map(Path::to_path_buf).unwrap_or_else(|| {
        PathBuf::from(match format {
            DocFormat::Md => format!("{default_stem}.md"),
            DocFormat::Html => format!("{default_stem}.html"),
        })
    });
    // The Markdown form puts its plots beside the report, in its folder.
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.is_dir() {
            std::fs::create_dir_all(parent).map_err(|source| TargetError::Folder {
                output: output.display().to_string(),
                folder: parent.display().to_string(),
                source,
            })?;
        }
    }
    let file = OutFile::prepare("-o", &output)?;
    Ok(Target {
        format,
        output,
        file,
    })
}

/// The folder of a Markdown report's plots: its path, and its name as the report links
/// it (`REPORT-plots`, beside the report).
pub fn plot_folder(output: &Path) -> (PathBuf, String) {
    let stem = output
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("report");
    let name = format!("{stem}-plots");
    (output.parent().unwrap_or(Path::new("")).join(&name), name)
}

/// A name as part of a file name: every character but ASCII letters, digits, `-` and
/// `_` becomes `-`.
pub fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_follows_the_extension_and_the_name_the_format() {
        let dir = tempfile::tempdir().unwrap();
        let md = dir.path().join("sub/r.markdown");
        let t = prepare(None, Some(&md), "x").unwrap();
        assert_eq!(t.format, DocFormat::Md);
        assert!(dir.path().join("sub").is_dir());
        assert_eq!(plot_folder(&md).1, "r-plots");
        assert_eq!(file_stem("a b/c"), "a-b-c");
    }
}
