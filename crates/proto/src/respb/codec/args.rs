//! Decoded frames back into RESP arguments: owned, or flat in reused buffers for the
//! encoder's check.

use super::{Field, Frame, FrameKind};
use crate::error::ProtoError;
use crate::resp::encode::format_double;
use crate::resp::request::parse_request;
use crate::resp::Limits;
use crate::respb::table::{Command, F};

/// Converts a decoded command or passthrough frame into RESP arguments (name first),
/// appending them to `out` (cleared first).
///
/// # Errors
///
/// A [`ProtoError`] when a passthrough payload is not exactly one complete RESP request
/// (offsets count from the start of the payload), or when the frame is a control frame,
/// which has no RESP form.
pub fn frame_to_args(
    frame: &Frame<'_>,
    limits: &Limits,
    out: &mut Vec<Vec<u8>>,
) -> Result<(), ProtoError> {
    out.clear();
    let cmd = match frame.kind {
        FrameKind::Command(c) => c,
        FrameKind::Passthrough => {
            let text = match frame.fields.first() {
                Some(Field::Bytes(t)) => *t,
                _ => &[],
            };
            let mut args = Vec::new();
            return match parse_request(text, limits, &mut args)? {
                Some(n) if n == text.len() && !args.is_empty() => {
                    out.extend(args.iter().map(|a| a.to_vec()));
                    Ok(())
                }
                Some(n) if n == text.len() => {
                    Err(ProtoError::new(0, "a command", "an empty request"))
                }
                Some(n) => Err(ProtoError::new(
                    n,
                    "the end of the passthrough payload after one request",
                    format!("{} more bytes", text.len() - n),
                )),
                None => Err(ProtoError::new(
                    text.len(),
                    "a complete RESP request in the passthrough payload",
                    "the end of the payload",
                )),
            };
        }
        FrameKind::MuxCreate(_) | FrameKind::MuxClose(_) => {
            return Err(ProtoError::new(
                0,
                "a command or passthrough frame",
                "a mux control frame, which has no RESP form",
            ))
        }
    };
    command_args(cmd, frame, out);
    Ok(())
}

/// Where a frame's arguments are written back: a list of owned arguments, or
/// [`FlatArgs`].
pub(super) trait ArgSink {
    fn arg(&mut self, b: &[u8]);
    fn int(&mut self, i: i64);
    fn double(&mut self, d: f64);
}

impl ArgSink for Vec<Vec<u8>> {
    fn arg(&mut self, b: &[u8]) {
        self.push(b.to_vec());
    }
    fn int(&mut self, i: i64) {
        self.push(i.to_string().into_bytes());
    }
    fn double(&mut self, d: f64) {
        self.push(format_double(d).into_bytes());
    }
}

/// Arguments one after another in `bytes`, each ending at the offset in `ends`.
pub(super) struct FlatArgs<'x> {
    pub(super) bytes: &'x mut Vec<u8>,
    pub(super) ends: &'x mut Vec<usize>,
}

impl ArgSink for FlatArgs<'_> {
    fn arg(&mut self, b: &[u8]) {
        self.bytes.extend_from_slice(b);
        self.ends.push(self.bytes.len());
    }
    fn int(&mut self, i: i64) {
        use std::io::Write;
        let _ = write!(self.bytes, "{i}");
        self.ends.push(self.bytes.len());
    }
    fn double(&mut self, d: f64) {
        self.arg(format_double(d).as_bytes());
    }
}

/// The RESP arguments of a decoded command frame: its name, then its fields.
pub(super) fn command_args(cmd: &Command, frame: &Frame<'_>, out: &mut impl ArgSink) {
    out.arg(cmd.name.as_bytes());
    let mut fields = frame.fields.iter();
    for f in cmd.layout {
        push_args(f, &mut fields, out);
    }
}

fn push_scalar(f: &F, v: &Field<'_>, out: &mut impl ArgSink) {
    match (f, v) {
        (F::Kw(words), Field::Byte(b)) => {
            out.arg(words.get(usize::from(*b)).map_or(&[][..], |w| w.as_bytes()))
        }
        (_, Field::Bytes(b)) => out.arg(b),
        (_, Field::Int(i)) => out.int(*i),
        (_, Field::Double(d)) => out.double(*d),
        (_, Field::Byte(b)) => out.int(i64::from(*b)),
        (_, Field::Word(w)) => out.int(i64::from(*w)),
        (_, Field::Absent) => out.arg(&[]),
    }
}

fn push_args<'f>(f: &F, fields: &mut impl Iterator<Item = &'f Field<'f>>, out: &mut impl ArgSink) {
    match f {
        F::S | F::V | F::I | F::D | F::W | F::U8 | F::Kw(_) => {
            if let Some(v) = fields.next() {
                push_scalar(f, v, out);
            }
        }
        F::Lit(word) => out.arg(word.as_bytes()),
        F::Flags(table) => {
            if let Some(Field::Byte(b)) = fields.next() {
                for (w, bit) in table.iter() {
                    if b & bit != 0 {
                        out.arg(w.as_bytes());
                    }
                }
            }
        }
        F::FlagsExp(table) => {
            let b = match fields.next() {
                Some(Field::Byte(b)) => *b,
                _ => 0,
            };
            let e = match fields.next() {
                Some(Field::Int(e)) => *e,
                _ => 0,
            };
            for (w, bit, takes) in table.iter() {
                if b & bit != 0 {
                    out.arg(w.as_bytes());
                    if *takes {
                        out.int(e);
                    }
                }
            }
        }
        F::Rest(group) | F::NumArg(group) => {
            let n = match fields.next() {
                Some(Field::Word(n)) => *n,
                _ => 0,
            };
            if let F::NumArg(_) = f {
                out.int(i64::from(n));
            }
            for _ in 0..n {
                for g in group.iter() {
                    if let Some(v) = fields.next() {
                        push_scalar(g, v, out);
                    }
                }
            }
        }
        F::Opt(inner) => {
            if let Some(v) = fields.next() {
                if *v != Field::Absent {
                    push_scalar(inner, v, out);
                }
            }
        }
        F::OptKw(word, group) => {
            // Absent groups are one `Absent` field; present groups are their scalars.
            let mut peek = fields.next();
            if peek == Some(&Field::Absent) || peek.is_none() {
                return;
            }
            out.arg(word.as_bytes());
            for g in group.iter() {
                if let Some(v) = peek.take().or_else(|| fields.next()) {
                    push_scalar(g, v, out);
                }
            }
        }
    }
}
