//! Decoding: one RESPB frame at the start of a buffer into borrowed [`Field`]s, through
//! the shaped fast paths for the common layouts or the table interpreter.

use super::{
    Field, Frame, FrameKind, ABSENT_I, ABSENT_KW, ABSENT_S, ABSENT_U8, ABSENT_V, ABSENT_W,
};
use crate::error::ProtoError;
use crate::resp::Limits;
use crate::respb::table::{self, Command, Op, F};
use crate::respb::{CONTROL_MUX_CLOSE, CONTROL_MUX_CREATE, MODULE_OPCODE, PASSTHROUGH_OPCODE};

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

pub(super) fn decode_with<'a>(
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

#[cfg(test)]
mod quick_path_tests {
    use super::*;
    use crate::respb::codec::{encode_command, Encoding};

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
