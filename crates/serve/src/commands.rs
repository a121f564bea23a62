//! Command execution: one request's arguments in, its reply appended as RESP2 or RESP3
//! bytes.

use crate::db::{
    instant_at_unix_ms, live, unix_ms, Db, Entry, Score, Stream, Val, ZSet, DATABASES,
};
use crate::Knobs;
use std::collections::{HashMap, HashSet, VecDeque};
use std::io::Write as _;
use std::time::{Duration, Instant};

/// What a connection remembers between commands.
#[derive(Debug, Default)]
pub struct Session {
    pub db: usize,
    pub resp3: bool,
    pub name: Option<Vec<u8>>,
    pub id: u64,
}

/// What the connection does after a command.
#[derive(Debug, PartialEq, Eq)]
pub enum After {
    Continue,
    /// Reply, then close (QUIT).
    Close,
}

/// Appends replies in the session's dialect.
struct Out<'a> {
    buf: &'a mut Vec<u8>,
    v3: bool,
}

impl Out<'_> {
    fn raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    fn ok(&mut self) {
        self.raw(b"+OK\r\n");
    }
    fn simple(&mut self, s: &str) {
        self.raw(b"+");
        self.raw(s.as_bytes());
        self.raw(b"\r\n");
    }
    fn err(&mut self, s: &str) {
        self.raw(b"-");
        // An error line cannot hold CR or LF.
        for b in s.bytes() {
            self.buf
                .push(if b == b'\r' || b == b'\n' { b' ' } else { b });
        }
        self.raw(b"\r\n");
    }
    fn int(&mut self, i: i64) {
        let _ = write!(self.buf, ":{i}\r\n");
    }
    fn bulk(&mut self, b: &[u8]) {
        let _ = write!(self.buf, "${}\r\n", b.len());
        self.raw(b);
        self.raw(b"\r\n");
    }
    fn null(&mut self) {
        if self.v3 {
            self.raw(b"_\r\n");
        } else {
            self.raw(b"$-1\r\n");
        }
    }
    fn null_array(&mut self) {
        if self.v3 {
            self.raw(b"_\r\n");
        } else {
            self.raw(b"*-1\r\n");
        }
    }
    fn array(&mut self, n: usize) {
        let _ = write!(self.buf, "*{n}\r\n");
    }
    fn set(&mut self, n: usize) {
        let _ = write!(self.buf, "{}{n}\r\n", if self.v3 { '~' } else { '*' });
    }
    fn map(&mut self, pairs: usize) {
        if self.v3 {
            let _ = write!(self.buf, "%{pairs}\r\n");
        } else {
            let _ = write!(self.buf, "*{}\r\n", 2 * pairs);
        }
    }
    fn double(&mut self, d: f64) {
        let text = resplab_proto::resp::encode::format_double(d);
        if self.v3 {
            let _ = write!(self.buf, ",{text}\r\n");
        } else {
            self.bulk(text.as_bytes());
        }
    }
    fn wrong_args(&mut self, cmd: &str) {
        self.err(&format!(
            "ERR wrong number of arguments for '{}' command",
            cmd.to_ascii_lowercase()
        ));
    }
    fn wrongtype(&mut self) {
        self.err("WRONGTYPE Operation against a key holding the wrong kind of value");
    }
    fn not_int(&mut self) {
        self.err("ERR value is not an integer or out of range");
    }
    fn syntax(&mut self) {
        self.err("ERR syntax error");
    }
}

fn upper(a: &[u8]) -> String {
    String::from_utf8_lossy(a).to_ascii_uppercase()
}

fn int_arg(a: &[u8]) -> Option<i64> {
    std::str::from_utf8(a).ok()?.parse().ok()
}

fn float_arg(a: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(a).ok()?;
    let v = match s.to_ascii_lowercase().as_str() {
        "inf" | "+inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        _ => s.parse().ok()?,
    };
    (!v.is_nan()).then_some(v)
}

/// Range indices as Redis takes them (negative from the end), clamped; `None` when empty.
fn range(start: i64, stop: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let s = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let e = if stop < 0 {
        len + stop
    } else {
        stop.min(len - 1)
    };
    (s <= e && s < len && e >= 0).then_some((s as usize, e as usize))
}

/// The optional count argument of the pop commands: `Ok(None)` when absent, `Err(())`
/// (with the error written) when it is not a number ≥ 0.
fn count_arg(o: &mut Out<'_>, a: Option<&&[u8]>) -> Result<Option<usize>, ()> {
    match a {
        None => Ok(None),
        Some(c) => match int_arg(c) {
            Some(c) if c >= 0 => Ok(Some(c as usize)),
            _ => {
                o.err("ERR value is out of range, must be positive");
                Err(())
            }
        },
    }
}

