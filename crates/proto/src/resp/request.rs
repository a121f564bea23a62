//! The server side of RESP: splitting a request stream into arguments without copying.
//!
//! A server reads requests as multibulk arrays of bulk strings (`*N\r\n$len\r\n...`), or,
//! from a person typing into telnet, as inline commands (words separated by spaces, ended
//! by a newline). [`parse_request`] handles both and fills a caller-owned vector with
//! slices borrowed from the input, so decoding a command allocates nothing once that
//! vector has grown to the largest argument count seen.
//! Counts and lengths spelled as plain digits take a quick path: each length says where
//! its payload's CRLF must be, so payloads are never searched; anything unusual (a sign,
//! a truncated request, a malformed byte) is re-read by the full parser, which alone
//! decides what is an error and where.
//!
//! Inline commands are split on spaces and tabs only; quoted inline arguments (which
//! would need unescaping into new memory) are rejected with an error that says so.

use super::lex::{self, Len};
use super::Limits;
use crate::error::ProtoError;

/// Decodes the request at the start of `buf` into `args` (cleared first); returns the
/// bytes consumed, or `Ok(None)` when `buf` holds only a prefix of a request.
///
/// An empty inline line (a bare CRLF or LF) is consumed with `args` left empty; callers
/// skip it, as Redis does.
///
/// # Errors
///
/// A [`ProtoError`] with the byte offset for a malformed request, an argument longer than
/// `limits.max_bulk_len`, more arguments than `limits.max_aggregate_len`, or a quoted
/// inline argument.
#[inline(always)]
pub fn parse_request<'a>(
    buf: &'a [u8],
    limits: &Limits,
    args: &mut Vec<&'a [u8]>,
) -> Result<Option<usize>, ProtoError> {
    args.clear();
    // The quick path is small enough to inline into the caller's loop; everything else
    // (inline commands, incomplete or malformed requests) is out of line.
    match quick_multibulk(buf, limits, args) {
        Some(end) => Ok(Some(end)),
        None => parse_request_slow(buf, limits, args),
    }
}

#[cold]
#[inline(never)]
fn parse_request_slow<'a>(
    buf: &'a [u8],
    limits: &Limits,
    args: &mut Vec<&'a [u8]>,
) -> Result<Option<usize>, ProtoError> {
    args.clear();
    match buf.first() {
        None => Ok(None),
        Some(b'*') => parse_multibulk_full(buf, limits, args),
        Some(_) => parse_inline(buf, limits, args),
    }
}

/// The quick path of [`parse_request`] for multibulk requests: a complete request whose
/// counts and lengths are plain digits. Each length says where its payload's CRLF must
/// be, so the payload is never searched. `None` (with `args` partly filled) sends the
/// caller to the full path, which gives the exact answer for incomplete or malformed
/// requests.
#[inline(always)]
fn quick_multibulk<'a>(buf: &'a [u8], limits: &Limits, args: &mut Vec<&'a [u8]>) -> Option<usize> {
    // Most requests start `*N\r\n$L\r\n` with one-digit N and L (a command name of up
    // to nine letters): count and first length in one 8-byte load.
    if let Some(h) = buf.first_chunk::<8>() {
        let w = u64::from_le_bytes(*h);
        let n = ((w >> 8) as u8).wrapping_sub(b'0');
        let l = ((w >> 40) as u8).wrapping_sub(b'0');
        if w & 0xFFFF_00FF_FFFF_00FF == 0x0A0D_0024_0A0D_002A && (1..=9).contains(&n) && l <= 9 {
            return quick_after_name(buf, limits, args, usize::from(n), usize::from(l));
        }
    }
    let (n, pos) = match buf.first_chunk::<4>() {
        // `*d\r\n` in one 4-byte load.
        Some(h) => {
            let w = u32::from_le_bytes(*h);
            let d = ((w >> 8) as u8).wrapping_sub(b'0');
            if w & 0xFFFF_00FF == 0x0A0D_002A && d <= 9 {
                (usize::from(d), 4)
            } else if w & 0xFF == u32::from(b'*') {
                lex::quick_uint_long(buf, 1)?
            } else {
                return None;
            }
        }
        None => return None,
    };
    if n > limits.max_aggregate_len {
        return None;
    }
    let max = limits.max_bulk_len;
    if n == 0 {
        return Some(pos);
    }
    let (a, pos) = lex::quick_bulk(buf, pos, max)?;
    quick_after_first(buf, max, args, n, a, pos)
}

