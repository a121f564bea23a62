//! memtier_benchmark's command line with memtier's meaning (`resplab memtier ARGS…`).
//!
//! People arrive with memtier lines in scripts, CI specs and dashboards. This module
//! reads such a line (every option of memtier_benchmark 2.x's `--help`, in getopt's
//! syntax, see [`args`]) and turns it into a [`MemtierPlan`]: the workload as a
//! [`WorkloadSpec`] plus memtier's run shape (threads × clients **per thread**,
//! requests **per client** or seconds, pipeline, per-connection rate limit, run count),
//! where to connect and what to write. Counting follows memtier, not `resplab bench`:
//! `-t 4 -c 50 -n 10000` is 200 connections sending 10,000 requests each.
//!
//! An option resplab's engine cannot honour with memtier's meaning is refused with a
//! one-line reason ([`MemtierError::Refused`]); an option is never accepted and
//! ignored. Options whose only effect is the default (`--data-offset=0`,
//! `--wait-ratio=1:0`) are accepted, because they ask for nothing; so are options
//! memtier itself leaves without effect on a line (`--wait-ratio` or `--multi-key-get`
//! with `--command`, `--multi-key-get` with a mix of SETs only).
//!
//! The neighbours: the engine turns the plan's connection part into its run
//! configuration (`resplab_engine::memtier`), the report crate renders memtier's table,
//! JSON and HDR files (`resplab_report::memtier`), and the CLI only hands argv over.

pub mod args;
pub mod hint;
mod monitor;
mod plan;

pub use args::is_memtier_option;
pub use plan::{parse, parse_reading};

use crate::spec::WorkloadSpec;
use crate::WorkloadError;

/// What a memtier command line asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Invocation {
    /// `--help`: print the usage.
    Help,
    /// `-v`/`--version`: print the version.
    Version,
    /// A benchmark run.
    Run(Box<MemtierPlan>),
}

/// A memtier line that cannot run: bad syntax or value, or an option resplab refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MemtierError {
    /// Bad syntax (unknown option, missing value) or a contradiction.
    #[error("{0}")]
    Usage(String),
    /// A value of the wrong form.
    #[error(transparent)]
    Invalid(#[from] WorkloadError),
    /// An option resplab cannot honour with memtier's meaning.
    #[error("--{option} is not supported by resplab memtier: {why}")]
    Refused {
        /// The long option name, without dashes.
        option: String,
        /// Why, and what to do instead when there is something.
        why: String,
    },
}

impl MemtierError {
    pub(crate) fn usage(msg: impl Into<String>) -> Self {
        MemtierError::Usage(msg.into())
    }

    pub(crate) fn refused(option: &str, why: &str) -> Self {
        MemtierError::Refused {
            option: option.to_string(),
            why: why.to_string(),
        }
    }
}

/// How long each run lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunLength {
    /// `-n`: requests per client (connection).
    RequestsPerClient(u64),
    /// `--test-time`: seconds.
    Seconds(u64),
}

/// memtier's wire protocol choices that resplab speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `redis` (the default) or `resp2`.
    Resp2,
    /// `resp3`: `HELLO 3` after connecting.
    Resp3,
}

/// TLS options (`--tls` and its companions).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tls {
    /// `--cert`.
    pub cert: Option<String>,
    /// `--key`.
    pub key: Option<String>,
    /// `--cacert`.
    pub cacert: Option<String>,
    /// `--tls-skip-verify`.
    pub skip_verify: bool,
    /// `--sni`.
    pub sni: Option<String>,
    /// `--tls-protocols`, e.g. `TLSv1.2,TLSv1.3`.
    pub protocols: Vec<String>,
}

/// Where and how to connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Connection {
    /// `-s`/`--server`/`-h`/`--host` (default `localhost`).
    pub host: String,
    /// `-p`/`--port` (default 6379).
    pub port: u16,
    /// `-S`/`--unix-socket`.
    pub unix_socket: Option<String>,
    /// `-u`/`--uri`, applied after the options above (memtier lets the URI decide).
    pub uri: Option<String>,
    /// `-a`/`--authenticate`: `PASSWORD` or `USER:PASSWORD`.
    pub authenticate: Option<String>,
    /// `--select-db`.
    pub select_db: Option<u32>,
    /// `--tls` and its options.
    pub tls: Option<Tls>,
    /// `--cluster-mode`.
    pub cluster: bool,
    /// `-P`/`--protocol`.
    pub protocol: Protocol,
    /// `--connection-timeout` in seconds (`None`: 0, no limit in memtier; resplab keeps
    /// its own connect timeout then).
    pub connect_timeout_sec: Option<u64>,
    /// `--reconnect-on-error`: reconnect after a connection error (memtier's default is
    /// to stop that client).
    pub reconnect_on_error: bool,
}

