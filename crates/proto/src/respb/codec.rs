//! RESPB request frames: encoding RESP argument lists into frames, decoding frames into
//! borrowed fields without copying, and turning decoded frames back into RESP arguments.
//!
//! # Losslessness
//!
//! [`encode_command`] tries the command's native layout first. It then decodes the frame
//! it wrote and converts it back to arguments; if anything differs from the input (an
//! integer spelled `+5` or `007`, an option the layout has no field for, options in an
//! order the layout does not keep, a key longer than 65,534 bytes), the native frame is
//! discarded and the command goes out as RESP passthrough. A command therefore never loses
//! an argument, whatever the table says; the only normalisation is that a native frame
//! decodes to the command name in upper case (RESP command names are case-insensitive).
//!
//! # Decoding
//!
//! [`Decoder::decode`] reads one frame at the start of a buffer into a reusable [`Frame`]:
//! strings are slices of the input, numbers are decoded, and the frame's length is
//! returned. RESPB frames carry no length, so a frame is delimited by walking its layout;
//! every length and count is checked against the buffer and the limits before use.
//!
//! The commands a server sees most have one of a few layouts (a key; two keys; a key and
//! a value; a list of keys; SET's key, value and flags). [`Decoder`] reads those straight
//! from their fixed offsets; every other frame, and any frame the direct reading does not
//! find complete and well-formed, goes through the table interpreter, which therefore
//! alone decides what is an error and where.

use super::table::{self, Command, Op, F};
use super::{CONTROL_MUX_CLOSE, CONTROL_MUX_CREATE, MODULE_OPCODE, PASSTHROUGH_OPCODE};
use crate::error::ProtoError;
use crate::resp::encode::{format_double, write_command};
use crate::resp::request::parse_request;
use crate::resp::Limits;

/// One decoded payload field, in layout order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Field<'a> {
    /// A string field (`s` or `v`), borrowed from the input.
    Bytes(&'a [u8]),
    /// An int64 field.
    Int(i64),
    /// A float64 field.
    Double(f64),
    /// A one-byte field: flags, an enum index or a small number.
    Byte(u8),
    /// A u16 field: a count or a small number.
    Word(u16),
    /// An optional field or keyword group that was absent.
    Absent,
}

/// What a frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A command of the table, core or module.
    Command(&'static Command),
    /// RESP passthrough: `fields[0]` holds the RESP text.
    Passthrough,
    /// `MUX_CREATE` of the given mux id.
    MuxCreate(u16),
    /// `MUX_CLOSE` of the given mux id.
    MuxClose(u16),
}

/// A decoded request frame. Reuse one across calls to avoid reallocating `fields`.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame<'a> {
    /// The frame's kind.
    pub kind: FrameKind,
    /// The multiplexing channel from the header.
    pub mux: u16,
    /// The payload fields in layout order (see [`Field`]).
    pub fields: Vec<Field<'a>>,
}

impl Default for Frame<'_> {
    fn default() -> Self {
        Frame {
            kind: FrameKind::Passthrough,
            mux: 0,
            fields: Vec::new(),
        }
    }
}

/// How [`encode_command`] encoded a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// With the command's native layout.
    Native(&'static Command),
    /// As RESP passthrough (unknown command, or the layout cannot carry the arguments).
    Passthrough,
}

const ABSENT_S: u16 = 0xFFFF;
const ABSENT_V: u32 = 0xFFFF_FFFF;
const ABSENT_I: i64 = i64::MIN;
const ABSENT_W: u16 = 0xFFFF;
const ABSENT_U8: u8 = 0;
const ABSENT_KW: u8 = 0xFF;

// ---------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------

