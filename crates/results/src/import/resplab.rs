//! resplab run files: the JSON written by `resplab bench --json` ([`RunRecord`]).
//!
//! Each file is one trial. Every command (`SET`, `GET`) and the totals (workload `ALL`)
//! give `ops_per_sec` (higher is better) and latency in microseconds — mean, p50, p90,
//! p99, p99.9 and max (lower is better). A run that did not complete, or that carries
//! warnings, is still imported; its warnings and end reason become notes.

use super::{Ctx, ImportError, Imported};
use crate::run::{RunEnd, RunRecord};
use crate::sample::{Direction, Metric};

/// Imports one run record.
///
/// # Errors
/// [`ImportError::File`] when the JSON does not match the run-record schema.
pub fn import(bytes: &[u8], ctx: &mut Ctx<'_>) -> Result<Imported, ImportError> {
    let record: RunRecord = serde_json::from_slice(bytes).map_err(|e| {
        ctx.file_error(format!(
            "expected a resplab run record (resplab bench --json), found JSON that does not \
             match it at line {}, column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    let mut out = Imported::default();
    let ops = ctx.interner.metric(Metric::new(
        "ops_per_sec",
        "ops/s",
        Direction::HigherIsBetter,
    ));
    let lat = |ctx: &mut Ctx<'_>, name: &str| {
        ctx.interner.metric(Metric::new(
            format!("{name}_latency_us"),
            "us",
            Direction::LowerIsBetter,
        ))
    };
    let mut summaries: Vec<(&str, &crate::run::Summary)> = record
        .commands
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    summaries.push(("ALL", &record.totals));
    for (name, s) in summaries {
        if s.requests == 0 {
            continue;
        }
        out.observations
            .push(ctx.observation(name, &ops, s.ops_per_sec, None));
        let l = &s.latency_us;
        for (m, v) in [
            ("mean", l.mean),
            ("p50", l.p50),
            ("p90", l.p90),
            ("p99", l.p99),
            ("p99.9", l.p99_9),
            ("max", l.max),
        ] {
            let metric = lat(ctx, m);
            out.observations
                .push(ctx.observation(name, &metric, v, None));
        }
    }
    if !matches!(record.end, RunEnd::Completed) {
        out.notes.push(format!(
            "{}: the run did not complete ({:?}); its numbers cover only what was measured",
            ctx.file, record.end
        ));
    }
    for w in &record.warnings {
        out.notes.push(format!(
            "{}: run warning [{}]: {}",
            ctx.file,
            w.kind(),
            w.message()
        ));
    }
    if out.observations.is_empty() {
        return Err(ctx.file_error("expected at least one command with requests, found none"));
    }
    Ok(out)
}

/// The run records of the resplab run files among `specs`, by the file name their
/// observations cite (what a report draws beyond the numbers); files of other formats
/// and standard input are passed over.
///
/// # Errors
/// A file that cannot be read, or that looks like a run record and is not one.
pub fn run_records(
    specs: &[super::InputSpec],
) -> Result<std::collections::HashMap<String, std::sync::Arc<RunRecord>>, ImportError> {
    let mut records = std::collections::HashMap::new();
    for s in specs {
        if let super::Location::Path(p) = &s.location {
            if p == "-" || records.contains_key(p) {
                continue;
            }
            let bytes = std::fs::read(p).map_err(|source| ImportError::Io {
                file: p.clone(),
                source,
            })?;
            if super::detect(&bytes) == super::Format::Resplab {
                let r: RunRecord =
                    serde_json::from_slice(&bytes).map_err(|e| ImportError::File {
                        file: p.clone(),
                        message: format!("expected a resplab run record: {e}"),
                    })?;
                records.insert(p.clone(), std::sync::Arc::new(r));
            }
        }
    }
    Ok(records)
}
