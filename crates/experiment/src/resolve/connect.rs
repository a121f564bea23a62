//! A variant's connection: address or spawned server, TLS, user and password (the
//! password only as the name of an environment variable), and cluster options.
//!
//! The URI, target, TLS and wire rules are `resplab_engine::words::connect::rules`',
//! the same as bench's flags: this route hands them the variant's keys, each with its
//! position in the file, reads them as a stored file must (no password, no database
//! number), and words every refusal at `file:line:col`. What only a file has stays
//! here: a fresh cluster, TLS and credentials only for a server already running, the
//! variable named by `password_env`, and `respb_port`.

use super::*;
use resplab_engine::words::connect::rules::{
    self, ConnectionWords, PathKind, Problem, RespbBlocker, RespbWith, Said, UriReading,
};
use resplab_engine::{Target, Wire};
use std::ops::Range;

/// Where a key was said in the file: its name and its span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct At {
    key: &'static str,
    span: Range<usize>,
}

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
    let words = file_words(v, &server, sub);
    let problem = |p| file_problem(cx, p, key);
    if v.uri.is_some() {
        if let Some(Target::Tcp { host, port }) = words.target().map_err(problem)?.target {
            server = ServerSource::Address { host, port };
        }
    }
    if let Some(c) = &v.cluster {
        server = cluster_source(cx, v, c, &server, key)?;
    }
    check_settings(cx, v, &server, key)?;
    let c = words.convert().map_err(problem)?;
    let tls = c.tls.map(|t| {
        let text = |p: Option<std::path::PathBuf>| p.map(|p| p.to_string_lossy().into_owned());
        TlsConnect {
            cacert: text(t.ca_file),
            cacertdir: text(t.ca_dir),
            cert: text(t.cert),
            key: text(t.key),
            sni: t.sni,
            insecure: t.insecure,
        }
    });
    let password_env = password_env(cx, v, key)?;
    Ok((
        server,
        Connect {
            tls,
            user: c.user,
            password_env,
        },
    ))
}

/// The variant's keys as the shared converter's words, placeholders filled in: the
/// address as host and port, a server or toggle as a target of another kind.
fn file_words(
    v: &VariantSpec,
    server: &ServerSource,
    sub: &dyn Fn(&str) -> String,
) -> ConnectionWords<At> {
    fn at<T>(key: &'static str, s: &Spanned<T>) -> At {
        At {
            key,
            span: s.span(),
        }
    }
    let text =
        |k, s: &Option<Spanned<String>>| s.as_ref().map(|s| Said::new(sub(s.get_ref()), at(k, s)));
    let path = |k, s: &Option<Spanned<String>>| {
        s.as_ref()
            .map(|s| Said::new(sub(s.get_ref()).into(), at(k, s)))
    };
    let flag = |k, s: &Option<Spanned<bool>>| s.as_ref().map(|s| Said::new(*s.get_ref(), at(k, s)));
    let mut w = ConnectionWords::new(UriReading::Stored);
    w.uri = text("uri", &v.uri);
    if let (ServerSource::Address { host, port }, Some(a)) = (server, &v.address) {
        w.host = Some(Said::new(host.clone(), at("address", a)));
        w.port = Some(Said::new(*port, at("address", a)));
    }
    w.elsewhere = v
        .server
        .as_ref()
        .map(|s| at("server", s))
        .or_else(|| v.toggle_of.as_ref().map(|s| at("toggle_of", s)));
    w.user = text("user", &v.user);
    let t = &mut w.tls;
    t.on = flag("tls", &v.tls);
    t.cacert = path("cacert", &v.cacert);
    t.cacertdir = path("cacertdir", &v.cacertdir);
    t.cert = path("cert", &v.cert);
    t.key = path("key", &v.key);
    t.sni = text("sni", &v.sni);
    t.insecure = flag("insecure", &v.insecure);
    w
}

