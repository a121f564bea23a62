//! Statistics for resplab: latency histograms and the estimators, tests and power
//! calculations behind `resplab compare`.
//!
//! This crate is pure: numbers in, numbers out, no I/O of any kind. Each module states
//! its method and cost and cites where the method comes from.

pub mod hist;
