//! Rankings as study 003 made them, with ties: in each discipline the configurations are
//! ordered best first; a configuration that does not differ significantly from the one placed
//! before it shares its place (a tie group), and a tie group shares the points of the places it
//! covers. With N configurations, place k is worth N - k + 1 points (the best gets N). Totals
//! add points over disciplines, each weighted by its category's weight. The composite is the
//! geometric mean over disciplines of each configuration's value relative to a baseline,
//! oriented so that above 1 is better.
//!
//! An overall order is only as sure as the data: [`rank_intervals`] gives each configuration
//! the 95 % interval of its overall rank, from a bootstrap over rounds paired as the
//! per-discipline comparisons are (every configuration keeps the rounds drawn), its spread
//! widened to Student's t for the rounds there were (docs/reports.md, "Rank intervals").

use crate::{t_quantile, SplitMix64};
use serde::Serialize;
use std::collections::BTreeMap;

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

/// Each of `n` configurations' overall score from every discipline's points (the category it
/// scores in, and each configuration's points; None where it was not placed): the sum over
/// categories of the category's weight × the configuration's mean points per discipline of the
/// category it was placed in.
pub fn overall_scores(points: &[(usize, Vec<Option<f64>>)], weights: &[f64], n: usize) -> Vec<f64> {
    let mut sum = vec![vec![0.0; weights.len()]; n];
    let mut placed = vec![vec![0usize; weights.len()]; n];
    for (category, points) in points {
        for (i, p) in points.iter().enumerate() {
            if let Some(p) = p {
                sum[i][*category] += p;
                placed[i][*category] += 1;
            }
        }
    }
    (0..n)
        .map(|i| {
            (0..weights.len())
                .filter(|&c| placed[i][c] > 0)
                .map(|c| weights[c] * sum[i][c] / placed[i][c] as f64)
                .sum()
        })
        .collect()
}

/// A round of a run: (run id, repetition). What was measured in one round shared the machine's
/// state then; a resample draws whole rounds, so every configuration keeps its pairing.
pub type Round = (i64, u32);

/// One discipline as the overall ranking scores it.
#[derive(Debug, Clone, Default)]
pub struct Contest {
    /// Per configuration its values, each with the round it was measured in; None where the
    /// configuration was not placed.
    pub values: Vec<Option<Vec<(Round, f64)>>>,
    pub higher_is_better: bool,
    /// The category it scores in (an index into the weights).
    pub category: usize,
}

/// A configuration's overall rank with its 95 % interval: `best..=worst` (1 = first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RankInterval {
    pub best: usize,
    pub worst: usize,
}

impl RankInterval {
    /// "3" or "1–2".
    pub fn text(&self) -> String {
        if self.best == self.worst {
            self.best.to_string()
        } else {
            format!("{}–{}", self.best, self.worst)
        }
    }
}

/// What the overall ranking can claim.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankIntervals {
    /// Per configuration (in the order given).
    pub ranks: Vec<RankInterval>,
    /// (a, b): a is ahead of b overall — in at least 97.5 % of the resamples, and both had at
    /// least 2 values in every discipline they were placed in. The only order claimed.
    pub ahead: Vec<(usize, usize)>,
    pub resamples: usize,
}

/// Resamples of the rank bootstrap.
pub const RESAMPLES: usize = 2000;

/// z(0.975): what a percentile bootstrap's 95 % interval is wide, in standard errors.
const Z_975: f64 = 1.959_963_985;

/// One configuration in one contest, ready to resample.
struct Cell {
    /// The value ranked (the mean, or the log of the mean when every value of the contest is
    /// positive).
    centre: f64,
    /// The mean of the values as they are resampled (logs or values).
    own: f64,
    /// Student's t over the bootstrap's normal spread for this many values (0 for one value).
    widen: f64,
    run: i64,
    /// Its value (log or not) in each of its run's rounds, by the round's index.
    by_round: Vec<Option<f64>>,
}

