//! The one reader of `/proc`: CPU time, start times, memory, CPU masks, and processes.
//!
//! `/proc/<pid>/stat` gives times in clock ticks of `USER_HZ`, which is 100 per second on
//! every Linux architecture resplab targets (10 ms resolution: ample for runs of seconds).
//! Its second field, the command name in parentheses, may hold spaces and parentheses, so
//! fields are counted from the last `)`. This process's own CPU time and its children's
//! come from `getrusage`, to the microsecond. The CPU time of the calling thread comes from the
//! kernel's per-thread CPU clock (`CLOCK_THREAD_CPUTIME_ID`): the same counter as the first
//! field of `/proc/thread-self/schedstat`, but read to the nanosecond at every call rather
//! than as of the last scheduler tick, and without opening a file, so a busy-wait can
//! poll it.
//!
//! The counters of another process ([`process_counters`]) are summed over its threads
//! (`/proc/<pid>/task/*`): run time to the nanosecond from each thread's `schedstat`
//! (the kernel's per-task run time, not quantised to clock ticks), context switches from
//! each `status`, CPU migrations from each `sched` (present where the kernel keeps
//! scheduler statistics), and page faults and the user/system split from the process's
//! own `stat`.
//!
//! Every reader answers `None` (or nothing) where `/proc` cannot be read: a missing fact
//! must not stop a run.

use std::fs;
use std::path::{Path, PathBuf};

/// Clock ticks per second in `/proc/<pid>/stat` (`USER_HZ`).
pub const USER_HZ: f64 = 100.0;

/// The fields of a `/proc/<pid>/stat` line that resplab uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// Field 3: `R`, `S`, `Z` (a zombie waiting for its parent) …
    pub state: char,
    /// Field 5: the process group.
    pub pgrp: u32,
    /// Fields 14 and 15: user and system time, in ticks.
    pub utime: u64,
    pub stime: u64,
    /// Fields 16 and 17: user and system time of waited-for children, in ticks.
    pub cutime: u64,
    pub cstime: u64,
    /// Field 22: when the process started, in ticks since boot.
    pub start_ticks: u64,
}

/// User and system CPU seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuSeconds {
    pub user_sec: f64,
    pub system_sec: f64,
}

/// The scheduler and memory counters of one process, summed over its live threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcessCounters {
    /// Time spent running on a CPU, in nanoseconds (first field of `schedstat`).
    pub run_ns: u64,
    /// Time spent runnable but waiting for a CPU, in nanoseconds (second field).
    pub wait_ns: u64,
    /// `voluntary_ctxt_switches`: the thread gave up its CPU (it waited for I/O, a lock).
    pub voluntary_switches: u64,
    /// `nonvoluntary_ctxt_switches`: the scheduler took the CPU away.
    pub involuntary_switches: u64,
    /// `se.nr_migrations`: moves to another CPU; `None` where `sched` is not kept.
    pub migrations: Option<u64>,
    /// Minor and major page faults of the process (fields 10 and 12 of `stat`).
    pub minor_faults: u64,
    pub major_faults: u64,
    /// User and system time of the process, in clock ticks (fields 14 and 15).
    pub utime_ticks: u64,
    pub stime_ticks: u64,
}

/// The counters of process `pid` ([`ProcessCounters`]); `None` when it is gone or its
/// `/proc` entries cannot be read.
pub fn process_counters(pid: u32) -> Option<ProcessCounters> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = after.split_ascii_whitespace().collect();
    let num = |field: usize| f.get(field - 3)?.parse::<u64>().ok();
    let mut c = ProcessCounters {
        minor_faults: num(10)?,
        major_faults: num(12)?,
        utime_ticks: num(14)?,
        stime_ticks: num(15)?,
        migrations: Some(0),
        ..ProcessCounters::default()
    };
    let tasks = fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    for task in tasks.flatten() {
        let dir = task.path();
        // A thread that exits while being read is simply not counted.
        let Ok(schedstat) = fs::read_to_string(dir.join("schedstat")) else {
            continue;
        };
        let (run, wait) = parse_schedstat(&schedstat).unwrap_or_default();
        c.run_ns += run;
        c.wait_ns += wait;
        if let Ok(status) = fs::read_to_string(dir.join("status")) {
            c.voluntary_switches += status_number(&status, "voluntary_ctxt_switches");
            c.involuntary_switches += status_number(&status, "nonvoluntary_ctxt_switches");
        }
        let migrations = fs::read_to_string(dir.join("sched"))
            .ok()
            .and_then(|s| sched_number(&s, "se.nr_migrations"));
        c.migrations = c.migrations.zip(migrations).map(|(a, b)| a + b);
    }
    Some(c)
}

