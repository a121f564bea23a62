//! The full RESP2/RESP3 decoder: bytes → an owned [`Value`] tree.
//!
//! This is the decoder for tests, verification and connection handshakes (`HELLO 3`),
//! where the contents matter and a few allocations per reply do not. It accepts exactly
//! the language of [`super::scan::scan_reply`] (both use the same lexer and the same
//! limits), so a reply the scanner delimits is one this decoder can build, and vice versa.
//!
//! Recursion depth is bounded by [`Limits::effective_depth`], and vectors are reserved
//! for at most as many elements as the remaining bytes could possibly hold (every element
//! takes at least three bytes), so a huge count in a short buffer costs nothing.

use super::lex::{self, Len};
use super::scan::{boolean, chained_attribute, crlf};
use super::Limits;
use crate::error::ProtoError;

/// One RESP2 or RESP3 value.
///
/// RESP2's null bulk string (`$-1`) and null array (`*-1`) decode to [`Value::Null`], like
/// RESP3's `_`. Doubles compare with `==`, so a `NaN` double is not equal to itself.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `+text`: a simple string (no CR or LF inside).
    Simple(Vec<u8>),
    /// `-text`: a simple error.
    SimpleError(Vec<u8>),
    /// `:n`: a signed 64-bit integer.
    Integer(i64),
    /// `$len`: a binary-safe bulk (blob) string.
    Blob(Vec<u8>),
    /// `!len`: a binary-safe blob error.
    BlobError(Vec<u8>),
    /// `_`, `$-1` or `*-1`: null.
    Null,
    /// `,x`: a double, including infinities and NaN.
    Double(f64),
    /// `#t` or `#f`.
    Boolean(bool),
    /// `(digits`: an integer of any size, kept as its decimal text (optional `-`).
    BigNumber(Vec<u8>),
    /// `=len`: text with a three-byte format such as `txt` or `mkd`.
    Verbatim {
        /// The format, e.g. `*b"txt"`.
        format: [u8; 3],
        /// The text after `fmt:`.
        text: Vec<u8>,
    },
    /// `*n`: an array.
    Array(Vec<Value>),
    /// `%n`: a map, as ordered key/value pairs (keys may repeat on the wire).
    Map(Vec<(Value, Value)>),
    /// `~n`: a set, in wire order.
    Set(Vec<Value>),
    /// `|n` pairs followed by the value they annotate.
    Attribute {
        /// The attribute pairs.
        attrs: Vec<(Value, Value)>,
        /// The annotated value.
        value: Box<Value>,
    },
    /// `>n`: an out-of-band push message.
    Push(Vec<Value>),
}

/// Decodes the value at the start of `buf`; returns it and the bytes it occupied.
///
/// `Ok(None)` means `buf` holds only a prefix of a value.
///
/// # Errors
///
/// A [`ProtoError`] with the byte offset when the bytes are not RESP2/RESP3, or a length,
/// count or nesting depth exceeds `limits`.
pub fn decode(buf: &[u8], limits: &Limits) -> Result<Option<(Value, usize)>, ProtoError> {
    parse(buf, 0, 0, limits)
}

