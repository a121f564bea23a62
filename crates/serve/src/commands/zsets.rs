//! Sorted-set commands: ZADD, ZPOPMIN, ZRANGE.

use super::{count_arg, float_arg, range, upper, value_or_new, Call};
use crate::db::{live, Score, Val, ZSet};

/// `ZADD key [NX|XX] [CH] score member [score member ...]`.
pub(super) fn zadd(c: &mut Call<'_>) {
    let (mut nx, mut xx, mut ch) = (false, false, false);
    let mut i = 2;
    while i < c.args.len() {
        match upper(c.args[i]).as_str() {
            "NX" => nx = true,
            "XX" => xx = true,
            "CH" => ch = true,
            _ => break,
        }
        i += 1;
    }
    let rest = &c.args[i.min(c.args.len())..];
    if rest.is_empty() || !rest.len().is_multiple_of(2) {
        c.out.syntax();
        return;
    }
    if nx && xx {
        c.out
            .err("ERR XX and NX options at the same time are not compatible");
        return;
    }
    let mut pairs = Vec::with_capacity(rest.len() / 2);
    for sm in rest.chunks(2) {
        match float_arg(sm[0]) {
            Some(sc) => pairs.push((sc, sm[1])),
            None => {
                c.out.err("ERR value is not a valid float");
                return;
            }
        }
    }
    let mut sh = c.shard();
    match value_or_new(&mut sh, c.key(), || Val::ZSet(ZSet::default())) {
        Val::ZSet(z) => {
            let (added, changed) = add_scores(z, &pairs, nx, xx);
            if z.scores.is_empty() {
                sh.remove(c.key());
            }
            c.out.int(if ch { added + changed } else { added });
        }
        _ => c.out.wrongtype(),
    }
}

/// Gives each member its score (`nx`: only new members, `xx`: only existing ones);
/// returns how many members were added and how many changed score.
fn add_scores(z: &mut ZSet, pairs: &[(f64, &[u8])], nx: bool, xx: bool) -> (i64, i64) {
    let (mut added, mut changed) = (0, 0);
    for &(sc, m) in pairs {
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
    (added, changed)
}

/// `ZPOPMIN key [count]`: the lowest members and their scores; a set left empty is
/// deleted.
pub(super) fn zpopmin(c: &mut Call<'_>) {
    let Ok(count) = count_arg(&mut c.out, c.args.get(2)) else {
        return;
    };
    let count = count.unwrap_or(1);
    let mut sh = c.shard();
    let popped: Vec<(Vec<u8>, f64)> = match live(&mut sh, c.key()).map(|e| &mut e.val) {
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
            c.out.wrongtype();
            return;
        }
    };
    if matches!(live(&mut sh, c.key()).map(|e| &e.val), Some(Val::ZSet(z)) if z.scores.is_empty()) {
        sh.remove(c.key());
    }
    drop(sh);
    // RESP3 with a count: one [member, score] pair per member; otherwise flat.
    let nested = c.session.resp3 && c.args.len() == 3;
    write_scored(
        c,
        popped.iter().map(|(m, sc)| (m.as_slice(), *sc)),
        true,
        nested,
    );
}

/// `ZRANGE key start stop [WITHSCORES]`, by rank.
pub(super) fn zrange(c: &mut Call<'_>) {
    let with_scores = match c.args.get(4) {
        Some(a) if upper(a) == "WITHSCORES" => true,
        Some(_) => {
            c.out.syntax();
            return;
        }
        None => false,
    };
    let Some((a, b)) = c.index_args() else {
        return;
    };
    let mut sh = c.shard();
    match live(&mut sh, c.key()).map(|e| &e.val) {
        None => c.out.array(0),
        Some(Val::ZSet(z)) => match range(a, b, z.by_score.len()) {
            None => c.out.array(0),
            Some((x, y)) => {
                let items = z.by_score.iter().skip(x).take(y - x + 1);
                let nested = with_scores && c.session.resp3;
                write_scored(
                    c,
                    items.map(|(sc, m)| (m.as_slice(), sc.0)),
                    with_scores,
                    nested,
                );
            }
        },
        Some(_) => c.out.wrongtype(),
    }
}

/// Members (with their scores when `with_scores`) as one flat array, or as an array of
/// `[member, score]` pairs when `nested`.
fn write_scored<'m>(
    c: &mut Call<'_>,
    items: impl ExactSizeIterator<Item = (&'m [u8], f64)>,
    with_scores: bool,
    nested: bool,
) {
    if nested {
        c.out.array(items.len());
        for (m, sc) in items {
            c.out.array(2);
            c.out.bulk(m);
            c.out.double(sc);
        }
    } else {
        c.out.array(items.len() * if with_scores { 2 } else { 1 });
        for (m, sc) in items {
            c.out.bulk(m);
            if with_scores {
                c.out.double(sc);
            }
        }
    }
}