/// The run and wait nanoseconds of a `schedstat` line (`run wait timeslices`).
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_ascii_whitespace().map(str::parse::<u64>);
    Some((f.next()?.ok()?, f.next()?.ok()?))
}

/// The number of a `Name:\tvalue` line of a `status` file (0 when absent).
fn status_number(status: &str, name: &str) -> u64 {
    status
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once(':')?;
            (key == name).then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0)
}

/// The number of a `name   :   value` line of a `sched` file.
fn sched_number(sched: &str, name: &str) -> Option<u64> {
    sched.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim() == name).then(|| value.trim().parse().ok())?
    })
}

/// Parses a `/proc/<pid>/stat` line; `None` when it is not one.
pub fn parse_stat(line: &str) -> Option<Stat> {
    let after = &line[line.rfind(')')? + 1..];
    // After the name, field 3 is index 0.
    let f: Vec<&str> = after.split_ascii_whitespace().collect();
    let num = |field: usize| f.get(field - 3)?.parse::<u64>().ok();
    Some(Stat {
        state: f.first()?.chars().next()?,
        pgrp: u32::try_from(num(5)?).ok()?,
        utime: num(14)?,
        stime: num(15)?,
        cutime: num(16)?,
        cstime: num(17)?,
        start_ticks: num(22)?,
    })
}

/// The stat of process `pid`, if it exists.
pub fn stat(pid: u32) -> Option<Stat> {
    parse_stat(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The stat of this process.
pub fn own_stat() -> Option<Stat> {
    parse_stat(&fs::read_to_string("/proc/self/stat").ok()?)
}

/// User and system CPU time used so far by this process (all its threads), from
/// `getrusage(RUSAGE_SELF)`: to the microsecond, where `/proc/self/stat` rounds to clock
/// ticks (10 ms), which a short run (a smoke trial of a tenth of a second) can fall
/// entirely inside.
pub fn own_cpu() -> Option<CpuSeconds> {
    usage(nix::sys::resource::UsageWho::RUSAGE_SELF)
}

/// CPU seconds of this process's terminated, waited-for children (user + system), from
/// `getrusage(RUSAGE_CHILDREN)`, to the microsecond.
pub fn children_cpu_sec() -> Option<f64> {
    usage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).map(|c| c.user_sec + c.system_sec)
}

fn usage(who: nix::sys::resource::UsageWho) -> Option<CpuSeconds> {
    let u = nix::sys::resource::getrusage(who).ok()?;
    let sec = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    Some(CpuSeconds {
        user_sec: sec(u.user_time()),
        system_sec: sec(u.system_time()),
    })
}

/// When process `pid` started, in clock ticks since boot: with the pid, it names one
/// process for good (a pid can be reused, the pair cannot).
pub fn start_time(pid: u32) -> Option<u64> {
    stat(pid).map(|s| s.start_ticks)
}

/// Whether the process that had `pid` and started at `start_ticks` still exists and has
/// not exited (a zombie waiting for its parent counts as gone).
pub fn is_alive(pid: u32, start_ticks: u64) -> bool {
    stat(pid).is_some_and(|s| s.start_ticks == start_ticks && s.state != 'Z')
}

/// CPU time the calling thread has used so far, in nanoseconds.
pub fn thread_cpu_ns() -> Option<u64> {
    use nix::time::{clock_gettime, ClockId};
    let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
    Some(u64::try_from(t.tv_sec()).ok()? * 1_000_000_000 + u64::try_from(t.tv_nsec()).ok()?)
}

/// The peak resident set size of this process (`VmHWM` of `/proc/self/status`), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    let kb: u64 = own_status("VmHWM")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// The CPU list this process may run on now (`Cpus_allowed_list`, e.g. `0-3,8`).
pub fn cpus_allowed_list() -> Option<String> {
    own_status("Cpus_allowed_list")
}

/// Pins the calling thread (not the whole process) to `cpus`; threads it starts later
/// inherit the mask. Two load generators in one process can so run on disjoint CPUs.
///
/// # Errors
/// A message when the list is empty or the kernel refuses a CPU (one this process may
/// not use, or beyond the machine's).
pub fn pin_thread(cpus: &[usize]) -> Result<(), String> {
    use nix::sched::{sched_setaffinity, CpuSet};
    if cpus.is_empty() {
        return Err("cannot pin a thread to an empty CPU list".into());
    }
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c)
            .map_err(|e| format!("cannot pin a thread to CPU {c}: {e}"))?;
    }
    sched_setaffinity(nix::unistd::Pid::from_raw(0), &set)
        .map_err(|e| format!("cannot pin a thread to CPUs {cpus:?}: {e}"))
}