fn parse(buf: &[u8], pos: usize, depth: usize, limits: &Limits) -> lex::Lexed<Value> {
    let tag = match buf.get(pos) {
        None => return Ok(None),
        Some(&t) => t,
    };
    let text = |from: usize, to: usize| buf.get(from..to).unwrap_or(&[]).to_vec();
    let v = match tag {
        b'+' | b'-' => match lex::line(buf, pos + 1, limits)? {
            None => return Ok(None),
            Some((cr, next)) => {
                let t = text(pos + 1, cr);
                let v = if tag == b'+' {
                    Value::Simple(t)
                } else {
                    Value::SimpleError(t)
                };
                (v, next)
            }
        },
        b':' => match lex::int(buf, pos + 1)? {
            None => return Ok(None),
            Some((n, next)) => (Value::Integer(n), next),
        },
        b'$' | b'!' | b'=' => {
            let what = lex::length_name(tag);
            match lex::len(buf, pos + 1, limits.max_bulk_len, tag == b'$', what)? {
                None => return Ok(None),
                Some((Len::Nil, next)) => (Value::Null, next),
                Some((Len::Some(n), next)) => match lex::payload(buf, next, n)? {
                    None => return Ok(None),
                    Some((end, after)) => {
                        let v = match tag {
                            b'$' => Value::Blob(text(next, end)),
                            b'!' => Value::BlobError(text(next, end)),
                            _ => {
                                let (format, t) =
                                    lex::verbatim(buf.get(next..end).unwrap_or(&[]), next)?;
                                Value::Verbatim {
                                    format,
                                    text: t.to_vec(),
                                }
                            }
                        };
                        (v, after)
                    }
                },
            }
        }
        b',' | b'(' => match lex::line(buf, pos + 1, limits)? {
            None => return Ok(None),
            Some((cr, next)) => {
                let t = buf.get(pos + 1..cr).unwrap_or(&[]);
                let v = if tag == b',' {
                    Value::Double(lex::double(t, pos + 1)?)
                } else {
                    lex::big_number(t, pos + 1)?;
                    Value::BigNumber(t.to_vec())
                };
                (v, next)
            }
        },
        b'#' => match boolean(buf, pos)? {
            None => return Ok(None),
            Some((b, next)) => (Value::Boolean(b), next),
        },
        b'_' => match crlf(buf, pos + 1)? {
            None => return Ok(None),
            Some(next) => (Value::Null, next),
        },
        b'*' | b'~' | b'>' => {
            let what = lex::length_name(tag);
            match lex::len(buf, pos + 1, limits.max_aggregate_len, tag == b'*', what)? {
                None => return Ok(None),
                Some((Len::Nil, next)) => (Value::Null, next),
                Some((Len::Some(n), next)) => {
                    let (items, after) = match elements(buf, next, n, pos, depth, limits)? {
                        None => return Ok(None),
                        Some(x) => x,
                    };
                    let v = match tag {
                        b'*' => Value::Array(items),
                        b'~' => Value::Set(items),
                        _ => Value::Push(items),
                    };
                    (v, after)
                }
            }
        }
        b'%' => match pairs(buf, pos, depth, limits, "map size")? {
            None => return Ok(None),
            Some((p, next)) => (Value::Map(p), next),
        },
        b'|' => {
            let (attrs, next) = match pairs(buf, pos, depth, limits, "attribute size")? {
                None => return Ok(None),
                Some(x) => x,
            };
            if buf.get(next) == Some(&b'|') {
                return Err(chained_attribute(next));
            }
            match parse(buf, next, depth, limits)? {
                None => return Ok(None),
                Some((value, after)) => (
                    Value::Attribute {
                        attrs,
                        value: Box::new(value),
                    },
                    after,
                ),
            }
        }
        other => return Err(lex::bad_type(pos, other)),
    };
    Ok(Some(v))
}

/// Reserve no more than the rest of the buffer could hold (3 bytes per value minimum).
fn capacity(buf: &[u8], pos: usize, n: usize) -> usize {
    n.min(buf.len().saturating_sub(pos) / 3)
}

fn enter(at: usize, depth: usize, limits: &Limits) -> Result<usize, ProtoError> {
    if depth + 1 > limits.effective_depth() {
        Err(ProtoError::new(
            at,
            format!("nesting depth at most {}", limits.effective_depth()),
            "a deeper aggregate",
        ))
    } else {
        Ok(depth + 1)
    }
}

fn elements(
    buf: &[u8],
    mut pos: usize,
    n: usize,
    at: usize,
    depth: usize,
    limits: &Limits,
) -> lex::Lexed<Vec<Value>> {
    if n == 0 {
        return Ok(Some((Vec::new(), pos)));
    }
    let inner = enter(at, depth, limits)?;
    let mut items = Vec::with_capacity(capacity(buf, pos, n));
    for _ in 0..n {
        match parse(buf, pos, inner, limits)? {
            None => return Ok(None),
            Some((v, next)) => {
                items.push(v);
                pos = next;
            }
        }
    }
    Ok(Some((items, pos)))
}

type Pairs = Vec<(Value, Value)>;

fn pairs(buf: &[u8], at: usize, depth: usize, limits: &Limits, what: &str) -> lex::Lexed<Pairs> {
    let (n, mut pos) = match lex::len(buf, at + 1, limits.max_aggregate_len, false, what)? {
        None => return Ok(None),
        Some((Len::Some(n), next)) => (n, next),
        Some((Len::Nil, next)) => (0, next),
    };
    if n == 0 {
        return Ok(Some((Vec::new(), pos)));
    }
    let inner = enter(at, depth, limits)?;
    let mut out = Vec::with_capacity(capacity(buf, pos, n.saturating_mul(2)) / 2);
    for _ in 0..n {
        let (k, next) = match parse(buf, pos, inner, limits)? {
            None => return Ok(None),
            Some(x) => x,
        };
        let (v, next) = match parse(buf, next, inner, limits)? {
            None => return Ok(None),
            Some(x) => x,
        };
        out.push((k, v));
        pos = next;
    }
    Ok(Some((out, pos)))
}
