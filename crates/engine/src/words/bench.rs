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
/// name, its text unparsed (`None`, `false` or empty: not given).
#[derive(Debug, Clone)]
pub struct BenchWords {
    pub host: Option<String>,
    pub port: Option<String>,
    pub socket: Option<PathBuf>,
    pub uri: Option<String>,
    pub password: Option<String>,
    pub user: Option<String>,
    pub select: Option<String>,
    pub resp: String,
    pub protocol: String,
    pub tls: bool,
    pub cacert: Option<PathBuf>,
    pub cacertdir: Option<PathBuf>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    pub sni: Option<String>,
    pub insecure: bool,
    pub tls_protocols: Option<String>,
    pub tls_ciphersuites: Option<String>,
    pub cluster: bool,
    pub read_from_replicas: bool,
    /// `--server-bin`: only checked here (it cannot go with a target).
    pub server_bin: Option<PathBuf>,
    pub requests: Option<String>,
    pub test_time: Option<String>,
    pub warmup: String,
    pub clients: String,
    pub pipeline: String,
    pub threads: String,
    pub rate: Option<String>,
    pub arrivals: String,
    pub seed: Option<String>,
    pub tests: Option<String>,
    pub random_keys: Option<String>,
    pub data_size: Option<String>,
    pub ratio: Option<String>,
    pub key_pattern: Option<String>,
    pub key_minimum: Option<String>,
    pub key_maximum: Option<String>,
    pub key_prefix: Option<String>,
    pub key_median: Option<String>,
    pub key_stddev: Option<String>,
    pub key_zipf_exp: Option<String>,
    pub data_size_range: Option<String>,
    pub data_size_list: Option<String>,
    pub commands: Vec<String>,
    pub command_ratios: Vec<String>,
    pub command_key_patterns: Vec<String>,
    pub shard: Option<String>,
    pub per_shard: bool,
    pub start_at: Option<String>,
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

impl BenchWords {
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
