//! The one error type of the protocol decoders.
//!
//! A decoder that rejects input says where (the byte offset from the start of the slice it
//! was given), what the protocol required at that point and what it found instead. The
//! message is meant to be shown to a person as is, for example
//! `at byte 17: expected CRLF after the bulk string payload, found byte 0x41 ('A')`.

use std::borrow::Cow;
use std::fmt;

/// A protocol violation: malformed bytes, or a length, count or depth beyond the limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoError {
    /// Byte offset of the offending input, counted from the start of the decoded slice.
    pub offset: usize,
    /// What the protocol required at `offset`.
    pub expected: Cow<'static, str>,
    /// What was there instead.
    pub found: Cow<'static, str>,
}

impl ProtoError {
    /// An error at `offset` with fixed descriptions.
    pub fn new(
        offset: usize,
        expected: impl Into<Cow<'static, str>>,
        found: impl Into<Cow<'static, str>>,
    ) -> Self {
        ProtoError {
            offset,
            expected: expected.into(),
            found: found.into(),
        }
    }

    /// An error at `offset` where the unexpected thing is the byte `b`.
    pub fn byte(offset: usize, expected: impl Into<Cow<'static, str>>, b: u8) -> Self {
        ProtoError::new(offset, expected, describe_byte(b))
    }

    /// The same error with its offset moved by `base`: used when a decoder worked on a
    /// sub-slice of a larger stream.
    #[must_use]
    pub fn shifted(mut self, base: usize) -> Self {
        self.offset = self.offset.saturating_add(base);
        self
    }
}

/// Describes one byte for an error message: its hex value and, if printable, the char.
pub fn describe_byte(b: u8) -> String {
    if b.is_ascii_graphic() || b == b' ' {
        format!("byte 0x{b:02x} ('{}')", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "at byte {}: expected {}, found {}",
            self.offset, self.expected, self.found
        )
    }
}

impl std::error::Error for ProtoError {}
