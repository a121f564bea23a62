//! The request path of `resplab serve` on arbitrary bytes: every command of the list
//! answers as Redis does, and no byte stream — split anywhere, mutated, or random — makes
//! it panic.

use proptest::prelude::*;
use resplab_proto::resp::value::{decode, Value};
use resplab_proto::resp::Limits;
use resplab_serve::{db::Db, Config, Conn, Feed, Knobs};

fn knobs() -> Knobs {
    // Built the way the server builds them.
    Knobs::from_config(&Config::default())
}

fn run(conn: &mut Conn, db: &Db, k: &Knobs, args: &[&str]) -> Value {
    let mut req = Vec::new();
    resplab_proto::resp::encode::write_command(
        &mut req,
        &args.iter().map(|a| a.as_bytes()).collect::<Vec<_>>(),
    );
    let mut out = Vec::new();
    conn.feed(db, k, &req, &mut out);
    let (v, used) = decode(&out, &Limits::default())
        .expect("a well-formed reply")
        .expect("a whole reply");
    assert_eq!(used, out.len(), "one reply per request");
    v
}

fn blob(s: &str) -> Value {
    Value::Blob(s.as_bytes().to_vec())
}

#[test]
fn the_command_list_answers_as_redis_does() {
    let (db, k) = (Db::default(), knobs());
    let mut c = Conn::new(1);
    let ok = Value::Simple(b"OK".to_vec());
    assert_eq!(
        run(&mut c, &db, &k, &["PING"]),
        Value::Simple(b"PONG".to_vec())
    );
    assert_eq!(run(&mut c, &db, &k, &["ECHO", "hi"]), blob("hi"));
    assert_eq!(run(&mut c, &db, &k, &["SET", "k", "v", "EX", "100"]), ok);
    assert_eq!(run(&mut c, &db, &k, &["GET", "k"]), blob("v"));
    assert_eq!(run(&mut c, &db, &k, &["SET", "k", "w", "NX"]), Value::Null);
    assert_eq!(
        run(&mut c, &db, &k, &["SET", "k", "w", "XX", "GET"]),
        blob("v")
    );
    assert_eq!(run(&mut c, &db, &k, &["TTL", "k"]), Value::Integer(-1));
    assert_eq!(
        run(&mut c, &db, &k, &["GETEX", "k", "PX", "50000"]),
        blob("w")
    );
    assert!(matches!(
        run(&mut c, &db, &k, &["TTL", "k"]),
        Value::Integer(50)
    ));
    assert_eq!(
        run(&mut c, &db, &k, &["EXPIRE", "k", "10"]),
        Value::Integer(1)
    );
    assert_eq!(
        run(&mut c, &db, &k, &["EXISTS", "k", "nope"]),
        Value::Integer(1)
    );
    assert_eq!(run(&mut c, &db, &k, &["INCR", "n"]), Value::Integer(1));
    assert_eq!(
        run(&mut c, &db, &k, &["INCRBY", "n", "41"]),
        Value::Integer(42)
    );
    assert!(matches!(
        run(&mut c, &db, &k, &["INCR", "k"]),
        Value::SimpleError(_)
    ));
    assert_eq!(run(&mut c, &db, &k, &["MSET", "a", "1", "b", "2"]), ok);
    assert_eq!(
        run(&mut c, &db, &k, &["MGET", "a", "x", "b"]),
        Value::Array(vec![blob("1"), Value::Null, blob("2")])
    );
    assert_eq!(
        run(&mut c, &db, &k, &["DEL", "a", "b", "x"]),
        Value::Integer(2)
    );
    assert_eq!(
        run(&mut c, &db, &k, &["LPUSH", "l", "1", "2"]),
        Value::Integer(2)
    );
    assert_eq!(
        run(&mut c, &db, &k, &["RPUSH", "l", "3"]),
        Value::Integer(3)
    );
    assert_eq!(
        run(&mut c, &db, &k, &["LRANGE", "l", "0", "-1"]),
        Value::Array(vec![blob("2"), blob("1"), blob("3")])
    );
    assert_eq!(run(&mut c, &db, &k, &["LPOP", "l"]), blob("2"));
    assert_eq!(run(&mut c, &db, &k, &["RPOP", "l"]), blob("3"));
    assert!(
        matches!(run(&mut c, &db, &k, &["GET", "l"]), Value::SimpleError(e) if e.starts_with(b"WRONGTYPE"))
    );
    assert_eq!(
        run(&mut c, &db, &k, &["SADD", "s", "x", "y", "x"]),
        Value::Integer(2)
    );
    assert!(matches!(run(&mut c, &db, &k, &["SMEMBERS", "s"]), Value::Array(v) if v.len() == 2));
    assert!(matches!(
        run(&mut c, &db, &k, &["SPOP", "s"]),
        Value::Blob(_)
    ));
    assert_eq!(
        run(&mut c, &db, &k, &["HSET", "h", "f", "v", "g", "w"]),
        Value::Integer(2)
    );
    assert_eq!(run(&mut c, &db, &k, &["HGET", "h", "g"]), blob("w"));
    assert!(matches!(run(&mut c, &db, &k, &["HGETALL", "h"]), Value::Array(v) if v.len() == 4));
    assert_eq!(
        run(&mut c, &db, &k, &["ZADD", "z", "2", "b", "1", "a"]),
        Value::Integer(2)
    );
    assert_eq!(
        run(&mut c, &db, &k, &["ZRANGE", "z", "0", "-1"]),
        Value::Array(vec![blob("a"), blob("b")])
    );
    assert_eq!(
        run(&mut c, &db, &k, &["ZPOPMIN", "z"]),
        Value::Array(vec![blob("a"), blob("1")])
    );
    assert!(
        matches!(run(&mut c, &db, &k, &["XADD", "st", "*", "f", "v"]), Value::Blob(id) if id.contains(&b'-'))
    );
    // An id below the stream's top is refused.
    assert!(
        matches!(run(&mut c, &db, &k, &["XADD", "st", "1-1", "f", "v"]), Value::SimpleError(e) if e.starts_with(b"ERR The ID"))
    );
    assert_eq!(run(&mut c, &db, &k, &["SELECT", "3"]), ok);
    assert_eq!(run(&mut c, &db, &k, &["DBSIZE"]), Value::Integer(0));
    assert_eq!(run(&mut c, &db, &k, &["SELECT", "0"]), ok);
    assert!(matches!(run(&mut c, &db, &k, &["DBSIZE"]), Value::Integer(n) if n >= 5));
    assert!(
        matches!(run(&mut c, &db, &k, &["INFO", "cpu"]), Value::Blob(t) if t.windows(12).any(|w| w == b"used_cpu_use"))
    );
    assert_eq!(run(&mut c, &db, &k, &["CLIENT", "SETNAME", "x"]), ok);
    assert_eq!(run(&mut c, &db, &k, &["CONFIG", "SET", "work-ns", "5"]), ok);
    assert_eq!(
        run(&mut c, &db, &k, &["CONFIG", "GET", "work-ns"]),
        Value::Array(vec![blob("work-ns"), blob("5")])
    );
    assert!(matches!(
        run(&mut c, &db, &k, &["CONFIG", "SET", "nope", "1"]),
        Value::SimpleError(_)
    ));
    assert!(
        matches!(run(&mut c, &db, &k, &["FOO"]), Value::SimpleError(e) if e.starts_with(b"ERR unknown command"))
    );
    assert_eq!(run(&mut c, &db, &k, &["FLUSHALL"]), ok);
    assert_eq!(run(&mut c, &db, &k, &["DBSIZE"]), Value::Integer(0));
    // RESP3 after HELLO 3: maps and doubles decode with proto's decoder.
    assert!(matches!(
        run(&mut c, &db, &k, &["HELLO", "3"]),
        Value::Map(_)
    ));
    run(&mut c, &db, &k, &["HSET", "h", "f", "v"]);
    assert!(matches!(run(&mut c, &db, &k, &["HGETALL", "h"]), Value::Map(m) if m.len() == 1));
    run(&mut c, &db, &k, &["ZADD", "z", "1.5", "a"]);
    assert!(
        matches!(run(&mut c, &db, &k, &["ZRANGE", "z", "0", "-1", "WITHSCORES"]), Value::Array(v) if matches!(&v[0], Value::Array(p) if p[1] == Value::Double(1.5)))
    );
    assert_eq!(run(&mut c, &db, &k, &["GET", "missing"]), Value::Null);
    let mut out = Vec::new();
    assert_eq!(
        c.feed(&db, &k, b"*1\r\n$4\r\nQUIT\r\n", &mut out),
        Feed::Close
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    /// Random bytes: no panic, and a protocol error closes the connection.
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let (db, k) = (Db::default(), knobs());
        let mut c = Conn::new(1);
        let mut out = Vec::new();
        let _ = c.feed(&db, &k, &bytes, &mut out);
    }

    /// Valid requests split at any points, with one byte changed: no panic; unchanged,
    /// the same replies as when sent whole.
    #[test]
    fn split_and_mutated_requests(cuts in proptest::collection::vec(0usize..200, 0..6),
                                  flip in proptest::option::of((0usize..200, any::<u8>()))) {
        let mut stream = Vec::new();
        for args in [&["SET", "k", "v"][..], &["GET", "k"], &["LPUSH", "l", "a", "b"], &["LRANGE", "l", "0", "-1"], &["ZADD", "z", "1", "m"], &["HSET", "h", "f", "v"], &["MGET", "k", "x"]] {
            resplab_proto::resp::encode::write_command(&mut stream, &args.iter().map(|a| a.as_bytes()).collect::<Vec<_>>());
        }
        let whole = {
            let (db, k) = (Db::default(), knobs());
            let mut out = Vec::new();
            Conn::new(1).feed(&db, &k, &stream, &mut out);
            out
        };
        let mut pieces = cuts.clone();
        pieces.retain(|c| *c < stream.len());
        pieces.sort_unstable();
        let (db, k) = (Db::default(), knobs());
        let mut c = Conn::new(1);
        let mut out = Vec::new();
        let mut at = 0;
        for p in pieces.iter().chain(std::iter::once(&stream.len())) {
            c.feed(&db, &k, &stream[at..*p], &mut out);
            at = *p;
        }
        prop_assert_eq!(&out, &whole);
        if let Some((i, b)) = flip {
            let mut bad = stream.clone();
            if i < bad.len() { bad[i] = b; }
            let (db, k) = (Db::default(), knobs());
            let mut out = Vec::new();
            let _ = Conn::new(1).feed(&db, &k, &bad, &mut out);
        }
    }
}

