//! RESPB responses, which the proposal describes only in prose. resplab defines them so
//! that every RESP3 reply type has a binary form and every reply echoes its request's
//! mux id.
//!
//! A reply frame is `[type u16][mux u16]` followed by the type's payload. Elements of
//! aggregates are the same encoding without the mux id: `[type u16]` then payload. All
//! lengths and counts are u32 (the proposal's u16 counts cannot carry an `LRANGE` of more
//! than 65,534 elements), all integers big-endian.
//!
//! | type | meaning | payload |
//! | --- | --- | --- |
//! | 0x8000 | simple string | `[u32 len][bytes]` |
//! | 0x8001 | simple error | `[u32 len][bytes]` (no `-`, no CRLF) |
//! | 0x8002 | integer | int64 |
//! | 0x8003 | bulk string | `[u32 len][bytes]`; len 0xFFFFFFFF decodes as null |
//! | 0x8004 | array | `[u32 count]` elements |
//! | 0x8005 | null | none |
//! | 0x8006 | boolean | u8 (0 or 1) |
//! | 0x8007 | double | float64 |
//! | 0x8008 | map | `[u32 pairs]` key, value, ... |
//! | 0x8009 | set | `[u32 count]` elements |
//! | 0x800A | push | `[u32 count]` elements |
//! | 0x800B | blob error | `[u32 len][bytes]` |
//! | 0x800C | big number | `[u32 len][decimal text]` |
//! | 0x800D | verbatim string | `[3 bytes format][u32 len][text]` |
//! | 0x800E | attribute | `[u32 pairs]` key, value, ..., then the annotated element |

use crate::error::ProtoError;
use crate::resp::value::Value;
use crate::resp::Limits;

/// Reply type codes.
pub mod types {
    /// Simple string.
    pub const SIMPLE: u16 = 0x8000;
    /// Simple error.
    pub const ERROR: u16 = 0x8001;
    /// Integer.
    pub const INTEGER: u16 = 0x8002;
    /// Bulk string.
    pub const BULK: u16 = 0x8003;
    /// Array.
    pub const ARRAY: u16 = 0x8004;
    /// Null.
    pub const NULL: u16 = 0x8005;
    /// Boolean.
    pub const BOOLEAN: u16 = 0x8006;
    /// Double.
    pub const DOUBLE: u16 = 0x8007;
    /// Map.
    pub const MAP: u16 = 0x8008;
    /// Set.
    pub const SET: u16 = 0x8009;
    /// Push.
    pub const PUSH: u16 = 0x800A;
    /// Blob error.
    pub const BLOB_ERROR: u16 = 0x800B;
    /// Big number.
    pub const BIG_NUMBER: u16 = 0x800C;
    /// Verbatim string.
    pub const VERBATIM: u16 = 0x800D;
    /// Attribute.
    pub const ATTRIBUTE: u16 = 0x800E;
}

/// Appends `v` as a reply frame on channel `mux`.
///
/// Lengths and counts beyond u32 are not representable; such values (over 4 GiB) are
/// truncated in the length field, which a peer rejects, so callers must not send them.
pub fn write_reply(out: &mut Vec<u8>, mux: u16, v: &Value) {
    write_element(out, Some(mux), v);
}

fn put_len(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_be_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_len(out, b.len());
    out.extend_from_slice(b);
}

fn write_element(out: &mut Vec<u8>, mux: Option<u16>, v: &Value) {
    use types::*;
    let head = |out: &mut Vec<u8>, t: u16| {
        out.extend_from_slice(&t.to_be_bytes());
        if let Some(m) = mux {
            out.extend_from_slice(&m.to_be_bytes());
        }
    };
    match v {
        Value::Simple(b) => {
            head(out, SIMPLE);
            put_bytes(out, b);
        }
        Value::SimpleError(b) => {
            head(out, ERROR);
            put_bytes(out, b);
        }
        Value::Integer(i) => {
            head(out, INTEGER);
            out.extend_from_slice(&i.to_be_bytes());
        }
        Value::Blob(b) => {
            head(out, BULK);
            put_bytes(out, b);
        }
        Value::BlobError(b) => {
            head(out, BLOB_ERROR);
            put_bytes(out, b);
        }
        Value::Null => head(out, NULL),
        Value::Double(d) => {
            head(out, DOUBLE);
            out.extend_from_slice(&d.to_bits().to_be_bytes());
        }
        Value::Boolean(b) => {
            head(out, BOOLEAN);
            out.push(u8::from(*b));
        }
        Value::BigNumber(b) => {
            head(out, BIG_NUMBER);
            put_bytes(out, b);
        }
        Value::Verbatim { format, text } => {
            head(out, VERBATIM);
            out.extend_from_slice(format);
            put_bytes(out, text);
        }
        Value::Array(items) | Value::Set(items) | Value::Push(items) => {
            let t = match v {
                Value::Set(_) => SET,
                Value::Push(_) => PUSH,
                _ => ARRAY,
            };
            head(out, t);
            put_len(out, items.len());
            for item in items {
                write_element(out, None, item);
            }
        }
        Value::Map(pairs) => {
            head(out, MAP);
            put_len(out, pairs.len());
            for (k, val) in pairs {
                write_element(out, None, k);
                write_element(out, None, val);
            }
        }
        Value::Attribute { attrs, value } => {
            head(out, ATTRIBUTE);
            put_len(out, attrs.len());
            for (k, val) in attrs {
                write_element(out, None, k);
                write_element(out, None, val);
            }
            write_element(out, None, value);
        }
    }
}

