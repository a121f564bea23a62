//! Key patterns: which key number each request uses.
//!
//! memtier_benchmark's vocabulary, with its defaults: keys are `prefix + number`
//! (prefix `memtier-`, numbers `0..=10_000_000`, written in decimal without padding),
//! and each side of a SET:GET mix, or each `--command`, picks numbers with one pattern:
//!
//! - `R` random: uniform over the range.
//! - `S` sequential: `minimum, minimum + 1, …, maximum`, then around again. Each stream
//!   walks on its own from `minimum`, as each memtier client does.
//! - `G` gaussian: normal around `median` (default: the middle of the range) with
//!   `stddev` (default: a sixth of the range); draws outside the range are drawn again.
//! - `Z` zipf: rank `r` (1 = most popular) has weight `1 / r^exp`, `exp` in (0, 5),
//!   default 1; rank 1 is `minimum`. Sampled by rejection-inversion in constant time
//!   (`rand_distr::Zipf`).
//! - `P` parallel: the range is cut into as many contiguous slices as there are streams
//!   and each stream walks its own slice sequentially, so together they touch every key
//!   once per pass (memtier's "each client has a subset of the key range").
//!
//! `KeySampler` is the compiled, per-stream form used by [`crate::Generator`]; it
//! draws from the stream's own RNG and keeps the sequential cursor.

use crate::error::WorkloadError;
use rand::distributions::{Distribution, Uniform};
use rand::Rng;
use rand_distr::{Normal, Zipf};
use serde::{Deserialize, Serialize};

/// How a command picks key numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyPattern {
    /// `R`: uniform over the key range.
    Random,
    /// `S`: each stream walks the range in order, wrapping around.
    Sequential,
    /// `G`: normal distribution around the median, redrawn until inside the range.
    Gaussian,
    /// `Z`: zipf distribution over ranks, rank 1 being the smallest key.
    Zipf,
    /// `P`: the range split among the streams, each walking its slice in order.
    Parallel,
}

impl KeyPattern {
    /// The memtier letter of the pattern (`R`, `S`, `G`, `Z`, `P`).
    pub fn letter(self) -> char {
        match self {
            KeyPattern::Random => 'R',
            KeyPattern::Sequential => 'S',
            KeyPattern::Gaussian => 'G',
            KeyPattern::Zipf => 'Z',
            KeyPattern::Parallel => 'P',
        }
    }

    /// The pattern for a memtier letter (case-insensitive), or `None`.
    pub fn from_letter(c: char) -> Option<KeyPattern> {
        match c.to_ascii_uppercase() {
            'R' => Some(KeyPattern::Random),
            'S' => Some(KeyPattern::Sequential),
            'G' => Some(KeyPattern::Gaussian),
            'Z' => Some(KeyPattern::Zipf),
            'P' => Some(KeyPattern::Parallel),
            _ => None,
        }
    }
}

/// The keys a workload may touch: `prefix` followed by a number in
/// `minimum..=maximum`, and the shape parameters of the gaussian and zipf patterns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KeySpace {
    /// Text before the key number (`--key-prefix`, default `memtier-`).
    pub prefix: String,
    /// Smallest key number (`--key-minimum`, default 0).
    pub minimum: u64,
    /// Largest key number, inclusive (`--key-maximum`, default 10,000,000).
    pub maximum: u64,
    /// Centre of the gaussian pattern (`--key-median`); `None` = middle of the range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<f64>,
    /// Spread of the gaussian pattern (`--key-stddev`); `None` = a sixth of the range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stddev: Option<f64>,
    /// Exponent of the zipf pattern (`--key-zipf-exp`), in (0, 5); default 1.
    pub zipf_exp: f64,
}

impl Default for KeySpace {
    fn default() -> Self {
        KeySpace {
            prefix: "memtier-".to_string(),
            minimum: 0,
            maximum: 10_000_000,
            median: None,
            stddev: None,
            zipf_exp: 1.0,
        }
    }
}

