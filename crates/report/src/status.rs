//! What `resplab experiment list` and `resplab experiment status` print, from plain
//! values (`resplab_experiment::readback` reads them from the store).

/// One stored experiment in `experiment list`.
#[derive(Clone, Debug, PartialEq)]
pub struct ListRow {
    pub name: String,
    pub state: String,
    /// Valid rounds of planned (`3/5`), or of a run until decided (`3/seq`).
    pub rounds: String,
    pub variants: usize,
    pub trials: usize,
}

/// `experiment list`: one row per stored experiment, or a line saying there are none in
/// the store at `db`.
pub fn list_text(db: &str, rows: &[ListRow]) -> String {
    if rows.is_empty() {
        return format!("no experiments in {db}\n");
    }
    let mut out = format!(
        "{:<32} {:<9} {:>6} {:>8} {:>8}\n",
        "name", "state", "rounds", "variants", "trials"
    );
    for r in rows {
        out.push_str(&format!(
            "{:<32} {:<9} {:>6} {:>8} {:>8}\n",
            r.name, r.state, r.rounds, r.variants, r.trials
        ));
    }
    out
}

/// A trial left out, with the check it failed.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// 0-based, as stored.
    pub round: u32,
    pub attempt: u32,
    pub variant: String,
    pub workload: String,
    pub check: String,
    pub detail: String,
}

/// Everything `experiment status` shows of one experiment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusView {
    pub name: String,
    pub state: String,
    pub seed: u64,
    pub order_kind: String,
    /// Baseline first.
    pub variants: Vec<String>,
    pub workloads: Vec<String>,
    pub trials_stored: usize,
    pub trials_valid: usize,
    pub trials_invalid: usize,
    /// As [`ListRow::rounds`].
    pub rounds: String,
    /// How a run until decided stopped, worded by [`crate::verdict::stop_sentence`].
    pub stop: Option<String>,
    /// The state of each planned round (`valid`, `incomplete`, …).
    pub round_states: Vec<String>,
    pub failures: Vec<Failure>,
    /// (0-based round, variant) cells that still have to run.
    pub missing: Vec<(u32, String)>,
    pub notes: Vec<String>,
}

/// `experiment status NAME`.
pub fn status_text(v: &StatusView) -> String {
    let mut out = format!(
        "experiment {} ({}), seed {}, order {}\n",
        v.name, v.state, v.seed, v.order_kind
    );
    out.push_str(&format!(
        "variants: {} (baseline {})\n",
        v.variants.join(", "),
        v.variants.first().map_or("-", |s| s)
    ));
    out.push_str(&format!("workloads: {}\n", v.workloads.join(", ")));
    out.push_str(&format!(
        "trials stored: {} ({} valid, {} invalid); rounds valid: {}\n",
        v.trials_stored, v.trials_valid, v.trials_invalid, v.rounds
    ));
    if let Some(s) = &v.stop {
        out.push_str(s);
        out.push('\n');
    }
    for (r, state) in v.round_states.iter().enumerate() {
        out.push_str(&format!("  round {:>3}: {state}\n", r + 1));
    }
    for f in &v.failures {
        out.push_str(&format!(
            "  invalid: round {} attempt {} {}/{}: {} ({})\n",
            f.round + 1,
            f.attempt,
            f.variant,
            f.workload,
            f.check,
            f.detail
        ));
    }
    if !v.missing.is_empty() {
        out.push_str(&format!(
            "missing (round, variant) cells: {}\n",
            v.missing.len()
        ));
        for (round, variant) in &v.missing {
            out.push_str(&format!("  missing: round {} {variant}\n", round + 1));
        }
    }
    for n in &v.notes {
        out.push_str(&format!("  note: {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_numbers_rounds_from_one() {
        let v = StatusView {
            name: "e".into(),
            state: "done".into(),
            variants: vec!["a".into(), "b".into()],
            rounds: "1/2".into(),
            round_states: vec!["valid".into(), "incomplete".into()],
            missing: vec![(1, "b".into())],
            ..StatusView::default()
        };
        let text = status_text(&v);
        assert!(text.contains("variants: a, b (baseline a)\n"), "{text}");
        assert!(text.contains("  round   2: incomplete\n"), "{text}");
        assert!(text.contains("missing (round, variant) cells: 1\n  missing: round 2 b\n"));
    }

    #[test]
    fn an_empty_store_says_so() {
        assert_eq!(list_text("x.db", &[]), "no experiments in x.db\n");
    }
}
