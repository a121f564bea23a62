//! Accepting connections: one thread per listener hands each new connection to a worker
//! in turn, or refuses it when the server is full.
//!
//! Full means [`Knobs::max_clients`] connections open, or no file descriptor left for
//! one more (the process's or the system's limit: `EMFILE`, `ENFILE`). Either way the
//! client hears `-ERR max number of clients reached` and is closed, as Redis does. For
//! the second, each acceptor keeps one descriptor in reserve (`/dev/null`, opened at
//! start): when `accept` fails for want of descriptors, it closes the reserve, accepts
//! the waiting client on the descriptor that frees, refuses it and takes the reserve back.
//! Without that the client would wait unanswered in the backlog and `accept` would fail
//! again at once, for ever. A failure the reserve cannot cure is retried after
//! [`BACKOFF`], never in a tight loop; the connections already open are served all along.

use crate::{Knobs, Stream};
use std::io::{self, Write as _};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// The reply of a connection the server has no room for.
pub const FULL: &[u8] = b"-ERR max number of clients reached\r\n";

/// The pause before `accept` is tried again after a failure that is not the client's.
pub const BACKOFF: Duration = Duration::from_millis(50);

/// A listening socket.
#[derive(Debug)]
pub(crate) enum Listener {
    Tcp(std::net::TcpListener),
    Unix(std::os::unix::net::UnixListener),
}

/// A connection just accepted, still blocking.
enum Accepted {
    Tcp(std::net::TcpStream),
    Unix(std::os::unix::net::UnixStream),
}

impl Listener {
    fn accept(&self) -> io::Result<Accepted> {
        match self {
            Listener::Tcp(l) => l.accept().map(|(c, _)| Accepted::Tcp(c)),
            Listener::Unix(l) => l.accept().map(|(c, _)| Accepted::Unix(c)),
        }
    }
}

impl Accepted {
    /// The connection as the workers' event loops take it (non-blocking, no Nagle
    /// delay); `None` when it cannot be made non-blocking.
    fn into_stream(self) -> Option<Stream> {
        match self {
            Accepted::Tcp(c) => {
                let _ = c.set_nodelay(true);
                c.set_nonblocking(true).ok()?;
                Some(Stream::Tcp(mio::net::TcpStream::from_std(c)))
            }
            Accepted::Unix(c) => {
                c.set_nonblocking(true).ok()?;
                Some(Stream::Unix(mio::net::UnixStream::from_std(c)))
            }
        }
    }

    /// Tells the client the server is full, then closes.
    fn refuse(self) {
        // A fresh socket's send buffer takes these few bytes at once; never wait on a
        // client that is not reading.
        let _ = match self {
            Accepted::Tcp(mut c) => c.set_nonblocking(true).and_then(|()| c.write(FULL)),
            Accepted::Unix(mut c) => c.set_nonblocking(true).and_then(|()| c.write(FULL)),
        };
    }
}

/// A connection for a worker, and whether it speaks RESPB.
pub(crate) type NewConn = (Stream, bool);

/// Hands connections to the workers, round-robin, and counts them.
#[derive(Debug)]
pub(crate) struct Handoff {
    /// Per worker: its queue of new connections and the waker of its event loop.
    pub(crate) workers: Vec<(mpsc::Sender<NewConn>, Arc<mio::Waker>)>,
    pub(crate) next: AtomicU64,
    pub(crate) knobs: Arc<Knobs>,
}

impl Handoff {
    /// Takes a connection in, or refuses it when `max_clients` are open.
    fn admit(&self, conn: Accepted, respb: bool) {
        let knobs = &self.knobs;
        if knobs.clients.fetch_add(1, Ordering::Relaxed)
            >= knobs.max_clients.load(Ordering::Relaxed)
        {
            knobs.clients.fetch_sub(1, Ordering::Relaxed);
            conn.refuse();
            return;
        }
        let Some(stream) = conn.into_stream() else {
            knobs.clients.fetch_sub(1, Ordering::Relaxed);
            return;
        };
        let i = self.next.fetch_add(1, Ordering::Relaxed) as usize % self.workers.len();
        knobs.connections.fetch_add(1, Ordering::Relaxed);
        let (queue, waker) = &self.workers[i];
        if queue.send((stream, respb)).is_ok() {
            let _ = waker.wake();
        } else {
            knobs.clients.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Wakes every worker (to see that the server stops).
    pub(crate) fn wake_all(&self) {
        for (_, w) in &self.workers {
            let _ = w.wake();
        }
    }
}

/// Accepts on `listener` until `stop`, handing connections over (as RESPB ones when
/// `respb`).
pub(crate) fn run(listener: &Listener, respb: bool, handoff: &Handoff, stop: &AtomicBool) {
    let mut reserve = open_reserve();
    while !stop.load(Ordering::Relaxed) {
        let accepted = listener.accept();
        if stop.load(Ordering::Relaxed) {
            break;
        }
        match accepted {
            Ok(conn) => handoff.admit(conn, respb),
            // The client gave up before it was accepted, or a signal came: nothing to wait for.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionAborted | io::ErrorKind::Interrupted
                ) => {}
            Err(e) if is_out_of_descriptors(&e) => {
                if !refuse_on_reserve(listener, &mut reserve) {
                    std::thread::sleep(BACKOFF);
                }
            }
            Err(_) => std::thread::sleep(BACKOFF),
        }
    }
    handoff.wake_all();
}

/// The descriptor kept in reserve for refusing a client at the descriptor limit.
fn open_reserve() -> Option<std::fs::File> {
    std::fs::File::open("/dev/null").ok()
}

/// Frees the reserve to accept and refuse the waiting client, then takes the reserve
/// back; false when there was no reserve or the client could not be accepted even so.
fn refuse_on_reserve(listener: &Listener, reserve: &mut Option<std::fs::File>) -> bool {
    if reserve.take().is_none() {
        *reserve = open_reserve();
        return false;
    }
    let refused = match listener.accept() {
        Ok(conn) => {
            conn.refuse();
            true
        }
        Err(_) => false,
    };
    *reserve = open_reserve();
    refused
}

fn is_out_of_descriptors(e: &io::Error) -> bool {
    let out = [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM];
    e.raw_os_error().is_some_and(|n| out.contains(&n))
}