/// The value of `key`, created by `make` when the key is missing (or expired).
fn value_or_new<'a>(
    sh: &'a mut std::collections::HashMap<Vec<u8>, Entry>,
    key: &[u8],
    make: fn() -> Val,
) -> &'a mut Val {
    if live(sh, key).is_none() {
        sh.insert(
            key.to_vec(),
            Entry {
                val: make(),
                expires: None,
            },
        );
    }
    &mut sh
        .get_mut(key)
        .expect("the key was just inserted or is live")
        .val
}

/// Runs one command. Knob commands (`CONFIG SET work-ns ...`) change `knobs`.
pub fn execute(
    db: &Db,
    knobs: &Knobs,
    s: &mut Session,
    args: &[&[u8]],
    buf: &mut Vec<u8>,
) -> After {
    let mut o = Out { buf, v3: s.resp3 };
    let Some(first) = args.first() else {
        return After::Continue;
    };
    let cmd = upper(first);
    let n = args.len();
    let d = s.db;
    macro_rules! need {
        ($cond:expr) => {
            if !($cond) {
                o.wrong_args(&cmd);
                return After::Continue;
            }
        };
    }
    match cmd.as_str() {
        "PING" => match n {
            1 => o.simple("PONG"),
            2 => o.bulk(args[1]),
            _ => o.wrong_args(&cmd),
        },
        "ECHO" => {
            need!(n == 2);
            o.bulk(args[1]);
        }
        "QUIT" => {
            o.ok();
            return After::Close;
        }
        "SHUTDOWN" => {
            // As Redis: no reply, the connection closes and the server stops (nothing is
            // saved: there is nothing to save).
            knobs
                .shutdown
                .store(true, std::sync::atomic::Ordering::Relaxed);
            return After::Close;
        }
        "SELECT" => {
            need!(n == 2);
            match int_arg(args[1]) {
                Some(i) if (0..DATABASES as i64).contains(&i) => {
                    s.db = i as usize;
                    o.ok();
                }
                Some(_) => o.err("ERR DB index is out of range"),
                None => o.not_int(),
            }
        }
        "HELLO" => hello(&mut o, s, args),
        "AUTH" => {
            need!(n == 2 || n == 3);
            // No users are configured: any AUTH succeeds, as with `requirepass ""`.
            o.ok();
        }
        "CLIENT" => {
            need!(n >= 2);
            match upper(args[1]).as_str() {
                "SETNAME" if n == 3 => {
                    s.name = Some(args[2].to_vec());
                    o.ok();
                }
                "SETINFO" if n == 4 => o.ok(),
                "GETNAME" => match &s.name {
                    Some(nm) => {
                        let nm = nm.clone();
                        o.bulk(&nm)
                    }
                    None => o.null(),
                },
                "ID" => o.int(s.id as i64),
                _ => o.err("ERR unknown CLIENT subcommand or wrong number of arguments"),
            }
        }
        "COMMAND" => {
            // Answered minimally: tools ask on connect and accept an empty list.
            match args.get(1).map(|a| upper(a)).as_deref() {
                Some("COUNT") => o.int(COMMANDS.len() as i64),
                Some("DOCS") => o.map(0),
                _ => o.array(0),
            }
        }
        "CONFIG" => config(&mut o, knobs, args),
        "INFO" => info(&mut o, db, knobs, args),
        "DBSIZE" => o.int(db.size(d) as i64),
        "FLUSHALL" => {
            db.flush(None);
            o.ok();
        }
        "FLUSHDB" => {
            db.flush(Some(d));
            o.ok();
        }
        "SET" => set(&mut o, db, d, args),
        "GET" => {
            need!(n == 2);
            let mut sh = db.shard(d, args[1]);
            match live(&mut sh, args[1]) {
                None => o.null(),
                Some(Entry {
                    val: Val::Str(v), ..
                }) => {
                    let v = v.clone();
                    drop(sh);
                    o.bulk(&v);
                }
                Some(_) => o.wrongtype(),
            }
        }
        "GETEX" => getex(&mut o, db, d, args),
        "DEL" | "UNLINK" => {
            need!(n >= 2);
            let mut count = 0;
            for k in &args[1..] {
                let mut sh = db.shard(d, k);
                if live(&mut sh, k).is_some() {
                    sh.remove(*k);
                    count += 1;
                }
            }
            o.int(count);
        }
        "EXISTS" => {
            need!(n >= 2);
            let count = args[1..]
                .iter()
                .filter(|k| live(&mut db.shard(d, k), k).is_some())
                .count();
            o.int(count as i64);
        }
        "INCR" | "DECR" | "INCRBY" | "DECRBY" => {
            let by = match cmd.as_str() {
                "INCR" => {
                    need!(n == 2);
                    Some(1)
                }
                "DECR" => {
                    need!(n == 2);
                    Some(-1)
                }
                "INCRBY" => {
                    need!(n == 3);
                    int_arg(args[2])
                }
                _ => {
                    need!(n == 3);
                    int_arg(args[2]).and_then(|v| v.checked_neg())
                }
            };
            let Some(by) = by else {
                o.not_int();
                return After::Continue;
            };
            let mut sh = db.shard(d, args[1]);
            let cur = match live(&mut sh, args[1]) {
                None => Some(0),
                Some(Entry {
                    val: Val::Str(v), ..
                }) => int_arg(v),
                Some(_) => {
                    o.wrongtype();
                    return After::Continue;
                }
            };
            match cur.and_then(|c| c.checked_add(by)) {
                Some(v) => {
                    let expires = sh.get(args[1]).and_then(|e| e.expires);
                    sh.insert(
                        args[1].to_vec(),
                        Entry {
                            val: Val::Str(v.to_string().into_bytes()),
                            expires,
                        },
                    );
                    o.int(v);
                }
                None if cur.is_none() => o.not_int(),
                None => o.err("ERR increment or decrement would overflow"),
            }
        }
        "MSET" => {
            need!(n >= 3 && !n.is_multiple_of(2));
            for kv in args[1..].chunks(2) {
                db.shard(d, kv[0]).insert(
                    kv[0].to_vec(),
                    Entry {
                        val: Val::Str(kv[1].to_vec()),
                        expires: None,
                    },
                );
            }
            o.ok();
        }
        "MGET" => {
            need!(n >= 2);
            o.array(n - 1);
            for k in &args[1..] {
                let mut sh = db.shard(d, k);
                match live(&mut sh, k) {
                    Some(Entry {
                        val: Val::Str(v), ..
                    }) => {
                        let v = v.clone();
                        drop(sh);
                        o.bulk(&v);
                    }
                    _ => o.null(),
                }
            }
        }
        "EXPIRE" | "PEXPIRE" => {
            need!(n == 3);
            let Some(t) = int_arg(args[2]) else {
                o.not_int();
                return After::Continue;
            };
            let ms = if cmd == "EXPIRE" {
                t.saturating_mul(1000)
            } else {
                t
            };
            let mut sh = db.shard(d, args[1]);
            match live(&mut sh, args[1]) {
                None => o.int(0),
                Some(_) if ms <= 0 => {
                    sh.remove(args[1]);
                    o.int(1);
                }
                Some(e) => {
                    e.expires = Some(Instant::now() + Duration::from_millis(ms as u64));
                    o.int(1);
                }
            }
        }
        "TTL" | "PTTL" => {
            need!(n == 2);
            let mut sh = db.shard(d, args[1]);
            match live(&mut sh, args[1]) {
                None => o.int(-2),
                Some(Entry { expires: None, .. }) => o.int(-1),
                Some(Entry {
                    expires: Some(t), ..
                }) => {
                    let left = t.saturating_duration_since(Instant::now());
                    o.int(if cmd == "TTL" {
                        left.as_millis().div_ceil(1000) as i64
                    } else {
                        left.as_millis() as i64
                    });
                }
            }
        }
        "LPUSH" | "RPUSH" => {
            need!(n >= 3);
            let mut sh = db.shard(d, args[1]);
            match Some(value_or_new(
                &mut sh,
                args[1],
                || Val::List(VecDeque::new()),
            )) {
                Some(Val::List(l)) => {
                    for v in &args[2..] {
                        if cmd == "LPUSH" {
                            l.push_front(v.to_vec());
                        } else {
                            l.push_back(v.to_vec());
                        }
                    }
                    o.int(l.len() as i64);
                }
                _ => o.wrongtype(),
            }
        }
        "LPOP" | "RPOP" => {
            need!(n == 2 || n == 3);
            let Ok(count) = count_arg(&mut o, args.get(2)) else {
                return After::Continue;
            };
            let mut sh = db.shard(d, args[1]);
            let popped: Option<Vec<Vec<u8>>> = match live(&mut sh, args[1]).map(|e| &mut e.val) {
                None => None,
                Some(Val::List(l)) => {
                    let k = count.unwrap_or(1).min(l.len());
                    Some(
                        (0..k)
                            .filter_map(|_| {
                                if cmd == "LPOP" {
                                    l.pop_front()
                                } else {
                                    l.pop_back()
                                }
                            })
                            .collect(),
                    )
                }
                Some(_) => {
                    o.wrongtype();
                    return After::Continue;
                }
            };
            if matches!(live(&mut sh, args[1]).map(|e| &e.val), Some(Val::List(l)) if l.is_empty())
            {
                sh.remove(args[1]);
            }
            drop(sh);
            match (popped, count) {
                (None, None) => o.null(),
                (None, Some(_)) => o.null_array(),
                (Some(v), None) => match v.first() {
                    Some(x) => o.bulk(x),
                    None => o.null(),
                },
                (Some(v), Some(_)) => {
                    o.array(v.len());
                    for x in &v {
                        o.bulk(x);
                    }
                }
            }
        }
        "LRANGE" => {
            need!(n == 4);
            let (Some(a), Some(b)) = (int_arg(args[2]), int_arg(args[3])) else {
                o.not_int();
                return After::Continue;
            };
            let mut sh = db.shard(d, args[1]);
            match live(&mut sh, args[1]).map(|e| &e.val) {
                None => o.array(0),
                Some(Val::List(l)) => match range(a, b, l.len()) {
                    None => o.array(0),
                    Some((x, y)) => {
                        o.array(y - x + 1);
                        for v in l.range(x..=y) {
                            o.bulk(v);
                        }
                    }
                },
                Some(_) => o.wrongtype(),
            }
        }
        "SADD" => {
            need!(n >= 3);
            let mut sh = db.shard(d, args[1]);
            match Some(value_or_new(&mut sh, args[1], || Val::Set(HashSet::new()))) {
                Some(Val::Set(set)) => {
                    let added = args[2..].iter().filter(|m| set.insert(m.to_vec())).count();
                    o.int(added as i64);
                }
                _ => o.wrongtype(),
            }
        }
        "SPOP" => {
            need!(n == 2 || n == 3);
            let Ok(count) = count_arg(&mut o, args.get(2)) else {
                return After::Continue;
            };
            let mut sh = db.shard(d, args[1]);
            let popped: Vec<Vec<u8>> = match live(&mut sh, args[1]).map(|e| &mut e.val) {
                None => Vec::new(),
                Some(Val::Set(set)) => {
                    let take: Vec<Vec<u8>> = set.iter().take(count.unwrap_or(1)).cloned().collect();
                    for m in &take {
                        set.remove(m);
                    }
                    take
                }
                Some(_) => {
                    o.wrongtype();
                    return After::Continue;
                }
            };
            if matches!(live(&mut sh, args[1]).map(|e| &e.val), Some(Val::Set(x)) if x.is_empty()) {
                sh.remove(args[1]);
            }
            drop(sh);
            match count {
                None => match popped.first() {
                    Some(m) => o.bulk(m),
                    None => o.null(),
                },
                Some(_) => {
                    o.set(popped.len());
                    for m in &popped {
                        o.bulk(m);
                    }
                }
            }
        }
        "SMEMBERS" => {
            need!(n == 2);
            let mut sh = db.shard(d, args[1]);
            match live(&mut sh, args[1]).map(|e| &e.val) {
                None => o.set(0),
                Some(Val::Set(set)) => {
                    o.set(set.len());
                    for m in set {
                        o.bulk(m);
                    }
                }
                Some(_) => o.wrongtype(),
            }
        }
        "HSET" | "HMSET" => {
            need!(n >= 4 && n.is_multiple_of(2));
            let mut sh = db.shard(d, args[1]);
            match Some(value_or_new(&mut sh, args[1], || Val::Hash(HashMap::new()))) {
                Some(Val::Hash(h)) => {
                    let added = args[2..]
                        .chunks(2)
                        .filter(|fv| h.insert(fv[0].to_vec(), fv[1].to_vec()).is_none())
                        .count();
                    if cmd == "HSET" {
                        o.int(added as i64);
                    } else {
                        o.ok();
                    }
                }
                _ => o.wrongtype(),
            }
        }
        "HGET" => {
            need!(n == 3);
            let mut sh = db.shard(d, args[1]);
            match live(&mut sh, args[1]).map(|e| &e.val) {
                None => o.null(),
                Some(Val::Hash(h)) => match h.get(args[2]) {
                    Some(v) => o.bulk(v),
                    None => o.null(),
                },
                Some(_) => o.wrongtype(),
            }
        }
        "HGETALL" => {
            need!(n == 2);
            let mut sh = db.shard(d, args[1]);
            match live(&mut sh, args[1]).map(|e| &e.val) {
                None => o.map(0),
                Some(Val::Hash(h)) => {
                    o.map(h.len());
                    for (f, v) in h {
                        o.bulk(f);
                        o.bulk(v);
                    }
                }
                Some(_) => o.wrongtype(),
            }
        }
        "ZADD" => zadd(&mut o, db, d, args),
        "ZPOPMIN" => {
            need!(n == 2 || n == 3);
            let Ok(count) = count_arg(&mut o, args.get(2)) else {
                return After::Continue;
            };
            let count = count.unwrap_or(1);
            let mut sh = db.shard(d, args[1]);
            let popped: Vec<(Vec<u8>, f64)> = match live(&mut sh, args[1]).map(|e| &mut e.val) {
                None => Vec::new(),
                Some(Val::ZSet(z)) => {
                    let mut out = Vec::new();
                    while out.len() < count {
                        let Some((sc, m)) = z.by_score.pop_first() else {
                            break;
                        };
                        z.scores.remove(&m);
                        out.push((m, sc.0));
                    }
                    out
                }
                Some(_) => {
                    o.wrongtype();
                    return After::Continue;
                }
            };
            if matches!(live(&mut sh, args[1]).map(|e| &e.val), Some(Val::ZSet(z)) if z.scores.is_empty())
            {
                sh.remove(args[1]);
            }
            drop(sh);
            if s.resp3 && args.len() == 3 {
                o.array(popped.len());
                for (m, sc) in &popped {
                    o.array(2);
                    o.bulk(m);
                    o.double(*sc);
                }
            } else {
                o.array(2 * popped.len());
                for (m, sc) in &popped {
                    o.bulk(m);
                    o.double(*sc);
                }
            }
        }
        "ZRANGE" => {
            need!(n == 4 || n == 5);
            let with_scores = match args.get(4) {
                Some(a) if upper(a) == "WITHSCORES" => true,
                Some(_) => {
                    o.syntax();
                    return After::Continue;
                }
                None => false,
            };
            let (Some(a), Some(b)) = (int_arg(args[2]), int_arg(args[3])) else {
                o.not_int();
                return After::Continue;
            };
            let mut sh = db.shard(d, args[1]);
            match live(&mut sh, args[1]).map(|e| &e.val) {
                None => o.array(0),
                Some(Val::ZSet(z)) => match range(a, b, z.by_score.len()) {
                    None => o.array(0),
                    Some((x, y)) => {
                        let items: Vec<&(Score, Vec<u8>)> =
                            z.by_score.iter().skip(x).take(y - x + 1).collect();
                        if with_scores && s.resp3 {
                            o.array(items.len());
                            for (sc, m) in items {
                                o.array(2);
                                o.bulk(m);
                                o.double(sc.0);
                            }
                        } else {
                            o.array(items.len() * if with_scores { 2 } else { 1 });
                            for (sc, m) in items {
                                o.bulk(m);
                                if with_scores {
                                    o.double(sc.0);
                                }
                            }
                        }
                    }
                },
                Some(_) => o.wrongtype(),
            }
        }
        "XADD" => xadd(&mut o, db, d, args),
        _ => o.err(&format!(
            "ERR unknown command '{}', with args beginning with: {}",
            String::from_utf8_lossy(first),
            args[1..]
                .iter()
                .take(3)
                .map(|a| format!("'{}'", String::from_utf8_lossy(a)))
                .collect::<Vec<_>>()
                .join(" ")
        )),
    }
    After::Continue
}

