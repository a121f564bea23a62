//! Encoding: RESP argument lists into RESPB frames, native layout first and RESP
//! passthrough when the native frame would not decode back to the same arguments.

use super::args::{command_args, FlatArgs};
use super::decode::decode_with;
use super::{
    Encoding, Field, Frame, FrameKind, ABSENT_I, ABSENT_KW, ABSENT_S, ABSENT_U8, ABSENT_V, ABSENT_W,
};
use crate::resp::encode::{format_double, write_command};
use crate::resp::Limits;
use crate::respb::table::{self, Command, Op, F};
use crate::respb::{CONTROL_MUX_CLOSE, CONTROL_MUX_CREATE, MODULE_OPCODE, PASSTHROUGH_OPCODE};

/// Appends a RESP passthrough frame carrying `args` as a multibulk request.
pub fn write_passthrough(out: &mut Vec<u8>, mux: u16, args: &[&[u8]]) {
    // The RESP text is written in place and its length filled in after.
    out.extend_from_slice(&PASSTHROUGH_OPCODE.to_be_bytes());
    out.extend_from_slice(&mux.to_be_bytes());
    let len_at = out.len();
    out.extend_from_slice(&[0; 4]);
    write_command(out, args);
    let len = (out.len() - len_at - 4) as u32;
    if let Some(field) = out.get_mut(len_at..len_at + 4) {
        field.copy_from_slice(&len.to_be_bytes());
    }
}

/// Appends a RESP passthrough frame carrying `resp` verbatim.
///
/// `resp` should be one complete RESP request; the length must fit in a u32.
pub fn write_passthrough_text(out: &mut Vec<u8>, mux: u16, resp: &[u8]) {
    out.extend_from_slice(&PASSTHROUGH_OPCODE.to_be_bytes());
    out.extend_from_slice(&mux.to_be_bytes());
    out.extend_from_slice(&(resp.len() as u32).to_be_bytes());
    out.extend_from_slice(resp);
}

