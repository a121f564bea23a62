//! [`Request`]: one command's arguments in a reusable buffer.
//!
//! A load generator builds millions of requests per second, so a request is not a
//! `Vec<Vec<u8>>` but two flat vectors: every argument's bytes back to back, and the end
//! offset of each argument. [`crate::Generator::next`] clears and refills the same
//! `Request` for every request it makes; once both vectors have grown to the largest
//! request of the workload, no further allocation happens.
//!
//! The request is protocol-neutral: it knows arguments, not RESP. The engine hands
//! [`Request::args`] to the encoder of the `proto` crate, which writes the wire bytes
//! straight into a connection buffer. The one protocol hint is [`Request::is_inline`]:
//! redis-benchmark's `PING_INLINE` test sends the inline form (`PING\r\n`) instead of a
//! multi-bulk array, and the catalog marks that test's requests as inline.

use std::fmt;

/// The arguments of one command, stored in two reusable buffers.
///
/// ```
/// use resplab_workload::Request;
/// let mut req = Request::new();
/// req.push_arg(b"SET");
/// req.push_arg(b"k");
/// req.push_arg(b"v");
/// let args: Vec<&[u8]> = req.args().collect();
/// assert_eq!(args, [&b"SET"[..], b"k", b"v"]);
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Request {
    /// Every argument's bytes, back to back.
    bytes: Vec<u8>,
    /// `ends[i]` is the offset just past argument `i` in `bytes`.
    ends: Vec<usize>,
    /// Send as an inline command (`PING\r\n`) rather than a RESP array.
    inline: bool,
}

impl Request {
    /// An empty request. Allocates nothing until the first argument is pushed.
    pub fn new() -> Self {
        Request::default()
    }

    /// An empty request with room for `bytes` argument bytes and `args` arguments.
    pub fn with_capacity(bytes: usize, args: usize) -> Self {
        Request {
            bytes: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(args),
            inline: false,
        }
    }

    /// Removes every argument and the inline mark, keeping the allocated capacity.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.inline = false;
    }

    /// Appends one argument.
    pub fn push_arg(&mut self, arg: &[u8]) {
        self.bytes.extend_from_slice(arg);
        self.ends.push(self.bytes.len());
    }

    /// Appends one argument built by `write` from parts (a key prefix and a number,
    /// say) without an intermediate buffer. Whatever `write` appends to the
    /// [`ArgWriter`] becomes the new argument, possibly empty.
    pub fn push_arg_with(&mut self, write: impl FnOnce(&mut ArgWriter<'_>)) {
        write(&mut ArgWriter(&mut self.bytes));
        self.ends.push(self.bytes.len());
    }

    /// The arguments in order, command name first.
    pub fn args(&self) -> Args<'_> {
        Args {
            bytes: &self.bytes,
            ends: &self.ends,
            start: 0,
            next: 0,
        }
    }

    /// Argument `index`, or `None` past the last one.
    pub fn arg(&self, index: usize) -> Option<&[u8]> {
        let end = *self.ends.get(index)?;
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        self.bytes.get(start..end)
    }

    /// Number of arguments, command name included.
    pub fn arg_count(&self) -> usize {
        self.ends.len()
    }

    /// True when the request has no argument.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Total length of all arguments in bytes (the payload, without protocol framing).
    pub fn payload_len(&self) -> usize {
        self.bytes.len()
    }

    /// True when the request should go on the wire in the inline form
    /// (arguments separated by spaces, ended by CRLF) instead of a RESP array.
    pub fn is_inline(&self) -> bool {
        self.inline
    }

    /// Marks the request for the inline form (`true`) or the RESP array form (`false`).
    pub fn set_inline(&mut self, inline: bool) {
        self.inline = inline;
    }

    /// Allocated capacity: (argument bytes, argument count). Lets tests and callers
    /// check that reuse has stopped allocating.
    pub fn capacity(&self) -> (usize, usize) {
        (self.bytes.capacity(), self.ends.capacity())
    }

    /// Replaces the arguments with a prepared image: `bytes` back to back and their
    /// `ends`. Two copies, no per-argument work (used for requests whose layout never
    /// changes).
    #[inline]
    pub(crate) fn load(&mut self, bytes: &[u8], ends: &[usize]) {
        self.bytes.clear();
        self.bytes.extend_from_slice(bytes);
        self.ends.clear();
        self.ends.extend_from_slice(ends);
    }

    /// The argument bytes, for patching fixed-width fields of a loaded image in place.
    #[inline]
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    /// Makes room for at least `bytes` argument bytes and `args` arguments in total, so
    /// that requests up to that size never allocate.
    pub fn reserve_total(&mut self, bytes: usize, args: usize) {
        self.bytes.reserve(bytes.saturating_sub(self.bytes.len()));
        self.ends.reserve(args.saturating_sub(self.ends.len()));
    }
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_list();
        for arg in self.args() {
            list.entry(&String::from_utf8_lossy(arg));
        }
        list.finish()?;
        if self.inline {
            f.write_str(" (inline)")?;
        }
        Ok(())
    }
}

