//! Open-loop schedules: the intended send time of every request.
//!
//! With `--rate`, requests are not sent as fast as replies come back (closed loop) but
//! at times fixed in advance, and latency is measured from those intended times, so a
//! server that stalls cannot hide the requests that should have been sent meanwhile
//! (no coordinated omission). This module only computes the times; the engine sends
//! and measures.
//!
//! A [`Schedule`] is one global stream of intended times at `rate_per_sec`. The engine
//! splits it among `k` senders (connections) with [`Schedule::stream`]:
//!
//! - [`Arrivals::Constant`]: the global times are `t_j = j / rate` for `j = 0, 1, …`;
//!   stream `i` of `k` takes exactly the `t_j` with `j ≡ i (mod k)`. Together the
//!   streams are the global schedule, nothing added or lost. Each time is computed from
//!   `j` directly, so no rounding error accumulates over a long run.
//! - [`Arrivals::Poisson`]: exponential gaps. Stream `i` of `k` is its own Poisson
//!   process of rate `rate / k`, with its generator seeded from the schedule seed and
//!   `i` (see [`crate::seed`]). The superposition of `k` independent Poisson processes
//!   of rate `rate / k` is a Poisson process of rate `rate`, so together the streams
//!   are a Poisson schedule at the global rate — exact in distribution rather than by
//!   construction, and reproducible from the seed.
//!
//! Times are nanoseconds since the start of the run, as `u64`.

use crate::error::WorkloadError;
use crate::seed::{stream_rng, SeedPurpose};
use rand::Rng;
use rand_distr::Exp1;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// How intended send times are spaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Equal gaps of `1 / rate`.
    Constant,
    /// Exponential gaps with mean `1 / rate` (a Poisson process).
    Poisson,
}

impl Arrivals {
    /// `"constant"` or `"poisson"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Arrivals::Constant => "constant",
            Arrivals::Poisson => "poisson",
        }
    }
}

/// A global schedule of intended send times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    rate_per_sec: f64,
    arrivals: Arrivals,
    seed: u64,
}

impl Schedule {
    /// A schedule of `rate_per_sec` requests per second.
    ///
    /// A rate that is not a positive finite number gives streams that never send
    /// ([`ScheduleStream::next_offset_ns`] returns `u64::MAX`); use
    /// [`Schedule::try_new`] to reject such rates instead.
    pub fn new(rate_per_sec: f64, arrivals: Arrivals, seed: u64) -> Schedule {
        Schedule {
            rate_per_sec,
            arrivals,
            seed,
        }
    }

    /// Like [`Schedule::new`], refusing a rate that is not a positive finite number.
    ///
    /// # Errors
    /// The rate is zero, negative, infinite or NaN.
    pub fn try_new(
        rate_per_sec: f64,
        arrivals: Arrivals,
        seed: u64,
    ) -> Result<Schedule, WorkloadError> {
        if rate_per_sec.is_finite() && rate_per_sec > 0.0 {
            Ok(Schedule::new(rate_per_sec, arrivals, seed))
        } else {
            Err(WorkloadError::new(
                "--rate",
                rate_per_sec.to_string(),
                "a positive number of requests per second, like 50000",
            ))
        }
    }

    /// Requests per second of the whole schedule.
    pub fn rate_per_sec(&self) -> f64 {
        self.rate_per_sec
    }

    /// The arrival process.
    pub fn arrivals(&self) -> Arrivals {
        self.arrivals
    }

    /// Stream `index` of `count` (see the module docs for how streams partition the
    /// schedule). `count` 0 is taken as 1 and `index` is taken modulo `count`.
    pub fn stream(&self, index: u64, count: u64) -> ScheduleStream {
        let count = count.max(1);
        let index = index % count;
        let valid = self.rate_per_sec.is_finite() && self.rate_per_sec > 0.0;
        let period_ns = if valid {
            1e9 / self.rate_per_sec
        } else {
            f64::INFINITY
        };
        ScheduleStream {
            arrivals: self.arrivals,
            period_ns,
            count,
            next_j: index,
            mean_gap_ns: period_ns * count as f64,
            elapsed_ns: 0.0,
            rng: stream_rng(self.seed, SeedPurpose::Schedule, 0, index),
        }
    }
}