/// Decodes request frames. Holds a dense opcode table for constant-time lookup.
#[derive(Debug, Clone)]
pub struct Decoder {
    core: Vec<Option<(&'static Command, Shape)>>,
    /// Module commands with their shapes, indexed by module (the subcommand's high 16
    /// bits) and then by command within the module (the low 16 bits).
    modules: Vec<Vec<Option<(&'static Command, Shape)>>>,
    limits: Limits,
}

/// Layouts common enough to get a decoder of their own, which reads the fields straight
/// from fixed offsets instead of interpreting the layout field by field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Any other layout: the table interpreter.
    Generic,
    /// `[S]`: GET, INCR, TTL, ...
    Key,
    /// `[S, S]`: HGET, SISMEMBER, RENAME, ...
    KeyKey,
    /// `[S, V]`: APPEND, SETNX, GETSET, ...
    KeyValue,
    /// `[Rest([S])]`: MGET, DEL, EXISTS, UNLINK, ...
    Keys,
    /// `[S, Rest([S])]`: HMGET, SREM, LPUSH of keys, ...
    KeyKeys,
    /// `[S, V, FlagsExp]` with the mask of defined flag bits: SET.
    KeyValueFlags(u8),
}

fn shape_of(layout: &[F]) -> Shape {
    match layout {
        [F::S] => Shape::Key,
        [F::S, F::S] => Shape::KeyKey,
        [F::S, F::V] => Shape::KeyValue,
        [F::Rest([F::S])] => Shape::Keys,
        [F::S, F::Rest([F::S])] => Shape::KeyKeys,
        [F::S, F::V, F::FlagsExp(table)] => {
            Shape::KeyValueFlags(table.iter().fold(0u8, |m, (_, bit, _)| m | bit))
        }
        _ => Shape::Generic,
    }
}

#[inline(always)]
fn be16(buf: &[u8], pos: usize) -> Option<u16> {
    match buf.get(pos..pos.checked_add(2)?)? {
        &[a, b] => Some(u16::from_be_bytes([a, b])),
        _ => None,
    }
}

#[inline(always)]
fn be32(buf: &[u8], pos: usize) -> Option<u32> {
    match buf.get(pos..pos.checked_add(4)?)? {
        &[a, b, c, d] => Some(u32::from_be_bytes([a, b, c, d])),
        _ => None,
    }
}

#[inline(always)]
fn be64(buf: &[u8], pos: usize) -> Option<u64> {
    let s = buf.get(pos..pos.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_be_bytes(a))
}

/// A present `S` field at `pos`: `(bytes, position after)`.
#[inline(always)]
fn quick_s(buf: &[u8], pos: usize) -> Option<(&[u8], usize)> {
    let n = be16(buf, pos)?;
    if n == ABSENT_S {
        return None;
    }
    let start = pos + 2;
    let end = start + usize::from(n);
    Some((buf.get(start..end)?, end))
}

/// A present `V` field at `pos` within the bulk limit: `(bytes, position after)`.
#[inline(always)]
fn quick_v(buf: &[u8], pos: usize, max: usize) -> Option<(&[u8], usize)> {
    let n = be32(buf, pos)?;
    if n == ABSENT_V || n as usize > max {
        return None;
    }
    let start = pos + 4;
    let end = start.checked_add(n as usize)?;
    Some((buf.get(start..end)?, end))
}

impl Decoder {
    /// A decoder enforcing `limits` (bulk length for `v` fields and passthrough payloads,
    /// aggregate length for counts).
    pub fn new(limits: Limits) -> Self {
        let mut core = vec![None; 0x0400];
        for c in table::CORE {
            if let Op::Core(op) = c.op {
                if let Some(slot) = core.get_mut(usize::from(op)) {
                    *slot = Some((c, shape_of(c.layout)));
                }
            }
        }
        let mut modules: Vec<Vec<Option<(&'static Command, Shape)>>> = Vec::new();
        for c in table::MODULES {
            if let Op::Module(sub) = c.op {
                let (m, i) = ((sub >> 16) as usize, (sub & 0xFFFF) as usize);
                if modules.len() <= m {
                    modules.resize(m + 1, Vec::new());
                }
                if let Some(cmds) = modules.get_mut(m) {
                    if cmds.len() <= i {
                        cmds.resize(i + 1, None);
                    }
                    if let Some(slot) = cmds.get_mut(i) {
                        *slot = Some((c, shape_of(c.layout)));
                    }
                }
            }
        }
        Decoder {
            core,
            modules,
            limits,
        }
    }

    /// The quick path of [`Decoder::decode`]: a complete core or module frame of one of
    /// the common [`Shape`]s, every field present and within the limits. `None` (with
    /// `frame` partly filled) sends the caller to the table interpreter, which gives the
    /// exact answer for incomplete or malformed frames.
    #[inline(always)]
    fn quick<'a>(&self, buf: &'a [u8], frame: &mut Frame<'a>) -> Option<usize> {
        let op = be16(buf, 0)?;
        let (cmd, shape, first) = if op == MODULE_OPCODE {
            let sub = be32(buf, 4)?;
            let (cmd, shape) = (*self
                .modules
                .get((sub >> 16) as usize)?
                .get((sub & 0xFFFF) as usize)?)?;
            (cmd, shape, 8)
        } else {
            let (cmd, shape) = (*self.core.get(usize::from(op))?)?;
            (cmd, shape, 4)
        };
        let mux = be16(buf, 2)?;
        let fields = &mut frame.fields;
        fields.clear();
        let end = match shape {
            Shape::Generic => return None,
            Shape::Key => {
                let (k, end) = quick_s(buf, first)?;
                fields.push(Field::Bytes(k));
                end
            }
            Shape::KeyKey => {
                let (k, p) = quick_s(buf, first)?;
                let (k2, end) = quick_s(buf, p)?;
                fields.push(Field::Bytes(k));
                fields.push(Field::Bytes(k2));
                end
            }
            Shape::KeyValue => {
                let (k, p) = quick_s(buf, first)?;
                let (v, end) = quick_v(buf, p, self.limits.max_bulk_len)?;
                fields.push(Field::Bytes(k));
                fields.push(Field::Bytes(v));
                end
            }
            Shape::KeyValueFlags(mask) => {
                let (k, p) = quick_s(buf, first)?;
                let (v, p) = quick_v(buf, p, self.limits.max_bulk_len)?;
                let flags = *buf.get(p)?;
                let e = be64(buf, p + 1)? as i64;
                if flags & !mask != 0 {
                    return None;
                }
                fields.push(Field::Bytes(k));
                fields.push(Field::Bytes(v));
                fields.push(Field::Byte(flags));
                fields.push(Field::Int(e));
                p + 9
            }
            Shape::Keys | Shape::KeyKeys => {
                let mut p = first;
                if shape == Shape::KeyKeys {
                    let (k, next) = quick_s(buf, p)?;
                    fields.push(Field::Bytes(k));
                    p = next;
                }
                let n = be16(buf, p)?;
                if usize::from(n) > self.limits.max_aggregate_len {
                    return None;
                }
                fields.push(Field::Word(n));
                p += 2;
                for _ in 0..n {
                    let (k, next) = quick_s(buf, p)?;
                    fields.push(Field::Bytes(k));
                    p = next;
                }
                p
            }
        };
        frame.mux = mux;
        frame.kind = FrameKind::Command(cmd);
        Some(end)
    }

