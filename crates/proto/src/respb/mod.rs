//! RESPB, a proposed binary encoding of Redis requests: 2-byte opcodes instead of command
//! names, big-endian length prefixes instead of decimal text, and a 16-bit multiplexing
//! channel id in every frame header.
//!
//! The format comes from a public proposal whose documents are inconsistent in places
//! and silent about responses. This module implements the request side of every opcode
//! the proposal lists ([`table`]), resolves each ambiguity so that every frame is
//! self-delimiting and every RESP command survives a round trip unchanged ([`codec`]),
//! and defines a response encoding of its own ([`reply`]). docs/respb.md records each
//! decision and its reason.
//!
//! Frame headers, all big-endian:
//!
//! | kind | layout |
//! | --- | --- |
//! | core command | `[op u16][mux u16]` payload, op 0x0000–0x03DD |
//! | module command | `[0xF000][mux u16][module<<16 \| command u32]` payload |
//! | passthrough | `[0xFFFF][mux u16][len u32]` and `len` bytes of RESP |
//! | mux control | `[0xFF00 or 0xFF01][mux u16][id u16]` |

pub mod codec;
pub mod reply;
pub mod table;

/// Opcode of module command frames.
pub const MODULE_OPCODE: u16 = 0xF000;
/// Opcode of RESP passthrough frames.
pub const PASSTHROUGH_OPCODE: u16 = 0xFFFF;
/// Opcode of the `MUX_CREATE` control frame.
pub const CONTROL_MUX_CREATE: u16 = 0xFF00;
/// Opcode of the `MUX_CLOSE` control frame.
pub const CONTROL_MUX_CLOSE: u16 = 0xFF01;
/// The handshake a client sends first: magic `D3 C1`, version 1, flags 0.
pub const HANDSHAKE: [u8; 4] = [0xD3, 0xC1, 0x01, 0x00];
