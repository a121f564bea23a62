use resplab_testkit::client::Reply;
use resplab_testkit::redis::RedisServer;

#[test]
fn starts_answers_and_stops() {
    let server = RedisServer::start().unwrap();
    let mut c = server.client().unwrap();
    assert_eq!(
        c.cmd(&["SET", "k", "v"]).unwrap(),
        Reply::Simple("OK".into())
    );
    assert_eq!(c.cmd(&["DBSIZE"]).unwrap().as_int(), Some(1));
    let addr = server.addr();
    drop(server);
    assert!(resplab_testkit::client::Client::connect(&addr).is_err());
}

#[test]
fn kill_ends_the_server() {
    let mut server = RedisServer::start_with_socket().unwrap();
    assert!(server.socket_path().unwrap().exists());
    server.kill();
    assert!(server.client().is_err());
}
