//! `resplab serve`: the lab's reference server.
//!
//! An in-memory server that speaks RESP2 and RESP3 (`HELLO 3`), with the commands the
//! bench catalog and memtier-style mixes send and what tools send on connect, and with
//! **known effects and faults** that a real server does not have:
//!
//! - `work_ns`: a busy loop of that many nanoseconds of CPU per command, so a variant with
//!   `work_ns + Δ` is slower by a known cost;
//! - `slowdown_pct`: after every batch of work that took b of CPU, spin a further
//!   b·pct/100, so
//!   the server's capacity is exactly 1/(1 + pct/100) of what it was at any load,
//!   whatever its base cost;
//! - `stall_ms` every `stall_every_s`: each worker thread stops answering for that long;
//! - `drop_every`: every N-th command closes its connection instead of replying;
//! - `garbage_every`: every N-th reply is replaced by bytes that are not RESP;
//! - `delay_us`: every reply leaves that much later;
//! - `slow_command` with `slow_command_ns`: every call of one named command spins that
//!   much longer in a function of its own ([`cost`]), a known cost a profile must find.
//!
//! All are flags of `resplab serve` and `CONFIG SET` knobs (`CONFIG SET work-ns 500`),
//! so they can be changed while load runs. It is not a Redis replacement: no
//! persistence, no replication, no eviction, no transactions or scripting.
//!
//! Threads: an acceptor per listening socket hands connections round-robin to `threads`
//! workers, each with its own `mio` event loop, and refuses a client as Redis does when
//! `maxclients` are connected or no file descriptor is left ([`accept`]); the keyspace is sharded by key hash ([`db`]), so workers
//! serving different keys take different locks. Request parsing is the zero-copy parser
//! of `resplab-proto`; a connection's bytes go through [`Conn::feed`], a pure function of
//! its input, so every byte stream can be tested (and fuzzed) without sockets. Commands
//! are found by name in one table ([`commands`]) and run by family (strings, lists,
//! hashes, sets, sorted sets, streams, keys, the connection's own and administration).
//! A configuration's checks and the lines that describe a started server are
//! [`startup`].

pub mod accept;
pub mod commands;
pub mod cost;
pub mod db;
mod respb;
pub mod startup;

use commands::{After, Session};
use db::Db;
use resplab_proto::resp::request::parse_request;
use resplab_proto::resp::Limits;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The effect and fault knobs, shared by every thread and changed by `CONFIG SET`.
#[derive(Debug)]
pub struct Knobs {
    pub work_ns: AtomicU64,
    /// Percent × 1000 (so 2.5 % is 2500).
    pub slowdown_milli_pct: AtomicU64,
    pub stall_ms: AtomicU64,
    pub stall_every_ms: AtomicU64,
    pub drop_every: AtomicU64,
    pub garbage_every: AtomicU64,
    pub delay_us: AtomicU64,
    /// A cold start: for the first `cold_ms` milliseconds after the server started, every
    /// batch of work spins a further `cold_slowdown_milli_pct`/1000 % of its time.
    pub cold_ms: AtomicU64,
    pub cold_slowdown_milli_pct: AtomicU64,
    /// The command (upper case; empty: none) whose every call spins a further
    /// `slow_command_ns` in [`cost::slow_command_cost`].
    pub slow_command: std::sync::RwLock<String>,
    pub slow_command_ns: AtomicU64,
    /// Counters for `INFO stats`.
    pub commands: AtomicU64,
    pub connections: AtomicU64,
    /// Connections open now.
    pub clients: AtomicU64,
    /// Connections beyond this many are refused (`CONFIG GET maxclients`); see [`accept`].
    pub max_clients: AtomicU64,
    pub threads: usize,
    pub started: Instant,
    /// Set by `SHUTDOWN`: whoever runs the server should stop it.
    pub shutdown: AtomicBool,
}

/// How many connections may be open at once (as Redis's default `maxclients`), unless
/// the file-descriptor limit comes first.
pub const MAX_CLIENTS: u64 = 100_000;

