//! resplab-stats' integration tests, one test binary: ministat's and benchstat's numbers
//! against the real tools, and the seeded self-checks of the default comparison.

mod benchstat_exact;
mod ministat_exact;
mod self_checks;
