//! [`StopToken`]: a cloneable flag that asks a run to stop.
//!
//! The caller keeps one clone (a Ctrl-C handler sets it) and hands another to
//! [`crate::run`]. Worker threads look at it once per event-loop turn, stop sending,
//! collect what is in flight for a moment and return, so an interrupted run still yields
//! its partial results. Nothing global is involved: two runs in one process have two
//! tokens.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A shared stop flag. Cloning shares the flag.
#[derive(Clone, Debug, Default)]
pub struct StopToken {
    flag: Arc<AtomicBool>,
}

impl StopToken {
    /// A token that has not been triggered.
    pub fn new() -> Self {
        StopToken::default()
    }

    /// Asks every run holding a clone of this token to stop.
    pub fn stop(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// True once [`StopToken::stop`] was called on any clone.
    #[inline]
    pub fn is_stopped(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag() {
        let a = StopToken::new();
        let b = a.clone();
        assert!(!b.is_stopped());
        a.stop();
        assert!(b.is_stopped());
    }
}
