//! The connection words of a run (`--host`, `--port`, `--socket`, `--uri`, `--user`,
//! `-a`, `--select`, the TLS flags, `--resp`, `--protocol`) checked against each other
//! and turned into a target, credentials, TLS options, database, protocol and wire.
//!
//! The rules are [`rules`]'s, shared with an experiment file's variant keys; this route
//! hands them the flags, each with its name, and words every refusal as a flag error.

pub mod rules;

use super::bench::BenchWords;
use super::{conflict, flag_error, integer, WordsError};
use crate::{Credentials, Protocol, Target, Wire};
use rules::{ConnectionWords, PathKind, Problem, RespbBlocker, RespbWith, Said, UriReading};

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
    let words = flag_words(a)?;
    let parts = words.target().map_err(flag_problem)?;
    if parts.target.is_some() && a.server_bin.is_some() {
        return Err(conflict("--server-bin", "a target (--host, --port, --socket, --uri)").into());
    }
    let c = words.convert().map_err(flag_problem)?;
    let credentials = c.password.map(|password| Credentials {
        user: c.user,
        password,
    });
    let protocol = match a.resp.trim() {
        "2" => Protocol::Resp2,
        "3" => Protocol::Resp3,
        other => return Err(flag_error("--resp", other, "2 or 3").into()),
    };
    let wire = rules::wire(&Said::new(a.protocol.clone(), "--protocol")).map_err(flag_problem)?;
    if wire == Wire::Respb {
        let with = RespbWith {
            protocol,
            tls: c.tls.is_some(),
            cluster: a.cluster || a.read_from_replicas,
            target: c.target.is_some(),
        };
        rules::respb_fits("--protocol", with).map_err(flag_problem)?;
    }
    Ok(Connection {
        target: c.target,
        credentials,
        tls: c.tls,
        db: c.db,
        protocol,
        wire,
    })
}

/// The flags as the shared converter's words, each named by its flag (`--select` and
/// `--port` read as numbers first).
fn flag_words(a: &BenchWords) -> Result<ConnectionWords<&'static str>> {
    let said = |v: &Option<String>, flag| v.as_ref().map(|v| Said::new(v.clone(), flag));
    let path =
        |v: &Option<std::path::PathBuf>, flag| v.as_ref().map(|v| Said::new(v.clone(), flag));
    let mut w = ConnectionWords::new(UriReading::Given);
    if let Some(v) = &a.select {
        w.db = Some(Said::new(
            integer("--select", v, 0u32, 1_000_000)?,
            "--select",
        ));
    }
    if let Some(v) = &a.port {
        w.port = Some(Said::new(integer("--port", v, 1u16, 65535)?, "--port"));
    }
    w.uri = said(&a.uri, "--uri");
    w.socket = path(&a.socket, "--socket");
    w.host = said(&a.host, "--host");
    w.user = said(&a.user, "--user");
    w.password = said(&a.password, "-a");
    let t = &mut w.tls;
    t.on = a.tls.then(|| Said::new(true, "--tls"));
    t.cacert = path(&a.cacert, "--cacert");
    t.cacertdir = path(&a.cacertdir, "--cacertdir");
    t.cert = path(&a.cert, "--cert");
    t.key = path(&a.key, "--key");
    t.sni = said(&a.sni, "--sni");
    t.insecure = a.insecure.then(|| Said::new(true, "--insecure"));
    t.protocols = said(&a.tls_protocols, "--tls-protocols");
    t.ciphersuites = said(&a.tls_ciphersuites, "--tls-ciphersuites");
    Ok(w)
}

/// A problem worded as bench has always worded it: the flag, the value, what was expected.
fn flag_problem(p: Problem<&'static str>) -> WordsError {
    match p {
        Problem::Conflict { word: "--socket", .. } => conflict("--socket", "--host/--uri").into(),
        Problem::Conflict { word, .. } => conflict(word, "--host/--port").into(),
        Problem::BadUri { at, error } => flag_error(
            at,
            &error.shown,
            format!("{} ({})", crate::uri::URI_FORM, error.why),
        )
        .into(),
        Problem::EmptyHost { at, host } => flag_error(at, &host, "a host name or IP address").into(),
        Problem::UserWithoutPassword { at, user } => {
            flag_error(at, &user, "a password too (-a or REDISCLI_AUTH)").into()
        }
        Problem::TlsSettingWithoutTls { at } => {
            flag_error(at, "", "--tls (or a rediss:// URI) as well").into()
        }
        Problem::BadPath { at, path, want, .. } => {
            let expected = match want {
                PathKind::File => "a readable PEM file",
                PathKind::Folder => "a folder of PEM CA certificates",
            };
            flag_error(at, &path.display().to_string(), expected).into()
        }
        Problem::HalfClientCertificate { at } => flag_error(
            at,
            "",
            "--cert and --key together (a client certificate needs its key)",
        )
        .into(),
        Problem::InsecureWithCa { .. } => conflict(
            "--insecure",
            "--cacert/--cacertdir (nothing would be verified)",
        )
        .into(),
        Problem::TlsRefused { why, .. } => WordsError::Other(why),
        Problem::TlsWithoutTarget { .. } => flag_error(
            "--tls",
            "",
            "a target as well (--host/--port or a rediss:// URI): the throwaway server has no TLS port",
        )
        .into(),
        Problem::TlsOverSocket { .. } => conflict("--tls", "--socket (TLS runs over TCP)").into(),
        Problem::UnknownWire { at, found } => flag_error(at, &found, "resp or respb").into(),
        Problem::RespbWith { blocker, .. } => respb_problem(blocker),
        // A command line's URI is read as redis-cli reads it: neither is refused.
        Problem::StoredPassword { at } | Problem::StoredDb { at, .. } => {
            flag_error(at, "", "a URI without a password or database")
        }
        .into(),
    }
}

/// `--protocol respb` with what it does not go with.
fn respb_problem(blocker: RespbBlocker) -> WordsError {
    let with = match blocker {
        RespbBlocker::Resp3 => "--resp 3 (RESPB replies carry every RESP3 type already)",
        RespbBlocker::Tls => "--tls (RESPB ports have no TLS here)",
        RespbBlocker::Cluster => {
            "--cluster/--read-from-replicas (RESPB has no cluster redirections here)"
        }
        RespbBlocker::NoTarget => {
            return flag_error(
                "--protocol",
                "respb",
                "a target as well (--host/--port of a RESPB port, such as resplab serve --respb-port): the throwaway server has none",
            )
            .into()
        }
    };
    conflict("--protocol respb", with).into()
}

#[cfg(test)]
mod tests;
