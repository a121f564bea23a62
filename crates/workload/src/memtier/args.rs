//! memtier_benchmark's argument syntax: which options exist, which take a value, and
//! how a command line splits into `(option, value)` pairs.
//!
//! The rules are getopt_long's, as memtier uses them: a long option takes its value as
//! `--opt=value` or `--opt value`; a short one as `-t 4` or `-t4`; short options without
//! a value may be grouped (`-4D`). A long option may be abbreviated to any unambiguous
//! prefix (`--thread 4`), as getopt_long allows. Operands (words that are no option)
//! are refused: memtier ignores them silently, which hides typos. The pairs come out in
//! command-line order, so the caller applies "the last one wins" and memtier's rule that
//! `--command-ratio` and `--command-key-pattern` belong to the `--command` before them.

use super::MemtierError;

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Takes {
    Value,
    Nothing,
}

/// Every option of memtier_benchmark 2.x (`memtier_benchmark --help`): long name,
/// short letter, and whether it takes a value.
const OPTIONS: &[(&str, Option<char>, Takes)] = {
    use Takes::{Nothing as N, Value as V};
    &[
        ("server", Some('s'), V),
        ("host", Some('h'), V),
        ("port", Some('p'), V),
        ("unix-socket", Some('S'), V),
        ("ipv4", Some('4'), N),
        ("ipv6", Some('6'), N),
        ("protocol", Some('P'), V),
        ("tls", None, N),
        ("cert", None, V),
        ("key", None, V),
        ("cacert", None, V),
        ("tls-skip-verify", None, N),
        ("sni", None, V),
        ("tls-protocols", None, V),
        ("out-file", Some('o'), V),
        ("hdr-file-prefix", None, V),
        ("client-stats", None, V),
        ("run-count", Some('x'), V),
        ("debug", Some('D'), N),
        ("show-config", None, N),
        ("hide-histogram", None, N),
        ("print-percentiles", None, V),
        ("print-all-runs", None, N),
        ("distinct-client-seed", None, N),
        ("randomize", None, N),
        ("requests", Some('n'), V),
        ("clients", Some('c'), V),
        ("threads", Some('t'), V),
        ("test-time", None, V),
        ("ratio", None, V),
        ("pipeline", None, V),
        ("data-size", Some('d'), V),
        ("data-offset", None, V),
        ("random-data", Some('R'), N),
        ("data-size-range", None, V),
        ("data-size-list", None, V),
        ("data-size-pattern", None, V),
        ("expiry-range", None, V),
        ("data-import", None, V),
        ("data-verify", None, N),
        ("verify-only", None, N),
        ("generate-keys", None, N),
        ("key-prefix", None, V),
        ("key-minimum", None, V),
        ("key-maximum", None, V),
        ("key-pattern", None, V),
        ("key-stddev", None, V),
        ("key-median", None, V),
        ("key-zipf-exp", None, V),
        ("reconnect-interval", None, V),
        ("reconnect-on-error", None, N),
        ("max-reconnect-attempts", None, V),
        ("reconnect-backoff-factor", None, V),
        ("connection-timeout", None, V),
        ("thread-conn-start-min-jitter-micros", None, V),
        ("thread-conn-start-max-jitter-micros", None, V),
        ("multi-key-get", None, V),
        ("authenticate", Some('a'), V),
        ("select-db", None, V),
        ("no-expiry", None, N),
        ("wait-ratio", None, V),
        ("num-slaves", None, V),
        ("wait-timeout", None, V),
        ("json-out-file", None, V),
        ("cluster-mode", None, N),
        ("help", None, N),
        ("version", Some('v'), N),
        ("command", None, V),
        ("command-key-pattern", None, V),
        ("command-ratio", None, V),
        ("monitor-input", None, V),
        ("monitor-pattern", None, V),
        ("command-stats-breakdown", None, V),
        ("rate-limiting", None, V),
        ("uri", Some('u'), V),
        ("statsd-host", None, V),
        ("statsd-port", None, V),
        ("statsd-prefix", None, V),
        ("statsd-run-label", None, V),
        ("graphite-port", None, V),
        ("scan-incremental-iteration", None, N),
        ("scan-incremental-max-iterations", None, V),
        ("clients-start", None, V),
        ("clients-step", None, V),
        ("step-duration", None, V),
    ]
};

/// One option as given: its long name (`"threads"` for `-t` too) and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Given {
    /// The long name, without dashes.
    pub name: &'static str,
    /// The value; `None` for options that take none.
    pub value: Option<String>,
}

impl Given {
    /// The option as memtier spells it in messages: `--threads`.
    pub fn flag(&self) -> String {
        format!("--{}", self.name)
    }

    /// The value (empty for options that take none).
    pub fn text(&self) -> &str {
        self.value.as_deref().unwrap_or("")
    }
}

/// Whether `name` (long, without dashes) is one of memtier_benchmark's options.
pub fn is_memtier_option(name: &str) -> bool {
    OPTIONS.iter().any(|(long, _, _)| *long == name)
}

/// The long names of every option (for tests and documentation).
pub fn names() -> impl Iterator<Item = &'static str> {
    OPTIONS.iter().map(|(long, _, _)| *long)
}

