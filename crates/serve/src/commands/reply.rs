//! Reply writing: RESP bytes appended in the session's dialect (RESP2, or RESP3 after
//! `HELLO 3`), with the error lines every family shares.

use std::io::Write as _;

/// Appends replies to a connection's output in one dialect.
#[derive(Debug)]
pub(crate) struct Out<'a> {
    pub(crate) buf: &'a mut Vec<u8>,
    /// RESP3: nulls, sets, maps, doubles and verbatim text have their own types.
    pub(crate) v3: bool,
}

impl Out<'_> {
    pub(crate) fn raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    pub(crate) fn ok(&mut self) {
        self.raw(b"+OK\r\n");
    }

    pub(crate) fn simple(&mut self, s: &str) {
        self.raw(b"+");
        self.raw(s.as_bytes());
        self.raw(b"\r\n");
    }

    pub(crate) fn err(&mut self, s: &str) {
        self.raw(b"-");
        // An error line cannot hold CR or LF.
        for b in s.bytes() {
            self.buf
                .push(if b == b'\r' || b == b'\n' { b' ' } else { b });
        }
        self.raw(b"\r\n");
    }

    pub(crate) fn int(&mut self, i: i64) {
        let _ = write!(self.buf, ":{i}\r\n");
    }

    pub(crate) fn bulk(&mut self, b: &[u8]) {
        let _ = write!(self.buf, "${}\r\n", b.len());
        self.raw(b);
        self.raw(b"\r\n");
    }

    pub(crate) fn null(&mut self) {
        if self.v3 {
            self.raw(b"_\r\n");
        } else {
            self.raw(b"$-1\r\n");
        }
    }

    pub(crate) fn null_array(&mut self) {
        if self.v3 {
            self.raw(b"_\r\n");
        } else {
            self.raw(b"*-1\r\n");
        }
    }

    pub(crate) fn array(&mut self, n: usize) {
        let _ = write!(self.buf, "*{n}\r\n");
    }

    pub(crate) fn set(&mut self, n: usize) {
        let _ = write!(self.buf, "{}{n}\r\n", if self.v3 { '~' } else { '*' });
    }

    pub(crate) fn map(&mut self, pairs: usize) {
        if self.v3 {
            let _ = write!(self.buf, "%{pairs}\r\n");
        } else {
            let _ = write!(self.buf, "*{}\r\n", 2 * pairs);
        }
    }

    pub(crate) fn double(&mut self, d: f64) {
        let text = resplab_proto::resp::encode::format_double(d);
        if self.v3 {
            let _ = write!(self.buf, ",{text}\r\n");
        } else {
            self.bulk(text.as_bytes());
        }
    }

    /// Plain text: a RESP3 verbatim string of format `txt`, a bulk string in RESP2.
    pub(crate) fn text(&mut self, text: &[u8]) {
        if self.v3 {
            let _ = write!(self.buf, "={}\r\ntxt:", text.len() + 4);
            self.raw(text);
            self.raw(b"\r\n");
        } else {
            self.bulk(text);
        }
    }

    pub(crate) fn wrong_args(&mut self, cmd: &str) {
        self.err(&format!(
            "ERR wrong number of arguments for '{}' command",
            cmd.to_ascii_lowercase()
        ));
    }

    pub(crate) fn wrongtype(&mut self) {
        self.err("WRONGTYPE Operation against a key holding the wrong kind of value");
    }

    pub(crate) fn not_int(&mut self) {
        self.err("ERR value is not an integer or out of range");
    }

    pub(crate) fn syntax(&mut self) {
        self.err("ERR syntax error");
    }
}