/// [`quick_multibulk`] once `*n\r\n$l\r\n` has been read: the first argument (of
/// length `l`) starts at byte 8.
#[inline(always)]
fn quick_after_name<'a>(
    buf: &'a [u8],
    limits: &Limits,
    args: &mut Vec<&'a [u8]>,
    n: usize,
    l: usize,
) -> Option<usize> {
    let max = limits.max_bulk_len;
    if n > limits.max_aggregate_len || l > max {
        return None;
    }
    let end = 8 + l;
    if *buf.get(end..)?.first_chunk::<2>()? != *b"\r\n" {
        return None;
    }
    let a = buf.get(8..end)?;
    quick_after_first(buf, max, args, n, a, end + 2)
}

/// The rest of a quick multibulk of `n` arguments once its first, `a`, has been read
/// and the second starts at `pos`. Two- and three-argument commands (GET, SET, DEL,
/// HGET, ...) are most of any real stream: their arguments go into the vector with one
/// capacity check.
#[inline(always)]
fn quick_after_first<'a>(
    buf: &'a [u8],
    max: usize,
    args: &mut Vec<&'a [u8]>,
    n: usize,
    a: &'a [u8],
    pos: usize,
) -> Option<usize> {
    match n {
        2 => {
            let (b, p) = lex::quick_bulk(buf, pos, max)?;
            args.extend_from_slice(&[a, b]);
            Some(p)
        }
        3 => {
            let (b, p) = lex::quick_bulk(buf, pos, max)?;
            let (c, p) = lex::quick_bulk(buf, p, max)?;
            args.extend_from_slice(&[a, b, c]);
            Some(p)
        }
        _ => {
            args.push(a);
            let mut pos = pos;
            for _ in 1..n {
                let (arg, after) = lex::quick_bulk(buf, pos, max)?;
                args.push(arg);
                pos = after;
            }
            Some(pos)
        }
    }
}

#[inline(never)]
fn parse_multibulk_full<'a>(
    buf: &'a [u8],
    limits: &Limits,
    args: &mut Vec<&'a [u8]>,
) -> Result<Option<usize>, ProtoError> {
    let Some((n, mut pos)) = full_count(buf, limits)? else {
        return Ok(None);
    };
    for _ in 0..n {
        let Some((start, end, after)) = full_bulk(buf, pos, limits)? else {
            return Ok(None);
        };
        // `payload` has checked that end + 2 <= buf.len().
        args.push(buf.get(start..end).unwrap_or(&[]));
        pos = after;
    }
    Ok(Some(pos))
}

/// The count of the multibulk header `*n\r\n` that starts `buf`, and where its first
/// argument starts. Redis treats `*-1` and `*0` from a client as nothing; so do we.
fn full_count(buf: &[u8], limits: &Limits) -> Result<Option<(usize, usize)>, ProtoError> {
    Ok(
        match lex::len(buf, 1, limits.max_aggregate_len, true, "argument count")? {
            None => None,
            Some((Len::Some(n), next)) => Some((n, next)),
            Some((Len::Nil, next)) => Some((0, next)),
        },
    )
}

/// The bulk argument `$len\r\n…\r\n` at `pos`: its payload's range and where the next
/// argument starts.
fn full_bulk(
    buf: &[u8],
    pos: usize,
    limits: &Limits,
) -> Result<Option<(usize, usize, usize)>, ProtoError> {
    match buf.get(pos) {
        None => return Ok(None),
        Some(b'$') => {}
        Some(&b) => return Err(ProtoError::byte(pos, "'$' starting a bulk argument", b)),
    }
    let (len, start) = match lex::len(buf, pos + 1, limits.max_bulk_len, false, "argument length")?
    {
        None => return Ok(None),
        Some((Len::Some(l), next)) => (l, next),
        Some((Len::Nil, next)) => (0, next),
    };
    Ok(lex::payload(buf, start, len)?.map(|(end, after)| (start, end, after)))
}

fn parse_inline<'a>(
    buf: &'a [u8],
    limits: &Limits,
    args: &mut Vec<&'a [u8]>,
) -> Result<Option<usize>, ProtoError> {
    let nl = match memchr::memchr(b'\n', buf) {
        None => {
            if buf.len() > limits.max_bulk_len {
                return Err(ProtoError::new(
                    0,
                    format!("an inline command of at most {} bytes", limits.max_bulk_len),
                    format!("{} bytes without a newline", buf.len()),
                ));
            }
            return Ok(None);
        }
        Some(i) => i,
    };
    let mut line = buf.get(..nl).unwrap_or(&[]);
    if let Some(stripped) = line.strip_suffix(b"\r") {
        line = stripped;
    }
    let mut i = 0;
    while i < line.len() {
        let b = line.get(i).copied().unwrap_or(b' ');
        if b == b' ' || b == b'\t' {
            i += 1;
            continue;
        }
        let start = i;
        while let Some(&c) = line.get(i) {
            if c == b' ' || c == b'\t' {
                break;
            }
            if c == b'"' || c == b'\'' {
                return Err(ProtoError::byte(
                    i,
                    "an unquoted inline argument (quoted inline arguments are not supported; send a multibulk request)",
                    c,
                ));
            }
            i += 1;
        }
        if args.len() >= limits.max_aggregate_len {
            return Err(ProtoError::new(
                start,
                format!("at most {} arguments", limits.max_aggregate_len),
                "more",
            ));
        }
        args.push(line.get(start..i).unwrap_or(&[]));
    }
    Ok(Some(nl + 1))
}

