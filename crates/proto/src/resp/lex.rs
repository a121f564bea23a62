//! The lexical layer shared by the scanner and the full decoder: lines, integers,
//! lengths and the scalar payload checks. Sharing it is what makes both decoders accept
//! exactly the same bytes.
//!
//! Every function takes the whole buffer and an absolute position, so error offsets are
//! absolute, and returns `Ok(None)` when the buffer ends before the token does.

use super::Limits;
use crate::error::{describe_byte, ProtoError};

/// Result of lexing one token: `Some((token, position after it))` or `None` for "need more".
pub(crate) type Lexed<T> = Result<Option<(T, usize)>, ProtoError>;

/// Finds the CRLF ending the line that starts at `pos`; returns the index of the CR and
/// the position after the LF.
#[inline]
pub(crate) fn line(buf: &[u8], pos: usize, limits: &Limits) -> Lexed<usize> {
    let rest = match buf.get(pos..) {
        Some(r) => r,
        None => return Ok(None),
    };
    match memchr::memchr(b'\r', rest) {
        None => {
            if rest.len() > limits.max_bulk_len {
                Err(ProtoError::new(
                    pos,
                    format!("a line of at most {} bytes", limits.max_bulk_len),
                    format!("{} bytes without CR", rest.len()),
                ))
            } else {
                Ok(None)
            }
        }
        Some(i) => {
            if i > limits.max_bulk_len {
                return Err(ProtoError::new(
                    pos,
                    format!("a line of at most {} bytes", limits.max_bulk_len),
                    format!("a line of {i} bytes"),
                ));
            }
            let cr = pos + i;
            match buf.get(cr + 1) {
                None => Ok(None),
                Some(b'\n') => Ok(Some((cr, cr + 2))),
                Some(&b) => Err(ProtoError::byte(cr + 1, "LF after CR", b)),
            }
        }
    }
}

/// Reads a signed decimal integer terminated by CRLF. At least one digit; no `+`.
#[inline]
pub(crate) fn int(buf: &[u8], pos: usize) -> Lexed<i64> {
    let mut i = pos;
    let neg = match buf.get(i) {
        None => return Ok(None),
        Some(b'-') => {
            i += 1;
            true
        }
        Some(_) => false,
    };
    let digits = i;
    // Accumulate as a negative number so that i64::MIN is representable.
    let mut acc: i64 = 0;
    loop {
        let b = match buf.get(i) {
            None => return Ok(None),
            Some(&b) => b,
        };
        match b {
            b'0'..=b'9' => {
                acc = match acc
                    .checked_mul(10)
                    .and_then(|a| a.checked_sub(i64::from(b - b'0')))
                {
                    Some(a) => a,
                    None => {
                        return Err(ProtoError::new(
                            digits,
                            "an integer within the signed 64-bit range",
                            "a larger number",
                        ))
                    }
                };
                i += 1;
            }
            b'\r' if i > digits => {
                return match buf.get(i + 1) {
                    None => Ok(None),
                    Some(b'\n') => {
                        let v = if neg {
                            acc
                        } else {
                            match acc.checked_neg() {
                                Some(v) => v,
                                None => {
                                    return Err(ProtoError::new(
                                        digits,
                                        "an integer within the signed 64-bit range",
                                        "9223372036854775808",
                                    ))
                                }
                            }
                        };
                        Ok(Some((v, i + 2)))
                    }
                    Some(&b) => Err(ProtoError::byte(i + 1, "LF after CR", b)),
                };
            }
            _ => {
                let expected = if i == digits {
                    "a decimal digit"
                } else {
                    "a decimal digit or CRLF"
                };
                return Err(ProtoError::byte(i, expected, b));
            }
        }
    }
}

/// A length or count header after a type byte: `-1` (if `nil_ok`) or `0..=max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Len {
    Nil,
    Some(usize),
}