/// The knob names of `CONFIG GET/SET`.
pub const KNOBS: [&str; 11] = [
    "work-ns",
    "slowdown",
    "stall-ms",
    "stall-every",
    "drop-every",
    "garbage-every",
    "delay-us",
    "cold-ms",
    "cold-slowdown",
    "slow-command",
    "slow-command-ns",
];

impl Knobs {
    /// The knobs of a configuration.
    pub fn from_config(cfg: &Config) -> Knobs {
        Knobs {
            work_ns: AtomicU64::new(cfg.work_ns),
            slowdown_milli_pct: AtomicU64::new((cfg.slowdown_pct * 1000.0).round() as u64),
            stall_ms: AtomicU64::new(cfg.stall_ms),
            stall_every_ms: AtomicU64::new((cfg.stall_every_s * 1000.0).round() as u64),
            drop_every: AtomicU64::new(cfg.drop_every),
            garbage_every: AtomicU64::new(cfg.garbage_every),
            delay_us: AtomicU64::new(cfg.delay_us),
            cold_ms: AtomicU64::new(cfg.cold_ms),
            cold_slowdown_milli_pct: AtomicU64::new((cfg.cold_slowdown_pct * 1000.0).round() as u64),
            slow_command: std::sync::RwLock::new(
                cfg.slow_command
                    .as_deref()
                    .unwrap_or("")
                    .to_ascii_uppercase(),
            ),
            slow_command_ns: AtomicU64::new(cfg.slow_command_ns),
            commands: AtomicU64::new(0),
            connections: AtomicU64::new(0),
            clients: AtomicU64::new(0),
            max_clients: AtomicU64::new(MAX_CLIENTS),
            threads: cfg.threads,
            started: Instant::now(),
            shutdown: AtomicBool::new(false),
        }
    }

    /// Every knob and its value, as `CONFIG GET` shows them.
    pub fn all(&self) -> Vec<(String, String)> {
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        vec![
            ("work-ns".into(), r(&self.work_ns).to_string()),
            (
                "slowdown".into(),
                format!("{}", r(&self.slowdown_milli_pct) as f64 / 1000.0),
            ),
            ("stall-ms".into(), r(&self.stall_ms).to_string()),
            (
                "stall-every".into(),
                format!("{}", r(&self.stall_every_ms) as f64 / 1000.0),
            ),
            ("drop-every".into(), r(&self.drop_every).to_string()),
            ("garbage-every".into(), r(&self.garbage_every).to_string()),
            ("delay-us".into(), r(&self.delay_us).to_string()),
            ("cold-ms".into(), r(&self.cold_ms).to_string()),
            (
                "cold-slowdown".into(),
                format!("{}", r(&self.cold_slowdown_milli_pct) as f64 / 1000.0),
            ),
            (
                "slow-command".into(),
                self.slow_command
                    .read()
                    .map(|s| s.clone())
                    .unwrap_or_default(),
            ),
            (
                "slow-command-ns".into(),
                r(&self.slow_command_ns).to_string(),
            ),
            ("maxclients".into(), r(&self.max_clients).to_string()),
        ]
    }

    /// Sets knob `name` from its text.
    ///
    /// # Errors
    /// An unknown knob or a value that is not a number ≥ 0.
    pub fn set(&self, name: &str, value: &str) -> Result<(), String> {
        if name == "slow-command" {
            if let Ok(mut slow) = self.slow_command.write() {
                *slow = value.trim().to_ascii_uppercase();
            }
            return Ok(());
        }
        let num = || -> Result<f64, String> {
            value
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("expected a number >= 0, found '{value}'"))
        };
        let store = |a: &AtomicU64, v: f64| a.store(v.round() as u64, Ordering::Relaxed);
        match name {
            "work-ns" => store(&self.work_ns, num()?),
            "slowdown" => store(&self.slowdown_milli_pct, num()? * 1000.0),
            "stall-ms" => store(&self.stall_ms, num()?),
            "stall-every" => store(&self.stall_every_ms, num()? * 1000.0),
            "drop-every" => store(&self.drop_every, num()?),
            "garbage-every" => store(&self.garbage_every, num()?),
            "delay-us" => store(&self.delay_us, num()?),
            "cold-ms" => store(&self.cold_ms, num()?),
            "cold-slowdown" => store(&self.cold_slowdown_milli_pct, num()? * 1000.0),
            "slow-command-ns" => store(&self.slow_command_ns, num()?),
            _ => {
                return Err(format!(
                    "unknown knob, expected one of {}",
                    KNOBS.join(", ")
                ))
            }
        }
        Ok(())
    }
}

