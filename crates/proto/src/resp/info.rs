//! The text of an `INFO` reply: `# Section` headers and `field:value` lines.
//!
//! `INFO` answers with one bulk string of CRLF-separated lines. A line that begins with
//! `#` names the section the following fields belong to (`# Server`, `# Memory`); every
//! other line with a `:` is a field, split at its first colon (values such as
//! `os:Linux 6.1 x86_64` or `executable:/usr/bin/redis-server` keep the rest whole);
//! blank lines and lines without a colon say nothing. Lines are trimmed of surrounding
//! white space (the CR included); keys and values are not trimmed further.
//!
//! [`lines`] is the one reader of that grammar; [`fields`] and [`sections`] are the two
//! shapes callers keep: a flat map (the provenance of a run, a single field such as
//! `cluster_enabled`) and a map per section (the facts kept with every trial).
//! Some values are themselves lists of `name=value` pairs separated by commas (the
//! `cmdstat_set:calls=3,usec=10,usec_per_call=3.33` lines of `INFO commandstats`, the
//! `db0:keys=3,expires=0` lines of `INFO keyspace`): [`pairs`] splits one such value.
//! Everything here works on text already received; reading the reply off a connection
//! belongs to the callers.

use std::collections::BTreeMap;

/// Section name given to fields that come before any header.
pub const DEFAULT_SECTION: &str = "default";

/// One meaningful line of `INFO` text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// A `# Name` header, as written (without the `#` and the spaces around the name).
    Section(&'a str),
    /// A `key:value` line.
    Field { key: &'a str, value: &'a str },
}

/// The headers and fields of `text`, in order; blank lines and lines that are neither
/// are left out.
pub fn lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    text.lines().map(str::trim).filter_map(|l| {
        if let Some(name) = l.strip_prefix('#') {
            Some(Line::Section(name.trim()))
        } else {
            l.split_once(':')
                .map(|(key, value)| Line::Field { key, value })
        }
    })
}

/// Every field of `text` in one map, whatever its section (a field named twice keeps
/// its last value).
pub fn fields(text: &str) -> BTreeMap<String, String> {
    lines(text)
        .filter_map(|l| match l {
            Line::Field { key, value } => Some((key.to_string(), value.to_string())),
            Line::Section(_) => None,
        })
        .collect()
}

/// The fields of `text` by section: `section → field → value`, section names in lower
/// case, fields before any header under [`DEFAULT_SECTION`]. A section without fields
/// is left out.
pub fn sections(text: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut section = DEFAULT_SECTION.to_string();
    for line in lines(text) {
        match line {
            Line::Section(name) => section = name.to_ascii_lowercase(),
            Line::Field { key, value } => {
                out.entry(section.clone())
                    .or_default()
                    .insert(key.to_string(), value.to_string());
            }
        }
    }
    out
}

/// The `name=value` pairs of one field value such as `calls=3,usec=10,usec_per_call=3.33`,
/// split at commas and at each pair's first `=`; a part without `=` is left out.
pub fn pairs(value: &str) -> BTreeMap<String, String> {
    value
        .split(',')
        .filter_map(|part| {
            let (k, v) = part.split_once('=')?;
            Some((k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVER_AND_CPU: &str = "# Server\r\nredis_version:7.0.15\r\nos:Linux 6.1 x86_64\r\n\
        executable:/usr/bin/redis-server\r\n\r\n# CPU\r\nused_cpu_sys:1.25\r\n\
        used_cpu_user:0.75\r\n";

    #[test]
    fn flat_fields_skip_headers_and_blank_lines() {
        let m = fields("# Server\r\nredis_version:7.0.15\r\nos:Linux 6.1 x86_64\r\n\r\n");
        assert_eq!(m.len(), 2);
        assert_eq!(m["redis_version"], "7.0.15");
        assert_eq!(m["os"], "Linux 6.1 x86_64");
    }

    #[test]
    fn values_keep_everything_after_the_first_colon() {
        let m = fields(SERVER_AND_CPU);
        assert_eq!(m["executable"], "/usr/bin/redis-server");
        let m = fields("config_file:C:\\redis\\redis.conf\r\n");
        assert_eq!(m["config_file"], "C:\\redis\\redis.conf");
    }

    #[test]
    fn sections_are_lower_case_and_keep_their_own_fields() {
        let s = sections(SERVER_AND_CPU);
        assert_eq!(s.keys().collect::<Vec<_>>(), vec!["cpu", "server"], "{s:?}");
        assert_eq!(s["server"]["redis_version"], "7.0.15");
        assert_eq!(s["server"].len(), 3);
        assert_eq!(s["cpu"]["used_cpu_sys"], "1.25");
        assert_eq!(s["cpu"]["used_cpu_user"], "0.75");
    }

    #[test]
    fn fields_before_any_header_go_to_the_default_section() {
        let s = sections("cluster_enabled:1\r\n# Keyspace\r\ndb0:keys=3,expires=0\r\n");
        assert_eq!(s[DEFAULT_SECTION]["cluster_enabled"], "1");
        assert_eq!(s["keyspace"]["db0"], "keys=3,expires=0");
    }

    #[test]
    fn a_hash_line_is_a_header_even_with_a_colon_or_without_a_space() {
        // Neither is ever a field of the section before it.
        let text = "# Server\r\nrun_id:abc\r\n#Replication\r\nrole:master\r\n#a:b\r\n";
        let got: Vec<Line<'_>> = lines(text).collect();
        assert_eq!(
            got,
            vec![
                Line::Section("Server"),
                Line::Field {
                    key: "run_id",
                    value: "abc"
                },
                Line::Section("Replication"),
                Line::Field {
                    key: "role",
                    value: "master"
                },
                Line::Section("a:b"),
            ]
        );
        assert!(!fields(text).contains_key("#a"));
        assert_eq!(sections(text)["replication"]["role"], "master");
    }

    #[test]
    fn lines_without_a_colon_and_empty_text_say_nothing() {
        assert!(fields("").is_empty());
        assert!(sections("\r\n\r\n").is_empty());
        assert!(fields("garbage line\r\n  \r\n").is_empty());
        // Keys and values are not trimmed beyond the line itself.
        assert_eq!(fields(" key : value \r\n")["key "], " value");
    }

    #[test]
    fn pairs_split_a_commandstats_value() {
        let p = pairs("calls=3,usec=10,usec_per_call=3.33,rejected_calls=0,failed_calls=1");
        assert_eq!(p.len(), 5);
        assert_eq!(p["calls"], "3");
        assert_eq!(p["usec_per_call"], "3.33");
        assert_eq!(p["failed_calls"], "1");
        assert!(pairs("").is_empty());
        assert_eq!(pairs("junk,a=b=c")["a"], "b=c");
    }
}
