//! Stream commands: XADD.

use super::{int_arg, upper, Call};
use crate::db::{live, unix_ms, Entry, Stream, StreamId, Val};

/// `XADD key [NOMKSTREAM] [MAXLEN [~|=] n] id|* field value [field value ...]`.
pub(super) fn xadd(c: &mut Call<'_>) {
    let Some((opt, i)) = xadd_options(c) else {
        return;
    };
    let args = c.args;
    if args.len() < i + 3 || !(args.len() - i - 1).is_multiple_of(2) {
        c.out.wrong_args("XADD");
        return;
    }
    let fields: Vec<Vec<u8>> = args[i + 1..].iter().map(|a| a.to_vec()).collect();
    let mut sh = c.shard();
    if live(&mut sh, c.key()).is_none() {
        if opt.nomkstream {
            c.out.null();
            return;
        }
        sh.insert(
            c.key().to_vec(),
            Entry {
                val: Val::Stream(Stream::default()),
                expires: None,
            },
        );
    }
    let Some(Val::Stream(st)) = sh.get_mut(c.key()).map(|e| &mut e.val) else {
        c.out.wrongtype();
        return;
    };
    let id = match next_id(st, args[i]) {
        Ok(id) => id,
        Err(e) => {
            c.out.err(e);
            return;
        }
    };
    st.last = id;
    st.entries.push_back((id, fields));
    if let Some(m) = opt.maxlen {
        while st.entries.len() > m {
            st.entries.pop_front();
        }
    }
    drop(sh);
    c.out.bulk(format!("{}-{}", id.0, id.1).as_bytes());
}

/// The options of `XADD`.
struct XaddOptions {
    nomkstream: bool,
    maxlen: Option<usize>,
}

/// The options before the id, and the index of the id; `None` with the error written.
fn xadd_options(c: &mut Call<'_>) -> Option<(XaddOptions, usize)> {
    let args = c.args;
    let mut opt = XaddOptions {
        nomkstream: false,
        maxlen: None,
    };
    let mut i = 2;
    while i < args.len() {
        match upper(args[i]).as_str() {
            "NOMKSTREAM" => {
                opt.nomkstream = true;
                i += 1;
            }
            "MAXLEN" => {
                let mut j = i + 1;
                if args.get(j).is_some_and(|a| *a == b"~" || *a == b"=") {
                    j += 1;
                }
                match args.get(j).and_then(|a| int_arg(a)).filter(|v| *v >= 0) {
                    Some(v) => opt.maxlen = Some(v as usize),
                    None => {
                        c.out.syntax();
                        return None;
                    }
                }
                i = j + 1;
            }
            _ => break,
        }
    }
    Some((opt, i))
}

/// The id a new entry gets from the id argument (`*`, `ms-*`, `ms-seq` or `ms`), or the
/// error when it is malformed or not above the stream's last id.
fn next_id(st: &Stream, arg: &[u8]) -> Result<StreamId, &'static str> {
    let id = if arg == b"*" {
        let ms = unix_ms().max(st.last.0);
        if ms == st.last.0 && st.entries.is_empty() && st.last == (0, 0) {
            (ms, 0)
        } else if ms == st.last.0 {
            (ms, st.last.1 + 1)
        } else {
            (ms, 0)
        }
    } else {
        match parse_id(arg) {
            Some((ms, Some(seq))) => (ms, seq),
            Some((ms, None)) if ms == st.last.0 => (ms, st.last.1 + 1),
            Some((ms, None)) => (ms, 0),
            None => return Err("ERR Invalid stream ID specified as stream command argument"),
        }
    };
    if id == (0, 0) || id <= st.last && !(st.last == (0, 0) && st.entries.is_empty() && id > (0, 0))
    {
        return Err(
            "ERR The ID specified in XADD is equal or smaller than the target stream top item",
        );
    }
    Ok(id)
}

/// `ms-seq`, `ms-*` (no sequence yet) or `ms` (sequence 0).
fn parse_id(a: &[u8]) -> Option<(u64, Option<u64>)> {
    let s = std::str::from_utf8(a).ok()?;
    match s.split_once('-') {
        Some((ms, "*")) => Some((ms.parse().ok()?, None)),
        Some((ms, seq)) => Some((ms.parse().ok()?, Some(seq.parse().ok()?))),
        None => Some((s.parse().ok()?, Some(0))),
    }
}
