//! From file text to a validated [`Experiment`].
//!
//! Steps: parse the TOML into [`crate::spec`] (unknown keys refused with a suggestion),
//! expand `[params]` into variants, apply defaults, and check every value, pointing each
//! error at its line. Placeholders `{port}` and `{dir}` are left for the runner; any other
//! `{name}` must be a parameter.
//!
//! [`parse`] reads as its steps: the experiment's settings, `[params]`, the variants
//! (`variant`, their connections in `connect`), the shared server and the workloads
//! (`workload`, command workloads in `command`), the generators, and the check of
//! variants without a server.

use crate::error::{self, SpecError};
use crate::model::*;
use crate::spec::*;
use crate::words;
use std::collections::BTreeMap;
use std::time::Duration;
use toml::Spanned;

mod command;
mod connect;
mod profile;
mod tool;
mod variant;
mod workload;
use command::*;
use connect::*;
use variant::*;
use workload::*;

/// Placeholders the runner fills in for each server execution.
pub const RUNTIME_PLACEHOLDERS: &[&str] = &["port", "respb_port", "dir", "pid"];

/// The command used when a variant names neither `server` nor `address`.
pub const DEFAULT_SERVER: &str =
    "redis-server --port {port} --bind 127.0.0.1 --save '' --appendonly no --dir {dir}";

/// Budget and rounds forced onto an experiment, e.g. for a quick smoke run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Overrides {
    pub rounds: Option<u32>,
    pub budget: Option<TrialBudget>,
    pub warmup: Option<Duration>,
}

impl Overrides {
    /// `experiment run`'s `--rounds`, `--requests`, `--test-time` (the last budget given
    /// wins) and `--smoke`, checked.
    ///
    /// # Errors
    /// One line naming the flag: zero rounds or requests, or a test time that is not a
    /// positive duration.
    pub fn from_flags(
        rounds: Option<u32>,
        requests: Option<u64>,
        test_time: Option<&str>,
        smoke: bool,
    ) -> Result<Overrides, String> {
        if rounds == Some(0) {
            return Err("--rounds: expected at least 1, found 0".into());
        }
        if requests == Some(0) {
            return Err("--requests: expected at least 1, found 0".into());
        }
        let mut overrides = Overrides {
            rounds,
            budget: requests.map(TrialBudget::Requests),
            ..Overrides::default()
        };
        if let Some(t) = test_time {
            let d = words::parse_positive_duration(t).map_err(|e| format!("--test-time: {e}"))?;
            overrides.budget = Some(TrialBudget::TestTime(d));
        }
        Ok(if smoke { overrides.smoke() } else { overrides })
    }

    /// `--smoke`'s budgets over these: 2 rounds (unless rounds are given), 2,000 requests
    /// per phase (unless a budget is given), no warm-up.
    pub fn smoke(self) -> Overrides {
        Overrides {
            rounds: Some(self.rounds.unwrap_or(2)),
            budget: self.budget.or(Some(TrialBudget::Requests(2_000))),
            warmup: Some(Duration::ZERO),
        }
    }
}

/// `--smoke`'s experiment: stored apart as `NAME-smoke`, preloads of at most 1,000 keys.
pub fn into_smoke(exp: &mut Experiment) {
    exp.name.push_str("-smoke");
    for w in &mut exp.workloads {
        if let Some(p) = &mut w.preload {
            p.keys = p.keys.min(1_000);
        }
    }
}

struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn err(&self, span: std::ops::Range<usize>, message: impl Into<String>) -> SpecError {
        error::at(self.file, self.text, span.start, None, message.into())
    }

    fn err_key(
        &self,
        span: std::ops::Range<usize>,
        key: String,
        message: impl Into<String>,
    ) -> SpecError {
        error::at(self.file, self.text, span.start, Some(key), message.into())
    }

    fn duration(&self, v: &Spanned<DurationValue>) -> Result<Duration, SpecError> {
        duration_value(v.get_ref()).map_err(|m| self.err(v.span(), m))
    }
}

fn duration_value(v: &DurationValue) -> Result<Duration, String> {
    match v {
        DurationValue::Seconds(s) => words::seconds(*s)
            .ok_or_else(|| format!("expected a non-negative number of seconds, found {s}")),
        DurationValue::Text(t) => words::parse_duration(t),
    }
}

