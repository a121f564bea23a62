//! A free loopback TCP port.
//!
//! The port is found by binding port 0 on 127.0.0.1 and releasing it, so another process
//! can take it before the caller binds it; [`crate::process::Server::start`] therefore
//! retries with a fresh port when a server does not come up.

use std::io;

/// Reserves a free loopback TCP port by binding port 0 and releasing it.
///
/// # Errors
/// When no loopback socket can be bound.
pub fn free_port() -> io::Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_can_be_bound_after_it_is_released() {
        // Another process may take a released port first (the race every caller retries
        // for): one of a few tries must bind.
        let bound = (0..5).any(|_| {
            let port = free_port().unwrap();
            port != 0 && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
        });
        assert!(bound, "no port found free could be bound");
    }
}