/// One sender's share of a [`Schedule`].
#[derive(Clone, Debug)]
pub struct ScheduleStream {
    arrivals: Arrivals,
    period_ns: f64,
    count: u64,
    /// Constant: index of the next global slot of this stream.
    next_j: u64,
    /// Poisson: mean gap of this stream.
    mean_gap_ns: f64,
    /// Poisson: time of the last arrival.
    elapsed_ns: f64,
    rng: Xoshiro256PlusPlus,
}

impl ScheduleStream {
    /// The intended send time of this stream's next request, in nanoseconds since the
    /// start of the run. Non-decreasing; saturates at `u64::MAX`.
    #[inline]
    pub fn next_offset_ns(&mut self) -> u64 {
        match self.arrivals {
            Arrivals::Constant => {
                let t = self.next_j as f64 * self.period_ns;
                self.next_j = self.next_j.saturating_add(self.count);
                to_ns(t)
            }
            Arrivals::Poisson => {
                let gap: f64 = self.rng.sample(Exp1);
                self.elapsed_ns += gap * self.mean_gap_ns;
                to_ns(self.elapsed_ns)
            }
        }
    }
}

fn to_ns(t: f64) -> u64 {
    if t.is_nan() || t >= u64::MAX as f64 {
        u64::MAX
    } else {
        t.round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_streams_partition_the_global_schedule() {
        let s = Schedule::new(1000.0, Arrivals::Constant, 1);
        let mut all: Vec<u64> = Vec::new();
        for i in 0..3 {
            let mut st = s.stream(i, 3);
            for _ in 0..100 {
                all.push(st.next_offset_ns());
            }
        }
        all.sort_unstable();
        let global: Vec<u64> = (0..300).map(|j| j * 1_000_000).collect();
        assert_eq!(all, global);
    }

    #[test]
    fn constant_rate_has_no_drift() {
        let s = Schedule::new(3.0, Arrivals::Constant, 0);
        let mut st = s.stream(0, 1);
        let mut last = 0;
        for _ in 0..3_000_001 {
            last = st.next_offset_ns();
        }
        // Request 3,000,000 of a 3/s schedule is due at exactly 1,000,000 s.
        assert_eq!(last, 1_000_000_000_000_000);
    }

    #[test]
    fn poisson_mean_rate_and_gap_spread() {
        let rate = 10_000.0;
        let s = Schedule::new(rate, Arrivals::Poisson, 42);
        let k = 4;
        let n = 50_000u64;
        let mut total_rate = 0.0;
        for i in 0..k {
            let mut st = s.stream(i, k);
            let mut prev = 0u64;
            let mut gaps = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let t = st.next_offset_ns();
                assert!(t >= prev);
                gaps.push((t - prev) as f64);
                prev = t;
            }
            let mean = gaps.iter().sum::<f64>() / n as f64;
            let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
            // Exponential gaps: standard deviation equals the mean.
            assert!((sd / mean - 1.0).abs() < 0.03, "cv {}", sd / mean);
            total_rate += n as f64 / (prev as f64 / 1e9);
        }
        assert!((total_rate / rate - 1.0).abs() < 0.02, "rate {total_rate}");
    }

    #[test]
    fn poisson_is_deterministic_per_seed_and_stream() {
        let take = |seed, i| {
            let mut st = Schedule::new(500.0, Arrivals::Poisson, seed).stream(i, 2);
            (0..50).map(|_| st.next_offset_ns()).collect::<Vec<_>>()
        };
        assert_eq!(take(7, 0), take(7, 0));
        assert_ne!(take(7, 0), take(7, 1));
        assert_ne!(take(7, 0), take(8, 0));
    }

    #[test]
    fn invalid_rates_never_fire_and_are_rejected_by_try_new() {
        for r in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let mut st = Schedule::new(r, Arrivals::Constant, 0).stream(1, 2);
            assert_eq!(st.next_offset_ns(), u64::MAX);
            let mut st = Schedule::new(r, Arrivals::Poisson, 0).stream(0, 1);
            assert_eq!(st.next_offset_ns(), u64::MAX);
            assert!(Schedule::try_new(r, Arrivals::Constant, 0).is_err());
        }
        let mut st = Schedule::new(1e9, Arrivals::Constant, 0).stream(0, 0);
        assert_eq!(st.next_offset_ns(), 0);
        assert_eq!(st.next_offset_ns(), 1);
    }
}
