//! Hash commands: HSET, HMSET, HGET, HGETALL.

use super::{value_or_new, Call};
use crate::db::{live, Val};
use std::collections::HashMap;

/// `HSET key field value [field value ...]`: answers the number of new fields.
pub(super) fn hset(c: &mut Call<'_>) {
    if let Some(added) = set_fields(c) {
        c.out.int(added as i64);
    }
}

/// `HMSET`: as `HSET`, answering `OK`.
pub(super) fn hmset(c: &mut Call<'_>) {
    if set_fields(c).is_some() {
        c.out.ok();
    }
}

/// Sets the field-value pairs; returns how many fields were new, or `None` with the
/// error written.
fn set_fields(c: &mut Call<'_>) -> Option<usize> {
    let mut sh = c.shard();
    match value_or_new(&mut sh, c.key(), || Val::Hash(HashMap::new())) {
        Val::Hash(h) => Some(
            c.args[2..]
                .chunks(2)
                .filter(|fv| h.insert(fv[0].to_vec(), fv[1].to_vec()).is_none())
                .count(),
        ),
        _ => {
            c.out.wrongtype();
            None
        }
    }
}

pub(super) fn hget(c: &mut Call<'_>) {
    let mut sh = c.shard();
    match live(&mut sh, c.key()).map(|e| &e.val) {
        None => c.out.null(),
        Some(Val::Hash(h)) => match h.get(c.args[2]) {
            Some(v) => c.out.bulk(v),
            None => c.out.null(),
        },
        Some(_) => c.out.wrongtype(),
    }
}

pub(super) fn hgetall(c: &mut Call<'_>) {
    let mut sh = c.shard();
    match live(&mut sh, c.key()).map(|e| &e.val) {
        None => c.out.map(0),
        Some(Val::Hash(h)) => {
            c.out.map(h.len());
            for (f, v) in h {
                c.out.bulk(f);
                c.out.bulk(v);
            }
        }
        Some(_) => c.out.wrongtype(),
    }
}