    /// Decodes the frame at the start of `buf` into `frame`; returns its length, or
    /// `Ok(None)` when `buf` holds only a prefix of a frame.
    ///
    /// # Errors
    ///
    /// A [`ProtoError`] with the byte offset for an unknown opcode or module command, a
    /// length or count beyond the limits, an "absent" marker in a required field, an
    /// enum index or flag bit the table does not define.
    #[inline]
    pub fn decode<'a>(
        &self,
        buf: &'a [u8],
        frame: &mut Frame<'a>,
    ) -> Result<Option<usize>, ProtoError> {
        if let Some(end) = self.quick(buf, frame) {
            return Ok(Some(end));
        }
        decode_with(buf, &self.limits, frame, |op| {
            self.core
                .get(usize::from(op))
                .copied()
                .flatten()
                .map(|(c, _)| c)
        })
    }
}

/// Decodes one frame with a default [`Decoder`]'s table lookup (binary search).
///
/// # Errors
///
/// As [`Decoder::decode`].
pub fn decode_frame<'a>(
    buf: &'a [u8],
    limits: &Limits,
    frame: &mut Frame<'a>,
) -> Result<Option<usize>, ProtoError> {
    decode_with(buf, limits, frame, table::core_by_op)
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// `Err` = malformed, `Ok(None)` = need more.
type Step<T> = Result<Option<T>, ProtoError>;

macro_rules! need {
    ($e:expr) => {
        match $e? {
            Some(v) => v,
            None => return Ok(None),
        }
    };
}

impl<'a> Reader<'a> {
    #[inline]
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    #[inline]
    fn u8(&mut self) -> Step<u8> {
        Ok(self.take(1).and_then(|s| s.first().copied()))
    }
    #[inline]
    fn u16(&mut self) -> Step<u16> {
        Ok(self.take(2).map(|s| {
            let mut a = [0u8; 2];
            a.copy_from_slice(s);
            u16::from_be_bytes(a)
        }))
    }
    #[inline]
    fn u32(&mut self) -> Step<u32> {
        Ok(self.take(4).map(|s| {
            let mut a = [0u8; 4];
            a.copy_from_slice(s);
            u32::from_be_bytes(a)
        }))
    }
    #[inline]
    fn u64(&mut self) -> Step<u64> {
        Ok(self.take(8).map(|s| {
            let mut a = [0u8; 8];
            a.copy_from_slice(s);
            u64::from_be_bytes(a)
        }))
    }
}

fn decode_with<'a>(
    buf: &'a [u8],
    limits: &Limits,
    frame: &mut Frame<'a>,
    core: impl Fn(u16) -> Option<&'static Command>,
) -> Result<Option<usize>, ProtoError> {
    frame.fields.clear();
    let mut r = Reader { buf, pos: 0 };
    let op = need!(r.u16());
    let mux = need!(r.u16());
    frame.mux = mux;
    let cmd = match op {
        PASSTHROUGH_OPCODE => {
            let at = r.pos;
            let len = need!(r.u32()) as usize;
            if len > limits.max_bulk_len {
                return Err(ProtoError::new(
                    at,
                    format!("a passthrough length of at most {}", limits.max_bulk_len),
                    format!("{len}"),
                ));
            }
            let text = match r.take(len) {
                Some(t) => t,
                None => return Ok(None),
            };
            frame.kind = FrameKind::Passthrough;
            frame.fields.push(Field::Bytes(text));
            return Ok(Some(r.pos));
        }
        CONTROL_MUX_CREATE | CONTROL_MUX_CLOSE => {
            let id = need!(r.u16());
            frame.kind = if op == CONTROL_MUX_CREATE {
                FrameKind::MuxCreate(id)
            } else {
                FrameKind::MuxClose(id)
            };
            return Ok(Some(r.pos));
        }
        MODULE_OPCODE => {
            let at = r.pos;
            let sub = need!(r.u32());
            match table::module_by_sub(sub) {
                Some(c) => c,
                None => {
                    return Err(ProtoError::new(
                        at,
                        "a known module subcommand (JSON 0x0000xxxx, BF 0x0001xxxx, FT 0x0002xxxx)",
                        format!("0x{sub:08x}"),
                    ))
                }
            }
        }
        _ => match core(op) {
            Some(c) => c,
            None => return Err(ProtoError::new(
                0,
                "a request opcode (a core command of the table, 0xF000, 0xFF00, 0xFF01 or 0xFFFF)",
                format!("0x{op:04x}"),
            )),
        },
    };
    frame.kind = FrameKind::Command(cmd);
    for f in cmd.layout {
        need!(read_field(&mut r, f, limits, &mut frame.fields));
    }
    Ok(Some(r.pos))
}

