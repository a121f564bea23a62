//! [`WorkloadSpec`]: the resolved, serializable description of what a run sends.
//!
//! The CLI turns flags (or an experiment file) into one `WorkloadSpec`; the engine
//! compiles it with [`crate::Workload::new`]; the result file stores it verbatim as part
//! of the resolved configuration, so a run can be repeated from its record. The spec is
//! plain data with public fields and serde derives; all checking happens in
//! [`WorkloadSpec::validate`], which `Workload::new` calls.
//!
//! Three kinds of workload exist, mirroring the tools people already use:
//!
//! - [`TestsSpec`]: redis-benchmark's catalog (`-t`, `-r`, `-d`), one phase per test.
//! - [`MixSpec`]: memtier_benchmark's SET:GET mix (`--ratio`, `--key-pattern`, …),
//!   one phase.
//! - [`CommandsSpec`]: arbitrary command templates (`--command`, `--command-ratio`,
//!   `--command-key-pattern`), one phase.
//!
//! [`WorkloadSpec::default`] is redis-benchmark with no flags: the default test list,
//! no `-r`, 3-byte payload, seed 0.

use crate::catalog::TestName;
use crate::error::WorkloadError;
use crate::keys::{KeyPattern, KeySpace};
use crate::template;
use crate::values::ValueSize;
use serde::{Deserialize, Serialize};

/// Longest ratio cycle (sum of a mix's or command list's ratio numbers) accepted; the
/// cycle is stored as a table, one entry per request of a cycle.
pub const MAX_RATIO_CYCLE: u64 = 1_000_000;

/// Everything needed to generate a run's requests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSpec {
    /// The master seed; every random stream of the run is derived from it.
    pub seed: u64,
    /// What to send.
    pub kind: WorkloadKind,
    /// Commands sent once, unmeasured, before the first phase (for example
    /// `"DEL mylist"`), in template syntax. Empty by default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup_commands: Vec<String>,
}

/// The three kinds of workload.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WorkloadKind {
    /// redis-benchmark's test catalog: one phase per test, run in order.
    Tests(TestsSpec),
    /// A memtier-style SET:GET mix: one phase.
    Mix(MixSpec),
    /// Arbitrary command templates: one phase.
    Commands(CommandsSpec),
}

/// redis-benchmark-style tests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestsSpec {
    /// The tests, run in this order (see [`crate::catalog::parse_tests`] for the order
    /// redis-benchmark uses).
    pub tests: Vec<TestName>,
    /// `-r`: `__rand_int__` becomes a random number below this; `None` leaves the
    /// placeholder as literal text, as redis-benchmark does without `-r`.
    pub random_keyspace: Option<u64>,
    /// `-d`: payload size in bytes (default 3).
    pub data_size: usize,
}

impl Default for TestsSpec {
    fn default() -> Self {
        TestsSpec {
            tests: TestName::default_list(),
            random_keyspace: None,
            data_size: 3,
        }
    }
}

/// A SET:GET ratio, memtier's `--ratio`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ratio {
    /// SETs per cycle.
    pub set: u32,
    /// GETs per cycle.
    pub get: u32,
}

impl Default for Ratio {
    /// memtier's default, 1:10.
    fn default() -> Self {
        Ratio { set: 1, get: 10 }
    }
}

/// A memtier-style SET:GET mix.
///
/// Each stream sends `ratio.set` SETs, then `ratio.get` GETs, and again (memtier's
/// sequence, not a random choice per request).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MixSpec {
    /// SET:GET ratio (default 1:10).
    pub ratio: Ratio,
    /// Key pattern of the SETs (default random).
    pub set_pattern: KeyPattern,
    /// Key pattern of the GETs (default random).
    pub get_pattern: KeyPattern,
    /// Key names and range.
    pub keys: KeySpace,
    /// Value sizes of the SETs (default 32 bytes).
    pub values: ValueSize,
    /// Times to live of the SETs (memtier's `--expiry-range`); `None`: plain SETs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry: Option<ExpiryRange>,
    /// WAIT requests among the SETs (memtier's `--wait-ratio`); `None`: no WAIT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<WaitSpec>,
}

impl Default for MixSpec {
    fn default() -> Self {
        MixSpec {
            ratio: Ratio::default(),
            set_pattern: KeyPattern::Random,
            get_pattern: KeyPattern::Random,
            keys: KeySpace::default(),
            values: ValueSize::default(),
            expiry: None,
            wait: None,
        }
    }
}

