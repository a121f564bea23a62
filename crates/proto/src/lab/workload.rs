//! The lab's workloads: the same command shapes as the RESPB proposal's benchmark
//! (small GETs, 50-byte and 1 KiB SETs, and a mix of native RESPB commands), and the
//! request streams built from them.

use super::{LabWorkload, Wire};
use crate::resp::encode::write_command;
use crate::respb::codec::encode_command;

/// The protocol-lab workloads: the same shapes as the RESPB proposal's benchmark.
pub fn generate(w: LabWorkload, commands: usize) -> Vec<Vec<Vec<u8>>> {
    let key = |i: usize| format!("k{:05}", i % 100_000).into_bytes();
    let value = |n: usize, i: usize| {
        let mut v = format!("{i:08}").into_bytes();
        v.resize(n, b'x');
        v
    };
    let b = |s: &str| s.as_bytes().to_vec();
    (0..commands)
        .map(|i| match w {
            LabWorkload::Small => vec![b("GET"), key(i)],
            LabWorkload::Medium => vec![
                b("SET"),
                format!("key{:05}", i % 100_000).into_bytes(),
                value(50, i),
            ],
            LabWorkload::Large => vec![
                b("SET"),
                format!("key{:05}", i % 100_000).into_bytes(),
                value(1024, i),
            ],
            LabWorkload::Mixed => match i % 8 {
                0 => vec![b("GET"), key(i)],
                1 => vec![b("SET"), key(i), value(32, i)],
                2 => vec![b("DEL"), key(i)],
                3 => vec![b("MGET"), key(i), key(i + 1), key(i + 2)],
                4 => vec![
                    b("JSON.SET"),
                    key(i),
                    b("$.name"),
                    format!("\"user{i}\"").into_bytes(),
                ],
                5 => vec![b("JSON.GET"), key(i), b("$.name")],
                6 => vec![b("BF.ADD"), b("bloom"), key(i)],
                _ => vec![
                    b("FT.SEARCH"),
                    b("idx"),
                    format!("@name:user{}", i % 1000).into_bytes(),
                ],
            },
        })
        .collect()
}

/// The row label of a command: its name in upper case.
pub fn name_of(c: &[Vec<u8>]) -> String {
    c.first()
        .map(|n| String::from_utf8_lossy(n).to_ascii_uppercase())
        .unwrap_or_default()
}

/// The length of a command written as RESP.
pub fn resp_len(args: &[Vec<u8>]) -> usize {
    let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    let mut out = Vec::new();
    write_command(&mut out, &refs);
    out.len()
}

/// The commands as one stream of RESP or RESPB requests.
pub fn build_stream(cmds: &[Vec<Vec<u8>>], format: Wire) -> Vec<u8> {
    let mut out = Vec::new();
    for c in cmds {
        let refs: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
        match format {
            Wire::Resp => write_command(&mut out, &refs),
            Wire::Respb => {
                encode_command(&mut out, 0, &refs);
            }
        }
    }
    out
}

/// How many commands of `w` make about `size_mb` MiB of RESP.
pub fn commands_for_size(w: LabWorkload, size_mb: usize) -> usize {
    let sample = generate(w, 64);
    let per = sample.iter().map(|c| resp_len(c)).sum::<usize>() as f64 / 64.0;
    ((size_mb.max(1) * 1024 * 1024) as f64 / per) as usize
}

/// About `size_mb` MiB (of RESP) of workload `w` as one stream in `format`, with the
/// number of commands in it: what one `proto bench` measurement decodes.
pub fn sized_stream(w: LabWorkload, size_mb: usize, format: Wire) -> (Vec<u8>, u64) {
    let cmds = generate(w, commands_for_size(w, size_mb));
    (build_stream(&cmds, format), cmds.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::respb::codec::Encoding;

    #[test]
    fn mixed_workload_is_native_respb() {
        let mut out = Vec::new();
        for c in generate(LabWorkload::Mixed, 16) {
            let refs: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
            assert!(
                matches!(encode_command(&mut out, 0, &refs), Encoding::Native(_)),
                "{c:?}"
            );
        }
    }

    #[test]
    fn a_workload_is_sized_in_resp_bytes() {
        let n = commands_for_size(LabWorkload::Large, 1);
        let len: usize = generate(LabWorkload::Large, n)
            .iter()
            .map(|c| resp_len(c))
            .sum();
        assert!((len as f64 / (1024.0 * 1024.0) - 1.0).abs() < 0.01, "{len}");
    }
}
