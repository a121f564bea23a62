//! Where the output of a command goes: output files opened before anything is measured
//! (`resplab_report::outfile`, with [`finish`] saying where a copy went when the file
//! could not be written), the live progress line on a terminal, and the live metrics
//! endpoint's announcement. The exporters themselves (table, CSV, HDR files) are
//! `resplab_report::run`.

pub mod metrics;
pub mod progress;

pub use resplab_report::outfile::OutFile;
use resplab_report::outfile::OutFileError;
use resplab_report::run::rbcompat::Test;

/// Writes `bytes` as the whole of `file`; when that failed and a copy was saved in the
/// temporary folder, says where on standard error.
///
/// # Errors
/// The file could not be written.
pub fn finish(file: OutFile, bytes: &[u8]) -> anyhow::Result<()> {
    file.finish(bytes).map_err(|e| {
        note_saved_elsewhere(&e);
        e.into()
    })
}

/// The line on standard error that says where a file that could not be written was
/// saved instead, when it was.
pub fn note_saved_elsewhere(e: &OutFileError) {
    if let OutFileError::SavedElsewhere { saved, first } = e {
        eprintln!(
            "resplab: {} {} could not be written ({}); saved to {} instead",
            first.flag,
            first.path.display(),
            first.error,
            saved.display()
        );
    }
}

/// Shows `text` on standard output, flushed; whatever happens to standard output (a
/// closed pipe, `| head`) does not concern the command, which goes on.
pub fn show(text: &str) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// Writes `bytes` to standard output and flushes; a closed pipe (`| head`) is not an
/// error.
///
/// # Errors
/// Standard output cannot be written.
pub fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e).context("cannot write standard output"),
    }
}

/// A workload's tests (phases) as the report names them, in run order.
pub fn tests(workload: &resplab_workload::Workload) -> Vec<Test<'_>> {
    workload
        .phases()
        .iter()
        .map(|p| Test {
            title: &p.title,
            commands: &p.commands,
        })
        .collect()
}