/// Reads one scalar; `Ok(Some(None))` is the "absent" sentinel.
#[inline]
fn read_scalar<'a>(r: &mut Reader<'a>, f: &F, limits: &Limits) -> Step<Option<Field<'a>>> {
    let at = r.pos;
    let v = match f {
        F::S => {
            let n = need!(r.u16());
            if n == ABSENT_S {
                return Ok(Some(None));
            }
            match r.take(usize::from(n)) {
                Some(s) => Field::Bytes(s),
                None => return Ok(None),
            }
        }
        F::V => {
            let n = need!(r.u32());
            if n == ABSENT_V {
                return Ok(Some(None));
            }
            let n = n as usize;
            if n > limits.max_bulk_len {
                return Err(ProtoError::new(
                    at,
                    format!("a value length of at most {}", limits.max_bulk_len),
                    format!("{n}"),
                ));
            }
            match r.take(n) {
                Some(s) => Field::Bytes(s),
                None => return Ok(None),
            }
        }
        F::I => Field::Int(need!(r.u64()) as i64),
        F::D => Field::Double(f64::from_bits(need!(r.u64()))),
        F::W => Field::Word(need!(r.u16())),
        F::U8 => Field::Byte(need!(r.u8())),
        F::Kw(words) => {
            let b = need!(r.u8());
            if b == ABSENT_KW {
                return Ok(Some(None));
            }
            if usize::from(b) >= words.len() {
                return Err(ProtoError::new(
                    at,
                    format!(
                        "one of {} keyword indexes ({})",
                        words.len(),
                        words.join("|")
                    ),
                    format!("index {b}"),
                ));
            }
            Field::Byte(b)
        }
        _ => return Ok(Some(None)),
    };
    Ok(Some(Some(v)))
}

