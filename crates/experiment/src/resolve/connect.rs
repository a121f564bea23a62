//! A variant's connection: address or spawned server, TLS, user and password (the
//! password only as the name of an environment variable), and cluster options.

use super::*;

/// The connection keys of a variant: `uri` (instead of `address`), the TLS keys, `user`
/// and `password_env` (for `address`/`uri` variants), and `cluster` (with `server`).
pub(super) fn resolve_connect(
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
        let (address, tls, uri_user) = uri_source(cx, v, u, sub, key)?;
        server = address;
        tls_on |= tls;
        user = uri_user.or(user);
    }
    if let Some(c) = &v.cluster {
        server = cluster_source(cx, v, c, &server, key)?;
    }
    check_settings(cx, v, &server, tls_on, key)?;
    let tls = if tls_on {
        Some(tls_connect(cx, v, sub, key)?)
    } else {
        None
    };
    let password_env = password_env(cx, v, key)?;
    Ok((
        server,
        Connect {
            tls,
            user,
            password_env,
        },
    ))
}

/// `uri = "redis://…"`: the address it names, whether it asks for TLS, and its user
/// (a password in it is refused: the file would store it).
fn uri_source(
    cx: &Ctx<'_>,
    v: &VariantSpec,
    u: &Spanned<String>,
    sub: &dyn Fn(&str) -> String,
    key: &dyn Fn(&str) -> String,
) -> Result<(ServerSource, bool, Option<String>), SpecError> {
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
    let user = match &parsed.credentials {
        Some(resplab_engine::uri::Credentials::Pair { .. }) => {
            return Err(bad(
                "a password in the experiment file would be stored with every trial: name the environment variable that holds it with password_env = \"VAR\" and give the user alone (redis://user@host:port)".into(),
            ));
        }
        // In a file, which may hold no password, a lone word is the user.
        Some(resplab_engine::uri::Credentials::Lone(u)) if !u.is_empty() => Some(u.clone()),
        _ => None,
    };
    if parsed.db.is_some() {
        return Err(bad(format!(
            "a database number is not taken from an experiment uri, found \"{}\"",
            resplab_engine::uri::redact(&text)
        )));
    }
    let (host, port) = (parsed.host, parsed.port);
    Ok((ServerSource::Address { host, port }, parsed.tls, user))
}

