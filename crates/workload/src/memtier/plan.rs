//! Applies a memtier command line, option by option, to a [`MemtierPlan`].
//!
//! Options are applied in command-line order, so a repeated option's last value wins
//! (memtier's rule) and `--command-ratio`/`--command-key-pattern` change the
//! `--command` given before them. What resplab cannot do is refused here, by name,
//! with the reason ([`refusal`]).

use super::args::{self, Given};
use super::monitor;
use super::{
    Connection, ConnectionLife, Echo, Invocation, MemtierError, MemtierPlan, Output, Protocol,
    RunLength, Staircase, Tls,
};
use crate::flags::{self, WorkloadFlags};
use crate::keys::{KeyPattern, KeySpace};
use crate::spec::{CommandSpec, ExpiryRange, Ratio, WaitSpec};
use crate::values::ValueSize;

/// Most connections of a run (the engine's limit), threads × clients per thread.
pub const MAX_CONNECTIONS: u64 = 100_000;

/// The seed of every run without `--randomize`: memtier, too, draws from a constant
/// seed unless told otherwise.
pub const CONSTANT_SEED: u64 = 0x006d_656d_7469_6572;

/// Reads a memtier command line (without the program name).
///
/// # Errors
/// The first problem: bad syntax, a bad value (naming the option and the form
/// expected), a contradiction memtier also refuses, or an option resplab refuses.
pub fn parse(argv: &[String]) -> Result<Invocation, MemtierError> {
    parse_reading(argv, &|path| std::fs::read_to_string(path))
}

/// [`parse`], reading the `--monitor-input` file with `read`.
///
/// # Errors
/// What [`parse`] reports, and a monitor file that cannot be read or holds a line
/// that is not a MONITOR line (naming the file and line).
pub fn parse_reading(
    argv: &[String],
    read: &dyn Fn(&str) -> std::io::Result<String>,
) -> Result<Invocation, MemtierError> {
    let given = args::split(argv)?;
    if given.iter().any(|g| g.name == "help") {
        return Ok(Invocation::Help);
    }
    if given.iter().any(|g| g.name == "version") {
        return Ok(Invocation::Version);
    }
    let mut b = Builder::default();
    for g in &given {
        b.apply(g)?;
    }
    b.read_monitor(read)?;
    b.follow_scan_cursor()?;
    b.finish().map(|p| Invocation::Run(Box::new(p)))
}

/// The options seen so far.
#[derive(Default)]
struct Builder {
    threads: Option<u32>,
    clients: Option<u32>,
    requests: Option<u64>,
    all_keys: bool,
    test_time: Option<u64>,
    pipeline: Option<u32>,
    rate: Option<u64>,
    run_count: Option<u32>,
    distinct: bool,
    randomize: bool,
    conn: Connection,
    tls: bool,
    tls_opts: Tls,
    out: Output,
    ratio: Option<Ratio>,
    key_pattern: Option<(KeyPattern, KeyPattern)>,
    key_pattern_text: Option<String>,
    keys: KeySpace,
    data_size: Option<usize>,
    range: Option<(ValueSize, String)>,
    list: Option<(ValueSize, String)>,
    /// `--data-size-pattern=S`: sizes of a range follow the key.
    sizes_by_key: bool,
    expiry: Option<ExpiryRange>,
    random_data: bool,
    commands: Vec<CommandSpec>,
    /// `--wait-ratio SETS:WAITS`, `--num-slaves`, `--wait-timeout`.
    wait_ratio: Option<(u32, u32)>,
    num_slaves: Option<(u64, u64)>,
    wait_timeout: Option<(u64, u64)>,
    /// `--multi-key-get N`.
    multi_key_get: Option<u32>,
    /// `--monitor-input FILE`, `--monitor-pattern R`.
    monitor_input: Option<String>,
    monitor_random: bool,
    /// `--scan-incremental-iteration`, `--scan-incremental-max-iterations`.
    scan: bool,
    scan_max_iterations: u64,
    life: ConnectionLife,
    /// `--clients-start`, `--clients-step`, `--step-duration` as given.
    stairs: [Option<u64>; 3],
}

