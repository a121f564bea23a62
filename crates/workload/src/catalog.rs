//! The redis-benchmark test catalog: which command each `-t` name sends.
//!
//! redis-benchmark's default suite is a fixed list of tests, each one command line with
//! placeholders, run one after another. resplab reproduces the same argument bytes so
//! that its numbers can be put next to redis-benchmark's, and names its phases and CSV
//! rows the way redis-benchmark prints them. The facts below were read from
//! redis-benchmark's source (`src/redis-benchmark.c`, Redis 7.x) and checked against the
//! 7.0.15 binary:
//!
//! - Keys carry the literal text `__rand_int__`. With `-r N` every occurrence in a
//!   request is replaced by its own random number in `0..N`, written as 12 zero-padded
//!   digits; without `-r` the text stays as it is, so `SET` writes one key named
//!   `key:__rand_int__` over and over.
//! - The payload of `-d N` (default 3) is not `x` bytes: redis-benchmark fills it with a
//!   linear congruential generator seeded with 1234 (`state = state * 1103515245 +
//!   12345`, byte `'0' + ((state >> 16) & 63)`), once, so every request of the run
//!   carries the same payload. [`payload`] reproduces it byte for byte.
//! - `ZADD` uses score `0` without `-r` and a random score with it.
//! - Any of the `LRANGE_*` tests is preceded by the reported test
//!   `LPUSH (needed to benchmark LRANGE)`, which fills `mylist`.
//! - `LRANGE_500` reads `0 499` and says "first 500 elements" (older releases read 450).
//! - `MSET (10 keys)` sends ten key/value pairs, each key with its own random number.
//! - Tests always run in the catalog's order, whatever the order given to `-t`.
//!
//! Two entries go beyond redis-benchmark 7.0: `xadd` (`XADD mystream * myfield
//! <payload>`, added to the default suite of later redis-benchmark releases, and in
//! resplab's default list) and `mget` (`MGET` of ten random keys, the read twin of
//! `MSET (10 keys)`, which redis-benchmark does not have; it runs only when asked for).
//!
//! Each test is described as a command template in the syntax of
//! [`crate::template`] (`__rand_int__`, `__data__`), so the catalog and user-given
//! `--command` lines share one compiler and one generator.

use crate::error::WorkloadError;
use serde::{Deserialize, Serialize};

/// One test of the redis-benchmark catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestName {
    /// `PING` in the inline form.
    PingInline,
    /// `PING` as a RESP array.
    PingMbulk,
    /// `SET key:__rand_int__ <payload>`.
    Set,
    /// `GET key:__rand_int__`.
    Get,
    /// `INCR counter:__rand_int__`.
    Incr,
    /// `LPUSH mylist <payload>`.
    Lpush,
    /// `RPUSH mylist <payload>`.
    Rpush,
    /// `LPOP mylist`.
    Lpop,
    /// `RPOP mylist`.
    Rpop,
    /// `SADD myset element:__rand_int__`.
    Sadd,
    /// `HSET myhash element:__rand_int__ <payload>`.
    Hset,
    /// `SPOP myset`.
    Spop,
    /// `ZADD myzset <score> element:__rand_int__`.
    Zadd,
    /// `ZPOPMIN myzset`.
    Zpopmin,
    /// `LPUSH mylist <payload>`, run before the LRANGE tests and reported on its own.
    LpushForLrange,
    /// `LRANGE mylist 0 99`.
    #[serde(rename = "lrange_100")]
    Lrange100,
    /// `LRANGE mylist 0 299`.
    #[serde(rename = "lrange_300")]
    Lrange300,
    /// `LRANGE mylist 0 499`.
    #[serde(rename = "lrange_500")]
    Lrange500,
    /// `LRANGE mylist 0 599`.
    #[serde(rename = "lrange_600")]
    Lrange600,
    /// `MSET` of ten `key:__rand_int__` / payload pairs.
    Mset,
    /// `MGET` of ten `key:__rand_int__` keys (resplab's addition).
    Mget,
    /// `XADD mystream * myfield <payload>`.
    Xadd,
}

