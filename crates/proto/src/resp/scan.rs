//! The fast reply scanner: where does the next reply end, and what kind is it?
//!
//! A load generator does not need the contents of a reply, only its extent (to find the
//! next one) and its class (to count errors and follow cluster redirections). This
//! scanner walks the reply once, never allocates, and keeps the nesting state of
//! aggregates in a fixed-size stack of remaining-element counts instead of recursing.
//!
//! RESP3 attributes (`|`) annotate the value that follows them. They are skipped and the
//! reply after them is classified; inside aggregates they do not count as elements. The
//! trick that keeps the stack simple: an attribute adds one to its parent's remaining
//! count, so that finishing it (which takes one away, like any element) changes nothing.
//!
//! The scanner validates exactly what the full decoder ([`super::value::decode`])
//! validates, so the two agree on every input.

use super::lex::{self, Len};
use super::{Limits, MAX_DEPTH};
use crate::error::ProtoError;

/// The class of a complete reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplyClass {
    /// Any non-error, non-nil reply.
    Value,
    /// RESP2 nil bulk (`$-1`) or nil array (`*-1`), or RESP3 null (`_`).
    Nil,
    /// An error reply (`-` or `!`) other than a redirection.
    Error,
    /// A `MOVED slot host:port` cluster redirection.
    Moved,
    /// An `ASK slot host:port` cluster redirection.
    Ask,
    /// A RESP3 push (`>`): an out-of-band message, not the reply to a request.
    Push,
}

/// A complete reply found at the start of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scanned {
    /// Bytes the reply occupies, attributes before it included.
    pub consumed: usize,
    /// What kind of reply it is.
    pub class: ReplyClass,
}

/// Delimits and classifies the reply at the start of `buf`.
///
/// Returns `Ok(None)` when `buf` holds only a prefix of a reply (read more and call again
/// with the longer buffer). Never allocates on success or "need more".
///
/// # Errors
///
/// A [`ProtoError`] with the byte offset when the bytes are not RESP2/RESP3, or a length,
/// count or nesting depth exceeds `limits`.
pub fn scan_reply(buf: &[u8], limits: &Limits) -> Result<Option<Scanned>, ProtoError> {
    // Fast paths for the replies a benchmark sees most: +OK, :n, $n bulk.
    let mut pos = 0;
    loop {
        let tag = match buf.get(pos) {
            None => return Ok(None),
            Some(&t) => t,
        };
        match tag {
            b'|' => {
                // A top-level attribute: skip it, then classify what follows.
                let (n, next) = match lex::len(
                    buf,
                    pos + 1,
                    limits.max_aggregate_len,
                    false,
                    "attribute size",
                )? {
                    None => return Ok(None),
                    Some((Len::Some(n), next)) => (n, next),
                    Some((Len::Nil, _)) => {
                        return Err(ProtoError::new(
                            pos + 1,
                            "a non-negative attribute size",
                            "-1",
                        ))
                    }
                };
                if n == 0 {
                    pos = next;
                } else {
                    if limits.effective_depth() < 1 {
                        return Err(depth_error(pos, limits));
                    }
                    match skip(buf, next, n.saturating_mul(2), 1, limits)? {
                        None => return Ok(None),
                        Some(p) => pos = p,
                    }
                }
                if buf.get(pos) == Some(&b'|') {
                    return Err(chained_attribute(pos));
                }
            }
            _ => {
                let start = pos;
                let end = match skip(buf, pos, 1, 0, limits)? {
                    None => return Ok(None),
                    Some(e) => e,
                };
                let class = classify(buf, start, end);
                return Ok(Some(Scanned {
                    consumed: end,
                    class,
                }));
            }
        }
    }
}

/// An attribute directly followed by another attribute. RESP3 does not say whether that
/// is allowed; rejecting it keeps the decoders free of unbounded chains.
pub(crate) fn chained_attribute(pos: usize) -> ProtoError {
    ProtoError::new(pos, "the value an attribute annotates", "another attribute")
}

