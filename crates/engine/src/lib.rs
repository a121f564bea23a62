//! resplab-engine.