impl Builder {
    /// Applies one option.
    fn apply(&mut self, g: &Given) -> Result<(), MemtierError> {
        if let Some(why) = refusal(g) {
            return Err(MemtierError::refused(g.name, why));
        }
        let v = g.text();
        match g.name {
            "server" | "host" => self.conn.host = v.to_string(),
            "port" => self.conn.port = number(g, 1, u64::from(u16::MAX))? as u16,
            "unix-socket" => self.conn.unix_socket = Some(v.to_string()),
            "protocol" => self.conn.protocol = protocol(g)?,
            "uri" => self.conn.uri = Some(v.to_string()),
            "authenticate" => self.conn.authenticate = Some(v.to_string()),
            "select-db" => self.conn.select_db = Some(number(g, 0, u64::from(u32::MAX))? as u32),
            "cluster-mode" => self.conn.cluster = true,
            "connection-timeout" => {
                let secs = number(g, 0, 86_400)?;
                self.conn.connect_timeout_sec = (secs > 0).then_some(secs);
            }
            "reconnect-on-error" => self.conn.reconnect_on_error = true,
            "reconnect-interval" => {
                self.life.reconnect_interval = Some(positive(g, "reconnect-interval")?)
            }
            "thread-conn-start-min-jitter-micros" => {
                self.life.jitter_min_us = number(g, 0, u64::from(u32::MAX))?
            }
            "thread-conn-start-max-jitter-micros" => {
                self.life.jitter_max_us = number(g, 0, u64::from(u32::MAX))?
            }
            "clients-start" => self.stairs[0] = Some(positive(g, "clients-start")?),
            "clients-step" => self.stairs[1] = Some(positive(g, "clients-step")?),
            "step-duration" => self.stairs[2] = Some(positive(g, "step-duration")?),
            "tls" => self.tls = true,
            "cert" => self.tls_opts.cert = Some(v.to_string()),
            "key" => self.tls_opts.key = Some(v.to_string()),
            "cacert" => self.tls_opts.cacert = Some(v.to_string()),
            "tls-skip-verify" => self.tls_opts.skip_verify = true,
            "sni" => self.tls_opts.sni = Some(v.to_string()),
            "tls-protocols" => {
                self.tls_opts.protocols = v.split(',').map(|p| p.trim().to_string()).collect()
            }
            _ => return self.apply_run(g),
        }
        Ok(())
    }

    /// Options of the run's shape and output.
    fn apply_run(&mut self, g: &Given) -> Result<(), MemtierError> {
        let v = g.text();
        match g.name {
            "threads" => self.threads = Some(number(g, 1, 1024)? as u32),
            "clients" => self.clients = Some(number(g, 1, 100_000)? as u32),
            "requests" if g.text() == "allkeys" => {
                self.all_keys = true;
                self.requests = Some(0);
            }
            "requests" => {
                self.all_keys = false;
                self.requests = Some(number(g, 1, u64::MAX / 2)?);
            }
            "test-time" => self.test_time = Some(number(g, 1, 365 * 86_400)?),
            "pipeline" => self.pipeline = Some(number(g, 1, 1_000_000)? as u32),
            "rate-limiting" => self.rate = Some(number(g, 1, 1_000_000_000)?),
            "run-count" => self.run_count = Some(number(g, 1, 10_000)? as u32),
            "distinct-client-seed" => self.distinct = true,
            "randomize" => self.randomize = true,
            "out-file" => self.out.out_file = Some(v.to_string()),
            "json-out-file" => self.out.json_out_file = Some(v.to_string()),
            "hdr-file-prefix" => self.out.hdr_file_prefix = Some(v.to_string()),
            "hide-histogram" => self.out.hide_histogram = true,
            "print-all-runs" => self.out.print_all_runs = true,
            "print-percentiles" => self.out.percentiles = percentiles(g)?,
            _ => return self.apply_workload(g),
        }
        Ok(())
    }

