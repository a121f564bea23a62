//! The words of a run as a user writes them (`resplab bench`'s flags) turned into typed,
//! validated values, with errors that name the flag, the value and what was expected:
//! the value parsers here, the connection words in [`connect`], the load, start and
//! shard words in [`load`], the workload words (through `resplab_workload::flags`) in
//! [`workload`], and all of them together into a [`RunConfig`](crate::RunConfig) and a
//! workload in [`bench`].
//!
//! This is the edge of the program: below it, nothing handles raw strings.

pub mod bench;
pub mod connect;
pub mod load;
pub mod redis_benchmark;
pub mod workload;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// A flag value that does not fit; printed as
/// `invalid value '…' for --flag: expected …`. Always exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagError {
    pub flag: String,
    pub value: String,
    pub expected: String,
}

impl fmt::Display for FlagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid value '{}' for {}: expected {}",
            self.value, self.flag, self.expected
        )
    }
}

impl std::error::Error for FlagError {}

/// Two flags that cannot be used together.
#[derive(Debug)]
pub struct ConflictError {
    pub flag: String,
    pub other: String,
}

impl fmt::Display for ConflictError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} cannot be used together with {}",
            self.flag, self.other
        )
    }
}

impl std::error::Error for ConflictError {}

/// Builds a [`ConflictError`].
pub fn conflict(a: &str, b: &str) -> ConflictError {
    ConflictError {
        flag: a.to_string(),
        other: b.to_string(),
    }
}

/// Why the words of a run do not make one: a flag's value, two flags together, the
/// workload they describe, or the configuration they add up to. Each prints as its
/// cause does.
#[derive(Debug, thiserror::Error)]
pub enum WordsError {
    #[error(transparent)]
    Flag(#[from] FlagError),
    #[error(transparent)]
    Conflict(#[from] ConflictError),
    #[error(transparent)]
    Workload(#[from] resplab_workload::WorkloadError),
    #[error(transparent)]
    Config(#[from] crate::EngineError),
    /// Flags that make sense only together, or a TLS setting the TLS library refuses.
    #[error("{0}")]
    Other(String),
}

/// Builds a [`FlagError`].
pub fn flag_error(flag: &str, value: &str, expected: impl Into<String>) -> FlagError {
    FlagError {
        flag: flag.to_string(),
        value: value.to_string(),
        expected: expected.into(),
    }
}

/// Parses a whole number within `min..=max`.
pub fn integer<T>(flag: &str, value: &str, min: T, max: T) -> Result<T, FlagError>
where
    T: FromStr + PartialOrd + fmt::Display + Copy,
{
    let expected = || format!("a whole number from {min} to {max}");
    let v: T = value
        .trim()
        .replace('_', "")
        .parse()
        .map_err(|_| flag_error(flag, value, expected()))?;
    if v < min || v > max {
        return Err(flag_error(flag, value, expected()));
    }
    Ok(v)
}

/// Parses a finite number within `min..=max` (seconds, rates).
pub fn number(flag: &str, value: &str, min: f64, max: f64) -> Result<f64, FlagError> {
    let expected = || format!("a number from {min} to {max}");
    let v: f64 = value
        .trim()
        .parse()
        .map_err(|_| flag_error(flag, value, expected()))?;
    if !v.is_finite() || v < min || v > max {
        return Err(flag_error(flag, value, expected()));
    }
    Ok(v)
}

/// Parses `--shard I/N`: generator `I` of `N`, counted from 1 as people count hosts.
/// Returns the 0-based index and the count.
pub fn shard(flag: &str, value: &str) -> Result<(u32, u32), FlagError> {
    let expected = "I/N with 1 <= I <= N <= 10000 (generator I of N, counted from 1)";
    let parsed = value
        .trim()
        .split_once('/')
        .and_then(|(i, n)| Some((i.trim().parse::<u32>().ok()?, n.trim().parse::<u32>().ok()?)));
    let Some((i, n)) = parsed else {
        return Err(flag_error(flag, value, expected));
    };
    if i == 0 || n == 0 || i > n || n > 10_000 {
        return Err(flag_error(flag, value, expected));
    }
    Ok((i - 1, n))
}

/// Parses a wall-clock time: seconds since the Unix epoch (`1764064800`, `1764064800.25`),
/// RFC 3339 (`2026-11-25T10:00:00Z`, `2026-11-25T11:00:00.5+01:00`), or `+S` seconds from
/// `now` (`+5`, `+2.5s`). Returns ms since the epoch.
pub fn wall_time(flag: &str, value: &str, now_unix_ms: f64) -> Result<f64, FlagError> {
    let expected = "seconds since the Unix epoch (1764064800.5), an RFC 3339 time (2026-11-25T10:00:00Z) or +SECONDS from now (+5)";
    let v = value.trim();
    let bad = || flag_error(flag, value, expected);
    if let Some(rel) = v.strip_prefix('+') {
        let secs: f64 = rel.trim_end_matches('s').parse().map_err(|_| bad())?;
        if !(secs.is_finite() && (0.0..=86_400.0).contains(&secs)) {
            return Err(bad());
        }
        return Ok(now_unix_ms + secs * 1e3);
    }
    if let Ok(secs) = v.parse::<f64>() {
        // Between 2001 and 2286: anything else is a typo, not a start time.
        if !(secs.is_finite() && (1e9..1e10).contains(&secs)) {
            return Err(bad());
        }
        return Ok(secs * 1e3);
    }
    rfc3339_ms(v).ok_or_else(bad)
}

/// `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` as ms since the epoch.
fn rfc3339_ms(v: &str) -> Option<f64> {
    let b = v.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = v.get(r)?;
        if !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = &v[19..];
    let mut frac = 0.0;
    if let Some(r) = rest.strip_prefix('.') {
        let digits = r.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        frac = format!("0.{}", &r[..digits]).parse().ok()?;
        rest = &r[digits..];
    }
    let offset_min = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let t = &rest[1..];
            if t.len() != 5 || t.as_bytes()[2] != b':' {
                return None;
            }
            let oh: i64 = t[0..2].parse().ok()?;
            let om: i64 = t[3..5].parse().ok()?;
            sign * (oh * 60 + om)
        }
    };
    // Days from the civil date (proleptic Gregorian calendar).
    let yy = if mo <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some((secs as f64 + frac) * 1e3)
}

pub use crate::uri::RedisUri;

/// Parses `"500ms"`, `"5s"`, `"1.5s"`, `"2m"`, `"1h"`, `"250us"` or a bare number of
/// seconds.
///
/// # Errors
/// A message naming the text and the accepted forms.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| {
        format!("expected a duration such as \"500ms\", \"5s\" or \"2m\", found \"{text}\"")
    })?;
    let scale = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!(
                "unknown duration unit \"{other}\" in \"{text}\"; use us, ms, s, m or h"
            ))
        }
    };
    seconds(value * scale).ok_or_else(|| format!("duration \"{text}\" is out of range"))
}