impl Default for Connection {
    fn default() -> Self {
        Connection {
            host: "localhost".into(),
            port: 6379,
            unix_socket: None,
            uri: None,
            authenticate: None,
            select_db: None,
            tls: None,
            cluster: false,
            protocol: Protocol::Resp2,
            connect_timeout_sec: None,
            reconnect_on_error: false,
        }
    }
}

/// How connections live: renewed after a number of requests, opened with pauses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnectionLife {
    /// `--reconnect-interval`: each connection is closed and opened again after this
    /// many requests (its pipeline drains first).
    pub reconnect_interval: Option<u64>,
    /// `--thread-conn-start-min-jitter-micros`.
    pub jitter_min_us: u64,
    /// `--thread-conn-start-max-jitter-micros`: with a maximum above 0, each thread
    /// pauses between opening one connection and the next, uniformly from the minimum
    /// to the maximum.
    pub jitter_max_us: u64,
    /// `--clients-start`, `--clients-step`, `--step-duration` (seconds): a staircase
    /// ramp-up of each thread's clients; all three or none.
    pub staircase: Option<Staircase>,
}

/// memtier's staircase: each thread starts with `start` clients and adds `step` every
/// `step_sec` seconds up to `--clients`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Staircase {
    pub start: u32,
    pub step: u32,
    pub step_sec: u64,
}

impl ConnectionLife {
    /// memtier's checks: no reconnect interval in cluster mode, a jitter minimum not
    /// above its maximum, a staircase below `--clients` per thread.
    pub(crate) fn check(&self, cluster: bool, clients: u32) -> Result<(), MemtierError> {
        if let Some(s) = self.staircase.filter(|s| s.start >= clients) {
            return Err(MemtierError::usage(format!(
                "--clients-start ({}) must be less than --clients ({clients})",
                s.start
            )));
        }
        if cluster && self.staircase.is_some() {
            return Err(MemtierError::usage(
                "--clients-start cannot be used with --cluster-mode: resplab's staircase opens connections to one server",
            ));
        }
        if cluster && self.reconnect_interval.is_some() {
            return Err(MemtierError::usage(
                "--reconnect-interval cannot be used with --cluster-mode (memtier refuses it too)",
            ));
        }
        if self.jitter_min_us > self.jitter_max_us {
            return Err(MemtierError::usage(format!(
                "--thread-conn-start-min-jitter-micros ({}) cannot be greater than --thread-conn-start-max-jitter-micros ({})",
                self.jitter_min_us, self.jitter_max_us
            )));
        }
        Ok(())
    }
}

/// What to write, and where.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// `-o`/`--out-file`: the text report goes there instead of standard output.
    pub out_file: Option<String>,
    /// `--json-out-file`.
    pub json_out_file: Option<String>,
    /// `--hdr-file-prefix`.
    pub hdr_file_prefix: Option<String>,
    /// `--hide-histogram`.
    pub hide_histogram: bool,
    /// `--print-percentiles` (default 50, 99, 99.9).
    pub percentiles: Vec<f64>,
    /// `--print-all-runs`.
    pub print_all_runs: bool,
}

impl Default for Output {
    fn default() -> Self {
        Output {
            out_file: None,
            json_out_file: None,
            hdr_file_prefix: None,
            hide_histogram: false,
            percentiles: vec![50.0, 99.0, 99.9],
            print_all_runs: false,
        }
    }
}

