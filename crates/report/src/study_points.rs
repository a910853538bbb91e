//! The points of a study's ranking (`metric = "points"` in `[[published]]` and `[[claims]]`):
//! its disciplines and the configurations ranked in each, as the figure's `PointsRule` says
//! (`fsbench_model::published`), each discipline placed as the standings place theirs
//! (`fsbench_analysis::rank::placements`: a configuration that does not differ significantly
//! from the one before, paired by round, shares its place) and each case's points added up.
//! Apart from the standings because a study ranked its own way: study 003 ranked seven
//! filesystems per array over four IOzone figures, not every configuration over every cell.

use crate::compare::compare_rounds;
use crate::model::{ReportModel, RunView};
use fsbench_analysis::compare::Verdict;
use fsbench_analysis::rank::{geometric_mean, placements};
use fsbench_model::published::{self, PointsRule};
use fsbench_model::{Dim, Dims, Direction};
use std::collections::BTreeMap;

/// Each case's points (by case key) and how many disciplines gave them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Points {
    pub of_case: BTreeMap<String, f64>,
    /// The disciplines ranked (one per discipline and `within` value).
    pub disciplines: usize,
}

/// One configuration's values in one discipline, each with its round.
type Values = Vec<(u32, f64)>;

/// The points of the run's cases of `workload` (and the rule's `also`) in the disciplines its
/// rows matching `dims` make, or why there are none.
pub fn points(
    model: &ReportModel,
    run: &RunView,
    workload: &str,
    dims: &BTreeMap<String, String>,
    rule: &PointsRule,
) -> Result<Points, String> {
    let together: Vec<Dim> = rule
        .together
        .iter()
        .map(|key| published::match_dim(key))
        .collect::<Result<_, _>>()?;
    let within = rule.within_axis()?;
    let mut out = Points::default();
    for name in std::iter::once(workload).chain(rule.also.iter().map(String::as_str)) {
        for table in model.tables.iter().filter(|t| {
            t.main
                && t.direction != Direction::None
                && t.columns
                    .iter()
                    .any(|c| c.run_id == run.run.id && c.workload == name)
        }) {
            // The disciplines: the matching rows (a client's share is a breakdown of its load,
            // not a discipline), those that differ only in `together` as one.
            let mut disciplines: Vec<(Dims, Vec<usize>)> = Vec::new();
            for (i, row) in table.rows.iter().enumerate() {
                if row.dims.client.is_some() || !published::dims_match(dims, &row.dims) {
                    continue;
                }
                let mut key = row.dims.clone();
                for dim in &together {
                    dim.clear(&mut key);
                }
                match disciplines.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, rows)) => rows.push(i),
                    None => disciplines.push((key, vec![i])),
                }
            }
            // The configurations ranked together: the columns of this workload, by their value
            // on `within`.
            let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
            for (col, column) in table.columns.iter().enumerate() {
                if column.run_id != run.run.id || column.workload != name {
                    continue;
                }
                let Some(case) = run.cases.iter().find(|c| c.key == column.case_key) else {
                    continue;
                };
                let value = within.map_or_else(String::new, |axis| case.axis(axis).to_string());
                match groups.iter_mut().find(|(v, _)| *v == value) {
                    Some((_, cols)) => cols.push(col),
                    None => groups.push((value, vec![col])),
                }
            }
            let better = |a: f64, b: f64| match table.direction {
                Direction::Lower => a < b,
                _ => a > b,
            };
            for (_, rows) in &disciplines {
                for (_, cols) in &groups {
                    let values: Vec<Option<Values>> = cols
                        .iter()
                        .map(|&col| together_per_round(table, rows, col))
                        .collect();
                    let means: Vec<Option<f64>> = values
                        .iter()
                        .map(|v| {
                            v.as_ref()
                                .map(|v| v.iter().map(|(_, x)| x).sum::<f64>() / v.len() as f64)
                        })
                        .collect();
                    if means.iter().all(Option::is_none) {
                        continue;
                    }
                    let differs = |i: usize, j: usize| {
                        let (Some(a), Some(b)) = (&values[i], &values[j]) else {
                            return false;
                        };
                        let (c, _) = compare_rounds(a, b, true);
                        c.is_some_and(|c| matches!(c.verdict, Verdict::Higher | Verdict::Lower))
                    };
                    for (k, placement) in placements(&means, better, differs).iter().enumerate() {
                        if let Some(p) = placement {
                            *out.of_case
                                .entry(table.columns[cols[k]].case_key.clone())
                                .or_insert(0.0) += p.points;
                        }
                    }
                    out.disciplines += 1;
                }
            }
        }
    }
    if out.disciplines == 0 {
        return Err(format!(
            "the run has no main figure of workload {workload}{} matching {} to rank",
            if rule.also.is_empty() {
                String::new()
            } else {
                format!(" or {}", rule.also.join(", "))
            },
            match_text(dims)
        ));
    }
    Ok(out)
}

/// One column's values of several rows taken together: their geometric mean in each round every
/// row has; None when a row has no value of it.
pub(crate) fn together_per_round(
    table: &crate::model::Table,
    rows: &[usize],
    col: usize,
) -> Option<Values> {
    let per_row: Vec<&[(u32, f64)]> = rows
        .iter()
        .map(|&r| {
            table.rows[r].cells[col]
                .as_ref()
                .map(|c| c.values.as_slice())
        })
        .collect::<Option<_>>()?;
    let mut rounds: Vec<u32> = per_row.first()?.iter().map(|(r, _)| *r).collect();
    rounds.retain(|r| per_row.iter().all(|vs| vs.iter().any(|(x, _)| x == r)));
    let values: Values = rounds
        .into_iter()
        .filter_map(|r| {
            let xs: Vec<f64> = per_row
                .iter()
                .filter_map(|vs| vs.iter().find(|(x, _)| *x == r).map(|(_, v)| *v))
                .collect();
            geometric_mean(&xs).map(|g| (r, g))
        })
        .collect();
    (!values.is_empty()).then_some(values)
}

/// `step=untar phase=` as a figure names its dimensions.
pub fn match_text(dims: &BTreeMap<String, String>) -> String {
    if dims.is_empty() {
        return "any dimensions".into();
    }
    dims.iter()
        .map(|(k, v)| {
            if v.is_empty() {
                format!("no {k}")
            } else {
                format!("{k}={v}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
