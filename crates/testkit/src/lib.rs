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
//!   test (`DBSIZE`, `KEYS *`, `CLIENT KILL`).
//! - [`tls::TlsRedis`] is a real `redis-server` with a TLS port, its certificates made by
//!   the test (a CA, a server certificate for `localhost` and 127.0.0.1, a client
//!   certificate, and a second CA that signed nothing).
//!
//! - [`cluster::RedisCluster`] is a real local Redis Cluster (masters and replicas from
//!   `redis-server`, formed with `CLUSTER ADDSLOTSRANGE`/`MEET`/`REPLICATE`) that can move
//!   a slot under load.
//!
//! This crate is a dev-dependency only and depends on no other crate of the workspace, so
//! any crate (the engine included) can use it in its tests without a cycle. The production
//! way to start a throwaway server lives in `resplab-engine` (`engine::server`).

pub mod client;
pub mod cluster;
pub mod fake;
pub mod redis;
pub mod tls;

/// Reserves a free loopback TCP port by binding port 0 and releasing it.
///
/// Another process may take the port between this call and its use; callers that spawn a
/// server retry with a fresh port when the server fails to bind.
///
/// # Errors
/// When no loopback socket can be bound.
pub fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}
