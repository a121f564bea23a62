//! `resplab bench`'s flags resolved, once, into what a run needs: the engine's
//! [`RunConfig`] (target, credentials, TLS, load, shard and seed) and the
//! [`WorkloadSpec`] (through the workload crate's one conversion,
//! [`WorkloadFlags::into_spec`]). Every error names the flag, the value and what was
//! expected.

use super::bench::BenchArgs;
use crate::resolve::{self, flag_error};
use resplab_engine::{Arrivals, Budget, Credentials, OpenLoop, Protocol, RunConfig, Target, Wire};
use resplab_results::ShardInfo;
use resplab_workload::flags::{self, WorkloadFlags};
use resplab_workload::{CommandSpec, KeySpace, ValueSize, WorkloadSpec};
use std::path::PathBuf;
use std::time::Duration;

/// Everything a bench run needs, validated.
#[derive(Debug)]
pub struct Resolved {
    /// `None`: start a throwaway server.
    pub target: Option<Target>,
    pub config: RunConfig,
    pub spec: WorkloadSpec,
    pub server_bin: Option<PathBuf>,
    pub output: OutputOptions,
    /// `--shard`: this generator's place among N, and the flags as given.
    pub shard: Option<ShardInfo>,
}

/// What to print and write after the run.
#[derive(Debug)]
pub struct OutputOptions {
    pub json: Option<String>,
    pub csv: bool,
    pub quiet: bool,
    pub hdr_out: Option<String>,
    pub progress: bool,
    pub per_node: bool,
    /// `--max-error-rate`: the share of failed requests (percent) above which the run
    /// exits with code 3.
    pub max_error_pct: Option<f64>,
}

/// Resolves the flags into a validated configuration.
///
/// # Errors
/// A [`FlagError`] (or a workload error) naming the flag, the value and what was expected.
pub fn resolve_args(a: &BenchArgs) -> anyhow::Result<Resolved> {
    let conn = resolve_connection(a)?;
    let mut load = resolve_load(a)?;
    let start = resolve_start(a, &mut load)?;
    // ---- workload ----
    let spec = match &a.workload_spec {
        Some(encoded) => spec_from_base64(a, encoded, start.seed)?,
        None => resolve_workload(a, start.seed)?,
    };

    let mut config = RunConfig::new(conn.target.clone().unwrap_or(Target::Tcp {
        host: "127.0.0.1".into(),
        port: 6379,
    }));
    config.credentials = conn.credentials;
    config.tls = conn.tls;
    config.db = conn.db;
    config.protocol = conn.protocol;
    config.wire = conn.wire;
    config.threads = load.threads;
    config.clients = load.clients;
    config.pipeline = load.pipeline;
    config.budget = load.budget;
    config.warmup = load.warmup;
    config.open_loop = load.open_loop;
    config.seed = start.seed;
    config.start_at = start
        .start_at_ms
        .map(|ms| std::time::UNIX_EPOCH + Duration::from_micros((ms.max(0.0) * 1e3) as u64));
    config.series_histograms = start.shard.is_some();
    config.cluster = a.cluster || a.read_from_replicas;
    config.read_from_replicas = a.read_from_replicas;
    config.cluster_wait = resplab_experiment::words::parse_duration(&a.cluster_wait)
        .map_err(|e| resolve::flag_error("--cluster-wait", &a.cluster_wait, e))?;
    config.validate()?;

    Ok(Resolved {
        target: conn.target,
        config,
        spec,
        server_bin: a.server_bin.clone(),
        output: OutputOptions {
            json: a.json.clone(),
            csv: a.csv,
            quiet: a.quiet,
            hdr_out: a.hdr_out.clone(),
            progress: !a.no_progress,
            per_node: a.per_node,
            max_error_pct: a
                .max_error_rate
                .as_deref()
                .map(|v| resolve::number("--max-error-rate", v, 0.0, 100.0))
                .transpose()?,
        },
        shard: start.shard,
    })
}