/// The value of one `Name:` line of `/proc/self/status`, trimmed.
fn own_status(name: &str) -> Option<String> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key == name).then(|| value.trim().to_string())
    })
}

/// The ids of every process.
pub fn pids() -> Vec<u32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect()
}

/// The working directory of process `pid`.
pub fn cwd(pid: u32) -> Option<PathBuf> {
    fs::read_link(format!("/proc/{pid}/cwd")).ok()
}

/// The processes whose working directory is `dir`.
pub fn pids_in(dir: &Path) -> Vec<u32> {
    pids()
        .into_iter()
        .filter(|&pid| cwd(pid).is_some_and(|cwd| cwd == dir))
        .collect()
}

/// The command line of process `pid`, its words joined by spaces.
pub fn cmdline(pid: u32) -> Option<String> {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let words: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    Some(words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_with_odd_command_names() {
        let line = "1234 (my (odd) prog) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 75 3 4 20 0 3 0 98765 1000 5";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.state, 'S');
        assert_eq!(s.pgrp, 1234);
        assert_eq!((s.utime, s.stime, s.cutime, s.cstime), (250, 75, 3, 4));
        assert_eq!(s.start_ticks, 98765);
        assert!(parse_stat("garbage").is_none());
        assert!(parse_stat("1 (x) S 1 2").is_none());
    }

    #[test]
    fn this_process_has_a_start_time_and_is_alive() {
        let own = std::process::id();
        let start = start_time(own).unwrap();
        assert!(is_alive(own, start));
        assert!(
            !is_alive(own, start + 1),
            "another start time is another process"
        );
        assert!(cmdline(own).is_some_and(|c| !c.is_empty()));
        assert!(pids().contains(&own));
        let cwd = std::env::current_dir().unwrap();
        assert!(pids_in(&cwd).contains(&own));
    }

    #[test]
    fn a_waited_for_child_is_gone_and_its_cpu_is_counted() {
        let before = children_cpu_sec().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let (pid, start) = (child.id(), start_time(child.id()));
        child.wait().unwrap();
        assert!(start.is_none_or(|s| !is_alive(pid, s)));
        assert!(children_cpu_sec().unwrap() >= before);
    }

    #[test]
    fn cpu_and_memory_readers_find_this_process() {
        // Spin until the kernel has charged this process a clock tick; a reader that
        // always returns zero fails after the deadline.
        let start = std::time::Instant::now();
        let t0 = thread_cpu_ns().unwrap();
        let mut x = 0u64;
        while own_cpu().unwrap().user_sec + own_cpu().unwrap().system_sec <= 0.0 {
            for i in 0..1_000_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(20),
                "no CPU time read from /proc/self/stat"
            );
        }
        assert!(thread_cpu_ns().unwrap() > t0);
        assert!(peak_rss_bytes().unwrap() > 0);
        assert!(cpus_allowed_list().is_some_and(|l| !l.is_empty()));
        // Pinning one thread leaves the others (and the process's list) as they were.
        let before = cpus_allowed_list();
        let pinned = std::thread::spawn(|| {
            pin_thread(&[0]).unwrap();
            fs::read_to_string("/proc/thread-self/status")
                .unwrap()
                .lines()
                .find_map(|l| {
                    l.strip_prefix("Cpus_allowed_list:")
                        .map(|v| v.trim().to_string())
                })
        })
        .join()
        .unwrap();
        assert_eq!(pinned.as_deref(), Some("0"));
        assert_eq!(cpus_allowed_list(), before);
        assert!(pin_thread(&[]).is_err());
    }

    #[test]
    fn process_counters_sum_this_process_threads() {
        let pid = std::process::id();
        let before = process_counters(pid).unwrap();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        // A second thread that runs and ends: its time was counted while it lived.
        std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_millis(5)))
            .join()
            .unwrap();
        let after = process_counters(pid).unwrap();
        assert!(after.run_ns > before.run_ns, "{before:?} {after:?}");
        assert!(after.voluntary_switches + after.involuntary_switches > 0);
        assert!(after.minor_faults > 0);
        assert!(process_counters(u32::MAX).is_none());
        assert_eq!(parse_schedstat("636636 57346 2\n"), Some((636636, 57346)));
        assert_eq!(parse_schedstat("x"), None);
        assert_eq!(
            sched_number("se.nr_migrations    :     7\n", "se.nr_migrations"),
            Some(7)
        );
        assert_eq!(
            status_number("voluntary_ctxt_switches:\t12\n", "voluntary_ctxt_switches"),
            12
        );
    }
}
