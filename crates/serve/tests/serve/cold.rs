//! The cold-start knob: the first `cold_ms` after start run `cold_slowdown_pct` % slower,
//! and then the server is as fast as without it. It is the known order effect that the
//! A/A check of `resplab calibrate` must catch.

use resplab_serve::Config;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const BATCH: usize = 400;

/// The shortest of `repeats` times to send 6 batches of `BATCH` pipelined PINGs one after
/// the other, reading every reply (the minimum, because a busy machine only ever adds
/// time). Several batches, because the slowdown spins after a batch's replies are sent:
/// it delays the next batch, as a slower server at saturation does.
fn fastest_batches(c: &mut TcpStream, repeats: usize) -> Duration {
    let request = b"PING\r\n".repeat(BATCH);
    let want = b"+PONG\r\n".len() * BATCH;
    let mut best = Duration::MAX;
    let mut buf = vec![0u8; want];
    for _ in 0..repeats {
        let t0 = Instant::now();
        for _ in 0..6 {
            c.write_all(&request).unwrap();
            c.read_exact(&mut buf).unwrap();
        }
        best = best.min(t0.elapsed());
    }
    best
}

#[test]
fn the_first_cold_ms_are_slower_and_then_the_server_is_warm() {
    // 20 µs of work per command makes the batch's time mostly the server's work, and a
    // 300 % cold slowdown makes that four times as long while the server is cold.
    let server = resplab_serve::start(&Config {
        port: 0,
        work_ns: 20_000,
        cold_ms: 2_500,
        cold_slowdown_pct: 300.0,
        ..Config::default()
    })
    .expect("server starts");
    let started = Instant::now();
    let mut c = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let cold = fastest_batches(&mut c, 2);
    assert!(
        started.elapsed() < Duration::from_millis(2_500),
        "the cold batches took past the cold window ({:?}); the machine is too busy for this test",
        started.elapsed()
    );
    std::thread::sleep(Duration::from_millis(2_600).saturating_sub(started.elapsed()));
    let warm = fastest_batches(&mut c, 2);
    let ratio = cold.as_secs_f64() / warm.as_secs_f64();
    // The truth is 4 for the server's part of every batch but the last, whose spin comes
    // after its replies: about (5·4 + 1)/6 = 3.5, less the client's and kernel's share.
    assert!(
        ratio > 2.0,
        "cold {cold:?} vs warm {warm:?}: ratio {ratio:.2}, expected about 4"
    );
    eprintln!("cold/warm ratio {ratio:.2}");
    assert!(
        ratio < 6.0,
        "cold {cold:?} vs warm {warm:?}: ratio {ratio:.2}"
    );
    c.write_all(b"CONFIG GET cold-*\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let mut b = [0u8; 256];
    let n = c.read(&mut b).unwrap();
    let text = String::from_utf8_lossy(&b[..n]);
    assert!(text.contains("cold-ms") && text.contains("2500"), "{text}");
    assert!(
        text.contains("cold-slowdown") && text.contains("300"),
        "{text}"
    );
}