/// The commands this server knows (for `COMMAND COUNT` and the documentation).
pub const COMMANDS: &[&str] = &[
    "PING", "ECHO", "QUIT", "SHUTDOWN", "SELECT", "HELLO", "AUTH", "CLIENT", "COMMAND", "CONFIG",
    "INFO", "DBSIZE", "FLUSHALL", "FLUSHDB", "SET", "GET", "GETEX", "DEL", "UNLINK", "EXISTS",
    "INCR", "DECR", "INCRBY", "DECRBY", "MSET", "MGET", "EXPIRE", "PEXPIRE", "TTL", "PTTL",
    "LPUSH", "RPUSH", "LPOP", "RPOP", "LRANGE", "SADD", "SPOP", "SMEMBERS", "HSET", "HMSET",
    "HGET", "HGETALL", "ZADD", "ZPOPMIN", "ZRANGE", "XADD",
];

fn hello(o: &mut Out<'_>, s: &mut Session, args: &[&[u8]]) {
    let mut i = 1;
    if let Some(v) = args.get(1) {
        match int_arg(v) {
            Some(2) => s.resp3 = false,
            Some(3) => s.resp3 = true,
            _ => {
                o.err("NOPROTO unsupported protocol version");
                return;
            }
        }
        i = 2;
    }
    while i < args.len() {
        match upper(args[i]).as_str() {
            "AUTH" if i + 2 < args.len() => i += 3,
            "SETNAME" if i + 1 < args.len() => {
                s.name = Some(args[i + 1].to_vec());
                i += 2;
            }
            _ => {
                o.syntax();
                return;
            }
        }
    }
    o.v3 = s.resp3;
    o.map(7);
    o.bulk(b"server");
    o.bulk(b"resplab-serve");
    o.bulk(b"version");
    o.bulk(env!("CARGO_PKG_VERSION").as_bytes());
    o.bulk(b"proto");
    o.int(if s.resp3 { 3 } else { 2 });
    o.bulk(b"id");
    o.int(s.id as i64);
    o.bulk(b"mode");
    o.bulk(b"standalone");
    o.bulk(b"role");
    o.bulk(b"master");
    o.bulk(b"modules");
    o.array(0);
}

