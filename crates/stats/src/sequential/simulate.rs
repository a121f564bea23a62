//! What the stopping rule's error rates are: seeded simulations of whole sequential runs.
//!
//! Each simulated run draws one log ratio per round from a noise [`Shape`] around a true
//! effect, looks after every round with the [`Rule`] — the confidence sequence, or the
//! α-spending design planned for `max_rounds` rounds — and stops as
//! [`super::decide`] says or at `max_rounds`. Alongside, the same rounds are judged the
//! naive way: a fixed-sample paired t test repeated after every round from round 6 (the
//! first round resplab's fixed verdict gives an interval), counting a run as a
//! "detection" if any look rejects. Under an A/A effect of zero, the share of runs that
//! end "different" is the false-positive rate; under a real effect, the share that end
//! with the right sign is the power.
//!
//! Pure and seeded: the same arguments give the same counts. The 10,000-run figures are
//! printed by `cargo bench -p resplab-stats --bench sequential_aa`; a unit test runs a
//! smaller version.

use super::spending::fixed_schedule;
use super::{decide, Decision, Look, Rule, Running};
use rand::SeedableRng;
use rand_distr::{Distribution, Normal, StudentT};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The noise of one round's log ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// Normal with this standard deviation.
    Normal { sd: f64 },
    /// Student t with 3 degrees of freedom scaled to this standard deviation (heavy
    /// tails: rounds many sds out are common).
    StudentT3 { sd: f64 },
    /// Normal with standard deviation `sd`, except that a share `p` of rounds have
    /// `factor` times that (a disturbed round now and then).
    Contaminated { sd: f64, p: f64, factor: f64 },
}

/// One simulated campaign's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scenario {
    pub shape: Shape,
    /// True effect as a ratio − 1 (−0.02 = 2 % slower).
    pub effect: f64,
    /// Round limit of each run.
    pub max_rounds: usize,
    /// Equivalence margin (fraction), if any.
    pub margin: Option<f64>,
    /// Runs to simulate.
    pub runs: usize,
    pub seed: u64,
}

/// What the runs ended as.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    pub runs: usize,
    /// Stopped with the interval above zero.
    pub higher: usize,
    /// Stopped with the interval below zero.
    pub lower: usize,
    pub equivalent: usize,
    /// Reached `max_rounds` undecided.
    pub undecided: usize,
    /// Mean rounds at the stop.
    pub mean_rounds: f64,
    /// Runs in which a fixed-sample t test repeated after every round (from round 6 to
    /// `max_rounds`, ignoring the stop) rejected at least once.
    pub peeking_rejections: usize,
}

impl Tally {
    /// Runs that stopped "different" (either sign).
    pub fn different(&self) -> usize {
        self.higher + self.lower
    }

    /// Share of runs that stopped "different".
    pub fn different_rate(&self) -> f64 {
        self.different() as f64 / self.runs.max(1) as f64
    }

    /// Share of runs in which naive peeking rejected.
    pub fn peeking_rate(&self) -> f64 {
        self.peeking_rejections as f64 / self.runs.max(1) as f64
    }
}

/// First round at which the naive peeking test is applied.
pub const PEEK_FROM: usize = 6;

/// Simulates `scenario.runs` sequential runs under `rule` (a spending design is planned
/// for `scenario.max_rounds` rounds, its boundaries computed once).
pub fn simulate(scenario: &Scenario, rule: &Rule) -> Tally {
    let schedule = match rule {
        Rule::Spending(design) => fixed_schedule(design, scenario.max_rounds),
        Rule::Anytime(_) => Vec::new(),
    };
    let look = |seq: &Running| -> Look {
        match rule {
            Rule::Anytime(cfg) => seq.look(cfg),
            Rule::Spending(_) => {
                seq.look_at(schedule.get(seq.n()).copied().unwrap_or(f64::INFINITY))
            }
        }
    };
    let alpha = rule.alpha();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(scenario.seed);
    let shift = (1.0 + scenario.effect).ln();
    let mut tally = Tally {
        runs: scenario.runs,
        ..Tally::default()
    };
    let mut rounds_total = 0usize;
    for _ in 0..scenario.runs {
        let mut seq = Running::default();
        let mut decision = Decision::Continue;
        let mut stopped_at = None;
        let mut peeked = false;
        for round in 1..=scenario.max_rounds {
            seq.push(shift + draw(&scenario.shape, &mut rng));
            if stopped_at.is_none() {
                decision = decide(&look(&seq), scenario.margin);
                if decision.is_decided() {
                    stopped_at = Some(round);
                }
            }
            if !peeked && round >= PEEK_FROM && seq.t_rejects(alpha) {
                peeked = true;
            }
            if stopped_at.is_some() && peeked {
                break;
            }
        }
        rounds_total += stopped_at.unwrap_or(scenario.max_rounds);
        tally.peeking_rejections += usize::from(peeked);
        match decision {
            Decision::Higher => tally.higher += 1,
            Decision::Lower => tally.lower += 1,
            Decision::Equivalent => tally.equivalent += 1,
            Decision::Continue => tally.undecided += 1,
        }
    }
    tally.mean_rounds = rounds_total as f64 / scenario.runs.max(1) as f64;
    tally
}