/// Appends bytes to the argument being built by [`Request::push_arg_with`]. It can only
/// append, so earlier arguments cannot be disturbed.
#[derive(Debug)]
pub struct ArgWriter<'a>(&'a mut Vec<u8>);

impl ArgWriter<'_> {
    /// Appends `bytes`.
    #[inline]
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    /// Appends one byte.
    #[inline]
    pub fn push(&mut self, byte: u8) {
        self.0.push(byte);
    }

    /// The buffer being appended to, for this crate's writers, which only append.
    #[inline]
    pub(crate) fn buffer(&mut self) -> &mut Vec<u8> {
        self.0
    }
}

/// Iterator over the arguments of a [`Request`], returned by [`Request::args`].
#[derive(Clone, Debug)]
pub struct Args<'a> {
    bytes: &'a [u8],
    ends: &'a [usize],
    start: usize,
    next: usize,
}

impl<'a> Iterator for Args<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let end = *self.ends.get(self.next)?;
        let arg = self.bytes.get(self.start..end)?;
        self.start = end;
        self.next += 1;
        Some(arg)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.ends.len() - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Args<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_round_trip_including_empty_arguments() {
        let mut r = Request::new();
        r.push_arg(b"SET");
        r.push_arg(b"");
        r.push_arg(b"value");
        assert_eq!(r.arg_count(), 3);
        let args: Vec<&[u8]> = r.args().collect();
        assert_eq!(args, [&b"SET"[..], b"", b"value"]);
        assert_eq!(r.args().len(), 3);
        assert_eq!(r.arg(1), Some(&b""[..]));
        assert_eq!(r.arg(2), Some(&b"value"[..]));
        assert_eq!(r.arg(3), None);
        assert_eq!(r.payload_len(), 8);
    }

    #[test]
    fn push_arg_with_builds_from_parts() {
        let mut r = Request::new();
        r.push_arg(b"GET");
        r.push_arg_with(|b| {
            b.extend_from_slice(b"key:");
            b.extend_from_slice(b"42");
        });
        assert_eq!(r.arg(1), Some(&b"key:42"[..]));
    }

    #[test]
    fn clear_keeps_capacity_and_resets_inline() {
        let mut r = Request::new();
        r.push_arg(b"PING");
        r.set_inline(true);
        let cap = r.capacity();
        r.clear();
        assert!(r.is_empty());
        assert!(!r.is_inline());
        assert_eq!(r.capacity(), cap);
    }

    #[test]
    fn debug_shows_arguments() {
        let mut r = Request::new();
        r.push_arg(b"PING");
        r.set_inline(true);
        assert_eq!(format!("{r:?}"), "[\"PING\"] (inline)");
    }
}