/// An owned argument vector and the bytes its request occupied.
pub type OwnedRequest = (Vec<Vec<u8>>, usize);

/// Decodes the request at the start of `buf` into freshly allocated owned arguments, the
/// way a conventional server builds its argument vector: one vector per command and one
/// copy per argument. Returns the arguments and the bytes consumed.
///
/// This exists to measure what allocation and copying cost next to [`parse_request`];
/// `allocations` is increased by the number of heap allocations made (the outer vector
/// when it has elements, and each non-empty argument).
///
/// # Errors
///
/// As [`parse_request`].
pub fn parse_request_owned(
    buf: &[u8],
    limits: &Limits,
    allocations: &mut u64,
) -> Result<Option<OwnedRequest>, ProtoError> {
    if buf.first() != Some(&b'*') {
        let mut args = Vec::new();
        return Ok(parse_inline(buf, limits, &mut args)?.map(|n| {
            *allocations +=
                u64::from(!args.is_empty()) + args.iter().filter(|a| !a.is_empty()).count() as u64;
            (args.iter().map(|a| a.to_vec()).collect(), n)
        }));
    }
    let Some((n, mut pos)) = full_count(buf, limits)? else {
        return Ok(None);
    };
    // Reserve no more than the buffer could hold (4 bytes per argument at least).
    let mut args: Vec<Vec<u8>> = Vec::with_capacity(n.min(buf.len() / 4));
    let mut allocs = u64::from(args.capacity() > 0);
    for _ in 0..n {
        let Some((start, end, after)) = full_bulk(buf, pos, limits)? else {
            return Ok(None);
        };
        let arg = buf.get(start..end).unwrap_or(&[]).to_vec();
        allocs += u64::from(!arg.is_empty());
        args.push(arg);
        pos = after;
    }
    *allocations += allocs;
    Ok(Some((args, pos)))
}

#[cfg(test)]
mod quick_path_tests {
    use super::*;

    /// The quick path must give exactly what the full path gives (consumed bytes,
    /// arguments, or the error with its offset) on every prefix and every one-byte
    /// mutation of these requests, under default and tight limits.
    #[test]
    fn quick_and_full_paths_agree_exactly() {
        let mut seeds: Vec<&[u8]> = vec![
            b"*2\r\n$3\r\nGET\r\n$6\r\nk00001\r\n",
            b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$12\r\nvalue-012345\r\n",
            b"*2\r\n$10\r\nkey:000001\r\n$1\r\nx\r\n",
            b"*4\r\n$4\r\nMGET\r\n$2\r\nk1\r\n$2\r\nk2\r\n$100\r\n0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789\r\n",
            b"*3\r\n$+1\r\nx\r\n$1\r\ny\r\n$1\r\nz\r\n",
            b"*2\r\n$3\r\nGET\r\n$000105\r\n012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234\r\n",
            b"*1\r\n$0\r\n\r\n",
            b"*0\r\n",
            b"*-1\r\n",
            b"*2\r\n$-1\r\n$01\r\nx\r\n",
            b"*10\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n$1\r\ng\r\n$1\r\nh\r\n$1\r\ni\r\n$1\r\nj\r\n",
        ];
        // A four-digit length (a 1 KB value).
        let mut big = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1024\r\n".to_vec();
        big.extend(std::iter::repeat_n(b'v', 1024));
        big.extend_from_slice(b"\r\n");
        seeds.push(&big);
        let limit_sets = [
            Limits::default(),
            Limits {
                max_bulk_len: 3,
                max_aggregate_len: 2,
                max_depth: 1,
            },
        ];
        let mutations = [0u8, b'\r', b'\n', b'-', b'0', b'9', b'*', b'$', b'x'];
        let mut checked = 0usize;
        for limits in &limit_sets {
            for seed in &seeds {
                let inputs = lex::cuts_and_mutations(seed, &mutations);
                for input in inputs.iter().filter(|i| i.first() == Some(&b'*')) {
                    let mut quick = Vec::new();
                    let mut full = Vec::new();
                    let q = parse_request(input, limits, &mut quick);
                    let f = parse_multibulk_full(input, limits, &mut full);
                    assert_eq!(q, f, "input {:?}", String::from_utf8_lossy(input));
                    if let Ok(Some(_)) = q {
                        assert_eq!(quick, full);
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }
}
