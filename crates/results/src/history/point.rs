//! One tracked measurement and how imported observations become its values.

use crate::sample::{Direction, Observation};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One value of a tracked measurement: the median of its trials for one workload and
/// metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrackedValue {
    pub workload: String,
    pub metric: String,
    pub unit: String,
    /// `higher_is_better`, `lower_is_better` or `unknown` ([`Direction::as_str`]).
    pub direction: String,
    pub value: f64,
    /// How many trials the value is the median of.
    pub trials: u32,
}

impl TrackedValue {
    /// The direction named by `direction`.
    pub fn direction(&self) -> Direction {
        direction_of(&self.direction)
    }
}

/// One measurement of a series, as tracked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrackedPoint {
    /// The store's id of the point (0 before it is stored).
    pub id: i64,
    pub measured_at_unix_ms: i64,
    /// The revision measured, as the user gave it.
    pub commit: Option<String>,
    /// [`fingerprint`] of the host facts the values were measured on.
    pub host_fingerprint: String,
    /// The host facts themselves (a `HostInfo` as JSON).
    pub host: serde_json::Value,
    /// [`fingerprint`] of the configuration the values were measured with.
    pub config_fingerprint: String,
    /// `k=v` tags given to `resplab track`.
    pub tags: Vec<(String, String)>,
    /// What the values were read from (a file name or `db:NAME`).
    pub source: String,
    pub values: Vec<TrackedValue>,
}

/// The values of one measurement: per (workload, metric), the plain median of the
/// observations' trials (flagged values left out), in sorted order. Labels are ignored:
/// a tracked measurement is one variant.
pub fn values_of<'a>(observations: impl IntoIterator<Item = &'a Observation>) -> Vec<TrackedValue> {
    let mut by_key: BTreeMap<(String, String), (String, Direction, Vec<f64>)> = BTreeMap::new();
    for o in observations {
        if o.flag.is_some() || !o.value.is_finite() {
            continue;
        }
        by_key
            .entry((o.workload.to_string(), o.metric.name.clone()))
            .or_insert_with(|| (o.metric.unit.clone(), o.metric.direction, Vec::new()))
            .2
            .push(o.value);
    }
    by_key
        .into_iter()
        .map(
            |((workload, metric), (unit, direction, values))| TrackedValue {
                workload,
                metric,
                unit,
                direction: direction.as_str().to_string(),
                value: resplab_stats::describe::plain_median(&values),
                trials: values.len() as u32,
            },
        )
        .collect()
}

/// A short, stable fingerprint of a JSON value: 16 hex digits of the 64-bit FNV-1a hash
/// of its compact text (object keys sorted, as `serde_json` keeps them).
pub fn fingerprint(value: &serde_json::Value) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in value.to_string().bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The direction named by [`Direction::as_str`].
pub(crate) fn direction_of(name: &str) -> Direction {
    match name {
        "higher_is_better" => Direction::HigherIsBetter,
        "lower_is_better" => Direction::LowerIsBetter,
        _ => Direction::Unknown,
    }
}
