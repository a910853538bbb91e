//! A figure against another: B / A from two configurations' values, paired by round when they
//! share rounds of one run, else Welch (`fsbench_analysis::compare`), and which way is better.
//! Standings, efficiency, aging and then-and-now all compare through it.

use crate::tables::Cell;
use fsbench_analysis::compare::{paired, welch, Comparison};
use fsbench_model::Direction;

pub(crate) fn better(direction: Direction) -> impl Fn(f64, f64) -> bool {
    move |a, b| match direction {
        Direction::Lower => a < b,
        _ => a > b,
    }
}

/// B / A for two cells: paired by round when they share at least 2 rounds of one run, else
/// Welch. Also returns the unpaired comparison when the paired one was made.
pub(crate) fn compare(
    a: &Cell,
    b: &Cell,
    same_run: bool,
) -> (Option<Comparison>, Option<Comparison>) {
    compare_rounds(&a.values, &b.values, same_run)
}

/// B / A for two configurations' values, each with the round it was measured in: paired by
/// round when they share at least 2 rounds of one run, else Welch. Also returns the unpaired
/// comparison when the paired one was made.
pub fn compare_rounds(
    a: &[(u32, f64)],
    b: &[(u32, f64)],
    same_run: bool,
) -> (Option<Comparison>, Option<Comparison>) {
    let va: Vec<f64> = a.iter().map(|(_, v)| *v).collect();
    let vb: Vec<f64> = b.iter().map(|(_, v)| *v).collect();
    let unpaired = welch(&va, &vb);
    if same_run {
        let pairs: Vec<(f64, f64)> = a
            .iter()
            .filter_map(|(r, x)| b.iter().find(|(rb, _)| rb == r).map(|(_, y)| (*x, *y)))
            .collect();
        if pairs.len() >= 2 {
            return (paired(&pairs), unpaired);
        }
    }
    (unpaired, None)
}
