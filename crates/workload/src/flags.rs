//! Parsers for the workload flags of `resplab bench`.
//!
//! The CLI owns argv; these functions own the syntax of each workload flag value, so
//! that the rules and their error messages live next to the types they produce and are
//! tested here. Each error names the flag, repeats the value and shows the expected
//! form, e.g. `invalid --ratio '1-10': expected SET:GET as two whole numbers like 1:10`.
//!
//! The forms follow redis-benchmark (`-t`) and memtier_benchmark (`--ratio`,
//! `--key-pattern`, `--data-size-range`, `--data-size-list`, `--command`,
//! `--command-key-pattern`).

use crate::catalog;
use crate::catalog::TestName;
use crate::error::WorkloadError;
use crate::keys::KeyPattern;
use crate::keys::KeySpace;
use crate::schedule::Arrivals;
use crate::spec::{
    CommandSpec, CommandsSpec, ExpiryRange, MixSpec, Ratio, TestsSpec, WorkloadKind, WorkloadSpec,
};
use crate::template;
use crate::values::{ValueSize, WeightedSize};
use serde::{Serialize, Serializer};

/// Parses `-t`: see [`catalog::parse_tests`].
///
/// # Errors
/// An unknown test name (the message lists the valid ones) or an empty list.
pub fn parse_tests(value: &str) -> Result<Vec<TestName>, WorkloadError> {
    catalog::parse_tests(value)
}

/// Parses `--ratio SET:GET`, e.g. `1:10`.
///
/// # Errors
/// Anything but two whole numbers separated by `:`, or `0:0`.
pub fn parse_ratio(value: &str) -> Result<Ratio, WorkloadError> {
    let err = || WorkloadError::new("--ratio", value, "SET:GET as two whole numbers like 1:10");
    let (s, g) = value.split_once(':').ok_or_else(err)?;
    let set = parse_u32(s).ok_or_else(err)?;
    let get = parse_u32(g).ok_or_else(err)?;
    if set == 0 && get == 0 {
        return Err(WorkloadError::new(
            "--ratio",
            value,
            "SET:GET with at least one side above 0, like 1:10",
        ));
    }
    Ok(Ratio { set, get })
}

/// Parses `--key-pattern SET:GET`, each side one of `R` (random), `S` (sequential),
/// `G` (gaussian), `Z` (zipf), `P` (parallel); e.g. `R:R`, `S:G`.
///
/// # Errors
/// Anything but two such letters separated by `:`.
pub fn parse_key_pattern(value: &str) -> Result<(KeyPattern, KeyPattern), WorkloadError> {
    let err = || key_pattern_error(value);
    let (s, g) = value.split_once(':').ok_or_else(err)?;
    Ok((letter(s).ok_or_else(err)?, letter(g).ok_or_else(err)?))
}

/// The workload words of `resplab bench` flags, an experiment's `[[workload]]` or
/// calibrate, each already parsed (by the functions of this module) and checked
/// against the others by its caller, which knows how to name them (a flag, or a
/// file's key and place). [`WorkloadFlags::into_spec`] is the one conversion of these
/// words into a [`WorkloadSpec`], so that bench and experiments build the same spec
/// from the same words.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkloadFlags {
    /// `-t`: the redis-benchmark tests; empty is the catalog's default list.
    pub tests: Vec<TestName>,
    /// `--command` templates with their ratios and key patterns; not empty: a
    /// command workload.
    pub commands: Vec<CommandSpec>,
    /// Memtier words were given (no `--command`): a SET:GET mix rather than tests.
    pub mix: bool,
    /// `--ratio` of a mix (memtier's 1:10 when `None`).
    pub ratio: Option<Ratio>,
    /// `--key-pattern` of a mix, SET side and GET side (random when `None`).
    pub key_pattern: Option<(KeyPattern, KeyPattern)>,
    /// The key range and shape of a mix or of command templates.
    pub keys: KeySpace,
    /// `-r`: the random keyspace of tests and command templates.
    pub random_keyspace: Option<u64>,
    /// `-d`: the value size of tests (3 when `None`), and of a mix or templates when
    /// `values` is `None`.
    pub data_size: Option<usize>,
    /// `--data-size-range`/`--data-size-list` (or a caller's default) for a mix or
    /// templates; `None`: `data_size`, else memtier's 32 bytes.
    pub values: Option<ValueSize>,
    /// `--expiry-range` of a mix's SETs (templates carry their own expiry, if any).
    pub expiry: Option<ExpiryRange>,
}