/// `cluster = {…}`: a fresh cluster of the variant's server command.
fn cluster_source(
    cx: &Ctx<'_>,
    v: &VariantSpec,
    c: &Spanned<ClusterSpec>,
    server: &ServerSource,
    key: &dyn Fn(&str) -> String,
) -> Result<ServerSource, SpecError> {
    let spec = c.get_ref();
    let command = match server {
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
    Ok(ServerSource::Cluster {
        command,
        masters: spec.masters,
        replicas: spec.replicas,
    })
}

/// TLS and credential keys only for a server that is already running, and TLS
/// settings only with TLS on.
fn check_settings(
    cx: &Ctx<'_>,
    v: &VariantSpec,
    server: &ServerSource,
    tls_on: bool,
    key: &dyn Fn(&str) -> String,
) -> Result<(), SpecError> {
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
    Ok(())
}

/// The TLS keys of a variant that connects with TLS: files that exist (placeholders
/// filled in), and a client certificate only with its key.
fn tls_connect(
    cx: &Ctx<'_>,
    v: &VariantSpec,
    sub: &dyn Fn(&str) -> String,
    key: &dyn Fn(&str) -> String,
) -> Result<TlsConnect, SpecError> {
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
    let tls = TlsConnect {
        cacert: path(&v.cacert, "cacert")?,
        cacertdir: path(&v.cacertdir, "cacertdir")?,
        cert: path(&v.cert, "cert")?,
        key: path(&v.key, "key")?,
        sni: v.sni.as_ref().map(|s| sub(s.get_ref())),
        insecure: v.insecure.as_ref().is_some_and(|i| *i.get_ref()),
    };
    if tls.cert.is_some() != tls.key.is_some() {
        let span = v
            .cert
            .as_ref()
            .or(v.key.as_ref())
            .map(|s| s.span())
            .unwrap_or_default();
        return Err(cx.err_key(span, key("cert"), "cert and key go together (mutual TLS)"));
    }
    Ok(tls)
}

/// `password_env`: the name of an environment variable that is set.
fn password_env(
    cx: &Ctx<'_>,
    v: &VariantSpec,
    key: &dyn Fn(&str) -> String,
) -> Result<Option<String>, SpecError> {
    Ok(match &v.password_env {
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
    })
}

/// `protocol` and `respb_port`: the wire of the variant's load. RESPB needs a server
/// with a RESPB port (`resplab serve --respb-port`): a spawned command that listens on
/// `{respb_port}`, or an address with `respb_port`; it goes without TLS, a cluster, a
/// toggle or a variant without a server, as `bench --protocol respb` does.
pub(super) fn load_protocol(
    cx: &Ctx<'_>,
    v: &VariantSpec,
    server: &ServerSource,
    connect: &Connect,
    key: &dyn Fn(&str) -> String,
) -> Result<LoadProtocol, SpecError> {
    let port = v.respb_port.as_ref();
    let Some(p) = &v.protocol else {
        return match port {
            Some(rp) => Err(cx.err_key(
                rp.span(),
                key("respb_port"),
                "respb_port goes with protocol = \"respb\"",
            )),
            None => Ok(LoadProtocol::Resp),
        };
    };
    let span = p.span();
    let bad = |m: String| cx.err_key(span.clone(), key("protocol"), m);
    match p.get_ref().trim() {
        "resp" if port.is_none() => return Ok(LoadProtocol::Resp),
        "resp" => {
            return Err(bad(
                "respb_port goes with protocol = \"respb\", found \"resp\"".into(),
            ))
        }
        "respb" => {}
        other => {
            return Err(bad(format!(
                "expected \"resp\" or \"respb\", found \"{other}\""
            )))
        }
    }
    let refused = match server {
        ServerSource::Toggle { .. } => Some(
            "a toggle variant (its load uses the protocol of the variant whose server it switches)",
        ),
        ServerSource::None => Some("server = \"none\" (no server of its own to send RESPB to)"),
        ServerSource::Cluster { .. } => Some("cluster (RESPB has no cluster redirections)"),
        _ if connect.tls.is_some() => Some("TLS (RESPB ports have no TLS)"),
        _ => None,
    };
    if let Some(with) = refused {
        return Err(bad(format!("protocol = \"respb\" does not go with {with}")));
    }
    match (server, port) {
        (ServerSource::Address { .. }, Some(rp)) if *rp.get_ref() != 0 => {
            Ok(LoadProtocol::Respb { port: Some(*rp.get_ref()) })
        }
        (ServerSource::Address { .. }, _) => Err(bad(
            "protocol = \"respb\" with an address needs respb_port = N (the server's RESPB port, as resplab serve --respb-port N)".into(),
        )),
        (ServerSource::Spawn { .. }, Some(rp)) => Err(cx.err_key(
            rp.span(),
            key("respb_port"),
            "respb_port is for an address; a spawned server listens on {respb_port}, which the runner picks",
        )),
        (ServerSource::Spawn { command }, None) => {
            if command.iter().any(|w| w.contains("{respb_port}")) {
                Ok(LoadProtocol::Respb { port: None })
            } else {
                Err(bad(format!(
                    "protocol = \"respb\" needs a server with a RESPB port: its command must listen on {{respb_port}} (resplab serve --port {{port}} --respb-port {{respb_port}}); \"{}\" has none",
                    command.join(" ")
                )))
            }
        }
        _ => Err(bad("protocol = \"respb\" needs a server with a RESPB port".into())),
    }
}
