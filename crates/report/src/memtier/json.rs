//! memtier's `--json-out-file` document, format version 2: `"configuration"`,
//! `"run information"`, one object per section (`"ALL STATS"`, or the best, worst and
//! average sections of `--run-count`), each with `"Runtime"`, one object per request
//! type (`"Sets"`, `"Gets"`, `"Waits"` or `"Hsets"` …) and `"Totals"` — the keys that
//! tools reading memtier's JSON rely on (`Ops/sec`, `Average Latency`, `p50.00`,
//! the µs HdrHistogram under `"Histogram log format"`) — and, unless
//! `--hide-histogram`, the distribution arrays (`"SET": [{"<=msec", "percent"}]`).
//!
//! resplab's own figures go under one extra top-level key, `"resplab"`: each run's
//! complete result record (seed, load model, full histograms, connections, CPU).
//!
//! Per-second figures (`"Time-Serie"`) are given for `Totals` only: the engine keeps
//! its per-second series for all commands together.

use super::table::percentile_steps;
use super::{ms, Section, Shape, TypeStats};
use resplab_results::RunRecord;
use serde_json::{json, Map, Value};

/// The whole document, its top-level keys in memtier's order (`"resplab"` last, so a
/// reader that looks at the head of the file meets memtier's keys first).
/// `configuration` is memtier's echo of its options. [`to_text`] writes it.
pub fn document(
    shape: &Shape,
    configuration: Value,
    sections: &[Section],
    runs: &[RunRecord],
) -> Vec<(String, Value)> {
    let mut info = Map::new();
    info.insert("Threads".into(), json!(shape.threads));
    info.insert(
        "Connections per thread".into(),
        json!(shape.clients_per_thread),
    );
    match shape.requests_per_client {
        Some(n) => info.insert("Requests per client".into(), json!(n)),
        None => info.insert("Seconds".into(), json!(shape.seconds.unwrap_or(0))),
    };
    info.insert("Format version".into(), json!(2));
    let mut out = vec![
        ("configuration".to_string(), configuration),
        ("run information".to_string(), Value::Object(info)),
    ];
    for s in sections {
        out.push((s.title.clone(), section(shape, s)));
    }
    out.push(("resplab".into(), json!({ "runs": runs })));
    out
}

/// The document as JSON text, keys in the order given.
pub fn to_text(parts: &[(String, Value)]) -> String {
    let mut out = String::from("{\n");
    for (i, (key, value)) in parts.iter().enumerate() {
        let body = serde_json::to_string_pretty(value)
            .unwrap_or_else(|_| "null".into())
            .replace('\n', "\n  ");
        let comma = if i + 1 < parts.len() { "," } else { "" };
        out.push_str(&format!("  {}: {body}{comma}\n", Value::from(key.as_str())));
    }
    out.push_str("}\n");
    out
}

fn section(shape: &Shape, s: &Section) -> Value {
    let mut obj = Map::new();
    obj.insert(
        "Runtime".into(),
        json!({
            "Start time": s.start_ms,
            "Finish time": s.finish_ms,
            "Total duration": s.finish_ms.saturating_sub(s.start_ms),
            "Time unit": "MILLISECONDS",
            "Interrupted": if s.interrupted { "true" } else { "false" },
        }),
    );
    for t in &s.types {
        obj.insert(t.label(), type_object(shape, t, None));
    }
    obj.insert(
        "Totals".into(),
        type_object(shape, &s.totals, Some(&s.series)),
    );
    if shape.staircase.is_some() {
        let active: Map<String, Value> = s
            .series
            .iter()
            .map(|(sec, _)| {
                let n = shape.clients_at(*sec);
                let total = u64::from(n) * u64::from(shape.threads);
                let v = json!({"Clients per thread": n, "Total clients": total});
                (sec.to_string(), v)
            })
            .collect();
        obj.insert("Active Clients".into(), Value::Object(active));
    }
    if !shape.hide_histogram {
        for t in &s.types {
            let steps: Vec<Value> = percentile_steps(t)
                .into_iter()
                .map(|(v, p)| json!({"<=msec": round3(v), "percent": round3(p)}))
                .collect();
            obj.insert(t.name.clone(), Value::Array(steps));
        }
    }
    Value::Object(obj)
}

/// One request type's object.
fn type_object(shape: &Shape, t: &TypeStats, series: Option<&[(u64, u64)]>) -> Value {
    let avg = if t.hist.is_empty() {
        0.0
    } else {
        ms(t.hist.as_hdr().mean())
    };
    let mut percentiles = Map::new();
    for p in &shape.percentiles {
        let v = if t.hist.is_empty() {
            0.0
        } else {
            ms(t.hist.percentile_ns(*p) as f64)
        };
        percentiles.insert(format!("p{p:.2}"), json!(round3(v)));
    }
    percentiles.insert(
        "Histogram log format".into(),
        json!({ "Compressed Histogram": t.hist.to_base64_in(1000) }),
    );
    let mut time_serie = Map::new();
    for (sec, count) in series.unwrap_or(&[]) {
        time_serie.insert(sec.to_string(), json!({ "Count": count }));
    }
    let kb = t.kb_rx_per_sec + t.kb_tx_per_sec;
    let mut obj = json!({
        "Count": t.count.round() as u64,
        "Ops/sec": round2(t.ops_per_sec),
        "Hits/sec": round2(t.hits_per_sec),
        "Misses/sec": round2(t.misses_per_sec),
        "Connection Errors/sec": 0.0,
        "Connection Errors": t.connection_errors.round() as u64,
        "Latency": round3(avg),
        "Average Latency": round3(avg),
        "Accumulated Latency": (avg * t.count).round() as u64,
        "Min Latency": round3(ms(t.hist.min_ns() as f64)),
        "Max Latency": round3(ms(t.hist.max_ns() as f64)),
        "KB/sec": round2(kb),
        "KB/sec RX/TX": round2(kb),
        "KB/sec RX": round2(t.kb_rx_per_sec),
        "KB/sec TX": round2(t.kb_tx_per_sec),
        "Time-Serie": Value::Object(time_serie),
        "Percentile Latencies": Value::Object(percentiles),
    });
    if shape.cluster && t.name == "Totals" {
        obj["MOVED/sec"] = json!(round2(t.moved_per_sec.unwrap_or(0.0)));
        obj["ASK/sec"] = json!(round2(t.ask_per_sec.unwrap_or(0.0)));
    }
    obj
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
