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

/// Observations stored compactly: 16 bytes per value (the value, its round and an index
/// into a short list of what it shares with its neighbours — label, workload, metric,
/// file, configuration), line numbers only where they do not simply count up, and the
/// rare flagged values on the side. A file of 10⁸ plain numbers thus fits a laptop; an
/// [`Observation`] is put together again on the way out ([`Observations::iter`]), with
/// its trial index numbered per (label, workload, metric) in the order of pushing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Observations {
    keys: Vec<ObsKey>,
    /// Per key: the index of its (label, workload, metric) among `samples`.
    key_sample: Vec<u32>,
    samples: u32,
    rows: Rows,
    /// `(row, line)` wherever a row's line is not the previous line + 1 (line 0 = none).
    line_breaks: Vec<(u32, u32)>,
    last_line: u32,
    /// Flagged rows and why, in row order.
    flags: Vec<(u32, String)>,
}

#[derive(Clone, Debug, PartialEq)]
struct ObsKey {
    label: Arc<str>,
    workload: Arc<str>,
    metric: Arc<Metric>,
    file: Arc<str>,
    config: Option<Config>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct ObsRow {
    value: f64,
    key: u32,
    /// `u32::MAX`: no round.
    round: u32,
}

const NO_ROUND: u32 = u32::MAX;

/// Rows in chunks (one per appended list), so that appending never copies the rows
/// already held.
#[derive(Clone, Debug, Default, PartialEq)]
struct Rows {
    chunks: Vec<Vec<ObsRow>>,
    /// Index of the first row of each chunk.
    starts: Vec<usize>,
    len: usize,
}

impl Rows {
    fn len(&self) -> usize {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn last(&self) -> Option<&ObsRow> {
        self.chunks.last().and_then(|c| c.last())
    }

    fn push(&mut self, r: ObsRow) {
        if self.chunks.is_empty() {
            self.chunks.push(Vec::new());
            self.starts.push(0);
        }
        if let Some(c) = self.chunks.last_mut() {
            c.push(r);
        }
        self.len += 1;
    }

    fn get(&self, i: usize) -> Option<&ObsRow> {
        if i >= self.len {
            return None;
        }
        let c = self.starts.partition_point(|s| *s <= i) - 1;
        self.chunks[c].get(i - self.starts[c])
    }

    fn reserve(&mut self, n: usize) {
        if self.chunks.is_empty() {
            self.chunks.push(Vec::with_capacity(n));
            self.starts.push(0);
        } else if let Some(c) = self.chunks.last_mut() {
            c.reserve(n);
        }
    }

    fn shrink_to_fit(&mut self) {
        for c in &mut self.chunks {
            c.shrink_to_fit();
        }
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut ObsRow> {
        self.chunks.iter_mut().flatten()
    }

    /// Moves `other`'s chunks to the end.
    fn append(&mut self, other: Rows) {
        for c in other.chunks {
            if c.is_empty() {
                continue;
            }
            self.starts.push(self.len);
            self.len += c.len();
            self.chunks.push(c);
        }
    }
}

fn same_arc<T: ?Sized + PartialEq>(a: &Arc<T>, b: &Arc<T>) -> bool {
    Arc::ptr_eq(a, b) || **a == **b
}

impl ObsKey {
    fn same(&self, k: &ObsKey) -> bool {
        same_arc(&self.label, &k.label)
            && same_arc(&self.workload, &k.workload)
            && same_arc(&self.metric, &k.metric)
            && same_arc(&self.file, &k.file)
            && match (&self.config, &k.config) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
                _ => false,
            }
    }

    fn matches(&self, o: &Observation) -> bool {
        same_arc(&self.label, &o.label)
            && same_arc(&self.workload, &o.workload)
            && same_arc(&self.metric, &o.metric)
            && same_arc(&self.file, &o.origin.file)
            && match (&self.config, &o.config) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
                _ => false,
            }
    }
}

impl Observations {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of observations.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Reserves room for `n` more observations.
    pub fn reserve(&mut self, n: usize) {
        self.rows.reserve(n);
    }

    fn key_of(&mut self, o: &Observation) -> u32 {
        // Long runs share their key: the last one first, then the others (few).
        if let Some(k) = self.rows.last().map(|r| r.key) {
            if self.keys[k as usize].matches(o) {
                return k;
            }
        }
        if let Some(k) = self.keys.iter().rposition(|k| k.matches(o)) {
            return k as u32;
        }
        self.add_key(ObsKey {
            label: o.label.clone(),
            workload: o.workload.clone(),
            metric: o.metric.clone(),
            file: o.origin.file.clone(),
            config: o.config.clone(),
        })
    }