/// Where and how to connect: the target (`None`: a throwaway server), credentials,
/// TLS, database, protocol version and wire format.
#[derive(Debug)]
struct Connection {
    target: Option<Target>,
    credentials: Option<Credentials>,
    tls: Option<resplab_engine::TlsOptions>,
    db: Option<u32>,
    protocol: Protocol,
    wire: Wire,
}

/// The connection flags (`--host`, `--port`, `--socket`, `--uri`, `--user`, `-a`,
/// `--select`, the TLS flags, `--resp`, `--protocol`), checked against each other.
fn resolve_connection(a: &BenchArgs) -> anyhow::Result<Connection> {
    let mut uri_tls = false;
    let mut credentials_user = a.user.clone();
    let mut password = a.password.clone();
    let mut db: Option<u32> = match &a.select {
        Some(v) => Some(resolve::integer("--select", v, 0u32, 1_000_000)?),
        None => None,
    };
    let port = match &a.port {
        Some(v) => Some(resolve::integer("--port", v, 1u16, 65535)?),
        None => None,
    };
    let target = if let Some(path) = &a.socket {
        if a.host.is_some() || a.uri.is_some() {
            return Err(conflict("--socket", "--host/--uri").into());
        }
        Some(Target::Unix { path: path.clone() })
    } else if let Some(uri) = &a.uri {
        if a.host.is_some() || a.port.is_some() {
            return Err(conflict("--uri", "--host/--port").into());
        }
        let u = resolve::redis_uri(uri)?;
        uri_tls = u.tls;
        let (user, pass) = u.user_password();
        if user.is_some() {
            credentials_user = user;
        }
        if pass.is_some() {
            password = pass;
        }
        if u.db.is_some() {
            db = u.db;
        }
        Some(Target::Tcp {
            host: u.host,
            port: u.port,
        })
    } else if a.host.is_some() || port.is_some() {
        let host = a.host.clone().unwrap_or_else(|| "127.0.0.1".to_string());
        if host.trim().is_empty() {
            return Err(flag_error("--host", &host, "a host name or IP address").into());
        }
        Some(Target::Tcp {
            host,
            port: port.unwrap_or(6379),
        })
    } else {
        None
    };
    if target.is_some() && a.server_bin.is_some() {
        return Err(conflict("--server-bin", "a target (--host, --port, --socket, --uri)").into());
    }
    let credentials = match (password, credentials_user) {
        (Some(password), user) => Some(Credentials { user, password }),
        (None, Some(user)) => {
            return Err(flag_error("--user", &user, "a password too (-a or REDISCLI_AUTH)").into())
        }
        (None, None) => None,
    };
    let tls = resolve_tls(a, uri_tls)?;
    if tls.is_some() && target.is_none() {
        return Err(flag_error(
            "--tls",
            "",
            "a target as well (--host/--port or a rediss:// URI): the throwaway server has no TLS port",
        )
        .into());
    }
    if tls.is_some() && matches!(target, Some(Target::Unix { .. })) {
        return Err(conflict("--tls", "--socket (TLS runs over TCP)").into());
    }
    let protocol = match a.resp.trim() {
        "2" => Protocol::Resp2,
        "3" => Protocol::Resp3,
        other => return Err(flag_error("--resp", other, "2 or 3").into()),
    };
    let wire = resolve_wire(a, target.as_ref(), protocol, tls.is_some())?;

    Ok(Connection {
        target,
        credentials,
        tls,
        db,
        protocol,
        wire,
    })
}

/// How much load: the budget, warm-up, connections, pipeline, threads and open-loop
/// rate, as given (before a shard takes its share).
#[derive(Debug)]
struct Load {
    budget: Budget,
    warmup: Duration,
    clients: u32,
    pipeline: u32,
    threads: u32,
    open_loop: Option<OpenLoop>,
}