/// Decodes the reply frame at the start of `buf`: its mux id, value and length.
///
/// `Ok(None)` means `buf` holds only a prefix of a reply.
///
/// # Errors
///
/// A [`ProtoError`] with the byte offset for an unknown type code, a length or count
/// beyond `limits`, nesting deeper than `limits`, or a boolean byte other than 0 or 1.
pub fn decode_reply(
    buf: &[u8],
    limits: &Limits,
) -> Result<Option<(u16, Value, usize)>, ProtoError> {
    let mux = match (buf.get(2), buf.get(3)) {
        (Some(&a), Some(&b)) => u16::from_be_bytes([a, b]),
        _ => return Ok(None),
    };
    let t = match (buf.first(), buf.get(1)) {
        (Some(&a), Some(&b)) => u16::from_be_bytes([a, b]),
        _ => return Ok(None),
    };
    Ok(element(buf, 4, t, 0, 0, limits)?.map(|(v, n)| (mux, v, n)))
}

/// The class of a complete reply found by [`scan_reply`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplyClass {
    /// Any reply that is not null, an error or a push.
    Value,
    /// Null (type 0x8005, or a bulk string of length 0xFFFFFFFF).
    Nil,
    /// A simple or blob error; its text is `reply[start..end]` of the scanned buffer.
    Error {
        /// Offset of the error text from the start of the frame.
        start: usize,
        /// Offset just past the error text.
        end: usize,
    },
    /// A push: an out-of-band message, not the reply to a request.
    Push,
}

/// A complete reply frame found at the start of a buffer by [`scan_reply`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scanned {
    /// The mux id of the frame.
    pub mux: u16,
    /// Bytes the frame occupies.
    pub consumed: usize,
    /// What kind of reply it is. An attribute is classified by the value it annotates.
    pub class: ReplyClass,
}

/// Delimits and classifies the reply frame at the start of `buf` without building its
/// value: what a load generator needs (where the next reply starts, whether this one is
/// an error and its text) at no allocation.
///
/// It checks exactly what [`decode_reply`] checks, in the same order, so the two agree on
/// every input: the same `Ok(None)`, the same error at the same offset, the same length.
/// Nesting is followed by recursion bounded by the limits' depth.
///
/// # Errors
///
/// As [`decode_reply`].
pub fn scan_reply(buf: &[u8], limits: &Limits) -> Result<Option<Scanned>, ProtoError> {
    let mux = match (buf.get(2), buf.get(3)) {
        (Some(&a), Some(&b)) => u16::from_be_bytes([a, b]),
        _ => return Ok(None),
    };
    let t = match (buf.first(), buf.get(1)) {
        (Some(&a), Some(&b)) => u16::from_be_bytes([a, b]),
        _ => return Ok(None),
    };
    Ok(
        skip_element(buf, 4, t, 0, 0, limits)?.map(|(consumed, class)| Scanned {
            mux,
            consumed,
            class,
        }),
    )
}

type Skip = Result<Option<(usize, ReplyClass)>, ProtoError>;

/// The end of a `[u32 len][bytes]` payload at `pos` and the bytes' range.
fn skip_bytes(
    buf: &[u8],
    pos: usize,
    limits: &Limits,
) -> Result<Option<(usize, usize)>, ProtoError> {
    let Some(n) = len_at(buf, pos, limits.max_bulk_len, "length")? else {
        return Ok(None);
    };
    let start = pos + 4;
    let end = start.saturating_add(n);
    Ok((end <= buf.len()).then_some((start, end)))
}