    /// Options of what is sent.
    fn apply_workload(&mut self, g: &Given) -> Result<(), MemtierError> {
        let v = g.text();
        match g.name {
            "ratio" => self.ratio = Some(flags::parse_ratio(v)?),
            "key-pattern" => {
                self.key_pattern = Some(flags::parse_key_pattern(v)?);
                self.key_pattern_text = Some(v.to_string());
            }
            "key-prefix" => self.keys.prefix = v.to_string(),
            "key-minimum" => self.keys.minimum = number(g, 0, u64::MAX / 2)?,
            "key-maximum" => self.keys.maximum = number(g, 0, u64::MAX / 2)?,
            "key-stddev" => self.keys.stddev = Some(real(g)?),
            "key-median" => self.keys.median = Some(real(g)?),
            "key-zipf-exp" => self.keys.zipf_exp = real(g)?,
            "data-size" => self.data_size = Some(number(g, 1, 512 * 1024 * 1024)? as usize),
            "data-size-range" => {
                self.range = Some((flags::parse_data_size_range(v)?, v.replace('-', ":")))
            }
            "data-size-list" => self.list = Some((flags::parse_data_size_list(v)?, v.to_string())),
            "data-size-pattern" => self.sizes_by_key = size_pattern(g)?,
            "expiry-range" => self.expiry = Some(expiry_range(g)?),
            "random-data" => self.random_data = true,
            "command" => self.commands.push(flags::parse_command(v)?),
            "command-ratio" => self.last_command(g)?.ratio = flags::parse_command_ratio(v)?,
            "command-key-pattern" => {
                self.last_command(g)?.key_pattern = flags::parse_command_key_pattern(v)?
            }
            "wait-ratio" => self.wait_ratio = Some(wait_ratio(g)?),
            "num-slaves" => self.num_slaves = Some(range(g)?),
            "wait-timeout" => self.wait_timeout = Some(range(g)?),
            "multi-key-get" => self.multi_key_get = Some(number(g, 1, u64::from(u32::MAX))? as u32),
            "monitor-input" => self.monitor_input = Some(v.to_string()),
            "scan-incremental-iteration" => self.scan = true,
            "scan-incremental-max-iterations" => {
                self.scan_max_iterations = number(g, 0, u64::from(u32::MAX))?
            }
            "monitor-pattern" => {
                self.monitor_random = monitor::is_random(v).ok_or_else(|| {
                    crate::WorkloadError::new(g.flag(), v, "S (in turn) or R (at random)")
                })?
            }
            // Given with the value that asks for memtier's default behaviour (any other
            // value was refused by `refusal`).
            "data-offset"
            | "max-reconnect-attempts"
            | "reconnect-backoff-factor"
            | "command-stats-breakdown" => {}
            // Everything else was refused (or is help/version) before this point; the
            // option table and this match are kept in step by the tests.
            other => {
                return Err(MemtierError::usage(format!(
                    "option --{other} is not handled"
                )))
            }
        }
        Ok(())
    }

    /// `-n allkeys`, as memtier counts it: the key range's width per client, or with
    /// `--key-pattern P:P` the range shared out over every client (plus one).
    fn all_keys_requests(&self) -> u64 {
        let width = self.keys.maximum.saturating_sub(self.keys.minimum);
        let parallel = self.key_pattern == Some((KeyPattern::Parallel, KeyPattern::Parallel));
        if parallel {
            let clients =
                u64::from(self.threads.unwrap_or(4)) * u64::from(self.clients.unwrap_or(50));
            width / clients.max(1) + 1
        } else {
            width.max(1)
        }
    }

    /// The value sizes, as memtier chooses among `--data-size`, `--data-size-list` and
    /// `--data-size-range` (one at most) and applies `--data-size-pattern` (to a range
    /// only).
    fn values(&self, arbitrary_commands: bool) -> Result<Option<ValueSize>, MemtierError> {
        if self.data_size.is_some() && (self.range.is_some() || self.list.is_some()) {
            return Err(MemtierError::usage(
                "--data-size cannot be used with --data-size-list or --data-size-range",
            ));
        }
        if self.range.is_some() && self.list.is_some() {
            return Err(MemtierError::usage(
                "--data-size-list cannot be used with --data-size-range",
            ));
        }
        let Some((range, _)) = &self.range else {
            let list = self.list.as_ref().map(|(v, _)| v.clone());
            return Ok(list.or(self.data_size.map(|bytes| ValueSize::Fixed { bytes })));
        };
        let (&ValueSize::Range { min, max }, true) = (range, self.sizes_by_key) else {
            return Ok(Some(range.clone()));
        };
        self.sizes_by_key(min, max, arbitrary_commands).map(Some)
    }

