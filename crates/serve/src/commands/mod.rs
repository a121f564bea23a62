//! Command execution: one request's arguments in, its reply appended as RESP2 or RESP3
//! bytes.
//!
//! `TABLE` names every command with its arity and its handler; [`execute`] looks the
//! name up (case-insensitively), answers a wrong argument count for the command and
//! otherwise hands a `Call` to the handler. The handlers live by family: the
//! connection's own commands, server administration and the knobs, keys, strings, lists,
//! sets, hashes, sorted sets and streams. A handler writes exactly one reply (or none, for
//! `SHUTDOWN`) through `reply::Out`, which knows the session's dialect.

mod admin;
mod connection;
mod hashes;
mod keys;
mod lists;
mod reply;
mod sets;
mod streams;
mod strings;
mod zsets;

use crate::db::{live, Db, Entry, Shard, Val};
use crate::Knobs;
use reply::Out;
use std::sync::MutexGuard;

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

/// Runs one command. Knob commands (`CONFIG SET work-ns ...`) change `knobs`.
pub fn execute(
    db: &Db,
    knobs: &Knobs,
    session: &mut Session,
    args: &[&[u8]],
    buf: &mut Vec<u8>,
) -> After {
    let Some(name) = args.first() else {
        return After::Continue;
    };
    let mut call = Call {
        db,
        knobs,
        out: Out {
            buf,
            v3: session.resp3,
        },
        session,
        args,
        after: After::Continue,
    };
    match lookup(name) {
        Some(cmd) if cmd.arity.admits(args.len()) => {
            crate::cost::charge(knobs, cmd.name);
            (cmd.run)(&mut call)
        }
        Some(cmd) => call.out.wrong_args(cmd.name),
        None => unknown(&mut call.out, args),
    }
    call.after
}

/// The names of the commands this server knows (`COMMAND COUNT` counts them).
pub fn names() -> impl Iterator<Item = &'static str> {
    TABLE.iter().map(|c| c.name)
}

/// One command being run: where, with which arguments, and where its reply goes.
#[derive(Debug)]
pub(crate) struct Call<'a> {
    pub(crate) db: &'a Db,
    pub(crate) knobs: &'a Knobs,
    pub(crate) session: &'a mut Session,
    /// The command's words, its name first; their count passed the table's arity.
    pub(crate) args: &'a [&'a [u8]],
    pub(crate) out: Out<'a>,
    /// What the connection does once the reply is written.
    pub(crate) after: After,
}

impl<'a> Call<'a> {
    /// The key a single-key command works on (its first argument).
    fn key(&self) -> &'a [u8] {
        self.args[1]
    }

    /// The shard of the session's database holding the key, locked.
    fn shard(&self) -> MutexGuard<'a, Shard> {
        self.db.shard(self.session.db, self.args[1])
    }

    /// The start and stop indexes of a range command (its second and third arguments);
    /// `None`, the integer error sent, when either is not an integer.
    fn index_args(&mut self) -> Option<(i64, i64)> {
        let pair = int_arg(self.args[2]).zip(int_arg(self.args[3]));
        if pair.is_none() {
            self.out.not_int();
        }
        pair
    }
}

/// How many words (the command's name included) a command takes.
#[derive(Debug, Clone, Copy)]
enum Arity {
    /// Any count: the handler checks what it needs.
    Any,
    Exactly(usize),
    /// From the first to the second, both included.
    Between(usize, usize),
    AtLeast(usize),
    /// That many words, then one or more pairs (`MSET key value ...`).
    Pairs(usize),
}

impl Arity {
    fn admits(self, n: usize) -> bool {
        match self {
            Arity::Any => true,
            Arity::Exactly(k) => n == k,
            Arity::Between(lo, hi) => (lo..=hi).contains(&n),
            Arity::AtLeast(k) => n >= k,
            Arity::Pairs(first) => n >= first + 2 && (n - first).is_multiple_of(2),
        }
    }
}

/// A command: its name (upper case), arity and handler.
#[derive(Debug)]
struct Command {
    name: &'static str,
    arity: Arity,
    run: fn(&mut Call<'_>),
}

const fn cmd(name: &'static str, arity: Arity, run: fn(&mut Call<'_>)) -> Command {
    Command { name, arity, run }
}

use Arity::{AtLeast, Between, Exactly, Pairs};