impl KeySpace {
    /// Checks the range and shape parameters.
    ///
    /// # Errors
    /// `minimum > maximum`, a median outside the range, a stddev that is not positive
    /// and finite, or a zipf exponent outside (0, 5).
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if self.minimum > self.maximum {
            return Err(WorkloadError::new(
                "--key-minimum",
                self.minimum.to_string(),
                format!("a number no larger than --key-maximum ({})", self.maximum),
            ));
        }
        if let Some(m) = self.median {
            if !(m.is_finite() && m >= self.minimum as f64 && m <= self.maximum as f64) {
                return Err(WorkloadError::new(
                    "--key-median",
                    m.to_string(),
                    format!(
                        "a number within the key range {}..={}",
                        self.minimum, self.maximum
                    ),
                ));
            }
        }
        if let Some(s) = self.stddev {
            if !(s.is_finite() && s > 0.0) {
                return Err(WorkloadError::new(
                    "--key-stddev",
                    s.to_string(),
                    "a positive number",
                ));
            }
        }
        if !(self.zipf_exp > 0.0 && self.zipf_exp < 5.0) {
            return Err(WorkloadError::new(
                "--key-zipf-exp",
                self.zipf_exp.to_string(),
                "a number greater than 0 and less than 5",
            ));
        }
        Ok(())
    }

    fn span(&self) -> u64 {
        self.maximum - self.minimum
    }

    /// The gaussian median in effect (given, or the middle of the range).
    pub fn effective_median(&self) -> f64 {
        self.median
            .unwrap_or(self.minimum as f64 + self.span() as f64 / 2.0)
    }

    /// The gaussian standard deviation in effect (given, or a sixth of the range).
    pub fn effective_stddev(&self) -> f64 {
        self.stddev.unwrap_or(self.span() as f64 / 6.0)
    }
}

/// Draws key numbers for one stream. Built from a validated [`KeySpace`].
#[derive(Clone, Debug)]
pub(crate) enum KeySampler {
    Uniform(Uniform<u64>),
    Sequential {
        min: u64,
        max: u64,
        next: u64,
    },
    Gaussian {
        normal: Option<Normal<f64>>,
        min: u64,
        max: u64,
    },
    Zipf {
        zipf: Zipf<f64>,
        min: u64,
    },
}

/// Gaussian draws outside the range are retried this many times before the last draw
/// is clamped, so that no parameter choice can stall the generator.
const GAUSSIAN_RETRIES: u32 = 64;

impl KeySampler {
    /// The sampler for `pattern` over `space`, for stream `stream` of `streams`
    /// (only the parallel pattern looks at the stream).
    pub(crate) fn new(pattern: KeyPattern, space: &KeySpace, stream: u64, streams: u64) -> Self {
        let (min, max) = (space.minimum, space.maximum.max(space.minimum));
        match pattern {
            KeyPattern::Random => KeySampler::Uniform(Uniform::new_inclusive(min, max)),
            KeyPattern::Sequential => KeySampler::Sequential {
                min,
                max,
                next: min,
            },
            KeyPattern::Parallel => {
                let (lo, hi) = slice_of(min, max, stream, streams.max(1));
                KeySampler::Sequential {
                    min: lo,
                    max: hi,
                    next: lo,
                }
            }
            KeyPattern::Gaussian => {
                let normal = Normal::new(space.effective_median(), space.effective_stddev()).ok();
                KeySampler::Gaussian { normal, min, max }
            }
            KeyPattern::Zipf => {
                let n = (max - min).saturating_add(1);
                // Validation keeps the exponent in (0, 5) and n >= 1, where Zipf::new
                // cannot fail; fall back to uniform rather than panic if it ever did.
                match Zipf::new(n, space.zipf_exp) {
                    Ok(zipf) => KeySampler::Zipf { zipf, min },
                    Err(_) => KeySampler::Uniform(Uniform::new_inclusive(min, max)),
                }
            }
        }
    }

