//! Wire protocols spoken by resplab: RESP2 and RESP3 ([`resp`]) and the RESPB binary
//! protocol ([`respb`]), and the protocol lab's workloads and decoder passes ([`lab`]).
//!
//! Everything here is a pure function of bytes. Nothing opens a socket, reads a clock or
//! touches a file: connections, files and timing belong to the crates above (`engine`,
//! `cli`). That keeps every decoder testable by feeding it byte slices, including every
//! prefix of a valid stream and arbitrary garbage.
//!
//! Two promises hold for every decoder in this crate:
//!
//! - **No panics on any input.** Malformed bytes produce a [`ProtoError`] naming the byte
//!   offset, what was expected there and what was found.
//! - **Limits before allocation.** A length or count read from the wire is compared with
//!   the caller's limits before any buffer is sized from it, so a hostile peer cannot make
//!   the decoder reserve gigabytes with a dozen bytes.
//!
//! "Not enough bytes yet" is never an error: decoders return `Ok(None)` and the caller
//! reads more.

pub mod error;
pub mod lab;
pub mod resp;
pub mod respb;

pub use error::ProtoError;