/// WAIT requests sent among a mix's SETs, memtier_benchmark's `--wait-ratio SETS:WAITS`
/// with `--num-slaves MIN-MAX` and `--wait-timeout MIN-MAX`.
///
/// Each stream follows memtier's rule, in whole numbers: its first request is a WAIT,
/// and a later request is a WAIT whenever the SETs it has sent divided by the WAITs it
/// has sent exceeds `sets / waits` (both divisions rounded down). With `q = sets /
/// waits` that is one WAIT after every `q + 1` SETs: `--wait-ratio 1:1` sends a WAIT
/// after every second SET, not after each. Every WAIT draws its number of replicas
/// uniformly from `replicas_min..=replicas_max` and its timeout (milliseconds) from a
/// normal distribution centred on the middle of `timeout_ms_min..=timeout_ms_max`
/// with a sixth of the range as standard deviation, redrawn until inside the range
/// (what memtier draws). WAITs count in the request budget, as in memtier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitSpec {
    /// SETs of `--wait-ratio SETS:WAITS`.
    pub sets: u32,
    /// WAITs of `--wait-ratio SETS:WAITS` (at least 1; 0 sends none).
    pub waits: u32,
    /// `--num-slaves`: fewest and most replicas a WAIT asks for.
    pub replicas_min: u64,
    pub replicas_max: u64,
    /// `--wait-timeout`: shortest and longest timeout, milliseconds (0: wait forever).
    pub timeout_ms_min: u64,
    pub timeout_ms_max: u64,
}

impl WaitSpec {
    /// SETs a stream sends between two WAITs (`sets / waits + 1`, in whole numbers).
    pub fn sets_per_wait(&self) -> u64 {
        u64::from(self.sets) / u64::from(self.waits.max(1)) + 1
    }

    /// Checks the ranges.
    ///
    /// # Errors
    /// A ratio with no WAIT, or a range whose minimum is above its maximum.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if self.waits == 0 {
            return Err(WorkloadError::new(
                "--wait-ratio",
                format!("{}:{}", self.sets, self.waits),
                "SETS:WAITS with at least one WAIT, like 10:1",
            ));
        }
        for (flag, lo, hi) in [
            ("--num-slaves", self.replicas_min, self.replicas_max),
            ("--wait-timeout", self.timeout_ms_min, self.timeout_ms_max),
        ] {
            if lo > hi {
                return Err(WorkloadError::new(
                    flag,
                    format!("{lo}-{hi}"),
                    "MIN-MAX with MIN no larger than MAX",
                ));
            }
        }
        Ok(())
    }
}

/// The times to live of a mix's SETs, memtier's `--expiry-range MIN-MAX`: each SET draws
/// a whole number of seconds uniformly from `min_sec..=max_sec` and goes out as
/// `SETEX key seconds value`, or as a plain `SET` when the draw is 0 (what
/// memtier_benchmark sends).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpiryRange {
    /// Shortest time to live, seconds (0 allowed: those SETs carry none).
    pub min_sec: u64,
    /// Longest time to live, seconds (at least 1).
    pub max_sec: u64,
}

impl ExpiryRange {
    /// Checks the range.
    ///
    /// # Errors
    /// `min_sec > max_sec`, or `max_sec` of 0 (no SET would expire).
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if self.min_sec > self.max_sec || self.max_sec == 0 {
            return Err(WorkloadError::new(
                "--expiry-range",
                format!("{}-{}", self.min_sec, self.max_sec),
                "MIN-MAX seconds with MIN no larger than MAX and MAX at least 1, like 10-100",
            ));
        }
        Ok(())
    }
}

/// One command template of a [`CommandsSpec`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandSpec {
    /// The command line with placeholders, e.g. `HSET __key__ f __data__`.
    pub template: String,
    /// How many of this command per cycle (`--command-ratio`, default 1).
    pub ratio: u32,
    /// How `__key__` is chosen (`--command-key-pattern`, default random).
    pub key_pattern: KeyPattern,
    /// Each request of this command is one of these lines instead of `template`
    /// (memtier's `__monitor_line@__`); `None`: the template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Replay>,
    /// `Some(max)`: the command follows the cursor of its replies, memtier's
    /// `--scan-incremental-iteration` (see `crate::cursor`), starting again after
    /// `max` continuations (0: when the cursor is 0). Its results go to two rows,
    /// `NAME 0` and `NAME <cursor>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow_cursor: Option<u64>,
}