    /// The next key number.
    #[inline]
    pub(crate) fn next<R: Rng>(&mut self, rng: &mut R) -> u64 {
        match self {
            KeySampler::Uniform(u) => u.sample(rng),
            KeySampler::Sequential { min, max, next } => {
                let k = *next;
                *next = if k >= *max { *min } else { k + 1 };
                k
            }
            KeySampler::Gaussian { normal, min, max } => {
                let Some(normal) = normal else {
                    return *min;
                };
                let (lo, hi) = (*min as f64, *max as f64);
                let mut v = normal.sample(rng);
                for _ in 0..GAUSSIAN_RETRIES {
                    if v >= lo && v < hi + 1.0 {
                        break;
                    }
                    v = normal.sample(rng);
                }
                (v.clamp(lo, hi + 0.999_999)) as u64
            }
            KeySampler::Zipf { zipf, min } => {
                let rank = zipf.sample(rng) as u64;
                min.saturating_add(rank.saturating_sub(1))
            }
        }
    }
}

/// Slice `index` of `count` contiguous slices of `min..=max` (inclusive bounds). When
/// there are more slices than keys, slices share keys round-robin.
pub(crate) fn slice_of(min: u64, max: u64, index: u64, count: u64) -> (u64, u64) {
    let n = u128::from(max - min) + 1;
    let count = u128::from(count.max(1));
    let index = u128::from(index) % count;
    if count > n {
        let k = min + (index % n) as u64;
        return (k, k);
    }
    let lo = n * index / count;
    let hi = n * (index + 1) / count - 1;
    (min + lo as u64, min + hi as u64)
}

/// Appends `n` in decimal to `out` without allocating beyond `out`'s growth.
#[inline]
pub(crate) fn write_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends `n` as exactly 12 zero-padded decimal digits (the low 12 digits if larger),
/// as redis-benchmark writes `__rand_int__`.
#[inline]
pub(crate) fn write_rand_int(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [b'0'; 12];
    for d in digits.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend_from_slice(&digits);
}

