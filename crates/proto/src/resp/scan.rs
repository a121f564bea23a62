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
//! Most replies a benchmark sees are one plain token (`+OK`, `:1`, `$3\r\nbar\r\n`) or a
//! flat array of them. A quick path recognises those with a few byte comparisons and no
//! nesting stack; anything else, including every incomplete or malformed reply, goes to
//! the full path, so errors and "need more" answers come from one place. An array whose
//! elements turn out to nest hands the remaining elements to the full path where the
//! quick path stopped, without scanning its prefix again.
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
#[inline]
pub fn scan_reply(buf: &[u8], limits: &Limits) -> Result<Option<Scanned>, ProtoError> {
    match quick_reply(buf, limits) {
        Quick::Done(consumed, class) => Ok(Some(Scanned { consumed, class })),
        Quick::Resume(pos, left) => Ok(skip(buf, pos, left, 1, limits)?.map(|end| Scanned {
            consumed: end,
            class: aggregate_class(buf, b'*'),
        })),
        Quick::Slow => scan_slow(buf, limits),
    }
}

/// What the quick path made of a reply.
enum Quick {
    /// A complete reply: its length and class.
    Done(usize, ReplyClass),
    /// A top-level array whose header and first elements were plain: `left` elements
    /// remain from `pos`, and one aggregate level is open.
    Resume(usize, usize),
    /// Anything else: scan from the start with the full lexer.
    Slow,
}

/// The quick path of [`scan_reply`]: complete replies spelled the plain way (`+`/`-`
/// lines up to 32 bytes, non-negative integers, bulk strings, flat arrays of those).
#[inline(always)]
fn quick_reply(buf: &[u8], limits: &Limits) -> Quick {
    match buf.first() {
        Some(b'*') => {}
        _ => {
            return match quick_scalar(buf, 0, limits) {
                Some((end, class)) => Quick::Done(end, class),
                None => Quick::Slow,
            }
        }
    }
    let (n, mut pos) = match lex::quick_uint(buf, 1) {
        Some(h) => h,
        None => return Quick::Slow,
    };
    if n > limits.max_aggregate_len || (n > 0 && limits.effective_depth() < 1) {
        return Quick::Slow;
    }
    let mut left = n;
    while left > 0 {
        match quick_scalar(buf, pos, limits) {
            Some((end, _)) => pos = end,
            None => return Quick::Resume(pos, left),
        }
        left -= 1;
    }
    Quick::Done(pos, ReplyClass::Value)
}

/// A plain, complete scalar at `pos`: `(end, class)`, or `None` for anything else.
#[inline(always)]
fn quick_scalar(buf: &[u8], pos: usize, limits: &Limits) -> Option<(usize, ReplyClass)> {
    match *buf.get(pos)? {
        b'+' => lex::quick_line(buf, pos + 1, limits.max_bulk_len)
            .map(|(_, next)| (next, ReplyClass::Value)),
        b'-' => lex::quick_line(buf, pos + 1, limits.max_bulk_len)
            .map(|(cr, next)| (next, error_class(buf.get(pos + 1..cr).unwrap_or(&[])))),
        b':' => lex::quick_uint(buf, pos + 1).map(|(_, next)| (next, ReplyClass::Value)),
        b'$' => {
            let (n, start) = lex::quick_uint(buf, pos + 1)?;
            if n > limits.max_bulk_len {
                return None;
            }
            lex::quick_payload(buf, start, n).map(|(_, next)| (next, ReplyClass::Value))
        }
        _ => None,
    }
}

/// The full path of [`scan_reply`], for every reply the quick path does not take.
fn scan_slow(buf: &[u8], limits: &Limits) -> Result<Option<Scanned>, ProtoError> {
    let tag = match buf.first() {
        None => return Ok(None),
        Some(&t) => t,
    };
    // Fast path: a scalar reply (+OK, :n, $n bulk, ...) is one token; it needs neither
    // the nesting stack nor the second look that `classify` takes.
    if let Some(step) = scalar(buf, 0, tag, limits)? {
        return Ok(step.map(|(end, class)| Scanned {
            consumed: end,
            class,
        }));
    }
    match tag {
        b'|' => scan_after_attributes(buf, limits),
        _ => match aggregate(buf, 0, tag, limits)? {
            None => Ok(None),
            Some(end) => Ok(Some(Scanned {
                consumed: end,
                class: aggregate_class(buf, tag),
            })),
        },
    }
}