fn set(o: &mut Out<'_>, db: &Db, d: usize, args: &[&[u8]]) {
    if args.len() < 3 {
        o.wrong_args("SET");
        return;
    }
    let (mut nx, mut xx, mut get, mut keepttl) = (false, false, false, false);
    let mut expires: Option<Instant> = None;
    let mut i = 3;
    while i < args.len() {
        let opt = upper(args[i]);
        match opt.as_str() {
            "NX" => nx = true,
            "XX" => xx = true,
            "GET" => get = true,
            "KEEPTTL" => keepttl = true,
            "EX" | "PX" | "EXAT" | "PXAT" => {
                let Some(t) = args.get(i + 1).and_then(|a| int_arg(a)) else {
                    o.syntax();
                    return;
                };
                if t <= 0 {
                    o.err("ERR invalid expire time in 'set' command");
                    return;
                }
                let t = t as u64;
                expires = Some(match opt.as_str() {
                    "EX" => Instant::now() + Duration::from_secs(t),
                    "PX" => Instant::now() + Duration::from_millis(t),
                    "EXAT" => instant_at_unix_ms(t.saturating_mul(1000)),
                    _ => instant_at_unix_ms(t),
                });
                i += 1;
            }
            _ => {
                o.syntax();
                return;
            }
        }
        i += 1;
    }
    if (nx && xx) || (keepttl && expires.is_some()) {
        o.syntax();
        return;
    }
    let mut sh = db.shard(d, args[1]);
    let old = live(&mut sh, args[1]).map(|e| (e.val.clone(), e.expires));
    if get && matches!(old, Some((ref v, _)) if !matches!(v, Val::Str(_))) {
        o.wrongtype();
        return;
    }
    let write = !(nx && old.is_some() || xx && old.is_none());
    if write {
        let keep = if keepttl {
            old.as_ref().and_then(|(_, t)| *t)
        } else {
            expires
        };
        sh.insert(
            args[1].to_vec(),
            Entry {
                val: Val::Str(args[2].to_vec()),
                expires: keep,
            },
        );
    }
    drop(sh);
    if get {
        match old {
            Some((Val::Str(v), _)) => o.bulk(&v),
            _ => o.null(),
        }
    } else if write {
        o.ok();
    } else {
        o.null();
    }
}

