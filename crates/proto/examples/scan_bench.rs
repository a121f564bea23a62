//! Nanoseconds per reply of `resp::scan::scan_reply` on the replies a load generator sees
//! most: `+OK`, `+PONG`, a 3-byte bulk string, an integer, and a 10-element array of
//! bulk strings. Each case scans a buffer of many back-to-back replies, the way the
//! engine walks a read buffer, and reports the best of several rounds.
//!
//! Run with `cargo run --release -p resplab-proto --example scan_bench`.

use resplab_proto::resp::scan::scan_reply;
use resplab_proto::resp::Limits;
use std::hint::black_box;
use std::time::Instant;

fn stream(one: &[u8], n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(one.len() * n);
    for _ in 0..n {
        v.extend_from_slice(one);
    }
    v
}

fn scan_all(buf: &[u8], limits: &Limits) -> usize {
    let mut pos = 0;
    let mut n = 0;
    while let Some(rest) = buf.get(pos..) {
        match scan_reply(black_box(rest), limits) {
            Ok(Some(s)) => {
                pos += s.consumed;
                n += 1;
            }
            _ => break,
        }
    }
    n
}

fn main() {
    let limits = Limits::default();
    let mut array = b"*10\r\n".to_vec();
    for i in 0..10 {
        array.extend_from_slice(format!("$6\r\nval{i:03}\r\n").as_bytes());
    }
    let cases: [(&str, Vec<u8>); 5] = [
        ("+OK", b"+OK\r\n".to_vec()),
        ("+PONG", b"+PONG\r\n".to_vec()),
        ("$3 bulk", b"$3\r\nbar\r\n".to_vec()),
        (":1", b":1\r\n".to_vec()),
        ("10-element array", array),
    ];
    let per_buf = 4096;
    let rounds = 200;
    for (name, one) in &cases {
        let buf = stream(one, per_buf);
        let mut best = f64::INFINITY;
        for _ in 0..7 {
            let t = Instant::now();
            let mut total = 0;
            for _ in 0..rounds {
                total += scan_all(&buf, &limits);
            }
            let ns = t.elapsed().as_nanos() as f64 / total as f64;
            assert_eq!(total, per_buf * rounds);
            best = best.min(ns);
        }
        println!("{name:<18} {best:>7.2} ns/reply");
    }
}
