//! Open loop's alarm: a `timerfd` in the worker's poller, set for the next intended send.
//!
//! `epoll_wait` counts its timeout in whole milliseconds (mio rounds it up), too coarse
//! for a schedule whose sends are a millisecond or less apart: waiting on it alone means
//! either sending up to a millisecond late or polling without blocking, which keeps a
//! core busy whatever the rate. A timer file descriptor fires with nanosecond resolution
//! and wakes the same `epoll_wait` that waits for replies, so a worker sleeps until just
//! before its next send and still reads every reply the moment it arrives.
//!
//! The alarm is set [`SPIN_NS`] before the intended time; the loop polls without
//! blocking for that last stretch, which absorbs the thread's wake-up latency so the
//! send lag stays at what spinning alone gives.

use mio::unix::SourceFd;
use mio::{Interest, Poll, Token};
use nix::sys::time::TimeSpec;
use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

/// The poller token of the alarm; connections use their index, which never reaches it.
pub(super) const TIMER: Token = Token(usize::MAX);

/// How long before an intended send the alarm goes off; the rest is spent polling
/// without blocking. A thread woken from `epoll_wait` on an idle core runs again within
/// a few microseconds to a few tens of them: this margin covers that, and costs 3 % of a
/// core at 1,000 sends a second. Where the thread must wait for a CPU behind other work,
/// no margin short of spinning all the time helps (BENCHMARKS.md, section 11).
pub(super) const SPIN_NS: u64 = 30_000;

/// A worker's alarm for its next intended send.
pub(super) struct SendTimer {
    fd: TimerFd,
    /// When the alarm is set to go off (ns since the epoch); `None` when not set.
    armed_for: Option<u64>,
}

impl SendTimer {
    /// Creates the timer and registers it with `poll` under [`TIMER`].
    ///
    /// # Errors
    /// When the kernel refuses a timer file descriptor or its registration.
    pub(super) fn new(poll: &Poll) -> std::io::Result<SendTimer> {
        let fd = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )?;
        let raw = fd.as_fd().as_raw_fd();
        poll.registry()
            .register(&mut SourceFd(&raw), TIMER, Interest::READABLE)?;
        Ok(SendTimer {
            fd,
            armed_for: None,
        })
    }

    /// Sets the alarm to go off at `at` (ns since the epoch; `now` is the time now), unless
    /// it is already set for that moment. Returns whether the alarm is set.
    pub(super) fn arm(&mut self, at: u64, now: u64) -> bool {
        if self.armed_for == Some(at) {
            return true;
        }
        // A zero time would disarm the timer rather than fire it at once.
        let after = Duration::from_nanos(at.saturating_sub(now).max(1));
        let set = self.fd.set(
            Expiration::OneShot(TimeSpec::from_duration(after)),
            TimerSetTimeFlags::empty(),
        );
        self.armed_for = set.is_ok().then_some(at);
        set.is_ok()
    }
}