fn getex(o: &mut Out<'_>, db: &Db, d: usize, args: &[&[u8]]) {
    if args.len() < 2 {
        o.wrong_args("GETEX");
        return;
    }
    let mut change: Option<Option<Instant>> = None;
    let mut i = 2;
    while i < args.len() {
        let opt = upper(args[i]);
        match opt.as_str() {
            "PERSIST" => change = Some(None),
            "EX" | "PX" | "EXAT" | "PXAT" => {
                let Some(t) = args.get(i + 1).and_then(|a| int_arg(a)).filter(|t| *t > 0) else {
                    o.syntax();
                    return;
                };
                let t = t as u64;
                change = Some(Some(match opt.as_str() {
                    "EX" => Instant::now() + Duration::from_secs(t),
                    "PX" => Instant::now() + Duration::from_millis(t),
                    "EXAT" => instant_at_unix_ms(t.saturating_mul(1000)),
                    _ => instant_at_unix_ms(t),
                }));
                i += 1;
            }
            _ => {
                o.syntax();
                return;
            }
        }
        i += 1;
    }
    let mut sh = db.shard(d, args[1]);
    match live(&mut sh, args[1]) {
        None => o.null(),
        Some(e) => match &e.val {
            Val::Str(v) => {
                let v = v.clone();
                if let Some(c) = change {
                    e.expires = c;
                }
                drop(sh);
                o.bulk(&v);
            }
            _ => o.wrongtype(),
        },
    }
}

