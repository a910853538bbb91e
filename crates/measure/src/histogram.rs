//! A log-linear latency histogram: O(1) recording into fixed buckets, no allocation after `new`.
//!
//! Values (nanoseconds) below 2^7 each have their own bucket. Above that, every power of two
//! `[2^k, 2^(k+1))` is split into 2^7 = 128 equal sub-buckets, so a bucket is at most 1/128 of its
//! lower bound wide. Percentiles report the bucket midpoint (clamped to the exact min and max),
//! so a reported percentile is within 1/256 (0.4 %) of the true sample value. The whole `u64`
//! range is covered: 58 groups x 128 buckets = 7,424 counters (58 KiB). This is the scheme of
//! fio's `stat.h` and of HdrHistogram, with the constants chosen for sub-percent error.
//!
//! Histograms are merged by adding counters, so per-pass or per-thread histograms combine into
//! exact cell totals; percentiles are never averaged.

use serde::Serialize;

/// log2 of the number of sub-buckets per power of two.
pub const SUB_BUCKET_BITS: u32 = 7;
const SUB_BUCKETS: u64 = 1 << SUB_BUCKET_BITS;
const GROUPS: usize = 64 - SUB_BUCKET_BITS as usize + 1;
/// Number of counters in every histogram.
pub const BUCKETS: usize = GROUPS * SUB_BUCKETS as usize;

/// Latency histogram in nanoseconds.
#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64]>,
    count: u64,
    /// Sum of all values in ns: u64 holds 584 years of latencies.
    sum: u64,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.count)
            .field("min", &self.min)
            .field("max", &self.max)
            .finish()
    }
}

#[inline(always)]
pub(crate) fn bucket_index(value: u64) -> usize {
    if value < SUB_BUCKETS {
        value as usize
    } else {
        let msb = 63 - value.leading_zeros();
        let shift = msb - SUB_BUCKET_BITS;
        let sub = (value >> shift) - SUB_BUCKETS;
        (shift as usize + 1) * SUB_BUCKETS as usize + sub as usize
    }
}

/// Lowest value that falls into bucket `index`, and the bucket's width.
pub(crate) fn bucket_range(index: usize) -> (u64, u64) {
    let group = (index as u64) / SUB_BUCKETS;
    let sub = (index as u64) % SUB_BUCKETS;
    if group == 0 {
        (sub, 1)
    } else {
        ((SUB_BUCKETS + sub) << (group - 1), 1 << (group - 1))
    }
}

