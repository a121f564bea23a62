//! Observations: the long-format table every comparison is computed from.
//!
//! Whatever the source — a resplab run file, a redis-benchmark CSV, a memtier JSON,
//! `go test -bench` output, a column of plain numbers or a stored experiment — it is
//! turned into a flat list of [`Observation`]s: one measured value of one metric of one
//! workload, for one labelled variant, in one trial. The comparison never looks back at
//! the source format; it groups observations by (workload, metric) and by label.
//!
//! Strings shared by many observations (label, workload, metric, file name) are held in
//! [`Arc`]s so that a million-line input costs one allocation per distinct string, not
//! one per value.
//!
//! Go benchmark files also carry `key: value` configuration lines (`goos`, `goarch`,
//! `pkg`, `cpu`, …). benchstat prints them above its tables, so each observation keeps
//! the configuration that was in force when its line was read ([`Observation::config`]).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// Which way a metric improves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    /// Bigger is better (throughput: ops/s, requests per second, B/s).
    HigherIsBetter,
    /// Smaller is better (latency, time per op, bytes or allocations per op).
    LowerIsBetter,
    /// The source does not say (plain numbers). Effects are reported as up/down only.
    Unknown,
}

impl Direction {
    /// The direction a unit implies: rates (`/s`, `/sec`, `ops`, `rps`) are better when
    /// higher, times, sizes and counts per operation are better when lower, and anything
    /// else is [`Direction::Unknown`].
    pub fn for_unit(unit: &str) -> Direction {
        let u = unit.to_ascii_lowercase();
        if u.ends_with("/s") || u.ends_with("/sec") || u == "rps" || u == "ops" {
            Direction::HigherIsBetter
        } else if u.ends_with("/op")
            || u == "ms"
            || u == "us"
            || u == "µs"
            || u == "ns"
            || u == "s"
            || u == "sec"
        {
            Direction::LowerIsBetter
        } else {
            Direction::Unknown
        }
    }

    /// Short name used in JSON and CSV output.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::HigherIsBetter => "higher_is_better",
            Direction::LowerIsBetter => "lower_is_better",
            Direction::Unknown => "unknown",
        }
    }
}

/// What was measured: a name, its unit and which way is better.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Metric {
    /// Metric name, e.g. `"ops_per_sec"`, `"p99_latency_ms"`, `"sec/op"`, `"value"`.
    pub name: String,
    /// Unit the values are in, e.g. `"ops/s"`, `"ms"`, `"ns/op"`, `"B/op"`, `""`.
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
}

impl Metric {
    /// A metric with a direction inferred from its unit by [`Direction::for_unit`].
    pub fn from_unit(name: impl Into<String>, unit: impl Into<String>) -> Metric {
        let unit = unit.into();
        let direction = Direction::for_unit(&unit);
        Metric {
            name: name.into(),
            unit,
            direction,
        }
    }

    /// A metric with an explicit direction.
    pub fn new(name: impl Into<String>, unit: impl Into<String>, direction: Direction) -> Metric {
        Metric {
            name: name.into(),
            unit: unit.into(),
            direction,
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.unit.is_empty() || self.unit == self.name {
            f.write_str(&self.name)
        } else {
            write!(f, "{} ({})", self.name, self.unit)
        }
    }
}

/// Where a value was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The file name as the user gave it (or `db:NAME` for stored experiments).
    pub file: Arc<str>,
    /// 1-based line number, when the format is line oriented.
    pub line: Option<u32>,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}", self.file, line),
            None => f.write_str(&self.file),
        }
    }
}

/// `key: value` configuration lines in force for an observation (Go benchmark format).
pub type Config = Arc<Vec<(String, String)>>;

/// One measured value.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// The variant this value belongs to (`baseline`, `new.txt`, `aof-always`).
    pub label: Arc<str>,
    /// The workload or benchmark name (`SET`, `Ping-2`, `Totals`); empty for plain
    /// numbers.
    pub workload: Arc<str>,
    /// What was measured.
    pub metric: Arc<Metric>,
    /// The value, in the metric's unit.
    pub value: f64,
    /// The interleaved round this trial ran in, when the source records it. Trials of
    /// different labels with the same round are paired by the comparison.
    pub round: Option<u32>,
    /// 0-based index of the trial within its (label, workload, metric) sample, in the
    /// order the trials were read.
    pub trial: u32,
    /// Where the value came from.
    pub origin: Origin,
    /// Configuration lines in force (Go benchmark format only).
    pub config: Option<Config>,
    /// Set when the source value is known to be unreliable (e.g. memtier's zero ops/s
    /// with a negative duration). Flagged values are kept, shown, and left out of the
    /// statistics, with a warning that cites this text.
    pub flag: Option<String>,
}

/// Key of one sample: (workload, metric, label).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SampleKey {
    pub workload: Arc<str>,
    pub metric: Arc<Metric>,
    pub label: Arc<str>,
}

/// The values of one label for one (workload, metric), in trial order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    /// Values that enter the statistics, in the order they were read.
    pub values: Vec<f64>,
    /// Round of each value in `values`, when known.
    pub rounds: Vec<Option<u32>>,
    /// Values that were flagged and left out, with the reason.
    pub flagged: Vec<(Origin, f64, String)>,
}

impl Sample {
    /// Number of values that enter the statistics.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when no value enters the statistics.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// True when every value carries a round number.
    pub fn has_rounds(&self) -> bool {
        !self.rounds.is_empty() && self.rounds.iter().all(Option::is_some)
    }
}