/// A memtier command line, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct MemtierPlan {
    /// What each connection sends: a SET:GET mix or `--command` templates. Its seed is
    /// memtier's constant one unless `--randomize` (then the caller picks one from the
    /// clock and sets it).
    pub workload: WorkloadSpec,
    /// `--command` mode (the table shows one row per command type, no hits/misses).
    pub arbitrary_commands: bool,
    /// `--distinct-client-seed`: every connection draws its own random sequence
    /// (otherwise all draw the same one, as in memtier).
    pub distinct_client_seed: bool,
    /// `--randomize`: the seed comes from the clock.
    pub randomize: bool,
    /// `-t`/`--threads` (default 4).
    pub threads: u32,
    /// `-c`/`--clients`: connections **per thread** (default 50).
    pub clients_per_thread: u32,
    /// `-n` or `--test-time`.
    pub length: RunLength,
    /// `-n allkeys`: the requests per client were computed from the key range (memtier
    /// says so: "setting requests to N").
    pub all_keys: bool,
    /// `--pipeline` (default 1).
    pub pipeline: u32,
    /// `--rate-limiting`: most requests per second of each connection.
    pub rate_limit_per_connection: Option<u64>,
    /// `-x`/`--run-count` (default 1).
    pub run_count: u32,
    /// Where to connect.
    pub connection: Connection,
    /// Connections renewed after a number of requests, pauses between opening them.
    pub life: ConnectionLife,
    /// What to write.
    pub output: Output,
    /// Options as memtier echoes them in its JSON `"configuration"` object (values in
    /// memtier's forms), kept here so the writer needs no second parse.
    pub echo: Echo,
}

impl MemtierPlan {
    /// Connections in total: threads × clients per thread.
    pub fn connections(&self) -> u64 {
        u64::from(self.threads) * u64::from(self.clients_per_thread)
    }

    /// The compiled workload: every connection draws the same random sequence unless
    /// `--distinct-client-seed`, as in memtier.
    ///
    /// # Errors
    /// A spec the compiler refuses (the plan's was validated already).
    pub fn compile(&self) -> Result<crate::Workload, WorkloadError> {
        let w = crate::Workload::new(&self.workload)?;
        Ok(if self.distinct_client_seed {
            w
        } else {
            w.with_shared_streams()
        })
    }

    /// The command names of a `--command` run, in the order given, each once
    /// (memtier's rows), those of replayed MONITOR commands after the others; empty for
    /// a SET:GET mix.
    pub fn command_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        if let crate::WorkloadKind::Commands(c) = &self.workload.kind {
            // memtier lists the commands' own rows first, then those of the commands
            // a `__monitor_line@__` replays.
            let own = c.commands.iter().filter(|c| c.replay.is_none());
            let replayed = c.commands.iter().flat_map(|c| c.replay.iter());
            let lines = own
                .map(|c| &c.template)
                .chain(replayed.flat_map(|r| r.lines.iter()));
            for line in lines {
                let name = first_word(line);
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            // A SCAN following its cursor: memtier's two rows.
            if let [cmd] = c.commands.as_slice() {
                if cmd.follow_cursor.is_some() {
                    let name = first_word(&cmd.template);
                    names = vec![format!("{name} 0"), format!("{name} <cursor>")];
                }
            }
        }
        names
    }
}

/// A command line's first word, upper case (its command name).
fn first_word(line: &str) -> String {
    let split = crate::template::split_args(line, "--command").ok();
    let first = split.as_ref().and_then(|a| a.first());
    match first {
        Some(w) => String::from_utf8_lossy(w).to_ascii_uppercase(),
        None => line
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase(),
    }
}

/// memtier's echo of the words that shape the workload, in its own spellings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Echo {
    /// `"1:10"`.
    pub ratio: String,
    /// `"R:R"`.
    pub key_pattern: String,
    /// `--data-size` (32).
    pub data_size: u64,
    /// `"MIN:MAX"` or `"0:0"`.
    pub data_size_range: String,
    /// `--data-size-list` as given, or empty.
    pub data_size_list: String,
    /// `--data-size-pattern`: `"R"` or `"S"`.
    pub data_size_pattern: String,
    /// `--expiry-range` as `"MIN:MAX"`, or `"0:0"`.
    pub expiry_range: String,
    /// `--random-data`.
    pub random_data: bool,
    /// `--key-prefix`.
    pub key_prefix: String,
    /// `--key-minimum`, `--key-maximum`.
    pub key_minimum: u64,
    pub key_maximum: u64,
    /// `--key-stddev`, `--key-median`, `--key-zipf-exp` (0 when not given).
    pub key_stddev: f64,
    pub key_median: f64,
    pub key_zipf_exp: f64,
    /// `--wait-ratio` as `"SETS:WAITS"`, or `"0:0"`.
    pub wait_ratio: String,
    /// `--num-slaves` as `"MIN:MAX"` (memtier echoes it with a colon), or `"0:0"`.
    pub num_slaves: String,
    /// `--wait-timeout` as `"MIN-MAX"`, or `"0-0"`.
    pub wait_timeout: String,
    /// `--multi-key-get` (0 when not given).
    pub multi_key_get: u32,
}
