//! `resplab serve`: the lab's reference server in the foreground until Ctrl-C. The
//! flags map onto `resplab_serve::Config`; its checks and the lines describing the
//! started server are `resplab_serve::startup`.

use anyhow::Context as _;
use clap::Args;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Flags of `resplab serve`.
#[derive(Debug, Args)]
#[command(
    about = "The lab's reference server: RESP2/RESP3 and RESPB, in memory, with known effects and faults",
    long_about = "The lab's reference server: an in-memory server speaking RESP2 and RESP3 (HELLO 3), and RESPB on --respb-port, with the commands the bench catalog and memtier-style mixes send, and with knobs that give it known effects (--work-ns, --slowdown) and faults (--stall, --drop-every, --garbage-every, --delay-us). The knobs are also CONFIG SET parameters (work-ns, slowdown, stall-ms, stall-every, drop-every, garbage-every, delay-us), so they can change under load.\n\nIt is not a Redis replacement: no persistence, no replication, no eviction, no transactions or scripting, and multi-key commands are not atomic across keys."
)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: String,
    /// TCP port (0: any free port; the one chosen is printed).
    #[arg(short = 'p', long, default_value_t = 6379)]
    pub port: u16,
    /// Also listen on this Unix socket.
    #[arg(long, value_name = "PATH")]
    pub unixsocket: Option<PathBuf>,
    /// Also listen for the RESPB binary protocol on this TCP port (0: any free port).
    #[arg(long, value_name = "PORT")]
    pub respb_port: Option<u16>,
    /// Serve the server's counters (commands, connections, clients, CPU, knobs) in the
    /// Prometheus text format at http://HOST:PORT/metrics.
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
    /// Worker threads, one event loop each.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Busy-wait this many nanoseconds per command (a known cost per request).
    #[arg(long, value_name = "NS", default_value_t = 0)]
    pub work_ns: u64,
    /// Make the server exactly PCT % slower at any load: after each batch of work that
    /// took b, spin a further b x PCT/100.
    #[arg(long, value_name = "PCT", default_value_t = 0.0)]
    pub slowdown: f64,
    /// Stop answering for MS milliseconds every --stall-every seconds.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub stall: u64,
    /// Seconds between stalls.
    #[arg(long, value_name = "S", default_value_t = 0.0)]
    pub stall_every: f64,
    /// Close the connection instead of answering every N-th command of a connection.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub drop_every: u64,
    /// Send bytes that are not RESP instead of every N-th reply of a connection.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub garbage_every: u64,
    /// Hold every reply back this many microseconds.
    #[arg(long, value_name = "US", default_value_t = 0)]
    pub delay_us: u64,
    /// A cold start: the first MS milliseconds after start run --cold-slowdown % slower.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub cold_ms: u64,
    /// How much slower the --cold-ms start is, percent (as --slowdown).
    #[arg(long, value_name = "PCT", default_value_t = 0.0)]
    pub cold_slowdown: f64,
    /// A command whose every call costs a further --slow-command-ns, spent in one named
    /// function (slow_command_cost) that a profile of the server shows.
    #[arg(long, value_name = "NAME", requires = "slow_command_ns")]
    pub slow_command: Option<String>,
    /// The extra cost of each --slow-command call, nanoseconds.
    #[arg(
        long,
        value_name = "NS",
        default_value_t = 0,
        requires = "slow_command"
    )]
    pub slow_command_ns: u64,
}

/// Runs `resplab serve` until Ctrl-C (or SIGTERM).
///
/// # Errors
/// Bad flags or an address that cannot be bound (exit 2).
pub fn run(a: ServeArgs) -> anyhow::Result<ExitCode> {
    let cfg = config(&a);
    cfg.validate()?;
    // The signal handlers first: they need descriptors, and once the server listens its
    // clients may take every descriptor the process may have.
    let (tx, rx) = std::sync::mpsc::channel();
    let _ = crate::signal::set_handler(move || {
        let _ = tx.send(());
    });
    let server = resplab_serve::start(&cfg)
        .with_context(|| format!("--bind {} --port {}: cannot listen", a.bind, a.port))?;
    // Standard output may be closed early by whoever started the server (it read the
    // first line): the lines are information, never a reason to stop.
    let mut stdout = std::io::stdout();
    for line in server.banner(&cfg) {
        let _ = writeln!(stdout, "{line}");
    }
    let _ = stdout.flush();
    let _metrics = match &a.metrics_addr {
        Some(addr) => {
            let knobs = server.knobs.clone();
            let render = std::sync::Arc::new(move || resplab_metrics::serve::render(&knobs));
            let started = resplab_metrics::Endpoint::start(addr, render);
            match crate::output::metrics::announced(started) {
                Ok(e) => Some(e),
                Err(e) => {
                    server.stop();
                    return Err(e);
                }
            }
        }
        None => None,
    };
    wait_for_stop(&server, &rx);
    server.stop();
    if let Some(p) = &a.unixsocket {
        let _ = std::fs::remove_file(p);
    }
    Ok(ExitCode::SUCCESS)
}

/// The flags as the server's configuration.
fn config(a: &ServeArgs) -> resplab_serve::Config {
    resplab_serve::Config {
        bind: a.bind.clone(),
        port: a.port,
        unixsocket: a.unixsocket.clone(),
        respb_port: a.respb_port,
        threads: a.threads,
        work_ns: a.work_ns,
        slowdown_pct: a.slowdown,
        stall_ms: a.stall,
        stall_every_s: a.stall_every,
        drop_every: a.drop_every,
        garbage_every: a.garbage_every,
        delay_us: a.delay_us,
        cold_ms: a.cold_ms,
        cold_slowdown_pct: a.cold_slowdown,
        slow_command: a.slow_command.clone(),
        slow_command_ns: a.slow_command_ns,
    }
}

/// Until Ctrl-C (SIGTERM, SIGHUP) or SHUTDOWN from a client. Handlers that could not be
/// installed (`rx` disconnected) leave the signals their default action; the server runs
/// on.
fn wait_for_stop(server: &resplab_serve::Running, rx: &std::sync::mpsc::Receiver<()>) {
    use std::sync::mpsc::RecvTimeoutError;
    let tick = std::time::Duration::from_millis(50);
    while !server.shutdown_requested() {
        match rx.recv_timeout(tick) {
            Ok(()) => break,
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(tick),
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}
