//! `go test -bench` output, as described by the Go benchmark data format
//! (golang.org/design/14313-benchmark-format).
//!
//! Two kinds of lines matter:
//! - configuration lines `key: value`, where the key starts with a lower-case letter and
//!   has no spaces and no upper-case letters (`goos: linux`, `pkg: example.com/x`). A
//!   configuration line stays in force until the same key appears again;
//! - result lines `BenchmarkName[-N] <iterations> <value> <unit> [<value> <unit> …]`,
//!   where the character after `Benchmark` is not a lower-case letter. `-N` is the
//!   GOMAXPROCS suffix; it is part of the name as benchstat prints it (`Ping-2`).
//!
//! Everything else (`PASS`, `ok …`, test logs) is ignored. Every value/unit pair becomes
//! one observation in its own unit (`ns/op`, `B/op`, `allocs/op`, `MB/s`, custom units);
//! the benchstat renderer converts units for display the way benchstat does.

use super::{Ctx, ImportError, Imported};
use crate::sample::{Config, Metric};
use std::collections::HashMap;
use std::sync::Arc;

/// True when `line` is a benchmark result line.
pub fn is_result_line(line: &str) -> bool {
    parse_result(line).is_some()
}

/// A parsed result line: name (without `Benchmark`), iterations, value/unit pairs.
/// A result line: name, iterations, and (value, unit) pairs.
type ResultLine<'a> = (&'a str, u64, Vec<(f64, &'a str)>);

fn parse_result(line: &str) -> Option<ResultLine<'_>> {
    let rest = line.strip_prefix("Benchmark")?;
    if let Some(c) = rest.chars().next() {
        if c.is_lowercase() {
            return None;
        }
    }
    let mut fields = rest.split_whitespace();
    let name = fields.next()?;
    let iterations: u64 = fields.next()?.parse().ok()?;
    let mut pairs = Vec::new();
    while let Some(v) = fields.next() {
        let unit = fields.next()?;
        let value: f64 = v.parse().ok()?;
        pairs.push((value, unit));
    }
    if pairs.is_empty() {
        return None;
    }
    Some((name, iterations, pairs))
}

/// A configuration line's key and value.
fn parse_config(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':')?;
    let mut chars = key.chars();
    let first = chars.next()?;
    if !first.is_lowercase() {
        return None;
    }
    if key.chars().any(|c| c.is_whitespace() || c.is_uppercase()) {
        return None;
    }
    if !(value.is_empty() || value.starts_with(' ') || value.starts_with('\t')) {
        return None;
    }
    Some((key, value.trim()))
}

/// Imports `go test -bench` output.
///
/// # Errors
/// [`ImportError::File`] when the file holds no benchmark result line.
pub fn import(bytes: &[u8], ctx: &mut Ctx<'_>) -> Result<Imported, ImportError> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = Imported::default();
    let mut config: Vec<(String, String)> = Vec::new();
    let mut current: Option<Config> = None;
    let mut metrics: HashMap<String, Arc<Metric>> = HashMap::new();
    for (index, raw) in text.split('\n').enumerate() {
        let line_no = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let line = raw.trim_end_matches('\r');
        if let Some((name, _iters, pairs)) = parse_result(line) {
            let cfg = current
                .get_or_insert_with(|| Arc::new(config.clone()))
                .clone();
            for (value, unit) in pairs {
                let metric = match metrics.get(unit) {
                    Some(m) => m.clone(),
                    None => {
                        let m = ctx.interner.metric(Metric::from_unit(unit, unit));
                        metrics.insert(unit.to_string(), m.clone());
                        m
                    }
                };
                let mut obs = ctx.observation(name, &metric, value, Some(line_no));
                obs.config = Some(cfg.clone());
                out.observations.push(obs);
            }
        } else if let Some((key, value)) = parse_config(line) {
            match config.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = value.to_string(),
                None => config.push((key.to_string(), value.to_string())),
            }
            current = None;
        }
    }
    if out.observations.is_empty() {
        return Err(ctx.file_error(
            "expected `go test -bench` result lines (`BenchmarkName-N <iterations> <value> \
             <unit> …`), found none",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines() {
        let (n, i, p) =
            parse_result("BenchmarkPing-2   \t   10000\t    150674 ns/op\t     188 B/op").unwrap();
        assert_eq!(n, "Ping-2");
        assert_eq!(i, 10000);
        assert_eq!(p, vec![(150674.0, "ns/op"), (188.0, "B/op")]);
        assert!(parse_result("Benchmarking is fun").is_none());
        assert!(parse_result("BenchmarkX 10 5").is_none());
        assert!(parse_result("Benchmark 10 5 ns/op").is_none());
    }

    #[test]
    fn config_lines() {
        assert_eq!(parse_config("goos: linux"), Some(("goos", "linux")));
        assert_eq!(parse_config("cpu: AMD EPYC"), Some(("cpu", "AMD EPYC")));
        assert!(parse_config("PASS").is_none());
        assert!(parse_config("ok  \texample.com/x\t1s").is_none());
        assert!(parse_config("Goos: x").is_none());
    }
}