impl CommandSpec {
    /// A template with ratio 1 and the random key pattern.
    pub fn new(template: impl Into<String>) -> Self {
        CommandSpec {
            template: template.into(),
            ratio: 1,
            key_pattern: KeyPattern::Random,
            replay: None,
            follow_cursor: None,
        }
    }
}

/// Command lines one command slot sends in turn or at random, memtier's
/// `__monitor_line@__` over the commands of a `--monitor-input` file.
///
/// In turn, the lines are taken one after the other by every stream of the workload
/// together (one shared position, as memtier's single counter for all its clients);
/// at random, each request draws a line from its stream's random sequence. Results are
/// kept per command name of the line (its first word, upper case), so the server's
/// commands and the report's rows agree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replay {
    /// The command lines, in template syntax (at least one).
    pub lines: Vec<String>,
    /// Random choice (`--monitor-pattern R`) rather than in turn (`S`).
    pub random: bool,
}

/// Arbitrary commands, memtier's `--command`.
///
/// Each stream sends the first command `ratio` times, then the second, and so on,
/// cycling; a command with ratio 0 is never sent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommandsSpec {
    /// The commands, at least one.
    pub commands: Vec<CommandSpec>,
    /// Key names and range for `__key__`.
    pub keys: KeySpace,
    /// Value sizes for `__data__`.
    pub values: ValueSize,
    /// Range of `__rand_int__` (`-r`); `None` leaves it literal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_keyspace: Option<u64>,
}

impl Default for WorkloadSpec {
    /// redis-benchmark's defaults: the default test list, no `-r`, `-d 3`, seed 0.
    fn default() -> Self {
        WorkloadSpec::redis_benchmark_default()
    }
}

impl WorkloadSpec {
    /// redis-benchmark's defaults: the default test list, no `-r`, `-d 3`, seed 0.
    pub fn redis_benchmark_default() -> Self {
        WorkloadSpec {
            seed: 0,
            kind: WorkloadKind::Tests(TestsSpec::default()),
            setup_commands: Vec::new(),
        }
    }

    /// redis-benchmark tests `tests` with the other defaults.
    pub fn tests(tests: Vec<TestName>) -> Self {
        WorkloadSpec {
            seed: 0,
            kind: WorkloadKind::Tests(TestsSpec {
                tests,
                ..TestsSpec::default()
            }),
            setup_commands: Vec::new(),
        }
    }

    /// memtier_benchmark's defaults: SET:GET 1:10, random keys `memtier-0` …
    /// `memtier-10000000`, 32-byte values, seed 0.
    pub fn memtier_default() -> Self {
        WorkloadSpec {
            seed: 0,
            kind: WorkloadKind::Mix(MixSpec::default()),
            setup_commands: Vec::new(),
        }
    }

    /// Checks every field.
    ///
    /// # Errors
    /// The first problem found, naming the flag or field, its value and what was
    /// expected: an empty test or command list, a zero `-r`, a ratio of 0:0 or a cycle
    /// longer than [`MAX_RATIO_CYCLE`], bad key-space or value-size parameters, or a
    /// command template that does not parse.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        match &self.kind {
            WorkloadKind::Tests(t) => {
                if t.tests.is_empty() {
                    return Err(WorkloadError::new(
                        "-t",
                        "",
                        "at least one test name".to_string(),
                    ));
                }
                check_keyspace_len(t.random_keyspace)?;
                ValueSize::Fixed { bytes: t.data_size }
                    .validate()
                    .map_err(|e| WorkloadError {
                        field: "-d".into(),
                        ..e
                    })?;
            }
            WorkloadKind::Mix(m) => {
                if m.ratio.set == 0 && m.ratio.get == 0 {
                    return Err(WorkloadError::new(
                        "--ratio",
                        "0:0",
                        "SET:GET with at least one side above 0, like 1:10",
                    ));
                }
                if u64::from(m.ratio.set) + u64::from(m.ratio.get) > MAX_RATIO_CYCLE {
                    return Err(WorkloadError::new(
                        "--ratio",
                        format!("{}:{}", m.ratio.set, m.ratio.get),
                        format!("SET and GET adding up to at most {MAX_RATIO_CYCLE}"),
                    ));
                }
                m.keys.validate()?;
                m.values.validate()?;
                if let Some(e) = &m.expiry {
                    e.validate()?;
                }
                if let Some(w) = &m.wait {
                    w.validate()?;
                }
            }
            WorkloadKind::Commands(c) => {
                if c.commands.is_empty() {
                    return Err(WorkloadError::new(
                        "--command",
                        "",
                        "at least one command, like \"SET __key__ __data__\"",
                    ));
                }
                for cmd in &c.commands {
                    template::compile(&cmd.template, "--command", false)?;
                    if let Some(r) = &cmd.replay {
                        if r.lines.is_empty() {
                            return Err(WorkloadError::new(
                                "--command",
                                &cmd.template,
                                "at least one command line to replay",
                            ));
                        }
                        for line in &r.lines {
                            template::compile(line, "--command", false)?;
                        }
                    }
                }
                let total: u64 = c.commands.iter().map(|c| u64::from(c.ratio)).sum();
                if total == 0 || total > MAX_RATIO_CYCLE {
                    let ratios: Vec<String> =
                        c.commands.iter().map(|c| c.ratio.to_string()).collect();
                    return Err(WorkloadError::new(
                        "--command-ratio",
                        ratios.join(","),
                        format!(
                            "ratios with at least one above 0, adding up to at most {MAX_RATIO_CYCLE}"
                        ),
                    ));
                }
                check_keyspace_len(c.random_keyspace)?;
                c.keys.validate()?;
                c.values.validate()?;
            }
        }
        for s in &self.setup_commands {
            template::compile(s, "setup command", false)?;
        }
        Ok(())
    }
}