    /// Adds a new key, in the sample of its (label, workload, metric).
    fn add_key(&mut self, key: ObsKey) -> u32 {
        let sample = self
            .keys
            .iter()
            .position(|k| {
                same_arc(&k.label, &key.label)
                    && same_arc(&k.workload, &key.workload)
                    && same_arc(&k.metric, &key.metric)
            })
            .map_or_else(
                || {
                    self.samples += 1;
                    self.samples - 1
                },
                |i| self.key_sample[i],
            );
        self.keys.push(key);
        self.key_sample.push(sample);
        (self.keys.len() - 1) as u32
    }

    /// Appends one observation (its `trial` is renumbered: see the type).
    pub fn push(&mut self, o: Observation) {
        let key = self.key_of(&o);
        let row = self.rows.len() as u32;
        let line = o.origin.line.unwrap_or(0);
        let expected = if self.rows.is_empty() {
            u32::MAX
        } else if self.last_line == 0 {
            0
        } else {
            self.last_line.wrapping_add(1)
        };
        if line != expected {
            self.line_breaks.push((row, line));
        }
        self.last_line = line;
        if let Some(f) = o.flag {
            self.flags.push((row, f));
        }
        self.rows.push(ObsRow {
            value: o.value,
            key,
            round: o.round.unwrap_or(NO_ROUND),
        });
    }

    /// Gives back memory reserved beyond what is used.
    pub fn shrink_to_fit(&mut self) {
        self.rows.shrink_to_fit();
        self.line_breaks.shrink_to_fit();
    }

    /// Sets the round of every observation.
    pub fn set_round_all(&mut self, round: u32) {
        for r in self.rows.iter_mut() {
            r.round = round;
        }
    }

    fn line_of(&self, row: u32) -> Option<u32> {
        let i = self.line_breaks.partition_point(|(r, _)| *r <= row);
        let (r0, l0) = *self.line_breaks.get(i.checked_sub(1)?)?;
        (l0 != 0).then(|| l0 + (row - r0))
    }

    /// Every observation, in the order pushed.
    pub fn iter(&self) -> ObservationsIter<'_> {
        ObservationsIter {
            list: self,
            next: 0,
            next_trial: vec![0u32; self.samples as usize],
            flag: 0,
            line_break: 0,
            line: 0,
        }
    }

    /// Observation `i` (O(i): its trial index is counted).
    pub fn get(&self, i: usize) -> Option<Observation> {
        self.iter().nth(i)
    }

    /// The observations as a plain list.
    pub fn to_vec(&self) -> Vec<Observation> {
        self.iter().collect()
    }

    /// The value of observation `i`.
    pub fn value(&self, i: usize) -> Option<f64> {
        self.rows.get(i).map(|r| r.value)
    }

    /// The origin line of observation `i`, when known.
    pub fn line(&self, i: usize) -> Option<u32> {
        self.line_of(u32::try_from(i).ok()?)
    }
}

impl Observations {
    /// Gives every metric without a direction (plain numbers) the direction `direction`
    /// (`compare --higher-is-better` / `--lower-is-better`).
    pub fn direct_unknown(&mut self, direction: Direction) {
        for k in &mut self.keys {
            if k.metric.direction == Direction::Unknown {
                let mut m = (*k.metric).clone();
                m.direction = direction;
                k.metric = Arc::new(m);
            }
        }
    }
}

/// Iterator over [`Observations`], putting each [`Observation`] together.
#[derive(Clone, Debug)]
pub struct ObservationsIter<'a> {
    list: &'a Observations,
    next: usize,
    next_trial: Vec<u32>,
    flag: usize,
    line_break: usize,
    line: u32,
}

impl Iterator for ObservationsIter<'_> {
    type Item = Observation;

    fn next(&mut self) -> Option<Observation> {
        let l = self.list;
        let i = self.next;
        let row = l.rows.get(i)?;
        self.next += 1;
        let key = &l.keys[row.key as usize];
        let sample = l.key_sample[row.key as usize] as usize;
        let trial = self.next_trial[sample];
        self.next_trial[sample] += 1;
        let at = i as u32;
        if l.line_breaks
            .get(self.line_break)
            .is_some_and(|(r, _)| *r == at)
        {
            self.line = l.line_breaks[self.line_break].1;
            self.line_break += 1;
        } else if self.line != 0 {
            self.line += 1;
        }
        let flag = if l.flags.get(self.flag).is_some_and(|(r, _)| *r == at) {
            self.flag += 1;
            Some(l.flags[self.flag - 1].1.clone())
        } else {
            None
        };
        Some(Observation {
            label: key.label.clone(),
            workload: key.workload.clone(),
            metric: key.metric.clone(),
            value: row.value,
            round: (row.round != NO_ROUND).then_some(row.round),
            trial,
            origin: Origin {
                file: key.file.clone(),
                line: (self.line != 0).then_some(self.line),
            },
            config: key.config.clone(),
            flag,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.list.rows.len() - self.next;
        (n, Some(n))
    }
}

impl<'a> IntoIterator for &'a Observations {
    type Item = Observation;
    type IntoIter = ObservationsIter<'a>;

    fn into_iter(self) -> ObservationsIter<'a> {
        self.iter()
    }
}

