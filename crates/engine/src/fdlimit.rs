//! The open-file limit of this process, raised when a run needs more connections than it
//! allows.
//!
//! Every connection is a file descriptor. The soft limit (often 1024) is raised as far as
//! the hard limit when the run needs more; when the hard limit itself is too low, the run
//! is refused before connecting, with the number needed, instead of failing half-way
//! through set-up with "Too many open files". Child processes started afterwards (a
//! throwaway server) inherit the raised limit.

use crate::error::EngineError;

/// Descriptors a run needs besides its connections: standard streams, one poller and
/// one waker per thread, the control connection, files being written.
const SPARE: u64 = 64;

/// Open files a run with `clients` connections on `threads` threads needs.
pub fn files_needed(clients: u32, threads: u32) -> u64 {
    u64::from(clients) + 2 * u64::from(threads) + SPARE
}

/// The soft and hard open-file limits of this process.
///
/// # Errors
/// When the limits cannot be read.
pub fn open_file_limits() -> std::io::Result<(u64, u64)> {
    rlimit::getrlimit(rlimit::Resource::NOFILE)
}

/// Makes sure this process may open `needed` files: raises the soft limit (up to the hard
/// limit) when it is lower. Returns the soft limit now in force.
///
/// # Errors
/// [`EngineError::OpenFiles`] when the hard limit is below `needed` or the limit cannot
/// be changed.
pub fn ensure_open_files(needed: u64) -> Result<u64, EngineError> {
    let (soft, hard) = match open_file_limits() {
        Ok(l) => l,
        // Limits that cannot be read cannot be checked: let the connections tell.
        Err(_) => return Ok(needed),
    };
    if soft >= needed {
        return Ok(soft);
    }
    if hard < needed {
        return Err(EngineError::OpenFiles {
            needed,
            hard,
            reason: None,
        });
    }
    // As far as the hard limit allows: servers started from here inherit it and need
    // their own share.
    let raised = hard.min(needed.saturating_mul(2).max(needed + 1024));
    rlimit::setrlimit(rlimit::Resource::NOFILE, raised, hard).map_err(|e| {
        EngineError::OpenFiles {
            needed,
            hard,
            reason: Some(e.to_string()),
        }
    })?;
    Ok(raised)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_already_allowed_is_left_alone() {
        let (soft, _) = open_file_limits().unwrap();
        assert_eq!(ensure_open_files(soft.min(100)).unwrap(), soft);
    }

    #[test]
    fn more_than_the_hard_limit_is_refused_with_the_number_needed() {
        let (_, hard) = open_file_limits().unwrap();
        if hard == rlimit::INFINITY {
            return;
        }
        let e = ensure_open_files(hard + 1).unwrap_err().to_string();
        assert!(e.contains(&format!("{} open files", hard + 1)), "{e}");
        assert!(
            e.contains(&format!("hard limit of this process is {hard}")),
            "{e}"
        );
    }
}
