//! Secrets never stored or printed: which server settings and command-line words hold a
//! password, and how they are shown instead.
//!
//! A server's `CONFIG GET *` holds `requirepass`, `masterauth` and the TLS key-file
//! passwords in plain text, and a server command line may carry `--requirepass …` or an
//! ACL rule with `>password`. Everything resplab keeps or shows of a server passes
//! through here first: the store applies [`redact_server_info`] when it writes a trial and
//! again when it reads one (files written by older versions), and the configuration check
//! words a differing secret as "value hidden".
//!
//! A hidden value keeps one fact: whether the setting was set. `""` stays `""`, anything
//! else becomes [`HIDDEN`], so "one variant has a password, the baseline none" is still
//! seen as a difference.

use std::collections::BTreeMap;

/// What a non-empty secret value is replaced by.
pub const HIDDEN: &str = "(hidden)";

/// Whether a server setting (a `CONFIG GET` name or a `--name` option) holds a secret:
/// any name containing `pass` (`requirepass`, `tls-key-file-pass`,
/// `tls-client-key-file-pass`, `sentinel-pass`…), `masterauth`, `masteruser`,
/// `primaryauth`, `primaryuser` and `user` (an ACL rule, which may hold `>password`).
pub fn is_secret_setting(name: &str) -> bool {
    let n = name.trim_start_matches('-').to_ascii_lowercase();
    n.contains("pass")
        || matches!(
            n.as_str(),
            "masterauth" | "masteruser" | "primaryauth" | "primaryuser" | "user" | "auth"
        )
}

/// The value as it may be kept or shown: [`HIDDEN`] for a non-empty secret.
pub fn redact_value(name: &str, value: &str) -> String {
    if is_secret_setting(name) && !value.is_empty() {
        HIDDEN.to_string()
    } else {
        value.to_string()
    }
}

/// Hides every secret of a configuration map in place.
pub fn redact_config(config: &mut BTreeMap<String, String>) {
    for (k, v) in config.iter_mut() {
        if is_secret_setting(k) && !v.is_empty() {
            *v = HIDDEN.to_string();
        }
    }
}

/// A command line with the values of its secret options hidden: the word after
/// `--requirepass`, `--masterauth`, `-a`, any `--…pass…` option, the words of a `--user`
/// ACL rule up to the next option, and `--name=value` forms of the same.
pub fn redact_command(command: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut hide_next = false;
    let mut in_acl_rule = false;
    for word in command.split(' ') {
        if word.is_empty() {
            out.push(String::new());
            continue;
        }
        if word.starts_with('-') {
            in_acl_rule = false;
            hide_next = false;
            if let Some((name, _)) = word.split_once('=') {
                if is_secret_setting(name) {
                    out.push(format!("{name}={HIDDEN}"));
                    continue;
                }
            }
            let name = word.trim_start_matches('-');
            if word == "-a" || (word.starts_with("--") && is_secret_setting(name)) {
                if name.eq_ignore_ascii_case("user") {
                    in_acl_rule = true;
                } else {
                    hide_next = true;
                }
            }
            out.push(word.to_string());
            continue;
        }
        if hide_next {
            hide_next = false;
            out.push(HIDDEN.to_string());
        } else if in_acl_rule && (word.starts_with('>') || word.starts_with('#')) {
            out.push(HIDDEN.to_string());
        } else {
            out.push(word.to_string());
        }
    }
    out.join(" ")
}

/// Hides the secrets of what is kept about a server: every section's secret settings
/// (`config` holds `CONFIG GET *`) and the secret options of a stored server command
/// (any key ending in `command`).
pub fn redact_server_info(info: &mut BTreeMap<String, BTreeMap<String, String>>) {
    for section in info.values_mut() {
        for (k, v) in section.iter_mut() {
            if is_secret_setting(k) && !v.is_empty() {
                *v = HIDDEN.to_string();
            } else if k.ends_with("command") {
                *v = redact_command(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_settings_by_name() {
        for s in [
            "requirepass",
            "masterauth",
            "masteruser",
            "tls-key-file-pass",
            "tls-client-key-file-pass",
            "REQUIREPASS",
            "--requirepass",
            "user",
        ] {
            assert!(is_secret_setting(s), "{s}");
        }
        for s in [
            "port",
            "maxmemory",
            "appendonly",
            "tls-auth-clients",
            "aclfile",
        ] {
            assert!(!is_secret_setting(s), "{s}");
        }
    }

    #[test]
    fn hidden_values_keep_set_or_unset() {
        let mut c: BTreeMap<String, String> = [
            ("requirepass", "hunter2"),
            ("masterauth", ""),
            ("port", "6379"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        redact_config(&mut c);
        assert_eq!(c["requirepass"], HIDDEN);
        assert_eq!(c["masterauth"], "");
        assert_eq!(c["port"], "6379");
    }

    #[test]
    fn command_lines_lose_their_secrets() {
        let c = "redis-server --port 1 --requirepass hunter2 --masterauth=s3 --user bob on >pw1 #abcd ~* +@all --save ''";
        let r = redact_command(c);
        for s in ["hunter2", "s3", "pw1", "abcd"] {
            assert!(!r.contains(s), "{r}");
        }
        assert!(
            r.contains("--port 1") && r.contains("--save ''") && r.contains("+@all"),
            "{r}"
        );
        assert_eq!(
            redact_command("redis-cli -a pw ping"),
            format!("redis-cli -a {HIDDEN} ping")
        );
    }

    #[test]
    fn server_info_sections() {
        let mut info = BTreeMap::new();
        info.insert(
            "config".to_string(),
            [("requirepass".to_string(), "hunter2".to_string())].into(),
        );
        info.insert(
            "resplab".to_string(),
            [(
                "server_command".to_string(),
                "redis-server --requirepass hunter2".to_string(),
            )]
            .into(),
        );
        redact_server_info(&mut info);
        let text = format!("{info:?}");
        assert!(!text.contains("hunter2"), "{text}");
    }
}
