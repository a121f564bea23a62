//! The validated experiment: what [`crate::resolve`] produces from a file and what the
//! planner and runner consume. Nothing here is optional "because the file may not say":
//! defaults are applied during resolution, so the runner never guesses.

use resplab_workload::flags::{Given, KeyPatterns, TestList};
use resplab_workload::memtier::MemtierPlan;
use resplab_workload::redis_benchmark::RbLine;
use resplab_workload::CommandSpec;
use resplab_workload::{Arrivals, Ratio, ValueSize};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How much load one trial runs per test phase.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrialBudget {
    /// A request count per phase.
    Requests(u64),
    /// A measured duration per phase.
    TestTime(#[serde(with = "secs")] Duration),
}

/// The order of trials inside a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Randomized multiple interleaved trials: a fresh seeded shuffle every round.
    Rmit,
    /// Counterbalanced: rounds alternate between file order and its reverse.
    Abba,
    /// File order in every round: biased by design (whatever runs first always runs
    /// first), for checking that an A/A experiment catches an order effect.
    Fixed,
    /// Both variants at once, each server and its generator on its own CPU set, the
    /// sets swapped every round ([`crate::duet`], docs/duet.md).
    Duet,
}

impl Order {
    /// `"rmit"`, `"abba"`, `"fixed"` or `"duet"`.
    pub fn name(self) -> &'static str {
        match self {
            Order::Rmit => "rmit",
            Order::Abba => "abba",
            Order::Fixed => "fixed",
            Order::Duet => "duet",
        }
    }
}

/// Where a variant's server comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ServerSource {
    /// Started fresh for each execution from these words (`{port}`, `{dir}` still to be
    /// substituted).
    Spawn { command: Vec<String> },
    /// Managed elsewhere; only checked with `PING`.
    Address { host: String, port: u16 },
    /// A fresh local Redis Cluster for each execution (`cluster = { masters, replicas }`),
    /// every node started from `command` with the cluster flags added.
    Cluster {
        command: Vec<String>,
        masters: u32,
        replicas: u32,
    },
    /// No server (`server = "none"`): the variant is its environment, working
    /// directory and hooks (a client build, a toolchain); only command workloads run.
    None,
    /// A hot-toggle variant: runs inside the server execution of variant `of`.
    Toggle {
        of: String,
        on: Option<String>,
        off: Option<String>,
        #[serde(with = "secs")]
        guard: Duration,
    },
}

/// Shell hooks of a variant.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Hooks {
    /// Once before the variant's first trial of a run of `resplab experiment`.
    pub setup: Option<String>,
    /// Before each trial, after the server answers and config is applied.
    pub before_trial: Option<String>,
    /// After each trial, before the server stops.
    pub after_trial: Option<String>,
    /// Once when the experiment ends (or is interrupted).
    pub teardown: Option<String>,
    /// Limit for each hook; a hook over it is killed and fails the trial.
    #[serde(with = "secs")]
    pub timeout: Duration,
}

/// One variant, after `[params]` expansion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    pub name: String,
    pub server: ServerSource,
    /// Environment variables for the server and the hooks.
    pub env: Vec<(String, String)>,
    /// `CONFIG SET` pairs applied after the server answers (for toggle variants: at
    /// switch-on, with the previous values restored at switch-off).
    pub config: Vec<(String, String)>,
    pub hooks: Hooks,
    /// `taskset -c` list for the server process.
    pub server_cpus: Option<String>,
    /// `taskset -c` list for the load generator during this variant's trials.
    pub client_cpus: Option<String>,
    /// The `[params]` values this variant was expanded with.
    pub params: Vec<(String, String)>,
    /// How to connect beyond host and port: TLS, an ACL user, the environment variable
    /// that holds the password (never the password itself).
    #[serde(default, skip_serializing_if = "Connect::is_plain")]
    pub connect: Connect,
    /// The wire protocol of resplab's own load against this variant (`protocol = …`):
    /// RESP, or RESPB to the server's RESPB port.
    #[serde(default, skip_serializing_if = "LoadProtocol::is_resp")]
    pub protocol: LoadProtocol,
}