/// How to run the server.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub bind: String,
    /// 0: any free port (see [`Running::port`]).
    pub port: u16,
    pub unixsocket: Option<std::path::PathBuf>,
    /// Also listen for RESPB on this TCP port (0: any free port, see
    /// [`Running::respb_port`]).
    pub respb_port: Option<u16>,
    pub threads: usize,
    pub work_ns: u64,
    pub slowdown_pct: f64,
    pub stall_ms: u64,
    pub stall_every_s: f64,
    pub drop_every: u64,
    pub garbage_every: u64,
    pub delay_us: u64,
    /// A cold start: the first `cold_ms` milliseconds after start run a further
    /// `cold_slowdown_pct` % slower (a known order effect for whatever is measured first).
    pub cold_ms: u64,
    pub cold_slowdown_pct: f64,
    /// A command whose every call costs a further `slow_command_ns` nanoseconds, spent
    /// in [`cost::slow_command_cost`].
    pub slow_command: Option<String>,
    pub slow_command_ns: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: "127.0.0.1".into(),
            port: 6379,
            unixsocket: None,
            respb_port: None,
            threads: 1,
            work_ns: 0,
            slowdown_pct: 0.0,
            stall_ms: 0,
            stall_every_s: 0.0,
            drop_every: 0,
            garbage_every: 0,
            delay_us: 0,
            cold_ms: 0,
            cold_slowdown_pct: 0.0,
            slow_command: None,
            slow_command_ns: 0,
        }
    }
}

/// User and system CPU seconds of this process (from `/proc/self/stat`, read by
/// `resplab_sys::proc`; zeros where it cannot be read).
pub fn process_cpu() -> (f64, f64) {
    resplab_sys::proc::own_cpu().map_or((0.0, 0.0), |c| (c.user_sec, c.system_sec))
}

/// The longest inline request (a line typed as words) kept while its newline has not
/// come, as Redis keeps it (64 KiB).
pub const INLINE_MAX: usize = 64 * 1024;

/// Bytes sent instead of a reply by `garbage_every`: not RESP (no type byte starts `?`).
pub const GARBAGE: &[u8] = b"?garbage from resplab serve\r\n";

/// One connection's protocol state: bytes in, reply bytes out.
#[derive(Debug, Default)]
pub struct Conn {
    pub session: Session,
    inbuf: Vec<u8>,
    /// Commands this connection ran (for the drop and garbage counters).
    served: u64,
    /// `Some` on the RESPB port.
    respb: Option<respb::RespbState>,
}

/// What [`Conn::feed`] asks of the transport.
#[derive(Debug, PartialEq, Eq)]
pub enum Feed {
    /// Keep the connection.
    Open,
    /// Write what was produced, then close (QUIT, a protocol error, a dropped command).
    Close,
}

impl Conn {
    /// A connection with the given id (as `CLIENT ID` reports it).
    pub fn new(id: u64) -> Conn {
        Conn {
            session: Session {
                id,
                ..Session::default()
            },
            ..Conn::default()
        }
    }

    /// A connection of the RESPB port: requests are RESPB frames, replies RESPB reply
    /// frames on the request's mux id.
    pub fn new_respb(id: u64) -> Conn {
        Conn {
            respb: Some(respb::RespbState::default()),
            ..Conn::new(id)
        }
    }

