//! One connection of a worker: socket, buffers and the requests in flight.
//!
//! Requests are encoded straight into [`Conn::wbuf`]; the worker writes the whole buffer
//! with one `write` call per event-loop turn. Replies are read into [`Conn::rbuf`] and
//! delimited in place by the proto scanner; nothing is copied out of it.
//!
//! Each request sent and not yet answered has an [`InFlight`] entry in a ring (a
//! `VecDeque` with capacity for `pipeline` entries, so it never reallocates): its
//! intended and actual send times and the index of its command. RESP answers in order,
//! so the reply at the front of the read buffer belongs to the entry at the front of the
//! ring.
//!
//! Sockets are registered once with the poller for both readable and writable readiness,
//! edge-triggered (what `mio` does on Linux), and never re-registered: no `epoll_ctl`
//! per request.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::time::Instant;

/// A non-blocking socket of either kind.
#[derive(Debug)]
pub(crate) enum MioStream {
    Tcp(mio::net::TcpStream),
    Unix(mio::net::UnixStream),
    Tls(Box<crate::tls::TlsMio>),
}

impl MioStream {
    pub(crate) fn register(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
    ) -> io::Result<()> {
        let interest = mio::Interest::READABLE | mio::Interest::WRITABLE;
        match self {
            MioStream::Tcp(s) => registry.register(s, token, interest),
            MioStream::Unix(s) => registry.register(s, token, interest),
            MioStream::Tls(s) => registry.register(&mut s.sock, token, interest),
        }
    }

    /// Encrypted bytes wait for the socket (TLS only).
    #[inline]
    pub(crate) fn wants_write(&self) -> bool {
        matches!(self, MioStream::Tls(s) if s.wants_write())
    }

    pub(crate) fn deregister(&mut self, registry: &mio::Registry) {
        let _ = match self {
            MioStream::Tcp(s) => registry.deregister(s),
            MioStream::Unix(s) => registry.deregister(s),
            MioStream::Tls(s) => registry.deregister(&mut s.sock),
        };
    }
}

impl Read for MioStream {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            MioStream::Tcp(s) => s.read(buf),
            MioStream::Unix(s) => s.read(buf),
            MioStream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for MioStream {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            MioStream::Tcp(s) => s.write(buf),
            MioStream::Unix(s) => s.write(buf),
            MioStream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            MioStream::Tls(s) => s.flush(),
            _ => Ok(()),
        }
    }
}

/// One request sent and not yet answered.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InFlight {
    /// When the request should have been sent (ns since the phase epoch). Closed loop:
    /// equal to `sent_ns`.
    pub intended_ns: u64,
    /// When it was handed to the socket (ns since the phase epoch).
    pub sent_ns: u64,
    /// Index of its command in the phase's command list.
    pub cmd: u16,
    /// Sent (closed loop) or scheduled (open loop) after the warm-up: recorded.
    pub measured: bool,
    /// Cluster mode: how many times it was redirected (`MOVED`, `ASK`, `TRYAGAIN`).
    pub redirects: u8,
    /// Cluster mode: its wire bytes' length in the connection's sent log, so that a
    /// redirected request can be sent again (0 otherwise).
    pub wire_len: u32,
}

impl InFlight {
    /// A request sent at `sent_ns` (due at `intended_ns`), not yet redirected.
    #[inline]
    pub(crate) fn new(
        intended_ns: u64,
        sent_ns: u64,
        cmd: u16,
        measured: bool,
        wire_len: u32,
    ) -> Self {
        InFlight {
            intended_ns,
            sent_ns,
            cmd,
            measured,
            redirects: 0,
            wire_len,
        }
    }
}

/// Whether a connection is usable.
#[derive(Debug)]
pub(crate) enum State {
    Live(MioStream),
    /// Lost; the next reconnect attempt is due at `next_try`.
    Down {
        since: Instant,
        next_try: Instant,
        backoff: std::time::Duration,
        last_error: String,
        /// An attempt to connect again failed: the target itself is unreachable, not
        /// just this connection.
        refused: bool,
    },
}

