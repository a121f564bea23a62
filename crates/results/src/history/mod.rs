//! Histories: a named series of measurements of one benchmark over time (one point per
//! tracked run, each with its commit), and where its level changed.
//!
//! - [`TrackedPoint`] is what `resplab track` appends: the values of one measurement,
//!   one per workload and metric, with its commit, time, host and configuration
//!   fingerprints and tags. [`values_of`] reduces imported observations to those values.
//! - [`analyse`] splits each workload × metric line into segments of one host and one
//!   configuration — points are never compared across a segment boundary — and finds
//!   the change points of each segment with `resplab_stats::changepoint` (E-Divisive
//!   means with a permutation test). [`HistoryAnalysis::gate`] is the CI gate: does the
//!   newest change point of some line worsen it by more than a threshold.
//!
//! - [`Confirmation`] is the A/B re-measurement of a change point
//!   (`resplab history --confirm`); [`HistoryAnalysis::attach`] puts the stored ones on
//!   their change points, and [`HistoryAnalysis::gate_confirmed`] gates on the newest
//!   confirmed one.
//!
//! Neighbours: the store keeps the points (`history_points`), `resplab-experiment`
//! builds them from files and stored experiments (with the engine's host detection),
//! `resplab-report` renders an analysis.

mod analyse;
mod confirm;
mod point;

pub use analyse::{
    analyse, ChangeAt, GateFailure, HistoryAnalysis, HistoryLine, LinePoint, Segment,
};
pub use confirm::Confirmation;
pub use point::{fingerprint, values_of, TrackedPoint, TrackedValue};