impl Histogram {
    /// An empty histogram (allocates its counters once).
    pub fn new() -> Histogram {
        Histogram {
            counts: vec![0; BUCKETS].into_boxed_slice(),
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    /// Records one value. Constant time, no allocation, no branch on the bucket layout
    /// beyond the small-value test.
    #[inline(always)]
    pub fn record(&mut self, value_ns: u64) {
        // SAFETY-free indexing: bucket_index(u64::MAX) == BUCKETS - 1, so every index is in range.
        self.counts[bucket_index(value_ns)] += 1;
        self.count += 1;
        self.sum = self.sum.wrapping_add(value_ns);
        self.min = self.min.min(value_ns);
        self.max = self.max.max(value_ns);
    }

    /// Counts one value in its bucket only. For timed loops, which keep the count, sum, min and
    /// max of their pass in registers and add them once with [`Histogram::add_totals`]: the
    /// histogram's fields would otherwise be reloaded and stored at every operation (the
    /// compiler cannot keep them in registers across the bucket store).
    #[inline(always)]
    pub fn count_in_bucket(&mut self, value_ns: u64) {
        self.counts[bucket_index(value_ns)] += 1;
    }

    /// Counts `n` values in the bucket that holds `value_ns`, as [`Histogram::count_in_bucket`]
    /// does one: with the (lowest value, count) pairs of [`Histogram::bins`] and
    /// [`Histogram::add_totals`], another process's histogram is rebuilt exactly.
    pub fn count_many_in_bucket(&mut self, value_ns: u64, n: u64) {
        self.counts[bucket_index(value_ns)] += n;
    }

    /// Adds the totals of values counted with [`Histogram::count_in_bucket`].
    pub fn add_totals(&mut self, count: u64, sum_ns: u64, min_ns: u64, max_ns: u64) {
        if count == 0 {
            return;
        }
        self.count += count;
        self.sum = self.sum.wrapping_add(sum_ns);
        self.min = self.min.min(min_ns);
        self.max = self.max.max(max_ns);
    }

    /// Adds every count of `other` into `self`.
    pub fn merge(&mut self, other: &Histogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts.iter()) {
            *mine += *theirs;
        }
        self.count += other.count;
        self.sum = self.sum.wrapping_add(other.sum);
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// Empties the histogram without freeing its counters.
    pub fn clear(&mut self) {
        self.counts.fill(0);
        self.count = 0;
        self.sum = 0;
        self.min = u64::MAX;
        self.max = 0;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Smallest recorded value (exact), or `None` when empty.
    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    /// Largest recorded value (exact), or `None` when empty.
    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// Arithmetic mean of the recorded values (exact), or `None` when empty.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// The value below or at which `percentile` % of the samples fall (nearest-rank
    /// definition), within the histogram's 1/256 relative error; `None` when empty.
    pub fn percentile(&self, percentile: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((percentile.clamp(0.0, 100.0) / 100.0) * self.count as f64).ceil() as u64;
        let rank = rank.clamp(1, self.count);
        let mut seen = 0u64;
        for (index, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let (low, width) = bucket_range(index);
                let mid = low + width / 2;
                return Some(mid.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// Non-empty buckets as (lowest value in the bucket, count), for exports that keep the
    /// full distribution.
    pub fn bins(&self) -> Vec<(u64, u64)> {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (bucket_range(i).0, n))
            .collect()
    }

    /// The percentiles reports show, in one named struct.
    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            count: self.count,
            min_ns: self.min().unwrap_or(0),
            mean_ns: self.mean().unwrap_or(0.0),
            p50_ns: self.percentile(50.0).unwrap_or(0),
            p90_ns: self.percentile(90.0).unwrap_or(0),
            p99_ns: self.percentile(99.0).unwrap_or(0),
            p99_9_ns: self.percentile(99.9).unwrap_or(0),
            max_ns: self.max().unwrap_or(0),
        }
    }
}

/// Per-operation latency figures, in nanoseconds. Percentiles carry the histogram's 0.4 % error;
/// `min_ns`, `max_ns` and `mean_ns` are exact.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Number of operations measured.
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p99_9_ns: u64,
    pub max_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_is_in_range_and_monotonic() {
        assert_eq!(bucket_index(u64::MAX), BUCKETS - 1);
        let mut values: Vec<u64> = (0..64)
            .flat_map(|shift| {
                let p = 1u64 << shift;
                [p - 1, p, p + 1, p + p / 2, p + (p - 1)]
            })
            .collect();
        values.sort_unstable();
        let mut last = 0;
        for v in values {
            let i = bucket_index(v);
            let (low, width) = bucket_range(i);
            assert!(
                low <= v && v - low < width,
                "value {v} bucket {i} [{low}, +{width})"
            );
            assert!(i >= last, "index fell at value {v}");
            last = i;
        }
    }

    #[test]
    fn small_values_are_exact() {
        let mut h = Histogram::new();
        for v in 0..128 {
            h.record(v);
        }
        assert_eq!(h.percentile(50.0), Some(63));
        assert_eq!(h.percentile(100.0), Some(127));
        assert_eq!(h.min(), Some(0));
    }

    #[test]
    fn percentiles_are_within_the_documented_error() {
        let mut h = Histogram::new();
        // 1..=100_000 ns uniformly: the true p-th percentile is p * 1000.
        for v in 1..=100_000u64 {
            h.record(v);
        }
        for p in [1.0, 10.0, 50.0, 90.0, 99.0, 99.9] {
            let truth = p * 1000.0;
            let got = h.percentile(p).unwrap() as f64;
            assert!(
                (got - truth).abs() / truth <= 1.0 / 256.0 + 1e-9,
                "p{p}: {got} vs {truth}"
            );
        }
        assert_eq!(h.max(), Some(100_000));
        assert_eq!(h.mean(), Some(50_000.5));
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = Histogram::new();
        let mut b = Histogram::new();
        let mut all = Histogram::new();
        for v in (0..50_000u64).map(|i| i * 37 % 9_973 + 1_000) {
            if v % 3 == 0 {
                a.record(v)
            } else {
                b.record(v)
            }
            all.record(v);
        }
        a.merge(&b);
        assert_eq!(a.summary(), all.summary());
        assert_eq!(a.bins(), all.bins());
    }

    #[test]
    fn empty_histogram_has_no_percentiles() {
        let h = Histogram::new();
        assert_eq!(h.percentile(50.0), None);
        assert_eq!(h.summary().count, 0);
    }
}
