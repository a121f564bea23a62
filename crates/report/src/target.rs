//! Where a report document goes (`resplab report -o`): its format, asked for or read
//! from the file's extension; its file, given or named after what it reports; the
//! folder of a Markdown report's plots beside it. The file is prepared before any work
//! ([`crate::outfile`]), so a path that cannot be written fails first; once built, the
//! document is written by [`Target::write`]: a Markdown report's plots first, then its text.

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

/// A built report document, ready to write.
#[derive(Clone, Copy, Debug)]
pub enum Doc<'a> {
    Html(&'a str),
    /// The Markdown text and its plots: each an SVG file's path relative to the report's
    /// folder (`REPORT-plots/NAME.svg`, see [`plot_folder`]) and its content.
    Markdown {
        text: &'a str,
        plots: &'a [(String, String)],
    },
}

/// What [`Target::write`] wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct Written {
    pub output: PathBuf,
    /// The plot folder and the plots written in it; `None` for an HTML report.
    pub plots: Option<(PathBuf, Vec<PathBuf>)>,
}

impl Written {
    /// `wrote REPORT`, and for Markdown `and N plots in FOLDER`.
    pub fn line(&self) -> String {
        match &self.plots {
            None => format!("wrote {}", self.output.display()),
            Some((folder, plots)) => format!(
                "wrote {} and {} plots in {}",
                self.output.display(),
                plots.len(),
                folder.display()
            ),
        }
    }

    /// `wrote REPORT and PLOT and …`, each file named.
    pub fn listing(&self) -> String {
        let mut names = vec![self.output.display().to_string()];
        if let Some((_, plots)) = &self.plots {
            names.extend(plots.iter().map(|p| p.display().to_string()));
        }
        format!("wrote {}", names.join(" and "))
    }
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("cannot create the plot folder {}", folder.display())]
    PlotFolder {
        folder: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write plot {}", path.display())]
    Plot {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    File(#[from] OutFileError),
}

impl Target {
    /// Writes the document: a Markdown report's plots (their folder made when there is
    /// one), then its text to the prepared file.
    ///
    /// # Errors
    /// A plot folder or plot that cannot be written, or the report's file
    /// ([`OutFileError::SavedElsewhere`] when a copy was saved elsewhere).
    pub fn write(self, doc: Doc<'_>) -> Result<Written, WriteError> {
        match doc {
            Doc::Html(html) => {
                self.file.finish(html.as_bytes())?;
                Ok(Written {
                    output: self.output,
                    plots: None,
                })
            }
            Doc::Markdown { text, plots } => {
                let (folder, _) = plot_folder(&self.output);
                let written = write_plots(&self.output, &folder, plots)?;
                self.file.finish(text.as_bytes())?;
                Ok(Written {
                    output: self.output,
                    plots: Some((folder, written)),
                })
            }
        }
    }
}

/// Writes `plots` (paths relative to the folder of `output`) in `folder`, made first.
fn write_plots(
    output: &Path,
    folder: &Path,
    plots: &[(String, String)],
) -> Result<Vec<PathBuf>, WriteError> {
    if plots.is_empty() {
        return Ok(Vec::new());
    }
    std::fs::create_dir_all(folder).map_err(|source| WriteError::PlotFolder {
        folder: folder.to_path_buf(),
        source,
    })?;
    let base = output.parent().unwrap_or(Path::new(""));
    let mut written = Vec::with_capacity(plots.len());
    for (rel, svg) in plots {
        let path = base.join(rel);
        std::fs::write(&path, svg).map_err(|source| WriteError::Plot {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
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

    #[test]
    fn a_markdown_report_writes_its_plots_in_the_folder_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let md = dir.path().join("r.md");
        let t = prepare(None, Some(&md), "x").unwrap();
        let plots = vec![("r-plots/a.svg".to_string(), "<svg/>".to_string())];
        let w = t
            .write(Doc::Markdown {
                text: "# r\n",
                plots: &plots,
            })
            .unwrap();
        let folder = dir.path().join("r-plots");
        assert_eq!(
            std::fs::read_to_string(folder.join("a.svg")).unwrap(),
            "<svg/>"
        );
        assert_eq!(std::fs::read_to_string(&md).unwrap(), "# r\n");
        let line = format!("wrote {} and 1 plots in {}", md.display(), folder.display());
        assert_eq!(w.line(), line);
        let listing = format!(
            "wrote {} and {}",
            md.display(),
            folder.join("a.svg").display()
        );
        assert_eq!(w.listing(), listing);
        let html = dir.path().join("r.html");
        let w = prepare(None, Some(&html), "x")
            .unwrap()
            .write(Doc::Html("<p>"))
            .unwrap();
        assert_eq!(w.line(), format!("wrote {}", html.display()));
    }
}
