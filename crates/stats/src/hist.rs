//! Latency histograms: a thin, typed layer over HdrHistogram.
//!
//! Every latency in resplab is recorded in **nanoseconds** into an HdrHistogram that
//! tracks 1 ns to 60 s with 3 significant decimal digits, so any latency from 1 µs up has
//! a relative error below 0.1%. Histograms are per thread and per command on the hot path
//! and are merged exactly when a run ends (merging HdrHistograms loses nothing).
//!
//! Storage and exchange use the V2 compressed encoding (deflate), base64 encoded, as the
//! HdrHistogram family of libraries writes it (`HISTFAAA…`), so a stored histogram can be
//! read back by any of them.
//!
//! Cost: recording is O(1) with no allocation; `merge` is O(buckets).

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

/// Largest latency a histogram can hold: 60 s, in nanoseconds. Larger values are clamped
/// to it (and counted as such), never dropped.
pub const MAX_LATENCY_NS: u64 = 60_000_000_000;

/// Significant decimal digits kept for every value.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// Errors from decoding a stored histogram.
#[derive(Debug, thiserror::Error)]
pub enum HistogramDecodeError {
    /// The text is not valid base64; the stored value is damaged or not a histogram.
    #[error("histogram is not valid base64: {0}")]
    Base64(#[from] base64::DecodeError),
    /// The bytes are not an HdrHistogram V2 (compressed) encoding.
    #[error("histogram bytes are not an HdrHistogram V2 encoding: {0:?}")]
    Format(hdrhistogram::serialization::DeserializeError),
}

/// A latency histogram in nanoseconds (1 ns to 60 s, 3 significant digits).
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyHistogram {
    inner: Histogram<u64>,
    clamped: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        let inner = Histogram::new_with_bounds(1, MAX_LATENCY_NS, SIGNIFICANT_DIGITS)
            .expect("constant bounds are valid");
        LatencyHistogram { inner, clamped: 0 }
    }

    /// Records one latency. Zero is recorded as 1 ns; values above 60 s as 60 s.
    #[inline]
    pub fn record(&mut self, latency_ns: u64) {
        let v = if latency_ns > MAX_LATENCY_NS {
            self.clamped += 1;
            MAX_LATENCY_NS
        } else {
            latency_ns.max(1)
        };
        // Cannot fail: v is inside the bounds the histogram was built with.
        let _ = self.inner.record(v);
    }

    /// Records `count` identical latencies at once.
    pub fn record_n(&mut self, latency_ns: u64, count: u64) {
        let v = if latency_ns > MAX_LATENCY_NS {
            self.clamped += count;
            MAX_LATENCY_NS
        } else {
            latency_ns.max(1)
        };
        let _ = self.inner.record_n(v, count);
    }

    /// Adds every value of `other` to this histogram. Exact.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Cannot fail: both histograms have the same bounds.
        let _ = self.inner.add(&other.inner);
        self.clamped += other.clamped;
    }

    /// Removes every value.
    pub fn reset(&mut self) {
        self.inner.reset();
        self.clamped = 0;
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.inner.len()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// How many values were above 60 s and clamped to it.
    pub fn clamped(&self) -> u64 {
        self.clamped
    }

    /// Mean in nanoseconds (0 when empty).
    pub fn mean_ns(&self) -> f64 {
        if self.is_empty() {
            0.0
        } else {
            self.inner.mean()
        }
    }

    /// The value at `percentile` (0–100), in nanoseconds (0 when empty).
    pub fn percentile_ns(&self, percentile: f64) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.inner.value_at_percentile(percentile)
        }
    }

    /// Smallest recorded value in nanoseconds (0 when empty).
    pub fn min_ns(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.inner.min()
        }
    }

    /// Largest recorded value in nanoseconds (0 when empty).
    pub fn max_ns(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.inner.max()
        }
    }

    /// The underlying HdrHistogram, for iteration and exporters.
    pub fn as_hdr(&self) -> &Histogram<u64> {
        &self.inner
    }

    /// Encodes as V2-deflate bytes, base64 (standard alphabet, padded).
    pub fn to_base64(&self) -> String {
        let mut bytes = Vec::new();
        // Serializing into a Vec cannot fail for a valid histogram.
        let _ = V2DeflateSerializer::new().serialize(&self.inner, &mut bytes);
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Encodes as V2-deflate base64 with values in units of `unit_ns` nanoseconds
    /// (memtier_benchmark's files: microseconds, 1,000), the inverse of
    /// [`LatencyHistogram::from_base64_in`].
    pub fn to_base64_in(&self, unit_ns: u64) -> String {
        let unit = unit_ns.max(1);
        let mut scaled = LatencyHistogram::new();
        for v in self.inner.iter_recorded() {
            scaled.record_n(v.value_iterated_to() / unit, v.count_at_value());
        }
        scaled.to_base64()
    }

    /// Decodes a histogram written by [`LatencyHistogram::to_base64`] or by any
    /// HdrHistogram library (V2 or V2-deflate encoding, base64).
    ///
    /// # Errors
    /// When the text is not base64 or the bytes are not an HdrHistogram encoding.
    pub fn from_base64(text: &str) -> Result<Self, HistogramDecodeError> {
        Self::from_base64_in(text, 1)
    }

    /// Decodes a histogram another tool wrote with its values in units of `unit_ns`
    /// nanoseconds (memtier_benchmark: microseconds, 1,000), re-recorded in nanoseconds.
    ///
    /// # Errors
    /// As [`LatencyHistogram::from_base64`].
    pub fn from_base64_in(text: &str, unit_ns: u64) -> Result<Self, HistogramDecodeError> {
        let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim())?;
        let decoded: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(HistogramDecodeError::Format)?;
        let mut h = LatencyHistogram::new();
        // A foreign histogram may have other bounds; re-record value by value.
        for v in decoded.iter_recorded() {
            h.record_n(
                v.value_iterated_to().saturating_mul(unit_ns.max(1)),
                v.count_at_value(),
            );
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_within_three_digits() {
        let mut h = LatencyHistogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        let p50 = h.percentile_ns(50.0) as f64;
        assert!((p50 / 50_000_000.0 - 1.0).abs() < 1e-3, "{p50}");
        assert_eq!(h.count(), 100_000);
        assert!(h.max_ns() >= 99_900_000);
    }

    #[test]
    fn round_trip_and_merge_are_exact() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        for v in 0..5000u64 {
            a.record(1_000 + v * 37);
            b.record(90_000 + v * 11);
        }
        let a2 = LatencyHistogram::from_base64(&a.to_base64()).unwrap();
        assert_eq!(a2.as_hdr(), a.as_hdr());
        let mut m = a.clone();
        m.merge(&b);
        assert_eq!(m.count(), 10_000);
        assert_eq!(m.max_ns(), a.max_ns().max(b.max_ns()));
    }

    #[test]
    fn clamps_instead_of_dropping() {
        let mut h = LatencyHistogram::new();
        h.record(MAX_LATENCY_NS * 3);
        h.record(0);
        assert_eq!(h.count(), 2);
        assert_eq!(h.clamped(), 1);
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(LatencyHistogram::from_base64("not base64 !!").is_err());
        assert!(LatencyHistogram::from_base64("aGVsbG8gd29ybGQ=").is_err());
    }
}
