//! `redis://` and `rediss://` URIs: the one parser, and the one way to show a URI in a
//! message without its password.
//!
//! Both `resplab bench -u` and an experiment's `uri` key read URIs here. The grammar is
//! `redis[s]://[userinfo@]host[:port][/db]`, read the way users write it rather than the
//! way RFC 3986 would: the userinfo ends at the **last** `@` of the URI (a host, a port
//! and a database number never hold one), so a password with an unencoded `/` or `@` is
//! still a password and never leaks into the host part. Percent-escapes in the userinfo
//! are decoded.
//!
//! The userinfo keeps its form ([`Credentials`]): `user:password`, `:password`, or a lone
//! word. redis-cli reads the lone word as the password; an experiment file, which may not
//! hold a password, reads it as the user. Each caller says which it means.
//!
//! Every error carries the URI with its userinfo masked ([`redact`]), however malformed
//! the rest is, so no message can echo a password.

use std::fmt;

/// The userinfo of a URI, as written.
#[derive(Clone, PartialEq, Eq)]
pub enum Credentials {
    /// `user:password` or `:password` (no user).
    Pair {
        user: Option<String>,
        password: String,
    },
    /// A lone word before the `@`: a password to redis-cli, a user to an experiment file.
    Lone(String),
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print a password, not even in a debug dump.
        match self {
            Credentials::Pair { user, .. } => write!(f, "Pair {{ user: {user:?}, password: *** }}"),
            Credentials::Lone(_) => write!(f, "Lone(***)"),
        }
    }
}

/// A parsed `redis://` or `rediss://` URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisUri {
    pub host: String,
    /// 6379 when the URI names none.
    pub port: u16,
    /// Whether the URI named a port.
    pub port_given: bool,
    pub credentials: Option<Credentials>,
    /// The database number after `/`.
    pub db: Option<u32>,
    /// `rediss://`: connect with TLS.
    pub tls: bool,
}

impl RedisUri {
    /// User and password the way redis-cli reads them (a lone word is the password).
    pub fn user_password(&self) -> (Option<String>, Option<String>) {
        match &self.credentials {
            None => (None, None),
            Some(Credentials::Pair { user, password }) => (user.clone(), Some(password.clone())),
            Some(Credentials::Lone(p)) => (None, Some(p.clone())),
        }
    }
}

/// A URI that could not be read: what was expected and why, with the URI masked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriError {
    /// The URI with its userinfo masked.
    pub shown: String,
    /// Why it was refused.
    pub why: String,
}

/// The form a URI must have, for messages.
pub const URI_FORM: &str = "redis[s]://[user[:password]@]host[:port][/db]";

impl fmt::Display for UriError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}': expected {URI_FORM} ({})", self.shown, self.why)
    }
}

impl std::error::Error for UriError {}

/// Parses a `redis://` or `rediss://` (TLS) URI.
///
/// # Errors
/// A [`UriError`] naming what is wrong, with the userinfo masked.
pub fn parse(value: &str) -> Result<RedisUri, UriError> {
    let err = |why: &str| UriError {
        shown: redact(value),
        why: why.to_string(),
    };
    let (rest, tls) = if let Some(r) = value.strip_prefix("redis://") {
        (r, false)
    } else if let Some(r) = value.strip_prefix("rediss://") {
        (r, true)
    } else {
        return Err(err("the scheme must be redis:// or rediss:// (TLS)"));
    };
    let (userinfo, after) = match rest.rfind('@') {
        Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
        None => (None, rest),
    };
    let (hostport, path) = match after.find('/') {
        Some(i) => (&after[..i], Some(&after[i + 1..])),
        None => (after, None),
    };
    let credentials = userinfo.map(|info| match info.split_once(':') {
        Some((u, p)) => Credentials::Pair {
            user: (!u.is_empty()).then(|| percent_decode(u)),
            password: percent_decode(p),
        },
        None => Credentials::Lone(percent_decode(info)),
    });
    let (host, port) = split_host_port(hostport).map_err(&err)?;
    let port_given = !port.is_empty();
    let port = if port.is_empty() {
        6379
    } else {
        match port.parse::<u16>() {
            Ok(p) if p > 0 => p,
            _ => return Err(err("the port must be a whole number from 1 to 65535")),
        }
    };
    let db = match path {
        None | Some("") => None,
        Some(p) => Some(
            p.parse::<u32>()
                .map_err(|_| err("the database after / must be a whole number"))?,
        ),
    };
    Ok(RedisUri {
        host: if host.is_empty() {
            "127.0.0.1".to_string()
        } else {
            host
        },
        port,
        port_given,
        credentials,
        db,
        tls,
    })
}

