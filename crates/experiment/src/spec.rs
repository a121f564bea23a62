//! The raw shape of `experiment.toml`, exactly as written.
//!
//! These types mirror the file one key per field and refuse unknown keys; they hold the
//! values as the user wrote them (durations as `"5s"` or a number of seconds, test lists
//! as `"set,get"`), wrapped in [`Spanned`] where a later check needs to point back at the
//! line. [`crate::resolve`] turns them into the validated [`crate::Experiment`]. Every key
//! is documented in `docs/experiment.md` and in the annotated files under `examples/`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Spanned;

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSpec {
    pub experiment: ExperimentSpec,
    #[serde(default, rename = "variant")]
    pub variants: Vec<VariantSpec>,
    #[serde(default, rename = "workload")]
    pub workloads: Vec<WorkloadSpecToml>,
    /// Load generators: every trial runs one shard on each host of each entry.
    #[serde(default, rename = "generator")]
    pub generators: Vec<GeneratorSpec>,
    /// A server shared by the variants without one (`server = "none"`).
    #[serde(default)]
    pub server: Option<SharedServerSpec>,
    /// Parameter matrix: name → values, substituted as `{name}` into variants.
    #[serde(default)]
    pub params: BTreeMap<String, Spanned<Vec<toml::Value>>>,
    /// Sampled stacks of the server during chosen trials.
    #[serde(default)]
    pub profile: Option<Spanned<ProfileSpec>>,
}

/// `[profile]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileSpec {
    /// Samples per second (default 499).
    pub frequency: Option<Spanned<u32>>,
    /// `"fp"` (default) or `"dwarf"`.
    pub call_graph: Option<Spanned<String>>,
    /// `"extra"` (default: one uncounted trial per variant per round) or `"counted"`.
    pub trials: Option<Spanned<String>>,
    /// Kernel stacks too (default true), where permitted.
    pub kernel: Option<bool>,
    /// The perf event sampled (default `cpu-clock`).
    pub event: Option<Spanned<String>>,
    /// The perf program (default `perf` on the PATH).
    pub perf: Option<Spanned<String>>,
}

/// `[server]`: one server that every variant with `server = "none"` targets.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedServerSpec {
    /// The command (with `{port}`, `{dir}`); default: redis-server without persistence.
    pub command: Option<Spanned<String>>,
    /// `"trial"` (default): a fresh server for each trial; `"round"`: one per round.
    pub per: Option<Spanned<String>>,
}

/// A duration: a number of seconds or a string such as `"500ms"`, `"5s"`, `"2m"`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum DurationValue {
    Seconds(f64),
    Text(String),
}

/// `[[generator]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorSpec {
    /// Command that runs a program on `{host}` (`"ssh {host}"`, `"kubectl exec {host} --"`,
    /// `"docker exec {host}"`), or `""` for a local process.
    pub launcher: Option<Spanned<String>>,
    /// Hosts (or pods, containers; labels for a local launcher), one shard each.
    pub hosts: Spanned<Vec<String>>,
    /// Path of resplab where it runs (default: `resplab`, or this binary when local).
    pub resplab: Option<Spanned<String>>,
    /// Host name or address the generators use to reach the server (default: the one
    /// the runner uses).
    pub server_host: Option<Spanned<String>>,
    /// How far ahead of now the shards' common start is set (default 3 s): long enough for
    /// every launcher to start resplab and connect.
    pub start_lead: Option<Spanned<DurationValue>>,
}

/// `[experiment]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    pub name: Spanned<String>,
    pub rounds: Option<Spanned<u32>>,
    pub test_time: Option<Spanned<DurationValue>>,
    pub requests: Option<Spanned<u64>>,
    pub warmup: Option<Spanned<DurationValue>>,
    pub order: Option<Spanned<String>>,
    pub seed: Option<u64>,
    pub primary_metric: Option<Spanned<String>>,
    pub margin: Option<Spanned<f64>>,
    /// `"rounds"` (the default: exactly `rounds`) or `"decided"`.
    pub until: Option<Spanned<String>>,
    /// Limits of `until = "decided"`.
    pub max_rounds: Option<Spanned<u32>>,
    pub max_time: Option<Spanned<DurationValue>>,
    /// The stopping rule of `until = "decided"`: `"spending"`, `"spending-pocock"` or
    /// `"anytime"`.
    pub until_rule: Option<Spanned<String>>,
    pub max_reruns: Option<u32>,
    pub client_cpu_limit: Option<Spanned<f64>>,
    pub send_lag_limit: Option<Spanned<DurationValue>>,
    pub ready_timeout: Option<Spanned<DurationValue>>,
    /// How long a trial against a Redis Cluster waits for it to be ready.
    pub cluster_wait: Option<Spanned<DurationValue>>,
    pub baseline: Option<Spanned<String>>,
    /// Shell command run before each phase; its output is stored with the phase.
    pub before_phase: Option<String>,
}

/// `[variant.hooks]`: shell commands around the variant's trials.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HooksSpec {
    pub setup: Option<String>,
    pub before_trial: Option<String>,
    pub after_trial: Option<String>,
    pub teardown: Option<String>,
    pub timeout: Option<DurationValue>,
}

