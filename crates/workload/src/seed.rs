//! Seeds: one master seed, and every random stream of a run derived from it.
//!
//! A run has one master seed (`--seed`, printed and stored with the results). Each
//! generator stream — one per connection, say — and each schedule stream needs its own
//! independent generator, and the same master seed must give the same streams on any
//! machine and thread count. Streams are therefore derived, never drawn: the seed of
//! stream `s` of phase `p` for purpose `purpose` is
//!
//! ```text
//! splitmix64(splitmix64(splitmix64(master ^ purpose) ^ p) ^ s)
//! ```
//!
//! where `splitmix64` is the finalizer of Vigna's SplitMix64 generator, a bijection on
//! 64-bit words with strong avalanche, so neighbouring stream numbers give unrelated
//! seeds. The derived seed feeds `Xoshiro256PlusPlus::seed_from_u64` (itself expanded
//! with SplitMix64), a small, fast generator that is plenty for load generation (not
//! for cryptography).
//!
//! Every seed resplab derives is derived here: the streams of a run
//! ([`derive_seed`]), the seed of each shard of a sharded run ([`shard_seed`]), and the
//! seed of each trial of an experiment ([`trial_seed`]). Their formulas are part of what
//! a stored seed means, so they never change.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// What a derived seed is for; different purposes never share a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum SeedPurpose {
    /// Keys, sizes and random numbers of generated requests.
    Requests = 0x5245_5155_4553_5453,
    /// Arrival times of an open-loop schedule.
    Schedule = 0x5343_4845_4455_4c45,
    /// Value byte pools.
    Values = 0x5641_4c55_4553_0000,
}

/// SplitMix64's state increment (the golden ratio in 64 bits).
pub const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function: a bijective 64-bit mixer. It is [`mix64`] of the
/// word advanced by [`GOLDEN_GAMMA`], so `splitmix64(s)` is the next output of a
/// SplitMix64 generator whose state is `s`.
#[inline]
pub fn splitmix64(z: u64) -> u64 {
    mix64(z.wrapping_add(GOLDEN_GAMMA))
}

/// SplitMix64's finalizer alone (Stafford's variant 13): a bijection with strong
/// avalanche, without the state increment.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The master seed of shard `index` of a sharded run (distinct per shard, the same on
/// every host for one master seed).
pub fn shard_seed(master: u64, index: u32) -> u64 {
    splitmix64(master ^ splitmix64(0x5348_4152_4400_0000 | u64::from(index)))
}

/// The seed of an experiment trial's request stream: the same for every variant of one
/// round, attempt and workload (`workload` is its position in the experiment), so
/// paired trials send identical requests.
pub fn trial_seed(master: u64, round: u32, attempt: u32, workload: usize) -> u64 {
    mix64(master ^ (u64::from(round) << 40) ^ (u64::from(attempt) << 24) ^ workload as u64)
}

/// The seed of stream `stream` of phase `phase` for `purpose` (see the module docs).
pub fn derive_seed(master: u64, purpose: SeedPurpose, phase: u64, stream: u64) -> u64 {
    splitmix64(splitmix64(splitmix64(master ^ purpose as u64) ^ phase) ^ stream)
}

/// A generator seeded with [`derive_seed`].
pub fn stream_rng(
    master: u64,
    purpose: SeedPurpose,
    phase: u64,
    stream: u64,
) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(derive_seed(master, purpose, phase, stream))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    #[test]
    fn splitmix_reference_value() {
        // First output of SplitMix64 seeded with 0 (Vigna's reference implementation):
        // the state becomes 0x9e3779b97f4a7c15 and is mixed to 0xe220a8397b1dcdaf.
        assert_eq!(splitmix64(0), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn shard_and_trial_seeds_keep_their_formulas() {
        // Stored experiments and sharded runs record seeds derived by these formulas:
        // the values must not move.
        assert_eq!(splitmix64(7), mix64(7u64.wrapping_add(GOLDEN_GAMMA)));
        assert_eq!(
            shard_seed(42, 3),
            splitmix64(42 ^ splitmix64(0x5348_4152_4400_0003))
        );
        assert_ne!(shard_seed(42, 0), shard_seed(42, 1));
        assert_eq!(trial_seed(9, 2, 1, 4), mix64(9 ^ (2 << 40) ^ (1 << 24) ^ 4));
        assert_ne!(trial_seed(9, 2, 1, 4), trial_seed(9, 3, 1, 4));
        assert_ne!(trial_seed(9, 2, 1, 4), trial_seed(9, 2, 1, 5));
    }

    #[test]
    fn derived_streams_are_stable_and_distinct() {
        let a = derive_seed(42, SeedPurpose::Requests, 0, 0);
        assert_eq!(a, derive_seed(42, SeedPurpose::Requests, 0, 0));
        let others = [
            derive_seed(42, SeedPurpose::Requests, 0, 1),
            derive_seed(42, SeedPurpose::Requests, 1, 0),
            derive_seed(43, SeedPurpose::Requests, 0, 0),
            derive_seed(42, SeedPurpose::Schedule, 0, 0),
        ];
        for o in others {
            assert_ne!(a, o);
        }
        let mut r1 = stream_rng(7, SeedPurpose::Values, 2, 3);
        let mut r2 = stream_rng(7, SeedPurpose::Values, 2, 3);
        assert_eq!(r1.next_u64(), r2.next_u64());
    }
}