/// A worker's connection.
#[derive(Debug)]
pub(crate) struct Conn {
    pub state: State,
    /// Encoded requests not yet written; bytes before `wpos` are already written.
    pub wbuf: Vec<u8>,
    pub wpos: usize,
    /// Received bytes; `rbuf[rstart..rend]` is not yet parsed.
    pub rbuf: Vec<u8>,
    pub rstart: usize,
    pub rend: usize,
    pub inflight: VecDeque<InFlight>,
    /// Measured requests this connection may still send (`None`: no request budget).
    pub quota: Option<u64>,
    /// Open loop: intended time of the next request (ns since the epoch; `u64::MAX` when
    /// the schedule is exhausted).
    pub next_intended_ns: u64,
    /// The logical client this connection belongs to (its own index outside cluster
    /// mode; in cluster mode a client has one connection per node it talks to).
    pub client: u32,
    /// Cluster mode: the node (index in the worker's topology) it is connected to.
    pub node: u16,
    /// Cluster mode: the wire bytes of the requests in flight, oldest first from
    /// `sent_head`, kept so that a redirected request can be sent again.
    pub sent: Vec<u8>,
    pub sent_head: usize,
    /// Requests it may still send on its socket before the socket is renewed
    /// (`u64::MAX`: no limit).
    pub left: u64,
}

/// Initial size of a connection's read buffer; it grows when one reply is larger.
pub(crate) const READ_BUF: usize = 16 * 1024;

impl Conn {
    pub(crate) fn new(stream: MioStream, pipeline: usize, quota: Option<u64>) -> Conn {
        Conn {
            state: State::Live(stream),
            wbuf: Vec::with_capacity(4096),
            wpos: 0,
            rbuf: vec![0u8; READ_BUF],
            rstart: 0,
            rend: 0,
            inflight: VecDeque::with_capacity(pipeline),
            quota,
            next_intended_ns: 0,
            client: 0,
            node: 0,
            sent: Vec::new(),
            sent_head: 0,
            left: u64::MAX,
        }
    }

    /// Cluster mode: forgets sent bytes no request needs any more.
    #[inline]
    pub(crate) fn trim_sent(&mut self) {
        if self.sent_head == self.sent.len() {
            self.sent.clear();
            self.sent_head = 0;
        } else if self.sent_head > 64 * 1024 && self.sent_head * 2 > self.sent.len() {
            self.sent.drain(..self.sent_head);
            self.sent_head = 0;
        }
    }

    pub(crate) fn is_live(&self) -> bool {
        matches!(self.state, State::Live(_))
    }

    /// Writes as much of the pending buffer as the socket takes.
    ///
    /// Returns `Err` when the connection is broken.
    #[inline]
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        let State::Live(stream) = &mut self.state else {
            return Ok(());
        };
        while self.wpos < self.wbuf.len() {
            match stream.write(&self.wbuf[self.wpos..]) {
                Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "socket closed")),
                Ok(n) => self.wpos += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
        }
        // TLS: encrypted records the socket did not take yet.
        if stream.wants_write() {
            match stream.flush() {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Bytes are waiting to be written: requests not yet handed to the socket, or (TLS)
    /// encrypted records it has not taken yet.
    #[inline]
    pub(crate) fn has_output(&self) -> bool {
        !self.wbuf.is_empty() || matches!(&self.state, State::Live(s) if s.wants_write())
    }

    /// Makes room at the end of the read buffer: moves unparsed bytes to the front, and
    /// doubles the buffer when a single reply fills all of it.
    #[inline]
    pub(crate) fn make_room(&mut self) {
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        } else if self.rend == self.rbuf.len() {
            if self.rstart > 0 {
                self.rbuf.copy_within(self.rstart..self.rend, 0);
                self.rend -= self.rstart;
                self.rstart = 0;
            } else {
                let len = self.rbuf.len() * 2;
                self.rbuf.resize(len, 0);
            }
        }
    }

    /// Puts a new socket in place of the live one (a renewal: nothing is in flight).
    pub(crate) fn replace(&mut self, registry: &mio::Registry, stream: MioStream) {
        if let State::Live(old) = &mut self.state {
            old.deregister(registry);
        }
        self.state = State::Live(stream);
        self.wbuf.clear();
        self.wpos = 0;
        self.rstart = 0;
        self.rend = 0;
    }

    /// Drops the socket and everything buffered and marks the connection down, due for a
    /// reconnect attempt at once. The caller accounts for the requests in flight first.
    pub(crate) fn reset(
        &mut self,
        registry: &mio::Registry,
        now: Instant,
        initial_backoff: std::time::Duration,
        error: String,
    ) {
        if let State::Live(stream) = &mut self.state {
            stream.deregister(registry);
        }
        self.state = State::Down {
            since: now,
            next_try: now,
            backoff: initial_backoff,
            last_error: error,
            refused: false,
        };
        self.wbuf.clear();
        self.wpos = 0;
        self.rstart = 0;
        self.rend = 0;
        self.sent.clear();
        self.sent_head = 0;
    }
}
