//! All the words of one load run together (`resplab bench`'s flags, as given) and the
//! one function that turns them into what the run needs: the engine's [`RunConfig`]
//! (target, credentials, TLS, load, shard and seed) and the [`WorkloadSpec`].

use super::connect::resolve_connection;
use super::load::{resolve_load, resolve_start};
use super::workload::{resolve_workload, spec_from_base64};
use super::WordsError;
use crate::{RunConfig, Target};
use resplab_results::ShardInfo;
use resplab_workload::WorkloadSpec;
use std::path::PathBuf;
use std::time::Duration;

/// The words of one load run as the user gave them: each field is the flag of the same
/// name, its text unparsed (`None`, `false` or empty: not given). The default gives
/// none of them, not the command line's defaults.
#[derive(Debug, Clone, Default)]
pub struct BenchWords {
    /// `-h/--host`.
    pub host: Option<String>,
    /// `-p/--port`.
    pub port: Option<String>,
    /// `-s/--socket`.
    pub socket: Option<PathBuf>,
    /// `-u/--uri`.
    pub uri: Option<String>,
    /// `-a/--password`.
    pub password: Option<String>,
    /// `--user`.
    pub user: Option<String>,
    /// `--select`.
    pub select: Option<String>,
    /// `--resp`.
    pub resp: String,
    /// `--protocol`.
    pub protocol: String,
    /// `--tls`.
    pub tls: bool,
    /// `--cacert`.
    pub cacert: Option<PathBuf>,
    /// `--cacertdir`.
    pub cacertdir: Option<PathBuf>,
    /// `--cert`.
    pub cert: Option<PathBuf>,
    /// `--key`.
    pub key: Option<PathBuf>,
    /// `--sni`.
    pub sni: Option<String>,
    /// `--insecure`.
    pub insecure: bool,
    /// `--tls-protocols`.
    pub tls_protocols: Option<String>,
    /// `--tls-ciphersuites`.
    pub tls_ciphersuites: Option<String>,
    /// `--cluster`.
    pub cluster: bool,
    /// `--read-from-replicas`.
    pub read_from_replicas: bool,
    /// `--server-bin`: only checked here (it cannot go with a target).
    pub server_bin: Option<PathBuf>,
    /// `-n/--requests`.
    pub requests: Option<String>,
    /// `--test-time`.
    pub test_time: Option<String>,
    /// `--warmup`.
    pub warmup: String,
    /// `-c/--clients`.
    pub clients: String,
    /// `-P/--pipeline`.
    pub pipeline: String,
    /// `--threads`.
    pub threads: String,
    /// `--reconnect-every`.
    pub reconnect_every: Option<String>,
    /// `--rate`.
    pub rate: Option<String>,
    /// `--arrivals`.
    pub arrivals: String,
    /// `--seed`.
    pub seed: Option<String>,
    /// `-t/--tests`.
    pub tests: Option<String>,
    /// `-r/--random-keys`.
    pub random_keys: Option<String>,
    /// `-d/--data-size`.
    pub data_size: Option<String>,
    /// `--ratio`.
    pub ratio: Option<String>,
    /// `--key-pattern`.
    pub key_pattern: Option<String>,
    /// `--key-minimum`.
    pub key_minimum: Option<String>,
    /// `--key-maximum`.
    pub key_maximum: Option<String>,
    /// `--key-prefix`.
    pub key_prefix: Option<String>,
    /// `--key-median`.
    pub key_median: Option<String>,
    /// `--key-stddev`.
    pub key_stddev: Option<String>,
    /// `--key-zipf-exp`.
    pub key_zipf_exp: Option<String>,
    /// `--data-size-range`.
    pub data_size_range: Option<String>,
    /// `--data-size-list`.
    pub data_size_list: Option<String>,
    /// `--command (each)`.
    pub commands: Vec<String>,
    /// `--command-ratio (each)`.
    pub command_ratios: Vec<String>,
    /// `--command-key-pattern (each)`.
    pub command_key_patterns: Vec<String>,
    /// `--shard`.
    pub shard: Option<String>,
    /// `--per-shard`.
    pub per_shard: bool,
    /// `--start-at`.
    pub start_at: Option<String>,
    /// `--workload-spec`.
    pub workload_spec: Option<String>,
}

/// A load run's words, validated.
#[derive(Debug)]
pub struct BenchPlan {
    /// `None`: no target was given (the caller starts a throwaway server).
    pub target: Option<Target>,
    pub config: RunConfig,
    pub spec: WorkloadSpec,
    /// `--shard`: this generator's place among N, and the flags as given.
    pub shard: Option<ShardInfo>,
}

impl BenchPlan {
    /// The plan's workload, restricted to this generator's shard if any.
    ///
    /// # Errors
    /// A workload the generator cannot run (or split into this shard).
    pub fn workload(&self) -> Result<resplab_workload::Workload, resplab_workload::WorkloadError> {
        let workload = resplab_workload::Workload::new(&self.spec)?;
        match &self.shard {
            Some(s) => workload.with_shard(u64::from(s.index), u64::from(s.count)),
            None => Ok(workload),
        }
    }
}

impl BenchWords {
    /// The first workload word given, as its flag (`--tests`, `--ratio`, …), if any.
    pub fn first_workload_flag(&self) -> Option<&'static str> {
        [
            ("--tests", self.tests.is_some()),
            ("--random-keys", self.random_keys.is_some()),
            ("--data-size", self.data_size.is_some()),
            ("--ratio", self.ratio.is_some()),
            ("--key-pattern", self.key_pattern.is_some()),
            ("--key-minimum", self.key_minimum.is_some()),
            ("--key-maximum", self.key_maximum.is_some()),
            ("--key-prefix", self.key_prefix.is_some()),
            ("--key-median", self.key_median.is_some()),
            ("--key-stddev", self.key_stddev.is_some()),
            ("--key-zipf-exp", self.key_zipf_exp.is_some()),
            ("--data-size-range", self.data_size_range.is_some()),
            ("--data-size-list", self.data_size_list.is_some()),
            ("--command", !self.commands.is_empty()),
            ("--command-ratio", !self.command_ratios.is_empty()),
            (
                "--command-key-pattern",
                !self.command_key_patterns.is_empty(),
            ),
        ]
        .into_iter()
        .find_map(|(flag, given)| given.then_some(flag))
    }

    /// Resolves the words into a validated configuration and workload.
    ///
    /// # Errors
    /// A [`WordsError`] naming the flag, the value and what was expected.
    pub fn resolve(&self) -> Result<BenchPlan, WordsError> {
        let a = self;
        let conn = resolve_connection(a)?;
        let mut load = resolve_load(a)?;
        let start = resolve_start(a, &mut load)?;
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
        config.renew = load.renew;
        config.seed = start.seed;
        config.start_at = start
            .start_at_ms
            .map(|ms| std::time::UNIX_EPOCH + Duration::from_micros((ms.max(0.0) * 1e3) as u64));
        config.series_histograms = start.shard.is_some();
        config.cluster = a.cluster || a.read_from_replicas;
        config.read_from_replicas = a.read_from_replicas;
        config.validate()?;
        Ok(BenchPlan {
            target: conn.target,
            config,
            spec,
            shard: start.shard,
        })
    }
}
