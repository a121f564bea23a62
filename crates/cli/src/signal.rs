//! SIGINT, SIGTERM and SIGHUP: one handling for all three.
//!
//! Ctrl-C at a terminal sends SIGINT; `timeout`, CI cancellation, `docker stop` and
//! Kubernetes send SIGTERM; a closed terminal sends SIGHUP. Each asks the command to stop
//! the same way: [`set_handler`]'s closure runs (it trips the run's stop token), the
//! command writes and labels its partial results and stops its servers, and
//! [`exit_code`] then turns the exit code into 128 + the signal for SIGTERM (143) and
//! SIGHUP (129), as a shell reports a process ended by them. SIGINT keeps the command's
//! own code (an interrupted run exits 2). A second signal while results are written runs
//! the closure again, which changes nothing: they are written quickly.
//!
//! The signal that came is kept in one process-wide cell, as the signal disposition
//! itself is process-wide.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};

/// The first SIGTERM or SIGHUP received (0: none).
static TERMINATED_BY: AtomicI32 = AtomicI32::new(0);

/// Runs `f` on a helper thread each time SIGINT, SIGTERM or SIGHUP arrives.
///
/// # Errors
/// When the handlers cannot be installed; the signals then keep their default action.
pub fn set_handler(f: impl Fn() + Send + 'static) -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::spawn(move || {
        for sig in signals.forever() {
            if sig != SIGINT {
                let _ = TERMINATED_BY.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
            }
            f();
        }
    });
    Ok(())
}

/// A stop token that SIGINT, SIGTERM and SIGHUP trip (where the handlers could not be
/// installed, the signals keep their default action and the token trips only by hand).
pub fn stop_token() -> resplab_engine::StopToken {
    let stop = resplab_engine::StopToken::new();
    let tripped = stop.clone();
    let _ = set_handler(move || tripped.stop());
    stop
}

/// `code`, or 128 + the signal when a SIGTERM or SIGHUP asked the command to stop.
pub fn exit_code(code: ExitCode) -> ExitCode {
    match TERMINATED_BY.load(Ordering::SeqCst) {
        0 => code,
        sig => ExitCode::from(u8::try_from(128 + sig).unwrap_or(u8::MAX)),
    }
}
