//! Whether a phase's rate settled, from its per-interval rates: its last third against its
//! middle third (the first is the warm-up's), and how long it took to come near its settled
//! rate. The rules are in docs/metrics.md ("Steady state").

/// Fewer intervals than this say nothing of steadiness (two per third).
pub const MIN_INTERVALS: usize = 6;
/// A change of the last third against the middle third within this fraction is steady,
/// whatever the noise says (a long phase's standard error is tiny).
pub const STEADY_WITHIN: f64 = 0.05;
/// The warm-up ends where the rate (over three intervals) first comes within this fraction of
/// the rate over the last two thirds.
pub const WARMED_WITHIN: f64 = 0.10;

/// What a phase's rates say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Steadiness {
    /// The last third's mean rate is within the noise of the middle third's (or within
    /// [`STEADY_WITHIN`]); None with fewer than [`MIN_INTERVALS`] intervals.
    pub steady: Option<bool>,
    /// (last third − middle third) / middle third; None without a middle-third rate.
    pub change: Option<f64>,
    /// The index of the first interval after the warm-up (0: none); None with too few
    /// intervals, or a phase that did nothing.
    pub warmed_at: Option<usize>,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn variance(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = mean(v);
    v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64
}

/// Judges a phase by its intervals' rates, in order. Steady: |last − middle| is at most twice
/// the standard error of the difference of their means (about 95 %), or at most
/// [`STEADY_WITHIN`] of the middle's mean.
pub fn steadiness(rates: &[f64]) -> Steadiness {
    let n = rates.len();
    if n < MIN_INTERVALS {
        return Steadiness {
            steady: None,
            change: None,
            warmed_at: None,
        };
    }
    let (middle, last) = (&rates[n / 3..2 * n / 3], &rates[2 * n / 3..]);
    let (m2, m3) = (mean(middle), mean(last));
    let noise =
        2.0 * (variance(middle) / middle.len() as f64 + variance(last) / last.len() as f64).sqrt();
    let difference = (m3 - m2).abs();
    let steady = difference <= noise || difference <= STEADY_WITHIN * m2.abs();
    let change = (m2 != 0.0).then(|| (m3 - m2) / m2);
    let settled = mean(&rates[n / 3..]);
    let warmed_at = (settled > 0.0).then(|| {
        (0..n)
            .find(|&i| {
                let window = &rates[i..(i + 3).min(n)];
                (mean(window) - settled).abs() <= WARMED_WITHIN * settled
            })
            .unwrap_or(n)
    });
    Steadiness {
        steady: Some(steady),
        change,
        warmed_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_rate_is_steady_and_a_collapse_is_not() {
        let flat: Vec<f64> = (0..30).map(|i| 100.0 + (i % 3) as f64).collect();
        let s = steadiness(&flat);
        assert_eq!((s.steady, s.warmed_at), (Some(true), Some(0)));
        // Dirty limit reached two thirds in: the rate falls to a quarter.
        let stall: Vec<f64> = (0..30)
            .map(|i| if i < 20 { 2000.0 } else { 500.0 })
            .collect();
        let s = steadiness(&stall);
        assert_eq!(s.steady, Some(false));
        assert!((s.change.unwrap() + 0.75).abs() < 1e-9);
        // Noisy but level: within its noise.
        let noisy: Vec<f64> = (0..30)
            .map(|i| if i % 2 == 0 { 50.0 } else { 150.0 })
            .collect();
        assert_eq!(steadiness(&noisy).steady, Some(true));
        assert_eq!(steadiness(&[1.0; 5]).steady, None);
    }

    #[test]
    fn the_warm_up_ends_where_the_rate_comes_near_its_settled_rate() {
        let ramp: Vec<f64> = (0..30)
            .map(|i| if i < 6 { i as f64 * 10.0 } else { 100.0 })
            .collect();
        let s = steadiness(&ramp);
        assert_eq!(s.steady, Some(true));
        // Intervals 4..7 average (40 + 50 + 100) / 3 = 61.7; 5..8: 83.3; 6..9: 100.
        assert_eq!(s.warmed_at, Some(6));
        assert_eq!(steadiness(&[0.0; 10]).warmed_at, None);
    }
}
