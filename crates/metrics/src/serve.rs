//! The counters of `resplab serve`, as `INFO` shows them, for its endpoint.

use crate::text::Exposition;
use resplab_serve::Knobs;
use std::sync::atomic::Ordering;

/// The text of a scrape of a running `resplab serve`.
pub fn render(knobs: &Knobs) -> String {
    let r = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed) as f64;
    let one = |v: f64| vec![(Vec::new(), v)];
    let (user, system) = resplab_serve::process_cpu();
    let mut e = Exposition::new();
    e.counter(
        "resplab_serve_commands_total",
        "Commands processed.",
        &one(r(&knobs.commands)),
    );
    e.counter(
        "resplab_serve_connections_total",
        "Connections accepted.",
        &one(r(&knobs.connections)),
    );
    e.gauge(
        "resplab_serve_clients",
        "Connections open now.",
        &one(r(&knobs.clients)),
    );
    e.gauge(
        "resplab_serve_max_clients",
        "Connections beyond this many are refused.",
        &one(r(&knobs.max_clients)),
    );
    e.gauge(
        "resplab_serve_threads",
        "Server threads.",
        &one(knobs.threads as f64),
    );
    e.gauge(
        "resplab_serve_uptime_seconds",
        "Seconds since the server started.",
        &one(knobs.started.elapsed().as_secs_f64()),
    );
    e.counter(
        "resplab_serve_cpu_seconds_total",
        "CPU time of the server process, by mode.",
        &[
            (crate::text::labels(&[("mode", "user")]), user),
            (crate::text::labels(&[("mode", "system")]), system),
        ],
    );
    let knob_samples: Vec<(Vec<(String, String)>, f64)> = knobs
        .all()
        .into_iter()
        .filter_map(|(name, v)| {
            Some((
                crate::text::labels(&[("knob", &name)]),
                v.parse::<f64>().ok()?,
            ))
        })
        .collect();
    e.gauge(
        "resplab_serve_knob",
        "The effect and fault knobs (CONFIG GET).",
        &knob_samples,
    );
    e.finish()
}
