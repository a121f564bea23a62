//! Throughput and client CPU per request of the engine, for comparison with
//! redis-benchmark on the same server.
//!
//! ```text
//! cargo run --release -p resplab-engine --example engine_cost -- \
//!     --port 6379 --test set --clients 50 --pipeline 1 --requests 1000000 [--threads 1]
//! ```
//!
//! Prints one line: requests/s over the measured part, and user+system CPU time of this
//! process during it divided by the number of requests. Without `--port` it starts a
//! throwaway redis-server.

use resplab_engine::{run, Budget, Progress, RunConfig, StopToken, Target, ThrowawayServer};
use resplab_workload::{catalog::parse_tests, TestsSpec, Workload, WorkloadKind, WorkloadSpec};

fn main() {
    if let Err(e) = real_main() {
        eprintln!("engine_cost: {e}");
        std::process::exit(2);
    }
}

fn real_main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |name: &str| -> Option<&str> {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(String::as_str)
    };
    let num = |name: &str, default: u64| -> Result<u64, String> {
        get(name).map_or(Ok(default), |v| {
            v.parse()
                .map_err(|_| format!("{name} {v:?}: expected a whole number"))
        })
    };
    let server = match get("--port") {
        Some(_) => None,
        None => Some(ThrowawayServer::start().map_err(|e| e.to_string())?),
    };
    let port = match &server {
        Some(s) => s.port(),
        None => num("--port", 6379)? as u16,
    };
    let tests = parse_tests(get("--test").unwrap_or("set")).map_err(|e| e.to_string())?;
    let spec = WorkloadSpec {
        seed: 0,
        kind: WorkloadKind::Tests(TestsSpec {
            tests,
            random_keyspace: None,
            data_size: 3,
        }),
        setup_commands: Vec::new(),
    };
    let wl = Workload::new(&spec).map_err(|e| e.to_string())?;
    let mut cfg = RunConfig::new(Target::Tcp {
        host: "127.0.0.1".into(),
        port,
    });
    cfg.clients = num("--clients", 50)? as u32;
    cfg.pipeline = num("--pipeline", 1)? as u32;
    cfg.threads = num("--threads", 1)? as u32;
    cfg.budget = Budget::Requests(num("--requests", 1_000_000)?);
    let rec =
        run(&cfg, &wl, &StopToken::new(), &mut |_: &Progress| {}).map_err(|e| e.to_string())?;
    let n = rec.totals.requests.max(1) as f64;
    println!(
        "requests={} rps={:.0} cpu_us_per_req={:.3} user_s={:.2} sys_s={:.2} p50_us={:.1} p99_us={:.1} errors={}",
        rec.totals.requests,
        rec.totals.ops_per_sec,
        rec.client_cpu.total_sec() * 1e6 / n,
        rec.client_cpu.user_sec,
        rec.client_cpu.system_sec,
        rec.totals.latency_us.p50,
        rec.totals.latency_us.p99,
        rec.totals.errors
    );
    Ok(())
}
