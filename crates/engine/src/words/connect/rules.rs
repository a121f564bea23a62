//! The one converter of connection words, shared by `resplab bench`'s flags and an
//! experiment file's variant keys: a URI and what it carries (user, password, database,
//! TLS), the words that name a target and may not go together, the TLS settings (each
//! only with TLS on, files that exist, a client certificate with its key, no CA with
//! `insecure`, the TLS library's own check), a user paired with its password, and the
//! wire (`resp`/`respb`, and what RESPB does not go with).
//!
//! Each word arrives as a [`Said`]: its typed value and where it was said (`W`: a flag
//! name for bench, a file position for an experiment). A refusal is a [`Problem`] that
//! carries those places and no text, so each route words it in its own vocabulary
//! (`invalid value '…' for --flag`, or `file:line:col: key: …`). Nothing here reads the
//! environment: a file names the variable that holds its password, and its route checks it.

use crate::uri::{Credentials as UriCredentials, UriError};
use crate::{Protocol, Target, TlsOptions, Wire};
use std::path::PathBuf;

/// A word with the place it was said (a flag name, a file position).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said<T, W> {
    pub value: T,
    pub at: W,
}

impl<T, W> Said<T, W> {
    /// `value`, said at `at`.
    pub fn new(value: T, at: W) -> Self {
        Said { value, at }
    }
}

/// How the userinfo of a URI is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UriReading {
    /// As redis-cli reads it: a lone word is the password; a password and a database
    /// number are taken.
    Given,
    /// As a file that may hold no password reads it: a lone word is the user; a
    /// password is refused (the store would keep it) and so is a database number.
    Stored,
}

/// The TLS words: `tls` and its settings.
#[derive(Debug, Clone)]
pub struct TlsWords<W> {
    /// `--tls` / `tls = true` (`rediss://` turns TLS on as well).
    pub on: Option<Said<bool, W>>,
    pub cacert: Option<Said<PathBuf, W>>,
    pub cacertdir: Option<Said<PathBuf, W>>,
    pub cert: Option<Said<PathBuf, W>>,
    pub key: Option<Said<PathBuf, W>>,
    pub sni: Option<Said<String, W>>,
    pub insecure: Option<Said<bool, W>>,
    /// TLS versions, as written (`TLSv1.2,TLSv1.3`).
    pub protocols: Option<Said<String, W>>,
    /// rustls cipher-suite names, as written.
    pub ciphersuites: Option<Said<String, W>>,
}

impl<W> Default for TlsWords<W> {
    fn default() -> Self {
        TlsWords {
            on: None,
            cacert: None,
            cacertdir: None,
            cert: None,
            key: None,
            sni: None,
            insecure: None,
            protocols: None,
            ciphersuites: None,
        }
    }
}

/// The connection words of a run or a variant, typed, each with its place.
#[derive(Debug, Clone)]
pub struct ConnectionWords<W> {
    pub reading: UriReading,
    pub uri: Option<Said<String, W>>,
    pub socket: Option<Said<PathBuf, W>>,
    pub host: Option<Said<String, W>>,
    pub port: Option<Said<u16, W>>,
    /// A word that names a server of another kind (a server to start, a toggle): it
    /// goes with neither a URI nor a socket.
    pub elsewhere: Option<W>,
    pub user: Option<Said<String, W>>,
    /// A password given as such (bench's `-a`); files never give one.
    pub password: Option<Said<String, W>>,
    pub db: Option<Said<u32, W>>,
    pub tls: TlsWords<W>,
}

impl<W> ConnectionWords<W> {
    /// No words at all, read as `reading` says.
    pub fn new(reading: UriReading) -> Self {
        ConnectionWords {
            reading,
            uri: None,
            socket: None,
            host: None,
            port: None,
            elsewhere: None,
            user: None,
            password: None,
            db: None,
            tls: TlsWords::default(),
        }
    }
}

