//! resplab-proto's integration tests, one test binary: the RESP decoders (unit and property
//! tests) and the RESPB codec, opcode table and reply scanner, one module each; `common`
//! holds the reply values they share.

mod common;

mod resp_decode;
mod resp_props;
mod respb_codec;
mod respb_opcodes;
mod respb_scan;
