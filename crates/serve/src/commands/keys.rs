//! Commands on keys of any type: DEL, UNLINK, EXISTS, EXPIRE, PEXPIRE, TTL, PTTL.

use super::{int_arg, Call};
use crate::db::{live, Entry};
use std::time::{Duration, Instant};

/// `DEL` and `UNLINK` (which frees nothing later: there is nothing to free later).
pub(super) fn del(c: &mut Call<'_>) {
    let mut count = 0;
    for k in &c.args[1..] {
        let mut sh = c.db.shard(c.session.db, k);
        if live(&mut sh, k).is_some() {
            sh.remove(*k);
            count += 1;
        }
    }
    c.out.int(count);
}

pub(super) fn exists(c: &mut Call<'_>) {
    let d = c.session.db;
    let count = c.args[1..]
        .iter()
        .filter(|k| live(&mut c.db.shard(d, k), k).is_some())
        .count();
    c.out.int(count as i64);
}

pub(super) fn expire(c: &mut Call<'_>) {
    expire_in(c, 1000);
}

pub(super) fn pexpire(c: &mut Call<'_>) {
    expire_in(c, 1);
}

/// Sets the key's expiry to its time argument × `unit_ms` from now; a time ≤ 0 deletes
/// the key.
fn expire_in(c: &mut Call<'_>, unit_ms: i64) {
    let Some(t) = int_arg(c.args[2]) else {
        c.out.not_int();
        return;
    };
    let ms = t.saturating_mul(unit_ms);
    let mut sh = c.shard();
    match live(&mut sh, c.key()) {
        None => c.out.int(0),
        Some(_) if ms <= 0 => {
            sh.remove(c.key());
            c.out.int(1);
        }
        Some(e) => {
            e.expires = Some(Instant::now() + Duration::from_millis(ms as u64));
            c.out.int(1);
        }
    }
}

pub(super) fn ttl(c: &mut Call<'_>) {
    time_to_live(c, |left| left.as_millis().div_ceil(1000) as i64);
}

pub(super) fn pttl(c: &mut Call<'_>) {
    time_to_live(c, |left| left.as_millis() as i64);
}

/// -2 for a missing key, -1 for one without expiry, else the time left in `unit`.
fn time_to_live(c: &mut Call<'_>, unit: fn(Duration) -> i64) {
    let mut sh = c.shard();
    match live(&mut sh, c.key()) {
        None => c.out.int(-2),
        Some(Entry { expires: None, .. }) => c.out.int(-1),
        Some(Entry {
            expires: Some(t), ..
        }) => c.out.int(unit(t.saturating_duration_since(Instant::now()))),
    }
}