/// The class of a complete top-level aggregate starting with `tag` at `buf[0]`.
#[inline]
fn aggregate_class(buf: &[u8], tag: u8) -> ReplyClass {
    match tag {
        b'>' => ReplyClass::Push,
        b'*' if buf.get(1) == Some(&b'-') => ReplyClass::Nil,
        _ => ReplyClass::Value,
    }
}

/// What [`scalar`] found: `None` = need more bytes, `Some((end, class))` = a complete
/// scalar ending at `end`.
type ScalarStep = Option<(usize, ReplyClass)>;

/// Reads the scalar value whose type byte `tag` is at `pos`.
///
/// Returns `Ok(None)` when `tag` starts no scalar (an aggregate, an attribute or a byte
/// that is no RESP type), `Ok(Some(None))` when the scalar is incomplete, and
/// `Ok(Some(Some((end, class))))` when it is complete.
#[inline]
fn scalar(
    buf: &[u8],
    pos: usize,
    tag: u8,
    limits: &Limits,
) -> Result<Option<ScalarStep>, ProtoError> {
    let step = match tag {
        b'+' => lex::line(buf, pos + 1, limits)?.map(|(_, next)| (next, ReplyClass::Value)),
        b'-' => lex::line(buf, pos + 1, limits)?
            .map(|(cr, next)| (next, error_class(buf.get(pos + 1..cr).unwrap_or(&[])))),
        b':' => lex::int(buf, pos + 1)?.map(|(_, next)| (next, ReplyClass::Value)),
        b'$' | b'!' | b'=' => {
            let what = lex::length_name(tag);
            match lex::len(buf, pos + 1, limits.max_bulk_len, tag == b'$', what)? {
                None => None,
                Some((Len::Nil, next)) => Some((next, ReplyClass::Nil)),
                Some((Len::Some(n), next)) => match lex::payload(buf, next, n)? {
                    None => None,
                    Some((end, after)) => {
                        let body = buf.get(next..end).unwrap_or(&[]);
                        let class = match tag {
                            b'=' => {
                                lex::verbatim(body, next)?;
                                ReplyClass::Value
                            }
                            b'!' => error_class(body),
                            _ => ReplyClass::Value,
                        };
                        Some((after, class))
                    }
                },
            }
        }
        b',' | b'(' => match lex::line(buf, pos + 1, limits)? {
            None => None,
            Some((cr, next)) => {
                let text = buf.get(pos + 1..cr).unwrap_or(&[]);
                if tag == b',' {
                    lex::double(text, pos + 1)?;
                } else {
                    lex::big_number(text, pos + 1)?;
                }
                Some((next, ReplyClass::Value))
            }
        },
        b'#' => boolean(buf, pos)?.map(|(_, next)| (next, ReplyClass::Value)),
        b'_' => crlf(buf, pos + 1)?.map(|next| (next, ReplyClass::Nil)),
        _ => return Ok(None),
    };
    Ok(Some(step))
}

/// The class of an error reply with message `text`.
#[inline]
fn error_class(text: &[u8]) -> ReplyClass {
    if text.starts_with(b"MOVED ") {
        ReplyClass::Moved
    } else if text.starts_with(b"ASK ") {
        ReplyClass::Ask
    } else {
        ReplyClass::Error
    }
}