/// Parses and validates an experiment file.
///
/// # Errors
/// A [`SpecError`] naming file, line, column and key of the first problem found.
pub fn parse(file: &str, text: &str, overrides: &Overrides) -> Result<Experiment, SpecError> {
    let spec: FileSpec = toml::from_str(text).map_err(|e| error::from_toml(file, text, &e))?;
    let cx = Ctx { file, text };
    let (mut exp, budget) = settings(&cx, &spec)?;
    check_params(&cx, &spec.params)?;
    exp.variants = variants(&cx, &spec)?;
    let (shared_server, workloads) = workloads(&cx, &spec, &exp.variants, budget)?;
    exp.shared_server = shared_server;
    exp.workloads = workloads;
    exp.generators = generators(&cx, &spec.generators)?;
    exp.profile = profile::profile(&cx, spec.profile.as_ref())?;
    check_until(&cx, &spec.experiment, &exp)?;
    check_serverless(
        file,
        &exp.variants,
        &exp.workloads,
        exp.shared_server.is_some(),
    )?;
    check_respb_workloads(file, &exp.variants, &exp.workloads)?;
    if exp.order == Order::Duet {
        let refuse = |key: &str, message: String| SpecError {
            file: file.into(),
            line: None,
            column: None,
            key: Some(key.into()),
            message,
        };
        crate::duet::check(&exp).map_err(|r| refuse(&r.key, r.message))?;
        // This machine's CPUs: checked here too, so that a dry run says it.
        crate::duet::cpu_sets(&exp, &crate::duet::allowed_cpus())
            .map_err(|m| refuse("server_cpus", m))?;
    }
    if let Some(r) = overrides.rounds {
        exp.rounds = r.max(1);
    }
    if let Some(b) = overrides.budget {
        for w in &mut exp.workloads {
            w.budget = b;
        }
    }
    if let Some(wu) = overrides.warmup {
        exp.warmup = wu;
    }
    Ok(exp)
}

/// The `[experiment]` table: the experiment with its own settings checked and
/// defaulted (no variants, workloads or generators yet), and the default trial budget of
/// its workloads.
fn settings(cx: &Ctx<'_>, spec: &FileSpec) -> Result<(Experiment, TrialBudget), SpecError> {
    let e = &spec.experiment;
    let name = e.name.get_ref().trim().to_string();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(cx.err(
            e.name.span(),
            format!("expected a name of letters, digits, '-', '_' or '.', found \"{name}\""),
        ));
    }
    let until_decided = until(cx, e)?;
    let rounds = match &e.rounds {
        Some(r) if *r.get_ref() == 0 => {
            return Err(cx.err(r.span(), "expected at least 1 round, found 0"))
        }
        Some(r) => *r.get_ref(),
        None => until_decided.map_or(10, |u| u.rounds()),
    };
    let budget = trial_budget(cx, e)?;
    let warmup = match &e.warmup {
        Some(w) => cx.duration(w)?,
        None => Duration::ZERO,
    };
    let order = order(cx, e)?;
    let primary_metric = primary_metric(cx, spec)?;
    let margin = margin(cx, e)?;
    let client_cpu_limit = match &e.client_cpu_limit {
        Some(c) if !(*c.get_ref() > 0.0 && *c.get_ref() <= 1.0) => {
            return Err(cx.err(
                c.span(),
                format!("expected a fraction in (0, 1], found {}", c.get_ref()),
            ))
        }
        Some(c) => *c.get_ref(),
        None => 0.8,
    };
    let send_lag_limit = match &e.send_lag_limit {
        Some(d) => cx.duration(d)?,
        None => Duration::from_millis(10),
    };
    let ready_timeout = match &e.ready_timeout {
        Some(d) => nonzero(cx, d)?,
        None => Duration::from_secs(10),
    };
    let cluster_wait = match &e.cluster_wait {
        Some(d) => cx.duration(d)?,
        None => resplab_engine::DEFAULT_CLUSTER_WAIT,
    };
    let exp = Experiment {
        name,
        rounds,
        warmup,
        order,
        seed: e.seed.unwrap_or(1),
        primary_metric,
        margin,
        max_reruns: e.max_reruns.unwrap_or(2),
        client_cpu_limit,
        send_lag_limit,
        ready_timeout,
        cluster_wait,
        progress_commands: false,
        variants: Vec::new(),
        workloads: Vec::new(),
        before_phase: e.before_phase.clone().filter(|c| !c.trim().is_empty()),
        shared_server: None,
        generators: Vec::new(),
        until_decided,
        perf: None,
        profile: None,
    };
    Ok((exp, budget))
}

