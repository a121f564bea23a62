//! Workloads in the bench vocabulary (tests, ratio, key pattern, data sizes, arrivals,
//! preload), resolved and checked into the experiment model.

use super::*;
use resplab_workload::flags::{self, Given, TestList};
use resplab_workload::Arrivals;
use resplab_workload::{CommandSpec, TestName};

pub(super) fn resolve_workload(
    cx: &Ctx<'_>,
    index: usize,
    w: &WorkloadSpecToml,
    default_budget: TrialBudget,
) -> Result<Workload, SpecError> {
    let key = |k: &str| format!("workload[{index}].{k}");
    let name = w.name.get_ref().trim().to_string();
    if name.is_empty() {
        return Err(cx.err_key(w.name.span(), key("name"), "expected a non-empty name"));
    }
    if let Some(workload) = super::tool::resolve_tool_workload(cx, index, w, &name, default_budget)?
    {
        return Ok(workload);
    }
    if w.run.is_some() {
        return resolve_command_workload(cx, index, w, name, default_budget);
    }
    let command_keys = [
        ("shell", w.shell.as_ref().map(|v| v.span())),
        ("timeout", w.timeout.as_ref().map(|v| v.span())),
        ("cwd", w.cwd.as_ref().map(|v| v.span())),
        ("format", w.format.as_ref().map(|v| v.span())),
    ];
    if let Some((k, Some(span))) = command_keys.iter().find(|(_, s)| s.is_some()) {
        return Err(cx.err_key(
            span.clone(),
            key(k),
            format!("`{k}` belongs to a command workload; give `run = \"…\"` too"),
        ));
    }
    let (tests, commands) = tests_and_commands(cx, index, w)?;
    // Each memtier word is parsed here, once, by its flag's parser; the model keeps the
    // words and their meaning.
    let ratio = given(cx, &w.ratio, &key("ratio"), flags::parse_ratio)?;
    let key_pattern = given(
        cx,
        &w.key_pattern,
        &key("key_pattern"),
        flags::parse_key_patterns,
    )?;
    let data_size_range = given(
        cx,
        &w.data_size_range,
        &key("data_size_range"),
        flags::parse_data_size_range,
    )?;
    let data_size_list = given(
        cx,
        &w.data_size_list,
        &key("data_size_list"),
        flags::parse_data_size_list,
    )?;
    let positive = |v: &Option<Spanned<u32>>, k: &str, default: u32| -> Result<u32, SpecError> {
        match v {
            Some(x) if *x.get_ref() == 0 => {
                Err(cx.err_key(x.span(), key(k), "expected at least 1, found 0"))
            }
            Some(x) => Ok(*x.get_ref()),
            None => Ok(default),
        }
    };
    let pipeline = positive(&w.pipeline, "pipeline", 1)?;
    let clients = positive(&w.clients, "clients", 50)?;
    let threads = positive(&w.threads, "threads", 1)?;
    let (rate, arrivals) = arrivals(cx, index, w)?;
    let budget = budget(cx, index, w, default_budget)?;
    let mix_keys = ratio.is_some()
        || key_pattern.is_some()
        || data_size_range.is_some()
        || data_size_list.is_some();
    let tests = if tests.is_empty() && commands.is_empty() && !mix_keys {
        TestList::of(vec![TestName::Set, TestName::Get])
    } else {
        tests
    };
    let preload = w.preload.as_ref().map(|p| Preload {
        keys: p.keys,
        value_size: p.value_size.unwrap_or(3),
        key_prefix: p
            .key_prefix
            .clone()
            .unwrap_or_else(|| if tests.is_empty() { "memtier-" } else { "key:" }.to_string()),
    });
    check_sizes(cx, index, w)?;
    Ok(Workload {
        name,
        tests,
        commands,
        ratio,
        key_pattern,
        keyspace: w.keyspace.as_ref().map(|k| *k.get_ref()),
        data_size: w.data_size.as_ref().map(|k| *k.get_ref()),
        data_size_range,
        data_size_list,
        pipeline,
        clients,
        threads,
        rate,
        arrivals,
        budget,
        preload,
        run: None,
        memtier: None,
        redis_benchmark: None,
    })
}

/// `v` parsed by `parse`, its error placed at the key's span.
fn given<T>(
    cx: &Ctx<'_>,
    v: &Option<Spanned<String>>,
    key: &str,
    parse: fn(&str) -> Result<T, resplab_workload::WorkloadError>,
) -> Result<Option<Given<T>>, SpecError> {
    v.as_ref()
        .map(|s| {
            Given::parse(s.get_ref(), parse)
                .map_err(|e| cx.err_key(s.span(), key.to_string(), e.to_string()))
        })
        .transpose()
}