impl Variant {
    /// A variant named `name` on `server`, with nothing else set: no environment,
    /// settings, pinning or parameters, plain connections, hooks that may take 60 s.
    pub fn plain(name: &str, server: ServerSource) -> Variant {
        Variant {
            name: name.to_string(),
            server,
            env: Vec::new(),
            config: Vec::new(),
            hooks: Hooks {
                timeout: Duration::from_secs(60),
                ..Hooks::default()
            },
            server_cpus: None,
            client_cpus: None,
            params: Vec::new(),
            connect: Connect::default(),
            protocol: LoadProtocol::Resp,
        }
    }
}

/// The wire protocol of a variant's load. Control traffic (`PING`, `INFO`, `CONFIG`,
/// preload) always goes over RESP to the server's RESP port; only the measured requests
/// change wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "wire", rename_all = "snake_case")]
pub enum LoadProtocol {
    /// RESP (version 2), to the server's port.
    #[default]
    Resp,
    /// RESPB, the binary encoding (docs/respb.md), to the server's RESPB port: the one
    /// the server command listens on as `{respb_port}` (`port: None`, picked free for
    /// each execution), or `respb_port` of an `address` variant.
    Respb { port: Option<u16> },
}

impl LoadProtocol {
    /// True for RESP, the default.
    pub fn is_resp(&self) -> bool {
        *self == LoadProtocol::Resp
    }

    /// `"resp"` or `"respb"`.
    pub fn name(&self) -> &'static str {
        match self {
            LoadProtocol::Resp => "resp",
            LoadProtocol::Respb { .. } => "respb",
        }
    }
}

/// Connection settings of an `address`/`uri` variant.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connect {
    /// `Some`: connect with TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsConnect>,
    /// ACL user for `AUTH`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Name of the environment variable that holds the password, read when connecting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
}

impl Connect {
    /// No TLS, no user, no password.
    pub fn is_plain(&self) -> bool {
        *self == Connect::default()
    }
}

/// TLS settings of a variant (paths as written, placeholders filled in).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsConnect {
    pub cacert: Option<String>,
    pub cacertdir: Option<String>,
    pub cert: Option<String>,
    pub key: Option<String>,
    pub sni: Option<String>,
    #[serde(default)]
    pub insecure: bool,
}

/// A deterministic data set written before measuring.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Preload {
    pub keys: u64,
    pub value_size: u64,
    pub key_prefix: String,
}

/// One workload, in `resplab bench` vocabulary. The tests, command templates and the
/// memtier words (`ratio`, `key_pattern`, data sizes) are parsed once, when the file is read, by the workload
/// crate's flag parsers; each keeps the words as written ([`Given`]), so the stored
/// definition serializes exactly as the file said it, and the runner reads only the
/// typed values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub name: String,
    /// redis-benchmark test names (`-t`), empty when `commands` is used.
    pub tests: TestList,
    /// `--command` templates, empty when `tests` is used.
    #[serde(deserialize_with = "words::commands")]
    pub commands: Vec<Given<CommandSpec>>,
    /// `--ratio` of a mix.
    #[serde(default, deserialize_with = "words::ratio")]
    pub ratio: Option<Given<Ratio>>,
    /// `S:G` for a mix, one letter for command templates.
    #[serde(default, deserialize_with = "words::key_pattern")]
    pub key_pattern: Option<Given<KeyPatterns>>,
    pub keyspace: Option<u64>,
    pub data_size: Option<u64>,
    /// `--data-size-range` (a [`ValueSize::Range`]).
    #[serde(default, deserialize_with = "words::data_size_range")]
    pub data_size_range: Option<Given<ValueSize>>,
    /// `--data-size-list` (a [`ValueSize::List`]).
    #[serde(default, deserialize_with = "words::data_size_list")]
    pub data_size_list: Option<Given<ValueSize>>,
    pub pipeline: u32,
    pub clients: u32,
    pub threads: u32,
    /// Open-loop rate in requests per second; `None` is closed loop.
    pub rate: Option<f64>,
    /// How open-loop sends are spaced (stored as `"constant"` or `"poisson"`).
    pub arrivals: Arrivals,
    pub budget: TrialBudget,
    pub preload: Option<Preload>,
    /// A command workload (`run = "…"`): the trial runs this command instead of
    /// resplab's own load; the bench fields above are then unused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<CommandRun>,
    /// `memtier = "…"`: a memtier_benchmark line, run by resplab's engine with memtier's
    /// meaning (its workload; `clients`, `threads`, `pipeline`, `rate` and `budget`
    /// above are the line's).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "words::memtier"
    )]
    pub memtier: Option<Given<MemtierPlan>>,
    /// `redis_benchmark = "…"`: a redis-benchmark line, as `memtier` is.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "words::redis_benchmark"
    )]
    pub redis_benchmark: Option<Given<RbLine>>,
}