impl WorkloadFlags {
    /// The workload these words describe, with `seed`: command templates when
    /// `commands` is not empty, else a mix when `mix`, else redis-benchmark tests.
    ///
    /// # Errors
    /// A combination [`WorkloadSpec::validate`] refuses.
    pub fn into_spec(self, seed: u64) -> Result<WorkloadSpec, WorkloadError> {
        let fixed = self.data_size.map(|bytes| ValueSize::Fixed { bytes });
        let values = self.values.or(fixed).unwrap_or_default();
        let kind = if !self.commands.is_empty() {
            WorkloadKind::Commands(CommandsSpec {
                commands: self.commands,
                keys: self.keys,
                values,
                random_keyspace: self.random_keyspace,
            })
        } else if self.mix {
            let (set_pattern, get_pattern) = self
                .key_pattern
                .unwrap_or((KeyPattern::Random, KeyPattern::Random));
            WorkloadKind::Mix(MixSpec {
                ratio: self.ratio.unwrap_or_default(),
                set_pattern,
                get_pattern,
                keys: self.keys,
                values,
                expiry: self.expiry,
                wait: None,
            })
        } else {
            let defaults = TestsSpec::default();
            WorkloadKind::Tests(TestsSpec {
                tests: if self.tests.is_empty() {
                    defaults.tests
                } else {
                    self.tests
                },
                random_keyspace: self.random_keyspace,
                data_size: self.data_size.unwrap_or(defaults.data_size),
            })
        };
        let spec = WorkloadSpec {
            seed,
            kind,
            setup_commands: Vec::new(),
        };
        spec.validate()?;
        Ok(spec)
    }
}

/// A flag value as it was written, with what it means.
///
/// Stored definitions keep the words their author wrote (`r:r` stays `r:r`), so a
/// stored experiment serializes byte for byte as before, while every reader after the
/// edge uses [`Given::value`] and never parses the text again. Serializes as the text;
/// deserializing goes through the parser of the field (`#[serde(deserialize_with)]`
/// with [`Given::deserialize_with`]), so a stored value is checked as a flag is.
#[derive(Clone, Debug, PartialEq)]
pub struct Given<T> {
    text: String,
    value: T,
}

impl<T> Given<T> {
    /// Parses `text` with `parse`, keeping both.
    ///
    /// # Errors
    /// The parser's error, which names the flag and repeats the value.
    pub fn parse(
        text: &str,
        parse: fn(&str) -> Result<T, WorkloadError>,
    ) -> Result<Self, WorkloadError> {
        Ok(Given {
            text: text.to_string(),
            value: parse(text)?,
        })
    }

    /// The words as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// What the words mean.
    pub fn value(&self) -> &T {
        &self.value
    }

    /// Reads an optional stored text back through `parse` (for serde's
    /// `deserialize_with`).
    ///
    /// # Errors
    /// A stored text the parser refuses.
    pub fn deserialize_with<'de, D: serde::Deserializer<'de>>(
        d: D,
        parse: fn(&str) -> Result<T, WorkloadError>,
    ) -> Result<Option<Self>, D::Error> {
        let text: Option<String> = serde::Deserialize::deserialize(d)?;
        text.map(|t| Given::parse(&t, parse).map_err(serde::de::Error::custom))
            .transpose()
    }
}

impl<T> Serialize for Given<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<T> Given<T> {
    /// Reads a stored list of texts back through `parse`, each as [`Given::parse`] (for
    /// serde's `deserialize_with`).
    ///
    /// # Errors
    /// A stored text the parser refuses.
    pub fn deserialize_list_with<'de, D: serde::Deserializer<'de>>(
        d: D,
        parse: fn(&str) -> Result<T, WorkloadError>,
    ) -> Result<Vec<Self>, D::Error> {
        let texts: Vec<String> = serde::Deserialize::deserialize(d)?;
        texts
            .iter()
            .map(|t| Given::parse(t, parse).map_err(serde::de::Error::custom))
            .collect()
    }
}

/// redis-benchmark test words as written (one name or alias a word, as an experiment
/// file lists them) with the tests they select, parsed once by [`parse_tests`] over the
/// whole list. Serializes as the list of words; deserializing parses them again, so a
/// stored list is checked as `-t` is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TestList {
    words: Vec<String>,
    names: Vec<TestName>,
}

