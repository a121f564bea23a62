//! Errors of reading an experiment file, with the place they happened.
//!
//! A message names the file, line and column, the key, what was expected and what was
//! found; an unknown key comes with the closest valid key (Levenshtein distance), since
//! the usual cause is a typo (`test_tme`, `primary-metric`).

use std::fmt;

/// A problem in an experiment file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    /// The file as the user named it.
    pub file: String,
    /// 1-based line and column, when the problem has a place.
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// The key concerned (`experiment.rounds`, `variant[1].server`), when known.
    pub key: Option<String>,
    /// What was expected and what was found.
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let (Some(l), Some(c)) = (self.line, self.column) {
            write!(f, ":{l}:{c}")?;
        }
        f.write_str(": ")?;
        if let Some(k) = &self.key {
            write!(f, "key `{k}`: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for SpecError {}

/// 1-based (line, column) of byte `offset` in `text` (column counts characters).
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let mut cut = offset;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let before = &text[..cut];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

/// Levenshtein edit distance between two short strings.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a likely typo.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let norm = word.replace('-', "_").to_ascii_lowercase();
    candidates
        .iter()
        .map(|c| (edit_distance(&norm, c), *c))
        .filter(|(d, c)| *d <= (c.len() / 2).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The dotted key path of the table and key at byte `offset`: the last `[table]` or
/// `[[array]]` header before it (with the index of the array entry), plus the key on
/// the offending line.
pub fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let mut cut = offset;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let before = &text[..cut];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    let line = text[line_start..line_end].trim();
    let mut table: Option<String> = None;
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for l in text[..line_end].lines() {
        let l = l.trim();
        if let Some(name) = l.strip_prefix("[[").and_then(|r| r.split("]]").next()) {
            let name = name.trim().to_string();
            let n = counts.entry(name.clone()).or_insert(0);
            table = Some(format!("{name}[{n}]"));
            *n += 1;
        } else if let Some(name) = l.strip_prefix('[').and_then(|r| r.split(']').next()) {
            let name = name.trim();
            // `[variant.hooks]` belongs to the latest `[[variant]]`
            let head = name.split('.').next().unwrap_or(name);
            table = Some(match counts.get(head) {
                Some(n) if name.contains('.') => {
                    format!("{head}[{}]{}", n - 1, &name[head.len()..])
                }
                _ => name.to_string(),
            });
        }
    }
    let key = if line.starts_with('[') {
        None
    } else {
        line.split('=')
            .next()
            .map(|k| k.trim().trim_matches('"').to_string())
            .filter(|k| !k.is_empty() && !k.starts_with('#'))
    };
    match (table, key) {
        (Some(t), Some(k)) => Some(format!("{t}.{k}")),
        (Some(t), None) => Some(t),
        (None, Some(k)) => Some(k),
        (None, None) => None,
    }
}

/// Builds a [`SpecError`] for a problem at byte `offset` of `text`.
pub fn at(
    file: &str,
    text: &str,
    offset: usize,
    key: Option<String>,
    message: String,
) -> SpecError {
    let (line, column) = line_col(text, offset);
    SpecError {
        file: file.to_string(),
        line: Some(line),
        column: Some(column),
        key: key.or_else(|| key_at(text, offset)),
        message,
    }
}

/// Rewrites a `toml` deserialization error into a [`SpecError`].
pub fn from_toml(file: &str, text: &str, err: &toml::de::Error) -> SpecError {
    let raw = err.message().trim().to_string();
    let offset = err.span().map_or(0, |s| s.start);
    let message = reword(&raw);
    let mut key = err.span().and_then(|_| key_at(text, offset));
    if let Some(unknown) = backticked(&raw, "unknown field `") {
        // the span points at the unknown key itself
        if let Some(k) = key.as_mut() {
            if !k.ends_with(&unknown) {
                k.push('.');
                k.push_str(&unknown);
            }
        }
    }
    let (line, column) = line_col(text, offset);
    SpecError {
        file: file.to_string(),
        line: err.span().map(|_| line),
        column: err.span().map(|_| column),
        key,
        message,
    }
}

fn backticked(text: &str, prefix: &str) -> Option<String> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    Some(rest[..rest.find('`')?].to_string())
}

/// serde's wording made specific: unknown keys get a suggestion, untagged enums say
/// what they accept.
fn reword(raw: &str) -> String {
    if let Some(unknown) = backticked(raw, "unknown field `") {
        let expected: Vec<&str> = raw
            .split("expected ")
            .nth(1)
            .map(|list| {
                list.split('`')
                    .enumerate()
                    .filter(|(i, _)| i % 2 == 1)
                    .map(|(_, s)| s)
                    .collect()
            })
            .unwrap_or_default();
        return match closest(&unknown, &expected) {
            Some(c) => format!("unknown key `{unknown}`; did you mean `{c}`?"),
            None => format!(
                "unknown key `{unknown}`; valid keys here: {}",
                expected.join(", ")
            ),
        };
    }
    if raw.contains("untagged enum DurationValue") {
        return "expected a duration: a number of seconds or a string such as \"500ms\", \"5s\", \"2m\"".into();
    }
    if raw.contains("untagged enum StringOrList") {
        return "expected a string or a list of strings".into();
    }
    raw.replace("missing field", "missing key")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_and_suggestions() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            closest("test_tme", &["test_time", "name"]),
            Some("test_time")
        );
        assert_eq!(
            closest("primary-metric", &["primary_metric"]),
            Some("primary_metric")
        );
        assert_eq!(closest("zzzzzzzz", &["name", "rounds"]), None);
    }

    #[test]
    fn positions_and_keys() {
        let text = "[experiment]\nname = 1\n\n[[variant]]\nname = \"a\"\n[[variant]]\nserver = 3\n[variant.hooks]\nsetup = 1\n";
        assert_eq!(line_col(text, 0), (1, 1));
        let off = text.find("server").unwrap();
        assert_eq!(line_col(text, off), (7, 1));
        assert_eq!(key_at(text, off).as_deref(), Some("variant[1].server"));
        let off = text.find("setup").unwrap();
        assert_eq!(key_at(text, off).as_deref(), Some("variant[1].hooks.setup"));
        let off = text.find("name = 1").unwrap();
        assert_eq!(key_at(text, off).as_deref(), Some("experiment.name"));
    }
}
