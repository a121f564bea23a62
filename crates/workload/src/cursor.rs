//! A command that follows a cursor from reply to reply: memtier_benchmark's
//! `--scan-incremental-iteration` over `--command="SCAN 0 …"`.
//!
//! A connection sends the command as written (`SCAN 0 COUNT 100`, results under
//! `SCAN 0`), then, while the cursor of the last reply is not `0`, the same command
//! with that cursor in place of its first argument (results under `SCAN <cursor>`).
//! The iteration starts again from the written command when a reply's cursor is `0`,
//! when a reply is an error or has no cursor, or after `max_iterations` continuations
//! (0: no limit), as memtier does. The engine hands each reply's cursor to
//! [`crate::Generator::take_cursor`]; with one request in flight per connection
//! (memtier requires `--pipeline 1`) each request carries the cursor of the reply
//! before it.

use crate::request::Request;

/// One stream's place in its iteration.
#[derive(Clone, Debug)]
pub(crate) struct CursorState {
    /// The cursor of the last reply (`0`: start again from the written command).
    cursor: Vec<u8>,
    /// Continuations sent since the iteration started.
    iterations: u64,
    /// Continuations before starting again (0: until the cursor is `0`).
    max_iterations: u64,
    /// The command's name and the arguments after its cursor, as written.
    name: Box<[u8]>,
    rest: Box<[Box<[u8]>]>,
    /// The phase row of the continuations.
    row: usize,
}

impl CursorState {
    /// The state for command `args` (name, cursor, rest), continuations under `row`.
    pub(crate) fn new(args: &[Vec<u8>], max_iterations: u64, row: usize) -> CursorState {
        CursorState {
            cursor: b"0".to_vec(),
            iterations: 0,
            max_iterations,
            name: args.first().cloned().unwrap_or_default().into_boxed_slice(),
            rest: args
                .iter()
                .skip(2)
                .map(|a| a.clone().into_boxed_slice())
                .collect(),
            row,
        }
    }

    /// Whether the next request continues an iteration.
    #[inline]
    pub(crate) fn is_following(&self) -> bool {
        self.cursor != b"0"
    }

    /// Fills `req` with the continuation; returns its row.
    pub(crate) fn write(&self, req: &mut Request) -> usize {
        req.clear();
        req.push_arg(&self.name);
        req.push_arg(&self.cursor);
        for a in self.rest.iter() {
            req.push_arg(a);
        }
        self.row
    }

    /// The largest continuation: (argument bytes, arguments), with a cursor of at
    /// most 20 digits (a 64-bit number).
    pub(crate) fn max_request_size(&self) -> (usize, usize) {
        let rest: usize = self.rest.iter().map(|a| a.len()).sum();
        (self.name.len() + 20 + rest, 2 + self.rest.len())
    }

    /// The reply to a request of row `row`: its cursor, or `None` for an error reply
    /// or one without a cursor.
    pub(crate) fn take(&mut self, row: usize, cursor: Option<&[u8]>) {
        match cursor.filter(|c| !c.is_empty()) {
            Some(c) => {
                self.cursor.clear();
                self.cursor.extend_from_slice(c);
                if row == self.row {
                    self.iterations += 1;
                }
                let done = self.max_iterations > 0 && self.iterations >= self.max_iterations;
                if c == b"0" || done {
                    self.restart();
                }
            }
            None => self.restart(),
        }
    }

    fn restart(&mut self) {
        self.cursor.clear();
        self.cursor.push(b'0');
        self.iterations = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_the_cursor_until_zero_or_the_limit() {
        let args: Vec<Vec<u8>> = ["SCAN", "0", "COUNT", "10"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let mut s = CursorState::new(&args, 2, 1);
        let mut req = Request::new();
        assert!(!s.is_following());
        s.take(0, Some(b"17"));
        assert!(s.is_following());
        assert_eq!(s.write(&mut req), 1);
        let sent: Vec<&[u8]> = req.args().collect();
        assert_eq!(sent, [&b"SCAN"[..], b"17", b"COUNT", b"10"]);
        s.take(1, Some(b"9"));
        assert!(s.is_following());
        // The second continuation reaches the limit: start again.
        s.take(1, Some(b"4"));
        assert!(!s.is_following());
        // A cursor of 0 ends the iteration; an error reply starts it again.
        let mut s = CursorState::new(&args, 0, 1);
        s.take(0, Some(b"5"));
        s.take(1, Some(b"0"));
        assert!(!s.is_following());
        s.take(0, Some(b"5"));
        s.take(1, None);
        assert!(!s.is_following());
        assert_eq!(s.max_request_size(), (4 + 20 + 7, 4));
    }
}
