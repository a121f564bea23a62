//! What a calibration measures: the experiment it derives from (an experiment file's
//! workload, or a workload given as bench flags), the server, and the plan of A/A
//! experiments that fits the wall-time budget.
//!
//! A workload given as flags becomes a typed [`Experiment`] here directly, validated by
//! the same checks as an experiment file's; its definition is also written out as an
//! experiment file, which is what the store keeps with every trial (so a stored
//! calibration experiment reads like any other).

use super::{CalibrateError, Step, MIN_ROUNDS, VARIANTS};
use crate::model::Connect;
use crate::{Experiment, Order, Overrides, ServerSource, TrialBudget, Variant, Workload};
use resplab_workload::flags::{self, Given, TestList};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Seed of the A/A experiments when none is given.
pub const DEFAULT_SEED: u64 = 20241124;

/// The workload of a calibration in the bench vocabulary (`-t`, `--command`, `-c`, …);
/// every field left `None` takes the default of an experiment file.
#[derive(Clone, Debug, Default, PartialEq, clap::Args)]
pub struct WorkloadFlags {
    /// redis-benchmark tests, as `bench -t` (default: set).
    #[arg(short = 't', long, value_name = "TESTS", help_heading = "Workload")]
    pub tests: Option<String>,
    /// A command template, as `bench --command` (repeat for a mix).
    #[arg(long = "command", value_name = "CMD", help_heading = "Workload")]
    pub commands: Vec<String>,
    /// Connections (default 50).
    #[arg(short = 'c', long, value_name = "N", help_heading = "Workload")]
    pub clients: Option<u32>,
    /// Requests in flight per connection (default 1).
    #[arg(short = 'P', long, value_name = "N", help_heading = "Workload")]
    pub pipeline: Option<u32>,
    /// Value size in bytes.
    #[arg(
        short = 'd',
        long = "data-size",
        value_name = "BYTES",
        help_heading = "Workload"
    )]
    pub data_size: Option<u64>,
    /// Random keys from a keyspace of this size.
    #[arg(short = 'r', long, value_name = "N", help_heading = "Workload")]
    pub keyspace: Option<u64>,
    /// Load-generator threads (default 2 where the machine has 2 CPUs or more, so that
    /// the generator stays under its CPU limit; 1 otherwise).
    #[arg(long, value_name = "N", help_heading = "Workload")]
    pub threads: Option<u32>,
    /// SET:GET ratio of a memtier-style mix.
    #[arg(long, value_name = "SET:GET", help_heading = "Workload")]
    pub ratio: Option<String>,
    /// Key pattern of a memtier-style mix (S:R, G:G, ...).
    #[arg(
        long = "key-pattern",
        value_name = "PATTERN",
        help_heading = "Workload"
    )]
    pub key_pattern: Option<String>,
    /// Open-loop rate in requests per second (closed loop without it).
    #[arg(long, value_name = "PER_SEC", help_heading = "Workload")]
    pub rate: Option<f64>,
}

impl WorkloadFlags {
    /// The flags that were given, by their names on the command line.
    pub fn given(&self) -> Vec<&'static str> {
        [
            ("-t/--tests", self.tests.is_some()),
            ("--command", !self.commands.is_empty()),
            ("-c/--clients", self.clients.is_some()),
            ("-P/--pipeline", self.pipeline.is_some()),
            ("-d/--data-size", self.data_size.is_some()),
            ("-r/--keyspace", self.keyspace.is_some()),
            ("--threads", self.threads.is_some()),
            ("--ratio", self.ratio.is_some()),
            ("--key-pattern", self.key_pattern.is_some()),
            ("--rate", self.rate.is_some()),
        ]
        .into_iter()
        .filter_map(|(f, set)| set.then_some(f))
        .collect()
    }
}

/// Where the workload and the server of a calibration come from, as given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// `--experiment FILE` and `--workload NAME`.
    pub experiment: Option<(PathBuf, String)>,
    pub flags: WorkloadFlags,
    /// `--server CMD`: a server command started fresh for every trial.
    pub server: Option<String>,
    /// `--address HOST:PORT`: a server that is already running.
    pub address: Option<String>,
    /// How to connect to `address`: TLS, an ACL user, the environment variable that
    /// holds the password (never the password itself).
    pub connect: Connect,
    pub warmup: Option<Duration>,
    pub metric: Option<String>,
    pub seed: Option<u64>,
    /// The trial lengths to measure (sorted, no duplicates) and the wall-time budget.
    pub durations: Vec<Duration>,
    pub budget: Duration,
    pub target_mde_pct: f64,
    /// `--method duet`: the A/A rounds run as duets, both copies at once on two CPU
    /// sets; any other method measures interleaved rounds.
    pub duet: bool,
}

