//! Segments and change points of every line of a history, and the CI gate on them.

use super::confirm::Confirmation;
use super::point::{direction_of, TrackedPoint};
use crate::sample::Direction;
use resplab_stats::changepoint::{change_points, ChangePointConfig};
use resplab_stats::StatsError;
use serde::Serialize;
use std::collections::BTreeMap;

/// A series analysed: one line per workload × metric.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistoryAnalysis {
    pub series: String,
    /// Number of tracked points in the series.
    pub points: usize,
    /// The permutation test's significance level.
    pub significance: f64,
    /// Fewest points on either side of a change point: a segment needs twice this many
    /// before any change can be found in it.
    pub min_segment: usize,
    pub lines: Vec<HistoryLine>,
}

/// The values of one workload and metric over the series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistoryLine {
    pub workload: String,
    pub metric: String,
    pub unit: String,
    /// `higher_is_better`, `lower_is_better` or `unknown`.
    pub direction: String,
    pub segments: Vec<Segment>,
}

/// A run of consecutive points measured on one host with one configuration: the unit
/// within which change points are searched.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Segment {
    pub host_fingerprint: String,
    pub config_fingerprint: String,
    /// Why this segment starts where it does (`None` for the first): which fingerprint
    /// changed. Points on either side of that boundary are not compared.
    pub starts_because: Option<String>,
    pub points: Vec<LinePoint>,
    pub change_points: Vec<ChangeAt>,
}

/// One point of a line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinePoint {
    /// The store's id of the tracked point.
    pub id: i64,
    pub measured_at_unix_ms: i64,
    pub commit: Option<String>,
    pub value: f64,
}

/// A change of level within a segment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChangeAt {
    /// Index in the segment's points of the first point of the new level.
    pub index: usize,
    /// The commit of the last point before the change and of the first after it.
    pub commit_before: Option<String>,
    pub commit_after: Option<String>,
    pub measured_at_unix_ms: i64,
    pub mean_before: f64,
    pub mean_after: f64,
    pub effect_pct: f64,
    pub ci_low_pct: f64,
    pub ci_high_pct: f64,
    pub p_value: f64,
    /// True when the change makes the metric worse, false when better, `None` when the
    /// metric's direction is unknown.
    pub is_regression: Option<bool>,
    /// The store's id of the first point of the new level.
    pub point_id: i64,
    /// Its A/B re-measurement, once `resplab history --confirm` has run it.
    pub confirmation: Option<Confirmation>,
}

/// A line whose newest change point worsens it beyond the gate's threshold.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GateFailure {
    pub workload: String,
    pub metric: String,
    pub change: ChangeAt,
}

/// Splits the points of `series` into lines and segments and finds each segment's
/// change points. `metric`, when given, keeps only the lines of that metric. Points must
/// be in measurement order.
///
/// # Errors
/// A [`StatsError`] from the change-point search (a configuration out of range).
pub fn analyse(
    series: &str,
    points: &[TrackedPoint],
    metric: Option<&str>,
    cfg: &ChangePointConfig,
) -> Result<HistoryAnalysis, StatsError> {
    let mut lines: BTreeMap<(String, String), HistoryLine> = BTreeMap::new();
    for p in points {
        for v in p
            .values
            .iter()
            .filter(|v| metric.is_none_or(|m| v.metric == m))
        {
            let line = lines
                .entry((v.workload.clone(), v.metric.clone()))
                .or_insert_with(|| HistoryLine {
                    workload: v.workload.clone(),
                    metric: v.metric.clone(),
                    unit: v.unit.clone(),
                    direction: v.direction.clone(),
                    segments: Vec::new(),
                });
            push_point(line, p, v.value);
        }
    }
    let mut lines: Vec<HistoryLine> = lines.into_values().collect();
    for line in &mut lines {
        let direction = direction_of(&line.direction);
        for seg in &mut line.segments {
            seg.change_points = segment_changes(seg, direction, cfg)?;
        }
    }
    Ok(HistoryAnalysis {
        series: series.to_string(),
        points: points.len(),
        significance: cfg.significance,
        min_segment: cfg.min_segment,
        lines,
    })
}