/// Whether option `name` takes a value (false for unknown names).
pub fn takes_value(name: &str) -> bool {
    OPTIONS
        .iter()
        .any(|(long, _, takes)| *long == name && *takes == Takes::Value)
}

/// Splits a memtier command line (without the program name) into options.
///
/// # Errors
/// An unknown or ambiguous option, an option missing its value, a value given to an
/// option that takes none, or an operand.
pub fn split(args: &[String]) -> Result<Vec<Given>, MemtierError> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let (name, takes) = find_long(name, arg)?;
            let value = match (takes, inline) {
                (Takes::Nothing, Some(_)) => {
                    return Err(MemtierError::usage(format!(
                        "option --{name} takes no value (found '{arg}')"
                    )))
                }
                (Takes::Nothing, None) => None,
                (Takes::Value, Some(v)) => Some(v),
                (Takes::Value, None) => Some(next_value(args, &mut i, name)?),
            };
            out.push(Given { name, value });
        } else if arg.len() > 1 && arg.starts_with('-') {
            split_short(arg, args, &mut i, &mut out)?;
        } else {
            return Err(MemtierError::usage(format!(
                "unexpected argument '{arg}': memtier_benchmark takes options only (like --threads=4)"
            )));
        }
    }
    Ok(out)
}

/// A group of short options (`-t4`, `-4D`, `-c 10`).
fn split_short(
    arg: &str,
    args: &[String],
    i: &mut usize,
    out: &mut Vec<Given>,
) -> Result<(), MemtierError> {
    let body = &arg[1..];
    for (pos, c) in body.char_indices() {
        let Some((name, _, takes)) = OPTIONS.iter().find(|(_, s, _)| *s == Some(c)) else {
            return Err(MemtierError::usage(format!(
                "unknown option -{c} in '{arg}' (resplab memtier takes memtier_benchmark's options; see --help)"
            )));
        };
        if *takes == Takes::Value {
            let rest = &body[pos + c.len_utf8()..];
            let value = if rest.is_empty() {
                next_value(args, i, name)?
            } else {
                rest.to_string()
            };
            out.push(Given {
                name,
                value: Some(value),
            });
            return Ok(());
        }
        out.push(Given { name, value: None });
    }
    Ok(())
}

/// The option a long name (or an unambiguous prefix of one) stands for.
fn find_long(name: &str, arg: &str) -> Result<(&'static str, Takes), MemtierError> {
    if let Some((long, _, takes)) = OPTIONS.iter().find(|(l, _, _)| *l == name) {
        return Ok((long, *takes));
    }
    let matches: Vec<_> = OPTIONS
        .iter()
        .filter(|(l, _, _)| !name.is_empty() && l.starts_with(name))
        .collect();
    match matches.as_slice() {
        [(long, _, takes)] => Ok((long, *takes)),
        [] => Err(MemtierError::usage(format!(
            "unknown option '{arg}' (resplab memtier takes memtier_benchmark's options; see --help)"
        ))),
        many => Err(MemtierError::usage(format!(
            "ambiguous option '{arg}': it could be {}",
            many.iter()
                .map(|(l, _, _)| format!("--{l}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

fn next_value(args: &[String], i: &mut usize, name: &str) -> Result<String, MemtierError> {
    match args.get(*i) {
        Some(v) => {
            *i += 1;
            Ok(v.clone())
        }
        None => Err(MemtierError::usage(format!(
            "option --{name} requires a value"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn pairs(s: &str) -> Vec<(&'static str, Option<String>)> {
        split(&words(s))
            .unwrap()
            .into_iter()
            .map(|g| (g.name, g.value))
            .collect()
    }

    #[test]
    fn long_short_inline_and_grouped_forms() {
        assert_eq!(
            pairs("--threads=4 --clients 10 -n5 -d 100 -4D --hide-histogram --pipe 2"),
            vec![
                ("threads", Some("4".into())),
                ("clients", Some("10".into())),
                ("requests", Some("5".into())),
                ("data-size", Some("100".into())),
                ("ipv4", None),
                ("debug", None),
                ("hide-histogram", None),
                ("pipeline", Some("2".into())),
            ]
        );
        // A value may start with a dash and may be empty.
        assert_eq!(
            pairs("--key-prefix -x- --sni="),
            vec![
                ("key-prefix", Some("-x-".into())),
                ("sni", Some(String::new()))
            ]
        );
    }

    #[test]
    fn mistakes_are_named() {
        let msg = |s: &str| split(&words(s)).unwrap_err().to_string();
        assert!(msg("--thread-count 4").contains("unknown option '--thread-count'"));
        assert!(msg("--key-m 3").contains("ambiguous option '--key-m'"));
        assert!(msg("--thread 3").contains("ambiguous option"));
        assert!(msg("-q").contains("unknown option -q"));
        assert!(msg("--threads").contains("--threads requires a value"));
        assert!(msg("--tls=yes").contains("--tls takes no value"));
        assert!(msg("4").contains("unexpected argument '4'"));
        assert!(is_memtier_option("distinct-client-seed"));
        assert!(!is_memtier_option("rate"));
    }
}