/// Reads the length at `pos` (just after the type byte) and checks it against `max`.
#[inline]
pub(crate) fn len(buf: &[u8], pos: usize, max: usize, nil_ok: bool, what: &str) -> Lexed<Len> {
    // Fast path: one or two digits followed by CRLF, the overwhelmingly common case.
    if let (Some(&d), Some(&b1)) = (buf.get(pos), buf.get(pos + 1)) {
        if d.is_ascii_digit() && b1 == b'\r' {
            if let Some(&b2) = buf.get(pos + 2) {
                if b2 == b'\n' {
                    let n = usize::from(d - b'0');
                    return check_len(n, pos, max, what).map(|l| Some((l, pos + 3)));
                }
            }
        }
    }
    match int(buf, pos)? {
        None => Ok(None),
        Some((-1, next)) if nil_ok => Ok(Some((Len::Nil, next))),
        Some((n, next)) => {
            if n < 0 {
                return Err(ProtoError::new(
                    pos,
                    format!("a non-negative {what}"),
                    format!("{n}"),
                ));
            }
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            check_len(n, pos, max, what).map(|l| Some((l, next)))
        }
    }
}

#[inline]
fn check_len(n: usize, pos: usize, max: usize, what: &str) -> Result<Len, ProtoError> {
    if n > max {
        Err(ProtoError::new(
            pos,
            format!("a {what} of at most {max}"),
            format!("{n}"),
        ))
    } else {
        Ok(Len::Some(n))
    }
}

/// Checks that `len` payload bytes and a CRLF follow at `pos`; returns the payload end.
#[inline]
pub(crate) fn payload(buf: &[u8], pos: usize, len: usize) -> Lexed<usize> {
    let end = match pos.checked_add(len) {
        Some(e) => e,
        None => {
            return Err(ProtoError::new(
                pos,
                "a payload that fits in memory",
                "a length overflowing usize",
            ))
        }
    };
    match (buf.get(end), buf.get(end + 1)) {
        (None, _) => Ok(None),
        (Some(b'\r'), None) => Ok(None),
        (Some(b'\r'), Some(b'\n')) => Ok(Some((end, end + 2))),
        (Some(b'\r'), Some(&b)) => Err(ProtoError::byte(end + 1, "LF after the payload's CR", b)),
        (Some(&b), _) => Err(ProtoError::byte(
            end,
            format!("CRLF after a payload of {len} bytes"),
            b,
        )),
    }
}

/// Parses a RESP3 double payload: a decimal or exponent form, `inf`, `-inf` or `nan`.
pub(crate) fn double(text: &[u8], pos: usize) -> Result<f64, ProtoError> {
    let bad = || {
        ProtoError::new(
            pos,
            "a double (decimal, exponent form, inf, -inf or nan)",
            format!("{:?}", String::from_utf8_lossy(text)),
        )
    };
    let s = std::str::from_utf8(text).map_err(|_| bad())?;
    // Rust also accepts "infinity" and "+nan"; RESP3 only names inf and nan, but being
    // lenient on the spelling loses nothing. An empty payload is rejected.
    s.parse::<f64>().map_err(|_| bad())
}

/// Checks a RESP3 big number payload: an optional `-` then at least one digit.
pub(crate) fn big_number(text: &[u8], pos: usize) -> Result<(), ProtoError> {
    let digits = text.strip_prefix(b"-").unwrap_or(text);
    if digits.is_empty() {
        return Err(ProtoError::new(pos, "at least one digit", "none"));
    }
    match digits.iter().position(|b| !b.is_ascii_digit()) {
        None => Ok(()),
        Some(i) => {
            let at = pos + (text.len() - digits.len()) + i;
            let b = digits.get(i).copied().unwrap_or(0);
            Err(ProtoError::new(
                at,
                "a decimal digit in the big number",
                describe_byte(b),
            ))
        }
    }
}

/// Checks a verbatim string payload: three format bytes, a colon, then the text.
pub(crate) fn verbatim(text: &[u8], pos: usize) -> Result<([u8; 3], &[u8]), ProtoError> {
    match text {
        [a, b, c, b':', rest @ ..] => Ok(([*a, *b, *c], rest)),
        _ if text.len() < 4 => Err(ProtoError::new(
            pos,
            "a verbatim string of at least 4 bytes (format and ':')",
            format!("{} bytes", text.len()),
        )),
        _ => Err(ProtoError::byte(
            pos + 3,
            "':' after the verbatim format",
            text.get(3).copied().unwrap_or(0),
        )),
    }
}

