//! Statistics for resplab: latency histograms and the estimators, tests and power
//! calculations behind `resplab compare`.
//!
//! This crate is pure: numbers in, numbers out, no I/O of any kind. Each module states
//! its method and cost and cites where the method comes from. It depends on no crate of
//! resplab and knows nothing of records, files, stores or rendering.
//!
//! - [`warning`]: every warning resplab gives, one typed enum whose variants word their
//!   own advice; it lives here, at the bottom of the crate graph, so that the verdicts
//!   here and every crate above (results re-exports it) raise and render the same type.
//!
//! - [`ministat`]: ministat's vitals and Student's t, number for number; Welch's t.
//! - [`utest`]: the Mann–Whitney U test as benchstat computes it.
//! - [`quantile_ci`]: benchstat's median and its order-statistic confidence interval.
//! - [`rank`]: Wilcoxon signed-rank and Hodges–Lehmann shifts with exact intervals.
//! - [`select`]: k-th pairwise difference / Walsh average without listing them.
//! - [`verdict`]: the default comparison (effect %, CI, p, MDE, verdict, warnings).
//! - [`sequential`]: run until decided: Lai's confidence sequence for the mean log
//!   ratio, its stopping rule, and the simulation of its error rates.
//! - [`power`]: minimal detectable effect and sample sizes.
//! - [`budget`]: calibration: measured noise → MDE of any plan, cheapest plan for a target,
//!   the best plan within a wall time for fixed rounds or a run until decided.
//! - [`scale`]: a robust scale (Rousseeuw and Croux's Qn) that one wild round cannot
//!   inflate.
//! - [`bootstrap`]: seeded geomean-of-ratios interval across workloads.
//! - [`changepoint`]: change points of a history (E-Divisive means, permutation test).
//! - [`fdr`]: Benjamini–Hochberg q-values.
//! - [`describe`]: means, variances, both medians (benchstat's and the plain one),
//!   quantiles, geomean, MAD: the one median and quantile helper of resplab.
//! - [`dist`]: normal and Student t distributions.

pub mod bootstrap;
pub mod budget;
pub mod changepoint;
pub mod describe;
pub mod dist;
pub mod error;
pub mod fdr;
pub mod hist;
pub mod ministat;
pub mod power;
pub mod quantile_ci;
pub mod rank;
pub mod scale;
pub mod select;
pub mod sequential;
pub mod utest;
pub mod verdict;
pub mod warning;

pub use error::StatsError;