    /// Takes bytes read from the peer, runs every complete request and appends the
    /// replies to `out`. Never panics, whatever the bytes.
    ///
    /// An inline request still without its newline after [`INLINE_MAX`] bytes is refused
    /// with a protocol error and the connection closed, as Redis does.
    pub fn feed(&mut self, db: &Db, knobs: &Knobs, input: &[u8], out: &mut Vec<u8>) -> Feed {
        self.inbuf.extend_from_slice(input);
        let buf = std::mem::take(&mut self.inbuf);
        let (used, result) = if self.respb.is_some() {
            self.feed_respb(db, knobs, &buf, out)
        } else {
            self.feed_resp(db, knobs, &buf, out)
        };
        if result == Feed::Open {
            self.inbuf = buf;
            self.inbuf.drain(..used);
        }
        result
    }

    /// Runs every complete RESP request in `buf`; returns the bytes consumed and what
    /// the transport should do.
    fn feed_resp(
        &mut self,
        db: &Db,
        knobs: &Knobs,
        buf: &[u8],
        out: &mut Vec<u8>,
    ) -> (usize, Feed) {
        let limits = Limits {
            max_bulk_len: 512 * 1024 * 1024,
            max_aggregate_len: 1 << 20,
            max_depth: 1,
        };
        let mut at = 0;
        let mut args: Vec<&[u8]> = Vec::new();
        loop {
            match parse_request(&buf[at..], &limits, &mut args) {
                Ok(None) => {
                    let rest = &buf[at..];
                    if rest.first() != Some(&b'*') && rest.len() > INLINE_MAX {
                        out.extend_from_slice(b"-ERR Protocol error: too big inline request\r\n");
                        return (at, Feed::Close);
                    }
                    return (at, Feed::Open);
                }
                Ok(Some(used)) => {
                    at += used;
                    if !args.is_empty() && self.run(db, knobs, &args, out) == Feed::Close {
                        return (at, Feed::Close);
                    }
                }
                Err(e) => {
                    let _ = write!(out, "-ERR Protocol error: {e}\r\n");
                    return (at, Feed::Close);
                }
            }
        }
    }

    /// Runs one command with the fault knobs applied (see [`Conn::fate`]).
    fn run(&mut self, db: &Db, knobs: &Knobs, args: &[&[u8]], out: &mut Vec<u8>) -> Feed {
        let after = match self.fate(knobs) {
            Fate::Drop => return Feed::Close,
            Fate::Garbage => {
                let mut sink = Vec::new();
                let a = commands::execute(db, knobs, &mut self.session, args, &mut sink);
                out.extend_from_slice(GARBAGE);
                a
            }
            Fate::Reply => commands::execute(db, knobs, &mut self.session, args, out),
        };
        if after == After::Close {
            Feed::Close
        } else {
            Feed::Open
        }
    }

    /// What the fault knobs make of the command about to run, on either port: it is
    /// counted; every `drop_every`-th closes the connection unanswered; the others are
    /// charged `work_ns` of CPU, and every `garbage_every`-th has its reply replaced by
    /// [`GARBAGE`] (decided before the command runs, so a `CONFIG SET` it makes counts
    /// from the next command on).
    fn fate(&mut self, knobs: &Knobs) -> Fate {
        self.served += 1;
        knobs.commands.fetch_add(1, Ordering::Relaxed);
        let drop_every = knobs.drop_every.load(Ordering::Relaxed);
        if drop_every > 0 && self.served.is_multiple_of(drop_every) {
            return Fate::Drop;
        }
        spin(knobs.work_ns.load(Ordering::Relaxed));
        let garbage_every = knobs.garbage_every.load(Ordering::Relaxed);
        if garbage_every > 0 && self.served.is_multiple_of(garbage_every) {
            Fate::Garbage
        } else {
            Fate::Reply
        }
    }
}

/// What happens to a command under the fault knobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Close the connection instead of running it.
    Drop,
    /// Run it, but send [`GARBAGE`] instead of its reply.
    Garbage,
    /// Run it and reply.
    Reply,
}

