//! The running server's life: stopping returns promptly whatever it listens on (a
//! wildcard address, a Unix socket, a RESPB port), and a connection beyond `maxclients`
//! is told so and closed while the others are served.

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

#[test]
fn a_connection_beyond_maxclients_is_refused_and_the_others_are_served() {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::sync::atomic::Ordering;
    let server = resplab_serve::start(&Config {
        port: 0,
        ..Config::default()
    })
    .expect("server starts");
    server.knobs.max_clients.store(2, Ordering::Relaxed);
    let connect = || {
        let c = TcpStream::connect(("127.0.0.1", server.port())).expect("connects");
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        c
    };
    let ping = |c: &mut TcpStream| {
        c.write_all(b"PING\r\n").unwrap();
        let mut b = [0u8; 7];
        c.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"+PONG\r\n");
    };
    let (mut a, mut b) = (connect(), connect());
    ping(&mut a);
    ping(&mut b);
    let mut refused = connect();
    let mut said = Vec::new();
    refused
        .read_to_end(&mut said)
        .expect("the server closes it");
    assert_eq!(said, resplab_serve::accept::FULL);
    assert_eq!(said, b"-ERR max number of clients reached\r\n");
    ping(&mut a);
    // Room again once a client leaves.
    drop(b);
    let t0 = Instant::now();
    while server.knobs.clients.load(Ordering::Relaxed) > 1 {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the closed client is still counted"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    ping(&mut connect());
    assert_eq!(
        server.knobs.connections.load(Ordering::Relaxed),
        3,
        "refused ones are not counted as received"
    );
}
