//! The error rates of run-until-decided, by simulation: 10,000 sequential runs per row
//! under each stopping rule of `resplab_stats::sequential`, beside naive peeking (a
//! fixed-sample paired t test repeated after every round from round 6).
//!
//! Rules: the α-spending design (O'Brien–Fleming type, the default of new runs; Pocock
//! type at 30 rounds) planned for the run's round limit, and Lai's confidence sequence.
//! Horizons: 8, 15, 30, 60 and 200 rounds. Per-round noise of the log ratio: normal with
//! sd 0.15 (one-second trials on a shared 2-vCPU VM, as `resplab calibrate` measured it),
//! Student t₃ scaled to sd 0.15 (heavy tails), and normal sd 0.15 with 5 % of rounds at
//! four times that (a disturbed round now and then). Effects: none (A/A), a 2 % and a
//! 10 % slowdown. No equivalence margin, so only a "different" verdict or the limit ends
//! an A/A run (the worst case for false positives).
//!
//! Run: `cargo bench -p resplab-stats --bench sequential_aa`. Prints one table; exits 1
//! if an A/A false-positive rate exceeds 5.5 %.

use resplab_stats::budget::clopper_pearson;
use resplab_stats::sequential::simulate::{simulate, Scenario, Shape, Tally};
use resplab_stats::sequential::spending::{Design, Spending};
use resplab_stats::sequential::{Rule, SequenceConfig};

const RUNS: usize = 10_000;
const HORIZONS: [usize; 5] = [8, 15, 30, 60, 200];

fn main() {
    let shapes = [
        ("normal sd 0.15", Shape::Normal { sd: 0.15 }),
        ("t3 sd 0.15", Shape::StudentT3 { sd: 0.15 }),
        (
            "5% rounds x4",
            Shape::Contaminated {
                sd: 0.15,
                p: 0.05,
                factor: 4.0,
            },
        ),
    ];
    let obf = Rule::Spending(Design::default());
    let pocock = Rule::Spending(Design {
        alpha: 0.05,
        spending: Spending::Pocock,
    });
    let cs = Rule::Anytime(SequenceConfig::default());
    println!(
        "alpha 0.05; {RUNS} runs per row; spending: Lan-DeMets, looks after every round from \
         round 3, t-mapped; anytime: Lai's confidence sequence, rho {:.3}",
        SequenceConfig::default().rho
    );
    println!(
        "{:<9} {:>4} {:<16} {:>7} {:>10} {:>17} {:>9} {:>11} {:>10} {:>9}",
        "rule",
        "max",
        "noise",
        "effect",
        "different",
        "95% CI",
        "right",
        "mean rounds",
        "undecided",
        "peeking"
    );
    let mut failed = false;
    let mut rows: Vec<(&str, Rule, usize)> = Vec::new();
    for h in HORIZONS {
        rows.push(("spend-OF", obf, h));
        rows.push(("anytime", cs, h));
    }
    rows.push(("spend-P", pocock, 30));
    for (rule_name, rule, max_rounds) in rows {
        for (name, shape) in shapes {
            for effect in [0.0, -0.02, -0.10] {
                let t = simulate(
                    &Scenario {
                        shape,
                        effect,
                        max_rounds,
                        margin: None,
                        runs: RUNS,
                        seed: 2023,
                    },
                    &rule,
                );
                print_row(rule_name, max_rounds, name, effect, &t);
                if effect == 0.0 && t.different_rate() > 0.055 {
                    failed = true;
                }
            }
        }
    }
    if failed {
        eprintln!("an A/A false-positive rate is above 5.5 %");
        std::process::exit(1);
    }
}

fn print_row(rule: &str, max_rounds: usize, name: &str, effect: f64, t: &Tally) {
    let (lo, hi) = clopper_pearson(t.different(), t.runs, 0.95);
    let right = if effect < 0.0 { t.lower } else { 0 };
    println!(
        "{:<9} {:>4} {:<16} {:>6.0}% {:>9.2}% {:>17} {:>8.1}% {:>11.1} {:>9.1}% {:>8.2}%",
        rule,
        max_rounds,
        name,
        effect * 100.0,
        t.different_rate() * 100.0,
        format!("{:.2}–{:.2}%", lo * 100.0, hi * 100.0),
        right as f64 / t.runs as f64 * 100.0,
        t.mean_rounds,
        t.undecided as f64 / t.runs as f64 * 100.0,
        t.peeking_rate() * 100.0
    );
}