/// The default trial budget: `test_time` or `requests` (not both), 100 000 requests if
/// neither.
fn trial_budget(cx: &Ctx<'_>, e: &ExperimentSpec) -> Result<TrialBudget, SpecError> {
    Ok(match (&e.test_time, &e.requests) {
        (Some(t), Some(_)) => {
            return Err(cx.err(t.span(), "give either test_time or requests, not both"))
        }
        (Some(t), None) => TrialBudget::TestTime(nonzero(cx, t)?),
        (None, Some(r)) if *r.get_ref() == 0 => {
            return Err(cx.err(r.span(), "expected at least 1 request, found 0"))
        }
        (None, Some(r)) => TrialBudget::Requests(*r.get_ref()),
        (None, None) => TrialBudget::Requests(100_000),
    })
}

/// The trial order: `rmit` (the default), `abba`, `fixed` or `duet`.
fn order(cx: &Ctx<'_>, e: &ExperimentSpec) -> Result<Order, SpecError> {
    Ok(
        match e.order.as_ref().map(|o| (o.get_ref().as_str(), o.span())) {
            None | Some(("rmit", _)) => Order::Rmit,
            Some(("abba", _)) => Order::Abba,
            Some(("fixed", _)) => Order::Fixed,
            Some(("duet", _)) => Order::Duet,
            Some((other, span)) => {
                return Err(cx.err(
                    span,
                    format!(
                        "expected \"rmit\", \"abba\", \"fixed\" or \"duet\", found \"{other}\""
                    ),
                ))
            }
        },
    )
}

/// `until`: `"rounds"` (exactly `rounds`, the default) or `"decided"` with `max_rounds`
/// and/or `max_time`, which apply only then; `rounds` is not given with `"decided"`.
fn until(cx: &Ctx<'_>, e: &ExperimentSpec) -> Result<Option<UntilDecided>, SpecError> {
    let decided = match &e.until {
        None => false,
        Some(u) => match u.get_ref().as_str() {
            "rounds" => false,
            "decided" => true,
            other => {
                return Err(cx.err(
                    u.span(),
                    format!("expected \"rounds\" or \"decided\", found \"{other}\""),
                ))
            }
        },
    };
    if !decided {
        if let Some(r) = &e.max_rounds {
            return Err(cx.err(r.span(), "max_rounds applies only with until = \"decided\""));
        }
        if let Some(t) = &e.max_time {
            return Err(cx.err(t.span(), "max_time applies only with until = \"decided\""));
        }
        if let Some(r) = &e.until_rule {
            return Err(cx.err(r.span(), "until_rule applies only with until = \"decided\""));
        }
        return Ok(None);
    }
    if let Some(r) = &e.rounds {
        return Err(cx.err(
            r.span(),
            "give either rounds (a fixed count) or until = \"decided\" with max_rounds, not both",
        ));
    }
    let max_rounds = e.max_rounds.as_ref().map(|r| *r.get_ref());
    let max_time_sec = match &e.max_time {
        Some(t) => Some(nonzero(cx, t)?.as_secs_f64()),
        None => None,
    };
    if max_rounds.is_none() && max_time_sec.is_none() {
        let span = e.until.as_ref().map_or(0..0, |u| u.span());
        return Err(cx.err(
            span,
            "until = \"decided\" needs a limit: max_rounds, max_time or both",
        ));
    }
    let rule = match &e.until_rule {
        None => UntilRule::default(),
        Some(r) => UntilRule::from_name(r.get_ref()).ok_or_else(|| {
            cx.err(
                r.span(),
                format!(
                    "expected one of {}, found \"{}\"",
                    UntilRule::NAMES.map(|n| format!("\"{n}\"")).join(", "),
                    r.get_ref()
                ),
            )
        })?,
    };
    Ok(Some(UntilDecided {
        max_rounds,
        max_time_sec,
        rule,
    }))
}

