//! Values: how large each request's `__data__` is and which bytes it carries.
//!
//! Sizes follow memtier_benchmark's forms: a fixed size (`--data-size`, default 32), a
//! uniform range (`--data-size-range MIN-MAX`), weighted sizes
//! (`--data-size-list SIZE:WEIGHT,…`, each request drawing a size with probability
//! proportional to its weight), and a range spread over the key range
//! (`--data-size-range` with `--data-size-pattern=S`: the size follows the request's
//! key, so every key always gets the same size).
//!
//! Contents differ from request to request without costing an allocation or a random
//! byte per byte: each stream owns a shared, seeded pool of printable bytes that is
//! [`POOL_WINDOW`] bytes longer than the largest value, and every request copies its
//! value from a random offset into that pool. A server that compresses or deduplicates
//! values therefore cannot profit from identical payloads, while the generator pays one
//! `memcpy` per value.
//!
//! The redis-benchmark catalog is the exception: redis-benchmark sends one payload for
//! the whole run ([`crate::catalog::payload`]) and so does resplab there.

use crate::error::WorkloadError;
use crate::keys::KeySpace;
use rand::distributions::{Distribution, Uniform};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Largest value size accepted: Redis' default `proto-max-bulk-len`.
pub const MAX_VALUE_BYTES: usize = 512 * 1024 * 1024;

/// How many distinct starting offsets a value can have in the pool.
pub const POOL_WINDOW: usize = 4096;

/// Sizes of the values a workload writes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ValueSize {
    /// Every value has `bytes` bytes (`--data-size`, `-d`).
    Fixed {
        /// Size in bytes.
        bytes: usize,
    },
    /// Uniform between `min` and `max` bytes inclusive (`--data-size-range`).
    Range {
        /// Smallest size in bytes.
        min: usize,
        /// Largest size in bytes.
        max: usize,
    },
    /// A size drawn from weighted choices (`--data-size-list`).
    List {
        /// The choices; weights are relative.
        sizes: Vec<WeightedSize>,
    },
    /// A size set by the request's key (`--data-size-pattern=S`): `min` bytes for the
    /// key at the key range's minimum, `max` at its maximum, and in between the linear
    /// share, rounded down, as memtier_benchmark computes it. A request without a key
    /// gets `min`.
    ByKey {
        /// Size in bytes at the key range's minimum.
        min: usize,
        /// Size in bytes at the key range's maximum.
        max: usize,
    },
}

/// One choice of a [`ValueSize::List`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WeightedSize {
    /// Size in bytes.
    pub bytes: usize,
    /// Relative weight (a size with weight 2 is drawn twice as often as one with 1).
    pub weight: u32,
}

impl Default for ValueSize {
    /// memtier_benchmark's default: 32 bytes.
    fn default() -> Self {
        ValueSize::Fixed { bytes: 32 }
    }
}

impl ValueSize {
    /// The largest size this can produce.
    pub fn max_bytes(&self) -> usize {
        match self {
            ValueSize::Fixed { bytes } => *bytes,
            ValueSize::Range { max, .. } | ValueSize::ByKey { max, .. } => *max,
            ValueSize::List { sizes } => sizes.iter().map(|s| s.bytes).max().unwrap_or(0),
        }
    }

    /// The mean size in bytes (of [`ValueSize::ByKey`]: over keys drawn evenly from the
    /// key range).
    pub fn mean_bytes(&self) -> f64 {
        match self {
            ValueSize::Fixed { bytes } => *bytes as f64,
            ValueSize::Range { min, max } | ValueSize::ByKey { min, max } => {
                (*min as f64 + *max as f64) / 2.0
            }
            ValueSize::List { sizes } => {
                let total: f64 = sizes.iter().map(|s| f64::from(s.weight)).sum();
                if total == 0.0 {
                    return 0.0;
                }
                sizes
                    .iter()
                    .map(|s| s.bytes as f64 * f64::from(s.weight))
                    .sum::<f64>()
                    / total
            }
        }
    }