/// The words converted: where to connect (`None`: no target given), credentials, TLS
/// and database. From [`ConnectionWords::target`] alone, it holds what the target words
/// say (a URI's user, password, database and `rediss://`) and no TLS options yet.
#[derive(Debug, Clone, Default)]
pub struct Converted {
    pub target: Option<Target>,
    /// `rediss://`.
    pub uri_tls: bool,
    pub user: Option<String>,
    /// Never from a URI read [`UriReading::Stored`].
    pub password: Option<String>,
    pub tls: Option<TlsOptions>,
    /// Never from a URI read [`UriReading::Stored`].
    pub db: Option<u32>,
}

/// Which TLS file a problem is about, and what it should have been.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    /// A PEM file (`cacert`, `cert`, `key`).
    File,
    /// A folder of PEM CA certificates (`cacertdir`).
    Folder,
}

/// What RESPB does not go with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RespbBlocker {
    Resp3,
    Tls,
    Cluster,
    /// No server of its own to send RESPB to.
    NoTarget,
}

/// Why the words do not make a connection, with the places of the words at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem<W> {
    /// `word` names a target and so does `with`.
    Conflict { word: W, with: W },
    /// A URI that does not parse.
    BadUri { at: W, error: UriError },
    /// A password in a URI read [`UriReading::Stored`].
    StoredPassword { at: W },
    /// A database number in a URI read [`UriReading::Stored`]; `shown` is the URI with
    /// its userinfo masked.
    StoredDb { at: W, shown: String },
    /// An empty host.
    EmptyHost { at: W, host: String },
    /// A user without a password (read [`UriReading::Given`]).
    UserWithoutPassword { at: W, user: String },
    /// A TLS setting without TLS on.
    TlsSettingWithoutTls { at: W },
    /// A TLS path that is not what it should be.
    BadPath {
        at: W,
        path: PathBuf,
        want: PathKind,
        exists: bool,
    },
    /// `cert` without `key` or the other way round; `at` is the one given.
    HalfClientCertificate { at: W },
    /// `insecure` with a CA to verify against.
    InsecureWithCa { at: W, with: W },
    /// The TLS library refused the settings; `at` is where TLS was turned on.
    TlsRefused { at: W, why: String },
    /// TLS on without a target (`at`: where TLS was turned on).
    TlsWithoutTarget { at: W },
    /// TLS over a Unix socket.
    TlsOverSocket { at: W },
    /// A wire other than `resp` or `respb`.
    UnknownWire { at: W, found: String },
    /// RESPB with something it does not go with.
    RespbWith { at: W, blocker: RespbBlocker },
}

impl<W: Clone> ConnectionWords<W> {
    /// The target words: a socket, a URI (read as [`UriReading`] says) or a host and
    /// port, never two of them.
    ///
    /// # Errors
    /// A [`Problem`] naming the words at fault.
    pub fn target(&self) -> Result<Converted, Problem<W>> {
        let mut parts = Converted::default();
        let other = |a: &Option<Said<String, W>>, b: Option<W>| -> Option<W> {
            a.as_ref().map(|s| s.at.clone()).or(b)
        };
        if let Some(path) = &self.socket {
            if let Some(with) = other(&self.host, other(&self.uri, self.elsewhere.clone())) {
                return Err(Problem::Conflict {
                    word: path.at.clone(),
                    with,
                });
            }
            parts.target = Some(Target::Unix {
                path: path.value.clone(),
            });
        } else if let Some(uri) = &self.uri {
            let port = self.port.as_ref().map(|p| p.at.clone());
            if let Some(with) = other(&self.host, port.or(self.elsewhere.clone())) {
                return Err(Problem::Conflict {
                    word: uri.at.clone(),
                    with,
                });
            }
            read_uri(uri, self.reading, &mut parts)?;
        } else if self.host.is_some() || self.port.is_some() {
            if let Some(h) = self.host.as_ref().filter(|h| h.value.trim().is_empty()) {
                return Err(Problem::EmptyHost {
                    at: h.at.clone(),
                    host: h.value.clone(),
                });
            }
            let host = self.host.as_ref().map_or("127.0.0.1", |h| h.value.as_str());
            parts.target = Some(Target::Tcp {
                host: host.to_string(),
                port: self.port.as_ref().map_or(6379, |p| p.value),
            });
        }
        Ok(parts)
    }