fn depth_error(pos: usize, limits: &Limits) -> ProtoError {
    ProtoError::new(
        pos,
        format!("nesting depth at most {}", limits.effective_depth()),
        "a deeper aggregate",
    )
}

/// Classifies the complete, valid value spanning `buf[start..end]`.
fn classify(buf: &[u8], start: usize, end: usize) -> ReplyClass {
    let v = buf.get(start..end).unwrap_or(&[]);
    match v.first() {
        Some(b'-') | Some(b'!') => {
            let text = error_text(v);
            if text.starts_with(b"MOVED ") {
                ReplyClass::Moved
            } else if text.starts_with(b"ASK ") {
                ReplyClass::Ask
            } else {
                ReplyClass::Error
            }
        }
        Some(b'_') => ReplyClass::Nil,
        Some(b'$') | Some(b'*') if v.get(1) == Some(&b'-') => ReplyClass::Nil,
        Some(b'>') => ReplyClass::Push,
        _ => ReplyClass::Value,
    }
}

/// The message of an error value (`-msg\r\n` or `!len\r\nmsg\r\n`); empty otherwise.
fn error_text(v: &[u8]) -> &[u8] {
    match v.first() {
        Some(b'-') => {
            let body = v.get(1..).unwrap_or(&[]);
            let end = memchr::memchr(b'\r', body).unwrap_or(body.len());
            body.get(..end).unwrap_or(&[])
        }
        Some(b'!') => {
            let nl = match memchr::memchr(b'\n', v) {
                Some(i) => i,
                None => return &[],
            };
            let body = v.get(nl + 1..).unwrap_or(&[]);
            let end = body.len().saturating_sub(2);
            body.get(..end).unwrap_or(&[])
        }
        _ => &[],
    }
}

/// The first word of an error reply, such as `ERR`, `WRONGTYPE` or `MOVED`.
///
/// `reply` is a complete reply as delimited by [`scan_reply`] (attributes before it are
/// skipped). Returns an empty slice when `reply` is not an error.
pub fn error_kind(reply: &[u8]) -> &[u8] {
    let mut v = reply;
    // Skip top-level attributes with generous limits: the reply was already validated.
    while v.first() == Some(&b'|') {
        let limits = Limits::default();
        let (n, next) = match lex::len(v, 1, usize::MAX, false, "attribute size") {
            Ok(Some((Len::Some(n), next))) => (n, next),
            _ => return &[],
        };
        match skip(v, next, n.saturating_mul(2), 1, &limits) {
            Ok(Some(p)) => v = v.get(p..).unwrap_or(&[]),
            _ => return &[],
        }
    }
    let text = error_text(v);
    let end = text.iter().position(|&b| b == b' ').unwrap_or(text.len());
    text.get(..end).unwrap_or(&[])
}