    /// Checks sizes and weights.
    ///
    /// # Errors
    /// A size above [`MAX_VALUE_BYTES`], a range with `min > max`, or a list that is
    /// empty or whose weights are all zero.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        let too_big = |flag: &str, v: usize| {
            WorkloadError::new(
                flag,
                v.to_string(),
                format!("a size of at most {MAX_VALUE_BYTES} bytes (512 MiB)"),
            )
        };
        match self {
            ValueSize::Fixed { bytes } if *bytes > MAX_VALUE_BYTES => {
                Err(too_big("--data-size", *bytes))
            }
            ValueSize::Range { min, max } if min > max => Err(WorkloadError::new(
                "--data-size-range",
                format!("{min}-{max}"),
                "MIN-MAX with MIN no larger than MAX, like 32-1024",
            )),
            ValueSize::ByKey { min, max } if min > max => Err(WorkloadError::new(
                "--data-size-range",
                format!("{min}-{max}"),
                "MIN-MAX with MIN no larger than MAX, like 32-1024",
            )),
            ValueSize::Range { max, .. } | ValueSize::ByKey { max, .. }
                if *max > MAX_VALUE_BYTES =>
            {
                Err(too_big("--data-size-range", *max))
            }
            ValueSize::List { sizes } => {
                if sizes.is_empty() || sizes.iter().all(|s| s.weight == 0) {
                    return Err(WorkloadError::new(
                        "--data-size-list",
                        "",
                        "at least one SIZE:WEIGHT pair with a weight above 0, like 32:7,1024:3",
                    ));
                }
                match sizes.iter().find(|s| s.bytes > MAX_VALUE_BYTES) {
                    Some(s) => Err(too_big("--data-size-list", s.bytes)),
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }
}

/// Where a compiled workload's values come from. Shared by all streams of a phase.
#[derive(Clone, Debug)]
pub(crate) enum ValueSource {
    /// The same bytes in every request (the redis-benchmark catalog).
    Fixed(Arc<[u8]>),
    /// Sizes drawn per request, bytes copied from a random offset into a pool.
    Pool { pool: Arc<[u8]>, sizes: SizeDist },
}

/// Compiled [`ValueSize`].
#[derive(Clone, Debug)]
pub(crate) enum SizeDist {
    Fixed(usize),
    Range(Uniform<usize>),
    /// Cumulative weights and their sizes.
    List {
        cumulative: Box<[u64]>,
        sizes: Box<[usize]>,
    },
    /// [`ValueSize::ByKey`] over the key range `first..=first + span`.
    ByKey {
        min: usize,
        max: usize,
        first: u64,
        span: u64,
    },
}

impl ValueSource {
    /// A pool-backed source for validated `size` with keys from `keys`, its bytes
    /// derived from `seed`.
    pub(crate) fn pool(size: &ValueSize, keys: &KeySpace, seed: u64) -> Self {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let len = size.max_bytes().saturating_add(POOL_WINDOW);
        let pool: Vec<u8> = (0..len)
            .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())])
            .collect();
        let sizes = match size {
            ValueSize::Fixed { bytes } => SizeDist::Fixed(*bytes),
            ValueSize::Range { min, max } => {
                SizeDist::Range(Uniform::new_inclusive(*min, (*max).max(*min)))
            }
            ValueSize::ByKey { min, max } => SizeDist::ByKey {
                min: *min,
                max: (*max).max(*min),
                first: keys.minimum,
                span: keys.maximum.saturating_sub(keys.minimum),
            },
            ValueSize::List { sizes } => {
                let mut acc = 0u64;
                let mut cumulative = Vec::new();
                let mut out = Vec::new();
                for s in sizes.iter().filter(|s| s.weight > 0) {
                    acc += u64::from(s.weight);
                    cumulative.push(acc);
                    out.push(s.bytes);
                }
                if out.is_empty() {
                    SizeDist::Fixed(0)
                } else {
                    SizeDist::List {
                        cumulative: cumulative.into_boxed_slice(),
                        sizes: out.into_boxed_slice(),
                    }
                }
            }
        };
        ValueSource::Pool {
            pool: pool.into(),
            sizes,
        }
    }

    /// The longest value this source writes.
    pub(crate) fn max_len(&self) -> usize {
        match self {
            ValueSource::Fixed(bytes) => bytes.len(),
            ValueSource::Pool { pool, sizes } => {
                let most = match sizes {
                    SizeDist::Fixed(n) => *n,
                    // Uniform::new_inclusive keeps no public bound; the pool is
                    // POOL_WINDOW longer than the largest size.
                    SizeDist::Range(_) => pool.len().saturating_sub(POOL_WINDOW),
                    SizeDist::List { sizes, .. } => sizes.iter().copied().max().unwrap_or(0),
                    SizeDist::ByKey { max, .. } => *max,
                };
                most.min(pool.len())
            }
        }
    }

    /// Appends the next value to `out`; `key` is the request's key number (sizes of
    /// [`ValueSize::ByKey`] follow it).
    #[inline]
    pub(crate) fn write<R: Rng>(&self, out: &mut Vec<u8>, rng: &mut R, key: u64) {
        match self {
            ValueSource::Fixed(bytes) => out.extend_from_slice(bytes),
            ValueSource::Pool { pool, sizes } => {
                let len = match sizes {
                    SizeDist::Fixed(n) => *n,
                    SizeDist::Range(u) => u.sample(rng),
                    SizeDist::List { cumulative, sizes } => {
                        let total = cumulative.last().copied().unwrap_or(1);
                        let x = rng.gen_range(0..total);
                        let i = cumulative.partition_point(|&c| c <= x);
                        sizes.get(i).copied().unwrap_or(0)
                    }
                    SizeDist::ByKey {
                        min,
                        max,
                        first,
                        span,
                    } => size_by_key(*min, *max, key.saturating_sub(*first), *span),
                };
                let offset = rng.gen_range(0..POOL_WINDOW);
                let end = offset.saturating_add(len).min(pool.len());
                out.extend_from_slice(pool.get(offset..end).unwrap_or(&[]));
            }
        }
    }
}

