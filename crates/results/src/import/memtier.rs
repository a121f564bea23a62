//! memtier_benchmark `--json-out-file` files (format version 2).
//!
//! A file holds one result section per run: `"ALL STATS"` for a single run, or, with
//! `-x N --print-all-runs`, `"RUN #k RESULTS"` for each run plus the derived
//! `"BEST RUN RESULTS"`, `"WORST RUN RESULTS"` and `"AGGREGATED AVERAGE RESULTS (N runs)"`.
//! Each run is one trial; the derived sections are not trials and are skipped (when a
//! file has only derived sections, the aggregated one is used and a note says so).
//!
//! Inside a section, every object with `Count` and `Ops/sec` is a request type (`Sets`,
//! `Gets`, `Totals`, or one per `--command`, e.g. `Hsets`); it is the workload. Metrics:
//! `ops_per_sec` (higher is better), `avg_latency_ms` and `pXX_latency_ms` for each key
//! of `"Percentile Latencies"` (lower is better); the full HdrHistogram memtier writes
//! there (`"Histogram log format"`, in µs) is kept as it is ([`super::ForeignHistogram`]).
//! Types with `Count` 0 are skipped
//! (memtier still prints percentiles for them).
//!
//! Known quirks of memtier builds before 2.4.4 (fixtures README, memtier#209/#463):
//! - the run's start/finish times can be averaged wrongly, giving a zero or negative
//!   `Total duration` and `Ops/sec` 0.00 although requests were counted. Rates of such
//!   a section are flagged (kept, shown, left out of the statistics), never a crash;
//! - `Totals."Average Latency"` can be 0.000 while `Accumulated Latency` / `Count` gives
//!   the real average, so the average is recomputed from those when it reads zero;
//! - the aggregated section can carry zero runtimes and placeholder percentiles.
//!
//! Some memtier versions write `nan`/`-nan`/`inf` for undefined numbers, which is not
//! JSON; those tokens are read as missing values.

use super::{Ctx, ImportError, Imported};
use crate::sample::{Direction, Metric};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Replaces bare `nan`, `-nan`, `inf`, `-inf` tokens outside strings with `null`.
fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let ch = rest.chars().next().unwrap_or(' ');
        if !in_string && ch != '"' {
            let head = rest
                .get(..4.min(rest.len()))
                .unwrap_or("")
                .to_ascii_lowercase();
            if let Some(t) = ["-nan", "-inf", "nan", "inf"]
                .into_iter()
                .find(|t| head.starts_with(t))
            {
                out.push_str("null");
                i += t.len();
                continue;
            }
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_string = false;
            }
        } else if ch == '"' {
            in_string = true;
        }
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

fn number(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn is_run_section(key: &str) -> Option<u32> {
    if key == "ALL STATS" {
        return Some(1);
    }
    key.strip_prefix("RUN #")
        .and_then(|r| r.strip_suffix(" RESULTS"))
        .and_then(|n| n.trim().parse().ok())
}

/// Imports a memtier JSON file.
///
/// # Errors
/// [`ImportError::File`] when the text is not JSON or holds no result section.
pub fn import(bytes: &[u8], ctx: &mut Ctx<'_>) -> Result<Imported, ImportError> {
    let root = parse_json(bytes, ctx)?;
    let Some(obj) = root.as_object() else {
        return Err(ctx.file_error("expected a JSON object at the top level"));
    };
    let mut out = Imported::default();
    let runs = run_sections(obj, ctx, &mut out.notes)?;
    let ops = ctx.interner.metric(Metric::new(
        "ops_per_sec",
        "ops/s",
        Direction::HigherIsBetter,
    ));
    let avg = ctx.interner.metric(Metric::new(
        "avg_latency_ms",
        "ms",
        Direction::LowerIsBetter,
    ));
    for (run, section) in runs {
        let duration = section
            .get("Runtime")
            .and_then(|r| number(r.get("Total duration")));
        for (type_name, v) in section {
            let Some(t) = v.as_object() else { continue };
            let (Some(count), Some(rate)) = (number(t.get("Count")), number(t.get("Ops/sec")))
            else {
                continue;
            };
            if count <= 0.0 {
                continue;
            }
            let found = TypeStats {
                run,
                type_name,
                t,
                count,
                rate,
                duration,
            };
            import_type(&found, ctx, &ops, &avg, &mut out);
        }
    }
    if out.observations.is_empty() {
        return Err(ctx.file_error(
            "expected request types with Count and Ops/sec in the result sections, found none",
        ));
    }
    Ok(out)
}

/// The file as JSON; memtier's invalid JSON (see the module notes) is mended first.
fn parse_json(bytes: &[u8], ctx: &mut Ctx<'_>) -> Result<Value, ImportError> {
    let text = String::from_utf8_lossy(bytes);
    Ok(match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(first) => serde_json::from_str(&sanitize(&text)).map_err(|_| {
            ctx.file_error(format!(
                "expected memtier --json-out-file JSON, found invalid JSON at line {}, \
                 column {}: {first}",
                first.line(),
                first.column()
            ))
        })?,
    })
}

/// A result section with its run number.
type RunSection<'v> = (u32, &'v Map<String, Value>);

