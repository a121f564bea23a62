//! Idle connections: redis-benchmark's `-I`, which opens its `-c` connections, sends
//! nothing and waits until it is stopped. It measures what holding many clients costs
//! a server (memory, its event loop's work), not requests.

use crate::config::RunConfig;
use crate::connect;
use crate::error::EngineError;
use crate::stop::StopToken;
use std::time::Duration;

/// Opens `cfg.clients` connections to the target, each with the set-up the
/// configuration asks for, and holds them until `stop`; returns how many were opened.
///
/// # Errors
/// A connection that cannot be opened or whose set-up is refused: the ones already
/// open are closed.
pub fn hold(cfg: &RunConfig, stop: &StopToken) -> Result<u32, EngineError> {
    let mut open = Vec::with_capacity(cfg.clients as usize);
    for _ in 0..cfg.clients {
        if stop.is_stopped() {
            break;
        }
        let conn = connect::open_ready(cfg, cfg.connect_timeout)
            .map_err(|e| e.into_engine(&cfg.target))?;
        open.push(conn);
    }
    while !stop.is_stopped() {
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(open.len() as u32)
}
