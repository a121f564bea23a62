//! What `resplab bench` prints and writes of its run: the table (with one row per
//! cluster node on request) or redis-benchmark's `--csv` or `-q` layout, and the files
//! of `--json FILE` and `--hdr-out PREFIX`, opened before the run ([`BenchFiles`]) and
//! filled from its record at the end. The caller writes the bytes and says what failed.

use super::hdr;
use super::rbcompat::{self, Test};
use super::table;
use crate::outfile::{OutFile, OutFileError};
use resplab_results::RunRecord;
use resplab_stats::hist::LatencyHistogram;

/// Which layout the run is printed in.
#[derive(Debug, Clone, Copy, Default)]
pub struct Layout {
    /// redis-benchmark's CSV.
    pub csv: bool,
    /// redis-benchmark's `-q` lines.
    pub quiet: bool,
    /// The table with one row per cluster node after it.
    pub per_node: bool,
}

/// The run's text in `layout`, its tests in run order.
pub fn text(record: &RunRecord, tests: &[Test<'_>], layout: Layout) -> String {
    if layout.csv || layout.quiet {
        let lines = rbcompat::test_lines(tests, record, None);
        return if layout.csv {
            rbcompat::csv(&lines)
        } else {
            rbcompat::quiet(&lines)
        };
    }
    let order: Vec<String> = tests
        .iter()
        .flat_map(|t| t.commands.iter().cloned())
        .collect();
    let mut text = table::render(record, &order);
    if layout.per_node {
        text.push_str(&table::render_nodes(record));
    }
    text
}

/// The files a bench run writes, opened before it starts.
#[derive(Debug)]
pub struct BenchFiles {
    /// `--json FILE` (not `--json -`).
    json: Option<OutFile>,
    /// `(command or TOTAL, file)` for `--hdr-out`.
    hdr: Vec<(String, OutFile)>,
}

impl BenchFiles {
    /// Opens `--json`'s file (unless it is `-`) and one `--hdr-out` file per command of
    /// the tests and one for their total.
    ///
    /// # Errors
    /// A file that cannot be created, named by its flag.
    pub fn prepare(
        json: Option<&str>,
        hdr_out: Option<&str>,
        tests: &[Test<'_>],
    ) -> Result<Self, OutFileError> {
        let json = match json {
            None | Some("-") => None,
            Some(path) => Some(OutFile::prepare("--json", path)?),
        };
        let mut hdr_files = Vec::new();
        if let Some(prefix) = hdr_out {
            let mut names: Vec<String> = Vec::new();
            for c in tests.iter().flat_map(|t| t.commands) {
                if !names.contains(c) {
                    names.push(c.clone());
                }
            }
            names.push("TOTAL".into());
            for name in names {
                let path = format!("{prefix}_{}.hgrm", hdr::file_stem(&name));
                hdr_files.push((name, OutFile::prepare("--hdr-out", &path)?));
            }
        }
        Ok(BenchFiles {
            json,
            hdr: hdr_files,
        })
    }

    /// Each file with what it is to hold: the record as pretty JSON, and each command's
    /// (and the total's) percentile distribution. A command that never ran gets no file
    /// (the one prepared is removed as it is dropped).
    pub fn contents(self, record: &RunRecord, json_text: &str) -> Vec<(OutFile, Vec<u8>)> {
        let mut out = Vec::new();
        if let Some(file) = self.json {
            out.push((file, format!("{json_text}\n").into_bytes()));
        }
        for (name, file) in self.hdr {
            let encoded = if name == "TOTAL" {
                Some(record.totals.histogram.as_str())
            } else {
                record.commands.get(&name).map(|s| s.histogram.as_str())
            };
            if let Some(encoded) = encoded {
                let h = LatencyHistogram::from_base64(encoded).unwrap_or_default();
                out.push((file, hdr::percentile_distribution(&h).into_bytes()));
            }
        }
        out
    }
}