/// The size of the key `offset` places above the key range's minimum, of `span + 1`
/// keys: memtier_benchmark's `(max - min) × offset / span + min` in floating point,
/// rounded down. A range of one key has no share to take: it gets `min`.
#[inline]
fn size_by_key(min: usize, max: usize, offset: u64, span: u64) -> usize {
    if span == 0 {
        return min;
    }
    let share = offset.min(span) as f64 / span as f64;
    ((max - min) as f64 * share + min as f64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(size: &ValueSize, n: usize) -> Vec<Vec<u8>> {
        let src = ValueSource::pool(size, &KeySpace::default(), 7);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
        (0..n)
            .map(|_| {
                let mut v = Vec::new();
                src.write(&mut v, &mut rng, 0);
                v
            })
            .collect()
    }

    #[test]
    fn by_key_sizes_follow_the_key_as_memtier_computes_them() {
        let keys = KeySpace {
            minimum: 1,
            maximum: 1001,
            ..KeySpace::default()
        };
        let src = ValueSource::pool(&ValueSize::ByKey { min: 10, max: 110 }, &keys, 7);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
        let mut size = |key| {
            let mut v = Vec::new();
            src.write(&mut v, &mut rng, key);
            v.len()
        };
        // 100 × (key - 1) / 1000 + 10, rounded down; below the range is its start.
        assert_eq!(
            [1, 2, 11, 501, 999, 1001, 0].map(&mut size),
            [10, 10, 11, 60, 109, 110, 10]
        );
        assert_eq!(size_by_key(7, 9, 0, 0), 7);
        assert_eq!(src.max_len(), 110);
        assert_eq!(ValueSize::ByKey { min: 10, max: 110 }.mean_bytes(), 60.0);
        assert!(ValueSize::ByKey { min: 5, max: 4 }.validate().is_err());
    }

    #[test]
    fn fixed_size_values_differ_between_requests() {
        let vals = draw(&ValueSize::Fixed { bytes: 32 }, 100);
        assert!(vals.iter().all(|v| v.len() == 32));
        let distinct: std::collections::HashSet<_> = vals.iter().collect();
        assert!(distinct.len() > 90);
        assert!(vals.iter().flatten().all(|b| b.is_ascii_alphanumeric()));
    }

    #[test]
    fn range_sizes_cover_the_range() {
        let vals = draw(&ValueSize::Range { min: 3, max: 6 }, 400);
        let mut seen = [0; 7];
        for v in &vals {
            seen[v.len()] += 1;
        }
        assert_eq!(&seen[..3], &[0, 0, 0]);
        assert!(seen[3..].iter().all(|&c| c > 50), "{seen:?}");
    }

    #[test]
    fn list_sizes_follow_weights() {
        let size = ValueSize::List {
            sizes: vec![
                WeightedSize {
                    bytes: 10,
                    weight: 3,
                },
                WeightedSize {
                    bytes: 20,
                    weight: 1,
                },
                WeightedSize {
                    bytes: 30,
                    weight: 0,
                },
            ],
        };
        assert_eq!(size.mean_bytes(), 12.5);
        let vals = draw(&size, 4000);
        let tens = vals.iter().filter(|v| v.len() == 10).count();
        let twenties = vals.iter().filter(|v| v.len() == 20).count();
        assert_eq!(tens + twenties, 4000);
        let share = tens as f64 / 4000.0;
        assert!((0.72..0.78).contains(&share), "share {share}");
    }

    #[test]
    fn validation() {
        assert!(ValueSize::Range { min: 5, max: 4 }.validate().is_err());
        assert!(ValueSize::Fixed {
            bytes: MAX_VALUE_BYTES + 1
        }
        .validate()
        .is_err());
        assert!(ValueSize::List { sizes: vec![] }.validate().is_err());
        let zero = ValueSize::List {
            sizes: vec![WeightedSize {
                bytes: 1,
                weight: 0,
            }],
        };
        assert!(zero.validate().is_err());
        assert!(ValueSize::default().validate().is_ok());
        assert_eq!(ValueSize::default().max_bytes(), 32);
    }
}
