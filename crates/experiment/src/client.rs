//! The control plane of a trial: `PING`, `CONFIG SET`/`GET`, `INFO`, `FLUSHALL` and the
//! pipelined preload.
//!
//! The measured load goes through `resplab-engine`, and so does this: [`Client`] is the
//! engine's [`ControlClient`] (one connection layer for the load, the control plane and
//! the CLI, with the same TLS, user and password set-up), with replies turned into the
//! small [`Reply`] tree the runner matches on.

use resplab_engine::control::{ControlClient, Value};
use resplab_engine::{RunConfig, Target};
use std::io;
use std::time::Duration;

/// A decoded reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Status(String),
    Error(String),
    Integer(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// The reply as text (status, bulk or error text).
    pub fn text(&self) -> String {
        match self {
            Reply::Status(s) | Reply::Error(s) => s.clone(),
            Reply::Integer(i) => i.to_string(),
            Reply::Bulk(Some(b)) => String::from_utf8_lossy(b).into_owned(),
            Reply::Bulk(None) | Reply::Array(None) => String::new(),
            Reply::Array(Some(items)) => {
                items.iter().map(Reply::text).collect::<Vec<_>>().join(" ")
            }
        }
    }

    /// The RESP2 shape of a decoded reply (RESP3 types folded into their RESP2 forms: a
    /// map into its key/value array, a double or boolean into its text).
    fn from_value(v: Value) -> Reply {
        match v {
            Value::Simple(b) => Reply::Status(String::from_utf8_lossy(&b).into_owned()),
            Value::SimpleError(b) | Value::BlobError(b) => {
                Reply::Error(String::from_utf8_lossy(&b).into_owned())
            }
            Value::Integer(i) => Reply::Integer(i),
            Value::Blob(b) | Value::BigNumber(b) => Reply::Bulk(Some(b)),
            Value::Verbatim { text, .. } => Reply::Bulk(Some(text)),
            Value::Null => Reply::Bulk(None),
            Value::Double(d) => Reply::Bulk(Some(d.to_string().into_bytes())),
            Value::Boolean(b) => Reply::Integer(i64::from(b)),
            Value::Array(items) | Value::Set(items) | Value::Push(items) => {
                Reply::Array(Some(items.into_iter().map(Reply::from_value).collect()))
            }
            Value::Map(pairs) => Reply::Array(Some(
                pairs
                    .into_iter()
                    .flat_map(|(k, v)| [Reply::from_value(k), Reply::from_value(v)])
                    .collect(),
            )),
            Value::Attribute { value, .. } => Reply::from_value(*value),
        }
    }
}

/// One control connection.
#[derive(Debug)]
pub struct Client {
    inner: ControlClient,
}

impl Client {
    /// Connects to a plain server at `host:port` with `timeout` for the connection and
    /// for each reply.
    ///
    /// # Errors
    /// Name resolution or connection failures.
    pub fn connect(host: &str, port: u16, timeout: Duration) -> io::Result<Client> {
        let cfg = RunConfig::new(Target::Tcp {
            host: host.to_string(),
            port,
        });
        Self::connect_with(&cfg, timeout)
    }

    /// Connects as the measured connections of `cfg` do (its target, TLS, user and
    /// password, RESP version and database).
    ///
    /// # Errors
    /// Connection or set-up failures, in the engine's words.
    pub fn connect_with(cfg: &RunConfig, timeout: Duration) -> io::Result<Client> {
        ControlClient::connect(cfg, timeout)
            .map(|inner| Client { inner })
            .map_err(|e| match e {
                resplab_engine::EngineError::Connect { source, .. } => source,
                other => io::Error::other(other.to_string()),
            })
    }

    /// Changes the limit for each read and write.
    ///
    /// # Errors
    /// When the socket refuses it.
    pub fn set_timeout(&mut self, timeout: Duration) -> io::Result<()> {
        self.inner.set_timeout(timeout)
    }

    /// Appends the RESP encoding of `args` to `out`.
    pub fn encode(out: &mut Vec<u8>, args: &[&[u8]]) {
        resplab_engine::control::encode_command(out, args);
    }

    /// Sends one command and reads its reply.
    ///
    /// # Errors
    /// I/O failures and malformed replies (error replies are `Ok(Reply::Error)`).
    pub fn call(&mut self, args: &[&str]) -> io::Result<Reply> {
        self.inner.call_str(args).map(Reply::from_value)
    }

    /// Sends already encoded commands and reads `count` replies, returning the first
    /// error reply if any.
    ///
    /// # Errors
    /// I/O failures and malformed replies.
    pub fn pipeline(&mut self, encoded: &[u8], count: usize) -> io::Result<Option<String>> {
        self.inner.pipeline(encoded, count)
    }
}