    /// `--data-size-pattern=S` over the range `min-max`. memtier spreads the sizes over
    /// the key range for the SETs of its mix, and sizes every `__data__` of `--command`
    /// as if its key were 0 (the smallest size when the key range starts at 0).
    fn sizes_by_key(
        &self,
        min: usize,
        max: usize,
        arbitrary_commands: bool,
    ) -> Result<ValueSize, MemtierError> {
        let k = &self.keys;
        if arbitrary_commands && k.minimum > 0 {
            return Err(MemtierError::usage(format!(
                "--data-size-pattern=S with --command and --key-minimum {}: memtier sizes each __data__ of a command as if its key were 0, below the key range, where its sizes are undefined",
                k.minimum
            )));
        }
        if arbitrary_commands {
            return Ok(ValueSize::Fixed { bytes: min });
        }
        if k.maximum <= k.minimum {
            return Err(MemtierError::usage(format!(
                "--data-size-pattern=S spreads the sizes over the key range: expected --key-maximum above --key-minimum (found {}-{})",
                k.minimum, k.maximum
            )));
        }
        Ok(ValueSize::ByKey { min, max })
    }

    /// memtier's echo of the workload's words.
    fn echo(&self) -> Echo {
        Echo {
            ratio: self
                .ratio
                .map_or("1:10".into(), |r| format!("{}:{}", r.set, r.get)),
            key_pattern: self
                .key_pattern_text
                .clone()
                .unwrap_or_else(|| "R:R".into()),
            // memtier echoes no size when a range or list gives the sizes.
            data_size: match (&self.range, &self.list) {
                (None, None) => self.data_size.unwrap_or(32) as u64,
                _ => 0,
            },
            data_size_range: self.range.as_ref().map_or("0:0".into(), |(_, t)| t.clone()),
            data_size_list: self.list.as_ref().map_or(String::new(), |(_, t)| t.clone()),
            data_size_pattern: if self.sizes_by_key { "S" } else { "R" }.into(),
            expiry_range: self
                .expiry
                .map_or("0:0".into(), |e| format!("{}:{}", e.min_sec, e.max_sec)),
            random_data: self.random_data,
            key_prefix: self.keys.prefix.clone(),
            key_minimum: self.keys.minimum,
            key_maximum: self.keys.maximum,
            key_stddev: self.keys.stddev.unwrap_or(0.0),
            key_median: self.keys.median.unwrap_or(0.0),
            key_zipf_exp: self.keys.zipf_exp,
            wait_ratio: self
                .wait_ratio
                .map_or("0:0".into(), |(a, b)| format!("{a}:{b}")),
            num_slaves: self
                .num_slaves
                .map_or("0:0".into(), |(a, b)| format!("{a}:{b}")),
            wait_timeout: self
                .wait_timeout
                .map_or("0-0".into(), |(a, b)| format!("{a}-{b}")),
            multi_key_get: self.multi_key_get.unwrap_or(0),
        }
    }

    /// The WAITs of a SET:GET mix, as memtier sends them: none under `--command`
    /// (memtier's arbitrary commands skip its WAIT step) or with `--wait-ratio N:0`.
    fn wait(&self, arbitrary_commands: bool) -> Result<Option<WaitSpec>, MemtierError> {
        let Some((sets, waits)) = self.wait_ratio else {
            return Ok(None);
        };
        if self.conn.cluster {
            return Err(MemtierError::usage(
                "--cluster-mode does not support --wait-ratio (memtier refuses it too)",
            ));
        }
        if waits == 0 || arbitrary_commands {
            return Ok(None);
        }
        let (replicas_min, replicas_max) = self.num_slaves.unwrap_or((0, 0));
        let (timeout_ms_min, timeout_ms_max) = self.wait_timeout.unwrap_or((0, 0));
        Ok(Some(WaitSpec {
            sets,
            waits,
            replicas_min,
            replicas_max,
            timeout_ms_min,
            timeout_ms_max,
        }))
    }