/// The limits of a run until decided leave room for a decision (checked once the
/// workloads, and so the length of a round, are known).
fn check_until(cx: &Ctx<'_>, e: &ExperimentSpec, exp: &Experiment) -> Result<(), SpecError> {
    let Some(until) = &exp.until_decided else {
        return Ok(());
    };
    crate::sequential::check(exp, until).map_err(|err| {
        let span = match err.limit {
            crate::sequential::Limit::MaxRounds => e.max_rounds.as_ref().map(|r| r.span()),
            crate::sequential::Limit::MaxTime => e.max_time.as_ref().map(|t| t.span()),
            crate::sequential::Limit::Until => e.until.as_ref().map(|u| u.span()),
        };
        cx.err(span.unwrap_or(0..0), err.message)
    })
}

/// The equivalence margin, a fraction strictly between 0 and 1, if any.
fn margin(cx: &Ctx<'_>, e: &ExperimentSpec) -> Result<Option<f64>, SpecError> {
    Ok(match &e.margin {
        Some(m) if !(*m.get_ref() > 0.0 && *m.get_ref() < 1.0) => {
            return Err(cx.err(
                m.span(),
                format!(
                    "expected a fraction between 0 and 1 (0.02 means ±2 %), found {}",
                    m.get_ref()
                ),
            ))
        }
        Some(m) => Some(*m.get_ref()),
        None => None,
    })
}

/// The primary metric: a known metric name, or any name when a workload is a command
/// (its output may carry it); by default `ops_per_sec`, or the wall time when every
/// workload is a command.
fn primary_metric(cx: &Ctx<'_>, spec: &FileSpec) -> Result<String, SpecError> {
    let e = &spec.experiment;
    // Command workloads measure whatever their output carries, so with one of them any
    // metric name may be primary (a name no trial stores gives no verdict, and `compare`
    // still compares every metric).
    let any_command = spec.workloads.iter().any(|w| w.run.is_some());
    let all_commands = !spec.workloads.is_empty() && spec.workloads.iter().all(|w| w.run.is_some());
    Ok(match &e.primary_metric {
        Some(m) if m.get_ref().trim().is_empty() => {
            return Err(cx.err(m.span(), "expected a metric name, found nothing"));
        }
        Some(m) if any_command => m.get_ref().clone(),
        Some(m) if !resplab_store::metrics::is_known_metric(m.get_ref()) => {
            let names: Vec<&str> = resplab_store::metrics::SUMMARY_METRICS
                .iter()
                .chain(resplab_store::metrics::TRIAL_METRICS)
                .chain(resplab_store::metrics::EVIDENCE_METRICS)
                .map(|(n, _)| *n)
                .collect();
            let hint = match error::closest(m.get_ref(), &names) {
                Some(c) => format!("; did you mean \"{c}\"?"),
                None => format!("; known metrics: {}", names.join(", ")),
            };
            return Err(cx.err(
                m.span(),
                format!("unknown metric \"{}\"{hint}", m.get_ref()),
            ));
        }
        Some(m) => m.get_ref().clone(),
        None if all_commands => crate::command::WALL_METRIC.to_string(),
        None => "ops_per_sec".to_string(),
    })
}

/// `[params]`: names not reserved by the runner, each with at least one scalar value.
fn check_params(
    cx: &Ctx<'_>,
    params: &BTreeMap<String, Spanned<Vec<toml::Value>>>,
) -> Result<(), SpecError> {
    for (pname, values) in params {
        if RUNTIME_PLACEHOLDERS.contains(&pname.as_str()) {
            return Err(cx.err(
                values.span(),
                format!(
                    "parameter name \"{pname}\" is reserved for the runner; choose another name"
                ),
            ));
        }
        if values.get_ref().is_empty() {
            return Err(cx.err(
                values.span(),
                format!("parameter \"{pname}\" has no values"),
            ));
        }
        for v in values.get_ref() {
            if scalar_text(v).is_none() {
                return Err(cx.err(
                    values.span(),
                    format!("parameter \"{pname}\" values must be strings, numbers or booleans, found {v}"),
                ));
            }
        }
    }
    Ok(())
}

