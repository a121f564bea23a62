//! The workload words of a run: redis-benchmark tests (`-t`, `-r`, `-d`), a memtier-style
//! mix (`--ratio`, `--key-pattern`, the key and value-size flags), command templates
//! (`--command` with its ratio and key pattern), or a whole specification
//! (`--workload-spec`). The flags are checked against each other here, where they can be
//! named; the spec comes from `resplab_workload::flags`, the conversion experiments use
//! too.

use super::bench::BenchWords;
use super::{conflict, flag_error, integer, number, WordsError};
use resplab_workload::flags::{self, WorkloadFlags};
use resplab_workload::{CommandSpec, KeySpace, ValueSize, WorkloadSpec};

type Result<T> = std::result::Result<T, WordsError>;

/// The workload words of a run, in redis-benchmark's and memtier_benchmark's vocabulary:
/// `resplab bench`'s workload flags (and `resplab proto size`'s, with the same meaning),
/// each as given (`None` or empty: not given).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WorkloadWords {
    /// Comma-separated redis-benchmark tests (set,get,lrange_100,…); default: its whole list.
    #[arg(short = 't', long, help_heading = "Workload (redis-benchmark)")]
    pub tests: Option<String>,
    /// Random keys in a keyspace of this size (redis-benchmark -r).
    #[arg(short = 'r', long, help_heading = "Workload (redis-benchmark)")]
    pub random_keys: Option<String>,
    /// Value size in bytes (redis-benchmark -d; memtier --data-size).
    #[arg(
        short = 'd',
        long,
        alias = "data-size",
        help_heading = "Workload (redis-benchmark)"
    )]
    pub data_size: Option<String>,

    /// SET:GET ratio of a memtier-style mix, e.g. 1:10.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub ratio: Option<String>,
    /// Key pattern for SET:GET, each R (uniform), S (sequential), G (gaussian), Z (zipf).
    #[arg(long, help_heading = "Workload (memtier)")]
    pub key_pattern: Option<String>,
    /// Smallest key number.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub key_minimum: Option<String>,
    /// Largest key number.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub key_maximum: Option<String>,
    /// Key name prefix.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub key_prefix: Option<String>,
    /// Median of the gaussian key pattern.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub key_median: Option<String>,
    /// Standard deviation of the gaussian key pattern.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub key_stddev: Option<String>,
    /// Exponent of the zipf key pattern.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub key_zipf_exp: Option<String>,
    /// Value sizes drawn uniformly from MIN-MAX bytes.
    #[arg(long, help_heading = "Workload (memtier)")]
    pub data_size_range: Option<String>,
    /// Value sizes drawn from SIZE:WEIGHT,… .
    #[arg(long, help_heading = "Workload (memtier)")]
    pub data_size_list: Option<String>,
    /// An arbitrary command with __key__, __data__ and __rand_int__ placeholders
    /// (repeatable).
    #[arg(long = "command", help_heading = "Workload (memtier)")]
    pub commands: Vec<String>,
    /// Relative weight of each --command, in order (repeatable).
    #[arg(long = "command-ratio", help_heading = "Workload (memtier)")]
    pub command_ratios: Vec<String>,
    /// Key pattern of each --command, in order (repeatable).
    #[arg(long = "command-key-pattern", help_heading = "Workload (memtier)")]
    pub command_key_patterns: Vec<String>,
}

impl WorkloadWords {
    /// The first workload word given, as its flag (`--tests`, `--ratio`, …), if any.
    pub fn first_given(&self) -> Option<&'static str> {
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
}