/// Appends a `MUX_CREATE` control frame (sent on channel `mux`) opening channel `id`.
pub fn write_mux_create(out: &mut Vec<u8>, mux: u16, id: u16) {
    out.extend_from_slice(&CONTROL_MUX_CREATE.to_be_bytes());
    out.extend_from_slice(&mux.to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
}

/// Appends a `MUX_CLOSE` control frame (sent on channel `mux`) closing channel `id`.
pub fn write_mux_close(out: &mut Vec<u8>, mux: u16, id: u16) {
    out.extend_from_slice(&CONTROL_MUX_CLOSE.to_be_bytes());
    out.extend_from_slice(&mux.to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
}

/// Appends the RESP command `args` (name first) as one RESPB frame on channel `mux`.
///
/// Uses the command's native layout when it carries every argument exactly, and RESP
/// passthrough otherwise (see the module docs). An empty `args` is sent as passthrough.
/// [`Encoder::encode`] does the same with buffers kept from call to call.
pub fn encode_command(out: &mut Vec<u8>, mux: u16, args: &[&[u8]]) -> Encoding {
    Encoder::new().encode(out, mux, args)
}

/// [`encode_command`] for a hot path: the command table lookups it made and the buffers
/// its check of each native frame needs are kept, so once they have grown to the
/// commands at hand, encoding allocates nothing (a double argument, which is formatted
/// to be compared, still does).
#[derive(Debug, Default)]
pub struct Encoder {
    /// Command names seen, as given, with their table entry (at most [`NAMES_KEPT`]).
    names: Vec<(Vec<u8>, Option<&'static Command>)>,
    /// Decoded fields of the frame being checked (empty between calls).
    fields: Vec<Field<'static>>,
    /// The frame's arguments written back, one after another, and where each ends.
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

/// Whether a native frame `encode_native` wrote for `cmd` certainly decodes to its
/// arguments, so that decoding it to check can be skipped: every field copies an
/// argument byte for byte (`s`, `v`, and lists of them) and a trailing flags field is
/// empty (no option was given). Numbers, keywords and options are checked by decoding.
fn is_verbatim(cmd: &Command, frame: &[u8]) -> bool {
    let copied = |f: &F| matches!(f, F::S | F::V);
    let (body, no_options) = match cmd.layout.split_last() {
        Some((F::FlagsExp(_), body)) => {
            let flags = frame.len().checked_sub(9).and_then(|i| frame.get(i));
            (body, flags == Some(&0))
        }
        Some((F::Flags(_), body)) => (body, frame.last() == Some(&0)),
        _ => (cmd.layout, true),
    };
    no_options
        && body.iter().all(|f| match f {
            F::Rest(group) => group.iter().all(copied),
            f => copied(f),
        })
}

/// Command names an [`Encoder`] remembers; others are looked up every time.
const NAMES_KEPT: usize = 64;

impl Encoder {
    /// An encoder with empty buffers.
    pub fn new() -> Self {
        Encoder::default()
    }

    /// Appends `args` as one frame on channel `mux`, exactly as [`encode_command`].
    pub fn encode(&mut self, out: &mut Vec<u8>, mux: u16, args: &[&[u8]]) -> Encoding {
        let start = out.len();
        if let Some(cmd) = args.first().and_then(|name| self.lookup(name)) {
            if encode_native(out, mux, cmd, args.get(1..).unwrap_or(&[])).is_some() && {
                let frame = out.get(start..).unwrap_or(&[]);
                is_verbatim(cmd, frame) || self.verify(frame, args)
            } {
                return Encoding::Native(cmd);
            }
            out.truncate(start);
        }
        write_passthrough(out, mux, args);
        Encoding::Passthrough
    }

    fn lookup(&mut self, name: &[u8]) -> Option<&'static Command> {
        if let Some((_, c)) = self.names.iter().find(|(n, _)| n.as_slice() == name) {
            return *c;
        }
        let c = table::by_name(name);
        if self.names.len() < NAMES_KEPT {
            self.names.push((name.to_vec(), c));
        }
        c
    }

    /// Decodes what was just written and checks it gives back exactly `args`.
    fn verify(&mut self, frame: &[u8], args: &[&[u8]]) -> bool {
        let limits = Limits {
            max_bulk_len: usize::MAX,
            max_aggregate_len: usize::MAX,
            max_depth: 1,
        };
        let mut f = Frame {
            kind: FrameKind::Passthrough,
            mux: 0,
            fields: std::mem::take(&mut self.fields),
        };
        let decoded = matches!(
            decode_with(frame, &limits, &mut f, table::core_by_op),
            Ok(Some(n)) if n == frame.len()
        );
        let same = decoded
            && match f.kind {
                FrameKind::Command(cmd) => {
                    self.bytes.clear();
                    self.ends.clear();
                    let mut flat = FlatArgs {
                        bytes: &mut self.bytes,
                        ends: &mut self.ends,
                    };
                    command_args(cmd, &f, &mut flat);
                    self.ends.len() == args.len()
                        && args.iter().enumerate().all(|(i, a)| {
                            let from = if i == 0 { 0 } else { self.ends[i - 1] };
                            let back = &self.bytes[from..self.ends[i]];
                            if i == 0 {
                                back.eq_ignore_ascii_case(a)
                            } else {
                                back == *a
                            }
                        })
                }
                _ => false,
            };
        // The fields borrowed the frame; the emptied vector keeps its allocation.
        f.fields.clear();
        self.fields = f.fields.into_iter().map(|_| Field::Absent).collect();
        same
    }
}

fn min_args(f: &F) -> usize {
    match f {
        F::S | F::V | F::I | F::D | F::W | F::U8 | F::Kw(_) | F::Lit(_) | F::NumArg(_) => 1,
        F::Flags(_) | F::FlagsExp(_) | F::Rest(_) | F::Opt(_) | F::OptKw(..) => 0,
    }
}

fn parse_num<T: std::str::FromStr>(arg: &[u8]) -> Option<T> {
    std::str::from_utf8(arg).ok()?.parse::<T>().ok()
}

/// Writes one scalar field from one argument; `optional` forbids the sentinel value.
fn put_scalar(out: &mut Vec<u8>, f: &F, arg: &[u8], optional: bool) -> Option<()> {
    match f {
        F::S => {
            let n = u16::try_from(arg.len()).ok().filter(|&n| n != ABSENT_S)?;
            out.extend_from_slice(&n.to_be_bytes());
            out.extend_from_slice(arg);
        }
        F::V => {
            let n = u32::try_from(arg.len()).ok().filter(|&n| n != ABSENT_V)?;
            out.extend_from_slice(&n.to_be_bytes());
            out.extend_from_slice(arg);
        }
        F::I => {
            let v: i64 = parse_num(arg)?;
            if optional && v == ABSENT_I {
                return None;
            }
            out.extend_from_slice(&v.to_be_bytes());
        }
        F::D => {
            let v: f64 = parse_num(arg)?;
            if format_double(v).as_bytes() != arg {
                return None;
            }
            out.extend_from_slice(&v.to_be_bytes());
        }
        F::W => {
            let v: u16 = parse_num(arg)?;
            if optional && v == ABSENT_W {
                return None;
            }
            out.extend_from_slice(&v.to_be_bytes());
        }
        F::U8 => {
            let v: u8 = parse_num(arg)?;
            if optional && v == ABSENT_U8 {
                return None;
            }
            out.push(v);
        }
        F::Kw(words) => {
            let i = words.iter().position(|w| w.as_bytes() == arg)?;
            out.push(u8::try_from(i).ok()?);
        }
        _ => return None,
    }
    Some(())
}

fn put_sentinel(out: &mut Vec<u8>, f: &F) {
    match f {
        F::S | F::W => out.extend_from_slice(&ABSENT_S.to_be_bytes()),
        F::V => out.extend_from_slice(&ABSENT_V.to_be_bytes()),
        F::I => out.extend_from_slice(&ABSENT_I.to_be_bytes()),
        F::U8 => out.push(ABSENT_U8),
        F::Kw(_) => out.push(ABSENT_KW),
        // Layouts only make S, V, I, W, U8 and Kw optional.
        _ => {}
    }
}

fn encode_native(out: &mut Vec<u8>, mux: u16, cmd: &Command, args: &[&[u8]]) -> Option<()> {
    match cmd.op {
        Op::Core(op) => {
            out.extend_from_slice(&op.to_be_bytes());
            out.extend_from_slice(&mux.to_be_bytes());
        }
        Op::Module(sub) => {
            out.extend_from_slice(&MODULE_OPCODE.to_be_bytes());
            out.extend_from_slice(&mux.to_be_bytes());
            out.extend_from_slice(&sub.to_be_bytes());
        }
    }
    let mut i = 0usize;
    for (fi, f) in cmd.layout.iter().enumerate() {
        let after: usize = cmd
            .layout
            .get(fi + 1..)
            .unwrap_or(&[])
            .iter()
            .map(min_args)
            .sum();
        let left = args.len().saturating_sub(i);
        match f {
            F::S | F::V | F::I | F::D | F::W | F::U8 | F::Kw(_) => {
                put_scalar(out, f, args.get(i)?, false)?;
                i += 1;
            }
            F::Lit(word) => {
                if *args.get(i)? != word.as_bytes() {
                    return None;
                }
                i += 1;
            }
            F::Flags(table) => {
                let mut bits = 0u8;
                while let Some(&(_, bit)) = args
                    .get(i)
                    .and_then(|a| table.iter().find(|(w, _)| w.as_bytes() == *a))
                {
                    if bits & bit != 0 {
                        return None;
                    }
                    bits |= bit;
                    i += 1;
                }
                out.push(bits);
            }
            F::FlagsExp(table) => {
                let mut bits = 0u8;
                let mut value: Option<i64> = None;
                while let Some(&(_, bit, takes)) = args
                    .get(i)
                    .and_then(|a| table.iter().find(|(w, _, _)| w.as_bytes() == *a))
                {
                    if bits & bit != 0 {
                        return None;
                    }
                    bits |= bit;
                    i += 1;
                    if takes {
                        if value.is_some() {
                            return None;
                        }
                        value = Some(parse_num(args.get(i)?)?);
                        i += 1;
                    }
                }
                out.push(bits);
                out.extend_from_slice(&value.unwrap_or(0).to_be_bytes());
            }
            F::Rest(group) | F::NumArg(group) => {
                let n = if let F::NumArg(_) = f {
                    let n: usize = parse_num(args.get(i)?)?;
                    i += 1;
                    n
                } else {
                    let avail = left.checked_sub(after)?;
                    if avail % group.len() != 0 {
                        return None;
                    }
                    avail / group.len()
                };
                out.extend_from_slice(&u16::try_from(n).ok()?.to_be_bytes());
                for _ in 0..n {
                    for g in group.iter() {
                        put_scalar(out, g, args.get(i)?, false)?;
                        i += 1;
                    }
                }
            }
            F::Opt(inner) => {
                if left > after {
                    put_scalar(out, inner, args.get(i)?, true)?;
                    i += 1;
                } else {
                    put_sentinel(out, inner);
                }
            }
            F::OptKw(word, group) => {
                if args.get(i).is_some_and(|a| *a == word.as_bytes()) {
                    i += 1;
                    for g in group.iter() {
                        put_scalar(out, g, args.get(i)?, true)?;
                        i += 1;
                    }
                } else {
                    for g in group.iter() {
                        put_sentinel(out, g);
                    }
                }
            }
        }
    }
    (i == args.len()).then_some(())
}

#[cfg(test)]
mod quick_path_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Where the encoder skips its check (`is_verbatim`), the check would have passed.
        #[test]
        fn verbatim_frames_pass_the_check(
            cmd in prop::sample::select(table::CORE.iter().chain(table::MODULES.iter()).collect::<Vec<_>>()),
            rest in prop::collection::vec(prop_oneof![
                prop::collection::vec(any::<u8>(), 0..6),
                prop::sample::select(vec!["NX", "XX", "EX", "10", "GET", "KEEPTTL", "-1", "+5"])
                    .prop_map(|s| s.as_bytes().to_vec()),
            ], 0..6),
        ) {
            let mut args: Vec<&[u8]> = vec![cmd.name.as_bytes()];
            args.extend(rest.iter().map(Vec::as_slice));
            let mut out = Vec::new();
            if encode_native(&mut out, 0, cmd, &args[1..]).is_some() && is_verbatim(cmd, &out) {
                prop_assert!(Encoder::new().verify(&out, &args), "{} {:?}", cmd.name, rest);
            }
        }
    }

    /// The check's buffers survive from call to call: the second encoding of a command
    /// that is checked reuses the first one's field vector.
    #[test]
    fn the_encoder_keeps_its_buffers() {
        let mut enc = Encoder::new();
        let mut out = Vec::new();
        enc.encode(&mut out, 0, &[b"LRANGE", b"l", b"0", b"9"]);
        assert!(enc.fields.capacity() >= 3, "{}", enc.fields.capacity());
        assert!(enc.ends.capacity() >= 4 && enc.bytes.capacity() > 0);
        let fields = enc.fields.as_ptr();
        let bytes = enc.bytes.as_ptr();
        enc.encode(&mut out, 0, &[b"LRANGE", b"l", b"1", b"8"]);
        assert_eq!(enc.fields.as_ptr(), fields);
        assert_eq!(enc.bytes.as_ptr(), bytes);
        assert_eq!(enc.names.len(), 1);
    }

    #[test]
    fn common_commands_skip_the_check_only_without_options() {
        let check = |args: &[&[u8]]| {
            let cmd = table::by_name(args[0]).unwrap();
            let mut out = Vec::new();
            encode_native(&mut out, 0, cmd, &args[1..]).unwrap();
            is_verbatim(cmd, &out)
        };
        assert!(check(&[b"GET", b"k"]));
        assert!(check(&[b"SET", b"k", b"v"]));
        assert!(check(&[b"MGET", b"a", b"b", b"c"]));
        assert!(check(&[b"DEL", b"a"]));
        assert!(!check(&[b"SET", b"k", b"v", b"EX", b"10"]));
        assert!(!check(&[b"INCRBY", b"k", b"5"]));
        assert!(!check(&[b"LRANGE", b"l", b"0", b"9"]));
    }
}
