//! resplab-serve's integration tests, one test binary: replies byte for byte, arbitrary
//! request bytes, the RESPB port, the server's life, the cold-start knob and the spin.

mod cold;
mod feed;
mod lifecycle;
mod replies;
mod respb;
mod spin;