impl Workload {
    /// A workload named `name` running `budget` per phase, with nothing else set: no
    /// tests, templates or memtier words, one connection of one request on one thread,
    /// closed loop (Poisson arrivals should a rate be set), no preload, not a command.
    pub fn plain(name: &str, budget: TrialBudget) -> Workload {
        Workload {
            name: name.to_string(),
            tests: TestList::default(),
            commands: Vec::new(),
            ratio: None,
            key_pattern: None,
            keyspace: None,
            data_size: None,
            data_size_range: None,
            data_size_list: None,
            pipeline: 1,
            clients: 1,
            threads: 1,
            rate: None,
            arrivals: Arrivals::Poisson,
            budget,
            preload: None,
            run: None,
            memtier: None,
            redis_benchmark: None,
        }
    }
}

/// A command workload: any benchmark program, its output read by `compare`'s importers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommandRun {
    /// The command line as written; `{host}`, `{port}`, `{uri}`, `{dir}`, `{seed}`,
    /// `{round}` and `{variant}` are filled in for each trial.
    pub line: String,
    /// Run with `sh -c` instead of being split into words.
    pub shell: bool,
    /// Limit of one run; a command over it is killed and its trial is invalid.
    #[serde(with = "secs")]
    pub timeout: Duration,
    /// Working directory (placeholders filled in as in `line`); `None`: resplab's own.
    pub cwd: Option<String>,
    /// How to read its standard output; `None`: only its wall and CPU time are kept.
    pub format: Option<OutputFormat>,
}

/// The output formats a command workload may declare (`format = "…"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputFormat {
    /// Detected from the content, as `compare` does.
    Auto,
    RedisBenchmark,
    Memtier,
    Gobench,
    Resplab,
    Numbers,
    Hyperfine,
}

impl OutputFormat {
    /// Every name a file may give, in the order the docs list them.
    pub const NAMES: &'static [&'static str] = &[
        "auto",
        "redis-benchmark",
        "memtier",
        "gobench",
        "resplab",
        "numbers",
        "hyperfine",
    ];

    /// The format of a name from [`OutputFormat::NAMES`].
    pub fn from_name(name: &str) -> Option<OutputFormat> {
        Some(match name {
            "auto" => OutputFormat::Auto,
            "redis-benchmark" => OutputFormat::RedisBenchmark,
            "memtier" => OutputFormat::Memtier,
            "gobench" => OutputFormat::Gobench,
            "resplab" => OutputFormat::Resplab,
            "numbers" => OutputFormat::Numbers,
            "hyperfine" => OutputFormat::Hyperfine,
            _ => return None,
        })
    }
}

