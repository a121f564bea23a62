//! Flag groups that several subcommands share: `--db`. A subcommand's own flags
//! stay in its `cmd/<sub>.rs`; nothing here knows a subcommand.

use clap::Args;
use std::path::PathBuf;

/// `--db`.
#[derive(Debug, Args)]
pub struct DbArg {
    /// The result store (SQLite).
    #[arg(long, default_value = resplab_store::DEFAULT_DB)]
    pub db: PathBuf,
}