/// The workload's redis-benchmark tests (comma lists flattened) or its commands, not
/// both, each checked.
fn tests_and_commands(
    cx: &Ctx<'_>,
    index: usize,
    w: &WorkloadSpecToml,
) -> Result<(TestList, Vec<Given<CommandSpec>>), SpecError> {
    let key = |k: &str| format!("workload[{index}].{k}");
    let tests: Vec<String> = w
        .tests
        .as_ref()
        .map(|t| {
            t.get_ref()
                .items()
                .iter()
                .flat_map(|s| {
                    s.split(',')
                        .map(|x| x.trim().to_string())
                        .collect::<Vec<_>>()
                })
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let commands: Vec<String> = w
        .command
        .as_ref()
        .map(|c| c.get_ref().items())
        .unwrap_or_default();
    if let (Some(t), Some(_)) = (&w.tests, &w.command) {
        return Err(cx.err_key(
            t.span(),
            key("tests"),
            "give either tests or command, not both",
        ));
    }
    let tests = match &w.tests {
        Some(t) => {
            TestList::parse(tests).map_err(|e| cx.err_key(t.span(), key("tests"), e.to_string()))?
        }
        None => TestList::default(),
    };
    let commands = match &w.command {
        Some(c) => commands
            .iter()
            .map(|cmd| Given::parse(cmd, flags::parse_command))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| cx.err_key(c.span(), key("command"), e.to_string()))?,
        None => Vec::new(),
    };
    Ok((tests, commands))
}

/// The open-loop rate, if any, and the arrival process (`poisson` by default).
fn arrivals(
    cx: &Ctx<'_>,
    index: usize,
    w: &WorkloadSpecToml,
) -> Result<(Option<f64>, Arrivals), SpecError> {
    let key = |k: &str| format!("workload[{index}].{k}");
    let rate = match &w.rate {
        Some(r) if !(r.get_ref().is_finite() && *r.get_ref() > 0.0) => {
            return Err(cx.err_key(
                r.span(),
                key("rate"),
                format!(
                    "expected requests per second above 0, found {}",
                    r.get_ref()
                ),
            ))
        }
        Some(r) => Some(*r.get_ref()),
        None => None,
    };
    // Exactly these two words (unlike the flag, which ignores case): the stored
    // definition keeps the word as written.
    let arrivals = match &w.arrivals {
        None => Arrivals::Poisson,
        Some(a) => match a.get_ref().as_str() {
            "poisson" => Arrivals::Poisson,
            "constant" => Arrivals::Constant,
            other => {
                return Err(cx.err_key(
                    a.span(),
                    key("arrivals"),
                    format!("expected \"poisson\" or \"constant\", found \"{other}\""),
                ))
            }
        },
    };
    Ok((rate, arrivals))
}

/// The workload's trial budget: `test_time` or `requests` (not both), the experiment's
/// default if neither.
fn budget(
    cx: &Ctx<'_>,
    index: usize,
    w: &WorkloadSpecToml,
    default_budget: TrialBudget,
) -> Result<TrialBudget, SpecError> {
    let key = |k: &str| format!("workload[{index}].{k}");
    Ok(match (&w.test_time, &w.requests) {
        (Some(t), Some(_)) => {
            return Err(cx.err_key(
                t.span(),
                key("test_time"),
                "give either test_time or requests, not both",
            ))
        }
        (Some(t), None) => TrialBudget::TestTime(nonzero(cx, t)?),
        (None, Some(r)) if *r.get_ref() == 0 => {
            return Err(cx.err_key(
                r.span(),
                key("requests"),
                "expected at least 1 request, found 0",
            ))
        }
        (None, Some(r)) => TrialBudget::Requests(*r.get_ref()),
        (None, None) => default_budget,
    })
}

/// `keyspace` and `data_size`, when given, are at least 1.
fn check_sizes(cx: &Ctx<'_>, index: usize, w: &WorkloadSpecToml) -> Result<(), SpecError> {
    let key = |k: &str| format!("workload[{index}].{k}");
    if let Some(k) = &w.keyspace {
        if *k.get_ref() == 0 {
            return Err(cx.err_key(
                k.span(),
                key("keyspace"),
                "expected at least 1 key, found 0",
            ));
        }
    }
    if let Some(d) = &w.data_size {
        if *d.get_ref() == 0 {
            return Err(cx.err_key(
                d.span(),
                key("data_size"),
                "expected at least 1 byte, found 0",
            ));
        }
    }
    Ok(())
}
