//! The connection words of a run (`--host`, `--port`, `--socket`, `--uri`, `--user`,
//! `-a`, `--select`, the TLS flags, `--resp`, `--protocol`) checked against each other
//! and turned into a target, credentials, TLS options, database, protocol and wire.

use super::bench::BenchWords;
use super::{conflict, flag_error, integer, redis_uri, WordsError};
use crate::{Credentials, Protocol, Target, Wire};

type Result<T> = std::result::Result<T, WordsError>;

/// Where and how to connect: the target (`None`: a throwaway server), credentials,
/// TLS, database, protocol version and wire format.
#[derive(Debug)]
pub struct Connection {
    pub target: Option<Target>,
    pub credentials: Option<Credentials>,
    pub tls: Option<crate::TlsOptions>,
    pub db: Option<u32>,
    pub protocol: Protocol,
    pub wire: Wire,
}

/// The connection flags (`--host`, `--port`, `--socket`, `--uri`, `--user`, `-a`,
/// `--select`, the TLS flags, `--resp`, `--protocol`), checked against each other.
pub fn resolve_connection(a: &BenchWords) -> Result<Connection> {
    let mut uri_tls = false;
    let mut credentials_user = a.user.clone();
    let mut password = a.password.clone();
    let mut db: Option<u32> = match &a.select {
        Some(v) => Some(integer("--select", v, 0u32, 1_000_000)?),
        None => None,
    };
    let port = match &a.port {
        Some(v) => Some(integer("--port", v, 1u16, 65535)?),
        None => None,
    };
    let target = if let Some(path) = &a.socket {
        if a.host.is_some() || a.uri.is_some() {
            return Err(conflict("--socket", "--host/--uri").into());
        }
        Some(Target::Unix { path: path.clone() })
    } else if let Some(uri) = &a.uri {
        if a.host.is_some() || a.port.is_some() {
            return Err(conflict("--uri", "--host/--port").into());
        }
        let u = redis_uri(uri)?;
        uri_tls = u.tls;
        let (user, pass) = u.user_password();
        if user.is_some() {
            credentials_user = user;
        }
        if pass.is_some() {
            password = pass;
        }
        if u.db.is_some() {
            db = u.db;
        }
        Some(Target::Tcp {
            host: u.host,
            port: u.port,
        })
    } else if a.host.is_some() || port.is_some() {
        let host = a.host.clone().unwrap_or_else(|| "127.0.0.1".to_string());
        if host.trim().is_empty() {
            return Err(flag_error("--host", &host, "a host name or IP address").into());
        }
        Some(Target::Tcp {
            host,
            port: port.unwrap_or(6379),
        })
    } else {
        None
    };
    if target.is_some() && a.server_bin.is_some() {
        return Err(conflict("--server-bin", "a target (--host, --port, --socket, --uri)").into());
    }
    let credentials = match (password, credentials_user) {
        (Some(password), user) => Some(Credentials { user, password }),
        (None, Some(user)) => {
            return Err(flag_error("--user", &user, "a password too (-a or REDISCLI_AUTH)").into())
        }
        (None, None) => None,
    };
    let tls = resolve_tls(a, uri_tls)?;
    if tls.is_some() && target.is_none() {
        return Err(flag_error(
            "--tls",
            "",
            "a target as well (--host/--port or a rediss:// URI): the throwaway server has no TLS port",
        )
        .into());
    }
    if tls.is_some() && matches!(target, Some(Target::Unix { .. })) {
        return Err(conflict("--tls", "--socket (TLS runs over TCP)").into());
    }
    let protocol = match a.resp.trim() {
        "2" => Protocol::Resp2,
        "3" => Protocol::Resp3,
        other => return Err(flag_error("--resp", other, "2 or 3").into()),
    };
    let wire = resolve_wire(a, target.as_ref(), protocol, tls.is_some())?;

    Ok(Connection {
        target,
        credentials,
        tls,
        db,
        protocol,
        wire,
    })
}