impl TestName {
    /// Every test, in the order redis-benchmark runs them.
    pub const ALL: [TestName; 22] = [
        TestName::PingInline,
        TestName::PingMbulk,
        TestName::Set,
        TestName::Get,
        TestName::Incr,
        TestName::Lpush,
        TestName::Rpush,
        TestName::Lpop,
        TestName::Rpop,
        TestName::Sadd,
        TestName::Hset,
        TestName::Spop,
        TestName::Zadd,
        TestName::Zpopmin,
        TestName::LpushForLrange,
        TestName::Lrange100,
        TestName::Lrange300,
        TestName::Lrange500,
        TestName::Lrange600,
        TestName::Mset,
        TestName::Mget,
        TestName::Xadd,
    ];

    /// The tests run when no `-t` is given: redis-benchmark's default suite, in its
    /// order (everything but `mget`).
    pub fn default_list() -> Vec<TestName> {
        TestName::ALL
            .iter()
            .copied()
            .filter(|t| *t != TestName::Mget)
            .collect()
    }

    /// The name accepted by `-t` (lower case, as redis-benchmark spells it).
    pub fn flag_name(self) -> &'static str {
        match self {
            TestName::PingInline => "ping_inline",
            TestName::PingMbulk => "ping_mbulk",
            TestName::Set => "set",
            TestName::Get => "get",
            TestName::Incr => "incr",
            TestName::Lpush => "lpush",
            TestName::Rpush => "rpush",
            TestName::Lpop => "lpop",
            TestName::Rpop => "rpop",
            TestName::Sadd => "sadd",
            TestName::Hset => "hset",
            TestName::Spop => "spop",
            TestName::Zadd => "zadd",
            TestName::Zpopmin => "zpopmin",
            TestName::LpushForLrange => "lpush_for_lrange",
            TestName::Lrange100 => "lrange_100",
            TestName::Lrange300 => "lrange_300",
            TestName::Lrange500 => "lrange_500",
            TestName::Lrange600 => "lrange_600",
            TestName::Mset => "mset",
            TestName::Mget => "mget",
            TestName::Xadd => "xadd",
        }
    }

    /// The short, stable phase name (`"SET"`, `"LRANGE_100"`), used as the key of the
    /// test's results.
    pub fn name(self) -> &'static str {
        match self {
            TestName::PingInline => "PING_INLINE",
            TestName::PingMbulk => "PING_MBULK",
            TestName::Set => "SET",
            TestName::Get => "GET",
            TestName::Incr => "INCR",
            TestName::Lpush => "LPUSH",
            TestName::Rpush => "RPUSH",
            TestName::Lpop => "LPOP",
            TestName::Rpop => "RPOP",
            TestName::Sadd => "SADD",
            TestName::Hset => "HSET",
            TestName::Spop => "SPOP",
            TestName::Zadd => "ZADD",
            TestName::Zpopmin => "ZPOPMIN",
            TestName::LpushForLrange => "LPUSH_FOR_LRANGE",
            TestName::Lrange100 => "LRANGE_100",
            TestName::Lrange300 => "LRANGE_300",
            TestName::Lrange500 => "LRANGE_500",
            TestName::Lrange600 => "LRANGE_600",
            TestName::Mset => "MSET",
            TestName::Mget => "MGET",
            TestName::Xadd => "XADD",
        }
    }

    /// The title redis-benchmark prints for the test (its `--csv` "test" column).
    pub fn title(self) -> &'static str {
        match self {
            TestName::LpushForLrange => "LPUSH (needed to benchmark LRANGE)",
            TestName::Lrange100 => "LRANGE_100 (first 100 elements)",
            TestName::Lrange300 => "LRANGE_300 (first 300 elements)",
            TestName::Lrange500 => "LRANGE_500 (first 500 elements)",
            TestName::Lrange600 => "LRANGE_600 (first 600 elements)",
            TestName::Mset => "MSET (10 keys)",
            TestName::Mget => "MGET (10 keys)",
            other => other.name(),
        }
    }

    /// The command template the test sends, in [`crate::template`] syntax.
    /// `random_keys` is whether `-r` was given (it changes `ZADD`'s score).
    pub fn template(self, random_keys: bool) -> &'static str {
        match self {
            TestName::PingInline | TestName::PingMbulk => "PING",
            TestName::Set => "SET key:__rand_int__ __data__",
            TestName::Get => "GET key:__rand_int__",
            TestName::Incr => "INCR counter:__rand_int__",
            TestName::Lpush | TestName::LpushForLrange => "LPUSH mylist __data__",
            TestName::Rpush => "RPUSH mylist __data__",
            TestName::Lpop => "LPOP mylist",
            TestName::Rpop => "RPOP mylist",
            TestName::Sadd => "SADD myset element:__rand_int__",
            TestName::Hset => "HSET myhash element:__rand_int__ __data__",
            TestName::Spop => "SPOP myset",
            TestName::Zadd if random_keys => "ZADD myzset __rand_int__ element:__rand_int__",
            TestName::Zadd => "ZADD myzset 0 element:__rand_int__",
            TestName::Zpopmin => "ZPOPMIN myzset",
            TestName::Lrange100 => "LRANGE mylist 0 99",
            TestName::Lrange300 => "LRANGE mylist 0 299",
            TestName::Lrange500 => "LRANGE mylist 0 499",
            TestName::Lrange600 => "LRANGE mylist 0 599",
            TestName::Mset => concat!(
                "MSET key:__rand_int__ __data__ key:__rand_int__ __data__ ",
                "key:__rand_int__ __data__ key:__rand_int__ __data__ ",
                "key:__rand_int__ __data__ key:__rand_int__ __data__ ",
                "key:__rand_int__ __data__ key:__rand_int__ __data__ ",
                "key:__rand_int__ __data__ key:__rand_int__ __data__"
            ),
            TestName::Mget => concat!(
                "MGET key:__rand_int__ key:__rand_int__ key:__rand_int__ key:__rand_int__ ",
                "key:__rand_int__ key:__rand_int__ key:__rand_int__ key:__rand_int__ ",
                "key:__rand_int__ key:__rand_int__"
            ),
            TestName::Xadd => "XADD mystream * myfield __data__",
        }
    }

    /// The template a Redis Cluster needs instead, for the multi-key tests: every key
    /// carries the request's hash tag, so all keys of one request share a slot.
    /// `None`: the test's own template works in a cluster.
    pub fn cluster_template(self) -> Option<&'static str> {
        match self {
            TestName::Mset => Some(concat!(
                "MSET key:{__tag__}:__rand_int__ __data__ key:{__tag__}:__rand_int__ __data__ ",
                "key:{__tag__}:__rand_int__ __data__ key:{__tag__}:__rand_int__ __data__ ",
                "key:{__tag__}:__rand_int__ __data__ key:{__tag__}:__rand_int__ __data__ ",
                "key:{__tag__}:__rand_int__ __data__ key:{__tag__}:__rand_int__ __data__ ",
                "key:{__tag__}:__rand_int__ __data__ key:{__tag__}:__rand_int__ __data__"
            )),
            TestName::Mget => Some(concat!(
                "MGET key:{__tag__}:__rand_int__ key:{__tag__}:__rand_int__ ",
                "key:{__tag__}:__rand_int__ key:{__tag__}:__rand_int__ ",
                "key:{__tag__}:__rand_int__ key:{__tag__}:__rand_int__ ",
                "key:{__tag__}:__rand_int__ key:{__tag__}:__rand_int__ ",
                "key:{__tag__}:__rand_int__ key:{__tag__}:__rand_int__"
            )),
            _ => None,
        }
    }

    /// True for the test sent in the inline form.
    pub fn is_inline(self) -> bool {
        self == TestName::PingInline
    }

    fn is_lrange(self) -> bool {
        matches!(
            self,
            TestName::Lrange100 | TestName::Lrange300 | TestName::Lrange500 | TestName::Lrange600
        )
    }
}