fn zadd(o: &mut Out<'_>, db: &Db, d: usize, args: &[&[u8]]) {
    let (mut nx, mut xx, mut ch) = (false, false, false);
    let mut i = 2;
    while i < args.len() {
        match upper(args[i]).as_str() {
            "NX" => nx = true,
            "XX" => xx = true,
            "CH" => ch = true,
            _ => break,
        }
        i += 1;
    }
    let rest = &args[i.min(args.len())..];
    if args.len() < 4 || rest.is_empty() || !rest.len().is_multiple_of(2) {
        if args.len() < 4 {
            o.wrong_args("ZADD");
        } else {
            o.syntax();
        }
        return;
    }
    if nx && xx {
        o.err("ERR XX and NX options at the same time are not compatible");
        return;
    }
    let mut pairs = Vec::with_capacity(rest.len() / 2);
    for sm in rest.chunks(2) {
        match float_arg(sm[0]) {
            Some(sc) => pairs.push((sc, sm[1])),
            None => {
                o.err("ERR value is not a valid float");
                return;
            }
        }
    }
    let mut sh = db.shard(d, args[1]);
    match Some(value_or_new(
        &mut sh,
        args[1],
        || Val::ZSet(ZSet::default()),
    )) {
        Some(Val::ZSet(z)) => {
            let (mut added, mut changed) = (0i64, 0i64);
            for (sc, m) in pairs {
                match z.scores.get(m).copied() {
                    Some(old) => {
                        if nx || old == sc {
                            continue;
                        }
                        z.by_score.remove(&(Score(old), m.to_vec()));
                        z.by_score.insert((Score(sc), m.to_vec()));
                        z.scores.insert(m.to_vec(), sc);
                        changed += 1;
                    }
                    None => {
                        if xx {
                            continue;
                        }
                        z.by_score.insert((Score(sc), m.to_vec()));
                        z.scores.insert(m.to_vec(), sc);
                        added += 1;
                    }
                }
            }
            let empty = z.scores.is_empty();
            if empty {
                sh.remove(args[1]);
            }
            o.int(if ch { added + changed } else { added });
        }
        _ => o.wrongtype(),
    }
}