/// A calibration ready to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Setup {
    /// The experiment the A/A experiments derive from, and the index of its workload.
    pub base: Experiment,
    pub workload: usize,
    /// Its definition as an experiment file (stored with every trial).
    pub text: String,
    /// What is measured, in words: the server command, address or cluster.
    pub target: String,
    /// One A/A experiment per trial length that fits the budget.
    pub steps: Vec<Step>,
    pub target_mde_pct: f64,
    /// The wall-time budget: a hard limit counted from `started`; the A/A experiment
    /// under way when it is reached is stopped.
    pub budget: Duration,
    /// When the calibration began (before the set-up was resolved).
    pub started: Instant,
}

/// Resolves what a calibration measures and plans its A/A experiments.
///
/// # Errors
/// A flag that cannot be used (named in the message), an experiment file that does not
/// resolve, a workload that cannot be calibrated, a budget too short.
pub fn prepare(o: &Options) -> Result<Setup, CalibrateError> {
    let started = Instant::now();
    let (mut base, text, workload) = base_experiment(o)?;
    if let Some(w) = o.warmup {
        base.warmup = w;
    }
    if let Some(m) = &o.metric {
        base.primary_metric = m.clone();
    }
    if o.duet {
        as_duet(&mut base, workload)?;
    }
    let target = target_text(&base)?;
    let steps = super::plan::steps(&base, &o.durations, o.budget)?;
    Ok(Setup {
        base,
        workload,
        text,
        target,
        steps,
        target_mde_pct: o.target_mde_pct,
        budget: o.budget,
        started,
    })
}

/// Makes the A/A rounds of `base` duets: the baseline's server pinned by the duet (its
/// own CPU settings dropped, the two copies would share them), checked as a duet file
/// is, and this machine's CPUs split in two.
///
/// # Errors
/// [`CalibrateError::Invalid`] naming `--method duet`: a target a duet cannot pin (an
/// address, a cluster), a command workload, or fewer than two CPUs.
fn as_duet(base: &mut Experiment, workload: usize) -> Result<(), CalibrateError> {
    base.order = crate::Order::Duet;
    let mut aa = base.clone();
    let mut a = base.baseline().clone();
    a.server_cpus = None;
    a.client_cpus = None;
    aa.variants = super::VARIANTS
        .iter()
        .map(|n| crate::Variant {
            name: (*n).to_string(),
            ..a.clone()
        })
        .collect();
    aa.workloads = vec![base.workloads[workload].clone()];
    if let Some(v) = base.variants.first_mut() {
        *v = a;
    }
    let allowed = crate::duet::allowed_cpus();
    super::duet_cpus(&allowed)?;
    crate::duet::check(&aa)
        .map_err(|r| invalid(format!("--method duet: {}: {}", r.key, r.message)))?;
    crate::duet::cpu_sets(&aa, &allowed)
        .map(|_| ())
        .map_err(|m| invalid(format!("--method duet: {m}")))
}

fn invalid(m: impl Into<String>) -> CalibrateError {
    CalibrateError::Invalid(m.into())
}