/// The workload of `--workload-spec` (base64 JSON), with `seed` as its seed. It replaces
/// the workload flags, so none of them may be given.
pub fn spec_from_base64(a: &WorkloadWords, encoded: &str, seed: u64) -> Result<WorkloadSpec> {
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

/// The workload of the workload words alone (the other words are not looked at), with
/// `--seed` as its seed or, without it, a fresh one: what `resplab proto size` measures
/// of a bench workload.
///
/// # Errors
/// A [`WordsError`] naming the flag, as a whole run's words would give it.
pub fn workload_alone(a: &BenchWords) -> Result<WorkloadSpec> {
    let seed = match &a.seed {
        Some(s) => integer("--seed", s, 0u64, u64::MAX)?,
        None => super::load::fresh_seed(),
    };
    resolve_workload(&a.workload, seed)
}

/// The workload of the workload words, with `seed` as its seed (errors name the flag).
pub fn resolve_workload(a: &WorkloadWords, seed: u64) -> Result<WorkloadSpec> {
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
        Some(r) => Some(integer("-r/--random-keys", r, 1u64, u64::MAX / 2)?),
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
        for (flag, list) in [
            ("--command-ratio", &a.command_ratios),
            ("--command-key-pattern", &a.command_key_patterns),
        ] {
            if list.len() > a.commands.len() {
                let expected = format!("at most one per --command ({} given)", a.commands.len());
                return Err(flag_error(flag, &list.join(","), expected).into());
            }
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
            return Err(WordsError::Other(
                "--command-ratio and --command-key-pattern need --command: they apply to the --command at the same position".into(),
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
                .map(|d| integer("-d/--data-size", d, 0usize, 512 * 1024 * 1024))
                .transpose()?,
            ..WorkloadFlags::default()
        }
    };
    Ok(words.into_spec(seed)?)
}

/// `-d`, `--data-size-range` or `--data-size-list` (checked not to come together).
fn value_sizes(a: &WorkloadWords) -> Result<Option<ValueSize>> {
    Ok(if let Some(d) = &a.data_size {
        Some(ValueSize::Fixed {
            bytes: integer("-d/--data-size", d, 0usize, 512 * 1024 * 1024)?,
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
fn key_space(a: &WorkloadWords) -> Result<KeySpace> {
    let mut k = KeySpace::default();
    if let Some(v) = &a.key_prefix {
        k.prefix = v.clone();
    }
    if let Some(v) = &a.key_minimum {
        k.minimum = integer("--key-minimum", v, 0u64, u64::MAX / 2)?;
    }
    if let Some(v) = &a.key_maximum {
        k.maximum = integer("--key-maximum", v, 0u64, u64::MAX / 2)?;
    }
    if let Some(v) = &a.key_median {
        k.median = Some(number("--key-median", v, 0.0, f64::MAX)?);
    }
    if let Some(v) = &a.key_stddev {
        k.stddev = Some(number("--key-stddev", v, f64::MIN_POSITIVE, f64::MAX)?);
    }
    if let Some(v) = &a.key_zipf_exp {
        k.zipf_exp = number("--key-zipf-exp", v, 0.0, 5.0)?;
    }
    k.validate()?;
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workload_words_alone_make_a_workload() {
        let a = BenchWords {
            workload: WorkloadWords {
                tests: Some("get".into()),
                ..WorkloadWords::default()
            },
            seed: Some("7".into()),
            ..BenchWords::default()
        };
        assert_eq!(a.workload.first_given(), Some("--tests"));
        let spec = workload_alone(&a).unwrap();
        assert_eq!(spec.seed, 7);
        assert_eq!(WorkloadWords::default().first_given(), None);
        let bad = BenchWords {
            seed: Some("x".into()),
            ..a
        };
        assert!(workload_alone(&bad)
            .unwrap_err()
            .to_string()
            .contains("--seed"));
    }

    /// A `--command-ratio` or `--command-key-pattern` more than there are `--command`s
    /// is refused, naming the flag and its values.
    #[test]
    fn per_command_flags_need_a_command_each() {
        for (ratios, patterns, flag, value) in [
            (vec!["1", "2"], vec![], "--command-ratio", "1,2"),
            (vec![], vec!["R", "G"], "--command-key-pattern", "R,G"),
        ] {
            let a = WorkloadWords {
                commands: vec!["GET __key__".into()],
                command_ratios: ratios.into_iter().map(String::from).collect(),
                command_key_patterns: patterns.into_iter().map(String::from).collect(),
                ..WorkloadWords::default()
            };
            let e = resolve_workload(&a, 1).unwrap_err().to_string();
            assert_eq!(
                e,
                format!("invalid value '{value}' for {flag}: expected at most one per --command (1 given)")
            );
        }
        let one = WorkloadWords {
            commands: vec!["GET __key__".into()],
            command_ratios: vec!["3".into()],
            ..WorkloadWords::default()
        };
        assert!(resolve_workload(&one, 1).is_ok());
    }
}