fn draw(shape: &Shape, rng: &mut Xoshiro256PlusPlus) -> f64 {
    match *shape {
        Shape::Normal { sd } => sd * standard_normal(rng),
        Shape::StudentT3 { sd } => {
            // A t with 3 degrees of freedom has variance 3.
            let t = StudentT::new(3.0).map_or(0.0, |d| d.sample(rng));
            sd * t / 3f64.sqrt()
        }
        Shape::Contaminated { sd, p, factor } => {
            let wide = rand::Rng::gen::<f64>(rng) < p;
            let s = if wide { sd * factor } else { sd };
            s * standard_normal(rng)
        }
    }
}

fn standard_normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    Normal::new(0.0, 1.0).map_or(0.0, |d| d.sample(rng))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(shape: Shape, effect: f64, runs: usize) -> Scenario {
        Scenario {
            shape,
            effect,
            max_rounds: 100,
            margin: None,
            runs,
            seed: 23,
        }
    }

    use crate::sequential::spending::Design;
    use crate::sequential::SequenceConfig;

    #[test]
    fn aa_false_positive_rate_holds_where_peeking_does_not() {
        let cfg = Rule::Anytime(SequenceConfig::default());
        for shape in [
            Shape::Normal { sd: 0.15 },
            Shape::Contaminated {
                sd: 0.15,
                p: 0.05,
                factor: 4.0,
            },
        ] {
            let t = simulate(&scenario(shape, 0.0, 2_000), &cfg);
            // 2,000 runs: the binomial sd at 5 % is 0.5 points; 7 % is far out.
            assert!(t.different_rate() <= 0.07, "{shape:?}: {t:?}");
            assert!(t.peeking_rate() >= 0.15, "{shape:?}: {t:?}");
        }
    }

    #[test]
    fn a_ten_percent_slowdown_is_found_with_the_right_sign() {
        let t = simulate(
            &scenario(Shape::Normal { sd: 0.15 }, -0.10, 500),
            &Rule::Anytime(SequenceConfig::default()),
        );
        assert!(t.lower as f64 >= 0.8 * 500.0, "{t:?}");
        assert!(t.higher <= 2, "{t:?}");
        assert!(t.mean_rounds < 100.0, "{t:?}");
    }

    #[test]
    fn same_seed_same_counts() {
        let s = scenario(Shape::StudentT3 { sd: 0.15 }, 0.0, 200);
        let cfg = Rule::Anytime(SequenceConfig::default());
        assert_eq!(simulate(&s, &cfg), simulate(&s, &cfg));
        let spend = Rule::Spending(Design::default());
        assert_eq!(simulate(&s, &spend), simulate(&s, &spend));
    }

    #[test]
    fn spending_keeps_alpha_near_five_percent_at_short_and_long_horizons() {
        let rule = Rule::Spending(Design::default());
        let shapes = [
            Shape::Normal { sd: 0.15 },
            Shape::StudentT3 { sd: 0.15 },
            Shape::Contaminated {
                sd: 0.15,
                p: 0.05,
                factor: 4.0,
            },
        ];
        for max_rounds in [8, 30, 200] {
            for shape in shapes {
                let s = Scenario {
                    max_rounds,
                    ..scenario(shape, 0.0, 3_000)
                };
                let t = simulate(&s, &rule);
                // 3,000 runs: the binomial sd at 5 % is 0.4 points. A rate above 6.5 %
                // breaks the promise; one below 2.5 % spends power it need not.
                let rate = t.different_rate();
                assert!(
                    (0.025..=0.065).contains(&rate),
                    "{max_rounds} {shape:?}: {t:?}"
                );
            }
        }
    }

    #[test]
    fn spending_is_more_powerful_than_the_confidence_sequence_at_its_horizon() {
        let s = Scenario {
            max_rounds: 60,
            ..scenario(Shape::Normal { sd: 0.15 }, -0.05, 2_000)
        };
        let spend = simulate(&s, &Rule::Spending(Design::default()));
        let cs = simulate(&s, &Rule::Anytime(SequenceConfig::default()));
        assert!(spend.lower > cs.lower, "{spend:?} vs {cs:?}");
        assert!(spend.higher <= 2, "{spend:?}");
    }
}
