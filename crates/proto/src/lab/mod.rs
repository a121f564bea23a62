//! The protocol lab (`resplab proto`): the lab's workloads and request streams
//! ([`workload`]), commands written as text ([`text`]), a request stream read piece by
//! piece ([`stream`]) and rewritten in the other wire format ([`convert`]), one pass of
//! each request decoder over a stream ([`pass`]), the wire sizes `proto size` reports ([`size`]), and the
//! measurements, medians and table of `proto bench` ([`bench`]).
//!
//! Like the rest of the crate these are functions of bytes and numbers; reading files,
//! the clocks, re-running the binary per measurement and printing stay with the caller.

pub mod bench;
pub mod convert;
pub mod pass;
pub mod size;
pub mod stream;
pub mod text;
pub mod workload;

use std::fmt;

/// A wire format of a request stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    Resp,
    Respb,
}

impl Wire {
    /// Both formats.
    pub const ALL: [Wire; 2] = [Wire::Resp, Wire::Respb];

    /// The format's name on the command line (`resp`, `respb`).
    pub fn name(self) -> &'static str {
        match self {
            Wire::Resp => "resp",
            Wire::Respb => "respb",
        }
    }

    /// The format of a name as [`Wire::name`] gives it.
    pub fn from_name(name: &str) -> Option<Wire> {
        Wire::ALL.into_iter().find(|w| w.name() == name)
    }
}

/// A built-in workload of the lab.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LabWorkload {
    /// `GET key`.
    Small,
    /// `SET key <50 bytes>`.
    Medium,
    /// `SET key <1 KiB>`.
    Large,
    /// Eight native RESPB commands in turn (GET, SET, DEL, MGET, JSON.SET, JSON.GET,
    /// BF.ADD, FT.SEARCH).
    Mixed,
}

impl LabWorkload {
    /// Every workload, in the order `proto bench` runs them.
    pub const ALL: [LabWorkload; 4] = [
        LabWorkload::Small,
        LabWorkload::Medium,
        LabWorkload::Large,
        LabWorkload::Mixed,
    ];

    /// The workload's name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            LabWorkload::Small => "small",
            LabWorkload::Medium => "medium",
            LabWorkload::Large => "large",
            LabWorkload::Mixed => "mixed",
        }
    }

    /// The workload of a name as [`LabWorkload::name`] gives it.
    pub fn from_name(name: &str) -> Option<LabWorkload> {
        LabWorkload::ALL.into_iter().find(|w| w.name() == name)
    }
}

/// A request decoder `proto bench` measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DecoderKind {
    Respb,
    RespZeroCopy,
    RespAllocating,
}

impl DecoderKind {
    /// Every decoder.
    pub const ALL: [DecoderKind; 3] = [
        DecoderKind::Respb,
        DecoderKind::RespZeroCopy,
        DecoderKind::RespAllocating,
    ];

    /// The decoder's name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            DecoderKind::Respb => "respb",
            DecoderKind::RespZeroCopy => "resp-zero-copy",
            DecoderKind::RespAllocating => "resp-allocating",
        }
    }

    /// The decoder of a name as [`DecoderKind::name`] gives it.
    pub fn from_name(name: &str) -> Option<DecoderKind> {
        DecoderKind::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The wire format the decoder reads.
    pub fn wire(self) -> Wire {
        match self {
            DecoderKind::Respb => Wire::Respb,
            DecoderKind::RespZeroCopy | DecoderKind::RespAllocating => Wire::Resp,
        }
    }
}

/// A lab input that cannot be read or decoded; the message says where and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabError(pub String);

impl fmt::Display for LabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LabError {}
