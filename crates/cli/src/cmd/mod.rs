//! One module per subcommand: `resplab bench` ↔ `bench.rs` ↔ `BenchArgs` ↔ `run`.

pub mod bisect;
pub mod calibrate;
pub mod compare;
pub mod experiment;
pub mod history;
pub mod links;
pub mod memtier;
pub mod merge;
pub mod profile;
pub mod proto;
pub mod redis_benchmark;
pub mod report;
pub mod serve;
pub mod shell;
pub mod track;

pub mod bench;
mod bench_args;
