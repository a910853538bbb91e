//! Aged against fresh, found as the model is built (`ReportModel::aging`): every aged
//! configuration's main figures against the same configuration fresh (the same run, every
//! other axis equal: the aging penalty, with the 95 % interval of aged / fresh) and, per
//! discipline and age, whether aging changes the ranking of the configurations. Its section of
//! every report: `crate::aging`.

use crate::compare::{better, compare};
use crate::tables::{CaseView, RunView, Table};
use crate::text::title;
use fsbench_analysis::compare::{Comparison, Verdict};
use fsbench_analysis::rank::placements;
use fsbench_model::{CaseAxis, Direction, Unit, FRESH};
use fsbench_workload::WorkloadSettings;
use serde::Serialize;
use std::collections::BTreeMap;

/// Aged against fresh: the penalty of every aged configuration and, per discipline and age,
/// the ranking fresh and aged. Empty when no run aged a filesystem.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AgingReport {
    pub penalties: Vec<AgingPenalty>,
    pub rankings: Vec<AgedRanking>,
}

impl AgingReport {
    pub fn is_empty(&self) -> bool {
        self.penalties.is_empty() && self.rankings.is_empty()
    }
}

/// One aged configuration's figure against the same configuration fresh (same run, every other
/// axis equal), in one discipline.
#[derive(Debug, Clone, Serialize)]
pub struct AgingPenalty {
    /// The plan's name of the workload.
    pub workload: String,
    pub metric: String,
    pub unit: Unit,
    pub direction: Direction,
    /// The row's dimensions (`write 256m 1m`), or the metric's name.
    pub row: String,
    /// The configuration, labelled without its age (`ext4`, `xfs mount=noatime`).
    pub configuration: String,
    pub age: String,
    pub run_id: i64,
    pub fresh_mean: f64,
    pub aged_mean: f64,
    /// Aged / fresh, with its 95 % interval and verdict (paired by round when it can be).
    pub vs_fresh: Option<Comparison>,
    /// How much worse the aged figure is, in percent of the fresh one, whatever the figure's
    /// direction (below 0: aged is better).
    pub penalty_percent: f64,
}

impl AgingPenalty {
    pub fn title(&self) -> String {
        title(&self.workload, &self.row, &self.metric)
    }
}

/// One discipline's ranking of the configurations that ran both fresh and at one age.
#[derive(Debug, Clone, Serialize)]
pub struct AgedRanking {
    pub workload: String,
    pub metric: String,
    pub row: String,
    pub age: String,
    /// The configurations best first, each with its place (ties, which the 95 % intervals do
    /// not separate, share one).
    pub fresh: Vec<(String, usize)>,
    pub aged: Vec<(String, usize)>,
    /// Two configurations the fresh ranking places apart are placed the other way round aged.
    pub changed: bool,
}

impl AgedRanking {
    pub fn title(&self) -> String {
        title(&self.workload, &self.row, &self.metric)
    }
}