/// Skips `count` consecutive values starting at `pos`, with `depth` aggregate levels
/// already open around them. Returns the position after the last one.
pub(crate) fn skip(
    buf: &[u8],
    mut pos: usize,
    count: usize,
    depth: usize,
    limits: &Limits,
) -> Result<Option<usize>, ProtoError> {
    if count == 0 {
        return Ok(Some(pos));
    }
    let max_depth = limits.effective_depth();
    // stack[0] is the caller's list of `count` values; stack[1..sp] are open aggregates.
    let mut stack = [0usize; MAX_DEPTH + 1];
    // is_attr[i]: stack[i] is an attribute's pair list.
    let mut is_attr = [false; MAX_DEPTH + 1];
    stack[0] = count;
    let mut sp = 1usize;
    // The previous thing read was a complete attribute, so a value must follow.
    let mut after_attr = false;
    loop {
        let tag = match buf.get(pos) {
            None => return Ok(None),
            Some(&t) => t,
        };
        let at = pos;
        if tag == b'|' && after_attr {
            return Err(chained_attribute(at));
        }
        after_attr = false;
        // Either a finished scalar (next position) or an aggregate header.
        let mut open: usize = 0;
        match tag {
            b'+' | b'-' => match lex::line(buf, pos + 1, limits)? {
                None => return Ok(None),
                Some((_, next)) => pos = next,
            },
            b':' => match lex::int(buf, pos + 1)? {
                None => return Ok(None),
                Some((_, next)) => pos = next,
            },
            b'$' | b'!' | b'=' => {
                let what = match tag {
                    b'$' => "bulk string length",
                    b'!' => "blob error length",
                    _ => "verbatim string length",
                };
                match lex::len(buf, pos + 1, limits.max_bulk_len, tag == b'$', what)? {
                    None => return Ok(None),
                    Some((Len::Nil, next)) => pos = next,
                    Some((Len::Some(n), next)) => match lex::payload(buf, next, n)? {
                        None => return Ok(None),
                        Some((end, after)) => {
                            if tag == b'=' {
                                lex::verbatim(buf.get(next..end).unwrap_or(&[]), next)?;
                            }
                            pos = after;
                        }
                    },
                }
            }
            b',' | b'(' => match lex::line(buf, pos + 1, limits)? {
                None => return Ok(None),
                Some((cr, next)) => {
                    let text = buf.get(pos + 1..cr).unwrap_or(&[]);
                    if tag == b',' {
                        lex::double(text, pos + 1)?;
                    } else {
                        lex::big_number(text, pos + 1)?;
                    }
                    pos = next;
                }
            },
            b'#' => match boolean(buf, pos)? {
                None => return Ok(None),
                Some((_, next)) => pos = next,
            },
            b'_' => match crlf(buf, pos + 1)? {
                None => return Ok(None),
                Some(next) => pos = next,
            },
            b'*' | b'~' | b'>' | b'%' | b'|' => {
                let what = match tag {
                    b'*' => "array length",
                    b'~' => "set size",
                    b'>' => "push length",
                    b'%' => "map size",
                    _ => "attribute size",
                };
                match lex::len(buf, pos + 1, limits.max_aggregate_len, tag == b'*', what)? {
                    None => return Ok(None),
                    Some((Len::Nil, next)) => pos = next,
                    Some((Len::Some(n), next)) => {
                        pos = next;
                        let elems = if tag == b'%' || tag == b'|' {
                            n.saturating_mul(2)
                        } else {
                            n
                        };
                        if tag == b'|' {
                            // Attributes are not elements: pre-pay the decrement below.
                            stack[sp - 1] = stack[sp - 1].saturating_add(1);
                            after_attr = n == 0;
                        }
                        open = elems;
                    }
                }
            }
            other => return Err(lex::bad_type(at, other)),
        }
        if open > 0 {
            if depth + sp > max_depth {
                return Err(depth_error(at, limits));
            }
            stack[sp] = open;
            is_attr[sp] = tag == b'|';
            sp += 1;
            continue;
        }
        // One value finished: retire it from its parent, and retire finished parents.
        loop {
            stack[sp - 1] -= 1;
            if stack[sp - 1] > 0 {
                break;
            }
            sp -= 1;
            if sp == 0 {
                return Ok(Some(pos));
            }
            after_attr = is_attr[sp];
        }
    }
}

/// Reads `#t\r\n` or `#f\r\n` at `pos`.
pub(crate) fn boolean(buf: &[u8], pos: usize) -> lex::Lexed<bool> {
    let v = match buf.get(pos + 1) {
        None => return Ok(None),
        Some(b't') => true,
        Some(b'f') => false,
        Some(&b) => return Err(ProtoError::byte(pos + 1, "'t' or 'f' after '#'", b)),
    };
    Ok(crlf(buf, pos + 2)?.map(|next| (v, next)))
}

/// Expects CRLF at `pos`.
pub(crate) fn crlf(buf: &[u8], pos: usize) -> Result<Option<usize>, ProtoError> {
    match (buf.get(pos), buf.get(pos + 1)) {
        (None, _) | (Some(b'\r'), None) => Ok(None),
        (Some(b'\r'), Some(b'\n')) => Ok(Some(pos + 2)),
        (Some(b'\r'), Some(&b)) => Err(ProtoError::byte(pos + 1, "LF after CR", b)),
        (Some(&b), _) => Err(ProtoError::byte(pos, "CRLF", b)),
    }
}
