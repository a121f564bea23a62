//! resplab-workload.