/// A problem worded at its key, as experiment files have always worded it.
fn file_problem(cx: &Ctx<'_>, p: Problem<At>, key: &dyn Fn(&str) -> String) -> SpecError {
    let say = |at: At, m: String| cx.err_key(at.span, key(at.key), m);
    match p {
        Problem::Conflict { word, .. } => say(
            word,
            "give either uri or server/address/toggle_of, not both".into(),
        ),
        Problem::BadUri { at, error } => say(
            at,
            format!(
                "expected redis://[user@]host[:port] or rediss://…, found \"{}\" ({})",
                error.shown, error.why
            ),
        ),
        Problem::StoredPassword { at } => say(
            at,
            "a password in the experiment file would be stored with every trial: name the environment variable that holds it with password_env = \"VAR\" and give the user alone (redis://user@host:port)".into(),
        ),
        Problem::StoredDb { at, shown } => say(
            at,
            format!("a database number is not taken from an experiment uri, found \"{shown}\""),
        ),
        Problem::EmptyHost { at, host } => say(at, format!("expected host:port, found \"{host}\"")),
        Problem::UserWithoutPassword { at, .. } => say(at, "expected password_env with the user".into()),
        Problem::TlsSettingWithoutTls { at } => say(
            at,
            "a TLS setting without TLS: add tls = true or use a rediss:// uri".into(),
        ),
        Problem::BadPath { at, path, want, exists } => {
            let path = path.display();
            say(at, match (exists, want) {
                (false, _) => format!("{path} does not exist"),
                (true, PathKind::File) => format!("{path} is not a file (expected a PEM file)"),
                (true, PathKind::Folder) => {
                    format!("{path} is not a folder (expected a folder of PEM CA certificates)")
                }
            })
        }
        Problem::HalfClientCertificate { at } => cx.err_key(
            at.span,
            key("cert"),
            "cert and key go together (mutual TLS)",
        ),
        Problem::InsecureWithCa { at, with } => say(
            at,
            format!("insecure = true does not go with {} (nothing would be verified)", with.key),
        ),
        Problem::TlsRefused { at, why } => say(at, format!("the TLS settings are refused: {why}")),
        Problem::TlsWithoutTarget { at } | Problem::TlsOverSocket { at } => say(
            at,
            "TLS and credentials are settings of a server that is already running: give address or uri with them".into(),
        ),
        Problem::UnknownWire { at, found } => {
            say(at, format!("expected \"resp\" or \"respb\", found \"{found}\""))
        }
        Problem::RespbWith { at, blocker } => cx.err_key(
            at.span,
            key("protocol"),
            format!(
                "protocol = \"respb\" does not go with {}",
                respb_refusal(blocker, false)
            ),
        ),
    }
}

/// What RESPB does not go with, in a file's words (`toggle`: the variant has no server
/// of its own because it switches another's).
fn respb_refusal(blocker: RespbBlocker, toggle: bool) -> &'static str {
    match blocker {
        RespbBlocker::Tls => "TLS (RESPB ports have no TLS)",
        RespbBlocker::Cluster => "cluster (RESPB has no cluster redirections)",
        RespbBlocker::NoTarget if toggle => {
            "a toggle variant (its load uses the protocol of the variant whose server it switches)"
        }
        // A file's variants speak RESP 2 to their servers: RESP3 is never asked.
        RespbBlocker::NoTarget | RespbBlocker::Resp3 => {
            "server = \"none\" (no server of its own to send RESPB to)"
        }
    }
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

