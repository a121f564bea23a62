//! String commands: GET, SET, GETEX, INCR, DECR, INCRBY, DECRBY, MSET, MGET.

use super::{int_arg, upper, Call};
use crate::db::{instant_at_unix_ms, live, Entry, Val};
use std::time::{Duration, Instant};

pub(super) fn get(c: &mut Call<'_>) {
    let mut sh = c.shard();
    match live(&mut sh, c.key()) {
        None => c.out.null(),
        Some(Entry {
            val: Val::Str(v), ..
        }) => {
            let v = v.clone();
            drop(sh);
            c.out.bulk(&v);
        }
        Some(_) => c.out.wrongtype(),
    }
}

/// The options of `SET`, as given.
#[derive(Default)]
struct SetOptions {
    nx: bool,
    xx: bool,
    get: bool,
    keepttl: bool,
    expires: Option<Instant>,
}

/// `SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]`.
pub(super) fn set(c: &mut Call<'_>) {
    let Some(opt) = set_options(c) else {
        return;
    };
    let mut sh = c.shard();
    let old = live(&mut sh, c.key()).map(|e| (e.val.clone(), e.expires));
    if opt.get && matches!(old, Some((ref v, _)) if !matches!(v, Val::Str(_))) {
        c.out.wrongtype();
        return;
    }
    let write = !(opt.nx && old.is_some() || opt.xx && old.is_none());
    if write {
        let keep = if opt.keepttl {
            old.as_ref().and_then(|(_, t)| *t)
        } else {
            opt.expires
        };
        sh.insert(
            c.key().to_vec(),
            Entry {
                val: Val::Str(c.args[2].to_vec()),
                expires: keep,
            },
        );
    }
    drop(sh);
    if opt.get {
        match old {
            Some((Val::Str(v), _)) => c.out.bulk(&v),
            _ => c.out.null(),
        }
    } else if write {
        c.out.ok();
    } else {
        c.out.null();
    }
}

/// The options of `SET`, or `None` with the error written.
fn set_options(c: &mut Call<'_>) -> Option<SetOptions> {
    let args = c.args;
    let mut o = SetOptions::default();
    let mut i = 3;
    while i < args.len() {
        let opt = upper(args[i]);
        match opt.as_str() {
            "NX" => o.nx = true,
            "XX" => o.xx = true,
            "GET" => o.get = true,
            "KEEPTTL" => o.keepttl = true,
            "EX" | "PX" | "EXAT" | "PXAT" => {
                let Some(t) = args.get(i + 1).and_then(|a| int_arg(a)) else {
                    c.out.syntax();
                    return None;
                };
                if t <= 0 {
                    c.out.err("ERR invalid expire time in 'set' command");
                    return None;
                }
                o.expires = Some(expiry(&opt, t as u64));
                i += 1;
            }
            _ => {
                c.out.syntax();
                return None;
            }
        }
        i += 1;
    }
    if (o.nx && o.xx) || (o.keepttl && o.expires.is_some()) {
        c.out.syntax();
        return None;
    }
    Some(o)
}

/// When a key given `EX`, `PX`, `EXAT` or `PXAT` (`unit`) with time `t` expires.
fn expiry(unit: &str, t: u64) -> Instant {
    match unit {
        "EX" => Instant::now() + Duration::from_secs(t),
        "PX" => Instant::now() + Duration::from_millis(t),
        "EXAT" => instant_at_unix_ms(t.saturating_mul(1000)),
        _ => instant_at_unix_ms(t),
    }
}

/// `GETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST]`.
pub(super) fn getex(c: &mut Call<'_>) {
    let args = c.args;
    // `Some(None)`: remove the expiry; `Some(Some(t))`: expire at t.
    let mut change: Option<Option<Instant>> = None;
    let mut i = 2;
    while i < args.len() {
        let opt = upper(args[i]);
        match opt.as_str() {
            "PERSIST" => change = Some(None),
            "EX" | "PX" | "EXAT" | "PXAT" => {
                let Some(t) = args.get(i + 1).and_then(|a| int_arg(a)).filter(|t| *t > 0) else {
                    c.out.syntax();
                    return;
                };
                change = Some(Some(expiry(&opt, t as u64)));
                i += 1;
            }
            _ => {
                c.out.syntax();
                return;
            }
        }
        i += 1;
    }
    let mut sh = c.shard();
    match live(&mut sh, c.key()) {
        None => c.out.null(),
        Some(e) => match &e.val {
            Val::Str(v) => {
                let v = v.clone();
                if let Some(t) = change {
                    e.expires = t;
                }
                drop(sh);
                c.out.bulk(&v);
            }
            _ => c.out.wrongtype(),
        },
    }
}

pub(super) fn incr(c: &mut Call<'_>) {
    add(c, Some(1));
}

pub(super) fn decr(c: &mut Call<'_>) {
    add(c, Some(-1));
}

pub(super) fn incrby(c: &mut Call<'_>) {
    let by = int_arg(c.args[2]);
    add(c, by);
}

pub(super) fn decrby(c: &mut Call<'_>) {
    let by = int_arg(c.args[2]).and_then(i64::checked_neg);
    add(c, by);
}

/// Adds `by` to the integer the key holds (0 when missing), keeping its expiry; `None`:
/// the increment was not an integer.
fn add(c: &mut Call<'_>, by: Option<i64>) {
    let Some(by) = by else {
        c.out.not_int();
        return;
    };
    let mut sh = c.shard();
    let cur = match live(&mut sh, c.key()) {
        None => Some(0),
        Some(Entry {
            val: Val::Str(v), ..
        }) => int_arg(v),
        Some(_) => {
            c.out.wrongtype();
            return;
        }
    };
    match cur.and_then(|v| v.checked_add(by)) {
        Some(v) => {
            let expires = sh.get(c.key()).and_then(|e| e.expires);
            sh.insert(
                c.key().to_vec(),
                Entry {
                    val: Val::Str(v.to_string().into_bytes()),
                    expires,
                },
            );
            c.out.int(v);
        }
        None if cur.is_none() => c.out.not_int(),
        None => c.out.err("ERR increment or decrement would overflow"),
    }
}

pub(super) fn mset(c: &mut Call<'_>) {
    for kv in c.args[1..].chunks(2) {
        c.db.shard(c.session.db, kv[0]).insert(
            kv[0].to_vec(),
            Entry {
                val: Val::Str(kv[1].to_vec()),
                expires: None,
            },
        );
    }
    c.out.ok();
}

pub(super) fn mget(c: &mut Call<'_>) {
    c.out.array(c.args.len() - 1);
    for k in &c.args[1..] {
        let mut sh = c.db.shard(c.session.db, k);
        match live(&mut sh, k) {
            Some(Entry {
                val: Val::Str(v), ..
            }) => {
                let v = v.clone();
                drop(sh);
                c.out.bulk(&v);
            }
            _ => c.out.null(),
        }
    }
}
