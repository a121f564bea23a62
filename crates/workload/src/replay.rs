//! A command slot whose requests come from a list of command lines
//! ([`crate::spec::Replay`], memtier's `__monitor_line@__`), compiled for the hot path.
//!
//! [`Choice`] holds the compiled lines, the row of the phase each line's results go to
//! (one per command name), and how the next line is picked: in turn through one
//! position shared by every generator of the workload (an atomic counter in the
//! compiled phase, which all of them share read-only), or at random from the
//! generator's own random sequence.

use crate::error::WorkloadError;
use crate::spec::Replay;
use crate::template::{self, CompiledTemplate};
use crate::workload::command_name;
use rand::distributions::{Distribution, Uniform};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::atomic::{AtomicU64, Ordering};

/// The compiled lines of a replayed command slot.
#[derive(Debug)]
pub(crate) struct Choice {
    /// The lines, in the order given.
    pub(crate) templates: Vec<CompiledTemplate>,
    /// For each line, the index of its row in the phase's commands.
    rows: Vec<usize>,
    /// `Some` for a random choice.
    random: Option<Uniform<usize>>,
    /// The next line in turn, shared by every generator of the phase.
    next: AtomicU64,
}

impl Choice {
    /// Compiles `replay`. `row_of` gives the phase row for a command name (adding it
    /// when new); the slot's own row is the one of its first line's name.
    ///
    /// # Errors
    /// A line that does not compile.
    pub(crate) fn new(
        replay: &Replay,
        rand_int: bool,
        mut row_of: impl FnMut(&str) -> usize,
    ) -> Result<Choice, WorkloadError> {
        let mut templates = Vec::with_capacity(replay.lines.len());
        let mut rows = Vec::with_capacity(replay.lines.len());
        for line in &replay.lines {
            let t = template::compile(line, "--command", rand_int)?;
            rows.push(row_of(&command_name(&t)));
            templates.push(t);
        }
        let random =
            (replay.random && !templates.is_empty()).then(|| Uniform::new(0, templates.len()));
        Ok(Choice {
            templates,
            rows,
            random,
            next: AtomicU64::new(0),
        })
    }

    /// The next line: its template and its row.
    #[inline]
    pub(crate) fn pick(&self, rng: &mut Xoshiro256PlusPlus) -> (&CompiledTemplate, usize) {
        let n = self.templates.len().max(1);
        let i = match &self.random {
            Some(u) => u.sample(rng),
            None => (self.next.fetch_add(1, Ordering::Relaxed) % n as u64) as usize,
        };
        (&self.templates[i % n], self.rows[i % n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::{stream_rng, SeedPurpose};

    fn replay(random: bool) -> Replay {
        Replay {
            lines: vec![
                "\"set\" \"a\" \"1\"".into(),
                "\"GET\" \"a\"".into(),
                "\"SET\" \"b\" \"\\x00\"".into(),
            ],
            random,
        }
    }

    fn rows_of(names: &mut Vec<String>) -> impl FnMut(&str) -> usize + '_ {
        |n: &str| match names.iter().position(|x| x == n) {
            Some(i) => i,
            None => {
                names.push(n.to_string());
                names.len() - 1
            }
        }
    }

    #[test]
    fn in_turn_walks_the_lines_and_groups_rows_by_name() {
        let mut names = Vec::new();
        let c = Choice::new(&replay(false), false, rows_of(&mut names)).unwrap();
        assert_eq!(names, ["SET", "GET"]);
        let mut rng = stream_rng(1, SeedPurpose::Requests, 0, 0);
        let rows: Vec<usize> = (0..6).map(|_| c.pick(&mut rng).1).collect();
        assert_eq!(rows, [0, 1, 0, 0, 1, 0]);
    }

    #[test]
    fn at_random_every_line_comes_up() {
        let mut names = Vec::new();
        let c = Choice::new(&replay(true), false, rows_of(&mut names)).unwrap();
        let mut rng = stream_rng(2, SeedPurpose::Requests, 0, 0);
        let mut seen = [0usize; 2];
        for _ in 0..300 {
            seen[c.pick(&mut rng).1] += 1;
        }
        // Two of three lines are SETs.
        assert!(seen[0] > 150 && seen[1] > 60, "{seen:?}");
    }
}