impl AgingReport {
    /// From the runs and their tables (once, as the model is built).
    pub fn of(runs: &[RunView], tables: &[Table]) -> AgingReport {
        let cases: BTreeMap<(i64, &str), &CaseView> = runs
            .iter()
            .flat_map(|r| &r.cases)
            .map(|c| ((c.run_id, c.key.as_str()), c))
            .collect();
        let mut report = AgingReport::default();
        if !cases.values().any(|c| c.config.age != FRESH) {
            return report;
        }
        for table in tables {
            if WorkloadSettings::category_of(&table.workload).is_none()
                || !table.main
                || table.direction == Direction::None
            {
                continue;
            }
            let case_of = |i: usize| {
                let column = &table.columns[i];
                cases
                    .get(&(column.run_id, column.case_key.as_str()))
                    .copied()
            };
            let several_runs = table
                .columns
                .iter()
                .any(|c| c.run_id != table.columns[0].run_id);
            let label = |case: &CaseView| {
                let axes = table
                    .varying_axes
                    .iter()
                    .filter(|&&axis| axis != CaseAxis::Age && axis != CaseAxis::Workload)
                    .map(|&axis| format!("{}{}", axis.label_prefix(), case.axis(axis)));
                let run = several_runs.then(|| format!("run {}", case.run_id));
                run.into_iter().chain(axes).collect::<Vec<_>>().join(" ")
            };
            // Each aged column with its fresh twin: the same run, every other axis equal.
            let twins: Vec<(usize, usize)> = (0..table.columns.len())
                .filter_map(|aged| {
                    let a = case_of(aged).filter(|c| c.config.age != FRESH)?;
                    let fresh = (0..table.columns.len()).find(|&f| {
                        case_of(f).is_some_and(|c| {
                            c.run_id == a.run_id
                                && c.config.age == FRESH
                                && CaseAxis::ALL
                                    .iter()
                                    .filter(|&&axis| axis != CaseAxis::Age)
                                    .all(|&axis| c.axis(axis) == a.axis(axis))
                        })
                    })?;
                    Some((fresh, aged))
                })
                .collect();
            let is_better = better(table.direction);
            for row in table.rows.iter().filter(|r| r.dims.client.is_none()) {
                let measured: Vec<(usize, usize)> = twins
                    .iter()
                    .copied()
                    .filter(|&(f, a)| row.cells[f].is_some() && row.cells[a].is_some())
                    .collect();
                let cell = |i: usize| row.cells[i].as_ref().expect("measured");
                for &(f, a) in &measured {
                    let (fresh_mean, aged_mean) = (cell(f).summary.mean, cell(a).summary.mean);
                    let (vs_fresh, _) = compare(cell(f), cell(a), true);
                    let ratio = if fresh_mean != 0.0 {
                        aged_mean / fresh_mean
                    } else {
                        1.0
                    };
                    let aged_case = case_of(a).expect("a twin");
                    report.penalties.push(AgingPenalty {
                        workload: table.columns[a].workload.clone(),
                        metric: table.metric.clone(),
                        unit: table.unit,
                        direction: table.direction,
                        row: row.label(&table.metric),
                        configuration: label(aged_case),
                        age: aged_case.config.age.clone(),
                        run_id: aged_case.run_id,
                        fresh_mean,
                        aged_mean,
                        vs_fresh,
                        penalty_percent: match table.direction {
                            Direction::Lower => (ratio - 1.0) * 100.0,
                            _ => (1.0 - ratio) * 100.0,
                        },
                    });
                }
                // Per workload and age: the configurations that ran both, ranked each way.
                let mut groups: Vec<(String, String)> = Vec::new();
                for &(_, a) in &measured {
                    let key = (
                        table.columns[a].workload.clone(),
                        case_of(a).expect("a twin").config.age.clone(),
                    );
                    if !groups.contains(&key) {
                        groups.push(key);
                    }
                }
                for (workload, age) in groups {
                    let pairs: Vec<(usize, usize)> = measured
                        .iter()
                        .copied()
                        .filter(|&(_, a)| {
                            table.columns[a].workload == workload
                                && case_of(a).is_some_and(|c| c.config.age == age)
                        })
                        .collect();
                    if pairs.len() < 2 {
                        continue;
                    }
                    let placed = |side: fn(&(usize, usize)) -> usize| {
                        let columns: Vec<usize> = pairs.iter().map(side).collect();
                        let means: Vec<Option<f64>> = columns
                            .iter()
                            .map(|&i| Some(cell(i).summary.mean))
                            .collect();
                        let differs = |x: usize, y: usize| {
                            let (c, _) = compare(
                                cell(columns[x]),
                                cell(columns[y]),
                                table.columns[columns[x]].run_id
                                    == table.columns[columns[y]].run_id,
                            );
                            c.is_some_and(|c| matches!(c.verdict, Verdict::Higher | Verdict::Lower))
                        };
                        placements(&means, &is_better, differs)
                            .into_iter()
                            .map(|p| p.map_or(usize::MAX, |p| p.place))
                            .collect::<Vec<usize>>()
                    };
                    let fresh = placed(|p| p.0);
                    let aged = placed(|p| p.1);
                    let changed = (0..pairs.len()).any(|x| {
                        (0..pairs.len()).any(|y| fresh[x] < fresh[y] && aged[y] < aged[x])
                    });
                    let order = |places: &[usize]| {
                        let mut order: Vec<(String, usize)> = pairs
                            .iter()
                            .zip(places)
                            .map(|(&(_, a), &place)| (label(case_of(a).expect("a twin")), place))
                            .collect();
                        order.sort_by_key(|(_, place)| *place);
                        order
                    };
                    report.rankings.push(AgedRanking {
                        metric: table.metric.clone(),
                        row: row.label(&table.metric),
                        fresh: order(&fresh),
                        aged: order(&aged),
                        workload,
                        age,
                        changed,
                    });
                }
            }
        }
        report
    }
}