/// The names `-t` accepts, aliases included, for error messages and help.
pub fn valid_test_names() -> String {
    let mut names: Vec<&str> = TestName::ALL
        .iter()
        .filter(|t| **t != TestName::LpushForLrange)
        .map(|t| t.flag_name())
        .collect();
    names.push("ping");
    names.push("lrange");
    names.join(", ")
}

/// Parses a `-t` value: comma-separated test names, case-insensitive, with the aliases
/// `ping` (both PING tests) and `lrange` (all four LRANGE tests).
///
/// The result is in redis-benchmark's run order, without duplicates, with
/// [`TestName::LpushForLrange`] added before the first LRANGE test, exactly the tests
/// redis-benchmark would run.
///
/// # Errors
/// An unknown name (the message lists the valid ones) or a list with no name at all.
pub fn parse_tests(value: &str) -> Result<Vec<TestName>, WorkloadError> {
    let mut chosen = [false; TestName::ALL.len()];
    let mut any = false;
    for raw in value.split(',') {
        let name = raw.trim().to_ascii_lowercase();
        if name.is_empty() {
            continue;
        }
        any = true;
        let picked: Vec<TestName> = match name.as_str() {
            "ping" => vec![TestName::PingInline, TestName::PingMbulk],
            "lrange" => vec![
                TestName::Lrange100,
                TestName::Lrange300,
                TestName::Lrange500,
                TestName::Lrange600,
            ],
            other => match TestName::ALL.iter().find(|t| t.flag_name() == other) {
                Some(t) => vec![*t],
                None => {
                    return Err(WorkloadError::new(
                        "-t test name",
                        raw.trim(),
                        format!("one of {}", valid_test_names()),
                    ))
                }
            },
        };
        for t in picked {
            chosen[t as usize] = true;
        }
    }
    if !any {
        return Err(WorkloadError::new(
            "-t",
            value,
            format!(
                "a comma-separated list of test names from {}",
                valid_test_names()
            ),
        ));
    }
    if TestName::ALL
        .iter()
        .any(|t| t.is_lrange() && chosen[*t as usize])
    {
        chosen[TestName::LpushForLrange as usize] = true;
    }
    Ok(TestName::ALL
        .iter()
        .copied()
        .filter(|t| chosen[*t as usize])
        .collect())
}

