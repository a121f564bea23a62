//! The check that variants differ only in what they declare.
//!
//! Two variants of an experiment should run the same server configuration apart from the
//! declared difference; anything else that differs (a default changed by another build,
//! a setting left over in a config file) is a second cause for any effect measured. Each
//! trial stores the server's `CONFIG GET *`; this module compares every variant's
//! configuration with the baseline's and names the settings that differ although no
//! variant declares them.
//!
//! Declared are: the settings a variant's server command passes as `--name value`, its
//! `config` (`CONFIG SET`) entries, and those of the baseline. Settings that differ from
//! one server execution to the next whatever the variant (`port`, `dir`, file names
//! derived from them) are not compared.

use crate::model::{Experiment, ServerSource, Variant};
use resplab_results::configcheck::{ConfigCheck, SettingDifference, VariantConfig};
use resplab_results::secrets;
use resplab_store::Store;
use std::collections::{BTreeMap, BTreeSet};

/// Settings that change with every execution, not with the variant.
const PER_EXECUTION: [&str; 8] = [
    "port",
    "dir",
    "pidfile",
    "logfile",
    "unixsocket",
    "tls-port",
    "cluster-config-file",
    "syslog-ident",
];

/// One setting that differs between a variant and the baseline without being declared.
/// The values of a secret setting are hidden ([`Undeclared::is_secret`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undeclared {
    pub variant: String,
    pub setting: String,
    pub baseline_value: Option<String>,
    pub variant_value: Option<String>,
}

impl Undeclared {
    /// Whether the setting holds a secret (its values are hidden).
    pub fn is_secret(&self) -> bool {
        secrets::is_secret_setting(&self.setting)
    }
}

/// The settings `variant` declares: `--name` options of its server command (for a
/// toggle variant, of the variant it runs in) and its `CONFIG SET` entries, lower-cased.
pub fn declared(exp: &Experiment, variant: &Variant) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = variant
        .config
        .iter()
        .map(|(k, _)| k.to_ascii_lowercase())
        .collect();
    let command = match &variant.server {
        ServerSource::Spawn { command } | ServerSource::Cluster { command, .. } => Some(command),
        ServerSource::Toggle { of, .. } => {
            exp.variants
                .iter()
                .find(|v| &v.name == of)
                .and_then(|v| match &v.server {
                    ServerSource::Spawn { command } => Some(command),
                    _ => None,
                })
        }
        ServerSource::Address { .. } | ServerSource::None => None,
    };
    for word in command.into_iter().flatten() {
        if let Some(name) = word.strip_prefix("--") {
            let name = name.split('=').next().unwrap_or(name);
            if !name.is_empty() {
                out.insert(name.to_ascii_lowercase());
            }
        }
    }
    out
}

/// Compares each variant's configuration (`configs`: variant name → `CONFIG GET *`) with
/// the baseline's and returns the settings that differ undeclared. Variants without a
/// stored configuration are skipped.
pub fn undeclared_differences(
    exp: &Experiment,
    configs: &BTreeMap<String, BTreeMap<String, String>>,
) -> Vec<Undeclared> {
    let baseline = exp.baseline();
    let Some(base) = configs.get(&baseline.name) else {
        return Vec::new();
    };
    let base_declared = declared(exp, baseline);
    let mut out = Vec::new();
    for v in exp.variants.iter().skip(1) {
        let Some(cfg) = configs.get(&v.name) else {
            continue;
        };
        let declared_here = declared(exp, v);
        let keys: BTreeSet<&String> = base.keys().chain(cfg.keys()).collect();
        for k in keys {
            let lower = k.to_ascii_lowercase();
            if PER_EXECUTION.contains(&lower.as_str())
                || base_declared.contains(&lower)
                || declared_here.contains(&lower)
            {
                continue;
            }
            let (a, b) = (base.get(k), cfg.get(k));
            if a != b {
                // A secret is compared but never carried out of here.
                let shown = |v: Option<&String>| v.map(|v| secrets::redact_value(k, v));
                out.push(Undeclared {
                    variant: v.name.clone(),
                    setting: k.clone(),
                    baseline_value: shown(a),
                    variant_value: shown(b),
                });
            }
        }
    }
    out
}

