//! The search: binary search for the commit whose effect matches a range's effect, with
//! skipped commits and ranges that hold more than one step.
//!
//! Commits are indexes into the range's list (0 is good, the last is bad). A range is a
//! base commit, the last commit known to be at the base's level (`left`) and the first
//! known to be at the end's level (`right`), with the measured effect of `right`
//! against the base. Each candidate between them is measured in one interleaved
//! experiment against both the base and `right`, until both comparisons are decided,
//! and classified by [`classify`]:
//!
//! - *before*: decided different from the end and not from the base (equivalent to
//!   it, or still open at the round limit), or, when neither difference is proven,
//!   equivalent to the base and not to the end: the search goes right;
//! - *after*: the same the other way round — its effect matches the range's effect:
//!   the search goes left;
//! - *split*: decided different from both: it sits between the levels (or beyond, or
//!   on the other side): the range holds more than one step, so it is cut at the
//!   candidate and each side is searched on its own, the upper side against the
//!   candidate;
//! - *undecided* (neither) at the round limit, or a commit that does not build (*skipped*):
//!   left out, as `git bisect skip` does; the search tries the nearest other commit.
//!
//! A range ends when no candidate is left between `left` and `right`: its step is the
//! commits `left+1 ..= right` (one commit, or several when the ones before `right` were
//! skipped). A side whose own effect is not decided beyond the margin has no step.
//!
//! The measurements come from a [`Probe`] (the experiment runner in a real bisect, a
//! table of levels in the tests).

use super::BisectError;
pub use resplab_results::bisect::{Class, Measured};
use resplab_stats::sequential::Decision;

/// Builds and measures commits by their index.
pub trait Probe {
    /// Builds commit `i`: false when its build fails.
    ///
    /// # Errors
    /// What stops the bisect (a build that cannot be started, an interruption).
    fn build(&mut self, i: usize) -> Result<bool, BisectError>;

    /// Measures commit `cand` against commit `base`, decided within `margin` (a
    /// fraction) or the round limit.
    ///
    /// # Errors
    /// What stops the bisect (a failed run, an interruption).
    fn measure(
        &mut self,
        base: usize,
        cand: usize,
        margin: Option<f64>,
    ) -> Result<Measured, BisectError>;

    /// Measures commit `cand` against `base` and against `end` in one experiment, until
    /// both are decided within `margin` or the round limit: (against base, against end).
    ///
    /// # Errors
    /// What stops the bisect (a failed run, an interruption).
    fn measure_between(
        &mut self,
        base: usize,
        cand: usize,
        end: usize,
        margin: Option<f64>,
    ) -> Result<(Measured, Measured), BisectError>;

    /// Sees each tested commit as it is classified (to show it, or to save the state).
    fn tested(&mut self, _tested: &Tested) {}
}

/// One tested commit.
#[derive(Clone, Debug, PartialEq)]
pub struct Tested {
    pub commit: usize,
    pub against: usize,
    /// The end of its range (the commit at the level after the change).
    pub end: usize,
    pub class: Class,
    /// Against `against`, and against `end`.
    pub measured: Option<Measured>,
    pub against_end: Option<Measured>,
}

/// One step found: the commits `first ..= last` (one, unless skipped commits hide
/// which), and the effect of `last` against `against`, a commit at the level before.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub first: usize,
    pub last: usize,
    pub against: usize,
    pub effect: Measured,
}

/// What the search found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Found {
    pub tested: Vec<Tested>,
    pub steps: Vec<Step>,
}

struct Range {
    base: usize,
    left: usize,
    right: usize,
    effect: Measured,
}

