//! The analysis layer: small pure functions over stored samples. No I/O, no printing.
//!
//! Brief overview:
//! - [`Summary::of`]: mean, sample standard deviation and the 95 % confidence interval of the
//!   mean (Student's t), with the invariants stated and checked.
//! - [`t_quantile_975`]: the two-sided 95 % critical value of Student's t.

use serde::Serialize;

/// Two-sided 95 % critical values of Student's t for 1..=30 degrees of freedom (the 0.975
/// quantile), from the standard table (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2).
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The 0.975 quantile of Student's t with `df` degrees of freedom (df >= 1). Exact table values
/// up to 30; beyond, the values for 40, 60 and 120 and the normal limit (1.960), interpolated in
/// 1/df, which is accurate to the third decimal.
pub fn t_quantile_975(df: u64) -> f64 {
    assert!(df >= 1, "Student's t needs at least one degree of freedom");
    if df <= 30 {
        return T_975[df as usize - 1];
    }
    let points = [
        (30.0, 2.042),
        (40.0, 2.021),
        (60.0, 2.000),
        (120.0, 1.980),
        (f64::INFINITY, 1.960),
    ];
    let x = 1.0 / df as f64;
    for pair in points.windows(2) {
        let (d0, t0) = pair[0];
        let (d1, t1) = pair[1];
        let (x0, x1) = (1.0 / d0, if d1.is_infinite() { 0.0 } else { 1.0 / d1 });
        if x <= x0 && x >= x1 {
            return t1 + (t0 - t1) * (x - x1) / (x0 - x1);
        }
    }
    1.960
}

/// Mean and spread of a set of repetitions of one metric.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub n: u64,
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 for one value.
    pub stddev: f64,
    /// Half-width of the 95 % confidence interval of the mean (t * s / sqrt(n)); None for n < 2,
    /// where no interval can be given.
    pub ci95_half_width: Option<f64>,
    pub min: f64,
    pub max: f64,
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
        let stddev = if values.len() > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        let ci95_half_width =
            (values.len() > 1).then(|| t_quantile_975(values.len() as u64 - 1) * stddev / n.sqrt());
        Some(Summary {
            n: values.len() as u64,
            mean,
            stddev,
            ci95_half_width,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
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

    #[test]
    fn t_values_match_the_table_and_approach_the_normal() {
        assert_eq!(t_quantile_975(1), 12.706);
        assert_eq!(t_quantile_975(2), 4.303);
        assert_eq!(t_quantile_975(30), 2.042);
        assert!((t_quantile_975(40) - 2.021).abs() < 1e-9);
        assert!((t_quantile_975(60) - 2.000).abs() < 1e-9);
        assert!((t_quantile_975(1000) - 1.962).abs() < 0.002);
        let mut last = f64::INFINITY;
        for df in 1..500 {
            let t = t_quantile_975(df);
            assert!(t <= last && t > 1.959, "df {df}: {t}");
            last = t;
        }
    }

    #[test]
    fn summary_of_known_values() {
        // 10, 12, 14: mean 12, s = 2, half-width = 4.303 * 2 / sqrt(3).
        let s = Summary::of(&[10.0, 12.0, 14.0]).unwrap();
        assert_eq!(
            (s.n, s.mean, s.stddev, s.min, s.max),
            (3, 12.0, 2.0, 10.0, 14.0)
        );
        let expected = 4.303 * 2.0 / 3f64.sqrt();
        assert!((s.ci95_half_width.unwrap() - expected).abs() < 1e-12);
        assert!((s.relative_ci().unwrap() - expected / 12.0).abs() < 1e-12);
        assert!(s.is_stable(0.5) && !s.is_stable(0.1));
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
}
