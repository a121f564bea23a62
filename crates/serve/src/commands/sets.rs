//! Set commands: SADD, SPOP, SMEMBERS.

use super::{count_arg, value_or_new, Call};
use crate::db::{live, Val};
use std::collections::HashSet;

pub(super) fn sadd(c: &mut Call<'_>) {
    let mut sh = c.shard();
    match value_or_new(&mut sh, c.key(), || Val::Set(HashSet::new())) {
        Val::Set(set) => {
            let added = c.args[2..]
                .iter()
                .filter(|m| set.insert(m.to_vec()))
                .count();
            c.out.int(added as i64);
        }
        _ => c.out.wrongtype(),
    }
}

/// `SPOP key [count]`: one member (or null), or with a count a set. A set left empty is
/// deleted.
pub(super) fn spop(c: &mut Call<'_>) {
    let Ok(count) = count_arg(&mut c.out, c.args.get(2)) else {
        return;
    };
    let mut sh = c.shard();
    let popped: Vec<Vec<u8>> = match live(&mut sh, c.key()).map(|e| &mut e.val) {
        None => Vec::new(),
        Some(Val::Set(set)) => {
            let take: Vec<Vec<u8>> = set.iter().take(count.unwrap_or(1)).cloned().collect();
            for m in &take {
                set.remove(m);
            }
            take
        }
        Some(_) => {
            c.out.wrongtype();
            return;
        }
    };
    if matches!(live(&mut sh, c.key()).map(|e| &e.val), Some(Val::Set(x)) if x.is_empty()) {
        sh.remove(c.key());
    }
    drop(sh);
    match count {
        None => match popped.first() {
            Some(m) => c.out.bulk(m),
            None => c.out.null(),
        },
        Some(_) => {
            c.out.set(popped.len());
            for m in &popped {
                c.out.bulk(m);
            }
        }
    }
}

pub(super) fn smembers(c: &mut Call<'_>) {
    let mut sh = c.shard();
    match live(&mut sh, c.key()).map(|e| &e.val) {
        None => c.out.set(0),
        Some(Val::Set(set)) => {
            c.out.set(set.len());
            for m in set {
                c.out.bulk(m);
            }
        }
        Some(_) => c.out.wrongtype(),
    }
}