    /// `--multi-key-get`: memtier_benchmark sends no MGET over the redis protocol; it
    /// stops with an assertion at the first GET of its mix. Lines whose mix has no GET,
    /// and `--command` lines, never reach that point and run as without the option.
    fn check_multi_key_get(&self, arbitrary_commands: bool) -> Result<(), MemtierError> {
        if self.multi_key_get.is_none() {
            return Ok(());
        }
        if self.conn.cluster {
            return Err(MemtierError::usage(
                "--cluster-mode does not support --multi-key-get (memtier refuses it too)",
            ));
        }
        let gets = self.ratio.unwrap_or_default().get;
        if gets > 0 && !arbitrary_commands {
            return Err(MemtierError::refused(
                "multi-key-get",
                "memtier_benchmark sends no MGET with the redis protocol (it aborts at the first GET: \"multi get not implemented for redis yet\"); use --command=\"MGET __key__ __key__\"",
            ));
        }
        Ok(())
    }

    /// Reads the `--monitor-input` file and puts its commands in place of the
    /// `__monitor_line…__` placeholders of `--command`.
    fn read_monitor(
        &mut self,
        read: &dyn Fn(&str) -> std::io::Result<String>,
    ) -> Result<(), MemtierError> {
        let Some(path) = &self.monitor_input else {
            return monitor::expand(&mut self.commands, None, false);
        };
        if self.conn.cluster {
            return Err(MemtierError::usage(
                "--cluster-mode does not support --monitor-input (memtier refuses it too)",
            ));
        }
        let text = read(path).map_err(|e| {
            MemtierError::usage(format!("--monitor-input {path}: cannot be read: {e}"))
        })?;
        let lines = monitor::commands(&text, path)?;
        monitor::expand(&mut self.commands, Some(&lines), self.monitor_random)
    }

    /// `--scan-incremental-iteration`: memtier's conditions, then the one SCAN command
    /// set to follow its cursor.
    fn follow_scan_cursor(&mut self) -> Result<(), MemtierError> {
        if !self.scan {
            return Ok(());
        }
        let fail = |why: &str| {
            Err(MemtierError::usage(format!(
                "--scan-incremental-iteration {why} (memtier requires it too)"
            )))
        };
        if self.pipeline.unwrap_or(1) != 1 {
            return fail("needs --pipeline 1");
        }
        if self.conn.cluster {
            return fail("is not supported with --cluster-mode");
        }
        let [cmd] = self.commands.as_mut_slice() else {
            return fail("needs exactly one --command, a SCAN command");
        };
        let args = crate::template::split_args(&cmd.template, "--command")?;
        if !args
            .first()
            .is_some_and(|a| a.eq_ignore_ascii_case(b"SCAN"))
        {
            return fail("needs the --command to be a SCAN command");
        }
        if args.len() < 2 {
            return fail("needs a cursor in the SCAN command, like \"SCAN 0\"");
        }
        if cmd.template.contains("__") {
            return Err(MemtierError::refused(
                "scan-incremental-iteration",
                "placeholders in a SCAN command whose cursor is followed are not supported; write its MATCH and COUNT arguments out",
            ));
        }
        cmd.follow_cursor = Some(self.scan_max_iterations);
        Ok(())
    }

    /// The staircase, with memtier's rules: its three options together, with
    /// `--test-time` and without `--requests`.
    fn staircase(&self) -> Result<Option<Staircase>, MemtierError> {
        let [start, step, secs] = self.stairs;
        let (Some(start), Some(step), Some(step_sec)) = (start, step, secs) else {
            if self.stairs.iter().any(Option::is_some) {
                return Err(MemtierError::usage(
                    "--clients-start, --clients-step, and --step-duration must all be specified together",
                ));
            }
            return Ok(None);
        };
        if self.requests.is_some() {
            return Err(MemtierError::usage(
                "--requests cannot be used with client staircase mode: use --test-time instead",
            ));
        }
        if self.test_time.is_none() {
            return Err(MemtierError::usage(
                "--test-time is required when using client staircase mode",
            ));
        }
        Ok(Some(Staircase {
            start: start as u32,
            step: step as u32,
            step_sec,
        }))
    }

    fn last_command(&mut self, g: &Given) -> Result<&mut CommandSpec, MemtierError> {
        self.commands.last_mut().ok_or_else(|| {
            MemtierError::usage(format!(
                "{} applies to the --command before it, and none was given",
                g.flag()
            ))
        })
    }

