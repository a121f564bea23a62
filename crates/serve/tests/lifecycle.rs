//! Stopping `resplab serve` returns promptly whatever it listens on: a wildcard address,
//! a Unix socket, a RESPB port.

use resplab_serve::Config;
use std::time::{Duration, Instant};

#[test]
fn stop_returns_with_a_unix_socket_a_wildcard_bind_and_a_respb_port() {
    let dir = std::env::temp_dir().join(format!("resplab-serve-stop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join("serve.sock");
    let server = resplab_serve::start(&Config {
        bind: "0.0.0.0".into(),
        port: 0,
        respb_port: Some(0),
        unixsocket: Some(sock.clone()),
        ..Config::default()
    })
    .expect("server starts");
    let mut c = std::os::unix::net::UnixStream::connect(&sock).expect("unix socket answers");
    use std::io::{Read, Write};
    c.write_all(b"PING\r\n").unwrap();
    let mut b = [0u8; 7];
    c.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"+PONG\r\n");
    let (tx, rx) = std::sync::mpsc::channel();
    let t0 = Instant::now();
    std::thread::spawn(move || {
        server.stop();
        let _ = tx.send(());
    });
    assert!(
        rx.recv_timeout(Duration::from_secs(10)).is_ok(),
        "stop did not return within 10 s"
    );
    assert!(t0.elapsed() < Duration::from_secs(10));
    let _ = std::fs::remove_dir_all(&dir);
}