impl TestList {
    /// The tests of `words` (at least one; [`TestList::default`] is the empty list).
    ///
    /// # Errors
    /// An unknown test name or no name at all, as [`parse_tests`] says it.
    pub fn parse(words: Vec<String>) -> Result<TestList, WorkloadError> {
        let names = parse_tests(&words.join(","))?;
        Ok(TestList { words, names })
    }

    /// The list of `names`, each written as its `-t` name (the tests run in catalog
    /// order, as [`parse_tests`] gives them).
    pub fn of(names: Vec<TestName>) -> TestList {
        let words = names.iter().map(|n| n.flag_name().to_string()).collect();
        let mut names = names;
        names.sort();
        names.dedup();
        TestList { words, names }
    }

    /// The words as written.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// The tests they select, in catalog order (an alias such as `ping` selects several).
    pub fn names(&self) -> &[TestName] {
        &self.names
    }

    /// No tests given.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

impl Serialize for TestList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.words.serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for TestList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let words: Vec<String> = serde::Deserialize::deserialize(d)?;
        if words.is_empty() {
            return Ok(TestList::default());
        }
        TestList::parse(words).map_err(serde::de::Error::custom)
    }
}

/// A key pattern word of an experiment file or calibrate: `SET:GET` for a mix (as
/// `--key-pattern`), one letter for command templates (as `--command-key-pattern`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyPatterns {
    /// `S:G`: the SET side and the GET side of a mix.
    SetGet(KeyPattern, KeyPattern),
    /// One letter, for every command template.
    One(KeyPattern),
}

impl KeyPatterns {
    /// The SET:GET pair of a mix.
    ///
    /// # Errors
    /// A single letter, refused with `--key-pattern`'s message for `text`.
    pub fn set_get(self, text: &str) -> Result<(KeyPattern, KeyPattern), WorkloadError> {
        match self {
            KeyPatterns::SetGet(s, g) => Ok((s, g)),
            KeyPatterns::One(_) => Err(key_pattern_error(text)),
        }
    }

    /// The one letter of command templates.
    ///
    /// # Errors
    /// A SET:GET pair, refused with `--command-key-pattern`'s message for `text`.
    pub fn one(self, text: &str) -> Result<KeyPattern, WorkloadError> {
        match self {
            KeyPatterns::One(p) => Ok(p),
            KeyPatterns::SetGet(..) => Err(command_key_pattern_error(text)),
        }
    }
}

/// Parses a key pattern word: `S:G` as [`parse_key_pattern`], one letter as
/// [`parse_command_key_pattern`].
///
/// # Errors
/// The message of the parser the form calls for.
pub fn parse_key_patterns(value: &str) -> Result<KeyPatterns, WorkloadError> {
    if value.contains(':') {
        let (s, g) = parse_key_pattern(value)?;
        Ok(KeyPatterns::SetGet(s, g))
    } else {
        parse_command_key_pattern(value).map(KeyPatterns::One)
    }
}

/// Parses `--command-key-pattern`: one of `R`, `S`, `G`, `Z`, `P`.
///
/// # Errors
/// Anything but one of those letters.
pub fn parse_command_key_pattern(value: &str) -> Result<KeyPattern, WorkloadError> {
    letter(value).ok_or_else(|| command_key_pattern_error(value))
}

fn key_pattern_error(value: &str) -> WorkloadError {
    WorkloadError::new(
        "--key-pattern",
        value,
        "SET:GET with each side one of R (random), S (sequential), G (gaussian), \
         Z (zipf), P (parallel), like R:R",
    )
}

fn command_key_pattern_error(value: &str) -> WorkloadError {
    WorkloadError::new(
        "--command-key-pattern",
        value,
        "one of R (random), S (sequential), G (gaussian), Z (zipf), P (parallel)",
    )
}

fn letter(s: &str) -> Option<KeyPattern> {
    let mut chars = s.trim().chars();
    let c = chars.next()?;
    if chars.next().is_some() {
        return None;
    }
    KeyPattern::from_letter(c)
}