/// Observations grouped for comparison, keeping the order in which labels, workloads and
/// metrics first appeared (benchstat and ministat print in input order).
#[derive(Clone, Debug, Default)]
pub struct SampleSet {
    /// Labels in first-seen order.
    pub labels: Vec<Arc<str>>,
    /// Workloads in first-seen order.
    pub workloads: Vec<Arc<str>>,
    /// Metrics in first-seen order.
    pub metrics: Vec<Arc<Metric>>,
    /// Configuration of the first observation of each workload (Go format only).
    pub configs: BTreeMap<Arc<str>, Config>,
    samples: BTreeMap<SampleKey, Sample>,
}

impl SampleSet {
    /// Groups observations by (workload, metric, label).
    ///
    /// Cost: O(n log k) for n observations and k distinct samples.
    pub fn from_observations<'a, I>(observations: I) -> SampleSet
    where
        I: IntoIterator<Item = &'a Observation>,
    {
        let mut set = SampleSet::default();
        // Fast path for long runs of one key (plain numbers, large files): remember the
        // last key and its sample instead of looking it up for every value.
        let mut last: Option<SampleKey> = None;
        let mut pending = Sample::default();
        for obs in observations {
            let same = match &last {
                Some(k) => {
                    Arc::ptr_eq(&k.label, &obs.label)
                        && Arc::ptr_eq(&k.workload, &obs.workload)
                        && Arc::ptr_eq(&k.metric, &obs.metric)
                }
                None => false,
            };
            if !same {
                if let Some(k) = last.take() {
                    set.merge(k, std::mem::take(&mut pending));
                }
                set.note(obs);
                last = Some(SampleKey {
                    workload: obs.workload.clone(),
                    metric: obs.metric.clone(),
                    label: obs.label.clone(),
                });
            }
            match &obs.flag {
                Some(reason) => {
                    pending
                        .flagged
                        .push((obs.origin.clone(), obs.value, reason.clone()))
                }
                None => {
                    pending.values.push(obs.value);
                    pending.rounds.push(obs.round);
                }
            }
        }
        if let Some(k) = last.take() {
            set.merge(k, pending);
        }
        set
    }

    fn note(&mut self, obs: &Observation) {
        if !self.labels.iter().any(|l| **l == *obs.label) {
            self.labels.push(obs.label.clone());
        }
        if !self.workloads.iter().any(|w| **w == *obs.workload) {
            self.workloads.push(obs.workload.clone());
        }
        if !self.metrics.iter().any(|m| **m == *obs.metric) {
            self.metrics.push(obs.metric.clone());
        }
        if let Some(c) = &obs.config {
            self.configs
                .entry(obs.workload.clone())
                .or_insert_with(|| c.clone());
        }
    }

    fn merge(&mut self, key: SampleKey, add: Sample) {
        let s = self.samples.entry(key).or_default();
        if s.values.is_empty() && s.flagged.is_empty() {
            *s = add;
        } else {
            s.values.extend(add.values);
            s.rounds.extend(add.rounds);
            s.flagged.extend(add.flagged);
        }
    }

    /// The sample of `label` for (`workload`, `metric`), if any value was read for it.
    pub fn get(&self, workload: &str, metric: &Metric, label: &str) -> Option<&Sample> {
        let key = SampleKey {
            workload: Arc::from(workload),
            metric: Arc::new(metric.clone()),
            label: Arc::from(label),
        };
        self.samples.get(&key)
    }

    /// True when at least one label has values for (`workload`, `metric`).
    pub fn has(&self, workload: &str, metric: &Metric) -> bool {
        self.labels
            .iter()
            .any(|l| self.get(workload, metric, l).is_some())
    }

    /// Number of (workload, metric, label) samples.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// True when there is no sample at all.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Iterates over every sample with its key, ordered by key.
    pub fn iter(&self) -> impl Iterator<Item = (&SampleKey, &Sample)> {
        self.samples.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(label: &Arc<str>, w: &Arc<str>, m: &Arc<Metric>, v: f64, flag: bool) -> Observation {
        Observation {
            label: label.clone(),
            workload: w.clone(),
            metric: m.clone(),
            value: v,
            round: None,
            trial: 0,
            origin: Origin {
                file: Arc::from("f"),
                line: Some(1),
            },
            config: None,
            flag: flag.then(|| "bad".to_string()),
        }
    }

    #[test]
    fn groups_by_key_in_first_seen_order() {
        let a: Arc<str> = Arc::from("a");
        let b: Arc<str> = Arc::from("b");
        let w: Arc<str> = Arc::from("SET");
        let m = Arc::new(Metric::from_unit("ops_per_sec", "ops/s"));
        let list = vec![
            obs(&b, &w, &m, 1.0, false),
            obs(&a, &w, &m, 2.0, false),
            obs(&b, &w, &m, 3.0, true),
            obs(&b, &w, &m, 4.0, false),
        ];
        let set = SampleSet::from_observations(&list);
        assert_eq!(set.labels, vec![b.clone(), a.clone()]);
        let sb = set.get("SET", &m, "b").unwrap();
        assert_eq!(sb.values, vec![1.0, 4.0]);
        assert_eq!(sb.flagged.len(), 1);
        assert_eq!(set.get("SET", &m, "a").unwrap().values, vec![2.0]);
        assert!(set.get("GET", &m, "a").is_none());
        assert_eq!(m.direction, Direction::HigherIsBetter);
    }

    #[test]
    fn directions_from_units() {
        assert_eq!(Direction::for_unit("ns/op"), Direction::LowerIsBetter);
        assert_eq!(Direction::for_unit("MB/s"), Direction::HigherIsBetter);
        assert_eq!(Direction::for_unit("ms"), Direction::LowerIsBetter);
        assert_eq!(Direction::for_unit("widgets"), Direction::Unknown);
    }
}
