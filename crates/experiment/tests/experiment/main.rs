//! resplab-experiment's integration tests, one test binary: experiment files, the shipped
//! examples, local clusters and the RESPB protocol variant, one module each.

mod examples;
mod local_cluster;
mod protocol;
mod spec;
