//! The operating system as resplab sees it: server processes, loopback ports and `/proc`.
//!
//! - [`process`] is the one way any crate of the workspace starts a server process: a
//!   fresh run directory, a free loopback port, a log file, a readiness probe the caller
//!   passes (so this crate speaks no protocol), a stop that takes the whole process group,
//!   a parent-death signal so the server dies with the resplab that started it, and the
//!   reaping of servers an earlier, killed run left behind (by pid and start time, so a
//!   reused pid is never killed).
//! - [`cluster`] forms started nodes into a local Redis Cluster, the one former of the
//!   experiment runner and the test kit (the caller passes how to send a command).
//! - [`perf`] counts hardware events (instructions, cycles) of running processes with
//!   `perf stat`, where the machine has them.
//! - [`profile`] samples the stacks of running processes with `perf record` and folds
//!   them (`inferno`), where perf may run.
//! - [`port`] finds a free loopback TCP port.
//! - [`proc`] reads `/proc`: process and thread CPU time, children's CPU time, start
//!   times, peak memory, the CPUs this process may run on, and who runs where.
//!
//! It depends on no other crate of the workspace and knows nothing of RESP, workloads,
//! results or the terminal: callers word their own errors and speak to their servers.
//! Linux is the platform it reads; elsewhere the `/proc` readers find nothing.

pub mod cluster;
pub mod perf;
pub mod port;
pub mod proc;
pub mod process;
pub mod profile;