/// `[[variant]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    pub name: Spanned<String>,
    pub server: Option<Spanned<String>>,
    pub address: Option<Spanned<String>>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub config: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    pub hooks: HooksSpec,
    pub server_cpus: Option<Spanned<String>>,
    pub client_cpus: Option<Spanned<String>>,
    pub toggle_of: Option<Spanned<String>>,
    pub toggle_on: Option<String>,
    pub toggle_off: Option<String>,
    pub guard: Option<Spanned<DurationValue>>,
    /// `redis://[user@]host:port` or `rediss://…` (TLS), instead of `address`.
    pub uri: Option<Spanned<String>>,
    /// Connect with TLS (implied by `rediss://`).
    pub tls: Option<Spanned<bool>>,
    pub cacert: Option<Spanned<String>>,
    pub cacertdir: Option<Spanned<String>>,
    pub cert: Option<Spanned<String>>,
    pub key: Option<Spanned<String>>,
    pub sni: Option<Spanned<String>>,
    pub insecure: Option<Spanned<bool>>,
    /// ACL user.
    pub user: Option<Spanned<String>>,
    /// The environment variable holding the password.
    pub password_env: Option<Spanned<String>>,
    /// A fresh local cluster per execution, from `server`.
    pub cluster: Option<Spanned<ClusterSpec>>,
    /// The wire protocol of the load: `"resp"` (default) or `"respb"`.
    pub protocol: Option<Spanned<String>>,
    /// The RESPB port of an `address`/`uri` variant with `protocol = "respb"`.
    pub respb_port: Option<Spanned<u16>>,
}

/// `cluster = { masters = 3, replicas = 1 }`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    pub masters: u32,
    #[serde(default)]
    pub replicas: u32,
}

/// `[workload.preload]`: a deterministic data set written before measuring.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PreloadSpec {
    /// Number of keys, written as `{key_prefix}{index:012}` for index `0..keys`.
    pub keys: u64,
    /// Bytes per value.
    pub value_size: Option<u64>,
    pub key_prefix: Option<String>,
}

/// `[[workload]]`: the `resplab bench` vocabulary.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpecToml {
    pub name: Spanned<String>,
    pub tests: Option<Spanned<StringOrList>>,
    pub command: Option<Spanned<StringOrList>>,
    pub ratio: Option<Spanned<String>>,
    pub key_pattern: Option<Spanned<String>>,
    pub keyspace: Option<Spanned<u64>>,
    pub data_size: Option<Spanned<u64>>,
    pub data_size_range: Option<Spanned<String>>,
    pub data_size_list: Option<Spanned<String>>,
    pub pipeline: Option<Spanned<u32>>,
    pub clients: Option<Spanned<u32>>,
    pub threads: Option<Spanned<u32>>,
    pub rate: Option<Spanned<f64>>,
    pub arrivals: Option<Spanned<String>>,
    pub test_time: Option<Spanned<DurationValue>>,
    pub requests: Option<Spanned<u64>>,
    pub preload: Option<PreloadSpec>,
    /// A memtier_benchmark line with memtier's meaning, run by resplab's engine.
    pub memtier: Option<Spanned<String>>,
    /// A redis-benchmark line with redis-benchmark's meaning, run by resplab's engine.
    pub redis_benchmark: Option<Spanned<String>>,
    /// A command line to run instead of the bench vocabulary (a command workload).
    pub run: Option<Spanned<String>>,
    /// Run `run` with `sh -c` (default: split into words, no shell).
    pub shell: Option<Spanned<bool>>,
    /// Limit of one run of `run` (default 10 minutes).
    pub timeout: Option<Spanned<DurationValue>>,
    /// Working directory of `run`.
    pub cwd: Option<Spanned<String>>,
    /// How to read the output of `run`: `auto`, `redis-benchmark`, `memtier`, `gobench`,
    /// `resplab`, `numbers`; absent: only wall and CPU time.
    pub format: Option<Spanned<String>>,
}

impl WorkloadSpecToml {
    /// Each key that says what load to send (the bench vocabulary, a tool's line) or
    /// how to run a command, with where it was given (`None`: absent), in the order a
    /// refusal names the first one given.
    pub fn key_spans(&self) -> Vec<(&'static str, Option<std::ops::Range<usize>>)> {
        fn at<T>(v: &Option<Spanned<T>>) -> Option<std::ops::Range<usize>> {
            v.as_ref().map(Spanned::span)
        }
        vec![
            ("tests", at(&self.tests)),
            ("command", at(&self.command)),
            ("memtier", at(&self.memtier)),
            ("redis_benchmark", at(&self.redis_benchmark)),
            ("ratio", at(&self.ratio)),
            ("key_pattern", at(&self.key_pattern)),
            ("keyspace", at(&self.keyspace)),
            ("data_size", at(&self.data_size)),
            ("data_size_range", at(&self.data_size_range)),
            ("data_size_list", at(&self.data_size_list)),
            ("pipeline", at(&self.pipeline)),
            ("clients", at(&self.clients)),
            ("threads", at(&self.threads)),
            ("rate", at(&self.rate)),
            ("arrivals", at(&self.arrivals)),
            ("test_time", at(&self.test_time)),
            ("requests", at(&self.requests)),
            ("run", at(&self.run)),
            ("shell", at(&self.shell)),
            ("timeout", at(&self.timeout)),
            ("cwd", at(&self.cwd)),
            ("format", at(&self.format)),
        ]
    }
}

/// `"set,get"` or `["set", "get"]`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum StringOrList {
    One(String),
    Many(Vec<String>),
}

impl StringOrList {
    /// The items, a single string split on commas for test lists.
    pub fn items(&self) -> Vec<String> {
        match self {
            StringOrList::One(s) => vec![s.clone()],
            StringOrList::Many(v) => v.clone(),
        }
    }
}