fn check_keyspace_len(r: Option<u64>) -> Result<(), WorkloadError> {
    match r {
        Some(0) => Err(WorkloadError::new(
            "-r",
            "0",
            "a key space length of at least 1",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_round_trip_through_json() {
        for spec in [WorkloadSpec::default(), WorkloadSpec::memtier_default()] {
            spec.validate().unwrap();
            let json = serde_json::to_string(&spec).unwrap();
            let back: WorkloadSpec = serde_json::from_str(&json).unwrap();
            assert_eq!(back, spec);
        }
        let json = serde_json::to_value(WorkloadSpec::tests(vec![TestName::Set])).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "seed": 0,
                "kind": {"kind": "tests", "tests": ["set"], "random_keyspace": null, "data_size": 3}
            })
        );
    }

    #[test]
    fn commands_spec_round_trips() {
        let spec = WorkloadSpec {
            seed: 9,
            kind: WorkloadKind::Commands(CommandsSpec {
                commands: vec![CommandSpec::new("HSET __key__ f __data__")],
                keys: KeySpace::default(),
                values: ValueSize::Range { min: 1, max: 9 },
                random_keyspace: Some(100),
            }),
            setup_commands: vec!["DEL x".into()],
        };
        spec.validate().unwrap();
        let json = serde_json::to_string(&spec).unwrap();
        assert_eq!(serde_json::from_str::<WorkloadSpec>(&json).unwrap(), spec);
    }

    #[test]
    fn validation_errors() {
        let mut s = WorkloadSpec::memtier_default();
        if let WorkloadKind::Mix(m) = &mut s.kind {
            m.ratio = Ratio { set: 0, get: 0 };
        }
        assert!(s
            .validate()
            .unwrap_err()
            .to_string()
            .contains("--ratio '0:0'"));

        let s = WorkloadSpec::tests(vec![]);
        assert!(s.validate().is_err());

        let mut s = WorkloadSpec::default();
        if let WorkloadKind::Tests(t) = &mut s.kind {
            t.random_keyspace = Some(0);
        }
        assert!(s
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("invalid -r '0'"));

        let s = WorkloadSpec {
            seed: 0,
            kind: WorkloadKind::Commands(CommandsSpec {
                commands: vec![CommandSpec::new("SET \"unterminated")],
                keys: KeySpace::default(),
                values: ValueSize::default(),
                random_keyspace: None,
            }),
            setup_commands: vec![],
        };
        assert!(s.validate().unwrap_err().to_string().contains("closing"));

        let s = WorkloadSpec {
            seed: 0,
            kind: WorkloadKind::Commands(CommandsSpec {
                commands: vec![CommandSpec {
                    ratio: 0,
                    ..CommandSpec::new("PING")
                }],
                keys: KeySpace::default(),
                values: ValueSize::default(),
                random_keyspace: None,
            }),
            setup_commands: vec![],
        };
        assert!(s
            .validate()
            .unwrap_err()
            .to_string()
            .contains("--command-ratio '0'"));
    }
}