/// The experiment the calibration derives from, its text, and the workload's index.
fn base_experiment(o: &Options) -> Result<(Experiment, String, usize), CalibrateError> {
    let (mut exp, text, name) = if let Some((file, name)) = &o.experiment {
        if let Some(f) = o.flags.given().first() {
            return Err(invalid(format!(
                "{f} cannot be used together with --experiment: the workload comes from the file"
            )));
        }
        let (exp, text) = crate::load(file, &Overrides::default())?;
        (exp, text, name.clone())
    } else {
        let exp = from_flags(&o.flags, o.seed.unwrap_or(DEFAULT_SEED))?;
        let text = definition(&o.flags, o.seed.unwrap_or(DEFAULT_SEED));
        (exp, text, "calibrate".to_string())
    };
    let Some(workload) = exp.workloads.iter().position(|w| w.name == name) else {
        return Err(invalid(format!(
            "--workload: expected one of the workloads of {} ({}), found `{name}`",
            o.experiment
                .as_ref()
                .map_or(String::new(), |(p, _)| p.display().to_string()),
            exp.workloads
                .iter()
                .map(|w| w.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    if exp.workloads[workload].run.is_some() {
        return Err(invalid(format!(
            "--workload {name}: a command workload (`run = …`) decides its own length, and \
             calibrate needs to set the trial length itself; give a workload in the bench \
             vocabulary, or measure the command's noise with an experiment of two copies of \
             one variant"
        )));
    }
    if !o.connect.is_plain() && o.address.is_none() {
        return Err(invalid(
            "--tls, --cacert, --insecure, --user and a password go with --address (a server that is already running); a server calibrate starts needs none",
        ));
    }
    if let Some(s) = server_source(o)? {
        let base = exp.baseline().clone();
        let connect = if o.address.is_some() {
            o.connect.clone()
        } else {
            base.connect.clone()
        };
        exp.variants = vec![Variant {
            server: s,
            connect,
            ..base
        }];
    }
    Ok((exp, text, workload))
}

/// The server of `--server` or `--address`, if one was given.
fn server_source(o: &Options) -> Result<Option<ServerSource>, CalibrateError> {
    if let Some(cmd) = &o.server {
        let words =
            crate::words::split_words(cmd).map_err(|e| invalid(format!("--server: {e}")))?;
        if words.is_empty() {
            return Err(invalid(
                "--server: expected a command, found an empty string",
            ));
        }
        return Ok(Some(ServerSource::Spawn { command: words }));
    }
    let Some(addr) = &o.address else {
        return Ok(None);
    };
    let (host, port) = addr
        .rsplit_once(':')
        .and_then(|(h, p)| Some((h.trim_matches(['[', ']']), p.parse::<u16>().ok()?)))
        .filter(|(h, p)| !h.is_empty() && *p > 0)
        .ok_or_else(|| {
            invalid(format!(
                "--address: expected HOST:PORT (e.g. 127.0.0.1:6379), found \"{addr}\""
            ))
        })?;
    Ok(Some(ServerSource::Address {
        host: host.to_string(),
        port,
    }))
}

/// The typed experiment of a workload given as flags: two copies of the default server,
/// [`MIN_ROUNDS`] rounds of 1 s trials after 200 ms of warm-up (calibrate sets the
/// lengths and rounds itself). Every value passes the checks of an experiment file.
pub fn from_flags(f: &WorkloadFlags, seed: u64) -> Result<Experiment, CalibrateError> {
    let workload = flags_workload(f)?;
    let server = ServerSource::Spawn {
        command: crate::words::split_words(crate::resolve::DEFAULT_SERVER)
            .map_err(|e| invalid(format!("the default server: {e}")))?,
    };
    let variant = |name: &str| Variant::plain(name, server.clone());
    Ok(Experiment {
        name: "calibrate".into(),
        rounds: MIN_ROUNDS,
        warmup: Duration::from_millis(200),
        order: Order::Rmit,
        seed,
        primary_metric: "ops_per_sec".into(),
        margin: None,
        max_reruns: 2,
        client_cpu_limit: 0.8,
        send_lag_limit: Duration::from_millis(10),
        ready_timeout: Duration::from_secs(10),
        cluster_wait: resplab_engine::DEFAULT_CLUSTER_WAIT,
        progress_commands: false,
        variants: VARIANTS.iter().map(|n| variant(n)).collect(),
        workloads: vec![workload],
        shared_server: None,
        before_phase: None,
        generators: Vec::new(),
        until_decided: None,
        perf: None,
        profile: None,
    })
}

/// Load-generator threads when `--threads` is not given: two where the machine has two
/// CPUs or more. With one thread, a closed loop against a local server keeps the
/// generator's thread about as busy as the server's (82–96 % of its core was measured
/// on a 2-vCPU machine), above the client CPU limit of 80 %, so most trials were
/// invalid; two threads halve that share of the CPUs they may use.
pub fn default_threads() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(2) as u32)
}

/// The workload of the flags, checked as an experiment file's `[[workload]]` is.
fn flags_workload(f: &WorkloadFlags) -> Result<Workload, CalibrateError> {
    let check = |flag: &str, r: Result<(), String>| r.map_err(|m| invalid(format!("{flag}: {m}")));
    let mut tests = Vec::new();
    if f.commands.is_empty() && f.ratio.is_none() && f.key_pattern.is_none() {
        let t = f.tests.as_deref().unwrap_or("set");
        check("-t/--tests", crate::workload::check_tests(t))?;
        tests = t
            .split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect();
    }
    let commands = f
        .commands
        .iter()
        .map(|c| Given::parse(c, flags::parse_command))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(format!("--command: {e}")))?;
    let ratio = given("--ratio", &f.ratio, flags::parse_ratio)?;
    let key_pattern = given("--key-pattern", &f.key_pattern, flags::parse_key_patterns)?;
    for (flag, v) in [("-c/--clients", f.clients), ("-P/--pipeline", f.pipeline)] {
        if v == Some(0) {
            return Err(invalid(format!("{flag}: expected at least 1, found 0")));
        }
    }
    if f.threads == Some(0) {
        return Err(invalid("--threads: expected at least 1, found 0"));
    }
    if f.keyspace == Some(0) {
        return Err(invalid("-r/--keyspace: expected at least 1 key, found 0"));
    }
    if f.data_size == Some(0) {
        return Err(invalid("-d/--data-size: expected at least 1 byte, found 0"));
    }
    if let Some(r) = f.rate {
        if !(r > 0.0 && r.is_finite()) {
            return Err(invalid(format!(
                "--rate: expected requests per second above 0, found {r}"
            )));
        }
    }
    let tests = if tests.is_empty()
        && f.commands.is_empty()
        && f.ratio.is_none()
        && f.key_pattern.is_none()
    {
        vec!["set".to_string(), "get".to_string()]
    } else {
        tests
    };
    let tests = if tests.is_empty() {
        TestList::default()
    } else {
        TestList::parse(tests).map_err(|e| invalid(format!("-t/--tests: {e}")))?
    };
    Ok(Workload {
        tests,
        commands,
        ratio,
        key_pattern,
        keyspace: f.keyspace,
        data_size: f.data_size,
        pipeline: f.pipeline.unwrap_or(1),
        clients: f.clients.unwrap_or(50),
        threads: f.threads.unwrap_or_else(default_threads),
        rate: f.rate,
        ..Workload::plain("calibrate", TrialBudget::TestTime(Duration::from_secs(1)))
    })
}

/// A flag's words parsed by its parser, the error prefixed with the flag.
fn given<T>(
    flag: &str,
    v: &Option<String>,
    parse: fn(&str) -> Result<T, resplab_workload::WorkloadError>,
) -> Result<Option<Given<T>>, CalibrateError> {
    v.as_deref()
        .map(|t| Given::parse(t, parse).map_err(|e| invalid(format!("{flag}: {e}"))))
        .transpose()
}

/// The experiment file of [`from_flags`], as the store keeps it with every trial.
pub fn definition(f: &WorkloadFlags, seed: u64) -> String {
    let mut w = String::from("[[workload]]\nname = \"calibrate\"\n");
    if !f.commands.is_empty() {
        let list: Vec<String> = f.commands.iter().map(|c| toml_string(c)).collect();
        w.push_str(&format!("command = [{}]\n", list.join(", ")));
    } else if f.ratio.is_none() && f.key_pattern.is_none() {
        w.push_str(&format!(
            "tests = {}\n",
            toml_string(f.tests.as_deref().unwrap_or("set"))
        ));
    }
    for (key, v) in [
        ("ratio", f.ratio.as_deref()),
        ("key_pattern", f.key_pattern.as_deref()),
    ] {
        if let Some(v) = v {
            w.push_str(&format!("{key} = {}\n", toml_string(v)));
        }
    }
    w.push_str(&format!("clients = {}\n", f.clients.unwrap_or(50)));
    w.push_str(&format!("pipeline = {}\n", f.pipeline.unwrap_or(1)));
    w.push_str(&format!(
        "threads = {}\n",
        f.threads.unwrap_or_else(default_threads)
    ));
    for (key, v) in [("data_size", f.data_size), ("keyspace", f.keyspace)] {
        if let Some(v) = v {
            w.push_str(&format!("{key} = {v}\n"));
        }
    }
    if let Some(r) = f.rate {
        w.push_str(&format!("rate = {r}\n"));
    }
    let server = toml_string(crate::resolve::DEFAULT_SERVER);
    format!(
        "[experiment]\nname = \"calibrate\"\nrounds = {MIN_ROUNDS}\ntest_time = \"1s\"\nwarmup = \"200ms\"\nseed = {seed}\nprimary_metric = \"ops_per_sec\"\n\n[[variant]]\nname = \"a\"\nserver = {server}\n\n[[variant]]\nname = \"a-again\"\nserver = {server}\n\n{w}"
    )
}

/// A TOML basic string: quotes, backslashes and control characters escaped.
pub(crate) fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// What the baseline variant measures, in words.
fn target_text(base: &Experiment) -> Result<String, CalibrateError> {
    Ok(match &base.baseline().server {
        ServerSource::Spawn { command } => shell_join(command),
        ServerSource::Address { host, port } => format!("{host}:{port}"),
        ServerSource::Cluster {
            command,
            masters,
            replicas,
        } => format!(
            "a fresh cluster of {masters} masters with {replicas} replicas each: {}",
            shell_join(command)
        ),
        ServerSource::None if base.shared_server.is_some() => {
            let shared = base.shared_server.as_ref();
            format!(
                "[server] {} ({})",
                shell_join(&shared.map_or(Vec::new(), |s| s.command.clone())),
                if shared.is_some_and(|s| s.per_round) {
                    "one per round"
                } else {
                    "one per trial"
                }
            )
        }
        ServerSource::Toggle { .. } | ServerSource::None => {
            return Err(invalid(format!(
                "--experiment: the baseline variant `{}` is a hot toggle or has no server; \
                 calibrate needs a server command or an address (give --server or --address)",
                base.baseline().name
            )))
        }
    })
}

/// Words as a shell would need them: empty or special ones single-quoted.
pub fn shell_join(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,{}@%+".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_back(f: &WorkloadFlags) -> Experiment {
        crate::resolve::parse(
            "(calibrate flags)",
            &definition(f, 7),
            &Overrides::default(),
        )
        .unwrap()
    }

    /// The typed experiment is what the stored definition reads back as, for every
    /// shape of workload the flags can give.
    #[test]
    fn the_typed_experiment_is_its_stored_definition() {
        let cases = [
            WorkloadFlags::default(),
            WorkloadFlags {
                tests: Some("get, lpush".into()),
                clients: Some(4),
                pipeline: Some(16),
                data_size: Some(100),
                keyspace: Some(1000),
                threads: Some(2),
                rate: Some(2500.5),
                ..WorkloadFlags::default()
            },
            WorkloadFlags {
                commands: vec![
                    "SET k:__rand_int__ \"a b\"".into(),
                    "GET k:__rand_int__".into(),
                ],
                ..WorkloadFlags::default()
            },
            WorkloadFlags {
                ratio: Some("1:10".into()),
                key_pattern: Some("R:R".into()),
                ..WorkloadFlags::default()
            },
            WorkloadFlags {
                key_pattern: Some("G:G".into()),
                ..WorkloadFlags::default()
            },
        ];
        for f in cases {
            assert_eq!(from_flags(&f, 7).unwrap(), read_back(&f), "{f:?}");
        }
    }

    #[test]
    fn a_bad_flag_is_named() {
        let bad = |f: WorkloadFlags| from_flags(&f, 1).unwrap_err().to_string();
        let e = bad(WorkloadFlags {
            ratio: Some("x".into()),
            ..WorkloadFlags::default()
        });
        assert!(e.starts_with("--ratio: "), "{e}");
        let e = bad(WorkloadFlags {
            rate: Some(0.0),
            ..WorkloadFlags::default()
        });
        assert_eq!(e, "--rate: expected requests per second above 0, found 0");
        let e = bad(WorkloadFlags {
            clients: Some(0),
            ..WorkloadFlags::default()
        });
        assert_eq!(e, "-c/--clients: expected at least 1, found 0");
    }

    #[test]
    fn words_are_quoted_only_where_a_shell_needs_it() {
        let w = |s: &[&str]| shell_join(&s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(
            w(&["redis-server", "--port", "{port}"]),
            "redis-server --port {port}"
        );
        assert_eq!(w(&["--save", ""]), "--save ''");
        assert_eq!(w(&["it's"]), "'it'\\''s'");
    }
}
