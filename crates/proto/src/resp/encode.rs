//! Encoders: requests straight into a connection buffer, and replies from [`Value`]s.
//!
//! Request encoders append to a caller-owned `Vec<u8>` (the connection's output buffer)
//! and allocate nothing besides growing it; they reserve the exact size of each piece
//! before writing it.
//!
//! The reply encoder exists for the servers resplab runs itself (the reference server and
//! the fault-injecting test peer). It writes every [`Value`] in RESP3, and maps RESP3-only
//! types onto RESP2 the way Redis does when a RESP2 client asks (doubles and big numbers
//! as bulk strings, booleans as integers, maps as flat arrays, attributes dropped).

use super::lex::{put_i64, put_usize};
use super::value::Value;
use super::RespVersion;

#[inline]
fn digits(mut n: usize) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

#[inline]
fn put_bulk(out: &mut Vec<u8>, arg: &[u8]) {
    out.push(b'$');
    put_usize(out, arg.len());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(arg);
    out.extend_from_slice(b"\r\n");
}

/// Appends `args` as one multibulk request (`*N\r\n$len\r\narg\r\n...`).
pub fn write_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    let size = 3
        + digits(args.len())
        + args
            .iter()
            .map(|a| 5 + digits(a.len()) + a.len())
            .sum::<usize>();
    out.reserve(size);
    write_command_iter(out, args.iter().copied());
}

/// Appends the arguments yielded by `args` as one multibulk request.
///
/// Space is reserved argument by argument, so the iterator is walked once.
pub fn write_command_iter<'a, I>(out: &mut Vec<u8>, args: I)
where
    I: ExactSizeIterator<Item = &'a [u8]>,
{
    let n = args.len();
    out.reserve(3 + digits(n));
    out.push(b'*');
    put_usize(out, n);
    out.extend_from_slice(b"\r\n");
    for a in args {
        out.reserve(5 + digits(a.len()) + a.len());
        put_bulk(out, a);
    }
}

/// Does `arg` need quoting in an inline command?
fn needs_quotes(arg: &[u8]) -> bool {
    arg.is_empty()
        || arg
            .iter()
            .any(|&b| b <= b' ' || b == b'"' || b == b'\'' || b == b'\\' || b >= 0x7f)
}

/// Appends `args` as one inline command: arguments separated by spaces, ended by CRLF.
///
/// Arguments that are empty or contain spaces, quotes, backslashes or non-printable
/// bytes are written in double quotes with `\xHH` escapes, which Redis's inline parser
/// understands.
pub fn write_inline(out: &mut Vec<u8>, args: &[&[u8]]) {
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        if needs_quotes(a) {
            out.push(b'"');
            for &b in a.iter() {
                if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
                    out.push(b);
                } else {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    out.extend_from_slice(b"\\x");
                    out.push(HEX[usize::from(b >> 4)]);
                    out.push(HEX[usize::from(b & 0xf)]);
                }
            }
            out.push(b'"');
        } else {
            out.extend_from_slice(a);
        }
    }
    out.extend_from_slice(b"\r\n");
}

fn has_crlf(text: &[u8]) -> bool {
    memchr::memchr2(b'\r', b'\n', text).is_some()
}

/// Appends `v` as a reply in the given dialect.
///
/// Simple strings and simple errors containing CR or LF cannot be written as such: in
/// RESP3 they become a bulk string or blob error, in RESP2 a bulk string or an error with
/// each CR and LF replaced by a space. A RESP2 null is written as `$-1`.
pub fn write_value(out: &mut Vec<u8>, v: &Value, version: RespVersion) {
    let v3 = version == RespVersion::Resp3;
    match v {
        Value::Simple(t) => {
            if has_crlf(t) {
                put_bulk(out, t);
            } else {
                out.push(b'+');
                out.extend_from_slice(t);
                out.extend_from_slice(b"\r\n");
            }
        }
        Value::SimpleError(t) | Value::BlobError(t) => {
            let simple_ok = !has_crlf(t);
            if v3 && (matches!(v, Value::BlobError(_)) || !simple_ok) {
                out.push(b'!');
                put_usize(out, t.len());
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(t);
                out.extend_from_slice(b"\r\n");
            } else {
                out.push(b'-');
                out.extend(
                    t.iter()
                        .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
                );
                out.extend_from_slice(b"\r\n");
            }
        }
        Value::Integer(n) => {
            out.push(b':');
            put_i64(out, *n);
            out.extend_from_slice(b"\r\n");
        }
        Value::Blob(t) => put_bulk(out, t),
        Value::Null => out.extend_from_slice(if v3 { b"_\r\n" } else { b"$-1\r\n" }),
        Value::Double(d) => {
            let text = format_double(*d);
            if v3 {
                out.push(b',');
                out.extend_from_slice(text.as_bytes());
                out.extend_from_slice(b"\r\n");
            } else {
                put_bulk(out, text.as_bytes());
            }
        }
        Value::Boolean(b) => {
            if v3 {
                out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" });
            } else {
                out.extend_from_slice(if *b { b":1\r\n" } else { b":0\r\n" });
            }
        }
        Value::BigNumber(t) => {
            if v3 {
                out.push(b'(');
                out.extend_from_slice(t);
                out.extend_from_slice(b"\r\n");
            } else {
                put_bulk(out, t);
            }
        }
        Value::Verbatim { format, text } => {
            if v3 {
                out.push(b'=');
                put_usize(out, text.len() + 4);
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(format);
                out.push(b':');
                out.extend_from_slice(text);
                out.extend_from_slice(b"\r\n");
            } else {
                put_bulk(out, text);
            }
        }
        Value::Array(items) | Value::Set(items) | Value::Push(items) => {
            let tag = match (v, v3) {
                (Value::Set(_), true) => b'~',
                (Value::Push(_), true) => b'>',
                _ => b'*',
            };
            out.push(tag);
            put_usize(out, items.len());
            out.extend_from_slice(b"\r\n");
            for item in items {
                write_value(out, item, version);
            }
        }
        Value::Map(pairs) => {
            if v3 {
                out.push(b'%');
                put_usize(out, pairs.len());
            } else {
                out.push(b'*');
                put_usize(out, pairs.len() * 2);
            }
            out.extend_from_slice(b"\r\n");
            for (k, val) in pairs {
                write_value(out, k, version);
                write_value(out, val, version);
            }
        }
        Value::Attribute { attrs, value } => {
            if v3 {
                out.push(b'|');
                put_usize(out, attrs.len());
                out.extend_from_slice(b"\r\n");
                for (k, val) in attrs {
                    write_value(out, k, version);
                    write_value(out, val, version);
                }
            }
            write_value(out, value, version);
        }
    }
}

/// The RESP3 text of a double: `inf`, `-inf`, `nan`, or the shortest decimal that reads
/// back as the same number.
pub fn format_double(d: f64) -> String {
    if d.is_nan() {
        "nan".to_string()
    } else if d.is_infinite() {
        if d > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{d}")
    }
}
