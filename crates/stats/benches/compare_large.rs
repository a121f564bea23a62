//! The default unpaired comparison (HL shift + exact-rank interval + U test + MDE) on
//! 2 × 1,000,000 samples, timed with `std::time::Instant`.
//!
//! Run: `cargo bench -p resplab-stats --bench compare_large`. Prints the best and median
//! of several runs and fails (exit 1) if the best run takes 2 s or more.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use resplab_stats::verdict::{compare_unpaired, CompareConfig, Direction};
use std::time::{Duration, Instant};

fn sample(rng: &mut Xoshiro256PlusPlus, n: usize, scale: f64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            // Log-normal-ish throughput around `scale` with ~2 % spread.
            let u1: f64 = 1.0 - rng.gen::<f64>();
            let u2: f64 = rng.gen::<f64>();
            let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
            scale * (0.02 * z).exp()
        })
        .collect()
}

fn main() {
    const N: usize = 1_000_000;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2026);
    let a = sample(&mut rng, N, 100_000.0);
    let b = sample(&mut rng, N, 99_000.0);
    let cfg = CompareConfig::new(Direction::HigherIsBetter);
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..5 {
        let t = Instant::now();
        let c = compare_unpaired(&a, &b, &cfg).expect("valid input");
        times.push(t.elapsed());
        last = Some(c);
    }
    times.sort();
    let c = last.expect("ran at least once");
    println!(
        "compare_unpaired 2 x {N}: best {:.3} s, median {:.3} s (effect {:+.3}% [{:+.3}%, {:+.3}%], p = {:.3e}, MDE {:.4}%, verdict {:?})",
        times[0].as_secs_f64(),
        times[times.len() / 2].as_secs_f64(),
        c.effect_pct,
        c.ci_low_pct,
        c.ci_high_pct,
        c.p_value,
        c.mde_pct.unwrap_or(f64::NAN),
        c.verdict
    );
    if times[0] >= Duration::from_secs(2) {
        eprintln!("too slow: the target is under 2 s");
        std::process::exit(1);
    }
}