/// Appends a point to the line, starting a new segment when the host or the
/// configuration differs from the previous point's.
fn push_point(line: &mut HistoryLine, p: &TrackedPoint, value: f64) {
    let because = match line.segments.last() {
        None => Some(None),
        Some(s) => {
            let host = s.host_fingerprint != p.host_fingerprint;
            let config = s.config_fingerprint != p.config_fingerprint;
            match (host, config) {
                (false, false) => None,
                (true, false) => Some(Some("measured on another host".to_string())),
                (false, true) => Some(Some("measured with another configuration".to_string())),
                (true, true) => Some(Some(
                    "measured on another host with another configuration".to_string(),
                )),
            }
        }
    };
    if let Some(starts_because) = because {
        line.segments.push(Segment {
            host_fingerprint: p.host_fingerprint.clone(),
            config_fingerprint: p.config_fingerprint.clone(),
            starts_because,
            points: Vec::new(),
            change_points: Vec::new(),
        });
    }
    if let Some(seg) = line.segments.last_mut() {
        seg.points.push(LinePoint {
            id: p.id,
            measured_at_unix_ms: p.measured_at_unix_ms,
            commit: p.commit.clone(),
            value,
        });
    }
}

fn segment_changes(
    seg: &Segment,
    direction: Direction,
    cfg: &ChangePointConfig,
) -> Result<Vec<ChangeAt>, StatsError> {
    let values: Vec<f64> = seg.points.iter().map(|p| p.value).collect();
    let found = change_points(&values, cfg)?;
    Ok(found
        .into_iter()
        .map(|c| {
            let after = &seg.points[c.index];
            ChangeAt {
                index: c.index,
                commit_before: seg.points[c.index - 1].commit.clone(),
                commit_after: after.commit.clone(),
                measured_at_unix_ms: after.measured_at_unix_ms,
                mean_before: c.mean_before,
                mean_after: c.mean_after,
                effect_pct: c.effect_pct,
                ci_low_pct: c.ci_pct.0,
                ci_high_pct: c.ci_pct.1,
                p_value: c.p_value,
                is_regression: match direction {
                    Direction::HigherIsBetter => Some(c.effect_pct < 0.0),
                    Direction::LowerIsBetter => Some(c.effect_pct > 0.0),
                    Direction::Unknown => None,
                },
                point_id: after.id,
                confirmation: None,
            }
        })
        .collect())
}

impl HistoryAnalysis {
    /// Puts each stored confirmation on its change point: the one of the same workload
    /// and metric with the same commits on either side.
    pub fn attach(&mut self, confirmations: &[Confirmation]) {
        for line in &mut self.lines {
            for seg in &mut line.segments {
                for c in &mut seg.change_points {
                    c.confirmation = confirmations
                        .iter()
                        .find(|k| {
                            k.workload == line.workload
                                && k.metric == line.metric
                                && Some(&k.commit_before) == c.commit_before.as_ref()
                                && Some(&k.commit_after) == c.commit_after.as_ref()
                        })
                        .cloned();
                }
            }
        }
    }

    /// Every change point not yet re-measured, with its line: what `--confirm` runs.
    pub fn unconfirmed(&self) -> Vec<(&HistoryLine, &ChangeAt)> {
        let mut out = Vec::new();
        for line in &self.lines {
            for seg in &line.segments {
                for c in &seg.change_points {
                    if c.confirmation.is_none() {
                        out.push((line, c));
                    }
                }
            }
        }
        out
    }

    /// [`HistoryAnalysis::gate`] on confirmed change points only: the lines whose newest
    /// confirmed change point of their newest segment is a regression of more than `pct`
    /// percent (of the history's effect).
    pub fn gate_confirmed(&self, pct: f64) -> Vec<GateFailure> {
        self.lines
            .iter()
            .filter_map(|line| {
                let change = line
                    .segments
                    .last()?
                    .change_points
                    .iter()
                    .rev()
                    .find(|c| c.confirmation.as_ref().is_some_and(|k| k.confirmed))?;
                failure(line, change, pct)
            })
            .collect()
    }

    /// The lines whose newest change point — in their newest segment, the only one
    /// measured like the newest point — is a regression of more than `pct` percent.
    /// Lines of unknown direction never fail the gate.
    pub fn gate(&self, pct: f64) -> Vec<GateFailure> {
        self.lines
            .iter()
            .filter_map(|line| {
                let change = line.segments.last()?.change_points.last()?;
                failure(line, change, pct)
            })
            .collect()
    }
}

/// A gate failure when `change` is a regression of more than `pct` percent.
fn failure(line: &HistoryLine, change: &ChangeAt, pct: f64) -> Option<GateFailure> {
    (change.is_regression == Some(true) && change.effect_pct.abs() > pct).then(|| GateFailure {
        workload: line.workload.clone(),
        metric: line.metric.clone(),
        change: change.clone(),
    })
}

#[cfg(test)]
mod tests;