/// A non-negative finite number of seconds as a [`Duration`].
pub fn seconds(value: f64) -> Option<Duration> {
    (value.is_finite() && (0.0..=1e9).contains(&value)).then(|| Duration::from_secs_f64(value))
}

#[cfg(test)]
mod tests {
    #[test]
    fn shards_count_from_one() {
        assert_eq!(shard("--shard", "1/4").unwrap(), (0, 4));
        assert_eq!(shard("--shard", " 4 / 4 ").unwrap(), (3, 4));
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", "-1/2", ""] {
            let e = shard("--shard", bad).unwrap_err().to_string();
            assert!(e.contains("I/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn wall_times_in_three_spellings() {
        let now = 1_764_064_800_000.0;
        assert_eq!(wall_time("--start-at", "+5", now).unwrap(), now + 5000.0);
        assert_eq!(wall_time("--start-at", "+2.5s", now).unwrap(), now + 2500.0);
        assert_eq!(
            wall_time("--start-at", "1764064800.25", now).unwrap(),
            1_764_064_800_250.0
        );
        // 2025-11-25T10:00:00Z is 1764064800 s after the epoch.
        assert_eq!(
            wall_time("--start-at", "2025-11-25T10:00:00Z", now).unwrap(),
            1_764_064_800_000.0
        );
        assert_eq!(
            wall_time("--start-at", "2025-11-25T11:00:00.5+01:00", now).unwrap(),
            1_764_064_800_500.0
        );
        assert_eq!(
            wall_time("--start-at", "1970-01-01T00:00:00Z", now).unwrap(),
            0.0
        );
        assert_eq!(
            wall_time("--start-at", "2000-03-01T00:00:00Z", now).unwrap(),
            951_868_800_000.0
        );
        for bad in [
            "tomorrow",
            "12",
            "+-3",
            "2025-13-01T00:00:00Z",
            "2025-11-25T10:00:00",
            "+999999",
        ] {
            let e = wall_time("--start-at", bad, now).unwrap_err().to_string();
            assert!(e.contains("RFC 3339"), "{bad}: {e}");
        }
    }

    use super::*;

    #[test]
    fn integers_name_the_flag_and_range() {
        assert_eq!(integer::<u32>("-c", "50", 1, 100_000).unwrap(), 50);
        let e = integer::<u32>("-c", "0", 1, 100_000).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid value '0' for -c: expected a whole number from 1 to 100000"
        );
        assert!(integer::<u16>("--port", "70000", 1, 65535).is_err());
        assert!(integer::<u16>("--port", "abc", 1, 65535).is_err());
        assert!(number("--rate", "nan", 0.0, 1e9).is_err());
    }
}