fn parse_id(a: &[u8]) -> Option<(u64, Option<u64>)> {
    let s = std::str::from_utf8(a).ok()?;
    match s.split_once('-') {
        Some((ms, "*")) => Some((ms.parse().ok()?, None)),
        Some((ms, seq)) => Some((ms.parse().ok()?, Some(seq.parse().ok()?))),
        None => Some((s.parse().ok()?, Some(0))),
    }
}

fn xadd(o: &mut Out<'_>, db: &Db, d: usize, args: &[&[u8]]) {
    let mut i = 2;
    let mut nomkstream = false;
    let mut maxlen: Option<usize> = None;
    while i < args.len() {
        match upper(args[i]).as_str() {
            "NOMKSTREAM" => {
                nomkstream = true;
                i += 1;
            }
            "MAXLEN" => {
                let mut j = i + 1;
                if args.get(j).is_some_and(|a| *a == b"~" || *a == b"=") {
                    j += 1;
                }
                match args.get(j).and_then(|a| int_arg(a)).filter(|v| *v >= 0) {
                    Some(v) => maxlen = Some(v as usize),
                    None => {
                        o.syntax();
                        return;
                    }
                }
                i = j + 1;
            }
            _ => break,
        }
    }
    if args.len() < i + 3 || !(args.len() - i - 1).is_multiple_of(2) {
        o.wrong_args("XADD");
        return;
    }
    let id_arg = args[i];
    let fields: Vec<Vec<u8>> = args[i + 1..].iter().map(|a| a.to_vec()).collect();
    let mut sh = db.shard(d, args[1]);
    if live(&mut sh, args[1]).is_none() {
        if nomkstream {
            o.null();
            return;
        }
        sh.insert(
            args[1].to_vec(),
            Entry {
                val: Val::Stream(Stream::default()),
                expires: None,
            },
        );
    }
    let Some(Val::Stream(st)) = sh.get_mut(args[1]).map(|e| &mut e.val) else {
        o.wrongtype();
        return;
    };
    let id = if id_arg == b"*" {
        let ms = unix_ms().max(st.last.0);
        if ms == st.last.0 && st.entries.is_empty() && st.last == (0, 0) {
            (ms, 0)
        } else if ms == st.last.0 {
            (ms, st.last.1 + 1)
        } else {
            (ms, 0)
        }
    } else {
        match parse_id(id_arg) {
            Some((ms, Some(seq))) => (ms, seq),
            Some((ms, None)) => {
                if ms == st.last.0 {
                    (ms, st.last.1 + 1)
                } else {
                    (ms, 0)
                }
            }
            None => {
                o.err("ERR Invalid stream ID specified as stream command argument");
                return;
            }
        }
    };
    if id == (0, 0) || id <= st.last && !(st.last == (0, 0) && st.entries.is_empty() && id > (0, 0))
    {
        o.err("ERR The ID specified in XADD is equal or smaller than the target stream top item");
        return;
    }
    st.last = id;
    st.entries.push_back((id, fields));
    if let Some(m) = maxlen {
        while st.entries.len() > m {
            st.entries.pop_front();
        }
    }
    drop(sh);
    o.bulk(format!("{}-{}", id.0, id.1).as_bytes());
}

