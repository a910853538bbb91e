//! Run against run (`fsbench compare A B ...`: the same plan on two kernels, as study 003
//! compared 3.1.10 with 3.3.6): for every case both runs measured and every main figure, the
//! ratio later / first with its 95 % interval (Welch's test on the logs: runs are not paired by
//! round) and whether it is a significant change; a regression is a significant change for the
//! worse beyond a threshold.

use crate::model::ReportModel;
use crate::text::number;
use fsbench_analysis::compare::{welch, Comparison, Verdict};
use fsbench_model::{Direction, Unit};
use serde::Serialize;

/// One figure of one case in two runs.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub case_key: String,
    pub workload: String,
    pub metric: String,
    pub unit: Unit,
    pub direction: Direction,
    pub row: String,
    pub base_run: i64,
    pub run: i64,
    pub base_mean: f64,
    pub mean: f64,
    /// mean / base_mean, with its interval and verdict.
    pub comparison: Comparison,
}

impl Change {
    /// The change for the worse, in percent (positive: worse), whatever the direction.
    pub fn worse_by_percent(&self) -> f64 {
        match self.direction {
            Direction::Lower => (self.comparison.ratio - 1.0) * 100.0,
            _ => (1.0 - self.comparison.ratio) * 100.0,
        }
    }

    /// A significant change for the worse.
    pub fn is_worse(&self) -> bool {
        matches!(
            (self.direction, self.comparison.verdict),
            (Direction::Higher, Verdict::Lower) | (Direction::Lower, Verdict::Higher)
        )
    }

    /// A significant change for the better.
    pub fn is_better(&self) -> bool {
        matches!(
            (self.direction, self.comparison.verdict),
            (Direction::Higher, Verdict::Higher) | (Direction::Lower, Verdict::Lower)
        )
    }

    /// A significant change for the worse by more than `percent`.
    pub fn is_regression(&self, percent: f64) -> bool {
        self.is_worse() && self.worse_by_percent() > percent
    }
}

/// Every main figure of every case measured in the first run and in each later run.
pub fn changes(model: &ReportModel) -> Vec<Change> {
    let Some(first) = model.runs.first().map(|r| r.run.id) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for table in model
        .tables
        .iter()
        .filter(|t| t.main && t.direction != Direction::None)
    {
        for row in &table.rows {
            for (i, base_col) in table.columns.iter().enumerate() {
                if base_col.run_id != first {
                    continue;
                }
                let Some(base) = &row.cells[i] else { continue };
                for (j, col) in table.columns.iter().enumerate() {
                    if col.run_id == first || col.case_key != base_col.case_key {
                        continue;
                    }
                    let Some(cell) = &row.cells[j] else { continue };
                    let a: Vec<f64> = base.values.iter().map(|(_, v)| *v).collect();
                    let b: Vec<f64> = cell.values.iter().map(|(_, v)| *v).collect();
                    let Some(comparison) = welch(&a, &b) else {
                        continue;
                    };
                    out.push(Change {
                        case_key: base_col.case_key.clone(),
                        workload: table.workload_names.join(", "),
                        metric: table.metric.clone(),
                        unit: table.unit,
                        direction: table.direction,
                        row: row.label(&table.metric),
                        base_run: first,
                        run: col.run_id,
                        base_mean: base.summary.mean,
                        mean: cell.summary.mean,
                        comparison,
                    });
                }
            }
        }
    }
    out
}

/// Run against run in the HTML report (`fsbench compare --html`): each figure of each case, the
/// later run against the first, with its interval and verdict (nothing without changes).
pub fn html(changes: &[Change]) -> Result<String, minijinja::Error> {
    let rows: Vec<minijinja::Value> = changes
        .iter()
        .map(|c| {
            let (factor, unit) = c.unit.display(c.base_mean.abs().max(c.mean.abs()));
            let pct = |v: f64| format!("{:+.1} %", (v - 1.0) * 100.0);
            minijinja::context! {
                case => c.case_key.clone(),
                figure => format!("{} {} ({})", c.workload, c.row, c.direction.phrase()),
                runs => format!("{} -> {}", c.base_run, c.run),
                before => format!("{} {unit}", number(c.base_mean / factor)),
                after => format!("{} {unit}", number(c.mean / factor)),
                change => pct(c.comparison.ratio),
                interval => match (c.comparison.ci95_low, c.comparison.ci95_high) {
                    (Some(lo), Some(hi)) => format!("{} .. {}", pct(lo), pct(hi)),
                    _ => "too few repetitions".to_string(),
                },
                verdict => if c.is_worse() { "worse" } else if c.is_better() { "better" } else { "tie" },
            }
        })
        .collect();
    crate::section::render_html(
        "versus.html.j2",
        include_str!("versus.html.j2"),
        minijinja::context! { comparison => rows },
    )
}