/// Searches the commits `0 ..= last` for the steps of the decided effect `top` (of
/// `last` against 0), ignoring changes smaller than `floor` (a log ratio).
///
/// # Errors
/// What the probe returns.
pub fn search(
    probe: &mut dyn Probe,
    last: usize,
    top: Measured,
    floor: f64,
) -> Result<Found, BisectError> {
    let margin = Some(margin_of(floor));
    let mut found = Found::default();
    let mut unbuildable = std::collections::BTreeSet::new();
    let mut ranges = vec![Range {
        base: 0,
        left: 0,
        right: last,
        effect: top,
    }];
    while let Some(mut r) = ranges.pop() {
        let mut skipped = unbuildable.clone();
        loop {
            let Some(mid) = pick(r.left, r.right, &skipped) else {
                found.steps.push(Step {
                    first: r.left + 1,
                    last: r.right,
                    against: r.base,
                    effect: r.effect.clone(),
                });
                break;
            };
            let mut tested = Tested {
                commit: mid,
                against: r.base,
                end: r.right,
                class: Class::Skipped,
                measured: None,
                against_end: None,
            };
            if !probe.build(mid)? {
                unbuildable.insert(mid);
                skipped.insert(mid);
                probe.tested(&tested);
                found.tested.push(tested);
                continue;
            }
            let (to_base, to_end) = probe.measure_between(r.base, mid, r.right, margin)?;
            tested.class = classify(&to_base, &to_end);
            tested.measured = Some(to_base.clone());
            tested.against_end = Some(to_end.clone());
            probe.tested(&tested);
            found.tested.push(tested.clone());
            match tested.class {
                Class::Before => r.left = mid,
                Class::After => {
                    r.right = mid;
                    r.effect = to_base;
                }
                Class::Undecided | Class::Skipped => {
                    skipped.insert(mid);
                }
                Class::Split => {
                    let upper = to_end.reversed();
                    if is_step(&upper, floor) {
                        ranges.push(Range {
                            base: mid,
                            left: mid,
                            right: r.right,
                            effect: upper,
                        });
                    }
                    if is_step(&to_base, floor) {
                        ranges.push(Range {
                            base: r.base,
                            left: r.left,
                            right: mid,
                            effect: to_base,
                        });
                    }
                    break;
                }
            }
        }
    }
    found.steps.sort_by_key(|s| s.first);
    Ok(found)
}

/// The equivalence margin (a fraction) whose band of log ratios lies inside ±`floor`:
/// below, exactly −floor; above, ln(2 − e^−floor), a little less than floor.
pub fn margin_of(floor: f64) -> f64 {
    -(-floor).exp_m1()
}

/// A decided effect at least `floor` in size: a step worth searching for.
pub fn is_step(m: &Measured, floor: f64) -> bool {
    m.is_different() && m.mean.abs() >= floor
}

/// Where a candidate stands from its comparisons with its range's base and end (the
/// rule in the module documentation).
pub fn classify(to_base: &Measured, to_end: &Measured) -> Class {
    let equivalent = |m: &Measured| m.decision == Decision::Equivalent;
    match (to_base.is_different(), to_end.is_different()) {
        (true, true) => Class::Split,
        (false, true) => Class::Before,
        (true, false) => Class::After,
        (false, false) => match (equivalent(to_base), equivalent(to_end)) {
            (true, false) => Class::Before,
            (false, true) => Class::After,
            _ => Class::Undecided,
        },
    }
}

