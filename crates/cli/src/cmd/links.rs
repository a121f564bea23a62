//! `resplab install-links DIR`, and the names resplab answers to.
//!
//! A link named `memtier_benchmark` to the resplab binary runs `resplab memtier` with
//! the link's arguments, one named `redis-benchmark` or `valkey-benchmark` runs `resplab
//! redis-benchmark` (the name is read from argv[0] in `main`), so scripts that call those
//! tools switch to resplab by `PATH` alone.

use anyhow::Context as _;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The names resplab answers to and the subcommand each stands for.
pub const NAMES: &[(&str, &str)] = &[
    ("memtier_benchmark", "memtier"),
    ("redis-benchmark", "redis-benchmark"),
    ("valkey-benchmark", "redis-benchmark"),
];

/// The subcommand a program name stands for (`memtier_benchmark` → `memtier`), if any.
pub fn subcommand_for(argv0: &str) -> Option<&'static str> {
    let name = Path::new(argv0).file_name()?.to_str()?;
    NAMES.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// `resplab install-links DIR`.
#[derive(Debug, Args)]
pub struct InstallLinksArgs {
    /// Folder to put the links in (e.g. ~/.local/bin, ahead of the real tools on PATH).
    pub dir: PathBuf,
}

/// Makes a symbolic link per name in `dir`, pointing at this binary; an existing link
/// is replaced, any other file is left alone and reported.
///
/// # Errors
/// The folder does not exist, a name is taken by a file that is not a link, or the
/// link cannot be made.
pub fn run(args: &InstallLinksArgs) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("finding the resplab binary")?;
    if !args.dir.is_dir() {
        anyhow::bail!(
            "install-links {}: expected an existing folder",
            args.dir.display()
        );
    }
    for (name, sub) in NAMES {
        let link = args.dir.join(name);
        if let Ok(meta) = std::fs::symlink_metadata(&link) {
            if !meta.file_type().is_symlink() {
                anyhow::bail!(
                    "install-links: {} exists and is not a link; remove it or choose another folder",
                    link.display()
                );
            }
            std::fs::remove_file(&link).with_context(|| format!("replacing {}", link.display()))?;
        }
        std::os::unix::fs::symlink(&exe, &link)
            .with_context(|| format!("linking {} to {}", link.display(), exe.display()))?;
        println!(
            "{} -> {} (runs resplab {sub})",
            link.display(),
            exe.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
