//! `resplab completions` and `resplab man`: shell completion scripts and manual pages,
//! both generated from the live command definition, so they always match the flags.

use crate::output::write_stdout;
use anyhow::Context as _;
use clap::{Args, Command};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Flags of `resplab completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Flags of `resplab man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write `resplab.1` and one page per subcommand (`resplab-bench.1`, …) into this
    /// folder instead of printing the main page.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// Prints the completion script for `a.shell`.
///
/// # Errors
/// Standard output cannot be written.
pub fn completions(a: &CompletionsArgs, mut cmd: Command) -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "resplab", &mut out);
    write_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// Prints the main manual page, or writes every page into a folder.
///
/// # Errors
/// A page cannot be rendered or written.
pub fn man(a: &ManArgs, cmd: Command) -> anyhow::Result<ExitCode> {
    let cmd = cmd.version(env!("CARGO_PKG_VERSION"));
    match &a.output {
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut out)?;
            write_stdout(&out)?;
        }
        Some(dir) => {
            if !dir.is_dir() {
                anyhow::bail!(
                    "-o {}: expected an existing folder to write the pages into",
                    dir.display()
                );
            }
            let written = write_pages(&cmd, dir, "")?;
            println!("wrote {written} manual pages in {}", dir.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the page of `cmd` and of each subcommand, recursively; returns how many.
fn write_pages(cmd: &Command, dir: &Path, prefix: &str) -> anyhow::Result<usize> {
    let name = if prefix.is_empty() {
        cmd.get_name().to_string()
    } else {
        format!("{prefix}-{}", cmd.get_name())
    };
    let path = dir.join(format!("{name}.1"));
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .title(name.to_uppercase())
        .render(&mut out)?;
    std::fs::write(&path, out).with_context(|| format!("-o: cannot write {}", path.display()))?;
    let mut n = 1;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        n += write_pages(sub, dir, &name)?;
    }
    Ok(n)
}
