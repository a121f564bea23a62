//! False alarms and detection of the change-point search on simulated histories.
//!
//! For each shape it draws many series of 100 points, runs `change_points` with the
//! default configuration (5 % significance, 199 permutations, segments of 5 or more) and
//! counts the series with at least one change point. Flat shapes measure the false-alarm
//! rate against the stated 5 %: independent normal values, independent log-normal values
//! (skewed, as latencies are), and an AR(1) series (each value 0.3 of the one before plus
//! fresh noise: not exchangeable, outside what the permutation test promises). Shifted
//! shapes measure detection: one shift of 1 or 2 standard deviations at point 50, with how
//! often a reported change sits within two points of it.
//!
//! Run: `cargo bench --profile ci -p resplab-stats --bench changepoint_false_alarms [N]`
//! (N series per shape, 1000 by default). Every figure comes with its 95 % Wilson interval.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use resplab_stats::changepoint::{change_points, ChangePointConfig};
use std::time::Instant;

const POINTS: usize = 100;

fn gauss(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>();
    let u2: f64 = rng.gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

fn draw(shape: &str, rng: &mut Xoshiro256PlusPlus) -> Vec<f64> {
    let mut prev = 0.0;
    (0..POINTS)
        .map(|i| {
            let z = gauss(rng);
            match shape {
                "normal" => 100.0 + z,
                "lognormal" => (0.5 * z).exp(),
                "ar1" => {
                    prev = 0.3 * prev + z;
                    100.0 + prev
                }
                "shift-1sd" => 100.0 + z + if i >= 50 { 1.0 } else { 0.0 },
                "shift-2sd" => 100.0 + z + if i >= 50 { 2.0 } else { 0.0 },
                _ => unreachable!("unknown shape {shape}"),
            }
        })
        .collect()
}

/// Wilson score interval of k successes in n at 95 %.
fn wilson(k: usize, n: usize) -> (f64, f64) {
    let (k, n, z) = (k as f64, n as f64, 1.959_964);
    let p = k / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    (centre - half, centre + half)
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1000);
    let cfg = ChangePointConfig::default();
    println!(
        "{n} series of {POINTS} points per shape; significance {}, {} permutations, min segment {}",
        cfg.significance, cfg.permutations, cfg.min_segment
    );
    println!("| shape | series with ≥1 change point | 95 % interval | a change within ±2 of point 50 | ms per series |");
    println!("|---|---|---|---|---|");
    for (s, shape) in ["normal", "lognormal", "ar1", "shift-1sd", "shift-2sd"]
        .iter()
        .enumerate()
    {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1000 + s as u64);
        let (mut flagged, mut placed) = (0usize, 0usize);
        let start = Instant::now();
        for k in 0..n {
            let xs = draw(shape, &mut rng);
            let cfg = ChangePointConfig {
                seed: k as u64,
                ..cfg
            };
            let cps = change_points(&xs, &cfg).expect("finite series");
            if !cps.is_empty() {
                flagged += 1;
            }
            if cps.iter().any(|c| c.index.abs_diff(50) <= 2) {
                placed += 1;
            }
        }
        let ms = start.elapsed().as_secs_f64() * 1000.0 / n as f64;
        let (lo, hi) = wilson(flagged, n);
        println!(
            "| {shape} | {:.1} % ({flagged}/{n}) | {:.1}–{:.1} % | {:.1} % | {ms:.1} |",
            100.0 * flagged as f64 / n as f64,
            100.0 * lo,
            100.0 * hi,
            100.0 * placed as f64 / n as f64,
        );
    }
}
