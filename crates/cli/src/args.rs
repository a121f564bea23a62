//! Flag groups that several subcommands share: `--db` and opening the store it names.
//! (The workload flags that `resplab bench` and `resplab proto size` share are the
//! engine's `WorkloadWords`.) A subcommand's own flags stay in its `cmd/<sub>.rs`;
//! nothing here knows a subcommand.

use clap::Args;
use std::path::PathBuf;

/// `--db`.
#[derive(Debug, Args)]
pub struct DbArg {
    /// The result store (SQLite).
    #[arg(long, default_value = resplab_store::DEFAULT_DB)]
    pub db: PathBuf,
}

impl DbArg {
    /// Opens the result store, the error naming it.
    ///
    /// # Errors
    /// The store cannot be opened or created.
    pub fn open(&self) -> anyhow::Result<resplab_store::Store> {
        open_store(&self.db)
    }
}

/// Opens the result store at `path`, the error naming it.
///
/// # Errors
/// The store cannot be opened or created.
pub fn open_store(path: &std::path::Path) -> anyhow::Result<resplab_store::Store> {
    use anyhow::Context as _;
    resplab_store::Store::open(path)
        .with_context(|| format!("opening the result store {}", path.display()))
}