impl Observations {
    /// Moves every observation of `other` to the end of this list, row by row (no
    /// observation is put together on the way).
    pub fn append(&mut self, mut other: Observations) {
        if self.rows.is_empty() {
            *self = other;
            return;
        }
        let base = self.rows.len() as u32;
        // Map other's keys onto ours.
        let mut map = Vec::with_capacity(other.keys.len());
        for k in &other.keys {
            let found = self.keys.iter().position(|x| x.same(k));
            map.push(match found {
                Some(i) => i as u32,
                None => self.add_key(k.clone()),
            });
        }
        for r in other.rows.iter_mut() {
            r.key = map[r.key as usize];
        }
        let rows = std::mem::take(&mut other.rows);
        self.rows.append(rows);
        // Lines: other's first row always starts a break of its own.
        self.line_breaks
            .extend(other.line_breaks.iter().map(|(r, l)| (r + base, *l)));
        self.last_line = other.last_line;
        self.flags
            .extend(other.flags.drain(..).map(|(r, f)| (r + base, f)));
    }
}

impl Extend<Observation> for Observations {
    fn extend<T: IntoIterator<Item = Observation>>(&mut self, iter: T) {
        for o in iter {
            self.push(o);
        }
    }
}

impl FromIterator<Observation> for Observations {
    fn from_iter<T: IntoIterator<Item = Observation>>(iter: T) -> Self {
        let mut out = Observations::new();
        out.extend(iter);
        out
    }
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
    /// Round of each value in `values` when every value has one; empty otherwise.
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
        !self.rounds.is_empty()
            && self.rounds.len() == self.values.len()
            && self.rounds.iter().all(Option::is_some)
    }

    /// Adds a value; rounds are kept only while every value has one (plain numbers,
    /// which have none, cost no memory for them).
    fn push(&mut self, value: f64, round: Option<u32>) {
        match round {
            Some(_) if self.rounds.len() == self.values.len() => self.rounds.push(round),
            Some(_) => {}
            None => self.rounds = Vec::new(),
        }
        self.values.push(value);
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
    pub fn from_observations<I>(observations: I) -> SampleSet
    where
        I: IntoIterator,
        I::Item: std::borrow::Borrow<Observation>,
    {
        let mut set = SampleSet::default();
        // Fast path for long runs of one key (plain numbers, large files): remember the
        // last key and its sample instead of looking it up for every value.
        let mut last: Option<SampleKey> = None;
        let mut pending = Sample::default();
        for item in observations {
            let obs: &Observation = std::borrow::Borrow::borrow(&item);
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
                None => pending.push(obs.value, obs.round),
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
            let aligned = s.rounds.len() == s.values.len() && add.rounds.len() == add.values.len();
            if aligned {
                s.rounds.extend(add.rounds);
            } else {
                s.rounds = Vec::new();
            }
            s.values.extend(add.values);
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

    /// The compact list gives back exactly what was pushed (trial indices numbered per
    /// label, workload and metric), across keys, lines that jump, flags and rounds, and
    /// appending one list to another keeps both.
    #[test]
    fn compact_observations_round_trip() {
        let la: Arc<str> = Arc::from("a");
        let lb: Arc<str> = Arc::from("b");
        let w: Arc<str> = Arc::from("w");
        let m = Arc::new(Metric::new("ops", "ops/s", Direction::HigherIsBetter));
        let mut want = Vec::new();
        for i in 0..20u32 {
            let mut o = obs(
                if i % 7 < 4 { &la } else { &lb },
                &w,
                &m,
                f64::from(i),
                i == 5,
            );
            o.origin.line = match i {
                3 => None,
                9 => Some(100),
                _ => Some(i + 1),
            };
            o.round = (i % 3 != 0).then_some(i);
            want.push(o);
        }
        let list: Observations = want.iter().cloned().collect();
        assert_eq!(list.len(), 20);
        let mut counters = std::collections::HashMap::new();
        for o in &mut want {
            let c = counters.entry(o.label.to_string()).or_insert(0u32);
            o.trial = *c;
            *c += 1;
        }
        assert_eq!(list.to_vec(), want);
        assert_eq!(list.line(9), Some(100));
        assert_eq!(list.line(10), Some(11));
        assert_eq!(list.line(3), None);
        // Appending.
        let (first, second) = want.split_at(12);
        let mut a: Observations = first.iter().cloned().collect();
        a.append(second.iter().cloned().collect());
        assert_eq!(a.to_vec(), want);
        // 16 bytes a value.
        assert_eq!(std::mem::size_of::<ObsRow>(), 16);
    }
}