/// The 95 % interval of each of `n` configurations' overall rank, and the order that can be
/// claimed. Each resample draws every run's rounds with replacement (the same draw for every
/// configuration: paired), takes each configuration's mean over the rounds drawn, places the
/// configurations by those means in every contest (equal means share), scores them as
/// [`overall_scores`] does and ranks them. The resampled means are spread around the measured
/// one by t(0.975, k − 1) / z(0.975) · √(k / (k − 1)) for k values: a percentile bootstrap of
/// a few rounds is too narrow by about that much, and with it one contest between two
/// configurations claims what the paired t-test claims. a is ahead of b when it scores more in
/// at least 97.5 % of the resamples; a configuration's interval runs from 1 + the number ahead
/// of it to n − the number it is ahead of.
pub fn rank_intervals(contests: &[Contest], weights: &[f64], n: usize) -> RankIntervals {
    let mut rounds: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
    for values in contests.iter().flat_map(|c| c.values.iter().flatten()) {
        for ((run, repetition), _) in values {
            let list = rounds.entry(*run).or_default();
            if !list.contains(repetition) {
                list.push(*repetition);
            }
        }
    }
    for list in rounds.values_mut() {
        list.sort_unstable();
    }
    let mut enough = vec![true; n];
    let cells: Vec<Vec<Option<Cell>>> = contests
        .iter()
        .map(|contest| {
            let logs = contest
                .values
                .iter()
                .flatten()
                .flatten()
                .all(|(_, v)| *v > 0.0);
            contest
                .values
                .iter()
                .enumerate()
                .map(|(i, values)| {
                    let values = values.as_ref().filter(|v| !v.is_empty())?;
                    let k = values.len();
                    let mean = values.iter().map(|(_, v)| v).sum::<f64>() / k as f64;
                    let form = |v: f64| if logs { v.ln() } else { v };
                    let run = values[0].0 .0;
                    let list = &rounds[&run];
                    let mut by_round = vec![None; list.len()];
                    for ((_, repetition), v) in values {
                        let at = list.binary_search(repetition).expect("a round of its run");
                        by_round[at] = Some(form(*v));
                    }
                    enough[i] &= k >= 2;
                    Some(Cell {
                        centre: form(mean),
                        own: values.iter().map(|(_, v)| form(*v)).sum::<f64>() / k as f64,
                        widen: if k >= 2 {
                            let k = k as f64;
                            t_quantile(0.975, k - 1.0) / Z_975 * (k / (k - 1.0)).sqrt()
                        } else {
                            0.0
                        },
                        run,
                        by_round,
                    })
                })
                .collect()
        })
        .collect();
    let mut rng = SplitMix64::new(0x0052_414E_4B53);
    let mut wins = vec![vec![0usize; n]; n];
    let mut drawn: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for _ in 0..RESAMPLES {
        for (run, list) in &rounds {
            let draw = drawn.entry(*run).or_default();
            draw.clear();
            draw.extend((0..list.len()).map(|_| rng.below(list.len())));
        }
        let points: Vec<(usize, Vec<Option<f64>>)> = contests
            .iter()
            .zip(&cells)
            .map(|(contest, cells)| {
                let values: Vec<Option<f64>> = cells
                    .iter()
                    .map(|cell| {
                        let cell = cell.as_ref()?;
                        let (sum, count) = drawn[&cell.run]
                            .iter()
                            .filter_map(|&r| cell.by_round[r])
                            .fold((0.0, 0usize), |(s, c), v| (s + v, c + 1));
                        let resampled = if count > 0 {
                            sum / count as f64
                        } else {
                            cell.own
                        };
                        Some(cell.centre + cell.widen * (resampled - cell.own))
                    })
                    .collect();
                let higher = contest.higher_is_better;
                let placed = placements(
                    &values,
                    |a, b| if higher { a > b } else { a < b },
                    |i, j| values[i] != values[j],
                );
                (
                    contest.category,
                    placed.iter().map(|p| p.map(|p| p.points)).collect(),
                )
            })
            .collect();
        let scores = overall_scores(&points, weights, n);
        for a in 0..n {
            for b in 0..n {
                if scores[a] > scores[b] {
                    wins[a][b] += 1;
                }
            }
        }
    }
    let needed = (RESAMPLES as f64 * 0.975).ceil() as usize;
    let mut ahead = Vec::new();
    for a in 0..n {
        for b in 0..n {
            if a != b && enough[a] && enough[b] && wins[a][b] >= needed {
                ahead.push((a, b));
            }
        }
    }
    let ranks = (0..n)
        .map(|i| RankInterval {
            best: 1 + ahead.iter().filter(|(_, b)| *b == i).count(),
            worst: n - ahead.iter().filter(|(a, _)| *a == i).count(),
        })
        .collect();
    RankIntervals {
        ranks,
        ahead,
        resamples: RESAMPLES,
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    /// Standard normal noise from the seeded generator (Box–Muller).
    pub(crate) fn normal(rng: &mut SplitMix64) -> f64 {
        let uniform =
            |rng: &mut SplitMix64| ((rng.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let (u1, u2) = (uniform(rng), uniform(rng));
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// A synthetic run: configurations with the true `means` (higher is better), each of
    /// `disciplines` measured in `rounds` interleaved rounds; every round drifts all of them
    /// alike (±20 %), every value has noise of its own (coefficient of variation `cv`).
    pub(crate) fn campaign(
        means: &[f64],
        rounds: u32,
        disciplines: usize,
        cv: f64,
        rng: &mut SplitMix64,
    ) -> Vec<Contest> {
        (0..disciplines)
            .map(|_| {
                let drift: Vec<f64> = (0..rounds).map(|_| 1.0 + 0.2 * normal(rng)).collect();
                Contest {
                    values: means
                        .iter()
                        .map(|m| {
                            Some(
                                (1..=rounds)
                                    .map(|r| {
                                        let v =
                                            m * drift[r as usize - 1] * (1.0 + cv * normal(rng));
                                        ((1, r), v.max(1e-9))
                                    })
                                    .collect(),
                            )
                        })
                        .collect(),
                    higher_is_better: true,
                    category: 0,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::*;
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

    /// The test: two configurations the data cannot tell apart share their rank
    /// interval; one clearly ahead has a rank of its own. Three disciplines of 5 rounds, each
    /// round drifting every configuration alike by up to ±20 %; A and B alike (their own noise
    /// of ±2 % puts either ahead in some rounds), C 30 % ahead.
    #[test]
    fn indistinguishable_configurations_overlap_and_different_ones_do_not() {
        let drift = [1.0, 0.8, 1.2, 0.9, 1.1];
        let noise = [1.02, 0.99, 1.01, 0.98, 1.0];
        let contests: Vec<Contest> = (0..3)
            .map(|d| {
                let config = |mean: f64, shift: usize| {
                    Some(
                        (0..5)
                            .map(|r| {
                                let e = noise[(r + d + shift) % 5];
                                ((1, r as u32 + 1), mean * drift[r] * e)
                            })
                            .collect(),
                    )
                };
                Contest {
                    values: vec![config(100.0, 0), config(100.0, 2), config(130.0, 4)],
                    higher_is_better: true,
                    category: 0,
                }
            })
            .collect();
        let r = rank_intervals(&contests, &[1.0], 3);
        let interval = |best, worst| RankInterval { best, worst };
        assert_eq!(
            r.ranks,
            [interval(2, 3), interval(2, 3), interval(1, 1)],
            "{r:?}"
        );
        assert_eq!(r.ahead, [(2, 0), (2, 1)]);
        assert_eq!(r.ranks[0].text(), "2–3");
        // The same values always give the same intervals.
        assert_eq!(rank_intervals(&contests, &[1.0], 3), r);
    }

    /// Lower is better flips the order; a configuration with one value per discipline is
    /// never claimed to be ahead or behind (nothing to judge its spread by).
    #[test]
    fn direction_counts_and_single_values_claim_nothing() {
        let mut rng = SplitMix64::new(3);
        let mut contests = campaign(&[100.0, 200.0], 5, 2, 0.02, &mut rng);
        for c in &mut contests {
            c.higher_is_better = false;
        }
        let r = rank_intervals(&contests, &[1.0], 2);
        assert_eq!(r.ahead, [(0, 1)], "{r:?}");
        for c in &mut contests {
            c.values[1].as_mut().unwrap().truncate(1);
        }
        let r = rank_intervals(&contests, &[1.0], 2);
        assert!(r.ahead.is_empty(), "{r:?}");
        assert_eq!(r.ranks[0], RankInterval { best: 1, worst: 2 });
    }

    /// A/A: the same plan run twice on the same machine — here 100 synthetic pairs of runs of
    /// 4 configurations that are truly alike. A claim ("a ahead of b") is then always false;
    /// two runs contradicting each other (a ahead of b in one, b ahead of a in the other) must
    /// not happen, and false claims stay near the 5 % a 95 % interval allows.
    #[test]
    fn runs_of_equal_configurations_rarely_claim_and_never_contradict() {
        let mut rng = SplitMix64::new(1);
        let (mut claims, mut pairs, mut contradictions) = (0, 0, 0);
        for _ in 0..100 {
            let first = rank_intervals(&campaign(&[100.0; 4], 5, 3, 0.05, &mut rng), &[1.0], 4);
            let second = rank_intervals(&campaign(&[100.0; 4], 5, 3, 0.05, &mut rng), &[1.0], 4);
            claims += first.ahead.len() + second.ahead.len();
            pairs += 2 * 4 * 3 / 2;
            contradictions += first
                .ahead
                .iter()
                .filter(|(a, b)| second.ahead.contains(&(*b, *a)))
                .count();
        }
        let rate = claims as f64 / pairs as f64;
        assert_eq!(contradictions, 0);
        assert!(
            rate <= 0.06,
            "{claims} false claims in {pairs} pairs: {rate}"
        );
    }

    /// One discipline between two configurations claims what the paired t-test on the same
    /// rounds claims (the widening makes the bootstrap as wide as t): the verdicts agree on
    /// nearly every one of 300 synthetic runs where B is 3 % ahead of A.
    #[test]
    fn one_discipline_claims_what_the_paired_t_test_claims() {
        let mut rng = SplitMix64::new(5);
        let (mut agree, runs) = (0, 300);
        for _ in 0..runs {
            let contests = campaign(&[100.0, 103.0], 5, 1, 0.03, &mut rng);
            let values = |i: usize| contests[0].values[i].clone().unwrap();
            let pairs: Vec<(f64, f64)> = values(0)
                .iter()
                .zip(values(1))
                .map(|((_, a), (_, b))| (*a, b))
                .collect();
            let t = crate::paired(&pairs).unwrap().verdict;
            let ahead = rank_intervals(&contests, &[1.0], 2).ahead;
            let claimed = match ahead.as_slice() {
                [(1, 0)] => crate::Verdict::Higher,
                [(0, 1)] => crate::Verdict::Lower,
                _ => crate::Verdict::Tie,
            };
            agree += usize::from(claimed == t);
        }
        assert!(agree * 100 >= runs * 90, "{agree} of {runs} agree");
    }

    #[test]
    fn overall_scores_are_weighted_mean_points_per_category() {
        // Two categories; configuration 1 was placed in one discipline of category 0 only.
        let points = [
            (0, vec![Some(2.0), Some(1.0)]),
            (0, vec![Some(1.0), None]),
            (1, vec![Some(2.0), None]),
        ];
        let scores = overall_scores(&points, &[1.0, 3.0], 2);
        assert_eq!(scores, [1.5 + 3.0 * 2.0, 1.0]);
    }

    #[test]
    fn geometric_means() {
        assert!((geometric_mean(&[2.0, 8.0]).unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(geometric_mean(&[]), None);
        assert_eq!(geometric_mean(&[1.0, 0.0]), None);
    }
}
