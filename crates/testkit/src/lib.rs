//! Test-only helpers for resplab: real servers and a server that misbehaves on purpose.
//!
//! - [`redis::RedisServer`] starts a real `redis-server` from `PATH` on a free loopback
//!   port with persistence off, in its own temporary directory, and stops it on drop.
//!   Integration tests use it instead of assuming a server is already running.
//! - [`fake::FakeServer`] is a small RESP server on a free port whose faults are scripted:
//!   garbage replies, truncated replies followed by a close, stalls every N requests,
//!   closes after K requests, error replies. The engine's tests use it to prove that
//!   protocol errors are counted, connections are reset, and nothing panics or hangs.
//! - [`client::Client`] is a blocking RESP2 client, just enough to inspect a server from a
//!   test (`DBSIZE`, `KEYS *`, `CLIENT KILL`). It is written apart from the production
//!   codec on purpose: an independent oracle of what the server holds.
//! - [`tls::TlsRedis`] is a real `redis-server` with a TLS port, its certificates made by
//!   the test (a CA, a server certificate for `localhost` and 127.0.0.1, a client
//!   certificate, and a second CA that signed nothing).
//!
//! - [`cluster::RedisCluster`] is a real local Redis Cluster (masters and replicas from
//!   `redis-server`, formed with `CLUSTER ADDSLOTSRANGE`/`MEET`/`REPLICATE`) that can move
//!   a slot under load.
//!
//! This crate is a dev-dependency only and depends on one crate of the workspace,
//! `resplab-sys`, which depends on none, so any crate (the engine included) can use it
//! in its tests without a cycle. It starts every server with the production process
//! starter (`resplab_sys::process`) and finds ports with `resplab_sys::port`.

pub mod client;
pub mod cluster;
pub mod fake;
pub mod redis;
pub mod tls;

/// Reserves a free loopback TCP port (the production helper: another process may take
/// it before its use, so callers that spawn a server retry with a fresh port).
pub use resplab_sys::port::free_port;
