//! resplab-testkit.
