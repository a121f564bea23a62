//! Facts about the machine the load generator runs on, and the CPU time it uses.
//!
//! [`detect`] reads `/proc` and `/sys` (Linux); anything unreadable is left empty rather
//! than failing, since a missing fact must not stop a run. [`process_cpu_time`] reads the
//! process's user and system time from `/proc/self/stat`. The kernel reports those in
//! clock ticks of `USER_HZ`, which is 100 per second on every Linux architecture resplab
//! targets, so the resolution is 10 ms: ample for runs of seconds, and the reason the
//! engine reports CPU time per run rather than per request batch.

use resplab_results::{CpuTime, HostInfo};
use std::fs;

/// Clock ticks per second in `/proc/<pid>/stat` (`USER_HZ`).
const USER_HZ: f64 = 100.0;

/// Describes this machine: host name, CPU model, logical cores, kernel, OS and the CPU
/// frequency governor of cpu0 when readable.
pub fn detect() -> HostInfo {
    let read = |p: &str| {
        fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let cpuinfo = read("/proc/cpuinfo");
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "model name" | "Model" | "cpu model").then(|| v.trim().to_string())
        })
        .unwrap_or_default();
    let cores = std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or_else(|_| {
            cpuinfo
                .lines()
                .filter(|l| l.starts_with("processor"))
                .count() as u32
        });
    let os = read("/etc/os-release")
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| std::env::consts::OS.to_string());
    let governor = read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    HostInfo {
        hostname: read("/proc/sys/kernel/hostname"),
        cpu_model,
        cores,
        kernel: read("/proc/sys/kernel/osrelease"),
        os,
        governor: (!governor.is_empty()).then_some(governor),
    }
}

/// User and system CPU time used so far by this process (all threads), or zero when
/// `/proc/self/stat` cannot be read.
pub fn process_cpu_time() -> CpuTime {
    fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| parse_stat_times(&s))
        .unwrap_or_default()
}

/// Parses `utime` and `stime` (fields 14 and 15) of a `/proc/<pid>/stat` line.
///
/// The second field, the command name in parentheses, may contain spaces and
/// parentheses itself, so fields are counted from the last `)`.
fn parse_stat_times(stat: &str) -> Option<CpuTime> {
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_ascii_whitespace();
    // After the name: state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
    // cmajflt utime(14) stime(15).
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(CpuTime {
        user_sec: utime as f64 / USER_HZ,
        system_sec: stime as f64 / USER_HZ,
    })
}

/// `later - earlier`, never negative.
pub fn cpu_delta(earlier: &CpuTime, later: &CpuTime) -> CpuTime {
    CpuTime {
        user_sec: (later.user_sec - earlier.user_sec).max(0.0),
        system_sec: (later.system_sec - earlier.system_sec).max(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_command_names() {
        let line = "1234 (my (odd) prog) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 75 0 0 20 0 3 0";
        let t = parse_stat_times(line).unwrap();
        assert!((t.user_sec - 2.5).abs() < 1e-9);
        assert!((t.system_sec - 0.75).abs() < 1e-9);
        assert!(parse_stat_times("garbage").is_none());
        assert!(parse_stat_times("1 (x) S 1 2").is_none());
    }

    #[test]
    fn this_process_has_facts() {
        let h = detect();
        assert!(h.cores >= 1);
        assert!(!h.kernel.is_empty());
        // Spin until the kernel has charged this process a clock tick; a reader that
        // always returns zero fails after the deadline.
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while process_cpu_time().total_sec() <= 0.0 {
            for i in 0..1_000_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(20),
                "no CPU time read from /proc/self/stat"
            );
        }
    }
}