fn is_sentinel(f: &F, v: &Field<'_>) -> bool {
    matches!(
        (f, v),
        (F::I, Field::Int(ABSENT_I))
            | (F::W, Field::Word(ABSENT_W))
            | (F::U8, Field::Byte(ABSENT_U8))
    )
}

fn absent_here(at: usize) -> ProtoError {
    ProtoError::new(
        at,
        "a present value in a required field",
        "the \"absent\" marker",
    )
}

#[inline]
fn read_field<'a>(
    r: &mut Reader<'a>,
    f: &F,
    limits: &Limits,
    out: &mut Vec<Field<'a>>,
) -> Step<()> {
    let at = r.pos;
    match f {
        F::S | F::V | F::I | F::D | F::W | F::U8 | F::Kw(_) => {
            match need!(read_scalar(r, f, limits)) {
                Some(v) => out.push(v),
                None => return Err(absent_here(at)),
            }
        }
        F::Lit(_) => {}
        F::Flags(table) => {
            let b = need!(r.u8());
            check_bits(at, b, table.iter().fold(0u8, |m, (_, bit)| m | bit))?;
            out.push(Field::Byte(b));
        }
        F::FlagsExp(table) => {
            let b = need!(r.u8());
            let e = need!(r.u64()) as i64;
            check_bits(at, b, table.iter().fold(0u8, |m, (_, bit, _)| m | bit))?;
            out.push(Field::Byte(b));
            out.push(Field::Int(e));
        }
        F::Rest(group) | F::NumArg(group) => {
            let n = need!(r.u16());
            if usize::from(n) > limits.max_aggregate_len {
                return Err(ProtoError::new(
                    at,
                    format!("a count of at most {}", limits.max_aggregate_len),
                    format!("{n}"),
                ));
            }
            out.push(Field::Word(n));
            for _ in 0..n {
                for g in group.iter() {
                    let gat = r.pos;
                    match need!(read_scalar(r, g, limits)) {
                        Some(v) => out.push(v),
                        None => return Err(absent_here(gat)),
                    }
                }
            }
        }
        F::Opt(inner) => match need!(read_scalar(r, inner, limits)) {
            Some(v) if !is_sentinel(inner, &v) => out.push(v),
            _ => out.push(Field::Absent),
        },
        F::OptKw(_, group) => {
            let mut present = 0usize;
            let mark = out.len();
            for g in group.iter() {
                match need!(read_scalar(r, g, limits)) {
                    Some(v) if !is_sentinel(g, &v) => {
                        present += 1;
                        out.push(v);
                    }
                    _ => {}
                }
            }
            if present == 0 {
                out.push(Field::Absent);
            } else if present != group.len() {
                return Err(ProtoError::new(
                    at,
                    "all values of an optional keyword group present, or all absent",
                    "a mix",
                ));
            } else {
                debug_assert_eq!(out.len(), mark + group.len());
            }
        }
    }
    Ok(Some(()))
}

