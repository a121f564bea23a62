//! resplab-workload: what a load run sends, decided before any socket exists.
//!
//! This crate turns a workload description into a deterministic, protocol-neutral
//! stream of requests and, for open-loop runs, the intended send time of each. It knows
//! nothing of sockets, clocks or the wire format: the engine (`resplab-engine`) asks for
//! generators and schedules, encodes each [`Request`] with `resplab-proto`, and sends it.
//! Because everything here is a pure function of the spec and the seed, every behaviour
//! is unit-tested without a server, and the same seed reproduces the same run.
//!
//! The pieces:
//!
//! - [`spec`]: [`WorkloadSpec`], the serializable description stored with results.
//! - [`catalog`]: redis-benchmark's tests (`-t`) with the exact arguments it sends.
//! - [`keys`] and [`values`]: memtier-style key patterns and value sizes.
//! - [`template`]: command templates with `__key__`, `__data__`, `__rand_int__`.
//! - [`workload`]: [`Workload`] (compiled spec), [`Phase`], and the hot-path
//!   [`Generator`].
//! - [`request`]: [`Request`], the reusable argument buffer generators fill.
//! - [`schedule`]: open-loop intended send times.
//! - [`seed`]: how every stream's seed derives from the master seed.
//! - [`flags`]: parsers for the CLI's workload flags.
//! - [`error`]: the one error type, [`WorkloadError`].
//!
//! ```
//! use resplab_workload::{flags, Request, Workload, WorkloadSpec};
//! let spec = WorkloadSpec::tests(flags::parse_tests("set,get").unwrap());
//! let workload = Workload::new(&spec).unwrap();
//! assert_eq!(workload.phases()[0].name, "SET");
//! let mut gen = workload.generator(0, 0);
//! let mut req = Request::new();
//! gen.next(&mut req);
//! assert_eq!(req.arg(0), Some(&b"SET"[..]));
//! ```

pub mod catalog;
mod cursor;
pub mod error;
pub mod flags;
pub mod keys;
pub mod memtier;
pub mod redis_benchmark;
mod replay;
pub mod request;
pub mod schedule;
pub mod seed;
pub mod spec;
pub mod template;
pub mod values;
mod wait;
pub mod workload;

pub use catalog::TestName;
pub use error::WorkloadError;
pub use keys::{KeyPattern, KeySpace};
pub use request::{ArgWriter, Args, Request};
pub use schedule::{Arrivals, Schedule, ScheduleStream};
pub use spec::{
    CommandSpec, CommandsSpec, ExpiryRange, MixSpec, Ratio, Replay, TestsSpec, WaitSpec,
    WorkloadKind, WorkloadSpec,
};
pub use values::{ValueSize, WeightedSize};
pub use workload::{Generator, Phase, Workload};
