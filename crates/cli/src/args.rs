//! Flag groups that several subcommands share, and their checks: `--db`, and the
//! `--confidence`/`--margin` pair of `compare` and `report`. A subcommand's own flags
//! stay in its `cmd/<sub>.rs`; nothing here knows a subcommand.

use anyhow::bail;
use clap::Args;
use std::path::PathBuf;

/// `--db`.
#[derive(Debug, Args)]
pub struct DbArg {
    /// The result store (SQLite).
    #[arg(long, default_value = resplab_store::DEFAULT_DB)]
    pub db: PathBuf,
}

/// Checks `-c/--confidence` (a percentage strictly between 0 and 100) and `--margin` (a
/// positive percentage), as `compare` and `report` take them.
///
/// # Errors
/// A message naming the flag, what it expects and what it found.
pub fn check_confidence_and_margin(confidence: f64, margin: Option<f64>) -> anyhow::Result<()> {
    if !(confidence > 0.0 && confidence < 100.0) {
        bail!("--confidence: expected a percentage between 0 and 100, found {confidence}");
    }
    if let Some(m) = margin {
        if !(m > 0.0 && m.is_finite()) {
            bail!("--margin: expected a positive percentage, found {m}");
        }
    }
    Ok(())
}
