//! One module per subcommand: `resplab bench` ↔ `bench.rs` ↔ `BenchArgs` ↔ `run`.

pub mod bench;
mod bench_args;

pub mod compare;
pub mod experiment;
pub mod proto;
