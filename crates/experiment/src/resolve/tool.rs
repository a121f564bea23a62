//! Workloads given as another tool's command line: `memtier = "…"` (memtier_benchmark's
//! meaning, read by `resplab_workload::memtier`) and `redis_benchmark = "…"`
//! (redis-benchmark's, read by `resplab_workload::redis_benchmark`), each parsed once,
//! here, by the parser of `resplab memtier` or `resplab redis-benchmark`. The line's
//! connections, threads, pipeline, rate and length become the workload's, so a trial
//! runs what the tool's mode would run, on resplab's engine.

use super::*;
use resplab_engine::{Budget, RunConfig};
use resplab_workload::flags::Given;

/// A workload with `memtier` or `redis_benchmark`; `None` when it has neither.
pub(super) fn resolve_tool_workload(
    cx: &Ctx<'_>,
    index: usize,
    w: &WorkloadSpecToml,
    name: &str,
    default_budget: TrialBudget,
) -> Result<Option<Workload>, SpecError> {
    let key = |k: &str| format!("workload[{index}].{k}");
    let (tool, text) = match (&w.memtier, &w.redis_benchmark) {
        (None, None) => return Ok(None),
        (Some(_), Some(r)) => {
            return Err(cx.err_key(
                r.span(),
                key("redis_benchmark"),
                "give either memtier or redis_benchmark, not both",
            ))
        }
        (Some(m), None) => ("memtier", m),
        (None, Some(r)) => ("redis_benchmark", r),
    };
    refuse_other_keys(cx, w, tool, &key)?;
    let at = |e: String| cx.err_key(text.span(), key(tool), e);
    let mut workload = Workload::plain(name, default_budget);
    if tool == "memtier" {
        let plan = Given::parse(text.get_ref(), crate::words::memtier_line)
            .map_err(|e| at(e.to_string()))?;
        let cfg =
            resplab_engine::memtier::run_config(plan.value()).map_err(|e| at(e.to_string()))?;
        take_shape(&mut workload, &cfg);
        workload.memtier = Some(plan);
    } else {
        let line = Given::parse(text.get_ref(), crate::words::redis_benchmark_line)
            .map_err(|e| at(e.to_string()))?;
        let plan = resplab_engine::words::redis_benchmark::resolve(line.value())
            .map_err(|e| at(e.to_string()))?;
        take_shape(&mut workload, &plan.config);
        workload.redis_benchmark = Some(line);
    }
    Ok(Some(workload))
}

/// The line's connections, threads, pipeline, length and rate.
fn take_shape(w: &mut Workload, cfg: &RunConfig) {
    w.clients = cfg.clients;
    w.threads = cfg.threads;
    w.pipeline = cfg.pipeline;
    w.budget = match cfg.budget {
        Budget::Requests(n) => TrialBudget::Requests(n),
        Budget::Duration(d) => TrialBudget::TestTime(d),
    };
    w.rate = cfg.open_loop.map(|o| o.rate_per_sec);
    w.arrivals = cfg
        .open_loop
        .map_or(resplab_workload::Arrivals::Constant, |o| o.arrivals);
}

/// The line says everything about the load: any other workload key is refused, naming
/// the first one given.
fn refuse_other_keys(
    cx: &Ctx<'_>,
    w: &WorkloadSpecToml,
    tool: &str,
    key: &dyn Fn(&str) -> String,
) -> Result<(), SpecError> {
    // Both tools' lines together were refused before this.
    let given = w.key_spans();
    let other = given
        .iter()
        .filter(|(k, _)| *k != "memtier" && *k != "redis_benchmark")
        .find(|(_, s)| s.is_some());
    if let Some((k, Some(span))) = other {
        return Err(cx.err_key(
            span.clone(),
            key(k),
            format!("`{k}` cannot go with `{tool}`: the line says everything about the load (write it in the line)"),
        ));
    }
    if w.preload.is_some() {
        let span = w.name.span();
        return Err(cx.err_key(
            span,
            key("preload"),
            format!("`preload` cannot go with `{tool}`: fill the data with a workload of its own before this one"),
        ));
    }
    Ok(())
}
