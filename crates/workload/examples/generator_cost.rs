//! Measures the cost of `Generator::next` per request for a few workloads.
//!
//! Run with `cargo run --release -p resplab-workload --example generator_cost`.
//! Prints nanoseconds per request; the load generator's budget per request is a few
//! hundred nanoseconds of user-space work, so this should stay well below that.

use resplab_workload::{
    flags, CommandsSpec, KeySpace, MixSpec, Request, TestName, TestsSpec, ValueSize, Workload,
    WorkloadKind, WorkloadSpec,
};
use std::hint::black_box;
use std::time::Instant;

fn measure(label: &str, spec: &WorkloadSpec, phase: usize) {
    let w = match Workload::new(spec) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{label}: {e}");
            return;
        }
    };
    let mut g = w.generator(phase, 0);
    let mut req = Request::new();
    g.reserve(&mut req);
    let n = 5_000_000u32;
    for _ in 0..100_000 {
        black_box(g.next(&mut req));
    }
    let start = Instant::now();
    let mut bytes = 0usize;
    for _ in 0..n {
        black_box(g.next(&mut req));
        bytes += req.payload_len();
    }
    let ns = start.elapsed().as_nanos() as f64 / f64::from(n);
    println!(
        "{label:<44} {ns:>7.1} ns/request  ({:.0} payload bytes/request)",
        bytes as f64 / f64::from(n)
    );
}

fn tests(t: TestName, r: Option<u64>, d: usize) -> WorkloadSpec {
    WorkloadSpec {
        seed: 1,
        kind: WorkloadKind::Tests(TestsSpec {
            tests: vec![t],
            random_keyspace: r,
            data_size: d,
        }),
        setup_commands: vec![],
    }
}

fn main() {
    measure("PING_MBULK", &tests(TestName::PingMbulk, None, 3), 0);
    measure("SET -d 3 (no -r)", &tests(TestName::Set, None, 3), 0);
    measure(
        "SET -r 100000 -d 3",
        &tests(TestName::Set, Some(100_000), 3),
        0,
    );
    measure("GET -r 100000", &tests(TestName::Get, Some(100_000), 3), 0);
    measure(
        "MSET -r 100000 -d 3",
        &tests(TestName::Mset, Some(100_000), 3),
        0,
    );
    measure(
        "memtier default (1:10, R:R, 32 B)",
        &WorkloadSpec::memtier_default(),
        0,
    );
    let zipf = WorkloadSpec {
        seed: 1,
        kind: WorkloadKind::Mix(MixSpec {
            set_pattern: resplab_workload::KeyPattern::Zipf,
            get_pattern: resplab_workload::KeyPattern::Gaussian,
            values: ValueSize::Range { min: 32, max: 1024 },
            ..MixSpec::default()
        }),
        setup_commands: vec![],
    };
    measure("mix 1:10 Z:G, 32-1024 B", &zipf, 0);
    let cmd = WorkloadSpec {
        seed: 1,
        kind: WorkloadKind::Commands(CommandsSpec {
            commands: vec![
                flags::parse_command("HSET __key__ f __data__").unwrap_or_else(|e| panic!("{e}"))
            ],
            keys: KeySpace::default(),
            values: ValueSize::default(),
            random_keyspace: None,
        }),
        setup_commands: vec![],
    };
    measure("--command \"HSET __key__ f __data__\"", &cmd, 0);
}
