//! Command templates: `"HSET __key__ f __data__"` → compiled argument pieces.
//!
//! Both the redis-benchmark catalog ([`crate::catalog`]) and user-given `--command`
//! lines are written as one line of text with placeholders:
//!
//! - `__key__` — the request's key: key prefix + a number drawn by the command's key
//!   pattern ([`crate::keys`]). Every `__key__` of one request gets the same key.
//! - `__data__` — the request's value ([`crate::values`]).
//! - `__rand_int__` — redis-benchmark's placeholder: with a random range `N` (its `-r`)
//!   each occurrence becomes its own random number in `0..N` written as 12 zero-padded
//!   digits; without a range it is left as literal text, as redis-benchmark does.
//!
//! - `__tag__` — a number in `0..16384` written as five digits, drawn once per request:
//!   every `__tag__` of one request gets the same one. Inside braces it is a Redis
//!   Cluster hash tag (`key:{__tag__}:__rand_int__`), which puts all keys of a multi-key
//!   request in one slot while requests spread over all slots.
//!
//! Placeholders may sit anywhere inside an argument (`user:__key__:name`).
//!
//! [`split_args`] tokenizes a line the way `redis-cli` and redis-benchmark split a
//! quoted command line: whitespace separates arguments; `"…"` quotes with the escapes
//! `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\a` and `\xHH`; `'…'` quotes with only `\'`;
//! a closing quote must be followed by whitespace or the end of the line. (Command
//! workloads of experiments split their lines as a shell does, and the protocol lab's
//! command files have their own older rules; see `resplab_proto::lab::text`: the three
//! disagree on escapes and on what may follow a quote, and each keeps what its users
//! wrote for it.)
//!
//! Compiling turns each argument into a list of pieces once, so that
//! [`crate::Generator`] only copies literal bytes and writes numbers per request.

use crate::error::WorkloadError;

/// The placeholder for the request's key.
pub const KEY: &str = "__key__";
/// The placeholder for the request's value.
pub const DATA: &str = "__data__";
/// redis-benchmark's random-number placeholder.
pub const RAND_INT: &str = "__rand_int__";
/// The per-request hash tag placeholder.
pub const TAG: &str = "__tag__";

/// One part of an argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Bytes copied as they are.
    Lit(Box<[u8]>),
    /// A 12-digit zero-padded random number below the random range.
    RandInt,
    /// The request's key.
    Key,
    /// The request's value.
    Data,
    /// The request's five-digit tag.
    Tag,
    /// The request's time to live in seconds, in decimal. No placeholder writes it: only
    /// the `SETEX` form of a mix's SETs with an expiry range ([`setex`]).
    Ttl,
}

/// One argument of a compiled command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ArgTemplate {
    /// An argument with no placeholder: copied as it is.
    Fixed(Box<[u8]>),
    /// An argument built from pieces per request.
    Pieces(Box<[Piece]>),
}

/// A command compiled from a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CompiledTemplate {
    /// The arguments, command name first.
    pub args: Vec<ArgTemplate>,
    /// Whether any argument needs the key.
    pub uses_key: bool,
    /// Whether any argument needs the value.
    pub uses_data: bool,
}

/// Splits a command line into arguments, honouring quotes (see the module docs).
///
/// # Errors
/// An unterminated quote, a closing quote followed by something other than whitespace,
/// or a malformed `\x` escape; the error names the byte offset in `field`'s `line`.
pub fn split_args(line: &str, field: &str) -> Result<Vec<Vec<u8>>, WorkloadError> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let err =
        |at: usize, what: &str| WorkloadError::new(field, line, format!("{what} (at byte {at})"));
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            return Ok(out);
        }
        let mut arg = Vec::new();
        // Inside one argument: unquoted runs and quoted sections may alternate until
        // whitespace ends it.
        while i < b.len() && !b[i].is_ascii_whitespace() {
            let quoted = match b[i] {
                b'"' => double_quoted(b, i, &mut arg),
                b'\'' => single_quoted(b, i, &mut arg),
                c => {
                    arg.push(c);
                    i += 1;
                    continue;
                }
            };
            i = quoted.map_err(|(at, what)| err(at, what))?;
        }
        out.push(arg);
    }
}