/// A whole validated experiment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    pub name: String,
    pub rounds: u32,
    #[serde(with = "secs")]
    pub warmup: Duration,
    pub order: Order,
    pub seed: u64,
    pub primary_metric: String,
    /// Equivalence margin as a fraction (0.02 = ±2 %).
    pub margin: Option<f64>,
    /// How many times a round with an invalid trial is run again.
    pub max_reruns: u32,
    /// A trial is invalid when the load generator used more than this fraction of the
    /// CPUs it may run on.
    pub client_cpu_limit: f64,
    /// Open loop: a trial is invalid when send lag p99.9 exceeds this.
    #[serde(with = "secs")]
    pub send_lag_limit: Duration,
    /// How long a started server may take to answer `PING`.
    #[serde(with = "secs")]
    pub ready_timeout: Duration,
    /// A target that is a Redis Cluster: how long each trial waits for every master to
    /// say `cluster_state:ok` and agree on the slot map before the trial fails.
    #[serde(
        with = "secs",
        default = "default_cluster_wait",
        skip_serializing_if = "is_default_cluster_wait"
    )]
    pub cluster_wait: Duration,
    /// Progress reports carry each command's figures (a live metrics endpoint is
    /// watching); not part of the definition.
    #[serde(skip)]
    pub progress_commands: bool,
    /// Variants, baseline first.
    pub variants: Vec<Variant>,
    pub workloads: Vec<Workload>,
    /// The server shared by variants without one (`[server]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_server: Option<SharedServer>,
    /// Shell command run before each phase (`experiment run --variants`); what it prints
    /// (`uname -a`, the scheduler in use) is stored with the phase's trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_phase: Option<String>,
    /// Load generators (`[[generator]]`); empty: the runner generates the load itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generators: Vec<Generator>,
    /// `until = "decided"`: rounds run until every primary comparison is decided or a
    /// limit is reached ([`crate::sequential`]); `None`: exactly `rounds` rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_decided: Option<UntilDecided>,
    /// The `perf` program that counts a started server's hardware events (`None`: `perf`
    /// on the PATH). A property of this machine, not of the definition: not stored.
    #[serde(skip)]
    pub perf: Option<String>,
    /// `[profile]`: the server's stacks sampled during chosen trials; `None`: no profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Profile>,
}

/// `[profile]`: how and during which trials the server's stacks are sampled
/// (`perf record`, folded per trial, stored with the trial's requests).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// Samples per second.
    pub frequency: u32,
    /// `fp` (frame pointers) or `dwarf`.
    pub call_graph: CallGraph,
    /// Which trials are sampled.
    pub trials: ProfileTrials,
    /// Kernel stacks too, where this machine permits them.
    pub kernel: bool,
    /// The event sampled (`cpu-clock` by default: every kernel has it).
    pub event: String,
    /// The perf program (`None`: `RESPLAB_PERF`, else `perf` on the PATH).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perf: Option<String>,
}

/// How sampled stacks are unwound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallGraph {
    /// Frame pointers (`perf record -g`).
    Fp,
    /// DWARF unwinding (`perf record --call-graph dwarf`).
    Dwarf,
}

/// During which trials the server is sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileTrials {
    /// One extra, uncounted trial per variant and workload after each counted one, so
    /// sampling never perturbs a counted number.
    Extra,
    /// The counted trials themselves.
    Counted,
}

impl ProfileTrials {
    /// The word of the file (`extra`, `counted`).
    pub fn name(self) -> &'static str {
        match self {
            ProfileTrials::Extra => "extra",
            ProfileTrials::Counted => "counted",
        }
    }
}

/// The limits of a run until decided; at least one is set. `rounds` of the experiment
/// is `max_rounds`, or [`UntilDecided::ROUND_CAP`] when only the time is limited.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct UntilDecided {
    /// No round begins after this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rounds: Option<u32>,
    /// No round begins that would end after this much wall time, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_time_sec: Option<f64>,
    /// The stopping rule. Part of the stored plan: an experiment stored before the rule
    /// was a choice reads back as the confidence sequence it was run with.
    #[serde(default = "UntilRule::before_choice")]
    pub rule: UntilRule,
}

/// `until_rule`: how a run until decided judges its looks (defined beside the rules it
/// names, in `resplab_stats::sequential`, so that a stored validation can name it too).
pub use resplab_stats::sequential::UntilRule;

impl UntilDecided {
    /// The number of rounds planned when only `max_time` limits the run.
    pub const ROUND_CAP: u32 = 10_000;

    /// The experiment's `rounds`: `max_rounds`, or the cap.
    pub fn rounds(&self) -> u32 {
        self.max_rounds.unwrap_or(Self::ROUND_CAP)
    }

