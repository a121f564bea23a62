//! A known extra cost in one named command: the `slow-command` and `slow-command-ns` knobs
//! (`--slow-command NAME --slow-command-ns NS`) make every call of that command spin a
//! further NS nanoseconds of CPU in [`slow_command_cost`], a function of its own that is never
//! inlined, so a sampled profile of the server finds the injected cost under one stable,
//! distinctive name (the test of the changed-functions table relies on it).

use crate::Knobs;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Charges `name`'s call the slow command's cost when it is the slow command.
pub(crate) fn charge(knobs: &Knobs, name: &str) {
    let ns = knobs.slow_command_ns.load(Ordering::Relaxed);
    if ns == 0 {
        return;
    }
    let is_slow = knobs
        .slow_command
        .read()
        .is_ok_and(|slow| slow.eq_ignore_ascii_case(name));
    if is_slow {
        slow_command_cost(ns);
    }
}

/// Spins `ns` nanoseconds of this thread's CPU time doing arithmetic in this very
/// function (the clock is read once every 1024 rounds, so samples taken during the cost
/// land here and not in the clock's system call). CPU time, as [`crate::spin`]: a
/// thread preempted while it spins still pays the whole cost, so the cost's share of a
/// profile does not shrink on a busy machine. Where the thread clock cannot be read, it
/// spins on the wall clock.
#[inline(never)]
pub fn slow_command_cost(ns: u64) {
    let from = crate::thread_cpu_ns();
    let wall_until = Instant::now() + Duration::from_nanos(ns);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    loop {
        for _ in 0..1024 {
            x = std::hint::black_box(x.rotate_left(5) ^ 0x2545_f491_4f6c_dd1d).wrapping_mul(3);
        }
        let done = if from == 0 {
            Instant::now() >= wall_until
        } else {
            crate::thread_cpu_ns().saturating_sub(from) >= ns
        };
        if done {
            break;
        }
    }
    std::hint::black_box(x);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_named_command_pays_the_cost() {
        let knobs = Knobs::from_config(&crate::Config {
            slow_command: Some("set".into()),
            slow_command_ns: 20_000_000,
            ..crate::Config::default()
        });
        let t = Instant::now();
        charge(&knobs, "GET");
        assert!(t.elapsed() < Duration::from_millis(10));
        let t = Instant::now();
        charge(&knobs, "SET");
        assert!(t.elapsed() >= Duration::from_millis(20));
        knobs.set("slow-command", "get").unwrap();
        knobs.set("slow-command-ns", "0").unwrap();
        let t = Instant::now();
        charge(&knobs, "GET");
        assert!(t.elapsed() < Duration::from_millis(10));
        assert!(knobs
            .all()
            .contains(&("slow-command".to_string(), "GET".to_string())));
    }
}
