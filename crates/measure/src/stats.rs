//! Running statistics over a stream of values (Welford's method): count, mean, spread.
//!
//! Used for per-pass rates: a cell measured in N passes reports the mean and the spread of the
//! N per-pass rates, so a reader can tell a steady figure from a noisy one.

use serde::Serialize;

/// Accumulates values one at a time in O(1) memory; numerically stable (Welford 1962,
/// Knuth TAOCP vol. 2, 4.2.2).
#[derive(Debug, Clone, Copy, Default)]
pub struct RunningStats {
    n: u64,
    mean: f64,
    m2: f64,
    min: f64,
    max: f64,
}

impl RunningStats {
    pub fn new() -> RunningStats {
        RunningStats::default()
    }

    pub fn push(&mut self, x: f64) {
        self.n += 1;
        if self.n == 1 {
            self.min = x;
            self.max = x;
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// The summary of everything pushed so far.
    pub fn spread(&self) -> Spread {
        let stddev = if self.n > 1 {
            (self.m2 / (self.n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let cv = if self.mean != 0.0 {
            stddev / self.mean.abs()
        } else {
            0.0
        };
        Spread {
            n: self.n,
            mean: self.mean,
            stddev,
            cv,
            min: self.min,
            max: self.max,
        }
    }
}

/// Mean and spread of `n` values. `stddev` is the sample standard deviation (n - 1), 0 for a
/// single value; `cv` is stddev / mean (coefficient of variation, 0.05 = 5 %).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Spread {
    pub n: u64,
    pub mean: f64,
    pub stddev: f64,
    pub cv: f64,
    pub min: f64,
    pub max: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_textbook_formulas() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let mut s = RunningStats::new();
        xs.iter().for_each(|&x| s.push(x));
        let sp = s.spread();
        assert_eq!(sp.n, 8);
        assert!((sp.mean - 5.0).abs() < 1e-12);
        // Sample variance = 32 / 7.
        assert!((sp.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!((sp.min, sp.max), (2.0, 9.0));
        assert!((sp.cv - sp.stddev / 5.0).abs() < 1e-12);
    }

    #[test]
    fn single_value_has_no_spread() {
        let mut s = RunningStats::new();
        s.push(42.0);
        let sp = s.spread();
        assert_eq!(
            (sp.n, sp.stddev, sp.cv, sp.min, sp.max),
            (1, 0.0, 0.0, 42.0, 42.0)
        );
    }
}
