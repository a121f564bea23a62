//! hyperfine's `--export-json` files: `{"results": [{"command", "mean", "median",
//! "user", "system", "times", …}]}`.
//!
//! Each file is one trial. Every benchmarked command is a workload (named by its
//! `command` text, or its `--command-name`), with `mean_s`, `median_s`, `min_s`,
//! `max_s`, `user_s` and `system_s` in seconds, all lower-is-better. The individual
//! `times` are not separate trials (they ran back to back, not interleaved), so they are
//! summarized by hyperfine's own mean and median.

use super::{Ctx, ImportError, Imported};
use crate::sample::{Direction, Metric};
use serde::Deserialize;

#[derive(Deserialize)]
struct File {
    results: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    command: String,
    mean: Option<f64>,
    median: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    user: Option<f64>,
    system: Option<f64>,
}

/// True when `text` (the start of a JSON file) looks like hyperfine's export.
pub fn looks_like(text: &str) -> bool {
    text.contains("\"results\"") && text.contains("\"command\"") && text.contains("\"mean\"")
}

/// Imports one hyperfine JSON export.
///
/// # Errors
/// [`ImportError::File`] when the JSON does not have hyperfine's shape or holds no result.
pub fn import(bytes: &[u8], ctx: &mut Ctx<'_>) -> Result<Imported, ImportError> {
    let file: File = serde_json::from_slice(bytes).map_err(|e| {
        ctx.file_error(format!(
            "expected hyperfine --export-json output, found JSON that does not match it at \
             line {}, column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    let mut out = Imported::default();
    for r in &file.results {
        for (name, value) in [
            ("mean_s", r.mean),
            ("median_s", r.median),
            ("min_s", r.min),
            ("max_s", r.max),
            ("user_s", r.user),
            ("system_s", r.system),
        ] {
            let Some(v) = value else { continue };
            let metric = ctx
                .interner
                .metric(Metric::new(name, "s", Direction::LowerIsBetter));
            let o = ctx.observation(&r.command, &metric, v, None);
            out.observations.push(o);
        }
    }
    if out.observations.is_empty() {
        return Err(ctx.file_error("expected hyperfine results, found none"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{detect, Format, Interner};
    use std::sync::Arc;

    #[test]
    fn an_export_becomes_seconds_per_command() {
        let json = br#"{"results": [{"command": "sleep 0.1", "mean": 0.105, "stddev": 0.001,
            "median": 0.104, "user": 0.001, "system": 0.002, "min": 0.102, "max": 0.11,
            "times": [0.102, 0.104, 0.11], "exit_codes": [0, 0, 0]}]}"#;
        assert_eq!(detect(json), Format::Hyperfine);
        let mut interner = Interner::default();
        let mut ctx = Ctx {
            label: Arc::from("a"),
            file: Arc::from("h.json"),
            interner: &mut interner,
        };
        let got = import(json, &mut ctx).unwrap();
        let obs: Vec<_> = got.observations.iter().collect();
        assert_eq!(obs.len(), 6);
        assert_eq!(&*obs[0].workload, "sleep 0.1");
        assert_eq!(obs[0].metric.name, "mean_s");
        assert_eq!(obs[0].value, 0.105);
        assert_eq!(obs[0].metric.direction, Direction::LowerIsBetter);
        assert!(import(br#"{"results": []}"#, &mut ctx).is_err());
    }
}