    /// All the words: the target, the user paired with a password, TLS and database.
    ///
    /// # Errors
    /// The first [`Problem`], in the order target, credentials, TLS.
    pub fn convert(&self) -> Result<Converted, Problem<W>> {
        let mut c = self.target()?;
        c.user = c
            .user
            .or_else(|| self.user.as_ref().map(|u| u.value.clone()));
        c.password = c
            .password
            .or_else(|| self.password.as_ref().map(|p| p.value.clone()));
        // A URI's user always comes with its password: a lone user is a word's.
        if let (UriReading::Given, None, Some(u)) = (self.reading, &c.password, &self.user) {
            return Err(Problem::UserWithoutPassword {
                at: u.at.clone(),
                user: u.value.clone(),
            });
        }
        if let Some((opts, on)) = tls_options(&self.tls, &self.uri, c.uri_tls)? {
            match &c.target {
                None => return Err(Problem::TlsWithoutTarget { at: on }),
                Some(Target::Unix { .. }) => return Err(Problem::TlsOverSocket { at: on }),
                Some(_) => c.tls = Some(opts),
            }
        }
        c.db = c.db.or(self.db.as_ref().map(|d| d.value));
        Ok(c)
    }
}

/// Reads a URI into `parts`.
fn read_uri<W: Clone>(
    uri: &Said<String, W>,
    reading: UriReading,
    parts: &mut Converted,
) -> Result<(), Problem<W>> {
    let at = || uri.at.clone();
    let u = crate::uri::parse(&uri.value).map_err(|error| Problem::BadUri { at: at(), error })?;
    match (reading, &u.credentials) {
        (UriReading::Given, _) => {
            let (user, password) = u.user_password();
            parts.user = user;
            parts.password = password;
            parts.db = u.db;
        }
        (UriReading::Stored, Some(UriCredentials::Pair { .. })) => {
            return Err(Problem::StoredPassword { at: at() })
        }
        (UriReading::Stored, c) => {
            if let Some(UriCredentials::Lone(user)) = c {
                parts.user = (!user.is_empty()).then(|| user.clone());
            }
            if u.db.is_some() {
                let shown = crate::uri::redact(&uri.value);
                return Err(Problem::StoredDb { at: at(), shown });
            }
        }
    }
    parts.uri_tls = u.tls;
    parts.target = Some(Target::Tcp {
        host: u.host,
        port: u.port,
    });
    Ok(())
}