    /// The plan, after the checks that need every option.
    fn finish(mut self) -> Result<MemtierPlan, MemtierError> {
        let arbitrary_commands = !self.commands.is_empty();
        self.life.staircase = self.staircase()?;
        let values = self.values(arbitrary_commands)?;
        let wait = self.wait(arbitrary_commands)?;
        self.check_multi_key_get(arbitrary_commands)?;
        let echo = self.echo();
        let length = match (self.requests, self.test_time) {
            (Some(_), Some(_)) => {
                return Err(MemtierError::usage(
                    "--test-time and --requests are mutually exclusive",
                ))
            }
            (_, Some(s)) => RunLength::Seconds(s),
            (_, None) if self.all_keys => RunLength::RequestsPerClient(self.all_keys_requests()),
            (n, None) => RunLength::RequestsPerClient(n.unwrap_or(10_000)),
        };
        let threads = self.threads.unwrap_or(4);
        let clients = self.clients.unwrap_or(50);
        let connections = u64::from(threads) * u64::from(clients);
        if connections > MAX_CONNECTIONS {
            return Err(MemtierError::usage(format!(
                "-t {threads} × -c {clients} is {connections} connections: expected at most {MAX_CONNECTIONS} (memtier counts -c per thread)"
            )));
        }
        self.life.check(self.conn.cluster, clients)?;
        let mut conn = self.conn;
        if self.tls {
            conn.tls = Some(self.tls_opts);
        } else if self.tls_opts != Tls::default() {
            return Err(MemtierError::usage(
                "--cert, --key, --cacert, --tls-skip-verify, --sni and --tls-protocols need --tls",
            ));
        }
        let mut workload = WorkloadFlags {
            commands: self.commands,
            mix: true,
            ratio: self.ratio,
            key_pattern: self.key_pattern,
            keys: self.keys,
            values,
            // memtier gives only the SETs of its SET:GET mix a time to live.
            expiry: self.expiry.filter(|_| !arbitrary_commands),
            ..WorkloadFlags::default()
        }
        .into_spec(CONSTANT_SEED)?;
        if let crate::WorkloadKind::Mix(m) = &mut workload.kind {
            m.wait = wait;
        }
        Ok(MemtierPlan {
            all_keys: self.all_keys,
            workload,
            arbitrary_commands,
            distinct_client_seed: self.distinct,
            randomize: self.randomize,
            threads,
            clients_per_thread: clients,
            length,
            pipeline: self.pipeline.unwrap_or(1),
            rate_limit_per_connection: self.rate,
            run_count: self.run_count.unwrap_or(1),
            connection: conn,
            life: self.life,
            output: self.out,
            echo,
        })
    }
}

/// Why resplab refuses an option (with this value), if it does.
fn refusal(g: &Given) -> Option<&'static str> {
    let v = g.text().trim();
    let zero = v.parse::<f64>().is_ok_and(|x| x == 0.0);
    Some(match g.name {
        "ipv4" | "ipv6" => "resplab cannot force one address family when resolving a name; give an IPv4 or IPv6 address to --server instead",
        "client-stats" => "per-client CSV files are not written; --json-out-file keeps the per-second series",
        "debug" => "resplab prints no per-request debug trace",
        "show-config" => "the configuration dump is not printed; --json-out-file records the configuration",
        "data-offset" if !zero => "resplab sends no SETRANGE/GETRANGE workload",
        "data-import" | "data-verify" | "verify-only" | "generate-keys" | "no-expiry" => "resplab has no data import or verification mode",
        "max-reconnect-attempts" if !zero => "resplab reconnects with its own backoff and gives a server up after 5 s without a connection, not after a number of attempts",
        "reconnect-backoff-factor" if !zero => "resplab's reconnect backoff doubles from 10 ms to 500 ms and cannot be set",
        "command-stats-breakdown" if !v.eq_ignore_ascii_case("command") => "statistics are grouped by command name only",
        "statsd-host" | "statsd-port" | "statsd-prefix" | "statsd-run-label" | "graphite-port" => "resplab sends no metrics to StatsD or Graphite; --json-out-file keeps the per-second series",
        _ => return None,
    })
}

fn protocol(g: &Given) -> Result<Protocol, MemtierError> {
    match g.text() {
        "redis" | "resp2" => Ok(Protocol::Resp2),
        "resp3" => Ok(Protocol::Resp3),
        "memcache_text" | "memcache_binary" => Err(MemtierError::refused(
            g.name,
            "resplab speaks RESP only (redis, resp2, resp3)",
        )),
        other => Err(crate::WorkloadError::new(
            g.flag(),
            other,
            "redis, resp2 or resp3 (memcache_text and memcache_binary are not supported)",
        )
        .into()),
    }
}

