//! The load words of a run (`-n`, `--test-time`, `--warmup`, `-c`, `-P`, `--threads`,
//! `--rate`, `--arrivals`, `--reconnect-every`) and its start and shard words (`--start-at`, `--shard`,
//! `--per-shard`, `--seed`), with the seed they give and a shard's share of the load.

use super::bench::BenchWords;
use super::{conflict, flag_error, integer, number, shard, wall_time, WordsError};
use crate::{Budget, OpenLoop, Renew};
use resplab_results::ShardInfo;
use resplab_workload::flags;
use std::time::Duration;

type Result<T> = std::result::Result<T, WordsError>;

/// How much load: the budget, warm-up, connections, pipeline, threads and open-loop
/// rate, as given (before a shard takes its share).
#[derive(Debug)]
pub struct Load {
    pub budget: Budget,
    pub warmup: Duration,
    pub clients: u32,
    pub pipeline: u32,
    pub threads: u32,
    pub open_loop: Option<OpenLoop>,
    /// `--reconnect-every N`: each connection renewed after N requests.
    pub renew: Option<Renew>,
}

/// The load flags (`-n`, `--test-time`, `--warmup`, `-c`, `-P`, `--threads`, `--rate`,
/// `--arrivals`).
pub fn resolve_load(a: &BenchWords) -> Result<Load> {
    let budget = match (&a.requests, &a.test_time) {
        (Some(_), Some(_)) => return Err(conflict("-n/--requests", "--test-time").into()),
        (Some(n), None) => Budget::Requests(integer("-n", n, 1u64, u64::MAX / 4)?),
        (None, Some(t)) => Budget::Duration(Duration::from_secs_f64(number(
            "--test-time",
            t,
            0.001,
            86_400.0 * 365.0,
        )?)),
        (None, None) => Budget::Requests(100_000),
    };
    let warmup = Duration::from_secs_f64(number("--warmup", &a.warmup, 0.0, 86_400.0)?);
    let clients = integer("-c/--clients", &a.clients, 1u32, 100_000)?;
    let pipeline = integer("-P/--pipeline", &a.pipeline, 1u32, 1_000_000)?;
    let threads = integer("--threads", &a.threads, 1u32, 1024)?;
    let arrivals = flags::parse_arrivals(&a.arrivals)?;
    let renew = match &a.reconnect_every {
        Some(n) => Some(Renew {
            every: integer("--reconnect-every", n, 1u64, u64::from(u32::MAX))?,
            after_last: false,
        }),
        None => None,
    };
    let open_loop = match &a.rate {
        Some(r) => Some(OpenLoop {
            rate_per_sec: number("--rate", r, 1e-6, 1e9)?,
            arrivals,
        }),
        None => {
            if a.arrivals.trim() != "constant" {
                return Err(flag_error(
                    "--arrivals",
                    &a.arrivals,
                    "--rate as well (arrivals shape an open-loop schedule)",
                )
                .into());
            }
            None
        }
    };
    Ok(Load {
        budget,
        warmup,
        clients,
        pipeline,
        threads,
        open_loop,
        renew,
    })
}

/// When the load starts and which generator this is: `--start-at`, `--shard`, the
/// seed derived for it.
#[derive(Debug)]
pub struct Start {
    pub start_at_ms: Option<f64>,
    pub shard: Option<ShardInfo>,
    pub seed: u64,
}

/// The start and shard flags (`--start-at`, `--shard`, `--per-shard`, `--seed`); a
/// shard of a total takes its share of `load`'s connections, requests and rate.
pub fn resolve_start(a: &BenchWords, load: &mut Load) -> Result<Start> {
    let start_at_ms = match &a.start_at {
        Some(v) => Some(wall_time("--start-at", v, crate::unix_ms_now())?),
        None => None,
    };
    let shard_at = match &a.shard {
        Some(v) => Some(shard("--shard", v)?),
        // A run started at an agreed time is one generator of one: it records its
        // start and clock offset as a shard does, and can be merged with itself.
        None if start_at_ms.is_some() => Some((0, 1)),
        None => None,
    };
    let master_seed = match (&a.seed, shard_at, start_at_ms) {
        (Some(s), _, _) => integer("--seed", s, 0u64, u64::MAX)?,
        // Shards must agree on one master seed: the agreed start time serves.
        (None, Some(_), Some(at)) => resplab_workload::seed::splitmix64(at as u64),
        (None, Some(_), None) => {
            return Err(flag_error(
                "--shard",
                a.shard.as_deref().unwrap_or_default(),
                "--seed (or --start-at) as well, so that every shard derives its seed from the same master seed",
            )
            .into())
        }
        (None, None, _) => fresh_seed(),
    };
    let shard = match shard_at {
        None => None,
        Some((index, count)) => {
            let info = ShardInfo {
                index,
                count,
                master_seed,
                per_shard: a.per_shard,
                given_clients: load.clients,
                given_requests: match load.budget {
                    Budget::Requests(n) => Some(n),
                    Budget::Duration(_) => None,
                },
                given_rate_per_sec: load.open_loop.map(|o| o.rate_per_sec),
                ..ShardInfo::default()
            };
            if !a.per_shard && count > 1 {
                if load.clients < count {
                    return Err(flag_error(
                        "-c/--clients",
                        &a.clients,
                        format!("at least one connection per shard ({count}) when -c is the total across shards; or give --per-shard"),
                    )
                    .into());
                }
                load.clients = share(u64::from(load.clients), index, count) as u32;
                if let Budget::Requests(n) = load.budget {
                    if n < u64::from(count) {
                        return Err(flag_error(
                            "-n/--requests",
                            &n.to_string(),
                            format!("at least one request per shard ({count}) when -n is the total across shards; or give --per-shard"),
                        )
                        .into());
                    }
                    load.budget = Budget::Requests(share(n, index, count));
                }
                if let Some(ol) = load.open_loop.as_mut() {
                    ol.rate_per_sec /= f64::from(count);
                }
            }
            Some(info)
        }
    };
    let seed = match &shard {
        Some(s) if s.count > 1 => resplab_workload::seed::shard_seed(master_seed, s.index),
        _ => master_seed,
    };

    Ok(Start {
        start_at_ms,
        shard,
        seed,
    })
}

/// Shard `index`'s share of `total` among `count` shards: the first `total % count`
/// shards take one more.
fn share(total: u64, index: u32, count: u32) -> u64 {
    let (index, count) = (u64::from(index), u64::from(count));
    total / count + u64::from(index < total % count)
}

/// A seed for runs that were given none: different for every run, printed and stored.
pub(super) fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let pid = u64::from(std::process::id());
    resplab_workload::seed::splitmix64(nanos ^ pid.rotate_left(32))
}