fn check_bits(at: usize, b: u8, defined: u8) -> Result<(), ProtoError> {
    if b & !defined != 0 {
        Err(ProtoError::new(
            at,
            format!("flag bits within 0x{defined:02x}"),
            format!("0x{b:02x}"),
        ))
    } else {
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Frame → RESP arguments
// ---------------------------------------------------------------------------------------

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
trait ArgSink {
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
struct FlatArgs<'x> {
    bytes: &'x mut Vec<u8>,
    ends: &'x mut Vec<usize>,
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
fn command_args(cmd: &Command, frame: &Frame<'_>, out: &mut impl ArgSink) {
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

    fn frame_of(args: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        assert!(matches!(
            encode_command(&mut out, 7, args),
            Encoding::Native(_)
        ));
        out
    }

    /// The shaped decoders must give exactly what the table interpreter gives (length,
    /// fields, or the error with its offset) on every prefix and every one-byte
    /// mutation of frames of each shape, under default and tight limits.
    #[test]
    fn quick_and_table_paths_agree_exactly() {
        let seeds = [
            frame_of(&[b"GET", b"k00001"]),
            frame_of(&[b"GET", b""]),
            frame_of(&[b"HGET", b"h", b"field"]),
            frame_of(&[b"APPEND", b"k", b"value"]),
            frame_of(&[b"SET", b"k", b"v"]),
            frame_of(&[b"SET", b"key", b"value", b"NX", b"EX", b"10"]),
            frame_of(&[b"MGET", b"a", b"bb", b"ccc"]),
            frame_of(&[b"DEL", b"a"]),
            frame_of(&[b"HMGET", b"h", b"f1", b"f2"]),
            frame_of(&[b"JSON.GET", b"k", b"$.a"]),
            frame_of(&[b"BF.ADD", b"bloom", b"k1"]),
            frame_of(&[b"FT.SEARCH", b"idx", b"@name:user1"]),
        ];
        for s in &seeds[..9] {
            let op = u16::from_be_bytes([s[0], s[1]]);
            let cmd = table::core_by_op(op).unwrap();
            assert_ne!(shape_of(cmd.layout), Shape::Generic, "{}", cmd.name);
        }
        let limit_sets = [
            Limits::default(),
            Limits {
                max_bulk_len: 2,
                max_aggregate_len: 1,
                max_depth: 1,
            },
        ];
        let mutations = [0u8, 1, 0x20, 0x7f, 0xff];
        let mut checked = 0usize;
        for limits in &limit_sets {
            let dec = Decoder::new(*limits);
            for seed in &seeds {
                let mut inputs: Vec<Vec<u8>> =
                    (0..=seed.len()).map(|k| seed[..k].to_vec()).collect();
                for i in 0..seed.len() {
                    for &m in &mutations {
                        let mut v = seed.clone();
                        v[i] = m;
                        inputs.push(v);
                    }
                }
                for input in &inputs {
                    let mut quick = Frame::default();
                    let mut table = Frame::default();
                    let q = dec.decode(input, &mut quick);
                    let t = decode_frame(input, limits, &mut table);
                    assert_eq!(q, t, "input {input:02x?}");
                    if let Ok(Some(_)) = q {
                        assert_eq!(quick, table, "input {input:02x?}");
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }
}