/// `--protocol`, refused with the flags RESPB does not go with here.
fn resolve_wire(
    a: &BenchWords,
    target: Option<&Target>,
    protocol: Protocol,
    tls: bool,
) -> Result<Wire> {
    match a.protocol.trim() {
        "resp" => Ok(Wire::Resp),
        "respb" => {
            let with = if protocol == Protocol::Resp3 {
                Some("--resp 3 (RESPB replies carry every RESP3 type already)")
            } else if tls {
                Some("--tls (RESPB ports have no TLS here)")
            } else if a.cluster || a.read_from_replicas {
                Some("--cluster/--read-from-replicas (RESPB has no cluster redirections here)")
            } else {
                None
            };
            if let Some(with) = with {
                return Err(conflict("--protocol respb", with).into());
            }
            if target.is_none() {
                return Err(flag_error(
                    "--protocol",
                    "respb",
                    "a target as well (--host/--port of a RESPB port, such as resplab serve --respb-port): the throwaway server has none",
                )
                .into());
            }
            Ok(Wire::Respb)
        }
        other => Err(flag_error("--protocol", other, "resp or respb").into()),
    }
}

/// The TLS options of the flags, `None` without `--tls`/`rediss://` (the other TLS flags
/// then are an error, so they are never silently ignored).
fn resolve_tls(a: &BenchWords, uri_tls: bool) -> Result<Option<crate::TlsOptions>> {
    let on = a.tls || uri_tls;
    let given: Vec<&str> = [
        ("--cacert", a.cacert.is_some()),
        ("--cacertdir", a.cacertdir.is_some()),
        ("--cert", a.cert.is_some()),
        ("--key", a.key.is_some()),
        ("--sni", a.sni.is_some()),
        ("--insecure", a.insecure),
        ("--tls-protocols", a.tls_protocols.is_some()),
        ("--tls-ciphersuites", a.tls_ciphersuites.is_some()),
    ]
    .into_iter()
    .filter_map(|(f, g)| g.then_some(f))
    .collect();
    if !on {
        if let Some(f) = given.first() {
            return Err(flag_error(f, "", "--tls (or a rediss:// URI) as well").into());
        }
        return Ok(None);
    }
    for (flag, path) in [
        ("--cacert", &a.cacert),
        ("--cert", &a.cert),
        ("--key", &a.key),
    ] {
        if let Some(p) = path {
            if !p.is_file() {
                return Err(
                    flag_error(flag, &p.display().to_string(), "a readable PEM file").into(),
                );
            }
        }
    }
    if let Some(d) = &a.cacertdir {
        if !d.is_dir() {
            return Err(flag_error(
                "--cacertdir",
                &d.display().to_string(),
                "a folder of PEM CA certificates",
            )
            .into());
        }
    }
    if a.cert.is_some() != a.key.is_some() {
        return Err(flag_error(
            if a.cert.is_some() { "--cert" } else { "--key" },
            "",
            "--cert and --key together (a client certificate needs its key)",
        )
        .into());
    }
    if a.insecure && (a.cacert.is_some() || a.cacertdir.is_some()) {
        return Err(conflict(
            "--insecure",
            "--cacert/--cacertdir (nothing would be verified)",
        )
        .into());
    }
    let list = |v: &Option<String>| -> Vec<String> {
        v.as_deref()
            .map(|s| {
                s.split([',', ' ', ':'])
                    .filter(|x| !x.trim().is_empty())
                    .map(|x| x.trim().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let opts = crate::TlsOptions {
        ca_file: a.cacert.clone(),
        ca_dir: a.cacertdir.clone(),
        cert: a.cert.clone(),
        key: a.key.clone(),
        sni: a.sni.clone(),
        insecure: a.insecure,
        protocols: list(&a.tls_protocols),
        ciphersuites: list(&a.tls_ciphersuites),
    };
    // Build the client configuration now: a bad file, protocol or suite is a flag error
    // before anything connects.
    crate::tls::client_config(&opts).map_err(|e| WordsError::Other(e.to_string()))?;
    Ok(Some(opts))
}
