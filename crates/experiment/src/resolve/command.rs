//! Command workloads: any benchmark program with its placeholders, output format and
//! metrics, resolved and checked.

use super::*;

/// Placeholders a command workload's `run` and `cwd` may use.
pub(super) const COMMAND_PLACEHOLDERS: &[&str] =
    &["host", "port", "uri", "dir", "seed", "round", "variant"];

/// A `[[workload]]` with `run = "…"`: a command line and how to read its output. The
/// bench vocabulary does not apply to it, so its keys are refused here.
pub(super) fn resolve_command_workload(
    cx: &Ctx<'_>,
    index: usize,
    w: &WorkloadSpecToml,
    name: String,
    default_budget: TrialBudget,
) -> Result<Workload, SpecError> {
    let key = |k: &str| format!("workload[{index}].{k}");
    refuse_bench_keys(cx, w, &key)?;
    let run = w.run.as_ref().expect("called for workloads with run");
    if w.preload.is_some() {
        return Err(cx.err_key(
            run.span(),
            key("preload"),
            "`preload` is bench vocabulary; load data in the command or a hook instead",
        ));
    }
    let line = run.get_ref().trim().to_string();
    if line.is_empty() {
        return Err(cx.err_key(
            run.span(),
            key("run"),
            "expected a command line, found nothing",
        ));
    }
    let shell = w.shell.as_ref().is_some_and(|s| *s.get_ref());
    if !shell {
        crate::words::split_words(&line).map_err(|e| cx.err_key(run.span(), key("run"), e))?;
    }
    check_placeholders(cx, w, run, &line, &key)?;
    let timeout = match &w.timeout {
        Some(t) => nonzero(cx, t)?,
        None => Duration::from_secs(600),
    };
    let format = output_format(cx, w, &key)?;
    Ok(Workload {
        run: Some(CommandRun {
            line,
            shell,
            timeout,
            cwd: w.cwd.as_ref().map(|c| c.get_ref().clone()),
            format,
        }),
        ..Workload::plain(&name, default_budget)
    })
}

/// Refuses the bench vocabulary (the first key of it given), which a command workload
/// sets in its own command line.
fn refuse_bench_keys(
    cx: &Ctx<'_>,
    w: &WorkloadSpecToml,
    key: &dyn Fn(&str) -> String,
) -> Result<(), SpecError> {
    // Every key before `run` is the bench vocabulary or a tool's line.
    let given = w.key_spans();
    let bench = given
        .iter()
        .take_while(|(k, _)| *k != "run")
        .find(|(_, s)| s.is_some());
    if let Some((k, Some(span))) = bench {
        return Err(cx.err_key(
            span.clone(),
            key(k),
            format!("`{k}` is bench vocabulary; a workload with `run` sets its load in its own command line"),
        ));
    }
    Ok(())
}

/// Refuses a placeholder in `run` or `cwd` that a command cannot be given.
fn check_placeholders(
    cx: &Ctx<'_>,
    w: &WorkloadSpecToml,
    run: &Spanned<String>,
    line: &str,
    key: &dyn Fn(&str) -> String,
) -> Result<(), SpecError> {
    let mut texts = vec![(run.span(), "run", line.to_string())];
    if let Some(c) = &w.cwd {
        texts.push((c.span(), "cwd", c.get_ref().clone()));
    }
    for (span, k, text) in &texts {
        if let Some(p) = crate::words::placeholders(text)
            .into_iter()
            .find(|p| !COMMAND_PLACEHOLDERS.contains(&p.as_str()))
        {
            return Err(cx.err_key(
                span.clone(),
                key(k),
                format!(
                    "unknown placeholder {{{p}}}; a command may use {}",
                    COMMAND_PLACEHOLDERS
                        .iter()
                        .map(|p| format!("{{{p}}}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// The output format the workload names, if any.
fn output_format(
    cx: &Ctx<'_>,
    w: &WorkloadSpecToml,
    key: &dyn Fn(&str) -> String,
) -> Result<Option<OutputFormat>, SpecError> {
    Ok(match &w.format {
        None => None,
        Some(f) => Some(OutputFormat::from_name(f.get_ref()).ok_or_else(|| {
            let hint = match error::closest(f.get_ref(), OutputFormat::NAMES) {
                Some(c) => format!("; did you mean \"{c}\"?"),
                None => format!("; expected one of {}", OutputFormat::NAMES.join(", ")),
            };
            cx.err_key(
                f.span(),
                key("format"),
                format!("unknown format \"{}\"{hint}", f.get_ref()),
            )
        })?),
    })
}
