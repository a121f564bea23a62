//! Live metrics: what a run or a server is doing now, as a Prometheus text endpoint
//! (`GET /metrics`) that a Prometheus server or any compatible scraper reads while the
//! run goes on.
//!
//! Nothing here measures: the numbers are those the run already keeps for its progress
//! line (the engine's [`resplab_engine::Progress`], once per second, with each command's
//! replies, errors and latency histogram) and those `resplab serve` keeps for `INFO`.
//!
//! - `text`: the exposition format (version 0.0.4, which OpenMetrics parsers read too):
//!   counters, gauges, a histogram and a summary from a [`LatencyHistogram`](resplab_stats::hist::LatencyHistogram).
//! - `live`: the state of a bench run or an experiment, fed by the progress callback
//!   and the experiment's events, rendered on each scrape.
//! - `experiment`: an experiment's events (trial, stored, running verdicts) into `live`.
//! - `serve`: the counters of `resplab serve`.
//! - `endpoint`: a small HTTP/1.1 server on its own thread (std's `TcpListener`; one
//!   request per connection), answering each scrape with the text of the moment.

pub mod endpoint;
pub mod experiment;
pub mod live;
pub mod serve;
pub mod text;

pub use endpoint::{Endpoint, MetricsError};
pub use live::Live;
