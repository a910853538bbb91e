//! One metric's repetitions summarised: mean, median, spread, the 95 % confidence interval of
//! the mean and outlier flags. The interval is Student's t unless the sample is skewed or has
//! outliers (and has at least 5 values), where the normal assumption behind t fails: then a
//! seeded percentile bootstrap (docs/metrics.md, "Intervals").

use crate::{t_quantile_975, SplitMix64};
use serde::Serialize;

/// How a confidence interval was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IntervalMethod {
    /// mean ± t(0.975, n-1) · s / √n.
    StudentT,
    /// The 2.5th and 97.5th percentiles of 2,000 resampled means (fixed seed).
    Bootstrap,
}

/// Mean and spread of a set of repetitions of one metric.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub n: u64,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (n - 1); 0 for one value.
    pub stddev: f64,
    /// Half-width of the 95 % confidence interval of the mean; None for n < 2, where no
    /// interval can be given. For a bootstrap interval (not symmetric), the larger side.
    pub ci95_half_width: Option<f64>,
    /// The interval's ends (mean ± half-width for t; the percentiles for the bootstrap).
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
    pub interval: Option<IntervalMethod>,
    pub min: f64,
    pub max: f64,
    /// Values outside Tukey's fences (below Q1 - 1.5 IQR or above Q3 + 1.5 IQR), n >= 4.
    pub outliers: u64,
}

/// The `q` quantile (0..=1) of sorted values, linearly interpolated (type 7, as R and NumPy).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Indices of the values outside Tukey's fences (none for fewer than 4 values).
pub fn outliers(values: &[f64]) -> Vec<usize> {
    if values.len() < 4 {
        return Vec::new();
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (q1, q3) = (quantile(&sorted, 0.25), quantile(&sorted, 0.75));
    let fence = 1.5 * (q3 - q1);
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| **v < q1 - fence || **v > q3 + fence)
        .map(|(i, _)| i)
        .collect()
}

/// The sample skewness (adjusted Fisher-Pearson, as spreadsheets compute it); 0 below 3 values.
pub fn skewness(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    if values.len() < 3 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / n;
    let m2 = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let m3 = values.iter().map(|v| (v - mean).powi(3)).sum::<f64>() / n;
    if m2 == 0.0 {
        return 0.0;
    }
    (n * (n - 1.0)).sqrt() / (n - 2.0) * m3 / m2.powf(1.5)
}