/// The u32 length or count at `pos` (`what` names it in the error), refused above `max`.
#[inline]
fn len_at(buf: &[u8], pos: usize, max: usize, what: &str) -> Result<Option<usize>, ProtoError> {
    let Some(a) = be::<4>(buf, pos) else {
        return Ok(None);
    };
    let n = u32::from_be_bytes(a) as usize;
    if n > max {
        return Err(ProtoError::new(
            pos,
            format!("a {what} of at most {max}"),
            format!("{n}"),
        ));
    }
    Ok(Some(n))
}

/// Evaluates a `Result<Option<T>, _>`: returns the error, or `Ok(None)` (not enough
/// bytes yet) from the enclosing function, or gives the `T`.
macro_rules! need {
    ($e:expr) => {
        match $e? {
            Some(v) => v,
            None => return Ok(None),
        }
    };
}

fn skip_next(buf: &[u8], pos: usize, depth: usize, limits: &Limits) -> Skip {
    let Some(t) = be::<2>(buf, pos).map(u16::from_be_bytes) else {
        return Ok(None);
    };
    skip_element(buf, pos + 2, t, pos, depth, limits)
}

/// [`element`] without the value: the end of the element of type `t` whose payload
/// starts at `pos`, and its class.
fn skip_element(buf: &[u8], pos: usize, t: u16, at: usize, depth: usize, limits: &Limits) -> Skip {
    use types::*;
    let fixed = |n: usize| (pos + n <= buf.len()).then_some(pos + n);
    let done = match t {
        SIMPLE | BIG_NUMBER => (need!(skip_bytes(buf, pos, limits)).1, ReplyClass::Value),
        ERROR | BLOB_ERROR => {
            let (start, end) = need!(skip_bytes(buf, pos, limits));
            (end, ReplyClass::Error { start, end })
        }
        BULK => {
            if be::<4>(buf, pos) == Some([0xFF; 4]) {
                (pos + 4, ReplyClass::Nil)
            } else {
                (need!(skip_bytes(buf, pos, limits)).1, ReplyClass::Value)
            }
        }
        INTEGER | DOUBLE => match fixed(8) {
            Some(end) => (end, ReplyClass::Value),
            None => return Ok(None),
        },
        NULL => (pos, ReplyClass::Nil),
        BOOLEAN => match buf.get(pos) {
            None => return Ok(None),
            Some(0 | 1) => (pos + 1, ReplyClass::Value),
            Some(&b) => return Err(ProtoError::byte(pos, "a boolean byte 0 or 1", b)),
        },
        VERBATIM => {
            if be::<3>(buf, pos).is_none() {
                return Ok(None);
            }
            (need!(skip_bytes(buf, pos + 3, limits)).1, ReplyClass::Value)
        }
        ARRAY | SET | PUSH | MAP | ATTRIBUTE => {
            let Aggregate {
                elements,
                start: mut p,
                depth: inner,
            } = need!(aggregate(buf, pos, t, at, depth, limits));
            for _ in 0..elements {
                p = need!(skip_next(buf, p, inner, limits)).0;
            }
            match t {
                PUSH => (p, ReplyClass::Push),
                ATTRIBUTE => need!(skip_next(buf, p, inner, limits)),
                _ => (p, ReplyClass::Value),
            }
        }
        other => {
            return Err(ProtoError::new(
                at,
                "a reply type code 0x8000-0x800E",
                format!("0x{other:04x}"),
            ))
        }
    };
    Ok(Some(done))
}

type Step = Result<Option<(Value, usize)>, ProtoError>;

/// The header of an aggregate reply (array, set, push, map, attribute) whose count
/// starts at `pos`: how many elements follow (two per map or attribute entry), where
/// the first starts, and the depth they are read at. The scanner and the decoder both
/// read it here, so they accept and refuse the same counts and depths.
struct Aggregate {
    elements: usize,
    start: usize,
    depth: usize,
}

#[inline]
fn aggregate(
    buf: &[u8],
    pos: usize,
    t: u16,
    at: usize,
    depth: usize,
    limits: &Limits,
) -> Result<Option<Aggregate>, ProtoError> {
    let Some(n) = len_at(buf, pos, limits.max_aggregate_len, "count")? else {
        return Ok(None);
    };
    let inner = if n > 0 || t == types::ATTRIBUTE {
        if depth + 1 > limits.effective_depth() {
            return Err(ProtoError::new(
                at,
                format!("nesting depth at most {}", limits.effective_depth()),
                "a deeper aggregate",
            ));
        }
        depth + 1
    } else {
        depth
    };
    let per = if t == types::MAP || t == types::ATTRIBUTE {
        2
    } else {
        1
    };
    Ok(Some(Aggregate {
        elements: n.saturating_mul(per),
        start: pos + 4,
        depth: inner,
    }))
}

