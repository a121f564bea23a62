//! Observations grouped into benchstat tables: one per (configuration, unit), rows and
//! columns in first-seen order.

use super::units::tidy_unit;
use resplab_results::sample::Observation;
use std::borrow::Borrow;
use std::collections::HashMap;
use std::sync::Arc;

/// One (configuration, unit) table.
pub(super) struct Table {
    pub(super) config: Vec<(String, String)>,
    pub(super) unit: String,
    pub(super) rows: Vec<String>,
    pub(super) cols: Vec<String>,
    pub(super) cells: HashMap<(usize, usize), Vec<f64>>,
}

/// Whether two observations land in the same cell (same label, workload, metric and
/// configuration objects), so a run of them needs one lookup.
fn same_cell(a: &Observation, b: &Observation) -> bool {
    Arc::ptr_eq(&a.label, &b.label)
        && Arc::ptr_eq(&a.workload, &b.workload)
        && Arc::ptr_eq(&a.metric, &b.metric)
        && match (&a.config, &b.config) {
            (None, None) => true,
            (Some(x), Some(y)) => Arc::ptr_eq(x, y),
            _ => false,
        }
}

/// Groups observations into benchstat tables, keys and rows in first-seen order.
///
/// Cost: O(n) for n observations plus one keyed lookup per run of observations that
/// share their cell (a million plain numbers from one file are one run).
pub(super) fn build<I>(observations: I) -> Vec<Table>
where
    I: Iterator + Clone,
    I::Item: Borrow<Observation>,
{
    let mut grouper = Grouper::new(config_fields(observations.clone()));
    for item in observations {
        grouper.add(item.borrow());
    }
    grouper.into_tables()
}

/// Configuration fields in first-seen order.
fn config_fields<I>(observations: I) -> Vec<String>
where
    I: Iterator,
    I::Item: Borrow<Observation>,
{
    let mut fields: Vec<String> = Vec::new();
    let mut last_config: Option<Arc<Vec<(String, String)>>> = None;
    for item in observations {
        let o: &Observation = item.borrow();
        if let (Some(a), Some(b)) = (&last_config, &o.config) {
            if Arc::ptr_eq(a, b) {
                continue;
            }
        }
        last_config = o.config.clone();
        if let Some(c) = &o.config {
            for (k, _) in c.iter() {
                if !fields.contains(k) {
                    fields.push(k.clone());
                }
            }
        }
    }
    fields
}

/// The tables of one pass over the observations, and the first-seen order of every key
/// that later sorts them.
struct Grouper {
    fields: Vec<String>,
    value_order: Vec<Vec<String>>,
    unit_order: Vec<String>,
    row_order: Vec<String>,
    col_order: Vec<String>,
    tables: Vec<Table>,
    index: HashMap<(Vec<String>, String), usize>,
    tidy_cache: HashMap<String, (String, f64)>,
    /// The cell of the previous observation: (its observation, table, row, column, factor).
    last: Option<(Observation, usize, usize, usize, f64)>,
}

impl Grouper {
    fn new(fields: Vec<String>) -> Self {
        Grouper {
            value_order: vec![Vec::new(); fields.len()],
            fields,
            unit_order: Vec::new(),
            row_order: Vec::new(),
            col_order: Vec::new(),
            tables: Vec::new(),
            index: HashMap::new(),
            tidy_cache: HashMap::new(),
            last: None,
        }
    }

    /// Files one observation into its table and cell.
    fn add(&mut self, o: &Observation) {
        if self.add_to_last_cell(o) {
            return;
        }
        let vals = self.config_values(o);
        let (unit, factor) = self
            .tidy_cache
            .entry(o.metric.name.clone())
            .or_insert_with(|| tidy_unit(&o.metric.name))
            .clone();
        note_first_seen(&mut self.unit_order, &unit);
        let row = o.workload.to_string();
        note_first_seen(&mut self.row_order, &row);
        let col = o.label.to_string();
        note_first_seen(&mut self.col_order, &col);
        let ti = self.table_of(vals, &unit);
        let t = &mut self.tables[ti];
        note_first_seen(&mut t.rows, &row);
        note_first_seen(&mut t.cols, &col);
        let r = t.rows.iter().position(|x| *x == row).unwrap_or(0);
        let c = t.cols.iter().position(|x| *x == col).unwrap_or(0);
        t.cells.entry((r, c)).or_default().push(o.value * factor);
        self.last = Some((o.clone(), ti, r, c, factor));
    }