/// The percentile-bootstrap 95 % interval of the mean: 2,000 resamples drawn with a fixed seed
/// (SplitMix64), so the same values always give the same interval.
pub fn bootstrap_mean_ci(values: &[f64]) -> (f64, f64) {
    const RESAMPLES: usize = 2000;
    let n = values.len();
    let mut rng = SplitMix64::new(0x005E_ED0F_B007);
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| (0..n).map(|_| values[rng.below(n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    (quantile(&means, 0.025), quantile(&means, 0.975))
}

impl Summary {
    /// Summarises finite values; None for an empty set. Non-finite values are a caller bug.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() {
            return None;
        }
        assert!(values.iter().all(|v| v.is_finite()), "non-finite sample");
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let stddev = if values.len() > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        let outliers = outliers(values).len() as u64;
        let (interval, low, high) = if values.len() < 2 {
            (None, None, None)
        } else if values.len() >= 5 && (outliers > 0 || skewness(values).abs() > 1.0) {
            let (lo, hi) = bootstrap_mean_ci(values);
            (Some(IntervalMethod::Bootstrap), Some(lo), Some(hi))
        } else {
            let half = t_quantile_975(values.len() as u64 - 1) * stddev / n.sqrt();
            (
                Some(IntervalMethod::StudentT),
                Some(mean - half),
                Some(mean + half),
            )
        };
        let ci95_half_width = low
            .zip(high)
            .map(|(lo, hi)| (mean - lo).max(hi - mean).max(0.0));
        Some(Summary {
            n: values.len() as u64,
            mean,
            median: quantile(&sorted, 0.5),
            stddev,
            ci95_half_width,
            ci95_low: low,
            ci95_high: high,
            interval,
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            outliers,
        })
    }

    /// The coefficient of variation (s / |mean|); None for a zero mean.
    pub fn cv(&self) -> Option<f64> {
        (self.mean != 0.0).then(|| self.stddev / self.mean.abs())
    }

    /// The confidence half-width relative to the mean (0.05 = ±5 %), None without an interval.
    pub fn relative_ci(&self) -> Option<f64> {
        let half = self.ci95_half_width?;
        if self.mean == 0.0 {
            return Some(if half == 0.0 { 0.0 } else { f64::INFINITY });
        }
        Some(half / self.mean.abs())
    }

    /// True when the interval is at least as narrow as `target` (relative), so more repetitions
    /// are not needed.
    pub fn is_stable(&self, target: f64) -> bool {
        self.relative_ci().is_some_and(|r| r <= target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn summary_of_known_values() {
        // 10, 12, 14: mean 12, s = 2, half-width = t(0.975, 2) * 2 / sqrt(3) = 4.303 * 1.1547.
        let s = Summary::of(&[10.0, 12.0, 14.0]).unwrap();
        assert_eq!(
            (s.n, s.mean, s.median, s.stddev, s.min, s.max),
            (3, 12.0, 12.0, 2.0, 10.0, 14.0)
        );
        let expected = 4.302_652_7 * 2.0 / 3f64.sqrt();
        assert!((s.ci95_half_width.unwrap() - expected).abs() < 1e-6);
        assert_eq!(s.interval, Some(IntervalMethod::StudentT));
        assert!((s.cv().unwrap() - 2.0 / 12.0).abs() < 1e-12);
        assert!(s.is_stable(0.5) && !s.is_stable(0.1));
    }

    /// Textbook: Montgomery & Runger, the 10 impact-energy measurements (mean 64.46, s =
    /// 0.227, 95 % t interval 64.30..64.62).
    #[test]
    fn a_textbook_interval() {
        let v = [64.1, 64.7, 64.5, 64.6, 64.5, 64.3, 64.6, 64.8, 64.2, 64.3];
        let s = Summary::of(&v).unwrap();
        assert!((s.mean - 64.46).abs() < 1e-9);
        assert!((s.stddev - 0.227).abs() < 0.001);
        assert!((s.ci95_low.unwrap() - 64.30).abs() < 0.005, "{s:?}");
        assert!((s.ci95_high.unwrap() - 64.62).abs() < 0.005, "{s:?}");
    }

    #[test]
    fn one_value_has_no_interval_and_none_has_no_summary() {
        let s = Summary::of(&[5.0]).unwrap();
        assert_eq!(s.ci95_half_width, None);
        assert!(!s.is_stable(1.0));
        assert!(Summary::of(&[]).is_none());
        let same = Summary::of(&[3.0, 3.0, 3.0]).unwrap();
        assert_eq!(same.ci95_half_width, Some(0.0));
        assert!(same.is_stable(0.0));
    }

    #[test]
    fn an_outlier_is_flagged_and_switches_to_the_bootstrap() {
        let v = [10.0, 10.2, 9.9, 10.1, 10.0, 30.0];
        assert_eq!(outliers(&v), vec![5]);
        let s = Summary::of(&v).unwrap();
        assert_eq!(s.outliers, 1);
        assert_eq!(s.interval, Some(IntervalMethod::Bootstrap));
        let (lo, hi) = (s.ci95_low.unwrap(), s.ci95_high.unwrap());
        assert!(
            lo < s.mean && s.mean < hi && lo >= 9.9 && hi <= 30.0,
            "{s:?}"
        );
        // The same values give the same interval.
        assert_eq!(Summary::of(&v).unwrap(), s);
    }

    #[test]
    fn quantiles_interpolate_as_r_type_7() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert_eq!(quantile(&v, 0.25), 1.75);
        assert_eq!(quantile(&v, 1.0), 4.0);
    }

    proptest! {
        #[test]
        fn the_interval_holds_the_mean_and_the_median_lies_between_min_and_max(
            values in proptest::collection::vec(-1e6f64..1e6, 1..40)
        ) {
            let s = Summary::of(&values).unwrap();
            prop_assert!(s.min <= s.median && s.median <= s.max);
            prop_assert!(s.min <= s.mean + 1e-6 && s.mean <= s.max + 1e-6);
            if let (Some(lo), Some(hi)) = (s.ci95_low, s.ci95_high) {
                prop_assert!(lo <= s.mean + 1e-6 && s.mean <= hi + 1e-6);
            }
        }
    }
}
