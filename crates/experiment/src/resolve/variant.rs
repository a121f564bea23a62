//! Variants: `[params]` expanded into one variant per combination, and each variant's
//! server (command, address, toggle, cluster), hooks, config and pinning resolved and
//! checked.

use super::*;

pub(super) fn scalar_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Every string of a variant that may hold placeholders.
pub(super) fn variant_texts(v: &VariantSpec) -> Vec<String> {
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

pub(super) fn expand_variant(
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

pub(super) fn resolve_variant(
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
    let server = server_source(cx, v, &sub, &key)?;
    let (server, connect) = resolve_connect(cx, v, server, &sub, &key)?;
    let protocol = load_protocol(cx, v, &server, &connect, &key)?;
    let config = config_pairs(cx, v, &sub, &key)?;
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
        protocol,
    })
}

/// Where the variant's server comes from: a toggle of another variant's, none, a command
/// to spawn (it must listen on `{port}`), an address, or the default server.
fn server_source(
    cx: &Ctx<'_>,
    v: &VariantSpec,
    sub: &dyn Fn(&str) -> String,
    key: &dyn Fn(&str) -> String,
) -> Result<ServerSource, SpecError> {
    Ok(match (&v.server, &v.address, &v.toggle_of) {
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
    })
}

/// The variant's `config` pairs (CONFIG SET at start), values as text.
fn config_pairs(
    cx: &Ctx<'_>,
    v: &VariantSpec,
    sub: &dyn Fn(&str) -> String,
    key: &dyn Fn(&str) -> String,
) -> Result<Vec<(String, String)>, SpecError> {
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
    Ok(config)
}

/// `[server]`: its command (default: the default server) and how often it starts. Only
/// variants with `server = "none"` use it, so a file without one is refused.
pub(super) fn resolve_shared_server(
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
