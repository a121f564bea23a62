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

mod args;
mod decode;
mod encode;

pub use args::frame_to_args;
pub use decode::{decode_frame, Decoder};
pub use encode::{
    encode_command, write_mux_close, write_mux_create, write_passthrough, write_passthrough_text,
    Encoder,
};

use super::table::Command;

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