/// The variants: at least two tables, expanded over `[params]`, uniquely named, toggles
/// inside a variant that runs its own server, the baseline first.
fn variants(cx: &Ctx<'_>, spec: &FileSpec) -> Result<Vec<Variant>, SpecError> {
    let e = &spec.experiment;
    if spec.variants.len() < 2 {
        return Err(SpecError {
            file: cx.file.into(),
            line: None,
            column: None,
            key: Some("variant".into()),
            message: format!(
                "expected at least two [[variant]] tables (a baseline and a change), found {}",
                spec.variants.len()
            ),
        });
    }
    let mut variants = Vec::new();
    for (i, v) in spec.variants.iter().enumerate() {
        variants.extend(expand_variant(cx, i, v, &spec.params)?);
    }
    check_names_and_toggles(cx, &variants)?;
    if let Some(b) = &e.baseline {
        match variants.iter().position(|v| &v.name == b.get_ref()) {
            Some(i) => {
                let base = variants.remove(i);
                variants.insert(0, base);
            }
            None => {
                let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
                return Err(cx.err(
                    b.span(),
                    format!(
                        "no variant named \"{}\"; variants are: {}",
                        b.get_ref(),
                        names.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(variants)
}

/// Variant names are unique, and every toggle names a variant that runs its own server.
fn check_names_and_toggles(cx: &Ctx<'_>, variants: &[Variant]) -> Result<(), SpecError> {
    // names unique
    for (i, v) in variants.iter().enumerate() {
        if variants[..i].iter().any(|w| w.name == v.name) {
            return Err(SpecError {
                file: cx.file.into(),
                line: None,
                column: None,
                key: Some("variant.name".into()),
                message: format!(
                    "two variants are named \"{}\"; names must be unique",
                    v.name
                ),
            });
        }
    }
    // toggles refer to a spawned or addressed variant
    for v in variants {
        if let ServerSource::Toggle { of, .. } = &v.server {
            match variants.iter().find(|w| &w.name == of) {
                None => {
                    return Err(SpecError {
                        file: cx.file.into(),
                        line: None,
                        column: None,
                        key: Some(format!("variant \"{}\".toggle_of", v.name)),
                        message: format!("no variant named \"{of}\" to toggle inside"),
                    })
                }
                Some(w) if matches!(w.server, ServerSource::Toggle { .. }) => {
                    return Err(SpecError {
                        file: cx.file.into(),
                        line: None,
                        column: None,
                        key: Some(format!("variant \"{}\".toggle_of", v.name)),
                        message: format!("\"{of}\" is itself a toggle variant; name a variant that runs its own server"),
                    })
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// The `[server]` section shared by the variants, and the workloads (at least one,
/// uniquely named).
fn workloads(
    cx: &Ctx<'_>,
    spec: &FileSpec,
    variants: &[Variant],
    budget: TrialBudget,
) -> Result<(Option<SharedServer>, Vec<Workload>), SpecError> {
    if spec.workloads.is_empty() {
        return Err(SpecError {
            file: cx.file.into(),
            line: None,
            column: None,
            key: Some("workload".into()),
            message: "expected at least one [[workload]] table".into(),
        });
    }
    let shared_server = match &spec.server {
        None => None,
        Some(s) => Some(resolve_shared_server(cx, s, variants)?),
    };
    let mut workloads = Vec::new();
    for (i, w) in spec.workloads.iter().enumerate() {
        let wl = resolve_workload(cx, i, w, budget)?;
        if workloads.iter().any(|x: &Workload| x.name == wl.name) {
            return Err(cx.err(
                w.name.span(),
                format!(
                    "two workloads are named \"{}\"; names must be unique",
                    wl.name
                ),
            ));
        }
        workloads.push(wl);
    }
    Ok((shared_server, workloads))
}

/// The `[[generator]]` tables: hosts, a launcher with `{host}` in it, the start lead.
fn generators(
    cx: &Ctx<'_>,
    specs: &[GeneratorSpec],
) -> Result<Vec<crate::model::Generator>, SpecError> {
    let mut generators = Vec::new();
    for g in specs {
        let launcher = g
            .launcher
            .as_ref()
            .map(|l| l.get_ref().clone())
            .unwrap_or_default();
        if let Some(l) = &g.launcher {
            crate::words::split_words(l.get_ref())
                .map_err(|e| cx.err(l.span(), format!("launcher: {e}")))?;
        }
        let hosts = g.hosts.get_ref().clone();
        if hosts.is_empty() || hosts.iter().any(|h| h.trim().is_empty()) {
            return Err(cx.err(
                g.hosts.span(),
                "hosts: expected a list of host names (one shard each), none empty",
            ));
        }
        if !launcher.trim().is_empty() && !launcher.contains("{host}") {
            return Err(cx.err(
                g.launcher.as_ref().map_or(g.hosts.span(), |l| l.span()),
                format!("launcher \"{launcher}\": expected {{host}} in it (where the host name goes), e.g. \"ssh {{host}}\""),
            ));
        }
        let start_lead = match &g.start_lead {
            Some(d) => nonzero(cx, d)?,
            None => Duration::from_secs(3),
        };
        generators.push(crate::model::Generator {
            launcher,
            hosts,
            resplab: g.resplab.as_ref().map(|r| r.get_ref().clone()),
            server_host: g.server_host.as_ref().map(|r| r.get_ref().clone()),
            start_lead,
        });
    }
    Ok(generators)
}

/// A variant without a server runs command workloads only (bench workloads too when
/// `[server]` gives it one), has nothing to CONFIG SET, and nothing can be toggled inside
/// it.
fn check_serverless(
    file: &str,
    variants: &[Variant],
    workloads: &[Workload],
    has_shared_server: bool,
) -> Result<(), SpecError> {
    for v in variants {
        let problem = if !matches!(v.server, ServerSource::None) {
            None
        } else if !v.config.is_empty() {
            Some((
                "config",
                "a variant with server = \"none\" has no server to CONFIG SET",
            ))
        } else if !has_shared_server && workloads.iter().any(|w: &Workload| w.run.is_none()) {
            Some((
                "server",
                "a variant with server = \"none\" and no [server] section can only run command \
                 workloads (`run = \"…\"`); a workload in the bench vocabulary needs a server \
                 (give the variant one, or add [server])",
            ))
        } else if let Some(t) = variants
            .iter()
            .find(|t| matches!(&t.server, ServerSource::Toggle { of, .. } if *of == v.name))
        {
            let _ = t;
            Some((
                "toggle_of",
                "a toggle variant needs a variant that runs a server",
            ))
        } else {
            None
        };
        if let Some((k, message)) = problem {
            return Err(SpecError {
                file: file.into(),
                line: None,
                column: None,
                key: Some(format!("variant \"{}\".{k}", v.name)),
                message: message.into(),
            });
        }
    }
    Ok(())
}

/// `protocol = "respb"` is the wire of resplab's own load: a command workload runs its
/// own client, which the variant's protocol would not reach.
fn check_respb_workloads(
    file: &str,
    variants: &[Variant],
    workloads: &[Workload],
) -> Result<(), SpecError> {
    let respb = variants.iter().find(|v| !v.protocol.is_resp());
    let command = workloads.iter().find(|w| w.run.is_some());
    if let (Some(v), Some(w)) = (respb, command) {
        return Err(SpecError {
            file: file.into(),
            line: None,
            column: None,
            key: Some(format!("variant \"{}\".protocol", v.name)),
            message: format!(
                "protocol = \"respb\" sets the wire of resplab's own load; workload \"{}\" runs its own client (run = \"…\"), which it would not reach",
                w.name
            ),
        });
    }
    Ok(())
}

fn nonzero(cx: &Ctx<'_>, v: &Spanned<DurationValue>) -> Result<Duration, SpecError> {
    let d = cx.duration(v)?;
    if d.is_zero() {
        return Err(cx.err(v.span(), "expected a duration above zero"));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::{Overrides, TrialBudget};
    use std::time::Duration;

    #[test]
    fn run_flags_refuse_zero_and_the_test_time_wins_over_requests() {
        let zero = Overrides::from_flags(Some(0), None, None, false).unwrap_err();
        assert_eq!(zero, "--rounds: expected at least 1, found 0");
        let zero = Overrides::from_flags(None, Some(0), None, false).unwrap_err();
        assert_eq!(zero, "--requests: expected at least 1, found 0");
        assert!(Overrides::from_flags(None, None, Some("soon"), false)
            .unwrap_err()
            .starts_with("--test-time: "));
        let o = Overrides::from_flags(Some(3), Some(10), Some("2s"), false).unwrap();
        assert_eq!(o.rounds, Some(3));
        assert_eq!(
            o.budget,
            Some(TrialBudget::TestTime(Duration::from_secs(2)))
        );
        let smoke = Overrides::from_flags(None, Some(10), None, true).unwrap();
        assert_eq!(smoke.rounds, Some(2));
        assert_eq!(smoke.budget, Some(TrialBudget::Requests(10)));
    }
}
