//! Rankings as study 003 made them, with ties: in each discipline the configurations are
//! ordered best first; a configuration that does not differ significantly from the one placed
//! before it shares its place (a tie group), and a tie group shares the points of the places it
//! covers. With N configurations, place k is worth N - k + 1 points (the best gets N). Totals
//! add points over disciplines, each weighted by its category's weight. The composite is the
//! geometric mean over disciplines of each configuration's value relative to a baseline,
//! oriented so that above 1 is better.

use serde::Serialize;

/// One configuration's standing in one discipline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Placement {
    /// 1 = best; tied configurations share the best place of their group.
    pub place: usize,
    pub points: f64,
    pub tied: bool,
}

/// Places and points for `means` (one per configuration, None when not measured) where
/// `better(a, b)` says a is better than b, and `differs(i, j)` says configurations i and j
/// differ significantly. Unmeasured configurations get no placement.
pub fn placements(
    means: &[Option<f64>],
    better: impl Fn(f64, f64) -> bool,
    differs: impl Fn(usize, usize) -> bool,
) -> Vec<Option<Placement>> {
    let mut order: Vec<usize> = (0..means.len()).filter(|&i| means[i].is_some()).collect();
    order.sort_by(|&i, &j| {
        let (a, b) = (means[i].unwrap(), means[j].unwrap());
        if better(a, b) {
            std::cmp::Ordering::Less
        } else if better(b, a) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    let n = order.len();
    let mut out = vec![None; means.len()];
    let mut start = 0;
    while start < n {
        // A group: every next configuration that does not differ from the previous one.
        let mut end = start + 1;
        while end < n && !differs(order[end - 1], order[end]) {
            end += 1;
        }
        let places = (start + 1)..=end;
        let points = places.clone().map(|k| (n - k + 1) as f64).sum::<f64>() / (end - start) as f64;
        for &i in &order[start..end] {
            out[i] = Some(Placement {
                place: start + 1,
                points,
                tied: end - start > 1,
            });
        }
        start = end;
    }
    out
}

/// The geometric mean of positive values (None when empty or any is not positive).
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| v.is_nan() || *v <= 0.0) {
        return None;
    }
    Some((values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_share_the_points_of_their_places() {
        // Higher is better: 30 > 20 ~ 19 > 5; 20 and 19 do not differ.
        let means = [Some(20.0), Some(30.0), Some(5.0), Some(19.0), None];
        let p = placements(
            &means,
            |a, b| a > b,
            |i, j| !matches!((i.min(j), i.max(j)), (0, 3)),
        );
        let got: Vec<_> = p.iter().map(|p| p.map(|p| (p.place, p.points))).collect();
        // 4 measured: places 1..4 worth 4, 3, 2, 1; the tie at places 2-3 shares 2.5 each.
        assert_eq!(
            got,
            [
                Some((2, 2.5)),
                Some((1, 4.0)),
                Some((4, 1.0)),
                Some((2, 2.5)),
                None
            ]
        );
        assert!(p[0].unwrap().tied && !p[1].unwrap().tied);
        let total: f64 = p.iter().flatten().map(|p| p.points).sum();
        assert_eq!(total, 10.0, "points are conserved");
    }

    #[test]
    fn geometric_means() {
        assert!((geometric_mean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(geometric_mean(&[]), None);
        assert_eq!(geometric_mean(&[1.0, 0.0]), None);
    }
}