/// CPU time this thread has used so far, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`; 0
/// where the clock cannot be read).
pub fn thread_cpu_ns() -> u64 {
    resplab_sys::proc::thread_cpu_ns().unwrap_or(0)
}

/// Busy-waits until this thread has used `ns` more nanoseconds of CPU (0: nothing).
///
/// CPU time, not wall time: a server thread that is preempted while it spins (a client
/// on the same core, another job on the machine) still pays exactly `ns` of CPU, so a
/// known cost stays the same cost however busy the machine is. Where the thread clock
/// cannot be read, it spins on the wall clock.
pub fn spin(ns: u64) {
    if ns == 0 {
        return;
    }
    let from = thread_cpu_ns();
    if from == 0 {
        let until = Instant::now() + Duration::from_nanos(ns);
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        return;
    }
    while thread_cpu_ns().saturating_sub(from) < ns {
        std::hint::spin_loop();
    }
}

/// A server running in background threads.
#[derive(Debug)]
pub struct Running {
    port: u16,
    respb_port: Option<u16>,
    /// Addresses to connect to on stop, to wake the blocked acceptors.
    wake_tcp: Vec<std::net::SocketAddr>,
    wake_unix: Option<std::path::PathBuf>,
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    pub knobs: Arc<Knobs>,
}

impl Running {
    /// The TCP port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The RESPB port, when one was asked for.
    pub fn respb_port(&self) -> Option<u16> {
        self.respb_port
    }

    /// True once a client sent `SHUTDOWN`.
    pub fn shutdown_requested(&self) -> bool {
        self.knobs.shutdown.load(Ordering::Relaxed)
    }