/// Overwrites `slot` (12 bytes) with `n` as 12 zero-padded digits, like
/// [`write_rand_int`] but in place. A slot of another length is left as it is.
#[inline]
pub(crate) fn patch_rand_int(slot: &mut [u8], mut n: u64) {
    if slot.len() != 12 {
        return;
    }
    for d in slot.iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn space(min: u64, max: u64) -> KeySpace {
        KeySpace {
            minimum: min,
            maximum: max,
            ..KeySpace::default()
        }
    }

    #[test]
    fn decimal_and_rand_int_formatting() {
        let mut v = Vec::new();
        write_decimal(&mut v, 0);
        v.push(b' ');
        write_decimal(&mut v, u64::MAX);
        assert_eq!(v, b"0 18446744073709551615");
        let mut v = Vec::new();
        write_rand_int(&mut v, 42);
        assert_eq!(v, b"000000000042");
        v.clear();
        write_rand_int(&mut v, 1_234_567_890_123);
        assert_eq!(v, b"234567890123");
        let mut slot = *b"key:__rand_int__";
        patch_rand_int(&mut slot[4..], 907);
        assert_eq!(&slot, b"key:000000000907");
        patch_rand_int(&mut slot[..3], 1);
        assert_eq!(&slot, b"key:000000000907");
    }

    #[test]
    fn sequential_wraps_around() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut s = KeySampler::new(KeyPattern::Sequential, &space(5, 7), 0, 1);
        let got: Vec<u64> = (0..7).map(|_| s.next(&mut rng)).collect();
        assert_eq!(got, [5, 6, 7, 5, 6, 7, 5]);
    }

    #[test]
    fn parallel_slices_partition_the_range() {
        let mut seen = vec![0u32; 10];
        for i in 0..3 {
            let (lo, hi) = slice_of(0, 9, i, 3);
            for k in lo..=hi {
                seen[k as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&c| c == 1), "{seen:?}");
        assert_eq!(slice_of(0, 1, 3, 5), (1, 1));
        assert_eq!(slice_of(0, u64::MAX, 1, 2), (1u64 << 63, u64::MAX));
    }

    #[test]
    fn random_stays_in_range_and_covers_it() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        let mut s = KeySampler::new(KeyPattern::Random, &space(10, 19), 0, 1);
        let mut seen = [false; 10];
        for _ in 0..1000 {
            let k = s.next(&mut rng);
            assert!((10..=19).contains(&k));
            seen[(k - 10) as usize] = true;
        }
        assert!(seen.iter().all(|&b| b));
    }

    #[test]
    fn gaussian_centres_on_the_median() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let sp = space(0, 600);
        assert_eq!(sp.effective_median(), 300.0);
        assert_eq!(sp.effective_stddev(), 100.0);
        let mut s = KeySampler::new(KeyPattern::Gaussian, &sp, 0, 1);
        let n = 20_000;
        let keys: Vec<f64> = (0..n).map(|_| s.next(&mut rng) as f64).collect();
        let mean = keys.iter().sum::<f64>() / n as f64;
        let var = keys.iter().map(|k| (k - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean - 300.0).abs() < 5.0, "mean {mean}");
        assert!((var.sqrt() - 100.0).abs() < 5.0, "sd {}", var.sqrt());
        assert!(keys.iter().all(|&k| (0.0..=600.0).contains(&k)));
    }

    #[test]
    fn gaussian_with_median_at_the_edge_stays_in_range() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
        let sp = KeySpace {
            median: Some(0.0),
            stddev: Some(1e9),
            ..space(0, 10)
        };
        let mut s = KeySampler::new(KeyPattern::Gaussian, &sp, 0, 1);
        for _ in 0..1000 {
            assert!(s.next(&mut rng) <= 10);
        }
    }

    #[test]
    fn zipf_favours_the_smallest_keys() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let mut s = KeySampler::new(KeyPattern::Zipf, &space(100, 1099), 0, 1);
        let mut first = 0;
        let mut second = 0;
        for _ in 0..20_000 {
            let k = s.next(&mut rng);
            assert!((100..=1099).contains(&k));
            if k == 100 {
                first += 1;
            } else if k == 101 {
                second += 1;
            }
        }
        // With exponent 1, rank 1 is drawn about twice as often as rank 2, and makes
        // up about 1/H(1000) = 13% of the draws.
        let ratio = first as f64 / second as f64;
        assert!((1.7..2.3).contains(&ratio), "ratio {ratio}");
        assert!((2000..3400).contains(&first), "first {first}");
    }

    #[test]
    fn validation_names_the_flag() {
        let e = space(5, 4).validate().unwrap_err();
        assert!(e.to_string().starts_with("invalid --key-minimum '5'"));
        let e = KeySpace {
            zipf_exp: 5.0,
            ..KeySpace::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("--key-zipf-exp"));
        let e = KeySpace {
            median: Some(-1.0),
            ..KeySpace::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("--key-median"));
        let e = KeySpace {
            stddev: Some(0.0),
            ..KeySpace::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("--key-stddev"));
        assert!(KeySpace::default().validate().is_ok());
    }

    #[test]
    fn letters_round_trip() {
        for p in [
            KeyPattern::Random,
            KeyPattern::Sequential,
            KeyPattern::Gaussian,
            KeyPattern::Zipf,
            KeyPattern::Parallel,
        ] {
            assert_eq!(KeyPattern::from_letter(p.letter()), Some(p));
        }
        assert_eq!(KeyPattern::from_letter('r'), Some(KeyPattern::Random));
        assert_eq!(KeyPattern::from_letter('X'), None);
    }
}
