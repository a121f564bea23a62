//! The default unpaired comparison (HL shift + exact-rank interval + U test + MDE) on
//! 2 × 1,000,000 samples of several shapes, timed with `std::time::Instant`.
//!
//! Shapes: continuous log-normal throughput; Gaussian values rounded to two decimals (as
//! a tool printing `%.2f` writes them); integers (about 120 distinct values); five or six
//! distinct values; an A/A pair of the same values; two samples that do not overlap; a
//! constant baseline; a sample with most of its mass on one value.
//!
//! Run: `cargo bench -p resplab-stats --bench compare_large` (optionally with a shape name
//! as the argument to run only that one). For every shape it prints the median and best of
//! five runs of `compare_unpaired` and the median time of the Hodges–Lehmann part
//! (`hl_unpaired` on the sorted log values), and for two shapes the paired estimate
//! (`hl_paired` on the 10⁶ log ratios). Exits 1 if any median reaches 2 s.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use resplab_stats::rank::{hl_paired, hl_unpaired};
use resplab_stats::verdict::{compare_unpaired, CompareConfig, Direction};
use std::time::{Duration, Instant};

const N: usize = 1_000_000;
const RUNS: usize = 5;

fn gauss(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>();
    let u2: f64 = rng.gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn shape(name: &str, rng: &mut Xoshiro256PlusPlus) -> (Vec<f64>, Vec<f64>) {
    let mut arm = |f: &mut dyn FnMut(&mut Xoshiro256PlusPlus) -> f64| -> Vec<f64> {
        (0..N).map(|_| f(rng)).collect()
    };
    match name {
        "lognormal" => (
            arm(&mut |r| 100_000.0 * (0.02 * gauss(r)).exp()),
            arm(&mut |r| 99_000.0 * (0.02 * gauss(r)).exp()),
        ),
        "rounded2" => (
            arm(&mut |r| ((100_000.0 + 2_000.0 * gauss(r)) * 100.0).round() / 100.0),
            arm(&mut |r| ((99_000.0 + 2_000.0 * gauss(r)) * 100.0).round() / 100.0),
        ),
        "integers" => (
            arm(&mut |r| (1_000.0 + 20.0 * gauss(r)).round()),
            arm(&mut |r| (990.0 + 20.0 * gauss(r)).round()),
        ),
        "few" => (
            arm(&mut |r| r.gen_range(1..=5) as f64),
            arm(&mut |r| r.gen_range(1..=6) as f64),
        ),
        "same" => {
            let a = arm(&mut |r| (1_000.0 + 20.0 * gauss(r)).round());
            (a.clone(), a)
        }
        "disjoint" => (
            arm(&mut |r| 1_000.0 + r.gen::<f64>()),
            arm(&mut |r| 2_000.0 + r.gen::<f64>()),
        ),
        "constant" => (
            vec![500.0; N],
            arm(&mut |r| (500.0 + 5.0 * gauss(r)).round().max(1.0)),
        ),
        "spike" => (
            arm(&mut |r| {
                if r.gen::<f64>() < 0.9 {
                    100.0
                } else {
                    100.0 + 50.0 * r.gen::<f64>()
                }
            }),
            arm(&mut |r| {
                if r.gen::<f64>() < 0.9 {
                    100.0
                } else {
                    101.0 + 50.0 * r.gen::<f64>()
                }
            }),
        ),
        _ => unreachable!("shape names come from SHAPES"),
    }
}

const SHAPES: [&str; 8] = [
    "lognormal",
    "rounded2",
    "integers",
    "few",
    "same",
    "disjoint",
    "constant",
    "spike",
];

fn median(mut t: Vec<Duration>) -> Duration {
    t.sort();
    t[t.len() / 2]
}

fn main() {
    let only: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let cfg = CompareConfig::new(Direction::HigherIsBetter);
    let mut slow = false;
    for name in SHAPES {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2026);
        let (a, b) = shape(name, &mut rng);
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..RUNS {
            let t = Instant::now();
            let c = compare_unpaired(&a, &b, &cfg).expect("valid input");
            times.push(t.elapsed());
            last = Some(c);
        }
        let best = *times.iter().min().expect("ran");
        let med = median(times);
        let mut la: Vec<f64> = a.iter().map(|v| v.ln()).collect();
        let mut lb: Vec<f64> = b.iter().map(|v| v.ln()).collect();
        la.sort_by(f64::total_cmp);
        lb.sort_by(f64::total_cmp);
        let mut hl_times = Vec::new();
        for _ in 0..RUNS {
            let t = Instant::now();
            let e = hl_unpaired(&la, &lb, 0.95).expect("valid input");
            hl_times.push(t.elapsed());
            std::hint::black_box(e);
        }
        let c = last.expect("ran at least once");
        println!(
            "{name:>9}: compare_unpaired 2 x {N}: median {:.3} s, best {:.3} s; hl_unpaired median {:.3} s (effect {:+.3}% [{:+.3}%, {:+.3}%], p = {:.3e}, verdict {:?})",
            med.as_secs_f64(),
            best.as_secs_f64(),
            median(hl_times).as_secs_f64(),
            c.effect_pct,
            c.ci_low_pct,
            c.ci_high_pct,
            c.p_value,
            c.verdict
        );
        slow |= med >= Duration::from_secs(2);
        if name == "lognormal" || name == "integers" {
            // The paired estimate selects among the n(n+1)/2 Walsh averages of the log
            // ratios, by the same algorithm.
            let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| (y / x).ln()).collect();
            let mut pt = Vec::new();
            for _ in 0..RUNS {
                let t = Instant::now();
                let e = hl_paired(&d, 0.95).expect("valid input");
                pt.push(t.elapsed());
                std::hint::black_box(e);
            }
            let med = median(pt);
            println!(
                "{name:>9}: hl_paired on {N} pairs: median {:.3} s",
                med.as_secs_f64()
            );
            slow |= med >= Duration::from_secs(2);
        }
    }
    if slow {
        eprintln!("too slow: the target is under 2 s");
        std::process::exit(1);
    }
}