    /// Stops every thread and waits for them (as dropping does).
    pub fn stop(self) {}
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wake the acceptors.
        for a in &self.wake_tcp {
            let _ = std::net::TcpStream::connect_timeout(a, Duration::from_secs(1));
        }
        if let Some(p) = &self.wake_unix {
            let _ = std::os::unix::net::UnixStream::connect(p);
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

enum Stream {
    Tcp(mio::net::TcpStream),
    Unix(mio::net::UnixStream),
}

impl Stream {
    fn source(&mut self) -> &mut dyn mio::event::Source {
        match self {
            Stream::Tcp(s) => s,
            Stream::Unix(s) => s,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(b),
            Stream::Unix(s) => s.read(b),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(b),
            Stream::Unix(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Starts the server: binds, then serves in background threads.
///
/// # Errors
/// The address cannot be bound, or a thread cannot be started.
pub fn start(cfg: &Config) -> io::Result<Running> {
    let listener = std::net::TcpListener::bind((cfg.bind.as_str(), cfg.port))?;
    let port = listener.local_addr()?.port();
    let respb = match cfg.respb_port {
        Some(p) => Some(std::net::TcpListener::bind((cfg.bind.as_str(), p))?),
        None => None,
    };
    let respb_port = match &respb {
        Some(l) => Some(l.local_addr()?.port()),
        None => None,
    };
    let mut wake_tcp = vec![wake_addr(listener.local_addr()?)];
    if let Some(l) = &respb {
        wake_tcp.push(wake_addr(l.local_addr()?));
    }
    let unix = match &cfg.unixsocket {
        Some(p) => {
            let _ = std::fs::remove_file(p);
            Some(std::os::unix::net::UnixListener::bind(p)?)
        }
        None => None,
    };
    let knobs = Arc::new(Knobs::from_config(cfg));
    let db = Arc::new(Db::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut workers = Vec::new();
    let mut threads = Vec::new();
    for w in 0..cfg.threads.max(1) {
        let (tx, rx) = mpsc::channel::<accept::NewConn>();
        let poll = mio::Poll::new()?;
        let waker = Arc::new(mio::Waker::new(poll.registry(), mio::Token(usize::MAX))?);
        workers.push((tx, waker));
        let (db, knobs, stop) = (db.clone(), knobs.clone(), stop.clone());
        threads.push(
            std::thread::Builder::new()
                .name(format!("serve-worker-{w}"))
                .spawn(move || worker(poll, rx, &db, &knobs, &stop))?,
        );
    }
    let handoff = Arc::new(accept::Handoff {
        workers,
        next: AtomicU64::new(0),
        knobs: knobs.clone(),
    });
    let wake_unix = unix.as_ref().and(cfg.unixsocket.clone());
    let listeners = [
        Some(("serve-accept", accept::Listener::Tcp(listener), false)),
        respb.map(|l| ("serve-accept-respb", accept::Listener::Tcp(l), true)),
        unix.map(|l| ("serve-accept-unix", accept::Listener::Unix(l), false)),
    ];
    for (name, listener, is_respb) in listeners.into_iter().flatten() {
        let (handoff, stop) = (handoff.clone(), stop.clone());
        threads.push(
            std::thread::Builder::new()
                .name(name.into())
                .spawn(move || accept::run(&listener, is_respb, &handoff, &stop))?,
        );
    }
    Ok(Running {
        port,
        respb_port,
        wake_tcp,
        wake_unix,
        stop,
        threads,
        knobs,
    })
}

/// Where to connect to wake an acceptor bound to `a` (a wildcard address is reached on
/// loopback).
fn wake_addr(a: std::net::SocketAddr) -> std::net::SocketAddr {
    let mut a = a;
    if a.ip().is_unspecified() {
        a.set_ip(match a {
            std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    a
}

struct Slot {
    stream: Stream,
    conn: Conn,
    out: Vec<u8>,
    /// Replies held back by `delay_us`: (when to send, bytes).
    delayed: std::collections::VecDeque<(Instant, Vec<u8>)>,
    closing: bool,
}

/// One worker thread's event loop: its connections, stalls and slowdown.
fn worker(
    mut poll: mio::Poll,
    rx: mpsc::Receiver<accept::NewConn>,
    db: &Db,
    knobs: &Knobs,
    stop: &AtomicBool,
) {
    let mut events = mio::Events::with_capacity(1024);
    let mut slots: Vec<Option<Slot>> = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut next_id = 1u64;
    let mut next_stall: Option<Instant> = None;
    while !stop.load(Ordering::Relaxed) {
        stall_if_due(knobs, &mut next_stall);
        let timeout = poll_timeout(&slots, next_stall);
        if poll.poll(&mut events, Some(timeout)).is_err() {
            continue;
        }
        let busy_from = thread_cpu_ns();
        while let Ok((stream, respb)) = rx.try_recv() {
            take_in(&poll, &mut slots, stream, respb, next_id, knobs);
            next_id += 1;
        }
        let mut touched: Vec<usize> = events
            .iter()
            .map(|e| e.token().0)
            .filter(|t| *t != usize::MAX)
            .collect();
        // Connections with delayed replies due are served too.
        for (i, s) in slots.iter().enumerate() {
            if s.as_ref()
                .is_some_and(|s| s.delayed.front().is_some_and(|(t, _)| *t <= Instant::now()))
            {
                touched.push(i);
            }
        }
        touched.sort_unstable();
        touched.dedup();
        for i in touched {
            let Some(slot) = slots.get_mut(i).and_then(Option::as_mut) else {
                continue;
            };
            if serve(slot, &mut buf, db, knobs) {
                let _ = poll.registry().deregister(slot.stream.source());
                slots[i] = None;
                knobs.clients.fetch_sub(1, Ordering::Relaxed);
            }
        }
        slow_down(knobs, busy_from);
    }
}

/// Stalls: when one is due, the whole thread stops answering for `stall_ms`.
fn stall_if_due(knobs: &Knobs, next_stall: &mut Option<Instant>) {
    let every = knobs.stall_every_ms.load(Ordering::Relaxed);
    let stall = knobs.stall_ms.load(Ordering::Relaxed);
    if every > 0 && stall > 0 {
        let due = *next_stall.get_or_insert_with(|| Instant::now() + Duration::from_millis(every));
        if Instant::now() >= due {
            std::thread::sleep(Duration::from_millis(stall));
            *next_stall = Some(due + Duration::from_millis(every));
        }
    } else {
        *next_stall = None;
    }
}

/// How long the event loop may wait: until the next delayed reply or stall, at most
/// 100 ms (to see knob changes and the stop flag).
fn poll_timeout(slots: &[Option<Slot>], next_stall: Option<Instant>) -> Duration {
    let now = Instant::now();
    let mut timeout = Duration::from_millis(100);
    for s in slots.iter().flatten() {
        if let Some((t, _)) = s.delayed.front() {
            timeout = timeout.min(t.saturating_duration_since(now));
        }
    }
    if let Some(n) = next_stall {
        timeout = timeout.min(n.saturating_duration_since(now));
    }
    timeout
}

/// Registers a connection handed over by an acceptor in the first free slot.
fn take_in(
    poll: &mio::Poll,
    slots: &mut Vec<Option<Slot>>,
    mut stream: Stream,
    respb: bool,
    id: u64,
    knobs: &Knobs,
) {
    use mio::{Interest, Token};
    let i = slots.iter().position(Option::is_none).unwrap_or_else(|| {
        slots.push(None);
        slots.len() - 1
    });
    let interest = Interest::READABLE | Interest::WRITABLE;
    if poll
        .registry()
        .register(stream.source(), Token(i), interest)
        .is_err()
    {
        knobs.clients.fetch_sub(1, Ordering::Relaxed);
        return;
    }
    slots[i] = Some(Slot {
        stream,
        conn: if respb {
            Conn::new_respb(id)
        } else {
            Conn::new(id)
        },
        out: Vec::new(),
        delayed: Default::default(),
        closing: false,
    });
}

/// Reads what the connection sent, runs it, writes what is due; true when the
/// connection is done (gone, or closing with nothing left to send).
fn serve(slot: &mut Slot, buf: &mut [u8], db: &Db, knobs: &Knobs) -> bool {
    let delay = knobs.delay_us.load(Ordering::Relaxed);
    let mut gone = false;
    loop {
        match slot.stream.read(buf) {
            Ok(0) => {
                gone = true;
                break;
            }
            Ok(n) => {
                let before = slot.out.len();
                let fed = slot.conn.feed(db, knobs, &buf[..n], &mut slot.out);
                if delay > 0 && slot.out.len() > before {
                    let bytes = slot.out.split_off(before);
                    slot.delayed
                        .push_back((Instant::now() + Duration::from_micros(delay), bytes));
                }
                if fed == Feed::Close {
                    slot.closing = true;
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => {
                gone = true;
                break;
            }
        }
    }
    let now = Instant::now();
    while slot.delayed.front().is_some_and(|(t, _)| *t <= now) {
        if let Some((_, b)) = slot.delayed.pop_front() {
            slot.out.extend_from_slice(&b);
        }
    }
    while !slot.out.is_empty() && !gone {
        match slot.stream.write(&slot.out) {
            Ok(0) => gone = true,
            Ok(n) => {
                slot.out.drain(..n);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => gone = true,
        }
    }
    gone || (slot.closing && slot.out.is_empty() && slot.delayed.is_empty())
}

/// A known slowdown: spin pct % of the CPU time this batch took (with the cold start's
/// extra while it lasts).
fn slow_down(knobs: &Knobs, busy_from: u64) {
    let mut pct = knobs.slowdown_milli_pct.load(Ordering::Relaxed) as f64 / 1000.0;
    let cold_ms = knobs.cold_ms.load(Ordering::Relaxed);
    if cold_ms > 0 && knobs.started.elapsed() < Duration::from_millis(cold_ms) {
        pct += knobs.cold_slowdown_milli_pct.load(Ordering::Relaxed) as f64 / 1000.0;
    }
    if pct > 0.0 {
        // CPU time of this batch: under preemption its wall time would overstate
        // the work and make the slowdown larger than asked.
        let busy = thread_cpu_ns().saturating_sub(busy_from);
        spin((busy as f64 * pct / 100.0) as u64);
    }
}
