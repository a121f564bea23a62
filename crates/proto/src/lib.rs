//! resplab-proto.