/// `host`, `host:port`, `[v6]` or `[v6]:port` → host and the port text ("" when none).
fn split_host_port(hostport: &str) -> Result<(String, &str), &'static str> {
    if let Some(h) = hostport.strip_prefix('[') {
        let end = h.find(']').ok_or("an IPv6 address needs a closing ]")?;
        let after = &h[end + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => p,
            None if after.is_empty() => "",
            None => return Err("unexpected text after the IPv6 address"),
        };
        return Ok((h[..end].to_string(), port));
    }
    Ok(match hostport.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), p),
        None => (hostport.to_string(), ""),
    })
}

/// The URI as it may be shown in a message: everything between `://` and the last `@`
/// masked, however malformed the rest is. The user stays visible where it can be told
/// apart (`user:***@host`); a lone word, which redis-cli reads as a password, does not.
/// Text that is no URI at all but holds an `@` is masked up to its last `@` too.
pub fn redact(value: &str) -> String {
    let (head, rest) = match value.find("://") {
        Some(i) => value.split_at(i + 3),
        None => ("", value),
    };
    let Some(at) = rest.rfind('@') else {
        return value.to_string();
    };
    let info = &rest[..at];
    let masked = match info.split_once(':') {
        Some((u, _)) if !u.contains(['/', '@']) => format!("{u}:***"),
        _ => "***".to_string(),
    };
    format!("{head}{masked}@{}", &rest[at + 1..])
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

    fn pair(u: &RedisUri) -> (Option<String>, Option<String>) {
        u.user_password()
    }

    #[test]
    fn reads_every_form() {
        let u = parse("redis://alice:s%40cret@example.com:6380/3").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.db),
            ("example.com", 6380, Some(3))
        );
        assert_eq!(pair(&u), (Some("alice".into()), Some("s@cret".into())));
        let u = parse("redis://:pw@[::1]:7000").unwrap();
        assert_eq!(u.host, "::1");
        assert_eq!(pair(&u), (None, Some("pw".into())));
        let u = parse("redis://localhost").unwrap();
        assert_eq!(
            (u.host.as_str(), u.port, u.db, u.tls),
            ("localhost", 6379, None, false)
        );
        assert!(!u.port_given);
        let u = parse("rediss://bob:pw@cache.example.com:6380").unwrap();
        assert!(u.tls && u.port_given);
        for bad in [
            "http://x",
            "redis://h:0",
            "redis://h:99999",
            "redis://h/x",
            "redis://[::1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_lone_word_is_kept_as_written() {
        let u = parse("redis://SECRET@host:1").unwrap();
        assert_eq!(u.credentials, Some(Credentials::Lone("SECRET".into())));
        assert_eq!(
            pair(&u),
            (None, Some("SECRET".into())),
            "redis-cli's reading"
        );
    }

    #[test]
    fn a_slash_or_at_in_the_password_stays_in_the_password() {
        let u = parse("redis://bob:p/q@host:6379").unwrap();
        assert_eq!(pair(&u), (Some("bob".into()), Some("p/q".into())));
        assert_eq!((u.host.as_str(), u.port), ("host", 6379));
        let u = parse("redis://bob:p@ss@host:6379/2").unwrap();
        assert_eq!(pair(&u), (Some("bob".into()), Some("p@ss".into())));
        assert_eq!((u.host.as_str(), u.db), ("host", Some(2)));
    }

    #[test]
    fn no_error_echoes_the_userinfo() {
        for (uri, secret) in [
            ("redis://u:topsecret@h:bad", "topsecret"),
            ("redis://bob:p/q@host:notaport", "p/q"),
            ("redis://bob:p@ss@host:0", "ss@"),
            ("redis://SECRET@host:99999", "SECRET"),
            ("redis://SECRET@[::1", "SECRET"),
            ("redis://bob:hunter2@h/notadb", "hunter2"),
            ("http://bob:hunter2@h", "hunter2"),
            ("redis:/bob:hunter2@h", "hunter2"),
            ("bob:hunter2@h:1", "hunter2"),
        ] {
            let e = parse(uri).unwrap_err().to_string();
            assert!(!e.contains(secret), "{uri}: {e}");
        }
        let e = parse("redis://u:topsecret@h:bad").unwrap_err().to_string();
        assert!(e.contains("u:***@h:bad"), "{e}");
    }

    #[test]
    fn redact_masks_whatever_the_shape() {
        assert_eq!(redact("redis://h:1"), "redis://h:1");
        assert_eq!(redact("redis://a:b@h:1"), "redis://a:***@h:1");
        assert_eq!(redact("redis://secret@h"), "redis://***@h");
        assert_eq!(redact("redis://a:b/c@d@h:1/0"), "redis://a:***@h:1/0");
        assert_eq!(redact("x@y"), "***@y");
    }

    #[test]
    fn debug_hides_passwords() {
        let u = parse("redis://alice:hunter2@h:1").unwrap();
        assert!(!format!("{u:?}").contains("hunter2"));
        let u = parse("redis://hunter2@h:1").unwrap();
        assert!(!format!("{u:?}").contains("hunter2"));
    }
}