    /// `max_time` as a duration.
    pub fn max_time(&self) -> Option<Duration> {
        self.max_time_sec.map(Duration::from_secs_f64)
    }
}

/// `[server]`: a server started for the variants with `server = "none"`, which every
/// such variant's command workload targets (`{host}`, `{port}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SharedServer {
    /// Words with `{port}` and `{dir}` still to fill in.
    pub command: Vec<String>,
    /// One server per round (every variant of the round targets it) instead of a fresh
    /// one per trial.
    pub per_round: bool,
}

/// One `[[generator]]` entry: a launcher and the hosts it reaches, one shard per host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Generator {
    /// Launcher words with `{host}`; empty for a local process.
    pub launcher: String,
    pub hosts: Vec<String>,
    /// resplab where it runs; `None`: `resplab` (remote) or this binary (local).
    pub resplab: Option<String>,
    /// How generators reach the server; `None`: as the runner does.
    pub server_host: Option<String>,
    #[serde(with = "secs")]
    pub start_lead: Duration,
}

impl Experiment {
    /// Shards per trial: one per generator host (0 when the runner generates the load).
    pub fn shard_count(&self) -> usize {
        self.generators.iter().map(|g| g.hosts.len()).sum()
    }
}

impl Experiment {
    /// The baseline variant (the first).
    pub fn baseline(&self) -> &Variant {
        &self.variants[0]
    }

    /// The variant index of a name.
    pub fn variant_index(&self, name: &str) -> Option<usize> {
        self.variants.iter().position(|v| v.name == name)
    }

    /// The resolved definition as JSON (what the store keeps and hashes).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// Reads back a definition written by [`Experiment::to_json`] (what `resume` uses).
    ///
    /// # Errors
    /// A message when the stored JSON does not describe an experiment.
    pub fn from_json(value: &serde_json::Value) -> Result<Experiment, String> {
        serde_json::from_value(value.clone())
            .map_err(|e| format!("stored experiment definition does not parse: {e}"))
    }

    /// A fingerprint of the resolved definition: equal for the same experiment.
    pub fn definition_hash(&self) -> String {
        resplab_store::write::fingerprint(self.to_json().to_string().as_bytes())
    }
}

fn default_cluster_wait() -> Duration {
    resplab_engine::DEFAULT_CLUSTER_WAIT
}

/// The default is left out of the stored definition, so experiments stored before the
/// key existed keep their definition hash.
fn is_default_cluster_wait(d: &Duration) -> bool {
    *d == resplab_engine::DEFAULT_CLUSTER_WAIT
}

mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        crate::words::seconds(v)
            .ok_or_else(|| serde::de::Error::custom(format!("expected seconds >= 0, found {v}")))
    }
}

/// Stored workload words read back through the parsers of their flags.
mod words {
    use resplab_workload::flags::{self, Given, KeyPatterns};
    use resplab_workload::{CommandSpec, Ratio, ValueSize};
    use serde::Deserializer;

    pub(super) fn commands<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<Given<CommandSpec>>, D::Error> {
        Given::deserialize_list_with(d, flags::parse_command)
    }
    pub(super) fn ratio<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Given<Ratio>>, D::Error> {
        Given::deserialize_with(d, flags::parse_ratio)
    }
    pub(super) fn key_pattern<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Given<KeyPatterns>>, D::Error> {
        Given::deserialize_with(d, flags::parse_key_patterns)
    }
    pub(super) fn data_size_range<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Given<ValueSize>>, D::Error> {
        Given::deserialize_with(d, flags::parse_data_size_range)
    }
    pub(super) fn memtier<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Given<resplab_workload::memtier::MemtierPlan>>, D::Error> {
        Given::deserialize_with(d, crate::words::memtier_line)
    }
    pub(super) fn redis_benchmark<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Given<resplab_workload::redis_benchmark::RbLine>>, D::Error> {
        Given::deserialize_with(d, crate::words::redis_benchmark_line)
    }
    pub(super) fn data_size_list<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Given<ValueSize>>, D::Error> {
        Given::deserialize_with(d, flags::parse_data_size_list)
    }
}