fn be<const N: usize>(buf: &[u8], pos: usize) -> Option<[u8; N]> {
    let s = buf.get(pos..pos.checked_add(N)?)?;
    let mut a = [0u8; N];
    a.copy_from_slice(s);
    Some(a)
}

/// The bytes of a `[u32 len][bytes]` payload at `pos` and the end of the payload.
fn bytes(buf: &[u8], pos: usize, limits: &Limits) -> Result<Option<(Vec<u8>, usize)>, ProtoError> {
    Ok(skip_bytes(buf, pos, limits)?.map(|(start, end)| (buf[start..end].to_vec(), end)))
}

fn next_element(buf: &[u8], pos: usize, depth: usize, limits: &Limits) -> Step {
    let Some(t) = be::<2>(buf, pos).map(u16::from_be_bytes) else {
        return Ok(None);
    };
    element(buf, pos + 2, t, pos, depth, limits)
}

fn element(buf: &[u8], pos: usize, t: u16, at: usize, depth: usize, limits: &Limits) -> Step {
    use types::*;
    let v = match t {
        SIMPLE | ERROR | BLOB_ERROR | BIG_NUMBER => {
            let (b, next) = need!(bytes(buf, pos, limits));
            let v = match t {
                SIMPLE => Value::Simple(b),
                ERROR => Value::SimpleError(b),
                BLOB_ERROR => Value::BlobError(b),
                _ => Value::BigNumber(b),
            };
            (v, next)
        }
        BULK => {
            if be::<4>(buf, pos) == Some([0xFF; 4]) {
                (Value::Null, pos + 4)
            } else {
                let (b, next) = need!(bytes(buf, pos, limits));
                (Value::Blob(b), next)
            }
        }
        INTEGER => match be::<8>(buf, pos) {
            Some(a) => (Value::Integer(i64::from_be_bytes(a)), pos + 8),
            None => return Ok(None),
        },
        DOUBLE => match be::<8>(buf, pos) {
            Some(a) => (
                Value::Double(f64::from_bits(u64::from_be_bytes(a))),
                pos + 8,
            ),
            None => return Ok(None),
        },
        NULL => (Value::Null, pos),
        BOOLEAN => match buf.get(pos) {
            None => return Ok(None),
            Some(0) => (Value::Boolean(false), pos + 1),
            Some(1) => (Value::Boolean(true), pos + 1),
            Some(&b) => return Err(ProtoError::byte(pos, "a boolean byte 0 or 1", b)),
        },
        VERBATIM => {
            let format = match be::<3>(buf, pos) {
                Some(f) => f,
                None => return Ok(None),
            };
            let (text, next) = need!(bytes(buf, pos + 3, limits));
            (Value::Verbatim { format, text }, next)
        }
        ARRAY | SET | PUSH | MAP | ATTRIBUTE => {
            let Aggregate {
                elements,
                start: mut p,
                depth: inner,
            } = need!(aggregate(buf, pos, t, at, depth, limits));
            let cap = elements.min(buf.len().saturating_sub(p) / 2);
            let mut items = Vec::with_capacity(cap);
            for _ in 0..elements {
                let (v, next) = need!(next_element(buf, p, inner, limits));
                items.push(v);
                p = next;
            }
            let pairs = |items: Vec<Value>| {
                let mut out = Vec::with_capacity(items.len() / 2);
                let mut it = items.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    out.push((k, v));
                }
                out
            };
            match t {
                ARRAY => (Value::Array(items), p),
                SET => (Value::Set(items), p),
                PUSH => (Value::Push(items), p),
                MAP => (Value::Map(pairs(items)), p),
                _ => {
                    let (value, next) = need!(next_element(buf, p, inner, limits));
                    (
                        Value::Attribute {
                            attrs: pairs(items),
                            value: Box::new(value),
                        },
                        next,
                    )
                }
            }
        }
        other => {
            return Err(ProtoError::new(
                at,
                "a reply type code 0x8000-0x800E",
                format!("0x{other:04x}"),
            ))
        }
    };
    Ok(Some(v))
}