/// The configuration check of a stored experiment, from the `CONFIG GET *` and
/// `INFO server` stored with each variant's first trial: `None` when fewer than two
/// variants have a stored configuration (nothing to compare).
pub fn gather(store: &Store, exp: &Experiment, experiment_id: i64) -> Option<ConfigCheck> {
    let trials = store.trials(experiment_id).ok()?;
    let mut configs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut servers: BTreeMap<String, String> = BTreeMap::new();
    for t in &trials {
        if configs.contains_key(&t.variant) {
            continue;
        }
        if let Ok(mut info) = store.server_info(t.id) {
            if let Some(s) = info.get("server").and_then(software) {
                servers.insert(t.variant.clone(), s);
            }
            if let Some(c) = info.remove("config") {
                configs.insert(t.variant.clone(), c);
            }
        }
    }
    if configs.len() < 2 {
        return None;
    }
    let diffs = undeclared_differences(exp, &configs);
    let variants = exp
        .variants
        .iter()
        .skip(1)
        .filter(|v| configs.contains_key(&v.name))
        .map(|v| VariantConfig {
            variant: v.name.clone(),
            server: servers.get(&v.name).cloned(),
            differences: diffs
                .iter()
                .filter(|d| d.variant == v.name)
                .map(|d| SettingDifference {
                    setting: d.setting.clone(),
                    secret: d.is_secret(),
                    baseline_value: d.baseline_value.clone().filter(|_| !d.is_secret()),
                    variant_value: d.variant_value.clone().filter(|_| !d.is_secret()),
                })
                .collect(),
        })
        .collect();
    Some(ConfigCheck {
        baseline: exp.baseline().name.clone(),
        baseline_server: servers.get(&exp.baseline().name).cloned(),
        variants,
    })
}

/// The server software and version of an `INFO server` section: `valkey 8.1.0` (Valkey
/// names itself in `server_name` and keeps `redis_version` for clients), `redis 7.0.15`.
pub fn software(server: &BTreeMap<String, String>) -> Option<String> {
    let name = server
        .get("server_name")
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .or_else(|| {
            server
                .contains_key("redis_version")
                .then(|| "redis".to_string())
        })?;
    let version = server
        .get(&format!("{name}_version"))
        .or_else(|| server.get("redis_version"))
        .or_else(|| {
            server
                .iter()
                .find(|(k, _)| k.ends_with("_version"))
                .map(|(_, v)| v)
        });
    Some(match version {
        Some(v) => format!("{name} {}", v.trim()),
        None => name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::{parse, Overrides};

    const EXP: &str = r#"
[experiment]
name = "c"
rounds = 2
test_time = "1s"

[[variant]]
name = "a"
server = "redis-server --port {port} --save '' --appendonly no --dir {dir}"

[[variant]]
name = "b"
server = "redis-server --port {port} --save '' --appendonly yes --dir {dir}"
config = { maxmemory-policy = "allkeys-lru" }

[[workload]]
name = "set"
tests = "set"
"#;

    fn cfg(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn only_undeclared_settings_are_named() {
        let exp = parse("c.toml", EXP, &Overrides::default()).unwrap();
        let b = &exp.variants[1];
        let d = declared(&exp, b);
        for k in ["port", "save", "appendonly", "dir", "maxmemory-policy"] {
            assert!(d.contains(k), "{k} in {d:?}");
        }
        let mut configs = BTreeMap::new();
        configs.insert(
            "a".to_string(),
            cfg(&[
                ("appendonly", "no"),
                ("dir", "/tmp/x1"),
                ("hz", "10"),
                ("maxmemory-policy", "noeviction"),
                ("pidfile", "/tmp/x1/p"),
                ("io-threads", "1"),
            ]),
        );
        configs.insert(
            "b".to_string(),
            cfg(&[
                ("appendonly", "yes"),
                ("dir", "/tmp/x2"),
                ("hz", "50"),
                ("maxmemory-policy", "allkeys-lru"),
                ("pidfile", "/tmp/x2/p"),
            ]),
        );
        let diffs = undeclared_differences(&exp, &configs);
        let names: Vec<&str> = diffs.iter().map(|d| d.setting.as_str()).collect();
        assert_eq!(names, ["hz", "io-threads"], "{diffs:?}");
        assert_eq!(diffs[0].variant_value.as_deref(), Some("50"));
        assert_eq!(diffs[1].variant_value, None);
        // Equal configurations: nothing to say.
        let same = configs["a"].clone();
        configs.insert("b".into(), same);
        assert!(undeclared_differences(&exp, &configs).is_empty());
    }

    #[test]
    fn software_is_named_by_server_name_before_redis_version() {
        let valkey = cfg(&[
            ("server_name", "valkey"),
            ("valkey_version", "8.1.0"),
            ("redis_version", "7.2.4"),
        ]);
        assert_eq!(software(&valkey).as_deref(), Some("valkey 8.1.0"));
        let redis = cfg(&[("redis_version", "7.0.15"), ("redis_mode", "standalone")]);
        assert_eq!(software(&redis).as_deref(), Some("redis 7.0.15"));
        assert_eq!(software(&cfg(&[("os", "Linux")])), None);
        let serve = cfg(&[
            ("server_name", "resplab-serve"),
            ("resplab_version", "0.1.0"),
        ]);
        assert_eq!(software(&serve).as_deref(), Some("resplab-serve 0.1.0"));
    }
}
