//! Facts about the machine the load generator runs on, and the CPU time it uses.
//!
//! [`detect`] reads `/proc` and `/sys` (Linux); anything unreadable is left empty rather
//! than failing, since a missing fact must not stop a run. [`process_cpu_time`] gives the
//! process's user and system time from `/proc/self/stat`, as `resplab_sys::proc` reads
//! it. The kernel reports those in clock ticks of `USER_HZ`, which is 100 per second on
//! every Linux architecture resplab targets, so the resolution is 10 ms: ample for runs
//! of seconds, and the reason the engine reports CPU time per run rather than per
//! request batch.

use resplab_results::{CpuTime, HostInfo};
use std::fs;

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
/// `/proc/self/stat` cannot be read ([`resplab_sys::proc::own_cpu`]).
pub fn process_cpu_time() -> CpuTime {
    resplab_sys::proc::own_cpu()
        .map(|c| CpuTime {
            user_sec: c.user_sec,
            system_sec: c.system_sec,
        })
        .unwrap_or_default()
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
                "process_cpu_time stayed at zero"
            );
        }
    }
}
