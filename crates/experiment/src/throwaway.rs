//! The server a load run without a target measures (`resplab bench` with no
//! `-h/-p/-s/-u`): a throwaway `redis-server` on a free loopback port with persistence
//! off (`resplab_engine::server`, started through `resplab-sys`), or, where no
//! `redis-server` is installed and none was named, the lab's reference server
//! (`resplab-serve`) in this process. Either stops when dropped; [`Throwaway::started`]
//! is the line that says which one runs where.

use resplab_engine::{ServerError, ServerOptions, Target, ThrowawayServer};
use std::path::Path;

/// redis-server's own default of `maxclients`.
const REDIS_MAXCLIENTS: u32 = 10_000;

/// The server a run started for itself (stopped when dropped).
#[derive(Debug)]
pub enum Throwaway {
    Redis {
        server: ThrowawayServer,
        binary: String,
    },
    Serve(resplab_serve::Running),
}

/// Why no server could be started.
#[derive(Debug, thiserror::Error)]
pub enum ThrowawayError {
    #[error(transparent)]
    Redis(#[from] ServerError),
    #[error("starting resplab serve in place of redis-server: {0}")]
    Serve(#[from] std::io::Error),
}

impl Throwaway {
    /// Starts `binary` (default `redis-server` from the PATH) with room for `clients`
    /// connections and a few more; the reference server when no `redis-server` is
    /// installed and no binary was named.
    ///
    /// # Errors
    /// The server cannot be started or does not become ready.
    pub fn start(binary: Option<&Path>, clients: u32) -> Result<Throwaway, ThrowawayError> {
        let mut opts = ServerOptions::default();
        if let Some(bin) = binary {
            opts.binary = bin.display().to_string();
        }
        let maxclients = clients.saturating_add(32);
        if maxclients > REDIS_MAXCLIENTS {
            opts.extra_args
                .extend(["--maxclients".to_string(), maxclients.to_string()]);
        }
        match ThrowawayServer::start_with(&opts) {
            Ok(server) => Ok(Throwaway::Redis {
                server,
                binary: opts.binary,
            }),
            Err(ServerError::NotInstalled { .. }) if binary.is_none() => {
                let config = resplab_serve::Config {
                    port: 0,
                    ..resplab_serve::Config::default()
                };
                Ok(Throwaway::Serve(resplab_serve::start(&config)?))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Where the run connects.
    pub fn target(&self) -> Target {
        match self {
            Throwaway::Redis { server, .. } => Target::Tcp {
                host: server.host().to_string(),
                port: server.port(),
            },
            Throwaway::Serve(s) => Target::Tcp {
                host: "127.0.0.1".into(),
                port: s.port(),
            },
        }
    }

    /// The server process's pid: `None` for the reference server, which runs in this
    /// process, or a redis-server whose pid is unknown.
    pub fn pid(&self) -> Option<u32> {
        match self {
            Throwaway::Redis { server, .. } => server.pid(),
            Throwaway::Serve(_) => None,
        }
    }

    /// The line that says which server was started and where.
    pub fn started(&self) -> String {
        match self {
            Throwaway::Redis { server, binary } => format!(
                "no target given: started a throwaway {binary} on {}:{} (persistence off); it stops when the run ends",
                server.host(),
                server.port()
            ),
            Throwaway::Serve(s) => format!(
                "no target given and no redis-server installed: started resplab's reference server (resplab serve, one thread) on 127.0.0.1:{}; figures describe it, not Redis (apt-get install redis-server for a throwaway redis-server)",
                s.port()
            ),
        }
    }
}