/// The untried commit strictly between `left` and `right` nearest their middle (the
/// lower one on a tie); `None` when every one is skipped or there is none.
fn pick(left: usize, right: usize, skipped: &std::collections::BTreeSet<usize>) -> Option<usize> {
    let middle = (left + right) / 2;
    (left + 1..right)
        .filter(|i| !skipped.contains(i))
        .min_by_key(|i| (i.abs_diff(middle), *i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use resplab_stats::sequential::{decide, Look};

    /// Commits at known levels (log values); builds fail where asked.
    struct Table {
        levels: Vec<f64>,
        broken: Vec<usize>,
        measured: Vec<(usize, usize)>,
    }

    impl Probe for Table {
        fn build(&mut self, i: usize) -> Result<bool, BisectError> {
            Ok(!self.broken.contains(&i))
        }

        fn measure(
            &mut self,
            base: usize,
            cand: usize,
            margin: Option<f64>,
        ) -> Result<Measured, BisectError> {
            self.measured.push((base, cand));
            let mean = self.levels[cand] - self.levels[base];
            let look = Look {
                n: 8,
                mean,
                low: mean - 0.05,
                high: mean + 0.05,
                sd: 0.03,
            };
            Ok(Measured {
                workload: "w".into(),
                rounds: 8,
                mean,
                low: look.low,
                high: look.high,
                decision: decide(&look, margin),
            })
        }

        fn measure_between(
            &mut self,
            base: usize,
            cand: usize,
            end: usize,
            margin: Option<f64>,
        ) -> Result<(Measured, Measured), BisectError> {
            Ok((
                self.measure(base, cand, margin)?,
                self.measure(end, cand, margin)?,
            ))
        }
    }

    fn run(levels: Vec<f64>, broken: Vec<usize>) -> (Found, Table) {
        let mut t = Table {
            levels,
            broken,
            measured: Vec::new(),
        };
        let last = t.levels.len() - 1;
        let top = t.measure(0, last, None).unwrap();
        let floor = top.mean.abs() / 3.0;
        let found = search(&mut t, last, top, floor).unwrap();
        (found, t)
    }

    fn steps(f: &Found) -> Vec<(usize, usize)> {
        f.steps.iter().map(|s| (s.first, s.last)).collect()
    }

    #[test]
    fn one_step_is_found_at_every_position() {
        for at in 1..13 {
            let levels: Vec<f64> = (0..13).map(|i| if i >= at { 0.7 } else { 0.0 }).collect();
            let (f, t) = run(levels, vec![]);
            assert_eq!(steps(&f), vec![(at, at)], "step at {at}");
            assert!(
                t.measured.len() <= 1 + 2 * 4,
                "{} measurements",
                t.measured.len()
            );
        }
    }

    #[test]
    fn a_commit_that_does_not_build_is_skipped_and_may_leave_a_range() {
        let levels: Vec<f64> = (0..13).map(|i| if i >= 5 { -0.7 } else { 0.0 }).collect();
        let (f, _) = run(levels.clone(), vec![6]);
        assert_eq!(steps(&f), vec![(5, 5)]);
        let (f, _) = run(levels, vec![5]);
        assert_eq!(steps(&f), vec![(5, 6)], "4 before, 5 skipped, 6 after");
        assert!(f
            .tested
            .iter()
            .any(|t| t.commit == 5 && t.class == Class::Skipped));
    }

    #[test]
    fn two_steps_are_reported_as_two() {
        let levels: Vec<f64> = (0..14)
            .map(|i| match i {
                0..=3 => 0.0,
                4..=8 => 0.5,
                _ => 1.1,
            })
            .collect();
        let (f, _) = run(levels, vec![]);
        assert_eq!(steps(&f), vec![(4, 4), (9, 9)]);
        assert!(
            (f.steps[1].effect.mean - 0.6).abs() < 1e-9,
            "the second step against its own base"
        );
    }

    #[test]
    fn a_step_up_and_one_down_are_both_found() {
        let levels: Vec<f64> = (0..13)
            .map(|i| match i {
                3..=9 => 1.0,
                10.. => 0.5,
                _ => 0.0,
            })
            .collect();
        let (f, _) = run(levels, vec![]);
        assert_eq!(steps(&f), vec![(3, 3), (10, 10)]);
    }

    #[test]
    fn classify_follows_the_stated_rule() {
        let m = |mean: f64, d: Decision| Measured {
            workload: "w".into(),
            rounds: 10,
            mean,
            low: mean - 0.05,
            high: mean + 0.05,
            decision: d,
        };
        let (eq, lower, higher, open) = (
            Decision::Equivalent,
            Decision::Lower,
            Decision::Higher,
            Decision::Continue,
        );
        assert_eq!(classify(&m(0.0, eq), &m(0.7, higher)), Class::Before);
        assert_eq!(classify(&m(-0.7, lower), &m(0.0, eq)), Class::After);
        assert_eq!(classify(&m(-0.3, lower), &m(0.4, higher)), Class::Split);
        assert_eq!(classify(&m(-0.7, lower), &m(0.0, open)), Class::After);
        assert_eq!(classify(&m(0.1, open), &m(0.6, higher)), Class::Before);
        assert_eq!(classify(&m(0.1, open), &m(-0.2, open)), Class::Undecided);
        assert_eq!(classify(&m(0.0, eq), &m(0.0, eq)), Class::Undecided);
        assert!(((-margin_of(0.3)).ln_1p() + 0.3).abs() < 1e-12);
        assert_eq!(m(-0.7, lower).reversed().decision, higher);
    }
}