/// The places of the TLS settings given, in the order they are checked.
fn setting_places<W: Clone>(t: &TlsWords<W>) -> Vec<W> {
    let path = |p: &Option<Said<PathBuf, W>>| p.as_ref().map(|s| s.at.clone());
    let text = |p: &Option<Said<String, W>>| p.as_ref().map(|s| s.at.clone());
    [
        path(&t.cacert),
        path(&t.cacertdir),
        path(&t.cert),
        path(&t.key),
        text(&t.sni),
        t.insecure.as_ref().map(|i| i.at.clone()),
        text(&t.protocols),
        text(&t.ciphersuites),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The TLS options and where TLS was turned on (the TLS word, else the `rediss://`
/// URI); `None` with TLS off (a TLS setting then is a problem, so that none is
/// silently ignored). An `insecure` word said as false is a setting all the same.
fn tls_options<W: Clone>(
    t: &TlsWords<W>,
    uri: &Option<Said<String, W>>,
    uri_tls: bool,
) -> Result<Option<(TlsOptions, W)>, Problem<W>> {
    let on_word = t.on.as_ref().filter(|o| o.value).map(|o| o.at.clone());
    let on_uri = uri.as_ref().filter(|_| uri_tls).map(|u| u.at.clone());
    let Some(on) = on_word.or(on_uri) else {
        return match setting_places(t).into_iter().next() {
            Some(at) => Err(Problem::TlsSettingWithoutTls { at }),
            None => Ok(None),
        };
    };
    for (p, want) in [
        (&t.cacert, PathKind::File),
        (&t.cacertdir, PathKind::Folder),
        (&t.cert, PathKind::File),
        (&t.key, PathKind::File),
    ] {
        check_path(p, want)?;
    }
    if let (Some(half), None) | (None, Some(half)) = (&t.cert, &t.key) {
        return Err(Problem::HalfClientCertificate {
            at: half.at.clone(),
        });
    }
    let insecure = t.insecure.as_ref().filter(|i| i.value);
    if let (Some(i), Some(ca)) = (insecure, t.cacert.as_ref().or(t.cacertdir.as_ref())) {
        return Err(Problem::InsecureWithCa {
            at: i.at.clone(),
            with: ca.at.clone(),
        });
    }
    let opts = TlsOptions {
        ca_file: t.cacert.as_ref().map(|s| s.value.clone()),
        ca_dir: t.cacertdir.as_ref().map(|s| s.value.clone()),
        cert: t.cert.as_ref().map(|s| s.value.clone()),
        key: t.key.as_ref().map(|s| s.value.clone()),
        sni: t.sni.as_ref().map(|s| s.value.clone()),
        insecure: insecure.is_some(),
        protocols: list(&t.protocols),
        ciphersuites: list(&t.ciphersuites),
    };
    // Build the client configuration now: a bad file, protocol or suite is refused
    // before anything connects.
    match crate::tls::client_config(&opts) {
        Ok(_) => Ok(Some((opts, on))),
        Err(e) => Err(Problem::TlsRefused {
            at: on,
            why: e.to_string(),
        }),
    }
}

/// A TLS path that is what it should be.
fn check_path<W: Clone>(p: &Option<Said<PathBuf, W>>, want: PathKind) -> Result<(), Problem<W>> {
    let Some(p) = p else { return Ok(()) };
    let ok = match want {
        PathKind::File => p.value.is_file(),
        PathKind::Folder => p.value.is_dir(),
    };
    if ok {
        return Ok(());
    }
    Err(Problem::BadPath {
        at: p.at.clone(),
        path: p.value.clone(),
        want,
        exists: p.value.exists(),
    })
}

/// A list of TLS names split on commas, spaces or colons.
fn list<W>(v: &Option<Said<String, W>>) -> Vec<String> {
    v.as_ref()
        .map(|s| {
            s.value
                .split([',', ' ', ':'])
                .filter(|x| !x.trim().is_empty())
                .map(|x| x.trim().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// `resp` or `respb` (surrounding blanks ignored).
///
/// # Errors
/// [`Problem::UnknownWire`] with the word found.
pub fn wire<W: Clone>(word: &Said<String, W>) -> Result<Wire, Problem<W>> {
    match word.value.trim() {
        "resp" => Ok(Wire::Resp),
        "respb" => Ok(Wire::Respb),
        other => Err(Problem::UnknownWire {
            at: word.at.clone(),
            found: other.to_string(),
        }),
    }
}

/// What a RESPB load goes with, as far as a route knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RespbWith {
    pub protocol: Protocol,
    pub tls: bool,
    pub cluster: bool,
    pub target: bool,
}

/// RESPB's refusals, first found first: RESP3 (RESPB replies carry its types already),
/// TLS (RESPB ports have none), a cluster (no redirections), no target of its own.
///
/// # Errors
/// [`Problem::RespbWith`] at `at`.
pub fn respb_fits<W>(at: W, with: RespbWith) -> Result<(), Problem<W>> {
    let blocker = if with.protocol == Protocol::Resp3 {
        RespbBlocker::Resp3
    } else if with.tls {
        RespbBlocker::Tls
    } else if with.cluster {
        RespbBlocker::Cluster
    } else if !with.target {
        RespbBlocker::NoTarget
    } else {
        return Ok(());
    };
    Err(Problem::RespbWith { at, blocker })
}
