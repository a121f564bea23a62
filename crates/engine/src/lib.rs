//! The load engine of resplab: worker threads, connections, pipelining, pacing and
//! measurement.
//!
//! [`run`] takes a validated [`RunConfig`], a [`resplab_workload::Workload`] and a
//! [`StopToken`], and returns a [`resplab_results::RunRecord`]. It is the only crate that
//! knows both the operations of a workload and the wire: requests come from the workload
//! generators, are encoded by `resplab-proto` straight into connection buffers, and the
//! replies are delimited by the proto scanner and timed into per-thread HdrHistograms.
//!
//! It returns records and knows nothing of what becomes of them: no SQLite, no reports,
//! no terminal. Merging the records of several generators is `resplab_results::merge`,
//! a function of records alone; reading `INFO` text is `resplab_proto::resp::info`.
//!
//! How it is put together:
//!
//! - [`config`]: the typed run configuration and its validation.
//! - `connect`: opening sockets and the connection set-up (`HELLO`, `AUTH`, `SELECT`).
//! - [`control`]: the blocking client for everything that is not measured load, set up
//!   like the measured connections (TLS, user, password).
//! - `cluster`: Redis Cluster topology and routing.
//! - `conn`: one connection's socket, buffers and ring of in-flight requests.
//! - `worker`: the per-thread event loop (closed and open loop), with the timing rules;
//!   its parts: `fill` (sending), `route` (cluster routing and redirections), `record`
//!   (reading and recording replies), `reconnect` (failures and backoff), `wire`
//!   (request encoding).
//! - `tally`: per-thread counters and how they merge into summaries.
//! - [`run()`]: the coordinator, in three steps: `setup` (control connection, `INFO`,
//!   cluster detection, set-up commands), `drive` (the phases, each run by `phase`, with
//!   progress and the `series`), `collect` (the result record).
//! - [`server`]: a throwaway `redis-server` for runs without a target (the process is
//!   started, watched and reaped by `resplab-sys`).
//! - [`host`]: host facts and the process's CPU time.
//! - [`fdlimit`]: the open-file limit, raised when a run needs more connections.
//! - [`words`]: a run's words as the user gives them (`resplab bench`'s flags) turned,
//!   once, into a [`RunConfig`] and a workload specification, with errors that name the
//!   flag.
//! - [`record`]: what a run's record says beyond its measurements (configuration,
//!   tool, the warnings its settings call for, a shard's plan).
//!
//! Load models (see the `worker` module for the details):
//!
//! - **Closed loop** (default): every connection keeps `pipeline` requests in flight.
//!   Latency then restates throughput (Little's law), and results say "closed loop".
//! - **Open loop** (`open_loop: Some(..)`): requests follow a global schedule of intended
//!   send times; latency is timed from the intended time, so a stalled server cannot hide
//!   behind a stalled client (no coordinated omission). Service time and send lag are
//!   kept as well, and a run whose generator fell behind says so.
//!
//! The event loop is `mio` (epoll). An io_uring loop was not built: with about two system
//! calls per request and fewer with pipelining, the remaining client cost is mostly the
//! kernel's TCP work, which io_uring does not remove.

mod cluster;
mod cluster_ready;
pub mod config;
mod conn;
mod connect;
pub mod control;
pub mod error;
pub mod fdlimit;
pub mod host;
pub mod idle;
pub mod memtier;
pub mod record;
mod run;
pub mod server;
pub mod stop;
mod tally;
pub mod tls;
pub mod uri;
pub mod words;
mod worker;

pub use config::{
    Arrivals, Budget, ConnectJitter, Credentials, OpenLoop, Protocol, Ramp, ReconnectPolicy, Renew,
    RunConfig, Target, TlsOptions, Wire, DEFAULT_CLUSTER_WAIT,
};
pub use connect::unix_ms_now;
pub use control::ControlClient;
pub use error::EngineError;
pub use run::{run, CommandProgress, Progress};
pub use server::{ServerError, ServerOptions, ThrowawayServer};
pub use stop::StopToken;
