//! Commands per second of the two borrowed request decoders on the protocol lab's
//! "small" workload (GET with 6-byte keys): RESPB (`respb::codec::Decoder`) and the
//! zero-copy RESP parser (`resp::request::parse_request`). A quick loop for working on
//! the decoders; `resplab proto bench` is the measurement of record.
//!
//! Run with `cargo run --release -p resplab-proto --example decode_bench [small|medium|mixed]`.

use resplab_proto::resp::encode::write_command;
use resplab_proto::resp::request::parse_request;
use resplab_proto::resp::Limits;
use resplab_proto::respb::codec::{encode_command, Decoder, Field, Frame};
use std::hint::black_box;
use std::time::Instant;

fn commands(kind: &str, n: usize) -> Vec<Vec<Vec<u8>>> {
    (0..n)
        .map(|i| {
            let key = format!("k{:05}", i % 100_000).into_bytes();
            let mut val = format!("{i:08}").into_bytes();
            val.resize(50, b'x');
            match (kind, i % 4) {
                ("medium", _) => vec![b"SET".to_vec(), key, val],
                ("mixed", 0) => vec![b"GET".to_vec(), key],
                ("mixed", 1) => vec![b"SET".to_vec(), key, val],
                ("mixed", 2) => vec![b"DEL".to_vec(), key],
                ("mixed", _) => vec![b"MGET".to_vec(), key.clone(), key.clone(), key],
                _ => vec![b"GET".to_vec(), key],
            }
        })
        .collect()
}

fn main() {
    let kind = std::env::args().nth(1).unwrap_or_else(|| "small".into());
    let cmds = commands(&kind, 200_000);
    let mut resp = Vec::new();
    let mut respb = Vec::new();
    for c in &cmds {
        let refs: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
        write_command(&mut resp, &refs);
        encode_command(&mut respb, 0, &refs);
    }
    let limits = Limits::default();
    let dec = Decoder::new(limits);
    let rounds = 10;
    let mut best_b = f64::INFINITY;
    let mut best_r = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        let mut sum = 0usize;
        let mut frame = Frame::default();
        for _ in 0..rounds {
            let data = black_box(&respb[..]);
            let mut pos = 0;
            while let Some(rest) = data.get(pos..).filter(|r| !r.is_empty()) {
                match dec.decode(rest, &mut frame) {
                    Ok(Some(k)) => {
                        pos += k;
                        sum += frame.fields.len();
                        if let Some(Field::Bytes(b)) = frame.fields.first() {
                            sum += b.len();
                        }
                    }
                    _ => panic!("bad RESPB at {pos}"),
                }
            }
        }
        black_box(sum);
        best_b = best_b.min(t.elapsed().as_nanos() as f64 / (rounds * cmds.len()) as f64);

        let t = Instant::now();
        let mut sum = 0usize;
        let mut args: Vec<&[u8]> = Vec::with_capacity(64);
        for _ in 0..rounds {
            let data = black_box(&resp[..]);
            let mut pos = 0;
            while let Some(rest) = data.get(pos..).filter(|r| !r.is_empty()) {
                match parse_request(rest, &limits, &mut args) {
                    Ok(Some(k)) => {
                        pos += k;
                        sum += args.len();
                        if let Some(a) = args.get(1) {
                            sum += a.len();
                        }
                    }
                    _ => panic!("bad RESP at {pos}"),
                }
            }
        }
        black_box(sum);
        best_r = best_r.min(t.elapsed().as_nanos() as f64 / (rounds * cmds.len()) as f64);
    }
    println!(
        "{kind}: RESPB {best_b:.2} ns/cmd ({:.1} M/s); zero-copy RESP {best_r:.2} ns/cmd ({:.1} M/s)",
        1e3 / best_b,
        1e3 / best_r
    );
}
