//! The configuration check in words: the terminal's lines after an experiment and the
//! report's "Configuration check" part of the provenance. Between builds of one server
//! every undeclared difference is named in the terminal (there are few, and each is a
//! second cause for an effect); between different server software (valkey against
//! redis) dozens of defaults differ by design, so the terminal gives one line per
//! variant — `valkey (valkey 8.1.0) vs baseline redis (redis 7.0.15): 41 settings differ;
//! see the report` — and the report lists them all.

use crate::doc::{Block, Cell};
use resplab_results::configcheck::{ConfigCheck, SettingDifference, VariantConfig};

/// The terminal's lines; `see` tells where the full list is (`resplab report demo`).
pub fn terminal_lines(c: &ConfigCheck, see: &str) -> Vec<String> {
    if c.is_clean() {
        return vec![
            "config check: every variant's server configuration matches the baseline's apart \
             from the declared settings"
                .into(),
        ];
    }
    let base = c.baseline_server.as_deref();
    let mut out = Vec::new();
    let mut listed: Vec<(&VariantConfig, &SettingDifference)> = Vec::new();
    for v in c.variants.iter().filter(|v| !v.differences.is_empty()) {
        if v.is_other_software(base) {
            out.push(format!(
                "config check: {} vs baseline {}: {} settings differ; see the report ({see})",
                named(&v.variant, v.server.as_deref()),
                named(&c.baseline, base),
                v.differences.len()
            ));
        } else {
            listed.extend(v.differences.iter().map(|d| (v, d)));
        }
    }
    if !listed.is_empty() {
        out.push(format!(
            "config check: WARNING: settings that differ from the baseline `{}` without being \
             declared (a second cause for any effect; declare them in the variant or make them equal):",
            c.baseline
        ));
        for (v, d) in listed {
            out.push(if d.secret {
                format!(
                    "  {}: {} differs from the baseline (value hidden)",
                    v.variant, d.setting
                )
            } else {
                format!(
                    "  {}: {} is {} (baseline {})",
                    v.variant,
                    d.setting,
                    shown(&d.variant_value),
                    shown(&d.baseline_value)
                )
            });
        }
    }
    out
}

/// The report's part: a sentence per variant, then every difference in one table.
pub(crate) fn blocks(c: &ConfigCheck) -> Vec<Block> {
    let mut blocks = vec![Block::Heading {
        level: 3,
        text: "Configuration check".into(),
        id: "provenance-config-check".into(),
    }];
    let base = c.baseline_server.as_deref();
    let mut sentences: Vec<String> = c
        .variants
        .iter()
        .map(|v| {
            let count = match v.differences.len() {
                0 => "no setting differs".to_string(),
                1 => "1 setting differs".to_string(),
                n => format!("{n} settings differ"),
            };
            format!(
                "{} vs baseline {}: {count}{}",
                named(&v.variant, v.server.as_deref()),
                named(&c.baseline, base),
                if v.is_other_software(base) {
                    " (different server software: defaults differ by design)"
                } else {
                    ""
                }
            )
        })
        .collect();
    sentences.insert(
        0,
        "CONFIG GET * of each variant's first trial against the baseline's, apart from the \
         settings a variant declares and those that change with every start (port, dir, files)."
            .into(),
    );
    blocks.push(Block::List(sentences));
    let rows: Vec<Vec<Cell>> = c
        .variants
        .iter()
        .flat_map(|v| {
            v.differences.iter().map(|d| {
                let value = |x: &Option<String>| {
                    Cell::text(match x {
                        _ if d.secret => "(hidden)".to_string(),
                        Some(v) => v.clone(),
                        None => "(absent)".to_string(),
                    })
                };
                vec![
                    Cell::text(v.variant.clone()),
                    Cell::text(d.setting.clone()),
                    value(&d.baseline_value),
                    value(&d.variant_value),
                ]
            })
        })
        .collect();
    if !rows.is_empty() {
        blocks.push(Block::Table {
            header: vec![
                "variant".into(),
                "setting".into(),
                format!("baseline ({})", c.baseline),
                "variant's value".into(),
            ],
            numeric: vec![false; 4],
            rows,
        });
    }
    blocks
}

/// `name (software)`, or the name alone.
fn named(name: &str, server: Option<&str>) -> String {
    match server {
        Some(s) => format!("{name} ({s})"),
        None => name.to_string(),
    }
}

fn shown(v: &Option<String>) -> String {
    v.as_deref()
        .map_or("(absent)".to_string(), |s| format!("`{s}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(setting: &str, a: &str, b: &str) -> SettingDifference {
        SettingDifference {
            setting: setting.into(),
            baseline_value: Some(a.into()),
            variant_value: Some(b.into()),
            secret: false,
        }
    }

    fn check(server: &str, n: usize) -> ConfigCheck {
        ConfigCheck {
            baseline: "redis".into(),
            baseline_server: Some("redis 7.0.15".into()),
            variants: vec![VariantConfig {
                variant: "other".into(),
                server: Some(server.into()),
                differences: (0..n).map(|i| diff(&format!("s{i}"), "1", "2")).collect(),
            }],
        }
    }

    #[test]
    fn other_software_is_one_line_with_the_count() {
        let lines = terminal_lines(&check("valkey 8.1.0", 41), "resplab report x");
        assert_eq!(
            lines,
            [
                "config check: other (valkey 8.1.0) vs baseline redis (redis 7.0.15): 41 settings \
              differ; see the report (resplab report x)"
            ]
        );
        let Block::Table { rows, .. } = &blocks(&check("valkey 8.1.0", 41))[2] else {
            panic!("no table");
        };
        assert_eq!(rows.len(), 41);
    }

    #[test]
    fn the_same_software_lists_every_setting_and_a_clean_check_says_so() {
        let lines = terminal_lines(&check("redis 7.2.4", 2), "resplab report x");
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert_eq!(lines[1], "  other: s0 is `2` (baseline `1`)");
        let clean = terminal_lines(&check("redis 7.2.4", 0), "x");
        assert!(clean[0].contains("matches the baseline's"), "{clean:?}");
        assert_eq!(blocks(&check("redis 7.2.4", 0)).len(), 2, "no empty table");
    }
}