/// The payload redis-benchmark sends for `-d size`: `size` bytes from its linear
/// congruential generator seeded with 1234, each in `'0'..='o'`.
pub fn payload(size: usize) -> Vec<u8> {
    let mut state: u32 = 1234;
    let mut out = Vec::with_capacity(size);
    for _ in 0..size {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        out.push(b'0' + ((state >> 16) & 63) as u8);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_declaration_order() {
        for (i, t) in TestName::ALL.iter().enumerate() {
            assert_eq!(*t as usize, i);
        }
    }

    #[test]
    fn parse_orders_dedups_and_adds_lrange_prefill() {
        let t = parse_tests("get,SET,set").unwrap();
        assert_eq!(t, [TestName::Set, TestName::Get]);
        let t = parse_tests("lrange_300,ping").unwrap();
        assert_eq!(
            t,
            [
                TestName::PingInline,
                TestName::PingMbulk,
                TestName::LpushForLrange,
                TestName::Lrange300
            ]
        );
        let t = parse_tests("lrange").unwrap();
        assert_eq!(t.len(), 5);
        assert_eq!(t[0], TestName::LpushForLrange);
    }

    #[test]
    fn parse_rejects_unknown_names_listing_valid_ones() {
        let e = parse_tests("set,sett").unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("invalid -t test name 'sett': expected one of ping_inline"));
        assert!(msg.contains("lrange_600"));
        assert!(msg.contains(", ping, lrange"));
        assert!(parse_tests(" , ").is_err());
    }

    #[test]
    fn default_list_matches_redis_benchmark_titles() {
        // Titles of redis-benchmark 7.0.15's default suite (its --csv "test" column),
        // then XADD which later releases append.
        let expected = [
            "PING_INLINE",
            "PING_MBULK",
            "SET",
            "GET",
            "INCR",
            "LPUSH",
            "RPUSH",
            "LPOP",
            "RPOP",
            "SADD",
            "HSET",
            "SPOP",
            "ZADD",
            "ZPOPMIN",
            "LPUSH (needed to benchmark LRANGE)",
            "LRANGE_100 (first 100 elements)",
            "LRANGE_300 (first 300 elements)",
            "LRANGE_500 (first 500 elements)",
            "LRANGE_600 (first 600 elements)",
            "MSET (10 keys)",
            "XADD",
        ];
        let titles: Vec<&str> = TestName::default_list().iter().map(|t| t.title()).collect();
        assert_eq!(titles, expected);
    }

    #[test]
    fn payload_matches_redis_benchmark_generator() {
        // redis-benchmark 7.0.15 -d 8 sends "VXKeHogK" (seen with MONITOR); by hand:
        // 1234 * 1103515245 + 12345 = 1361737824675 = 0x0DE639A3 mod 2^32,
        // (0x0DE639A3 >> 16) & 63 = 38, '0' + 38 = 'V'.
        assert_eq!(payload(8), b"VXKeHogK");
        assert_eq!(payload(3), b"VXK");
        assert!(payload(1000).iter().all(|b| (b'0'..=b'o').contains(b)));
        assert_eq!(payload(0), b"");
    }

    #[test]
    fn serde_names_are_flag_names() {
        for t in TestName::ALL {
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("\"{}\"", t.flag_name()));
        }
    }
}
