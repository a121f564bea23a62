//! Server administration: SHUTDOWN, COMMAND, CONFIG (the knobs), INFO, DBSIZE,
//! FLUSHALL, FLUSHDB.

use super::{names, upper, After, Call};
use crate::db::DATABASES;
use std::sync::atomic::Ordering;

pub(super) fn shutdown(c: &mut Call<'_>) {
    // As Redis: no reply, the connection closes and the server stops (nothing is
    // saved: there is nothing to save).
    c.knobs.shutdown.store(true, Ordering::Relaxed);
    c.after = After::Close;
}

pub(super) fn command(c: &mut Call<'_>) {
    // Answered minimally: tools ask on connect and accept an empty list.
    match c.args.get(1).map(|a| upper(a)).as_deref() {
        Some("COUNT") => c.out.int(names().count() as i64),
        Some("DOCS") => c.out.map(0),
        _ => c.out.array(0),
    }
}

pub(super) fn dbsize(c: &mut Call<'_>) {
    c.out.int(c.db.size(c.session.db) as i64);
}

pub(super) fn flushall(c: &mut Call<'_>) {
    c.db.flush(None);
    c.out.ok();
}

pub(super) fn flushdb(c: &mut Call<'_>) {
    c.db.flush(Some(c.session.db));
    c.out.ok();
}

/// `CONFIG GET pattern...`, `CONFIG SET knob value...`, `CONFIG RESETSTAT`.
pub(super) fn config(c: &mut Call<'_>) {
    let n = c.args.len();
    match upper(c.args[1]).as_str() {
        "GET" if n >= 3 => config_get(c),
        "SET" if n >= 4 && n.is_multiple_of(2) => config_set(c),
        "RESETSTAT" => c.out.ok(),
        _ => c
            .out
            .err("ERR unknown CONFIG subcommand or wrong number of arguments"),
    }
}

fn config_get(c: &mut Call<'_>) {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for pat in &c.args[2..] {
        let pat = String::from_utf8_lossy(pat).to_ascii_lowercase();
        for (name, value) in c.knobs.all().into_iter().chain([
            ("save".to_string(), String::new()),
            ("appendonly".to_string(), "no".to_string()),
        ]) {
            if glob(&pat, &name) && !pairs.iter().any(|(n, _)| *n == name) {
                pairs.push((name, value));
            }
        }
    }
    c.out.map(pairs.len());
    for (n, v) in pairs {
        c.out.bulk(n.as_bytes());
        c.out.bulk(v.as_bytes());
    }
}

fn config_set(c: &mut Call<'_>) {
    for nv in c.args[2..].chunks(2) {
        let name = String::from_utf8_lossy(nv[0]).to_ascii_lowercase();
        let value = String::from_utf8_lossy(nv[1]);
        if let Err(e) = c.knobs.set(&name, &value) {
            c.out.err(&format!(
                "ERR CONFIG SET failed (possibly related to argument '{name}') - {e}"
            ));
            return;
        }
    }
    c.out.ok();
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

/// `INFO [section...]`: server, stats, cpu and keyspace, as Redis words them.
pub(super) fn info(c: &mut Call<'_>) {
    let want: Vec<String> = c.args[1..]
        .iter()
        .map(|a| String::from_utf8_lossy(a).to_ascii_lowercase())
        .collect();
    let all = want.is_empty()
        || want
            .iter()
            .any(|w| w == "all" || w == "everything" || w == "default");
    let has = |s: &str| all || want.iter().any(|w| w == s);
    let knobs = c.knobs;
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
            knobs.connections.load(Ordering::Relaxed),
            knobs.commands.load(Ordering::Relaxed)
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
            let n = c.db.size(i);
            if n > 0 {
                text.push_str(&format!("db{i}:keys={n},expires=0,avg_ttl=0\r\n"));
            }
        }
    }
    c.out.text(text.as_bytes());
}