/// Parses `--data-size-range MIN-MAX`, e.g. `32-1024`.
///
/// # Errors
/// Anything but two whole numbers separated by `-` with `MIN <= MAX`, or sizes above
/// [`crate::values::MAX_VALUE_BYTES`].
pub fn parse_data_size_range(value: &str) -> Result<ValueSize, WorkloadError> {
    let err = || {
        WorkloadError::new(
            "--data-size-range",
            value,
            "MIN-MAX as two whole numbers of bytes like 32-1024",
        )
    };
    let (a, b) = value.split_once('-').ok_or_else(err)?;
    let min = parse_usize(a).ok_or_else(err)?;
    let max = parse_usize(b).ok_or_else(err)?;
    if min > max {
        return Err(WorkloadError::new(
            "--data-size-range",
            value,
            "MIN-MAX with MIN no larger than MAX, like 32-1024",
        ));
    }
    let size = ValueSize::Range { min, max };
    size.validate()?;
    Ok(size)
}

/// Parses `--data-size-list SIZE:WEIGHT,…`, e.g. `32:7,1024:3`.
///
/// # Errors
/// An item that is not two whole numbers separated by `:`, an empty list, all weights
/// zero, or a size above [`crate::values::MAX_VALUE_BYTES`].
pub fn parse_data_size_list(value: &str) -> Result<ValueSize, WorkloadError> {
    let mut sizes = Vec::new();
    for item in value.split(',') {
        let err = || {
            WorkloadError::new(
                "--data-size-list",
                value,
                format!(
                    "SIZE:WEIGHT pairs separated by commas like 32:7,1024:3 \
                     (item '{}' is not two whole numbers)",
                    item.trim()
                ),
            )
        };
        let (s, w) = item.split_once(':').ok_or_else(err)?;
        sizes.push(WeightedSize {
            bytes: parse_usize(s).ok_or_else(err)?,
            weight: parse_u32(w).ok_or_else(err)?,
        });
    }
    let size = ValueSize::List { sizes };
    size.validate().map_err(|e| WorkloadError {
        value: value.to_string(),
        ..e
    })?;
    Ok(size)
}

/// Parses one `--command` template (ratio 1, random key pattern; the CLI sets
/// `--command-ratio` and `--command-key-pattern` on the result).
///
/// # Errors
/// An empty command or a quoting error (with its byte offset).
pub fn parse_command(value: &str) -> Result<CommandSpec, WorkloadError> {
    let args = template::split_args(value, "--command")?;
    if args.is_empty() {
        return Err(WorkloadError::new(
            "--command",
            value,
            "a command and its arguments, like \"HSET __key__ f __data__\"",
        ));
    }
    Ok(CommandSpec::new(value))
}

/// Parses `--command-ratio`: a whole number.
///
/// # Errors
/// Anything but a whole number.
pub fn parse_command_ratio(value: &str) -> Result<u32, WorkloadError> {
    parse_u32(value)
        .ok_or_else(|| WorkloadError::new("--command-ratio", value, "a whole number like 1 or 10"))
}

/// Parses `--arrivals`: `constant` or `poisson`.
///
/// # Errors
/// Anything else.
pub fn parse_arrivals(value: &str) -> Result<Arrivals, WorkloadError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "constant" => Ok(Arrivals::Constant),
        "poisson" => Ok(Arrivals::Poisson),
        _ => Err(WorkloadError::new(
            "--arrivals",
            value,
            "constant or poisson",
        )),
    }
}

/// Parses `--rate`: requests per second, a positive number (fractions allowed).
///
/// # Errors
/// Anything but a positive finite number.
pub fn parse_rate(value: &str) -> Result<f64, WorkloadError> {
    match value.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(WorkloadError::new(
            "--rate",
            value,
            "a positive number of requests per second, like 50000",
        )),
    }
}

