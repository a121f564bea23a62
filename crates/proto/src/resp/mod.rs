//! RESP2 and RESP3, the text protocols of Redis and its relatives.
//!
//! The module is split by direction and cost:
//!
//! - [`encode`] writes requests (multibulk or inline) straight into a connection buffer,
//!   and replies ([`value::Value`] → bytes) for servers and fault-injecting test peers.
//! - [`scan`] is the load generator's decoder: it finds where the next reply ends and
//!   classifies it (value, nil, error, `MOVED`, `ASK`, push) without allocating.
//! - [`value`] is the full decoder, building an owned [`value::Value`] tree for every
//!   RESP3 type. It is for tests, verification and handshakes, not the hot path.
//! - [`cluster`] holds Redis Cluster's facts: the hash slot of a key and the parsing of
//!   `MOVED`/`ASK` redirections.
//! - [`request`] is the server side: it splits a request stream into borrowed argument
//!   slices without copying them.
//! - [`info`] reads the text of an `INFO` reply (sections and `field:value` lines).
//!
//! The scanner and the full decoder accept exactly the same language (they share the
//! lexer in `lex`), which the property tests and the fuzz target check: for every input
//! both say "complete, N bytes", both say "need more", or both reject it.
//!
//! Grammar notes that the decoders enforce:
//!
//! - Lengths and counts are decimal without a `+` sign; `-1` is accepted only for the
//!   RESP2 null bulk string (`$-1`) and null array (`*-1`).
//! - A line ends at the first CR, which must be followed by LF.
//! - Streamed RESP3 strings and aggregates (`$?`, `*?`) are not accepted: no server sends
//!   them, and accepting them would make every length unbounded.

pub mod cluster;
pub mod encode;
pub mod info;
pub(crate) mod lex;
pub mod request;
pub mod scan;
pub mod value;

/// Upper bounds the decoders enforce before allocating or recursing.
///
/// The defaults follow Redis where it has a limit (512 MiB `proto-max-bulk-len`) and
/// otherwise pick values that no real reply reaches but that keep a hostile peer from
/// reserving unbounded memory: 2^24 (16,777,216) elements per aggregate and 64 levels of
/// nesting. Depths above [`MAX_DEPTH`] are clamped to it, because both decoders keep their
/// nesting state in a fixed-size stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest bulk string, blob error or verbatim string payload in bytes; also bounds
    /// the length of a simple-string or error line.
    pub max_bulk_len: usize,
    /// Most elements in one array, set or push, or pairs in one map or attribute.
    pub max_aggregate_len: usize,
    /// Deepest nesting of non-empty aggregates (a flat array has depth 1).
    pub max_depth: usize,
}

/// The hard ceiling on nesting depth, whatever [`Limits::max_depth`] says.
pub const MAX_DEPTH: usize = 128;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bulk_len: 512 * 1024 * 1024,
            max_aggregate_len: 1 << 24,
            max_depth: 64,
        }
    }
}

impl Limits {
    /// The depth limit actually enforced: `max_depth` clamped to [`MAX_DEPTH`].
    pub fn effective_depth(&self) -> usize {
        self.max_depth.min(MAX_DEPTH)
    }
}

/// Which RESP dialect to write replies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RespVersion {
    /// RESP2: simple strings, errors, integers, bulk strings, arrays.
    Resp2,
    /// RESP3: RESP2 plus null, double, boolean, big number, verbatim string, blob error,
    /// map, set, attribute and push.
    Resp3,
}
