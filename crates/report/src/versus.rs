//! Run against run (`fsbench compare A B ...`: the same plan on two kernels, as study 003
//! compared 3.1.10 with 3.3.6): for every case both runs measured and every main figure, the
//! ratio later / first with its 95 % interval (Welch's test on the logs: runs are not paired by
//! round) and whether it is a significant change; a regression is a significant change for the
//! worse beyond a threshold. Durability's violations are counts, not samples of a speed: from
//! none to some, or back, is a change whatever the spread ([`Counted`]).

use crate::model::{Cell, ReportModel, Table};
use crate::sections::durability;
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
    /// For durability's violations, the counts themselves (absent for every other figure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counted: Option<Counted>,
}

/// Violations in two runs, each over its cuts (summed over the samples). A violation is a
/// promise seen broken, not a sample of a speed: none in one run and some in the other is a
/// change (`Verdict::Higher` or `Lower`, its "interval" the ratio itself: nothing was
/// estimated); between two counts above 0 the rates per cut are compared (the 95 % interval
/// of the ratio of two Poisson rates, from the log ratio's standard error √(1/a + 1/b)).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Counted {
    pub before: u64,
    pub before_cuts: u64,
    pub after: u64,
    pub after_cuts: u64,
    /// Crash states checked in each run (power cuts; none for the shutdown cut).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_states: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_states: Option<u64>,
}

impl Counted {
    /// The two counts and their comparison (later / first, as rates per cut).
    fn of(base: &Cell, cell: &Cell, base_of: Of<'_>, of: Of<'_>) -> (Counted, Comparison) {
        let (base_cuts, base_states) = base_of;
        let (cuts, states) = of;
        let sum = |c: &Cell| {
            c.values
                .iter()
                .map(|(_, v)| v.max(0.0))
                .sum::<f64>()
                .round() as u64
        };
        let counted = Counted {
            before: sum(base),
            before_cuts: base_cuts.map_or(base.values.len() as u64, sum).max(1),
            after: sum(cell),
            after_cuts: cuts.map_or(cell.values.len() as u64, sum).max(1),
            before_states: base_states.map(sum),
            after_states: states.map(sum),
        };
        let (a, b) = (counted.before as f64, counted.after as f64);
        let ratio = (b / counted.after_cuts as f64) / (a / counted.before_cuts as f64);
        let (ratio, low, high, verdict) = match (counted.before, counted.after) {
            (0, 0) => (1.0, 1.0, 1.0, Verdict::Tie),
            (0, _) => (f64::INFINITY, f64::INFINITY, f64::INFINITY, Verdict::Higher),
            (_, 0) => (0.0, 0.0, 0.0, Verdict::Lower),
            _ => {
                let spread = 1.96 * (1.0 / a + 1.0 / b).sqrt();
                let (low, high) = (ratio * (-spread).exp(), ratio * spread.exp());
                let verdict = if low > 1.0 {
                    Verdict::Higher
                } else if high < 1.0 {
                    Verdict::Lower
                } else {
                    Verdict::Tie
                };
                (ratio, low, high, verdict)
            }
        };
        let comparison = Comparison {
            ratio,
            ci95_low: Some(low),
            ci95_high: Some(high),
            p: None,
            n: base.values.len().min(cell.values.len()),
            paired: false,
            verdict,
        };
        (counted, comparison)
    }

    /// "violations: none in 200 cuts before, 12 in 200 cuts now — promises kept before are
    /// broken now (a count, not a speed: a change, not noise)": what `fsbench compare` prints
    /// as the figure's row, so that its line says it whole.
    pub fn text(&self) -> String {
        let count = |n: u64, cuts: u64, states: Option<u64>| {
            let states = states.map_or(String::new(), |s| format!(" ({s} crash states)"));
            match n {
                0 => format!("none in {cuts} cuts{states}"),
                n => format!("{n} in {cuts} cuts{states}"),
            }
        };
        let what = match (self.before, self.after) {
            (0, 0) => String::new(),
            (0, _) => {
                " — promises kept before are broken now (a count, not a speed: a change, not noise)"
                    .into()
            }
            (_, 0) => {
                " — every promise is kept now (a count, not a speed: a change, not noise)".into()
            }
            _ => " (rates per cut compared: Poisson interval of their ratio)".into(),
        };
        format!(
            "violations: {} before, {} now{what}",
            count(self.before, self.before_cuts, self.before_states),
            count(self.after, self.after_cuts, self.after_states)
        )
    }
}

/// A durability cell's cuts and crash states (power cuts), when their tables have them.
type Of<'a> = (Option<&'a Cell>, Option<&'a Cell>);

/// The cuts and the crash states of a durability table's cell: the same column and row of the
/// `cuts` and `crash_states` tables.
fn counts_of<'a>(model: &'a ReportModel, table: &Table, row: usize, column: usize) -> Of<'a> {
    let dims = &table.rows[row].dims;
    let of = |metric: &str| {
        let other = model
            .tables
            .iter()
            .find(|t| t.workload == durability::KIND && t.metric == metric)?;
        let row = other.rows.iter().find(|r| &r.dims == dims)?;
        row.cells.get(column)?.as_ref()
    };
    (of(durability::CUTS), of(durability::CRASH_STATES))
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
        let count = table.workload == durability::KIND && table.metric == durability::VIOLATIONS;
        for (r, row) in table.rows.iter().enumerate() {
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
                    let (comparison, counted) = if count {
                        let (counted, comparison) = Counted::of(
                            base,
                            cell,
                            counts_of(model, table, r, i),
                            counts_of(model, table, r, j),
                        );
                        (comparison, Some(counted))
                    } else {
                        let a: Vec<f64> = base.values.iter().map(|(_, v)| *v).collect();
                        let b: Vec<f64> = cell.values.iter().map(|(_, v)| *v).collect();
                        let Some(comparison) = welch(&a, &b) else {
                            continue;
                        };
                        (comparison, None)
                    };
                    out.push(Change {
                        case_key: base_col.case_key.clone(),
                        workload: table.workload_names.join(", "),
                        metric: table.metric.clone(),
                        unit: table.unit,
                        direction: table.direction,
                        // A count's row says both counts and what their change means: the
                        // line `fsbench compare` prints is this row and the figures.
                        row: counted.map_or_else(|| row.label(&table.metric), |c| c.text()),
                        base_run: first,
                        run: col.run_id,
                        base_mean: base.summary.mean,
                        mean: cell.summary.mean,
                        comparison,
                        counted,
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
            if let Some(counted) = &c.counted {
                return minijinja::context! {
                    case => c.case_key.clone(),
                    figure => format!("{} {} ({})", c.workload, c.row, c.direction.phrase()),
                    runs => format!("{} -> {}", c.base_run, c.run),
                    before => format!("{} in {} cuts", counted.before, counted.before_cuts),
                    after => format!("{} in {} cuts", counted.after, counted.after_cuts),
                    change => format!("{} -> {}", counted.before, counted.after),
                    interval => if counted.before == 0 || counted.after == 0 {
                        "a count: none against some is a change, not an estimate".to_string()
                    } else {
                        format!("{} .. {} (per cut)", pct(c.comparison.ci95_low.unwrap_or(f64::NAN)), pct(c.comparison.ci95_high.unwrap_or(f64::NAN)))
                    },
                    verdict => if c.is_worse() { "worse" } else if c.is_better() { "better" } else { "tie" },
                };
            }
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
