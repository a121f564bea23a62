//! The outputs of a `resplab memtier` line: `--out-file` (or standard output) and
//! `--json-out-file`, opened before the first request so that a bad path costs no run,
//! and the `--hdr-file-prefix` files, whose names depend on the commands, in a folder
//! checked before the run. [`MemtierFiles::contents`] renders them all from the runs;
//! the caller writes the bytes and says what failed.

use super::{hdr, json, sections, table, Shape};
use crate::outfile::{OutFile, OutFileError};
use resplab_results::RunRecord;

/// The outputs of a memtier line, prepared before it runs.
#[derive(Debug)]
pub struct MemtierFiles {
    out: Option<OutFile>,
    json: Option<OutFile>,
    hdr_prefix: Option<String>,
}

/// What the runs produced: the text report for standard output (when no `--out-file`
/// takes it), each prepared file with its bytes, and the files that could not be opened.
#[derive(Debug)]
pub struct Contents {
    pub stdout: Option<String>,
    pub files: Vec<(OutFile, Vec<u8>)>,
    pub failures: Vec<OutFileError>,
}

impl MemtierFiles {
    /// Opens `--out-file` and `--json-out-file`, and checks that a file can be made with
    /// `--hdr-file-prefix`.
    ///
    /// # Errors
    /// A file that cannot be created, named by its flag.
    pub fn prepare(
        out_file: Option<&str>,
        json_out_file: Option<&str>,
        hdr_file_prefix: Option<&str>,
    ) -> Result<Self, OutFileError> {
        if let Some(prefix) = hdr_file_prefix {
            // The HDR files' names depend on the commands; their folder must exist now.
            let probe = format!("{prefix}_FULL_RUN_1.txt");
            drop(OutFile::prepare("--hdr-file-prefix", probe)?);
        }
        let open =
            |flag: &str, path: Option<&str>| path.map(|p| OutFile::prepare(flag, p)).transpose();
        Ok(MemtierFiles {
            out: open("--out-file", out_file)?,
            json: open("--json-out-file", json_out_file)?,
            hdr_prefix: hdr_file_prefix.map(str::to_string),
        })
    }

    /// The text report, the JSON document (with `configuration`, memtier's echo of its
    /// options, made only when asked for) and the HDR files of each run.
    pub fn contents(
        self,
        shape: &Shape,
        runs: &[RunRecord],
        print_all_runs: bool,
        configuration: impl FnOnce() -> serde_json::Value,
    ) -> Contents {
        let shown = sections(shape, runs, print_all_runs);
        let text = table::render(shape, &shown);
        let mut c = Contents {
            stdout: None,
            files: Vec::new(),
            failures: Vec::new(),
        };
        match self.out {
            Some(f) => c.files.push((f, text.into_bytes())),
            None => c.stdout = Some(text),
        }
        if let Some(f) = self.json {
            let doc = json::document(shape, configuration(), &shown, runs);
            c.files.push((f, json::to_text(&doc).into_bytes()));
        }
        if let Some(prefix) = &self.hdr_prefix {
            let each = sections(shape, runs, true);
            // One run: its section; several: one per run (not best, worst and average).
            let per_run = if runs.len() == 1 {
                each.len()
            } else {
                runs.len()
            };
            for (i, s) in each.iter().take(per_run).enumerate() {
                for (path, body) in hdr::files(prefix, i + 1, s) {
                    match OutFile::prepare("--hdr-file-prefix", &path) {
                        Ok(f) => c.files.push((f, body.into_bytes())),
                        Err(e) => c.failures.push(e),
                    }
                }
            }
        }
        c
    }
}
