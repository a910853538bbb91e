//! Whether two configurations differ, and by how much: the ratio B / A with its 95 % interval.
//!
//! Repetitions of a campaign are interleaved (A B C A B C ...), so the samples of one round
//! share the machine's state at that time. **Paired by round**: the per-round log ratios
//! d_i = ln(b_i / a_i) remove what the round added to both; their mean and Student's t give the
//! ratio exp(mean d) and its interval exp(mean d ± t · s_d / √n). **Unpaired** (different runs,
//! or rounds missing): Welch's t on ln a and ln b, the ratio of geometric means with the
//! Welch–Satterthwaite degrees of freedom. Either way a ratio whose interval holds 1 is a tie.

use crate::{t_quantile, t_two_sided_p};
use serde::Serialize;

/// What a comparison says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// B is larger than A beyond the interval.
    Higher,
    /// B is smaller than A beyond the interval.
    Lower,
    /// The interval holds 1: no difference can be claimed.
    Tie,
    /// Too few values for an interval (fewer than 2 per side, or 2 pairs).
    Unknown,
}

/// The ratio B / A of two configurations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Comparison {
    pub ratio: f64,
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
    /// Two-sided p-value of "no difference".
    pub p: Option<f64>,
    /// Pairs (paired) or the smaller side's count (unpaired).
    pub n: usize,
    pub paired: bool,
    pub verdict: Verdict,
}

fn verdict(low: Option<f64>, high: Option<f64>) -> Verdict {
    match (low, high) {
        (Some(lo), _) if lo > 1.0 => Verdict::Higher,
        (_, Some(hi)) if hi < 1.0 => Verdict::Lower,
        (Some(_), Some(_)) => Verdict::Tie,
        _ => Verdict::Unknown,
    }
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let sd = if v.len() > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (mean, sd)
}

/// B / A from values measured in the same rounds: `pairs` are (a_i, b_i), all positive. None
/// without pairs or with a value that is not positive.
pub fn paired(pairs: &[(f64, f64)]) -> Option<Comparison> {
    if pairs.is_empty()
        || pairs
            .iter()
            .any(|(a, b)| a.is_nan() || b.is_nan() || *a <= 0.0 || *b <= 0.0)
    {
        return None;
    }
    let d: Vec<f64> = pairs.iter().map(|(a, b)| (b / a).ln()).collect();
    let (mean, sd) = mean_sd(&d);
    let n = d.len();
    let (low, high, p) = if n >= 2 {
        let se = sd / (n as f64).sqrt();
        let df = (n - 1) as f64;
        let half = t_quantile(0.975, df) * se;
        let p = if se == 0.0 {
            if mean == 0.0 {
                1.0
            } else {
                0.0
            }
        } else {
            t_two_sided_p(mean / se, df)
        };
        (
            Some((mean - half).exp()),
            Some((mean + half).exp()),
            Some(p),
        )
    } else {
        (None, None, None)
    };
    Some(Comparison {
        ratio: mean.exp(),
        ci95_low: low,
        ci95_high: high,
        p,
        n,
        paired: true,
        verdict: verdict(low, high),
    })
}

/// B / A from independent samples (Welch's t on the logs). None when a side is empty or holds
/// a value that is not positive.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Comparison> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| v.is_nan() || *v <= 0.0) {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|v| v.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|v| v.ln()).collect();
    let (ma, sa) = mean_sd(&la);
    let (mb, sb) = mean_sd(&lb);
    let diff = mb - ma;
    let (na, nb) = (la.len() as f64, lb.len() as f64);
    let (low, high, p) = if la.len() >= 2 && lb.len() >= 2 {
        let (va, vb) = (sa * sa / na, sb * sb / nb);
        let se = (va + vb).sqrt();
        if se == 0.0 {
            let p = if diff == 0.0 { 1.0 } else { 0.0 };
            (Some(diff.exp()), Some(diff.exp()), Some(p))
        } else {
            // Welch–Satterthwaite.
            let df = (va + vb).powi(2) / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
            let half = t_quantile(0.975, df) * se;
            (
                Some((diff - half).exp()),
                Some((diff + half).exp()),
                Some(t_two_sided_p(diff / se, df)),
            )
        }
    } else {
        (None, None, None)
    };
    Some(Comparison {
        ratio: diff.exp(),
        ci95_low: low,
        ci95_high: high,
        p,
        n: la.len().min(lb.len()),
        paired: false,
        verdict: verdict(low, high),
    })
}