/// Reads the aggregate (or the byte that is no RESP type) with type byte `tag` at
/// `pos`, at the top level; returns the position after it.
///
/// Elements are walked here one scalar at a time; only the first nested aggregate or
/// attribute hands the rest of the elements to [`skip`] and its nesting stack, so a
/// flat array of bulk strings never pays for that stack.
fn aggregate(
    buf: &[u8],
    pos: usize,
    tag: u8,
    limits: &Limits,
) -> Result<Option<usize>, ProtoError> {
    if !matches!(tag, b'*' | b'~' | b'>' | b'%') {
        return Err(lex::bad_type(pos, tag));
    }
    let what = lex::length_name(tag);
    let (n, mut p) = match lex::len(buf, pos + 1, limits.max_aggregate_len, tag == b'*', what)? {
        None => return Ok(None),
        Some((Len::Nil, next)) => return Ok(Some(next)),
        Some((Len::Some(n), next)) => (n, next),
    };
    let mut left = if tag == b'%' { n.saturating_mul(2) } else { n };
    if left == 0 {
        return Ok(Some(p));
    }
    if limits.effective_depth() < 1 {
        return Err(depth_error(pos, limits));
    }
    while left > 0 {
        let t = match buf.get(p) {
            None => return Ok(None),
            Some(&t) => t,
        };
        match scalar(buf, p, t, limits)? {
            None => return skip(buf, p, left, 1, limits),
            Some(None) => return Ok(None),
            Some(Some((end, _))) => p = end,
        }
        left -= 1;
    }
    Ok(Some(p))
}

/// The slow path of [`scan_reply`]: top-level attributes, then the value they annotate.
fn scan_after_attributes(buf: &[u8], limits: &Limits) -> Result<Option<Scanned>, ProtoError> {
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
        Some(b'-') | Some(b'!') => error_class(error_text(v)),
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
        match scalar(buf, pos, tag, limits)? {
            Some(None) => return Ok(None),
            Some(Some((next, _))) => pos = next,
            None => match tag {
                b'*' | b'~' | b'>' | b'%' | b'|' => {
                    let what = lex::length_name(tag);
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
            },
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

#[cfg(test)]
mod quick_path_tests {
    use super::*;

    /// The quick path must give exactly what the full path gives (same length, class and
    /// error with its offset) on every prefix and every one-byte mutation of these
    /// replies, under default and tight limits.
    #[test]
    fn quick_and_full_paths_agree_exactly() {
        let seeds: &[&[u8]] = &[
            b"+OK\r\n",
            b"+PONG\r\n",
            b"-ERR unknown command\r\n",
            b"-MOVED 3999 127.0.0.1:6381\r\n",
            b"-ASK 3999 127.0.0.1:6381\r\n",
            b":1\r\n",
            b":-42\r\n",
            b":1234567890123456789\r\n",
            b":99999999999999999999\r\n",
            b"$3\r\nbar\r\n",
            b"$0\r\n\r\n",
            b"$-1\r\n",
            b"$010\r\n0123456789\r\n",
            b"*-1\r\n",
            b"*0\r\n",
            b"*2\r\n$3\r\nfoo\r\n:7\r\n",
            b"*3\r\n$1\r\na\r\n*1\r\n+x\r\n-MOVED 1 h:1\r\n",
            b"*2\r\n|1\r\n+k\r\n+v\r\n:1\r\n:2\r\n",
            b">2\r\n+message\r\n+hi\r\n",
            b"%1\r\n+a\r\n:1\r\n",
            b"_\r\n",
            b"#t\r\n",
            b",3.5\r\n",
            b"(123\r\n",
            b"=7\r\ntxt:abc\r\n",
            b"!10\r\nMOVED 1 h\r\n",
            b"|1\r\n+a\r\n+b\r\n+OK\r\n",
            b"+a very long simple string line that exceeds the quick window\r\n",
        ];
        let limit_sets = [
            Limits::default(),
            Limits {
                max_bulk_len: 2,
                max_aggregate_len: 1,
                max_depth: 0,
            },
            Limits {
                max_bulk_len: 40,
                max_aggregate_len: 2,
                max_depth: 1,
            },
        ];
        let mutations = [0u8, b'\r', b'\n', b'-', b'0', b'9', b'*', b'$', b'+', b'x'];
        let mut checked = 0usize;
        for limits in &limit_sets {
            for seed in seeds {
                let mut inputs = lex::cuts_and_mutations(seed, &mutations);
                // Trailing bytes after a complete reply must not change the answer.
                let mut two = seed.to_vec();
                two.extend_from_slice(b"+OK\r\n");
                inputs.push(two);
                for input in &inputs {
                    assert_eq!(
                        scan_reply(input, limits),
                        scan_slow(input, limits),
                        "input {:?} limits {limits:?}",
                        String::from_utf8_lossy(input)
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 5000, "{checked}");
    }
}
