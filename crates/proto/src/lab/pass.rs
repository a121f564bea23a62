//! One pass of a request decoder over a stream, for `proto bench`: RESPB, resplab's
//! zero-copy RESP decoder, and an allocating RESP decoder that builds an owned argument
//! vector per command the way a conventional server does. Each returns (commands,
//! checksum, allocations): the checksum keeps the work from being optimised away; the
//! RESPB and zero-copy decoders reuse one argument buffer and count a growth of it, the
//! allocating decoder counts each vector it creates.

use super::{DecoderKind, LabError};
use crate::error::ProtoError;
use crate::resp::request::{parse_request, parse_request_owned};
use crate::resp::Limits;
use crate::respb::codec::{Decoder, Field, Frame};

/// One pass of a decoder over `data`: (commands, checksum, allocations). Each decoder's
/// loop is a function of its own, so that no decoder's code shares registers or layout
/// with another's.
pub fn pass(
    decoder: DecoderKind,
    data: &[u8],
    dec: &Decoder,
    limits: &Limits,
) -> Result<(u64, u64, u64), LabError> {
    match decoder {
        DecoderKind::Respb => pass_respb(data, dec),
        DecoderKind::RespZeroCopy => pass_resp_zero_copy(data, limits),
        DecoderKind::RespAllocating => pass_resp_allocating(data, limits),
    }
}

#[inline(never)]
pub fn pass_respb(data: &[u8], dec: &Decoder) -> Result<(u64, u64, u64), LabError> {
    let mut frame = Frame::default();
    frame.fields.reserve(64);
    let cap = frame.fields.capacity();
    let (n, sum) = drive(data, "RESPB", |rest| {
        Ok(dec.decode(rest, &mut frame)?.map(|k| {
            let first = match frame.fields.first() {
                Some(Field::Bytes(b)) => b.len(),
                _ => 0,
            };
            (k, checksum(frame.fields.len(), first))
        }))
    })?;
    Ok((n, sum, u64::from(frame.fields.capacity() != cap)))
}

#[inline(never)]
pub fn pass_resp_zero_copy(data: &[u8], limits: &Limits) -> Result<(u64, u64, u64), LabError> {
    let mut args: Vec<&[u8]> = Vec::with_capacity(64);
    let cap = args.capacity();
    let (n, sum) = drive(data, "RESP", |rest| {
        Ok(parse_request(rest, limits, &mut args)?
            .map(|k| (k, checksum(args.len(), args.get(1).map_or(0, |a| a.len())))))
    })?;
    Ok((n, sum, u64::from(args.capacity() != cap)))
}

#[inline(never)]
pub fn pass_resp_allocating(data: &[u8], limits: &Limits) -> Result<(u64, u64, u64), LabError> {
    let mut allocs = 0u64;
    let (n, sum) = drive(data, "RESP", |rest| {
        Ok(
            parse_request_owned(rest, limits, &mut allocs)?.map(|(args, k)| {
                let add = checksum(args.len(), args.get(1).map_or(0, Vec::len));
                drop(std::hint::black_box(args));
                (k, add)
            }),
        )
    })?;
    Ok((n, sum, allocs))
}

/// What one decoded command adds to a pass's checksum: its number of fields and the
/// length of one of them.
#[inline(always)]
fn checksum(fields: usize, one: usize) -> u64 {
    (fields as u64).wrapping_add(one as u64)
}

/// Runs `step` over `data` command by command: `step(rest)` decodes the command at the
/// start of `rest` and gives the bytes it used and what it adds to the checksum.
/// (commands, checksum), or the error naming `wire` and the byte where decoding stopped.
/// Inlined, so that each pass keeps a loop of its own.
#[inline(always)]
fn drive<'d>(
    data: &'d [u8],
    wire: &str,
    mut step: impl FnMut(&'d [u8]) -> Result<Option<(usize, u64)>, ProtoError>,
) -> Result<(u64, u64), LabError> {
    let mut pos = 0usize;
    let mut n = 0u64;
    let mut sum = 0u64;
    while pos < data.len() {
        let rest = data.get(pos..).unwrap_or(&[]);
        match step(rest) {
            Ok(Some((k, add))) => {
                pos += k;
                n += 1;
                sum = sum.wrapping_add(add);
            }
            Ok(None) => return Err(LabError(format!("{wire} stream truncated at byte {pos}"))),
            Err(e) => return Err(LabError(format!("malformed {wire}: {}", e.shifted(pos)))),
        }
    }
    if pos != data.len() {
        return Err(LabError(format!(
            "decoder stopped at byte {pos} of {}",
            data.len()
        )));
    }
    Ok((n, sum))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::workload::{build_stream, generate};
    use crate::lab::{LabWorkload, Wire};

    #[test]
    fn every_decoder_consumes_every_workload() {
        let limits = Limits::default();
        let dec = Decoder::new(limits);
        for w in LabWorkload::ALL {
            let cmds = generate(w, 200);
            let resp = build_stream(&cmds, Wire::Resp);
            let respb = build_stream(&cmds, Wire::Respb);
            assert!(respb.len() < resp.len() || w == LabWorkload::Large);
            let (n, _, a) = pass(DecoderKind::Respb, &respb, &dec, &limits).unwrap();
            assert_eq!((n, a), (200, 0));
            let (n, _, a) = pass(DecoderKind::RespZeroCopy, &resp, &dec, &limits).unwrap();
            assert_eq!((n, a), (200, 0));
            let (n, _, a) = pass(DecoderKind::RespAllocating, &resp, &dec, &limits).unwrap();
            assert_eq!(n, 200);
            assert!(a >= 600, "{a}");
        }
    }

    #[test]
    fn a_truncated_stream_is_named_with_its_offset() {
        let limits = Limits::default();
        let dec = Decoder::new(limits);
        let mut resp = build_stream(&generate(LabWorkload::Small, 2), Wire::Resp);
        resp.pop();
        let e = pass(DecoderKind::RespZeroCopy, &resp, &dec, &limits).unwrap_err();
        assert!(
            e.to_string().starts_with("RESP stream truncated at byte "),
            "{e}"
        );
    }
}