/// Every command this server knows.
const TABLE: &[Command] = &[
    cmd("PING", Between(1, 2), connection::ping),
    cmd("ECHO", Exactly(2), connection::echo),
    cmd("QUIT", Arity::Any, connection::quit),
    cmd("SHUTDOWN", Arity::Any, admin::shutdown),
    cmd("SELECT", Exactly(2), connection::select),
    cmd("HELLO", Arity::Any, connection::hello),
    cmd("AUTH", Between(2, 3), connection::auth),
    cmd("CLIENT", AtLeast(2), connection::client),
    cmd("COMMAND", Arity::Any, admin::command),
    cmd("CONFIG", AtLeast(2), admin::config),
    cmd("INFO", Arity::Any, admin::info),
    cmd("DBSIZE", Arity::Any, admin::dbsize),
    cmd("FLUSHALL", Arity::Any, admin::flushall),
    cmd("FLUSHDB", Arity::Any, admin::flushdb),
    cmd("SET", AtLeast(3), strings::set),
    cmd("GET", Exactly(2), strings::get),
    cmd("GETEX", AtLeast(2), strings::getex),
    cmd("DEL", AtLeast(2), keys::del),
    cmd("UNLINK", AtLeast(2), keys::del),
    cmd("EXISTS", AtLeast(2), keys::exists),
    cmd("INCR", Exactly(2), strings::incr),
    cmd("DECR", Exactly(2), strings::decr),
    cmd("INCRBY", Exactly(3), strings::incrby),
    cmd("DECRBY", Exactly(3), strings::decrby),
    cmd("MSET", Pairs(1), strings::mset),
    cmd("MGET", AtLeast(2), strings::mget),
    cmd("EXPIRE", Exactly(3), keys::expire),
    cmd("PEXPIRE", Exactly(3), keys::pexpire),
    cmd("TTL", Exactly(2), keys::ttl),
    cmd("PTTL", Exactly(2), keys::pttl),
    cmd("LPUSH", AtLeast(3), lists::lpush),
    cmd("RPUSH", AtLeast(3), lists::rpush),
    cmd("LPOP", Between(2, 3), lists::lpop),
    cmd("RPOP", Between(2, 3), lists::rpop),
    cmd("LRANGE", Exactly(4), lists::lrange),
    cmd("SADD", AtLeast(3), sets::sadd),
    cmd("SPOP", Between(2, 3), sets::spop),
    cmd("SMEMBERS", Exactly(2), sets::smembers),
    cmd("HSET", Pairs(2), hashes::hset),
    cmd("HMSET", Pairs(2), hashes::hmset),
    cmd("HGET", Exactly(3), hashes::hget),
    cmd("HGETALL", Exactly(2), hashes::hgetall),
    cmd("ZADD", AtLeast(4), zsets::zadd),
    cmd("ZPOPMIN", Between(2, 3), zsets::zpopmin),
    cmd("ZRANGE", Between(4, 5), zsets::zrange),
    // Its arity depends on its options: checked by the handler, after them.
    cmd("XADD", Arity::Any, streams::xadd),
];

fn lookup(name: &[u8]) -> Option<&'static Command> {
    TABLE
        .iter()
        .find(|c| name.eq_ignore_ascii_case(c.name.as_bytes()))
}

fn unknown(o: &mut Out<'_>, args: &[&[u8]]) {
    o.err(&format!(
        "ERR unknown command '{}', with args beginning with: {}",
        String::from_utf8_lossy(args[0]),
        args[1..]
            .iter()
            .take(3)
            .map(|a| format!("'{}'", String::from_utf8_lossy(a)))
            .collect::<Vec<_>>()
            .join(" ")
    ));
}

/// An argument in upper case (for subcommands and options).
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
fn value_or_new<'a>(sh: &'a mut Shard, key: &[u8], make: fn() -> Val) -> &'a mut Val {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_upper_case_and_listed_once() {
        for (i, c) in TABLE.iter().enumerate() {
            assert_eq!(c.name, c.name.to_ascii_uppercase());
            assert!(
                TABLE[..i].iter().all(|d| d.name != c.name),
                "{} twice",
                c.name
            );
        }
        assert_eq!(names().count(), 46);
    }

    #[test]
    fn arities_admit_what_they_say() {
        assert!(Between(1, 2).admits(1) && Between(1, 2).admits(2));
        assert!(!Between(1, 2).admits(3) && !Between(1, 2).admits(0));
        // MSET k v [k v ...]: an odd count from 3.
        assert!(Pairs(1).admits(3) && Pairs(1).admits(5));
        assert!(!Pairs(1).admits(1) && !Pairs(1).admits(2) && !Pairs(1).admits(4));
        // HSET key f v [f v ...]: an even count from 4.
        assert!(Pairs(2).admits(4) && Pairs(2).admits(6));
        assert!(!Pairs(2).admits(2) && !Pairs(2).admits(3) && !Pairs(2).admits(5));
        assert!(AtLeast(2).admits(9) && !AtLeast(2).admits(1));
        assert!(Exactly(2).admits(2) && !Exactly(2).admits(3));
    }

    #[test]
    fn names_are_found_in_any_case() {
        assert_eq!(lookup(b"get").map(|c| c.name), Some("GET"));
        assert_eq!(lookup(b"zPopMin").map(|c| c.name), Some("ZPOPMIN"));
        assert!(lookup(b"GETX").is_none() && lookup(b"\xffGET").is_none());
    }
}