fn config(o: &mut Out<'_>, knobs: &Knobs, args: &[&[u8]]) {
    let Some(sub) = args.get(1).map(|a| upper(a)) else {
        o.wrong_args("CONFIG");
        return;
    };
    match sub.as_str() {
        "GET" if args.len() >= 3 => {
            let mut pairs: Vec<(String, String)> = Vec::new();
            for pat in &args[2..] {
                let pat = String::from_utf8_lossy(pat).to_ascii_lowercase();
                for (name, value) in knobs.all().into_iter().chain([
                    ("save".to_string(), String::new()),
                    ("appendonly".to_string(), "no".to_string()),
                ]) {
                    if glob(&pat, &name) && !pairs.iter().any(|(n, _)| *n == name) {
                        pairs.push((name, value));
                    }
                }
            }
            o.map(pairs.len());
            for (n, v) in pairs {
                o.bulk(n.as_bytes());
                o.bulk(v.as_bytes());
            }
        }
        "SET" if args.len() >= 4 && args.len().is_multiple_of(2) => {
            for nv in args[2..].chunks(2) {
                let name = String::from_utf8_lossy(nv[0]).to_ascii_lowercase();
                let value = String::from_utf8_lossy(nv[1]);
                if let Err(e) = knobs.set(&name, &value) {
                    o.err(&format!(
                        "ERR CONFIG SET failed (possibly related to argument '{name}') - {e}"
                    ));
                    return;
                }
            }
            o.ok();
        }
        "RESETSTAT" => o.ok(),
        _ => o.err("ERR unknown CONFIG subcommand or wrong number of arguments"),
    }
}

/// `*` and `?` patterns, as CONFIG GET takes them.
fn glob(pat: &str, s: &str) -> bool {
    fn m(p: &[u8], s: &[u8]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => m(&p[1..], s) || (!s.is_empty() && m(p, &s[1..])),
            (Some(b'?'), Some(_)) => m(&p[1..], &s[1..]),
            (Some(a), Some(b)) if a == b => m(&p[1..], &s[1..]),
            _ => false,
        }
    }
    m(pat.as_bytes(), s.as_bytes())
}

fn info(o: &mut Out<'_>, db: &Db, knobs: &Knobs, args: &[&[u8]]) {
    let want: Vec<String> = args[1..]
        .iter()
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
        .collect();
    let all = want.is_empty()
        || want
            .iter()
            .any(|w| w == "all" || w == "everything" || w == "default");
    let has = |s: &str| all || want.iter().any(|w| w == s);
    let mut text = String::new();
    if has("server") {
        text.push_str(&format!(
            "# Server\r\nserver_name:resplab-serve\r\nresplab_version:{}\r\nprocess_id:{}\r\nthreads:{}\r\nuptime_in_seconds:{}\r\n\r\n",
            env!("CARGO_PKG_VERSION"),
            std::process::id(),
            knobs.threads,
            knobs.started.elapsed().as_secs()
        ));
    }
    if has("stats") {
        text.push_str(&format!(
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\n\r\n",
            knobs.connections.load(std::sync::atomic::Ordering::Relaxed),
            knobs.commands.load(std::sync::atomic::Ordering::Relaxed)
        ));
    }
    if has("cpu") {
        let (user, sys) = crate::process_cpu();
        text.push_str(&format!(
            "# CPU\r\nused_cpu_sys:{sys:.6}\r\nused_cpu_user:{user:.6}\r\n\r\n"
        ));
    }
    if has("keyspace") {
        text.push_str("# Keyspace\r\n");
        for i in 0..DATABASES {
            let n = db.size(i);
            if n > 0 {
                text.push_str(&format!("db{i}:keys={n},expires=0,avg_ttl=0\r\n"));
            }
        }
    }
    if o.v3 {
        let _ = write!(o.buf, "={}\r\ntxt:", text.len() + 4);
        o.raw(text.as_bytes());
        o.raw(b"\r\n");
    } else {
        o.bulk(text.as_bytes());
    }
}