fn parse_u32(s: &str) -> Option<u32> {
    let s = s.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_usize(s: &str) -> Option<usize> {
    let s = s.trim();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {

    /// Test words keep their spelling in storage and their meaning in memory: an alias
    /// selects several tests, in catalog order, and a stored list is checked again.
    #[test]
    fn test_lists_store_the_words_and_hold_the_tests() {
        let words = vec!["get".to_string(), "ping".to_string()];
        let list = TestList::parse(words.clone()).unwrap();
        assert_eq!(
            list.names(),
            [TestName::PingInline, TestName::PingMbulk, TestName::Get]
        );
        let json = serde_json::to_string(&list).unwrap();
        assert_eq!(json, r#"["get","ping"]"#);
        let back: TestList = serde_json::from_str(&json).unwrap();
        assert_eq!(back, list);
        let empty: TestList = serde_json::from_str("[]").unwrap();
        assert!(empty.is_empty() && empty.names().is_empty());
        assert!(serde_json::from_str::<TestList>(r#"["nope"]"#).is_err());
        assert_eq!(
            TestList::of(vec![TestName::Get, TestName::Set]).words(),
            ["get", "set"]
        );
        assert_eq!(
            TestList::of(vec![TestName::Get, TestName::Set]).names(),
            [TestName::Set, TestName::Get]
        );
    }

    use super::*;

    fn msg<T: std::fmt::Debug>(r: Result<T, WorkloadError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn ratio() {
        assert_eq!(parse_ratio("1:10").unwrap(), Ratio { set: 1, get: 10 });
        assert_eq!(parse_ratio("0:1").unwrap(), Ratio { set: 0, get: 1 });
        assert_eq!(
            msg(parse_ratio("1-10")),
            "invalid --ratio '1-10': expected SET:GET as two whole numbers like 1:10"
        );
        for bad in [
            "",
            ":",
            "1:",
            "a:b",
            "-1:2",
            "1:2:3",
            "1.5:2",
            "99999999999:1",
        ] {
            assert!(parse_ratio(bad).is_err(), "{bad}");
        }
        assert!(msg(parse_ratio("0:0")).contains("at least one side above 0"));
    }

    #[test]
    fn key_pattern() {
        assert_eq!(
            parse_key_pattern("R:R").unwrap(),
            (KeyPattern::Random, KeyPattern::Random)
        );
        assert_eq!(
            parse_key_pattern("s:g").unwrap(),
            (KeyPattern::Sequential, KeyPattern::Gaussian)
        );
        assert_eq!(
            parse_key_pattern("Z:P").unwrap(),
            (KeyPattern::Zipf, KeyPattern::Parallel)
        );
        assert!(msg(parse_key_pattern("RR"))
            .starts_with("invalid --key-pattern 'RR': expected SET:GET"));
        assert!(parse_key_pattern("R:X").is_err());
        assert!(parse_key_pattern("RS:R").is_err());
        assert_eq!(
            parse_command_key_pattern("G").unwrap(),
            KeyPattern::Gaussian
        );
        assert!(msg(parse_command_key_pattern("Q")).contains("one of R (random)"));
    }

    #[test]
    fn key_patterns_word() {
        assert_eq!(
            parse_key_patterns("r:g").unwrap(),
            KeyPatterns::SetGet(KeyPattern::Random, KeyPattern::Gaussian)
        );
        assert_eq!(
            parse_key_patterns("Z").unwrap(),
            KeyPatterns::One(KeyPattern::Zipf)
        );
        // Each form is refused by the parser it calls for, with that flag's words.
        assert!(msg(parse_key_patterns("R:X")).starts_with("invalid --key-pattern 'R:X'"));
        assert!(msg(parse_key_patterns("Q")).starts_with("invalid --command-key-pattern 'Q'"));
        // A word of the other form is refused where its form is needed.
        let one = parse_key_patterns("S").unwrap();
        assert_eq!(msg(one.set_get("S")), msg(parse_key_pattern("S")));
        let pair = parse_key_patterns("S:S").unwrap();
        assert_eq!(msg(pair.one("S:S")), msg(parse_command_key_pattern("S:S")));
    }

    #[test]
    fn workload_flags_into_spec_picks_the_kind_and_its_defaults() {
        // Nothing given: redis-benchmark's default tests, 3-byte values.
        let spec = WorkloadFlags::default().into_spec(9).unwrap();
        assert_eq!(spec.seed, 9);
        assert_eq!(spec.kind, WorkloadKind::Tests(TestsSpec::default()));
        // A mix: memtier's defaults where a word is missing, -d as a fixed size.
        let spec = WorkloadFlags {
            mix: true,
            key_pattern: Some((KeyPattern::Sequential, KeyPattern::Zipf)),
            data_size: Some(100),
            ..WorkloadFlags::default()
        }
        .into_spec(1)
        .unwrap();
        assert_eq!(
            spec.kind,
            WorkloadKind::Mix(MixSpec {
                set_pattern: KeyPattern::Sequential,
                get_pattern: KeyPattern::Zipf,
                values: ValueSize::Fixed { bytes: 100 },
                ..MixSpec::default()
            })
        );
        // Templates win over the mix flag; sizes given win over -d.
        let spec = WorkloadFlags {
            commands: vec![parse_command("SET __key__ __data__").unwrap()],
            mix: true,
            data_size: Some(100),
            values: Some(parse_data_size_range("8-16").unwrap()),
            random_keyspace: Some(10),
            ..WorkloadFlags::default()
        }
        .into_spec(1)
        .unwrap();
        match spec.kind {
            WorkloadKind::Commands(c) => {
                assert_eq!(c.values, ValueSize::Range { min: 8, max: 16 });
                assert_eq!(c.random_keyspace, Some(10));
            }
            other => panic!("{other:?}"),
        }
        // What the spec refuses is refused here.
        let bad = WorkloadFlags {
            mix: true,
            ratio: Some(Ratio { set: 0, get: 0 }),
            ..WorkloadFlags::default()
        };
        assert!(bad.into_spec(1).is_err());
    }

    #[test]
    fn given_keeps_the_words_and_the_value() {
        let g = Given::parse(" 1:10", parse_ratio).unwrap();
        assert_eq!(g.text(), " 1:10");
        assert_eq!(*g.value(), Ratio { set: 1, get: 10 });
        assert_eq!(serde_json::to_string(&g).unwrap(), "\" 1:10\"");
        let mut de = serde_json::Deserializer::from_str("\"32-64\"");
        let back = Given::deserialize_with(&mut de, parse_data_size_range).unwrap();
        assert_eq!(
            back.map(|b| b.value().clone()),
            Some(ValueSize::Range { min: 32, max: 64 })
        );
        let mut de = serde_json::Deserializer::from_str("null");
        assert!(Given::deserialize_with(&mut de, parse_ratio)
            .unwrap()
            .is_none());
        let mut de = serde_json::Deserializer::from_str("\"1-10\"");
        let err = Given::deserialize_with(&mut de, parse_ratio).unwrap_err();
        assert!(err.to_string().contains("invalid --ratio '1-10'"), "{err}");
        assert!(Given::parse("0:0", parse_ratio).is_err());
    }

    #[test]
    fn data_size_range() {
        assert_eq!(
            parse_data_size_range("32-1024").unwrap(),
            ValueSize::Range { min: 32, max: 1024 }
        );
        assert_eq!(
            msg(parse_data_size_range("32:1024")),
            "invalid --data-size-range '32:1024': expected MIN-MAX as two whole numbers of bytes like 32-1024"
        );
        assert!(msg(parse_data_size_range("10-5")).contains("MIN no larger than MAX"));
        assert!(parse_data_size_range("1-999999999999").is_err());
    }

    #[test]
    fn data_size_list() {
        assert_eq!(
            parse_data_size_list("32:7, 1024:3").unwrap(),
            ValueSize::List {
                sizes: vec![
                    WeightedSize {
                        bytes: 32,
                        weight: 7
                    },
                    WeightedSize {
                        bytes: 1024,
                        weight: 3
                    }
                ]
            }
        );
        let m = msg(parse_data_size_list("32:7,x:1"));
        assert!(m.starts_with("invalid --data-size-list '32:7,x:1': expected SIZE:WEIGHT"));
        assert!(m.contains("item 'x:1'"));
        assert!(parse_data_size_list("").is_err());
        assert!(msg(parse_data_size_list("32:0")).contains("weight above 0"));
    }

    #[test]
    fn command_and_ratio() {
        let c = parse_command("HSET __key__ \"a b\" __data__").unwrap();
        assert_eq!(c.template, "HSET __key__ \"a b\" __data__");
        assert_eq!(c.ratio, 1);
        assert!(msg(parse_command("  ")).contains("a command and its arguments"));
        assert!(msg(parse_command("SET 'x")).contains("at byte 4"));
        assert_eq!(parse_command_ratio("3").unwrap(), 3);
        assert!(parse_command_ratio("-3").is_err());
    }

    #[test]
    fn arrivals_and_rate() {
        assert_eq!(parse_arrivals("Poisson").unwrap(), Arrivals::Poisson);
        assert_eq!(parse_arrivals("constant").unwrap(), Arrivals::Constant);
        assert_eq!(
            msg(parse_arrivals("uniform")),
            "invalid --arrivals 'uniform': expected constant or poisson"
        );
        assert_eq!(parse_rate("2500.5").unwrap(), 2500.5);
        for bad in ["0", "-1", "inf", "NaN", "fast"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tests_flag() {
        assert_eq!(parse_tests("set").unwrap(), [TestName::Set]);
        assert!(msg(parse_tests("foo")).contains("expected one of ping_inline"));
    }
}
