//! From file text to a validated [`Experiment`].
//!
//! Steps: parse the TOML into [`crate::spec`] (unknown keys refused with a suggestion),
//! expand `[params]` into variants, apply defaults, and check every value, pointing each
//! error at its line. Placeholders `{port}` and `{dir}` are left for the runner; any other
//! `{name}` must be a parameter.

use crate::error::{self, SpecError};
use crate::model::*;
use crate::spec::*;
use crate::words;
use std::collections::BTreeMap;
use std::time::Duration;
use toml::Spanned;

/// Placeholders the runner fills in for each server execution.
pub const RUNTIME_PLACEHOLDERS: &[&str] = &["port", "dir", "pid"];

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
    let rounds = match &e.rounds {
        Some(r) if *r.get_ref() == 0 => {
            return Err(cx.err(r.span(), "expected at least 1 round, found 0"))
        }
        Some(r) => *r.get_ref(),
        None => 10,
    };
    let budget = match (&e.test_time, &e.requests) {
        (Some(t), Some(_)) => {
            return Err(cx.err(t.span(), "give either test_time or requests, not both"))
        }
        (Some(t), None) => TrialBudget::TestTime(nonzero(&cx, t)?),
        (None, Some(r)) if *r.get_ref() == 0 => {
            return Err(cx.err(r.span(), "expected at least 1 request, found 0"))
        }
        (None, Some(r)) => TrialBudget::Requests(*r.get_ref()),
        (None, None) => TrialBudget::Requests(100_000),
    };
    let warmup = match &e.warmup {
        Some(w) => cx.duration(w)?,
        None => Duration::ZERO,
    };
    let order = match e.order.as_ref().map(|o| (o.get_ref().as_str(), o.span())) {
        None | Some(("rmit", _)) => Order::Rmit,
        Some(("abba", _)) => Order::Abba,
        Some(("fixed", _)) => Order::Fixed,
        Some((other, span)) => {
            return Err(cx.err(
                span,
                format!("expected \"rmit\", \"abba\" or \"fixed\", found \"{other}\""),
            ))
        }
    };
    // Command workloads measure whatever their output carries, so with one of them any
    // metric name may be primary (a name no trial stores gives no verdict, and `compare`
    // still compares every metric).
    let any_command = spec.workloads.iter().any(|w| w.run.is_some());
    let all_commands = !spec.workloads.is_empty() && spec.workloads.iter().all(|w| w.run.is_some());
    let primary_metric = match &e.primary_metric {
        Some(m) if m.get_ref().trim().is_empty() => {
            return Err(cx.err(m.span(), "expected a metric name, found nothing"));
        }
        Some(m) if any_command => m.get_ref().clone(),
        Some(m) if !resplab_store::metrics::is_known_metric(m.get_ref()) => {
            let names: Vec<&str> = resplab_store::metrics::SUMMARY_METRICS
                .iter()
                .chain(resplab_store::metrics::TRIAL_METRICS)
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
    };
    let margin = match &e.margin {
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
    };
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
        Some(d) => nonzero(&cx, d)?,
        None => Duration::from_secs(10),
    };

    // params
    for (pname, values) in &spec.params {
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

    if spec.variants.len() < 2 {
        return Err(SpecError {
            file: file.into(),
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
        variants.extend(expand_variant(&cx, i, v, &spec.params)?);
    }
    // names unique
    for (i, v) in variants.iter().enumerate() {
        if variants[..i].iter().any(|w| w.name == v.name) {
            return Err(SpecError {
                file: file.into(),
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
    for v in &variants {
        if let ServerSource::Toggle { of, .. } = &v.server {
            match variants.iter().find(|w| &w.name == of) {
                None => {
                    return Err(SpecError {
                        file: file.into(),
                        line: None,
                        column: None,
                        key: Some(format!("variant \"{}\".toggle_of", v.name)),
                        message: format!("no variant named \"{of}\" to toggle inside"),
                    })
                }
                Some(w) if matches!(w.server, ServerSource::Toggle { .. }) => {
                    return Err(SpecError {
                        file: file.into(),
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

    if spec.workloads.is_empty() {
        return Err(SpecError {
            file: file.into(),
            line: None,
            column: None,
            key: Some("workload".into()),
            message: "expected at least one [[workload]] table".into(),
        });
    }
    let shared_server = match &spec.server {
        None => None,
        Some(s) => Some(resolve_shared_server(&cx, s, &variants)?),
    };
    let mut workloads = Vec::new();
    for (i, w) in spec.workloads.iter().enumerate() {
        let wl = resolve_workload(&cx, i, w, budget)?;
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

    let mut generators = Vec::new();
    for g in &spec.generators {
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
            Some(d) => nonzero(&cx, d)?,
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
    // A variant without a server runs command workloads only (bench workloads too when
    // [server] gives it one), has nothing to CONFIG SET, and nothing can be toggled
    // inside it.
    for v in &variants {
        let problem = if !matches!(v.server, ServerSource::None) {
            None
        } else if !v.config.is_empty() {
            Some((
                "config",
                "a variant with server = \"none\" has no server to CONFIG SET",
            ))
        } else if shared_server.is_none() && workloads.iter().any(|w: &Workload| w.run.is_none()) {
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
    let mut exp = Experiment {
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
        variants,
        workloads,
        before_phase: e.before_phase.clone().filter(|c| !c.trim().is_empty()),
        shared_server,
        generators,
    };
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

fn nonzero(cx: &Ctx<'_>, v: &Spanned<DurationValue>) -> Result<Duration, SpecError> {
    let d = cx.duration(v)?;
    if d.is_zero() {
        return Err(cx.err(v.span(), "expected a duration above zero"));
    }
    Ok(d)
}

fn scalar_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Every string of a variant that may hold placeholders.
fn variant_texts(v: &VariantSpec) -> Vec<String> {
    let mut t = vec![v.name.get_ref().clone()];
    t.extend(v.server.as_ref().map(|s| s.get_ref().clone()));
    t.extend(v.address.as_ref().map(|s| s.get_ref().clone()));
    t.extend(v.env.values().cloned());
    t.extend(v.config.values().filter_map(|c| scalar_text(c.get_ref())));
    let h = &v.hooks;
    t.extend(
        [
            &h.setup,
            &h.before_trial,
            &h.after_trial,
            &h.teardown,
            &v.toggle_on,
            &v.toggle_off,
        ]
        .into_iter()
        .flatten()
        .cloned(),
    );
    t
}

fn expand_variant(
    cx: &Ctx<'_>,
    index: usize,
    v: &VariantSpec,
    params: &BTreeMap<String, Spanned<Vec<toml::Value>>>,
) -> Result<Vec<Variant>, SpecError> {
    let mut used: Vec<String> = Vec::new();
    for text in variant_texts(v) {
        for p in words::placeholders(&text) {
            if RUNTIME_PLACEHOLDERS.contains(&p.as_str()) || used.contains(&p) {
                continue;
            }
            if !params.contains_key(&p) {
                let known: Vec<&str> = params.keys().map(String::as_str).collect();
                return Err(cx.err_key(
                    v.name.span(),
                    format!("variant[{index}]"),
                    format!(
                        "unknown placeholder {{{p}}} in \"{text}\"; the runner fills {{port}} and {{dir}}, [params] defines: {}",
                        if known.is_empty() { "nothing".to_string() } else { known.join(", ") }
                    ),
                ));
            }
            used.push(p);
        }
    }
    // Cartesian product over the parameters this variant uses, in [params] order.
    let used: Vec<(&String, Vec<String>)> = params
        .iter()
        .filter(|(k, _)| used.contains(k))
        .map(|(k, vals)| (k, vals.get_ref().iter().filter_map(scalar_text).collect()))
        .collect();
    let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (k, vals) in &used {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                vals.iter().map(move |val| {
                    let mut c = c.clone();
                    c.push(((*k).clone(), val.clone()));
                    c
                })
            })
            .collect();
    }
    combos
        .into_iter()
        .map(|combo| resolve_variant(cx, index, v, combo))
        .collect()
}

/// The connection keys of a variant: `uri` (instead of `address`), the TLS keys, `user`
/// and `password_env` (for `address`/`uri` variants), and `cluster` (with `server`).
fn resolve_connect(
    cx: &Ctx<'_>,
    v: &VariantSpec,
    server: ServerSource,
    sub: &dyn Fn(&str) -> String,
    key: &dyn Fn(&str) -> String,
) -> Result<(ServerSource, Connect), SpecError> {
    let mut server = server;
    let mut tls_on = v.tls.as_ref().is_some_and(|t| *t.get_ref());
    let mut user = v.user.as_ref().map(|u| sub(u.get_ref()));
    if let Some(u) = &v.uri {
        if v.server.is_some() || v.address.is_some() || v.toggle_of.is_some() {
            return Err(cx.err_key(
                u.span(),
                key("uri"),
                "give either uri or server/address/toggle_of, not both",
            ));
        }
        let text = sub(u.get_ref());
        let bad = |m: String| cx.err_key(u.span(), key("uri"), m);
        // One URI parser for bench and experiments; its errors never show the userinfo.
        let parsed = resplab_engine::uri::parse(&text).map_err(|e| {
            bad(format!(
                "expected redis://[user@]host[:port] or rediss://…, found \"{}\" ({})",
                e.shown, e.why
            ))
        })?;
        tls_on |= parsed.tls;
        match &parsed.credentials {
            Some(resplab_engine::uri::Credentials::Pair { .. }) => {
                return Err(bad(
                    "a password in the experiment file would be stored with every trial: name the environment variable that holds it with password_env = \"VAR\" and give the user alone (redis://user@host:port)".into(),
                ));
            }
            // In a file, which may hold no password, a lone word is the user.
            Some(resplab_engine::uri::Credentials::Lone(u)) if !u.is_empty() => {
                user = Some(u.clone());
            }
            _ => {}
        }
        if parsed.db.is_some() {
            return Err(bad(format!(
                "a database number is not taken from an experiment uri, found \"{}\"",
                resplab_engine::uri::redact(&text)
            )));
        }
        let (host, port) = (parsed.host, parsed.port);
        server = ServerSource::Address { host, port };
    }
    if let Some(c) = &v.cluster {
        let spec = c.get_ref();
        let command = match &server {
            ServerSource::Spawn { command } if v.address.is_none() && v.uri.is_none() => {
                command.clone()
            }
            _ => {
                return Err(cx.err_key(
                    c.span(),
                    key("cluster"),
                    "cluster = {…} starts a fresh cluster from the variant's server command; for a cluster that is already running give its address (cluster mode is detected)",
                ))
            }
        };
        if spec.masters == 0 || spec.masters > 64 || spec.replicas > 8 {
            return Err(cx.err_key(
                c.span(),
                key("cluster"),
                format!(
                    "expected 1 to 64 masters and 0 to 8 replicas each, found masters = {}, replicas = {}",
                    spec.masters, spec.replicas
                ),
            ));
        }
        server = ServerSource::Cluster {
            command,
            masters: spec.masters,
            replicas: spec.replicas,
        };
    }
    let tls_keys: [(&str, Option<std::ops::Range<usize>>); 7] = [
        ("tls", v.tls.as_ref().map(|t| t.span())),
        ("cacert", v.cacert.as_ref().map(|t| t.span())),
        ("cacertdir", v.cacertdir.as_ref().map(|t| t.span())),
        ("cert", v.cert.as_ref().map(|t| t.span())),
        ("key", v.key.as_ref().map(|t| t.span())),
        ("sni", v.sni.as_ref().map(|t| t.span())),
        ("insecure", v.insecure.as_ref().map(|t| t.span())),
    ];
    let auth_keys = [
        ("user", v.user.as_ref().map(|t| t.span())),
        ("password_env", v.password_env.as_ref().map(|t| t.span())),
    ];
    if !matches!(server, ServerSource::Address { .. }) {
        if let Some((k, Some(span))) = tls_keys
            .iter()
            .chain(auth_keys.iter())
            .find(|(_, sp)| sp.is_some())
            .cloned()
        {
            return Err(cx.err_key(
                span,
                key(k),
                "TLS and credentials are settings of a server that is already running: give address or uri with them",
            ));
        }
    }
    if !tls_on {
        if let Some((k, Some(span))) = tls_keys[1..].iter().find(|(_, sp)| sp.is_some()).cloned() {
            return Err(cx.err_key(
                span,
                key(k),
                "a TLS setting without TLS: add tls = true or use a rediss:// uri",
            ));
        }
    }
    let path = |p: &Option<Spanned<String>>, k: &str| -> Result<Option<String>, SpecError> {
        match p {
            None => Ok(None),
            Some(p) => {
                let text = sub(p.get_ref());
                if !std::path::Path::new(&text).exists() {
                    return Err(cx.err_key(p.span(), key(k), format!("{text} does not exist")));
                }
                Ok(Some(text))
            }
        }
    };
    let tls = if tls_on {
        Some(TlsConnect {
            cacert: path(&v.cacert, "cacert")?,
            cacertdir: path(&v.cacertdir, "cacertdir")?,
            cert: path(&v.cert, "cert")?,
            key: path(&v.key, "key")?,
            sni: v.sni.as_ref().map(|s| sub(s.get_ref())),
            insecure: v.insecure.as_ref().is_some_and(|i| *i.get_ref()),
        })
    } else {
        None
    };
    if let Some(t) = &tls {
        if t.cert.is_some() != t.key.is_some() {
            let span = v
                .cert
                .as_ref()
                .or(v.key.as_ref())
                .map(|s| s.span())
                .unwrap_or_default();
            return Err(cx.err_key(span, key("cert"), "cert and key go together (mutual TLS)"));
        }
    }
    let password_env = match &v.password_env {
        None => None,
        Some(p) => {
            let name = p.get_ref().trim().to_string();
            if name.is_empty() || name.contains(['=', '\0']) {
                return Err(cx.err_key(
                    p.span(),
                    key("password_env"),
                    format!("expected the name of an environment variable, found \"{name}\""),
                ));
            }
            if std::env::var_os(&name).is_none() {
                return Err(cx.err_key(
                    p.span(),
                    key("password_env"),
                    format!("the environment variable {name} is not set: export it before running the experiment"),
                ));
            }
            Some(name)
        }
    };
    Ok((
        server,
        Connect {
            tls,
            user,
            password_env,
        },
    ))
}

fn resolve_variant(
    cx: &Ctx<'_>,
    index: usize,
    v: &VariantSpec,
    combo: Vec<(String, String)>,
) -> Result<Variant, SpecError> {
    let pairs: Vec<(&str, &str)> = combo
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let sub = |s: &str| words::substitute(s, &pairs);
    let key = |k: &str| format!("variant[{index}].{k}");
    let mut name = sub(v.name.get_ref()).trim().to_string();
    if !combo.is_empty() && words::placeholders(v.name.get_ref()).is_empty() {
        let suffix: Vec<String> = combo.iter().map(|(k, val)| format!("{k}={val}")).collect();
        name = format!("{name}[{}]", suffix.join(","));
    }
    if name.is_empty() {
        return Err(cx.err_key(v.name.span(), key("name"), "expected a non-empty name"));
    }
    let toggle = v.toggle_of.is_some();
    if !toggle && (v.toggle_on.is_some() || v.toggle_off.is_some() || v.guard.is_some()) {
        return Err(cx.err_key(
            v.name.span(),
            key("toggle_on"),
            "toggle_on, toggle_off and guard need toggle_of (the variant whose server this one switches)",
        ));
    }
    let server = match (&v.server, &v.address, &v.toggle_of) {
        (Some(s), Some(_), _) => {
            return Err(cx.err_key(s.span(), key("server"), "give either server or address, not both"))
        }
        (Some(s), _, Some(_)) | (_, Some(s), Some(_)) => {
            return Err(cx.err_key(
                s.span(),
                key("toggle_of"),
                "a toggle variant runs inside the server of the variant it names; remove server/address",
            ))
        }
        (None, None, Some(of)) => {
            if v.toggle_on.is_none() && v.config.is_empty() {
                return Err(cx.err_key(
                    of.span(),
                    key("toggle_on"),
                    "a toggle variant needs toggle_on (a shell command) or config (CONFIG SET pairs) to switch it on",
                ));
            }
            ServerSource::Toggle {
                of: of.get_ref().clone(),
                on: v.toggle_on.as_deref().map(sub),
                off: v.toggle_off.as_deref().map(sub),
                guard: match &v.guard {
                    Some(g) => cx.duration(g)?,
                    None => Duration::from_secs(1),
                },
            }
        }
        (Some(s), None, None) if s.get_ref().trim() == "none" => ServerSource::None,
        (Some(s), None, None) => {
            let command = words::split_words(&sub(s.get_ref()))
                .map_err(|m| cx.err_key(s.span(), key("server"), m))?;
            if command.is_empty() {
                return Err(cx.err_key(s.span(), key("server"), "expected a command, found an empty string"));
            }
            if !command.iter().any(|w| w.contains("{port}")) {
                return Err(cx.err_key(
                    s.span(),
                    key("server"),
                    format!("the command must listen on {{port}} (the runner picks a free port per trial), found \"{}\"", s.get_ref()),
                ));
            }
            ServerSource::Spawn { command }
        }
        (None, Some(a), None) => {
            let text = sub(a.get_ref());
            let (host, port) = text
                .rsplit_once(':')
                .and_then(|(h, p)| Some((h.trim_matches(['[', ']']).to_string(), p.parse::<u16>().ok()?)))
                .filter(|(h, p)| !h.is_empty() && *p != 0)
                .ok_or_else(|| {
                    cx.err_key(a.span(), key("address"), format!("expected host:port, found \"{text}\""))
                })?;
            ServerSource::Address { host, port }
        }
        (None, None, None) => ServerSource::Spawn {
            command: words::split_words(DEFAULT_SERVER).unwrap_or_default(),
        },
    };
    let (server, connect) = resolve_connect(cx, v, server, &sub, &key)?;
    let mut config = Vec::new();
    for (k, val) in &v.config {
        let Some(text) = scalar_text(val.get_ref()) else {
            return Err(cx.err_key(
                val.span(),
                key(&format!("config.{k}")),
                format!(
                    "expected a string, number or boolean, found {}",
                    val.get_ref()
                ),
            ));
        };
        config.push((k.clone(), sub(&text)));
    }
    let cpus = |c: &Option<Spanned<String>>, k: &str| -> Result<Option<String>, SpecError> {
        match c {
            None => Ok(None),
            Some(c) => {
                words::cpu_list_len(c.get_ref()).map_err(|m| cx.err_key(c.span(), key(k), m))?;
                Ok(Some(c.get_ref().trim().to_string()))
            }
        }
    };
    let h = &v.hooks;
    let timeout = match &h.timeout {
        Some(t) => {
            duration_value(t).map_err(|m| cx.err_key(v.name.span(), key("hooks.timeout"), m))?
        }
        None => Duration::from_secs(60),
    };
    Ok(Variant {
        name,
        server,
        env: v.env.iter().map(|(k, val)| (k.clone(), sub(val))).collect(),
        config,
        hooks: Hooks {
            setup: h.setup.as_deref().map(sub),
            before_trial: h.before_trial.as_deref().map(sub),
            after_trial: h.after_trial.as_deref().map(sub),
            teardown: h.teardown.as_deref().map(sub),
            timeout,
        },
        server_cpus: cpus(&v.server_cpus, "server_cpus")?,
        client_cpus: cpus(&v.client_cpus, "client_cpus")?,
        params: combo,
        connect,
    })
}

fn resolve_workload(
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
    if let Some(t) = &w.tests {
        crate::workload::check_tests(&tests.join(","))
            .map_err(|m| cx.err_key(t.span(), key("tests"), m))?;
    }
    if let Some(c) = &w.command {
        for cmd in &commands {
            crate::workload::check_command(cmd)
                .map_err(|m| cx.err_key(c.span(), key("command"), m))?;
        }
    }
    let check = |v: &Option<Spanned<String>>,
                 k: &str,
                 f: fn(&str) -> Result<(), String>|
     -> Result<Option<String>, SpecError> {
        match v {
            None => Ok(None),
            Some(s) => {
                f(s.get_ref()).map_err(|m| cx.err_key(s.span(), key(k), m))?;
                Ok(Some(s.get_ref().clone()))
            }
        }
    };
    let ratio = check(&w.ratio, "ratio", crate::workload::check_ratio)?;
    let key_pattern = check(
        &w.key_pattern,
        "key_pattern",
        crate::workload::check_key_pattern,
    )?;
    let data_size_range = check(
        &w.data_size_range,
        "data_size_range",
        crate::workload::check_size_range,
    )?;
    let data_size_list = check(
        &w.data_size_list,
        "data_size_list",
        crate::workload::check_size_list,
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
    let arrivals = match &w.arrivals {
        None => "poisson".to_string(),
        Some(a) if a.get_ref() == "poisson" || a.get_ref() == "constant" => a.get_ref().clone(),
        Some(a) => {
            return Err(cx.err_key(
                a.span(),
                key("arrivals"),
                format!(
                    "expected \"poisson\" or \"constant\", found \"{}\"",
                    a.get_ref()
                ),
            ))
        }
    };
    let budget = match (&w.test_time, &w.requests) {
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
    };
    let mix_keys = ratio.is_some()
        || key_pattern.is_some()
        || data_size_range.is_some()
        || data_size_list.is_some();
    let tests = if tests.is_empty() && commands.is_empty() && !mix_keys {
        vec!["set".to_string(), "get".to_string()]
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
    })
}

/// `[server]`: its command (default: the default server) and how often it starts. Only
/// variants with `server = "none"` use it, so a file without one is refused.
fn resolve_shared_server(
    cx: &Ctx<'_>,
    s: &SharedServerSpec,
    variants: &[Variant],
) -> Result<SharedServer, SpecError> {
    let command = match &s.command {
        None => words::split_words(DEFAULT_SERVER).unwrap_or_default(),
        Some(c) => {
            let words = words::split_words(c.get_ref())
                .map_err(|m| cx.err_key(c.span(), "server.command".into(), m))?;
            if !words.iter().any(|w| w.contains("{port}")) {
                return Err(cx.err_key(
                    c.span(),
                    "server.command".into(),
                    format!(
                        "the command must listen on {{port}} (the runner picks a free port), found \"{}\"",
                        c.get_ref()
                    ),
                ));
            }
            words
        }
    };
    let per_round = match s.per.as_ref().map(|p| (p.get_ref().as_str(), p.span())) {
        None | Some(("trial", _)) => false,
        Some(("round", _)) => true,
        Some((other, span)) => {
            return Err(cx.err_key(
                span,
                "server.per".into(),
                format!("expected \"trial\" or \"round\", found \"{other}\""),
            ))
        }
    };
    if !variants
        .iter()
        .any(|v| matches!(v.server, ServerSource::None))
    {
        let span = s
            .command
            .as_ref()
            .or(s.per.as_ref())
            .map_or(0..0, |x| x.span());
        return Err(cx.err_key(
            span,
            "server".into(),
            "[server] is the server of the variants with server = \"none\"; no variant has it",
        ));
    }
    Ok(SharedServer { command, per_round })
}

/// Placeholders a command workload's `run` and `cwd` may use.
const COMMAND_PLACEHOLDERS: &[&str] = &["host", "port", "uri", "dir", "seed", "round", "variant"];

/// A `[[workload]]` with `run = "…"`: a command line and how to read its output. The
/// bench vocabulary does not apply to it, so its keys are refused here.
fn resolve_command_workload(
    cx: &Ctx<'_>,
    index: usize,
    w: &WorkloadSpecToml,
    name: String,
    default_budget: TrialBudget,
) -> Result<Workload, SpecError> {
    let key = |k: &str| format!("workload[{index}].{k}");
    let bench_keys = [
        ("tests", w.tests.as_ref().map(|v| v.span())),
        ("command", w.command.as_ref().map(|v| v.span())),
        ("ratio", w.ratio.as_ref().map(|v| v.span())),
        ("key_pattern", w.key_pattern.as_ref().map(|v| v.span())),
        ("keyspace", w.keyspace.as_ref().map(|v| v.span())),
        ("data_size", w.data_size.as_ref().map(|v| v.span())),
        (
            "data_size_range",
            w.data_size_range.as_ref().map(|v| v.span()),
        ),
        (
            "data_size_list",
            w.data_size_list.as_ref().map(|v| v.span()),
        ),
        ("pipeline", w.pipeline.as_ref().map(|v| v.span())),
        ("clients", w.clients.as_ref().map(|v| v.span())),
        ("threads", w.threads.as_ref().map(|v| v.span())),
        ("rate", w.rate.as_ref().map(|v| v.span())),
        ("arrivals", w.arrivals.as_ref().map(|v| v.span())),
        ("test_time", w.test_time.as_ref().map(|v| v.span())),
        ("requests", w.requests.as_ref().map(|v| v.span())),
    ];
    if let Some((k, Some(span))) = bench_keys.iter().find(|(_, s)| s.is_some()) {
        return Err(cx.err_key(
            span.clone(),
            key(k),
            format!("`{k}` is bench vocabulary; a workload with `run` sets its load in its own command line"),
        ));
    }
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
    let mut texts = vec![(run.span(), "run", line.clone())];
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
    let timeout = match &w.timeout {
        Some(t) => nonzero(cx, t)?,
        None => Duration::from_secs(600),
    };
    let format = match &w.format {
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
    };
    Ok(Workload {
        name,
        tests: Vec::new(),
        commands: Vec::new(),
        ratio: None,
        key_pattern: None,
        keyspace: None,
        data_size: None,
        data_size_range: None,
        data_size_list: None,
        pipeline: 1,
        clients: 1,
        threads: 1,
        rate: None,
        arrivals: "poisson".into(),
        budget: default_budget,
        preload: None,
        run: Some(CommandRun {
            line,
            shell,
            timeout,
            cwd: w.cwd.as_ref().map(|c| c.get_ref().clone()),
            format,
        }),
    })
}
