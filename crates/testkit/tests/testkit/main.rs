//! resplab-testkit's integration tests, one test binary: a real redis-server and a real
//! cluster, started through the production process starter.

mod cluster_forms;
mod redis_server;
