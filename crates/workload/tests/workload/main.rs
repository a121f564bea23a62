//! resplab-workload's integration tests, one test binary: the redis-benchmark catalog's
//! wire bytes, generator behaviour and property tests.

mod catalog_wire;
mod generator;
mod properties;