/// Describes the type byte that starts no RESP value.
pub(crate) fn bad_type(pos: usize, b: u8) -> ProtoError {
    ProtoError::byte(
        pos,
        "a RESP type byte (one of + - : $ * _ , # ( ! = % ~ | >)",
        b,
    )
}

/// Appends the decimal form of `n` to `out`.
#[inline]
pub(crate) fn put_usize(out: &mut Vec<u8>, mut n: usize) {
    if n < 10 {
        out.push(b'0' + n as u8);
        return;
    }
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    while n > 0 {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend_from_slice(&tmp[i..]);
}

/// Appends the decimal form of `n` to `out`.
#[inline]
pub(crate) fn put_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    let m = n.unsigned_abs();
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    let mut m2 = m;
    loop {
        i -= 1;
        tmp[i] = b'0' + (m2 % 10) as u8;
        m2 /= 10;
        if m2 == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

// ---------------------------------------------------------------------------------------
// Quick paths
//
// The functions below recognise only the plainest, complete spelling of a token and
// answer `None` for everything else: a sign, more than 18 digits, a missing or early end
// of the buffer, a stray byte. Callers then fall back to the full lexer above, which
// gives the exact answer (need more, or an error with its offset). Because a quick path
// accepts a subset of what the full lexer accepts and returns the same result, the two
// never disagree.
// ---------------------------------------------------------------------------------------

/// Reads 1 to 18 decimal digits followed by CRLF at `pos`: `(value, position after LF)`.
#[inline(always)]
pub(crate) fn quick_uint(buf: &[u8], pos: usize) -> Option<(usize, usize)> {
    // The common case, one digit: `d\r\n`.
    if let Some([d @ b'0'..=b'9', b'\r', b'\n']) = buf.get(pos..).and_then(|r| r.first_chunk()) {
        return Some((usize::from(d - b'0'), pos + 3));
    }
    uint_digits(buf, pos)
}

/// [`quick_uint`] out of line, for callers that have handled the short forms themselves
/// and whose loops must stay small.
#[inline(never)]
pub(crate) fn quick_uint_long(buf: &[u8], pos: usize) -> Option<(usize, usize)> {
    uint_digits(buf, pos)
}

#[inline(always)]
fn uint_digits(buf: &[u8], pos: usize) -> Option<(usize, usize)> {
    let rest = buf.get(pos..)?;
    let mut acc: usize = 0;
    let mut i = 0usize;
    for &b in rest.iter().take(18) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        acc = acc * 10 + usize::from(d);
        i += 1;
    }
    if i == 0 || rest.get(i) != Some(&b'\r') || rest.get(i + 1) != Some(&b'\n') {
        return None;
    }
    Some((acc, pos + i + 2))
}

/// Finds the CRLF ending a line of at most 32 bytes starting at `pos`, within
/// `max` bytes: `(index of CR, position after LF)`.
#[inline(always)]
pub(crate) fn quick_line(buf: &[u8], pos: usize, max: usize) -> Option<(usize, usize)> {
    let rest = buf.get(pos..)?;
    let window = rest.get(..rest.len().min(33))?;
    let i = window.iter().position(|&b| b == b'\r')?;
    if i > max || rest.get(i + 1) != Some(&b'\n') {
        return None;
    }
    Some((pos + i, pos + i + 2))
}

/// Checks that `len` payload bytes and CRLF follow at `pos`: `(payload end, position
/// after LF)`.
#[inline(always)]
pub(crate) fn quick_payload(buf: &[u8], pos: usize, len: usize) -> Option<(usize, usize)> {
    let end = pos.checked_add(len)?;
    match buf.get(end..end.checked_add(2)?)? {
        [b'\r', b'\n'] => Some((end, end + 2)),
        _ => None,
    }
}

/// A complete bulk string `$len\r\n<payload>\r\n` at `pos` with `len <= max`:
/// `(payload, position after the final LF)`. The length says where the closing CRLF
/// must be, so the payload is never searched.
#[inline(always)]
pub(crate) fn quick_bulk(buf: &[u8], pos: usize, max: usize) -> Option<(&[u8], usize)> {
    // One 8-byte load classifies the header: `$d\r\n` (bytes 0, 2 and 3 fixed) or
    // `$dd\r\n` (bytes 0, 3 and 4 fixed), the digits checked separately. Anything else,
    // including a header within 8 bytes of the end of `buf`, goes out of line.
    let Some(h) = buf.get(pos..).and_then(|r| r.first_chunk::<8>()) else {
        return quick_bulk_long(buf, pos, max);
    };
    let w = u64::from_le_bytes(*h);
    let d1 = ((w >> 8) as u8).wrapping_sub(b'0');
    let d2 = ((w >> 16) as u8).wrapping_sub(b'0');
    let (len, header) = if w & 0xFFFF_00FF == 0x0A0D_0024 && d1 <= 9 {
        (usize::from(d1), 4)
    } else if w & 0xFF_FF00_00FF == 0x0A_0D00_0024 && d1 <= 9 && d2 <= 9 {
        (usize::from(d1) * 10 + usize::from(d2), 5)
    } else {
        return quick_bulk_long(buf, pos, max);
    };
    if len > max {
        return None;
    }
    let start = pos + header;
    let end = start + len;
    if *buf.get(end..)?.first_chunk::<2>()? != *b"\r\n" {
        return None;
    }
    Some((buf.get(start..end)?, end + 2))
}

/// [`quick_bulk`] for any header, out of line: three and four digits (values of 100 B
/// to 10 KB) by pattern, anything else byte by byte.
#[inline(never)]
fn quick_bulk_long(buf: &[u8], pos: usize, max: usize) -> Option<(&[u8], usize)> {
    let rest = buf.get(pos..)?;
    let (len, header) = match rest {
        [b'$', d @ b'0'..=b'9', b'\r', b'\n', ..] => (usize::from(d - b'0'), 4),
        [b'$', a @ b'0'..=b'9', b @ b'0'..=b'9', c @ b'0'..=b'9', b'\r', b'\n', ..] => (
            usize::from(a - b'0') * 100 + usize::from(b - b'0') * 10 + usize::from(c - b'0'),
            6,
        ),
        [b'$', a @ b'0'..=b'9', b @ b'0'..=b'9', c @ b'0'..=b'9', d @ b'0'..=b'9', b'\r', b'\n', ..] => {
            (
                usize::from(a - b'0') * 1000
                    + usize::from(b - b'0') * 100
                    + usize::from(c - b'0') * 10
                    + usize::from(d - b'0'),
                7,
            )
        }
        [b'$', ..] => uint_digits(rest, 1)?,
        _ => return None,
    };
    if len > max {
        return None;
    }
    let end = header.checked_add(len)?;
    if *rest.get(end..)?.first_chunk::<2>()? != *b"\r\n" {
        return None;
    }
    Some((rest.get(header..end)?, pos + end + 2))
}

/// What the length or count after type byte `tag` is called in errors (`"array
/// length"`, `"map size"`, ...).
#[inline]
pub(crate) fn length_name(tag: u8) -> &'static str {
    match tag {
        b'$' => "bulk string length",
        b'!' => "blob error length",
        b'=' => "verbatim string length",
        b'*' => "array length",
        b'~' => "set size",
        b'>' => "push length",
        b'%' => "map size",
        b'|' => "attribute size",
        _ => "length",
    }
}

/// Every prefix of `seed` (the empty one and `seed` itself included), then `seed` with
/// each byte in turn replaced by each of `mutations`: the inputs the quick paths'
/// tests compare with the full paths.
#[cfg(test)]
pub(crate) fn cuts_and_mutations(seed: &[u8], mutations: &[u8]) -> Vec<Vec<u8>> {
    let mut inputs: Vec<Vec<u8>> = (0..=seed.len()).map(|k| seed[..k].to_vec()).collect();
    for i in 0..seed.len() {
        for &m in mutations {
            let mut v = seed.to_vec();
            v[i] = m;
            inputs.push(v);
        }
    }
    inputs
}