/// The per-run result sections, in run order (the aggregated one when there is none);
/// notes what was skipped or used instead.
fn run_sections<'v>(
    obj: &'v Map<String, Value>,
    ctx: &mut Ctx<'_>,
    notes: &mut Vec<String>,
) -> Result<Vec<RunSection<'v>>, ImportError> {
    let mut runs: Vec<(u32, &Map<String, Value>)> = obj
        .iter()
        .filter_map(|(k, v)| Some((is_run_section(k)?, v.as_object()?)))
        .collect();
    runs.sort_by_key(|(k, _)| *k);
    if runs.is_empty() {
        if let Some((key, v)) = obj
            .iter()
            .find(|(k, v)| k.starts_with("AGGREGATED AVERAGE RESULTS") && v.is_object())
        {
            notes.push(format!(
                "{}: no per-run sections (run memtier with --print-all-runs); using \
                 \"{key}\" as a single trial",
                ctx.file
            ));
            if let Some(m) = v.as_object() {
                runs.push((1, m));
            }
        }
    } else if obj.keys().any(|k| k.starts_with("BEST RUN")) {
        notes.push(format!(
            "{}: using the {} per-run sections as trials; BEST/WORST/AGGREGATED summaries \
             are not trials and were skipped",
            ctx.file,
            runs.len()
        ));
    }
    if runs.is_empty() {
        let looks_resplab = obj.contains_key("schema_version");
        return Err(ctx.file_error(if looks_resplab {
            "expected a resplab run record (schema_version, commands, …) or memtier JSON; \
             found a JSON object with schema_version but no commands"
        } else {
            "expected memtier JSON with an \"ALL STATS\" or \"RUN #k RESULTS\" section (or a \
             resplab run record), found neither"
        }));
    }
    Ok(runs)
}

/// One request type of one run section with a positive `Count`.
struct TypeStats<'v> {
    run: u32,
    type_name: &'v String,
    t: &'v Map<String, Value>,
    count: f64,
    rate: f64,
    duration: Option<f64>,
}

/// A request type's rate (flagged when memtier's clock broke), average latency, full
/// histogram and percentiles.
fn import_type(
    found: &TypeStats<'_>,
    ctx: &mut Ctx<'_>,
    ops: &Arc<Metric>,
    avg: &Arc<Metric>,
    out: &mut Imported,
) {
    let TypeStats {
        run,
        type_name,
        t,
        count,
        rate,
        duration,
    } = *found;
    let mut o = ctx.observation(type_name, ops, rate, None);
    o.round = None;
    let broken_clock = matches!(duration, Some(d) if d <= 0.0) || rate <= 0.0;
    if broken_clock {
        o.flag = Some(format!(
            "memtier reported Ops/sec {rate} with Total duration {} ms for {count} \
             requests (a known memtier timing bug, fixed in 2.4.4); rate left out",
            duration.map_or("unknown".to_string(), |d| d.to_string())
        ));
        out.notes.push(format!(
            "{} run {run} {type_name}: Ops/sec {rate} with duration {} ms is a memtier \
             timing bug; the rate was left out (latencies are unaffected)",
            ctx.file,
            duration.map_or("unknown".to_string(), |d| d.to_string())
        ));
    }
    out.observations.push(o);
    let mut average = number(t.get("Average Latency")).or(number(t.get("Latency")));
    if !matches!(average, Some(a) if a > 0.0) {
        if let Some(acc) = number(t.get("Accumulated Latency")) {
            if acc > 0.0 {
                average = Some(acc / count);
            }
        }
    }
    if let Some(a) = average.filter(|a| *a > 0.0) {
        out.observations
            .push(ctx.observation(type_name, avg, a, None));
    }
    // Its full latency histogram (HdrHistogram in microseconds), when written.
    if let Some(h) = t
        .get("Percentile Latencies")
        .and_then(|p| p.get("Histogram log format"))
        .and_then(|h| h.get("Compressed Histogram"))
        .and_then(Value::as_str)
        .filter(|h| !h.trim().is_empty())
    {
        out.histograms.push(super::ForeignHistogram {
            workload: type_name.clone(),
            hdr_base64: h.to_string(),
            unit_ns: 1_000,
            total: type_name == "Totals",
        });
    }
    if let Some(p) = t.get("Percentile Latencies").and_then(Value::as_object) {
        for (key, pv) in p {
            let Some(q) = key.strip_prefix('p') else {
                continue;
            };
            let Ok(qv) = q.parse::<f64>() else { continue };
            let Some(val) = number(Some(pv)) else {
                continue;
            };
            let name = format!("p{}_latency_ms", trim_number(qv));
            let m = ctx
                .interner
                .metric(Metric::new(name, "ms", Direction::LowerIsBetter));
            out.observations
                .push(ctx.observation(type_name, &m, val, None));
        }
    }
}

/// `50.0` → `50`, `99.9` → `99.9`.
pub(crate) fn trim_number(v: f64) -> String {
    let s = format!("{v}");
    s.trim_end_matches(".0").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizes_non_json_numbers() {
        assert_eq!(
            sanitize(r#"{"a": -nan, "b": "nan", "c": inf}"#),
            r#"{"a": null, "b": "nan", "c": null}"#
        );
    }

    #[test]
    fn section_names() {
        assert_eq!(is_run_section("ALL STATS"), Some(1));
        assert_eq!(is_run_section("RUN #3 RESULTS"), Some(3));
        assert_eq!(is_run_section("BEST RUN RESULTS"), None);
    }
}
