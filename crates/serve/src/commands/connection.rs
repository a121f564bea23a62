//! The connection's own commands: PING, ECHO, QUIT, SELECT, HELLO, AUTH, CLIENT.

use super::{int_arg, upper, After, Call};
use crate::db::DATABASES;

pub(super) fn ping(c: &mut Call<'_>) {
    match c.args.get(1) {
        None => c.out.simple("PONG"),
        Some(text) => c.out.bulk(text),
    }
}

pub(super) fn echo(c: &mut Call<'_>) {
    c.out.bulk(c.args[1]);
}

pub(super) fn quit(c: &mut Call<'_>) {
    c.out.ok();
    c.after = After::Close;
}

pub(super) fn select(c: &mut Call<'_>) {
    match int_arg(c.args[1]) {
        Some(i) if (0..DATABASES as i64).contains(&i) => {
            c.session.db = i as usize;
            c.out.ok();
        }
        Some(_) => c.out.err("ERR DB index is out of range"),
        None => c.out.not_int(),
    }
}

pub(super) fn auth(c: &mut Call<'_>) {
    // No users are configured: any AUTH succeeds, as with `requirepass ""`.
    c.out.ok();
}

pub(super) fn client(c: &mut Call<'_>) {
    let n = c.args.len();
    match upper(c.args[1]).as_str() {
        "SETNAME" if n == 3 => {
            c.session.name = Some(c.args[2].to_vec());
            c.out.ok();
        }
        "SETINFO" if n == 4 => c.out.ok(),
        "GETNAME" => match &c.session.name {
            Some(name) => c.out.bulk(name),
            None => c.out.null(),
        },
        "ID" => c.out.int(c.session.id as i64),
        _ => c
            .out
            .err("ERR unknown CLIENT subcommand or wrong number of arguments"),
    }
}

/// `HELLO [protover [AUTH user pass] [SETNAME name]]`: switches the dialect, then
/// answers the server's facts in it.
pub(super) fn hello(c: &mut Call<'_>) {
    let (args, s, o) = (c.args, &mut *c.session, &mut c.out);
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
