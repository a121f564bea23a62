//! Turning raw flag values into typed, validated values, with errors that name the flag,
//! the value and what was expected.
//!
//! Every function here is the edge of the program: below it, nothing handles raw strings.

use std::fmt;
use std::str::FromStr;

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

/// A parsed `redis://[user[:password]@]host[:port][/db]` URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisUri {
    pub host: String,
    pub port: u16,
    pub user: Option<String>,
    pub password: Option<String>,
    pub db: Option<u32>,
}

/// Parses a `redis://` URI. `rediss://` (TLS) is refused with an explanation.
pub fn redis_uri(value: &str) -> Result<RedisUri, FlagError> {
    const EXPECTED: &str = "redis://[user[:password]@]host[:port][/db]";
    let err = |why: &str| flag_error("--uri", &redact_uri(value), format!("{EXPECTED} ({why})"));
    let rest = if let Some(r) = value.strip_prefix("redis://") {
        r
    } else if value.starts_with("rediss://") {
        return Err(err("TLS (rediss://) is not supported; use redis://"));
    } else {
        return Err(err("the scheme must be redis://"));
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let (userinfo, hostport) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let (user, password) = match userinfo {
        None => (None, None),
        Some(info) => match info.split_once(':') {
            Some((u, p)) => (
                (!u.is_empty()).then(|| percent_decode(u)),
                Some(percent_decode(p)),
            ),
            None => (Some(percent_decode(info)), None),
        },
    };
    let (host, port) = if let Some(h) = hostport.strip_prefix('[') {
        // [ipv6]:port
        let end = h
            .find(']')
            .ok_or_else(|| err("an IPv6 address needs a closing ]"))?;
        let host = &h[..end];
        let after = &h[end + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => p,
            None if after.is_empty() => "",
            None => return Err(err("unexpected text after the IPv6 address")),
        };
        (host.to_string(), port)
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p),
            None => (hostport.to_string(), ""),
        }
    };
    let host = if host.is_empty() {
        "127.0.0.1".to_string()
    } else {
        host
    };
    let port = if port.is_empty() {
        6379
    } else {
        match port.parse::<u16>() {
            Ok(p) if p > 0 => p,
            _ => return Err(err("the port must be a whole number from 1 to 65535")),
        }
    };
    let db = if path.is_empty() {
        None
    } else {
        Some(
            path.parse::<u32>()
                .map_err(|_| err("the database after / must be a whole number"))?,
        )
    };
    Ok(RedisUri {
        host,
        port,
        user,
        password,
        db,
    })
}

/// The URI with any password replaced by `***`, for messages.
pub fn redact_uri(value: &str) -> String {
    let Some(scheme_end) = value.find("://") else {
        return value.to_string();
    };
    let rest = &value[scheme_end + 3..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match authority.rfind('@') {
        Some(at) => {
            let info = &authority[..at];
            let redacted = match info.split_once(':') {
                Some((u, _)) => format!("{u}:***"),
                None => info.to_string(),
            };
            format!(
                "{}{}@{}",
                &value[..scheme_end + 3],
                redacted,
                &rest[at + 1..]
            )
        }
        None => value.to_string(),
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(b) = u8::from_str_radix(hex, 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn uris() {
        let u = redis_uri("redis://alice:s%40cret@example.com:6380/3").unwrap();
        assert_eq!(u.host, "example.com");
        assert_eq!(u.port, 6380);
        assert_eq!(u.user.as_deref(), Some("alice"));
        assert_eq!(u.password.as_deref(), Some("s@cret"));
        assert_eq!(u.db, Some(3));
        let u = redis_uri("redis://:pw@[::1]:7000").unwrap();
        assert_eq!(u.host, "::1");
        assert_eq!(u.user, None);
        assert_eq!(u.password.as_deref(), Some("pw"));
        let u = redis_uri("redis://localhost").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.db), ("localhost", 6379, None));
        for bad in [
            "http://x",
            "redis://h:0",
            "redis://h:99999",
            "redis://h/x",
            "rediss://h",
            "redis://[::1",
        ] {
            assert!(redis_uri(bad).is_err(), "{bad}");
        }
        let e = redis_uri("redis://u:topsecret@h:bad")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("topsecret"), "{e}");
        assert!(e.contains("u:***@h:bad"), "{e}");
    }
}