/// Where a quoted section ends, or where it went wrong and what was expected there.
type Quoted = Result<usize, (usize, &'static str)>;

/// A `"…"` section starting at `open`, with its escapes, appended to `arg`.
fn double_quoted(b: &[u8], open: usize, arg: &mut Vec<u8>) -> Quoted {
    let mut i = open + 1;
    loop {
        match b.get(i) {
            None => return Err((open, "a closing \" for the quote opened here")),
            Some(b'"') => {
                i += 1;
                break;
            }
            Some(b'\\') => {
                let (byte, used) =
                    unescape(&b[i..]).ok_or((i, "a valid escape such as \\n or \\x41"))?;
                arg.push(byte);
                i += used;
            }
            Some(&c) => {
                arg.push(c);
                i += 1;
            }
        }
    }
    after_quote(b, i)
}

/// A `'…'` section starting at `open` (only `\'` escaped), appended to `arg`.
fn single_quoted(b: &[u8], open: usize, arg: &mut Vec<u8>) -> Quoted {
    let mut i = open + 1;
    loop {
        match b.get(i) {
            None => return Err((open, "a closing ' for the quote opened here")),
            Some(b'\'') => {
                i += 1;
                break;
            }
            Some(b'\\') if b.get(i + 1) == Some(&b'\'') => {
                arg.push(b'\'');
                i += 2;
            }
            Some(&c) => {
                arg.push(c);
                i += 1;
            }
        }
    }
    after_quote(b, i)
}

/// `i`, the byte after a closing quote, when the argument ends there (whitespace or the
/// end of the line follows).
fn after_quote(b: &[u8], i: usize) -> Quoted {
    match b.get(i) {
        None => Ok(i),
        Some(c) if c.is_ascii_whitespace() => Ok(i),
        Some(_) => Err((i, "whitespace or the end of the line after a closing quote")),
    }
}

/// Decodes the escape starting at `s[0] == b'\\'`: the byte and how many input bytes
/// it used.
fn unescape(s: &[u8]) -> Option<(u8, usize)> {
    let c = *s.get(1)?;
    Some(match c {
        b'n' => (b'\n', 2),
        b'r' => (b'\r', 2),
        b't' => (b'\t', 2),
        b'b' => (0x08, 2),
        b'a' => (0x07, 2),
        b'x' => {
            let hi = hex(*s.get(2)?)?;
            let lo = hex(*s.get(3)?)?;
            (hi * 16 + lo, 4)
        }
        other => (other, 2),
    })
}

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Compiles a command line. `rand_int` is whether `__rand_int__` is substituted (a
/// random range was given); without it the placeholder stays literal text.
///
/// # Errors
/// What [`split_args`] reports, and an empty line.
pub(crate) fn compile(
    line: &str,
    field: &str,
    rand_int: bool,
) -> Result<CompiledTemplate, WorkloadError> {
    let args = split_args(line, field)?;
    if args.is_empty() {
        return Err(WorkloadError::new(
            field,
            line,
            "a command and its arguments, like \"SET __key__ __data__\"",
        ));
    }
    let mut uses_key = false;
    let mut uses_data = false;
    let compiled = args
        .into_iter()
        .map(|arg| {
            let pieces = split_pieces(&arg, rand_int);
            match pieces.as_slice() {
                [] => ArgTemplate::Fixed(Box::from(&b""[..])),
                [Piece::Lit(l)] => ArgTemplate::Fixed(l.clone()),
                _ => {
                    uses_key |= pieces.contains(&Piece::Key);
                    uses_data |= pieces.contains(&Piece::Data);
                    ArgTemplate::Pieces(pieces.into_boxed_slice())
                }
            }
        })
        .collect();
    Ok(CompiledTemplate {
        args: compiled,
        uses_key,
        uses_data,
    })
}

/// `SETEX __key__ <ttl> __data__`: the form a mix's SET takes when it draws a time to
/// live (memtier_benchmark's `--expiry-range`).
pub(crate) fn setex() -> CompiledTemplate {
    CompiledTemplate {
        args: vec![
            ArgTemplate::Fixed(Box::from(&b"SETEX"[..])),
            ArgTemplate::Pieces(Box::new([Piece::Key])),
            ArgTemplate::Pieces(Box::new([Piece::Ttl])),
            ArgTemplate::Pieces(Box::new([Piece::Data])),
        ],
        uses_key: true,
        uses_data: true,
    }
}

/// Splits one argument into literal runs and placeholders.
fn split_pieces(arg: &[u8], rand_int: bool) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let mut lit: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < arg.len() {
        let rest = &arg[i..];
        let found = if rest.starts_with(KEY.as_bytes()) {
            Some((Piece::Key, KEY.len()))
        } else if rest.starts_with(DATA.as_bytes()) {
            Some((Piece::Data, DATA.len()))
        } else if rest.starts_with(TAG.as_bytes()) {
            Some((Piece::Tag, TAG.len()))
        } else if rand_int && rest.starts_with(RAND_INT.as_bytes()) {
            Some((Piece::RandInt, RAND_INT.len()))
        } else {
            None
        };
        match found {
            Some((piece, len)) => {
                if !lit.is_empty() {
                    pieces.push(Piece::Lit(std::mem::take(&mut lit).into_boxed_slice()));
                }
                pieces.push(piece);
                i += len;
            }
            None => {
                lit.push(arg[i]);
                i += 1;
            }
        }
    }
    if !lit.is_empty() {
        pieces.push(Piece::Lit(lit.into_boxed_slice()));
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<String> {
        split_args(s, "--command")
            .unwrap()
            .into_iter()
            .map(|a| String::from_utf8(a).unwrap())
            .collect()
    }

    #[test]
    fn splits_plain_and_quoted_arguments() {
        assert_eq!(split("  SET  k   v "), ["SET", "k", "v"]);
        assert_eq!(split("SET \"a b\" 'c d'"), ["SET", "a b", "c d"]);
        assert_eq!(split("SET \"\" ''"), ["SET", "", ""]);
        assert_eq!(
            split(r#"SET "a\"b\\c\n\x41" 'it\'s'"#),
            ["SET", "a\"b\\c\nA", "it's"]
        );
        assert_eq!(split("SET pre\"fix x\" y"), ["SET", "prefix x", "y"]);
        assert!(split_args("SET \"x\"post", "--command").is_err());
        assert_eq!(split(""), Vec::<String>::new());
    }

    #[test]
    fn reports_bad_quotes_with_offsets() {
        let e = split_args("SET \"abc", "--command").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid --command 'SET \"abc': expected a closing \" for the quote opened here (at byte 4)"
        );
        let e = split_args("SET 'a'b", "--command").unwrap_err();
        assert!(e.to_string().contains("after a closing quote (at byte 7)"));
        let e = split_args("SET \"\\xZZ\"", "--command").unwrap_err();
        assert!(e.to_string().contains("valid escape"));
    }

    #[test]
    fn compiles_placeholders_inside_arguments() {
        let c = compile("HSET user:__key__:x f __data__", "--command", false).unwrap();
        assert!(c.uses_key && c.uses_data);
        assert_eq!(c.args[0], ArgTemplate::Fixed(Box::from(&b"HSET"[..])));
        assert_eq!(
            c.args[1],
            ArgTemplate::Pieces(
                vec![
                    Piece::Lit(Box::from(&b"user:"[..])),
                    Piece::Key,
                    Piece::Lit(Box::from(&b":x"[..]))
                ]
                .into_boxed_slice()
            )
        );
        assert_eq!(
            c.args[3],
            ArgTemplate::Pieces(vec![Piece::Data].into_boxed_slice())
        );
    }

    #[test]
    fn rand_int_is_literal_without_a_range() {
        let c = compile("GET key:__rand_int__", "-t", false).unwrap();
        assert_eq!(
            c.args[1],
            ArgTemplate::Fixed(Box::from(&b"key:__rand_int__"[..]))
        );
        let c = compile("GET key:__rand_int__", "-t", true).unwrap();
        assert_eq!(
            c.args[1],
            ArgTemplate::Pieces(
                vec![Piece::Lit(Box::from(&b"key:"[..])), Piece::RandInt].into_boxed_slice()
            )
        );
    }

    #[test]
    fn empty_command_is_an_error() {
        assert!(compile("   ", "--command", false).is_err());
    }
}
