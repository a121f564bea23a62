//! List commands: LPUSH, RPUSH, LPOP, RPOP, LRANGE.

use super::{count_arg, range, value_or_new, Call};
use crate::db::{live, Val};
use std::collections::VecDeque;

/// Which end of a list a command works on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Left,
    Right,
}

pub(super) fn lpush(c: &mut Call<'_>) {
    push(c, End::Left);
}

pub(super) fn rpush(c: &mut Call<'_>) {
    push(c, End::Right);
}

fn push(c: &mut Call<'_>, end: End) {
    let mut sh = c.shard();
    match value_or_new(&mut sh, c.key(), || Val::List(VecDeque::new())) {
        Val::List(l) => {
            for v in &c.args[2..] {
                match end {
                    End::Left => l.push_front(v.to_vec()),
                    End::Right => l.push_back(v.to_vec()),
                }
            }
            c.out.int(l.len() as i64);
        }
        _ => c.out.wrongtype(),
    }
}

pub(super) fn lpop(c: &mut Call<'_>) {
    pop(c, End::Left);
}

pub(super) fn rpop(c: &mut Call<'_>) {
    pop(c, End::Right);
}

/// `LPOP`/`RPOP key [count]`: one element (or null), or with a count an array (or a
/// null array for a missing key). A list left empty is deleted.
fn pop(c: &mut Call<'_>, end: End) {
    let Ok(count) = count_arg(&mut c.out, c.args.get(2)) else {
        return;
    };
    let mut sh = c.shard();
    let popped: Option<Vec<Vec<u8>>> = match live(&mut sh, c.key()).map(|e| &mut e.val) {
        None => None,
        Some(Val::List(l)) => {
            let k = count.unwrap_or(1).min(l.len());
            Some(
                (0..k)
                    .filter_map(|_| match end {
                        End::Left => l.pop_front(),
                        End::Right => l.pop_back(),
                    })
                    .collect(),
            )
        }
        Some(_) => {
            c.out.wrongtype();
            return;
        }
    };
    if matches!(live(&mut sh, c.key()).map(|e| &e.val), Some(Val::List(l)) if l.is_empty()) {
        sh.remove(c.key());
    }
    drop(sh);
    match (popped, count) {
        (None, None) => c.out.null(),
        (None, Some(_)) => c.out.null_array(),
        (Some(v), None) => match v.first() {
            Some(x) => c.out.bulk(x),
            None => c.out.null(),
        },
        (Some(v), Some(_)) => {
            c.out.array(v.len());
            for x in &v {
                c.out.bulk(x);
            }
        }
    }
}

pub(super) fn lrange(c: &mut Call<'_>) {
    let Some((a, b)) = c.index_args() else {
        return;
    };
    let mut sh = c.shard();
    match live(&mut sh, c.key()).map(|e| &e.val) {
        None => c.out.array(0),
        Some(Val::List(l)) => match range(a, b, l.len()) {
            None => c.out.array(0),
            Some((x, y)) => {
                c.out.array(y - x + 1);
                for v in l.range(x..=y) {
                    c.out.bulk(v);
                }
            }
        },
        Some(_) => c.out.wrongtype(),
    }
}