/// TLS and credential keys only for a server that is already running (TLS settings
/// without TLS on are the shared converter's refusal).
fn check_settings(
    cx: &Ctx<'_>,
    v: &VariantSpec,
    server: &ServerSource,
    key: &dyn Fn(&str) -> String,
) -> Result<(), SpecError> {
    if matches!(server, ServerSource::Address { .. }) {
        return Ok(());
    }
    let keys: [(&str, Option<Range<usize>>); 9] = [
        ("tls", v.tls.as_ref().map(|t| t.span())),
        ("cacert", v.cacert.as_ref().map(|t| t.span())),
        ("cacertdir", v.cacertdir.as_ref().map(|t| t.span())),
        ("cert", v.cert.as_ref().map(|t| t.span())),
        ("key", v.key.as_ref().map(|t| t.span())),
        ("sni", v.sni.as_ref().map(|t| t.span())),
        ("insecure", v.insecure.as_ref().map(|t| t.span())),
        ("user", v.user.as_ref().map(|t| t.span())),
        ("password_env", v.password_env.as_ref().map(|t| t.span())),
    ];
    match keys.into_iter().find_map(|(k, sp)| Some((k, sp?))) {
        Some((k, span)) => Err(cx.err_key(
            span,
            key(k),
            "TLS and credentials are settings of a server that is already running: give address or uri with them",
        )),
        None => Ok(()),
    }
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
    let at = At {
        key: "protocol",
        span: span.clone(),
    };
    let word = Said::new(p.get_ref().clone(), at.clone());
    match rules::wire(&word).map_err(|e| file_problem(cx, e, key))? {
        Wire::Resp if port.is_none() => return Ok(LoadProtocol::Resp),
        Wire::Resp => {
            return Err(bad(
                "respb_port goes with protocol = \"respb\", found \"resp\"".into(),
            ))
        }
        Wire::Respb => {}
    }
    let with = RespbWith {
        protocol: resplab_engine::Protocol::Resp2,
        tls: connect.tls.is_some(),
        cluster: matches!(server, ServerSource::Cluster { .. }),
        target: !matches!(server, ServerSource::Toggle { .. } | ServerSource::None),
    };
    if let Err(Problem::RespbWith { blocker, .. }) = rules::respb_fits(at, with) {
        let toggle = matches!(server, ServerSource::Toggle { .. });
        let with = respb_refusal(blocker, toggle);
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

#[cfg(test)]
mod tests {
    use super::super::{parse, Overrides};
    use crate::model::ServerSource;

    /// A file with one variant whose keys are `keys`, and a workload.
    fn file(keys: &str) -> String {
        format!(
            "[experiment]\nname = \"c\"\n\n[[variant]]\nname = \"a\"\n{keys}\n\n[[variant]]\nname = \"b\"\n\n[[workload]]\nname = \"get\"\ntests = \"get\"\n"
        )
    }

    fn error(keys: &str) -> String {
        parse("e.toml", &file(keys), &Overrides::default())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_uri_names_the_address_and_the_user_but_never_a_password() {
        let e = parse(
            "e.toml",
            &file("uri = \"redis://loader@10.0.0.1:7000\""),
            &Overrides::default(),
        )
        .unwrap();
        let v = &e.variants[0];
        assert_eq!(
            v.server,
            ServerSource::Address {
                host: "10.0.0.1".into(),
                port: 7000
            }
        );
        assert_eq!(v.connect.user.as_deref(), Some("loader"));
        let e = error("uri = \"redis://loader:hunter2@h:1\"");
        assert!(!e.contains("hunter2"), "{e}");
        refused(&[
            (
                "uri = \"redis://loader:hunter2@h:1\"",
                "e.toml:6:7: key `variant[0].uri`: a password in the experiment file",
            ),
            (
                "uri = \"redis://loader@h:1/4\"",
                "a database number is not taken from an experiment uri, found \"redis://***@h:1/4\"",
            ),
            (
                "server = \"redis-server --port {port}\"\nuri = \"redis://h:1\"",
                "give either uri or server/address/toggle_of, not both",
            ),
        ]);
    }

    /// Each file's error holds its expected text.
    fn refused(cases: &[(&str, &str)]) {
        for (keys, expected) in cases {
            let e = error(keys);
            assert!(e.contains(expected), "{keys}: {e}");
        }
    }

    #[test]
    fn tls_keys_are_checked_where_they_are_written() {
        let here = env!("CARGO_MANIFEST_DIR");
        let toml = format!("{here}/Cargo.toml");
        let tls = "address = \"h:1\"\ntls = true\n";
        refused(&[
            (
                "address = \"h:1\"\nsni = \"x\"",
                "e.toml:7:7: key `variant[0].sni`: a TLS setting without TLS",
            ),
            (
                &format!("{tls}cacert = \"/nonexistent.pem\""),
                "/nonexistent.pem does not exist",
            ),
            (
                &format!("{tls}cacert = \"{here}\""),
                &format!("{here} is not a file (expected a PEM file)"),
            ),
            (
                &format!("{tls}insecure = true\ncacert = \"{toml}\""),
                "key `variant[0].insecure`: insecure = true does not go with cacert",
            ),
            (
                &format!("{tls}cacert = \"{toml}\""),
                "key `variant[0].tls`: the TLS settings are refused: ",
            ),
            (
                "server = \"redis-server --port {port}\"\ntls = true",
                "settings of a server that is already running",
            ),
        ]);
    }
}
