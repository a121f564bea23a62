//! The result of the configuration check of an experiment: for each variant, the server
//! settings (`CONFIG GET *`) that differ from the baseline's without being declared, and
//! which server software each ran (`valkey 8.1.0`, `redis 7.0.15`, from `INFO server`).
//! `experiment::configcheck` computes it from the stored trials; `report::configcheck`
//! says it in the terminal (one line per variant when the software differs: such lists
//! are long and expected) and lists it whole in the report.

/// The check of one experiment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigCheck {
    /// The baseline variant's name.
    pub baseline: String,
    /// The baseline's server software and version, when `INFO server` said.
    pub baseline_server: Option<String>,
    /// Every other variant with a stored configuration, in the experiment's order.
    pub variants: Vec<VariantConfig>,
}

/// One variant against the baseline.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VariantConfig {
    pub variant: String,
    /// Its server software and version, when `INFO server` said.
    pub server: Option<String>,
    /// The settings that differ from the baseline's undeclared, by name.
    pub differences: Vec<SettingDifference>,
}

/// One setting that differs. A secret setting's values are never carried here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SettingDifference {
    pub setting: String,
    /// `None`: the server has no such setting (or it is secret).
    pub baseline_value: Option<String>,
    pub variant_value: Option<String>,
    /// The values are hidden because the setting holds a secret.
    pub secret: bool,
}

impl ConfigCheck {
    /// True when no variant differs from the baseline.
    pub fn is_clean(&self) -> bool {
        self.variants.iter().all(|v| v.differences.is_empty())
    }
}

impl VariantConfig {
    /// True when this variant ran other server software than the baseline (`valkey`
    /// against `redis`; versions of one program are the same software).
    pub fn is_other_software(&self, baseline_server: Option<&str>) -> bool {
        let name = |s: &str| s.split_whitespace().next().unwrap_or("").to_string();
        match (self.server.as_deref(), baseline_server) {
            (Some(a), Some(b)) => name(a) != name(b),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn software_differs_by_name_not_version() {
        let v = |s: &str| VariantConfig {
            variant: "v".into(),
            server: Some(s.into()),
            differences: Vec::new(),
        };
        assert!(v("valkey 8.1.0").is_other_software(Some("redis 7.0.15")));
        assert!(!v("redis 7.2.4").is_other_software(Some("redis 7.0.15")));
        assert!(!v("redis 7.2.4").is_other_software(None));
    }
}