/// An inline request is kept waiting for its newline up to 64 KiB, as Redis keeps it;
/// one byte more is a protocol error that closes the connection (it was buffered up to
/// 512 MB).
#[test]
fn an_inline_request_without_a_newline_is_refused_past_64_kib() {
    let (db, k) = (Db::default(), knobs());
    let mut c = Conn::new(1);
    let mut out = Vec::new();
    let line = vec![b'a'; resplab_serve::INLINE_MAX];
    assert_eq!(resplab_serve::INLINE_MAX, 64 * 1024);
    assert_eq!(c.feed(&db, &k, &line, &mut out), Feed::Open);
    assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
    assert_eq!(c.feed(&db, &k, b"a", &mut out), Feed::Close);
    assert_eq!(out, b"-ERR Protocol error: too big inline request\r\n");
    // Its newline in time, an inline request of that size runs.
    let mut c = Conn::new(2);
    let mut out = Vec::new();
    let mut req = b"ECHO ".to_vec();
    req.resize(resplab_serve::INLINE_MAX, b'x');
    assert_eq!(c.feed(&db, &k, &req, &mut out), Feed::Open);
    assert_eq!(c.feed(&db, &k, b"\r\n", &mut out), Feed::Open);
    assert!(
        out.starts_with(b"$65531\r\nxxx"),
        "{}",
        String::from_utf8_lossy(&out[..20.min(out.len())])
    );
    // A multibulk request is not inline: its arguments may be as long as a bulk string.
    let mut c = Conn::new(3);
    let mut out = Vec::new();
    let mut req = b"*2\r\n$4\r\nECHO\r\n$100000\r\n".to_vec();
    req.resize(req.len() + 100_000, b'y');
    assert_eq!(c.feed(&db, &k, &req, &mut out), Feed::Open);
    assert!(out.is_empty());
    assert_eq!(c.feed(&db, &k, b"\r\n", &mut out), Feed::Open);
    assert!(out.starts_with(b"$100000\r\nyyy"));
}