/// Welch's t-test on the values themselves (not their logs): t, degrees of freedom and the
/// two-sided p-value; None with fewer than 2 values on a side or no spread at all.
pub fn welch_t_test(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64)> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, sa) = mean_sd(a);
    let (mb, sb) = mean_sd(b);
    let (va, vb) = (sa * sa / a.len() as f64, sb * sb / b.len() as f64);
    if va + vb == 0.0 {
        return None;
    }
    let t = (mb - ma) / (va + vb).sqrt();
    let df =
        (va + vb).powi(2) / (va * va / (a.len() as f64 - 1.0) + vb * vb / (b.len() as f64 - 1.0));
    Some((t, df, t_two_sided_p(t, df)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic campaign: B is truly 5 % faster than A, and each round the machine drifts
    /// by up to ±30 % for both. Paired by round, the ratio comes back as 1.05 with a narrow
    /// interval; unpaired, the drift swamps it.
    #[test]
    fn pairing_by_round_recovers_the_true_ratio_under_drift() {
        let drift = [1.0, 0.7, 1.3, 0.85, 1.2, 0.95, 1.1, 0.75];
        // A little noise of its own per sample, deterministic.
        let noise = [1.004, 0.997, 1.002, 0.999, 1.003, 0.996, 1.001, 0.998];
        let a: Vec<f64> = drift
            .iter()
            .zip(noise)
            .map(|(d, e)| 100.0 * d * e)
            .collect();
        let b: Vec<f64> = drift
            .iter()
            .zip(noise.iter().rev())
            .map(|(d, e)| 105.0 * d * e)
            .collect();
        let pairs: Vec<(f64, f64)> = a.iter().copied().zip(b.iter().copied()).collect();
        let p = paired(&pairs).unwrap();
        assert!((p.ratio - 1.05).abs() < 0.005, "{p:?}");
        assert_eq!(p.verdict, Verdict::Higher, "{p:?}");
        let (lo, hi) = (p.ci95_low.unwrap(), p.ci95_high.unwrap());
        assert!(lo < 1.05 && 1.05 < hi && hi - lo < 0.02, "{p:?}");
        let u = welch(&a, &b).unwrap();
        assert_eq!(u.verdict, Verdict::Tie, "{u:?}");
        assert!(u.ci95_high.unwrap() - u.ci95_low.unwrap() > 10.0 * (hi - lo));
    }

    /// Welch's test against a published example (Wikipedia, "Welch's t-test", example 1:
    /// t = 2.46, df = 24.99, p = 0.021).
    #[test]
    fn welch_matches_r() {
        let a = [
            27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7,
            21.4,
        ];
        let b = [
            27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5,
            24.4,
        ];
        let (t, df, p) = welch_t_test(&a, &b).unwrap();
        assert!((t - 2.46).abs() < 0.01, "t {t}");
        assert!((df - 24.99).abs() < 0.05, "df {df}");
        assert!((p - 0.021).abs() < 0.001, "p {p}");
    }

    #[test]
    fn equal_configurations_tie_and_too_few_values_say_so() {
        let same = paired(&[(10.0, 10.1), (10.0, 9.9), (10.0, 10.05)]).unwrap();
        assert_eq!(same.verdict, Verdict::Tie);
        assert_eq!(paired(&[(1.0, 2.0)]).unwrap().verdict, Verdict::Unknown);
        assert!(paired(&[(0.0, 2.0)]).is_none());
        assert_eq!(
            welch(&[1.0], &[2.0, 3.0]).unwrap().verdict,
            Verdict::Unknown
        );
    }
}