/// The load flags (`-n`, `--test-time`, `--warmup`, `-c`, `-P`, `--threads`, `--rate`,
/// `--arrivals`).
fn resolve_load(a: &BenchArgs) -> anyhow::Result<Load> {
    let budget = match (&a.requests, &a.test_time) {
        (Some(_), Some(_)) => return Err(conflict("-n/--requests", "--test-time").into()),
        (Some(n), None) => Budget::Requests(resolve::integer("-n", n, 1u64, u64::MAX / 4)?),
        (None, Some(t)) => Budget::Duration(Duration::from_secs_f64(resolve::number(
            "--test-time",
            t,
            0.001,
            86_400.0 * 365.0,
        )?)),
        (None, None) => Budget::Requests(100_000),
    };
    let warmup = Duration::from_secs_f64(resolve::number("--warmup", &a.warmup, 0.0, 86_400.0)?);
    let clients = resolve::integer("-c/--clients", &a.clients, 1u32, 100_000)?;
    let pipeline = resolve::integer("-P/--pipeline", &a.pipeline, 1u32, 1_000_000)?;
    let threads = resolve::integer("--threads", &a.threads, 1u32, 1024)?;
    let arrivals = match flags::parse_arrivals(&a.arrivals)? {
        resplab_workload::Arrivals::Constant => Arrivals::Constant,
        resplab_workload::Arrivals::Poisson => Arrivals::Poisson,
    };
    let open_loop = match &a.rate {
        Some(r) => Some(OpenLoop {
            rate_per_sec: resolve::number("--rate", r, 1e-6, 1e9)?,
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
    })
}

/// When the load starts and which generator this is: `--start-at`, `--shard`, the
/// seed derived for it.
#[derive(Debug)]
struct Start {
    start_at_ms: Option<f64>,
    shard: Option<ShardInfo>,
    seed: u64,
}

/// The start and shard flags (`--start-at`, `--shard`, `--per-shard`, `--seed`); a
/// shard of a total takes its share of `load`'s connections, requests and rate.
fn resolve_start(a: &BenchArgs, load: &mut Load) -> anyhow::Result<Start> {
    let start_at_ms = match &a.start_at {
        Some(v) => Some(resolve::wall_time(
            "--start-at",
            v,
            resplab_engine::unix_ms_now(),
        )?),
        None => None,
    };
    let shard_at = match &a.shard {
        Some(v) => Some(resolve::shard("--shard", v)?),
        // A run started at an agreed time is one generator of one: it records its
        // start and clock offset as a shard does, and can be merged with itself.
        None if start_at_ms.is_some() => Some((0, 1)),
        None => None,
    };
    let master_seed = match (&a.seed, shard_at, start_at_ms) {
        (Some(s), _, _) => resolve::integer("--seed", s, 0u64, u64::MAX)?,
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

/// `--protocol`, refused with the flags RESPB does not go with here.
fn resolve_wire(
    a: &BenchArgs,
    target: Option<&Target>,
    protocol: Protocol,
    tls: bool,
) -> anyhow::Result<Wire> {
    match a.protocol.trim() {
        "resp" => Ok(Wire::Resp),
        "respb" => {
            let with = if protocol == Protocol::Resp3 {
                Some("--resp 3 (RESPB replies carry every RESP3 type already)")
            } else if tls {
                Some("--tls (RESPB ports have no TLS here)")
            } else if a.cluster || a.read_from_replicas {
                Some("--cluster/--read-from-replicas (RESPB has no cluster redirections here)")
            } else {
                None
            };
            if let Some(with) = with {
                return Err(conflict("--protocol respb", with).into());
            }
            if target.is_none() {
                return Err(flag_error(
                    "--protocol",
                    "respb",
                    "a target as well (--host/--port of a RESPB port, such as resplab serve --respb-port): the throwaway server has none",
                )
                .into());
            }
            Ok(Wire::Respb)
        }
        other => Err(flag_error("--protocol", other, "resp or respb").into()),
    }
}

/// The TLS options of the flags, `None` without `--tls`/`rediss://` (the other TLS flags
/// then are an error, so they are never silently ignored).
fn resolve_tls(a: &BenchArgs, uri_tls: bool) -> anyhow::Result<Option<resplab_engine::TlsOptions>> {
    let on = a.tls || uri_tls;
    let given: Vec<&str> = [
        ("--cacert", a.cacert.is_some()),
        ("--cacertdir", a.cacertdir.is_some()),
        ("--cert", a.cert.is_some()),
        ("--key", a.key.is_some()),
        ("--sni", a.sni.is_some()),
        ("--insecure", a.insecure),
        ("--tls-protocols", a.tls_protocols.is_some()),
        ("--tls-ciphersuites", a.tls_ciphersuites.is_some()),
    ]
    .into_iter()
    .filter_map(|(f, g)| g.then_some(f))
    .collect();
    if !on {
        if let Some(f) = given.first() {
            return Err(flag_error(f, "", "--tls (or a rediss:// URI) as well").into());
        }
        return Ok(None);
    }
    for (flag, path) in [
        ("--cacert", &a.cacert),
        ("--cert", &a.cert),
        ("--key", &a.key),
    ] {
        if let Some(p) = path {
            if !p.is_file() {
                return Err(
                    flag_error(flag, &p.display().to_string(), "a readable PEM file").into(),
                );
            }
        }
    }
    if let Some(d) = &a.cacertdir {
        if !d.is_dir() {
            return Err(flag_error(
                "--cacertdir",
                &d.display().to_string(),
                "a folder of PEM CA certificates",
            )
            .into());
        }
    }
    if a.cert.is_some() != a.key.is_some() {
        return Err(flag_error(
            if a.cert.is_some() { "--cert" } else { "--key" },
            "",
            "--cert and --key together (a client certificate needs its key)",
        )
        .into());
    }
    if a.insecure && (a.cacert.is_some() || a.cacertdir.is_some()) {
        return Err(conflict(
            "--insecure",
            "--cacert/--cacertdir (nothing would be verified)",
        )
        .into());
    }
    let list = |v: &Option<String>| -> Vec<String> {
        v.as_deref()
            .map(|s| {
                s.split([',', ' ', ':'])
                    .filter(|x| !x.trim().is_empty())
                    .map(|x| x.trim().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let opts = resplab_engine::TlsOptions {
        ca_file: a.cacert.clone(),
        ca_dir: a.cacertdir.clone(),
        cert: a.cert.clone(),
        key: a.key.clone(),
        sni: a.sni.clone(),
        insecure: a.insecure,
        protocols: list(&a.tls_protocols),
        ciphersuites: list(&a.tls_ciphersuites),
    };
    // Build the client configuration now: a bad file, protocol or suite is a flag error
    // before anything connects.
    resplab_engine::tls::client_config(&opts).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Some(opts))
}

/// Shard `index`'s share of `total` among `count` shards: the first `total % count`
/// shards take one more.
fn share(total: u64, index: u32, count: u32) -> u64 {
    let (index, count) = (u64::from(index), u64::from(count));
    total / count + u64::from(index < total % count)
}

/// The workload of `--workload-spec` (base64 JSON), with `seed` as its seed. It replaces
/// the workload flags, so none of them may be given.
fn spec_from_base64(a: &BenchArgs, encoded: &str, seed: u64) -> anyhow::Result<WorkloadSpec> {
    use base64::Engine as _;
    let given = [
        a.tests.is_some(),
        a.random_keys.is_some(),
        a.data_size.is_some(),
        a.ratio.is_some(),
        a.key_pattern.is_some(),
        a.key_minimum.is_some(),
        a.key_maximum.is_some(),
        a.key_prefix.is_some(),
        !a.commands.is_empty(),
        a.data_size_range.is_some(),
        a.data_size_list.is_some(),
    ];
    if given.iter().any(|g| *g) {
        return Err(conflict("--workload-spec", "the workload flags").into());
    }
    let expected = "base64 of a workload specification in JSON (as resplab experiment writes it)";
    let shown = if encoded.len() > 40 {
        format!("{}...", &encoded[..40])
    } else {
        encoded.to_string()
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| flag_error("--workload-spec", &shown, expected))?;
    let mut spec: WorkloadSpec = serde_json::from_slice(&bytes)
        .map_err(|e| flag_error("--workload-spec", &shown, format!("{expected} ({e})")))?;
    spec.seed = seed;
    spec.validate()?;
    Ok(spec)
}

fn resolve_workload(a: &BenchArgs, seed: u64) -> anyhow::Result<WorkloadSpec> {
    let memtier_flags: Vec<&str> = [
        ("--ratio", a.ratio.is_some()),
        ("--key-pattern", a.key_pattern.is_some()),
        ("--key-minimum", a.key_minimum.is_some()),
        ("--key-maximum", a.key_maximum.is_some()),
        ("--key-prefix", a.key_prefix.is_some()),
        ("--key-median", a.key_median.is_some()),
        ("--key-stddev", a.key_stddev.is_some()),
        ("--key-zipf-exp", a.key_zipf_exp.is_some()),
        ("--data-size-range", a.data_size_range.is_some()),
        ("--data-size-list", a.data_size_list.is_some()),
    ]
    .into_iter()
    .filter_map(|(f, set)| set.then_some(f))
    .collect();
    if a.data_size.is_some() && (a.data_size_range.is_some() || a.data_size_list.is_some()) {
        return Err(conflict("-d/--data-size", "--data-size-range/--data-size-list").into());
    }
    if a.data_size_range.is_some() && a.data_size_list.is_some() {
        return Err(conflict("--data-size-range", "--data-size-list").into());
    }
    let random_keyspace = match &a.random_keys {
        Some(r) => Some(resolve::integer("-r/--random-keys", r, 1u64, u64::MAX / 2)?),
        None => None,
    };

    // The flags are checked against each other here, where they can be named; the spec
    // comes from the conversion experiments use too.
    let words = if !a.commands.is_empty() {
        if a.tests.is_some() {
            return Err(conflict("--command", "-t/--tests").into());
        }
        if a.ratio.is_some() || a.key_pattern.is_some() {
            return Err(conflict(
                "--command",
                "--ratio/--key-pattern (use --command-ratio and --command-key-pattern)",
            )
            .into());
        }
        if a.command_ratios.len() > a.commands.len() {
            return Err(flag_error(
                "--command-ratio",
                &a.command_ratios.join(","),
                format!("at most one per --command ({} given)", a.commands.len()),
            )
            .into());
        }
        if a.command_key_patterns.len() > a.commands.len() {
            return Err(flag_error(
                "--command-key-pattern",
                &a.command_key_patterns.join(","),
                format!("at most one per --command ({} given)", a.commands.len()),
            )
            .into());
        }
        let mut commands = Vec::new();
        for (i, c) in a.commands.iter().enumerate() {
            let mut spec: CommandSpec = flags::parse_command(c)?;
            if let Some(r) = a.command_ratios.get(i) {
                spec.ratio = flags::parse_command_ratio(r)?;
            }
            if let Some(p) = a.command_key_patterns.get(i) {
                spec.key_pattern = flags::parse_command_key_pattern(p)?;
            }
            commands.push(spec);
        }
        WorkloadFlags {
            commands,
            keys: key_space(a)?,
            values: value_sizes(a)?,
            random_keyspace,
            ..WorkloadFlags::default()
        }
    } else if !memtier_flags.is_empty() {
        if a.tests.is_some() {
            return Err(conflict(memtier_flags[0], "-t/--tests").into());
        }
        if a.random_keys.is_some() {
            return Err(flag_error(
                "-r/--random-keys",
                a.random_keys.as_deref().unwrap_or(""),
                "no -r with a SET:GET mix: the key range is --key-minimum/--key-maximum",
            )
            .into());
        }
        WorkloadFlags {
            mix: true,
            ratio: a.ratio.as_deref().map(flags::parse_ratio).transpose()?,
            key_pattern: a
                .key_pattern
                .as_deref()
                .map(flags::parse_key_pattern)
                .transpose()?,
            keys: key_space(a)?,
            values: value_sizes(a)?,
            ..WorkloadFlags::default()
        }
    } else {
        if !a.command_ratios.is_empty() || !a.command_key_patterns.is_empty() {
            return Err(anyhow::anyhow!(
                "--command-ratio and --command-key-pattern need --command: they apply to the --command at the same position"
            ));
        }
        WorkloadFlags {
            tests: a
                .tests
                .as_deref()
                .map(flags::parse_tests)
                .transpose()?
                .unwrap_or_default(),
            random_keyspace,
            data_size: a
                .data_size
                .as_deref()
                .map(|d| resolve::integer("-d/--data-size", d, 0usize, 512 * 1024 * 1024))
                .transpose()?,
            ..WorkloadFlags::default()
        }
    };
    Ok(words.into_spec(seed)?)
}

/// `-d`, `--data-size-range` or `--data-size-list` (checked not to come together).
fn value_sizes(a: &BenchArgs) -> anyhow::Result<Option<ValueSize>> {
    Ok(if let Some(d) = &a.data_size {
        Some(ValueSize::Fixed {
            bytes: resolve::integer("-d/--data-size", d, 0usize, 512 * 1024 * 1024)?,
        })
    } else if let Some(r) = &a.data_size_range {
        Some(flags::parse_data_size_range(r)?)
    } else if let Some(l) = &a.data_size_list {
        Some(flags::parse_data_size_list(l)?)
    } else {
        None
    })
}

/// The key space of a mix or of command templates (`--key-prefix`, `--key-minimum`,
/// `--key-maximum`, `--key-median`, `--key-stddev`, `--key-zipf-exp`).
fn key_space(a: &BenchArgs) -> anyhow::Result<KeySpace> {
    let mut k = KeySpace::default();
    if let Some(v) = &a.key_prefix {
        k.prefix = v.clone();
    }
    if let Some(v) = &a.key_minimum {
        k.minimum = resolve::integer("--key-minimum", v, 0u64, u64::MAX / 2)?;
    }
    if let Some(v) = &a.key_maximum {
        k.maximum = resolve::integer("--key-maximum", v, 0u64, u64::MAX / 2)?;
    }
    if let Some(v) = &a.key_median {
        k.median = Some(resolve::number("--key-median", v, 0.0, f64::MAX)?);
    }
    if let Some(v) = &a.key_stddev {
        k.stddev = Some(resolve::number(
            "--key-stddev",
            v,
            f64::MIN_POSITIVE,
            f64::MAX,
        )?);
    }
    if let Some(v) = &a.key_zipf_exp {
        k.zipf_exp = resolve::number("--key-zipf-exp", v, 0.0, 5.0)?;
    }
    k.validate()?;
    Ok(k)
}

fn conflict(a: &str, b: &str) -> ConflictError {
    ConflictError {
        flag: a.to_string(),
        other: b.to_string(),
    }
}

/// Two flags that cannot be used together.
#[derive(Debug)]
pub struct ConflictError {
    pub flag: String,
    pub other: String,
}

impl std::fmt::Display for ConflictError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} cannot be used together with {}",
            self.flag, self.other
        )
    }
}

impl std::error::Error for ConflictError {}

/// A seed for runs that were given none: different for every run, printed and stored.
fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let pid = u64::from(std::process::id());
    resplab_workload::seed::splitmix64(nanos ^ pid.rotate_left(32))
}
