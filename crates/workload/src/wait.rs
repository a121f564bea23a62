//! WAIT requests among a mix's SETs: memtier_benchmark's `--wait-ratio`,
//! `--num-slaves` and `--wait-timeout` ([`crate::spec::WaitSpec`] says the rule).
//!
//! A [`WaitState`] belongs to one [`crate::Generator`]: it counts the SETs and WAITs
//! its stream has sent, says when the next request is a WAIT, and writes it with the
//! replicas and timeout it draws. The draws reuse the key samplers of [`crate::keys`]:
//! the replicas are a uniform draw over their range, the timeout the gaussian draw
//! (median in the middle, a sixth of the range as standard deviation) memtier uses.

use crate::keys::{write_decimal, KeyPattern, KeySampler, KeySpace};
use crate::request::Request;
use crate::spec::WaitSpec;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The largest WAIT request: `WAIT` and two numbers of at most 20 digits.
pub(crate) const MAX_WAIT_REQUEST: (usize, usize) = (4 + 20 + 20, 3);

/// One stream's WAIT schedule and draws.
#[derive(Clone, Debug)]
pub(crate) struct WaitState {
    /// `sets / waits` of the ratio, rounded down.
    quotient: u64,
    sets_sent: u64,
    waits_sent: u64,
    replicas: KeySampler,
    timeout_ms: KeySampler,
}

impl WaitState {
    pub(crate) fn new(spec: &WaitSpec) -> WaitState {
        let range = |minimum: u64, maximum: u64| KeySpace {
            minimum,
            maximum,
            median: None,
            stddev: None,
            ..KeySpace::default()
        };
        WaitState {
            quotient: spec.sets_per_wait() - 1,
            sets_sent: 0,
            waits_sent: 0,
            replicas: KeySampler::new(
                KeyPattern::Random,
                &range(spec.replicas_min, spec.replicas_max),
                0,
                1,
            ),
            timeout_ms: KeySampler::new(
                KeyPattern::Gaussian,
                &range(spec.timeout_ms_min, spec.timeout_ms_max),
                0,
                1,
            ),
        }
    }

    /// Whether the next request is a WAIT: the first one is, then whenever the SETs
    /// sent divided by the WAITs sent exceeds the ratio's quotient (memtier's test).
    #[inline]
    pub(crate) fn is_due(&self) -> bool {
        self.waits_sent == 0 || self.sets_sent / self.waits_sent > self.quotient
    }

    /// Counts a SET the stream sent.
    #[inline]
    pub(crate) fn count_set(&mut self) {
        self.sets_sent += 1;
    }

    /// Fills `req` with `WAIT numreplicas timeout`, drawn from `rng`.
    pub(crate) fn write(&mut self, req: &mut Request, rng: &mut Xoshiro256PlusPlus) {
        let replicas = self.replicas.next(rng);
        let timeout = self.timeout_ms.next(rng);
        req.clear();
        req.push_arg(b"WAIT");
        req.push_arg_with(|w| write_decimal(w.buffer(), replicas));
        req.push_arg_with(|w| write_decimal(w.buffer(), timeout));
        self.waits_sent += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::{stream_rng, SeedPurpose};

    fn spec(sets: u32, waits: u32) -> WaitSpec {
        WaitSpec {
            sets,
            waits,
            replicas_min: 1,
            replicas_max: 3,
            timeout_ms_min: 10,
            timeout_ms_max: 70,
        }
    }

    /// The sequence memtier's test gives: W, then a WAIT after every `q + 1` SETs.
    #[test]
    fn waits_follow_memtiers_whole_number_rule() {
        let run = |s: &WaitSpec, sets: usize| {
            let mut w = WaitState::new(s);
            let mut rng = stream_rng(1, SeedPurpose::Requests, 0, 0);
            let mut req = Request::new();
            let mut out = String::new();
            let mut sent = 0;
            while sent < sets {
                if w.is_due() {
                    w.write(&mut req, &mut rng);
                    out.push('W');
                } else {
                    w.count_set();
                    sent += 1;
                    out.push('S');
                }
            }
            out
        };
        assert_eq!(run(&spec(1, 1), 6), "WSSWSSWSS");
        assert_eq!(run(&spec(10, 1), 12), format!("W{}WS", "S".repeat(11)));
        assert_eq!(run(&spec(1, 2), 3), "WSWSWS");
        assert_eq!(run(&spec(5, 2), 6), "WSSSWSSS");
        assert_eq!(spec(5, 2).sets_per_wait(), 3);
    }

    #[test]
    fn draws_stay_in_their_ranges_and_centre_the_timeout() {
        let mut w = WaitState::new(&spec(1, 1));
        let mut rng = stream_rng(7, SeedPurpose::Requests, 0, 0);
        let mut req = Request::new();
        let mut timeouts = Vec::new();
        for _ in 0..2000 {
            w.write(&mut req, &mut rng);
            let num = |i| -> u64 {
                std::str::from_utf8(req.arg(i).unwrap())
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            assert_eq!(req.arg(0), Some(&b"WAIT"[..]));
            assert!((1..=3).contains(&num(1)));
            assert!((10..=70).contains(&num(2)));
            timeouts.push(num(2) as f64);
        }
        let mean = timeouts.iter().sum::<f64>() / timeouts.len() as f64;
        assert!((mean - 40.0).abs() < 2.0, "mean timeout {mean}");
        let fixed = WaitSpec {
            replicas_min: 0,
            replicas_max: 0,
            timeout_ms_min: 0,
            timeout_ms_max: 0,
            ..spec(1, 1)
        };
        WaitState::new(&fixed).write(&mut req, &mut rng);
        let args: Vec<&[u8]> = req.args().collect();
        assert_eq!(args, [&b"WAIT"[..], b"0", b"0"]);
    }
}