/// `--data-size-pattern`: `R` (false) or `S` (true), as memtier spells them.
fn size_pattern(g: &Given) -> Result<bool, MemtierError> {
    match g.text() {
        "R" => Ok(false),
        "S" => Ok(true),
        other => Err(crate::WorkloadError::new(
            g.flag(),
            other,
            "R (random sizes) or S (sizes spread over the key range)",
        )
        .into()),
    }
}

/// `--expiry-range MIN-MAX` in seconds; memtier swaps a range given high to low and
/// wants a maximum of at least 1.
fn expiry_range(g: &Given) -> Result<ExpiryRange, MemtierError> {
    let err = || {
        MemtierError::from(crate::WorkloadError::new(
            g.flag(),
            g.text(),
            "MIN-MAX whole seconds with a maximum of at least 1, like 10-100",
        ))
    };
    let limit = u64::from(u32::MAX >> 1);
    let secs = |t: &str| t.parse::<u64>().ok().filter(|&n| n <= limit);
    let (a, b) = g.text().split_once('-').ok_or_else(err)?;
    let (a, b) = (secs(a).ok_or_else(err)?, secs(b).ok_or_else(err)?);
    let range = ExpiryRange {
        min_sec: a.min(b),
        max_sec: a.max(b),
    };
    range.validate().map_err(|_| err())?;
    Ok(range)
}

/// `--wait-ratio SETS:WAITS`, whole numbers, not both 0 (memtier's form).
fn wait_ratio(g: &Given) -> Result<(u32, u32), MemtierError> {
    let parsed = g
        .text()
        .split_once(':')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        .filter(|&(a, b)| a > 0 || b > 0);
    parsed.ok_or_else(|| {
        crate::WorkloadError::new(
            g.flag(),
            g.text(),
            "SETS:WAITS whole numbers, not both 0, like 10:1",
        )
        .into()
    })
}

/// `--num-slaves` and `--wait-timeout`: `MIN-MAX` whole numbers with a maximum of at
/// least 1; memtier swaps a range given high to low.
fn range(g: &Given) -> Result<(u64, u64), MemtierError> {
    let parsed = g
        .text()
        .split_once('-')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        .map(|(a, b)| (u64::from(a.min(b)), u64::from(a.max(b))))
        .filter(|&(_, hi)| hi > 0);
    parsed.ok_or_else(|| {
        crate::WorkloadError::new(
            g.flag(),
            g.text(),
            "MIN-MAX whole numbers with a maximum of at least 1, like 1-3",
        )
        .into()
    })
}

/// A whole number of at least 1, refused as memtier refuses it otherwise.
fn positive(g: &Given, name: &str) -> Result<u64, MemtierError> {
    match g.text().trim().parse::<u64>() {
        Ok(n) if (1..=u64::from(u32::MAX)).contains(&n) => Ok(n),
        _ => Err(crate::WorkloadError::new(
            g.flag(),
            g.text(),
            format!("a whole number above 0 (memtier: {name} must be greater than zero)"),
        )
        .into()),
    }
}

/// A whole number in `lo..=hi`.
fn number(g: &Given, lo: u64, hi: u64) -> Result<u64, MemtierError> {
    let v = g.text().trim();
    match v.parse::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(crate::WorkloadError::new(
            g.flag(),
            g.text(),
            format!("a whole number from {lo} to {hi}"),
        )
        .into()),
    }
}

fn real(g: &Given) -> Result<f64, MemtierError> {
    match g.text().trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(crate::WorkloadError::new(g.flag(), g.text(), "a number").into()),
    }
}

/// `--print-percentiles 50,99,99.9`.
fn percentiles(g: &Given) -> Result<Vec<f64>, MemtierError> {
    let mut out = Vec::new();
    for item in g.text().split(',') {
        match item.trim().parse::<f64>() {
            Ok(p) if p > 0.0 && p <= 100.0 => out.push(p),
            _ => {
                return Err(crate::WorkloadError::new(
                    g.flag(),
                    g.text(),
                    "percentiles above 0 and at most 100, separated by commas, like 50,99,99.9",
                )
                .into())
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
