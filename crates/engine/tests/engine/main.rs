//! resplab-engine's integration tests against a real redis-server, one test binary: one
//! module per concern (closed loop, open loop, faults), `common` starts the servers.

mod common;

mod closed_loop;
mod faults;
mod open_loop;