    /// Appends `o` to the previous observation's cell when it belongs there.
    fn add_to_last_cell(&mut self, o: &Observation) -> bool {
        let Some((prev, ti, r, c, factor)) = &self.last else {
            return false;
        };
        if !same_cell(prev, o) {
            return false;
        }
        match self.tables[*ti].cells.get_mut(&(*r, *c)) {
            Some(cell) => {
                cell.push(o.value * factor);
                true
            }
            None => false,
        }
    }

    /// The observation's value of each configuration field ("" when absent), each noted
    /// in its field's first-seen order.
    fn config_values(&mut self, o: &Observation) -> Vec<String> {
        let vals: Vec<String> = self
            .fields
            .iter()
            .map(|f| {
                o.config
                    .as_ref()
                    .and_then(|c| c.iter().find(|(k, _)| k == f).map(|(_, v)| v.clone()))
                    .unwrap_or_default()
            })
            .collect();
        for (i, v) in vals.iter().enumerate() {
            note_first_seen(&mut self.value_order[i], v);
        }
        vals
    }

    /// The index of the table of (configuration values, unit), created when new.
    fn table_of(&mut self, vals: Vec<String>, unit: &str) -> usize {
        let tables = &mut self.tables;
        let fields = &self.fields;
        *self
            .index
            .entry((vals.clone(), unit.to_string()))
            .or_insert_with(|| {
                tables.push(Table {
                    config: fields.iter().cloned().zip(vals).collect(),
                    unit: unit.to_string(),
                    rows: Vec::new(),
                    cols: Vec::new(),
                    cells: HashMap::new(),
                });
                tables.len() - 1
            })
    }

    /// The tables ordered by configuration values, then unit, each in first-seen order;
    /// rows and columns by global first-seen order; each cell's values sorted.
    fn into_tables(self) -> Vec<Table> {
        let mut tables = self.tables;
        for t in &mut tables {
            t.reorder(&self.row_order, &self.col_order);
        }
        // Every statistic of a cell is order-free; sorted once here, the sorts inside the
        // median and the U test find the values in order and cost O(n).
        for t in &mut tables {
            for v in t.cells.values_mut() {
                v.sort_unstable_by(f64::total_cmp);
            }
        }
        tables.sort_by_key(|t| {
            let mut k: Vec<usize> = t
                .config
                .iter()
                .enumerate()
                .map(|(i, (_, v))| rank(&self.value_order[i], v))
                .collect();
            k.push(rank(&self.unit_order, &t.unit));
            k
        });
        tables
    }
}

impl Table {
    /// Sorts rows and columns by the global first-seen orders, re-keying the cells.
    fn reorder(&mut self, row_order: &[String], col_order: &[String]) {
        let old_rows = self.rows.clone();
        let old_cols = self.cols.clone();
        self.rows.sort_by_key(|r| rank(row_order, r));
        self.cols.sort_by_key(|c| rank(col_order, c));
        let mut cells = HashMap::new();
        for ((r, c), v) in self.cells.drain() {
            let nr = self
                .rows
                .iter()
                .position(|x| *x == old_rows[r])
                .unwrap_or(0);
            let nc = self
                .cols
                .iter()
                .position(|x| *x == old_cols[c])
                .unwrap_or(0);
            cells.insert((nr, nc), v);
        }
        self.cells = cells;
    }
}

/// Appends `v` to `list` unless it is there already.
fn note_first_seen(list: &mut Vec<String>, v: &str) {
    if !list.iter().any(|x| x == v) {
        list.push(v.to_string());
    }
}

/// The position of `v` in a first-seen order.
fn rank(list: &[String], v: &str) -> usize {
    list.iter().position(|x| x == v).unwrap_or(0)
}

/// Whether a table's configuration value `j` differs from the previous table's, so its
/// line is printed again.
pub(super) trait PrevConfig {
    fn is_none_or_changed(&self, j: usize, v: &str) -> bool;
}

impl PrevConfig for Option<&Vec<(String, String)>> {
    fn is_none_or_changed(&self, j: usize, v: &str) -> bool {
        match self {
            None => true,
            Some(p) => p.get(j).map(|(_, pv)| pv.as_str()) != Some(v),
        }
    }
}
