//! The analysis layer: small pure functions over stored samples. No I/O, no printing. Every
//! method is documented with its source in docs/metrics.md.
//!
//! Brief overview:
//! - [`summary`]: mean, median, standard deviation, CV, the 95 % confidence interval of the
//!   mean (Student's t; a percentile bootstrap where the sample is skewed or has outliers), and
//!   outlier flags (Tukey's fences).
//! - [`compare`]: the ratio of two configurations with its 95 % interval and significance —
//!   paired by round where repetitions were interleaved (per-round log ratios, Student's t),
//!   Welch's t on log values where they were not; a difference that is not significant is a tie.
//! - [`rank`]: placements and points per discipline (ties share points, as study 003 scored),
//!   weighted totals, a geometric-mean composite normalised to a baseline, and the overall
//!   ranks' 95 % intervals (a bootstrap over rounds, paired as the comparisons are).
//! - [`steady`]: whether a phase's per-interval rate settled (last third against middle
//!   third, beyond its noise) and how long it warmed up.
//! - [`t_quantile_975`]: the two-sided 95 % critical value of Student's t (statrs).

pub mod compare;
pub mod rank;
pub mod steady;
pub mod summary;

pub use compare::{paired, welch, Comparison, Verdict};
pub use summary::Summary;

use statrs::distribution::{ContinuousCDF, StudentsT};

/// SplitMix64 (Steele, Lea & Flood 2014): the seeded generator of every resampling here, so
/// the same values always give the same interval.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A whole number below `n` (> 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (df >= 1), from statrs's
/// inverse CDF.
pub fn t_quantile_975(df: u64) -> f64 {
    t_quantile(0.975, df as f64)
}

/// The `p` quantile of Student's t with `df` (> 0, not necessarily whole) degrees of freedom.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    assert!(df > 0.0, "Student's t needs positive degrees of freedom");
    StudentsT::new(0.0, 1.0, df)
        .expect("valid parameters")
        .inverse_cdf(p)
}

/// The two-sided p-value of a t statistic with `df` degrees of freedom.
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    let dist = StudentsT::new(0.0, 1.0, df).expect("valid parameters");
    (2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_values_match_the_printed_table() {
        // NIST/SEMATECH e-Handbook, table 1.3.6.7.2 (0.975 column).
        for (df, t) in [
            (1, 12.706),
            (2, 4.303),
            (5, 2.571),
            (10, 2.228),
            (30, 2.042),
            (60, 2.000),
            (120, 1.980),
        ] {
            assert!((t_quantile_975(df) - t).abs() < 0.0015, "df {df}");
        }
        assert!((t_quantile_975(100_000) - 1.960).abs() < 0.001);
        let mut last = f64::INFINITY;
        for df in 1..200 {
            let t = t_quantile_975(df);
            assert!(t < last && t > 1.959, "df {df}: {t}");
            last = t;
        }
    }

    #[test]
    fn p_values_of_known_t() {
        // t = 2.228 with 10 df is the 0.975 quantile: p = 0.05.
        assert!((t_two_sided_p(2.228, 10.0) - 0.05).abs() < 0.001);
        assert!((t_two_sided_p(0.0, 5.0) - 1.0).abs() < 1e-12);
        assert_eq!(t_two_sided_p(f64::INFINITY, 5.0), 0.0);
    }
}
