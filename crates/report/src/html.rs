//! One self-contained HTML report (inline SVG charts, no scripts, no network; opens from disk),
//! the answer first: what was compared, each discipline's verdict (the winner or the group
//! that ties for first, with its lead over the rest and the lead's 95 % interval) and a
//! heat-map of every configuration against the best of each discipline, grouped by category;
//! (a mark where a leader's samples did not settle or the host disturbed them, listed in
//! their own section); then the ranking with its rank intervals; aged against fresh (each aged
//! configuration's penalty, the rankings fresh and aged); then per workload its charts — bars with 95 %
//! error bars, a workload's grid (the matrix's iozone blocks: throughput against file size
//! per test and record size, a heat-map per configuration), saturation curves with their peak
//! and knee, latency percentiles on a "nines" axis, a chart relative to the best or a
//! baseline (study 004's), a table per result of the figures the workload lists (the tasks'
//! real/user/sys) and one of its whole-run figures with the fsck time (study 002's), and its
//! samples over time (`over_time`: a representative repetition, or every one) — every
//! configuration in one colour throughout, named once in a legend; then the machine and every
//! configuration's read-back (collapsed), and what was not measured, one row per
//! configuration and reason. A minijinja template lays the sections out: a workload's section
//! is a list of tables and charts, and a new kind of chart is one more in it.

use crate::charts::{self, Bar, Labels, Line, XAxis};
use crate::export::Exporter;
use crate::findings::{Findings, Options};
use crate::model::{CaseView, ReportModel, Row, Table};
use crate::over_time::{self, SeriesChoice, Timeline};
use crate::sections::{self, Output, Part};
use crate::standings::{Discipline, Standings};
use crate::text::{cell_text, fixed, number, short_number};
use fsbench_analysis::rank::geometric_mean;
use fsbench_measure::units::human_bytes;
use fsbench_model::{metric_heading, metric_label, Dim, DimValue, Direction, Outcome, Unit};
use fsbench_workload::workload::GridView;
use fsbench_workload::WorkloadSettings;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};

const TEMPLATE: &str = include_str!("report.html.j2");

/// Where the page places run against run (`crate::versus`) among the sections before the
/// charts: after those of a lower rank (`crate::sections::SECTIONS`).
pub(crate) const VERSUS: u8 = 60;

/// Points per configuration (by column index): one line each.
type Lines = BTreeMap<usize, Vec<(f64, f64)>>;

/// The HTML exporter, with the standings' options (baseline, weights).
#[derive(Debug, Clone)]
pub struct Html {
    pub options: Options,
    /// Run against run (`fsbench compare --html`): shown as its own section when not empty.
    pub changes: Vec<crate::versus::Change>,
    /// Which repetitions are drawn over time; their series must be in the model
    /// (`over_time::load`). By default none: a model is loaded without series.
    pub series: SeriesChoice,
}

impl Default for Html {
    fn default() -> Html {
        Html {
            options: Options::default(),
            changes: Vec::new(),
            series: SeriesChoice::None,
        }
    }
}

#[derive(Serialize)]
struct ChartView {
    svg: String,
    caption: String,
}

#[derive(Serialize)]
struct TableView {
    title: String,
    header: Vec<String>,
    rows: Vec<RowView>,
}

#[derive(Serialize)]
struct RowView {
    name: String,
    /// The configuration's colour, when the row is a configuration.
    colour: Option<String>,
    cells: Vec<String>,
}

/// A workload's part of the report: its tables and charts, in order.
#[derive(Serialize, Default)]
struct Section {
    id: String,
    title: String,
    note: String,
    tables: Vec<TableView>,
    charts: Vec<ChartView>,
    /// Its samples over time (`over_time`), per configuration.
    timelines: Vec<Timeline>,
}

/// The display unit for cells of a table (from the largest mean).
fn display_unit<'a>(
    table: &Table,
    cells: impl Iterator<Item = &'a crate::model::Cell>,
) -> (f64, &'static str) {
    let typical = cells.map(|c| c.summary.mean.abs()).fold(0.0, f64::max);
    table.unit.display(typical)
}

/// The columns of one workload in a table, in the order of their configurations.
fn columns_of(table: &Table, workload: &str) -> Vec<usize> {
    let mut columns: Vec<usize> = (0..table.columns.len())
        .filter(|&c| table.columns[c].workload == workload)
        .collect();
    columns.sort_by_key(|&c| (table.columns[c].configuration, c));
    columns
}

/// Bars per configuration of one workload for one row of a table (mean, 95 % interval).
fn bar_chart(table: &Table, row: &Row, workload: &str, title: &str) -> Option<ChartView> {
    let columns = columns_of(table, workload);
    let (factor, unit) = display_unit(table, columns.iter().filter_map(|&c| row.cells[c].as_ref()));
    let bars: Vec<Bar> = columns
        .iter()
        .filter_map(|&c| {
            let cell = row.cells[c].as_ref()?;
            let s = &cell.summary;
            Some(Bar {
                name: table.columns[c].config_label.clone(),
                colour: table.columns[c].configuration,
                mean: s.mean / factor,
                interval: s
                    .ci95_low
                    .zip(s.ci95_high)
                    .map(|(lo, hi)| (lo / factor, hi / factor)),
            })
        })
        .collect();
    if bars.is_empty() {
        return None;
    }
    let title = format!("{workload}: {title}");
    Some(ChartView {
        svg: charts::bars(
            &Labels {
                title: &title,
                x: "configuration",
                y: &metric_label(&table.metric),
                direction: table.direction.phrase(),
            },
            &bars,
            unit,
        ),
        caption: format!(
            "{title}: mean of each configuration's repetitions; error bars: 95 % confidence interval; {}.",
            table.direction.phrase()
        ),
    })
}

/// A dimension's value as a number on an axis (sizes, counts), if it is one.
fn numeric(value: &DimValue) -> Option<f64> {
    match value {
        DimValue::Bytes(n) | DimValue::Count(n) => Some(*n as f64),
        DimValue::Sweep(_, v) => Some(*v),
        DimValue::Text(_) => None,
    }
}

/// Distinct values of a dimension among rows, in order of appearance (`sorted`: ascending).
fn dim_values<'r>(rows: impl Iterator<Item = &'r Row>, dim: Dim, sorted: bool) -> Vec<DimValue> {
    let mut seen: Vec<DimValue> = Vec::new();
    for value in rows.filter_map(|r| dim.get(&r.dims)) {
        if !seen.contains(&value) {
            seen.push(value);
        }
    }
    if sorted {
        seen.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    }
    seen
}

/// A workload's grid (`GridView`: the matrix's blocks per phase, rows file size, columns
/// record size) as charts: per block and column value, the figure against the row dimension,
/// a line per configuration (study 000's layout; bars when there is one row value); and a
/// heat-map per configuration and block.
fn grid_section(table: &Table, view: &GridView, workload: &str, section: &mut Section) {
    let columns = columns_of(table, workload);
    let (factor, unit) = display_unit(
        table,
        table
            .rows
            .iter()
            .flat_map(|r| columns.iter().filter_map(|&c| r.cells[c].as_ref())),
    );
    let in_block = |block: &DimValue| -> Vec<&Row> {
        table
            .rows
            .iter()
            .filter(|r| view.blocks.get(&r.dims).as_ref() == Some(block))
            .collect()
    };
    let blocks = dim_values(table.rows.iter(), view.blocks, false);
    for block in &blocks {
        let block_rows = in_block(block);
        let xs = dim_values(block_rows.iter().copied(), view.rows, true);
        for column in dim_values(block_rows.iter().copied(), view.columns, true) {
            let rows: Vec<&Row> = block_rows
                .iter()
                .copied()
                .filter(|r| view.columns.get(&r.dims).as_ref() == Some(&column))
                .collect();
            let name = format!("{block}, {} {column}", view.columns.label());
            if xs.len() < 2 || xs.iter().any(|x| numeric(x).is_none()) {
                // One row value: bars with their intervals say more than a line of one point.
                for row in rows {
                    let title = format!(
                        "{block}, {} {}, {} {column}",
                        view.rows.label(),
                        view.rows
                            .get(&row.dims)
                            .map_or(String::new(), |v| v.to_string()),
                        view.columns.label()
                    );
                    section
                        .charts
                        .extend(bar_chart(table, row, workload, &title));
                }
                continue;
            }
            let lines: Vec<Line> = columns
                .iter()
                .filter_map(|&c| {
                    let mut points: Vec<(f64, f64)> = rows
                        .iter()
                        .filter_map(|r| {
                            let x = numeric(&view.rows.get(&r.dims)?)?;
                            Some((x, r.cells[c].as_ref()?.summary.mean / factor))
                        })
                        .collect();
                    points.sort_by(|a, b| a.0.total_cmp(&b.0));
                    (!points.is_empty()).then(|| Line {
                        name: table.columns[c].config_label.clone(),
                        colour: table.columns[c].configuration,
                        points,
                    })
                })
                .collect();
            if lines.is_empty() {
                continue;
            }
            let title = format!("{workload}: {name}");
            let bytes = matches!(xs[0], DimValue::Bytes(_));
            let x_title = format!(
                "{}{}",
                view.rows.label(),
                if bytes { " [bytes, log scale]" } else { "" }
            );
            let format_bytes = |x: f64| human_bytes(x.round() as u64);
            let format_plain = |x: f64| short_number(x);
            section.charts.push(ChartView {
                svg: charts::lines(
                    &Labels {
                        title: &title,
                        x: &x_title,
                        y: &metric_label(&table.metric),
                        direction: table.direction.phrase(),
                    },
                    &lines,
                    if bytes {
                        XAxis::Log(&format_bytes)
                    } else {
                        XAxis::Linear(&format_plain)
                    },
                    unit,
                    false,
                    &[],
                ),
                caption: format!(
                    "{title}: {} against {}, a line per configuration (study 000's layout); {}.",
                    metric_label(&table.metric),
                    view.rows.label(),
                    table.direction.phrase()
                ),
            });
        }
    }
    // Heat-maps: per configuration and block, rows and columns as the grid lays them out.
    for &c in &columns {
        let column = &table.columns[c];
        for block in &blocks {
            let rows: Vec<&Row> = in_block(block);
            let ys = dim_values(rows.iter().copied(), view.rows, true);
            let xs = dim_values(rows.iter().copied(), view.columns, true);
            if ys.len() < 2 && xs.len() < 2 {
                continue;
            }
            let values: Vec<Vec<Option<f64>>> = ys
                .iter()
                .map(|y| {
                    xs.iter()
                        .map(|x| {
                            rows.iter()
                                .find(|r| {
                                    view.rows.get(&r.dims).as_ref() == Some(y)
                                        && view.columns.get(&r.dims).as_ref() == Some(x)
                                })
                                .and_then(|r| r.cells[c].as_ref())
                                .map(|cell| cell.summary.mean / factor)
                        })
                        .collect()
                })
                .collect();
            let title = format!("{} — {workload} {block}", column.config_label);
            section.charts.push(ChartView {
                svg: charts::heatmap(
                    &Labels {
                        title: &title,
                        x: view.columns.label(),
                        y: view.rows.label(),
                        direction: &format!("{unit}, {}", table.direction.phrase()),
                    },
                    &xs.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
                    &ys.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
                    &values,
                    &number,
                ),
                caption: format!(
                    "{title}: {} [{unit}] per {} and {}; darker is higher; {}.",
                    metric_label(&table.metric),
                    view.rows.label(),
                    view.columns.label(),
                    table.direction.phrase()
                ),
            });
        }
    }
}

/// Whether a row (not of a sweep) gets a chart of its own: one client's share of a client
/// load is a breakdown of its total (in the tables and the export, not a chart each: dbench at
/// 20 clients would draw 21).
fn charted(row: &Row) -> bool {
    row.dims.sweep.is_none() && row.dims.client.is_none()
}

/// Saturation curves of one workload: rows that differ only in their sweep point, one line per
/// configuration, with each line's peak and knee marked. A client load's per-client rows are
/// left out, and a dimension that moves with the sweep point (the thread count of a swept
/// client or thread count: one value per point) is not part of a curve's name, else every
/// point would be a chart of its own.
fn sweep_charts(table: &Table, workload: &str, section: &mut Section) {
    let columns = columns_of(table, workload);
    let swept: Vec<&Row> = table
        .rows
        .iter()
        .filter(|r| r.dims.sweep.is_some() && r.dims.client.is_none())
        .filter(|r| columns.iter().any(|&c| r.cells[c].is_some()))
        .collect();
    if swept.is_empty() {
        return;
    }
    let (factor, unit) = display_unit(
        table,
        swept
            .iter()
            .flat_map(|r| columns.iter().filter_map(|&c| r.cells[c].as_ref())),
    );
    // The thread count moves with the sweep when, among rows otherwise alike, each point has
    // one thread count and the points have several.
    let without_threads = |r: &Row| {
        let mut rest = r.dims.without_sweep();
        rest.threads = None;
        rest.label()
    };
    let moves_with_sweep = |key: &str| {
        let mut by_point: Vec<(u64, Vec<Option<u64>>)> = Vec::new();
        for r in swept.iter().filter(|r| without_threads(r) == key) {
            let point = r.dims.sweep.as_ref().expect("swept").value.to_bits();
            match by_point.iter_mut().find(|(p, _)| *p == point) {
                Some((_, threads)) if !threads.contains(&r.dims.threads) => {
                    threads.push(r.dims.threads)
                }
                Some(_) => {}
                None => by_point.push((point, vec![r.dims.threads])),
            }
        }
        let mut all: Vec<Option<u64>> = by_point.iter().flat_map(|(_, t)| t.clone()).collect();
        all.dedup();
        by_point.iter().all(|(_, t)| t.len() == 1) && all.len() > 1
    };
    // (the curve's name, the swept setting, its points per column)
    let mut curves: Vec<(String, String, Lines)> = Vec::new();
    for row in &swept {
        let sweep = row.dims.sweep.as_ref().expect("swept");
        let loose = without_threads(row);
        let key = if moves_with_sweep(&loose) {
            loose
        } else {
            row.dims.without_sweep().label()
        };
        let at = match curves.iter().position(|c| c.0 == key) {
            Some(at) => at,
            None => {
                curves.push((key, sweep.parameter.clone(), BTreeMap::new()));
                curves.len() - 1
            }
        };
        for &c in &columns {
            if let Some(cell) = &row.cells[c] {
                curves[at]
                    .2
                    .entry(c)
                    .or_default()
                    .push((sweep.value, cell.summary.mean / factor));
            }
        }
    }
    for (rest, parameter, by_col) in curves {
        let mut marks = Vec::new();
        let lines: Vec<Line> = by_col
            .into_iter()
            .map(|(c, mut points)| {
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                if table.direction == Direction::Higher {
                    if let Some(curve) = fsbench_workload::sweep::curve(&points) {
                        marks.push((curve.peak.0, curve.peak.1, "peak".to_string()));
                        if let Some(k) = curve.knee {
                            marks.push((k.0, k.1, "knee".to_string()));
                        }
                    }
                }
                Line {
                    name: table.columns[c].config_label.clone(),
                    colour: table.columns[c].configuration,
                    points,
                }
            })
            .collect();
        let title = if rest.is_empty() {
            format!("{} over {parameter}", metric_label(&table.metric))
        } else {
            format!("{rest}: {} over {parameter}", metric_label(&table.metric))
        };
        let log_y = charts::spans_decades(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)));
        let format = |x: f64| short_number(x);
        section.charts.push(ChartView {
            svg: charts::lines(
                &Labels {
                    title: &title,
                    x: &parameter,
                    y: &metric_label(&table.metric),
                    direction: table.direction.phrase(),
                },
                &lines,
                XAxis::Linear(&format),
                unit,
                log_y && table.unit == Unit::Nanos,
                &marks,
            ),
            caption: format!(
                "{title}: the saturation curve of each configuration; peak and knee (the first point after which more load adds less than 5 %) marked; {}.",
                table.direction.phrase()
            ),
        });
    }
}

/// The latency percentiles the workloads report, with their percentile.
const PERCENTILES: [(&str, f64); 4] = [
    ("latency_p50", 50.0),
    ("latency_p90", 90.0),
    ("latency_p99", 99.0),
    ("latency_p99_9", 99.9),
];

/// Latency percentiles per row of one workload: a line per configuration on a "nines" axis
/// (p50, p90, p99, p99.9 evenly apart, so the tail gets room), the latency on a log axis when
/// it spans decades.
fn latency_charts(model: &ReportModel, kind: &str, workload: &str, section: &mut Section) {
    let tables: Vec<(&Table, f64)> = PERCENTILES
        .iter()
        .filter_map(|(m, p)| {
            model
                .tables
                .iter()
                .find(|t| t.workload == kind && t.metric == *m)
                .map(|t| (t, *p))
        })
        .collect();
    let Some(&(first, _)) = tables.first() else {
        return;
    };
    if tables.len() < 2 {
        return;
    }
    let columns = columns_of(first, workload);
    let keys: Vec<(f64, String)> = tables
        .iter()
        .map(|(_, p)| (charts::nines(*p), format!("p{p}")))
        .collect();
    for (ri, row) in first
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| charted(r))
        .filter(|(_, r)| columns.iter().any(|&c| r.cells[c].is_some()))
        .take(24)
    {
        let label = row.label(&first.metric);
        let mut lines: Vec<Line> = columns
            .iter()
            .map(|&c| Line {
                name: first.columns[c].config_label.clone(),
                colour: first.columns[c].configuration,
                points: tables
                    .iter()
                    .filter_map(|(t, p)| {
                        let row = t.rows.iter().find(|r| r.dims == first.rows[ri].dims)?;
                        row.cells[c]
                            .as_ref()
                            .map(|cell| (charts::nines(*p), cell.summary.mean))
                    })
                    .collect(),
            })
            .filter(|l| !l.points.is_empty())
            .collect();
        // This chart's unit, from its own largest value.
        let typical = lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .fold(0.0, f64::max);
        let (factor, unit) = Unit::Nanos.display(typical);
        for point in lines.iter_mut().flat_map(|l| l.points.iter_mut()) {
            point.1 /= factor;
        }
        if lines.is_empty() {
            continue;
        }
        let log_y = charts::spans_decades(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)));
        let title = format!("{workload}: {label}: latency percentiles");
        section.charts.push(ChartView {
            svg: charts::lines(
                &Labels {
                    title: &title,
                    x: "percentile (nines: p90, p99, p99.9 evenly apart)",
                    y: "latency",
                    direction: Direction::Lower.phrase(),
                },
                &lines,
                XAxis::Keys(keys.clone()),
                unit,
                log_y,
                &[],
            ),
            caption: format!(
                "{title} per configuration, on a nines axis{}; lower is better.",
                if log_y {
                    " with the latency on a log scale (it spans decades)"
                } else {
                    ""
                }
            ),
        });
    }
}

/// The one row of a table that is a workload's whole run: no operation, phase, step, client or
/// sweep point of its own.
fn whole_run_row(t: &Table) -> Option<usize> {
    let rows: Vec<usize> = (0..t.rows.len())
        .filter(|&i| {
            let d = &t.rows[i].dims;
            d.operation.is_none()
                && d.phase.is_none()
                && d.step.is_none()
                && d.client.is_none()
                && d.sweep.is_none()
        })
        .collect();
    (rows.len() == 1).then(|| rows[0])
}

/// Per result row of one workload (a task's step, an operation), the figures it lists
/// (`Workload::table_columns`: the tasks' real, user, sys, sync) as rows and the
/// configurations as columns, as the studies tabulated them. Whole-run rows are in
/// [`summary_table`].
fn figure_tables(model: &ReportModel, kind: &str, workload: &str, section: &mut Section) {
    let tables: Vec<&Table> = WorkloadSettings::table_columns_of(kind)
        .iter()
        .filter_map(|m| {
            model
                .tables
                .iter()
                .find(|t| t.workload == kind && t.metric == *m)
        })
        .collect();
    let Some(first) = tables.first() else { return };
    let whole = whole_run_row(first);
    for (ri, row) in first.rows.iter().enumerate() {
        // The configurations that measured this row (the others are under "Not measured").
        let columns: Vec<usize> = columns_of(first, workload)
            .into_iter()
            .filter(|&c| row.cells[c].is_some())
            .collect();
        if Some(ri) == whole || !charted(row) || columns.is_empty() {
            continue;
        }
        let rows = tables
            .iter()
            .filter_map(|t| {
                let r = t.rows.iter().find(|r| r.dims == row.dims)?;
                let cells: Vec<Option<&crate::model::Cell>> =
                    columns.iter().map(|&c| r.cells[c].as_ref()).collect();
                if cells.iter().all(Option::is_none) {
                    return None;
                }
                let (factor, unit) = display_unit(t, cells.iter().flatten().copied());
                Some(RowView {
                    name: metric_heading(&t.metric, unit),
                    colour: None,
                    cells: cells
                        .iter()
                        .map(|c| cell_text(c.map(|c| &c.summary), factor))
                        .collect(),
                })
            })
            .collect();
        section.tables.push(TableView {
            title: format!(
                "{workload}: {} (mean ± 95 % CI half-width; {})",
                row.label(&first.metric),
                first.direction.phrase()
            ),
            header: columns
                .iter()
                .map(|&c| first.columns[c].config_label.clone())
                .collect(),
            rows,
        });
    }
}

/// The study's table of a workload (002's TPS, CPU % and fsck time): one row per
/// configuration, one column per figure of the workload's whole-run results (rows without
/// dimensions, or of a client load's total), and the time of the filesystem check after it.
fn summary_table(model: &ReportModel, kind: &str, workload: &str, section: &mut Section) {
    let tables: Vec<(&Table, usize)> = model
        .tables
        .iter()
        .filter(|t| t.workload == kind)
        .filter_map(|t| Some((t, whole_run_row(t)?)))
        .collect();
    let Some(&(first, _)) = tables.first() else {
        return;
    };
    let columns = columns_of(first, workload);
    // One scale per column, chosen by its largest mean (as the charts choose theirs).
    let display = |t: &Table, row: usize| {
        display_unit(
            t,
            columns
                .iter()
                .filter_map(|&c| t.rows[row].cells[c].as_ref()),
        )
    };
    let mut header: Vec<String> = tables
        .iter()
        .map(|&(t, row)| {
            let (_, unit) = display(t, row);
            metric_heading(&t.metric, unit)
        })
        .collect();
    header.push("fsck [s]".into());
    let fsck_of = |case_key: &str, run_id: i64| -> String {
        let times: Vec<f64> = model
            .cases()
            .filter(|c| c.key == case_key && c.run_id == run_id)
            .flat_map(|c| &c.samples)
            .filter_map(|s| Some(s.target_info()?.fsck.as_ref()?.elapsed_ns as f64))
            .collect();
        if times.is_empty() {
            "—".into()
        } else {
            fixed(times.iter().sum::<f64>() / times.len() as f64 / 1e9, 2)
        }
    };
    let rows: Vec<RowView> = columns
        .iter()
        .map(|&i| {
            let column = &first.columns[i];
            let mut cells: Vec<String> = tables
                .iter()
                .map(|&(t, row)| {
                    let (factor, _) = display(t, row);
                    cell_text(
                        t.rows[row]
                            .cells
                            .get(i)
                            .and_then(|c| c.as_ref())
                            .map(|c| &c.summary),
                        factor,
                    )
                })
                .collect();
            cells.push(fsck_of(&column.case_key, column.run_id));
            RowView {
                name: column.config_label.clone(),
                colour: Some(charts::colour_hex(column.configuration)),
                cells,
            }
        })
        .filter(|r| r.cells.iter().rev().skip(1).any(|c| c != "—"))
        .collect();
    if rows.is_empty() {
        return;
    }
    section.tables.push(TableView {
        title: format!(
            "{workload}: every figure of the whole run per configuration (mean ± 95 % CI half-width), and the filesystem check after it"
        ),
        header,
        rows,
    });
}

/// Relative to the best per discipline (or to the baseline), as study 004 normalised: the
/// geometric mean over the workload's disciplines, per configuration.
fn relative_chart(
    model: &ReportModel,
    standings: &Standings,
    workload: &str,
    baseline: Option<&str>,
) -> Option<ChartView> {
    let ds: Vec<&Discipline> = standings
        .disciplines
        .iter()
        .filter(|d| d.workload == workload)
        .collect();
    // With one discipline, it is that discipline's chart again.
    if ds.len() < 2 {
        return None;
    }
    let bars: Vec<Bar> = model
        .configurations
        .iter()
        .enumerate()
        .filter_map(|(index, configuration)| {
            let label = &configuration.label;
            let rel: Vec<f64> = ds
                .iter()
                .filter_map(|d| {
                    let e = d.entries.iter().find(|e| &e.label == label)?;
                    match baseline {
                        None => Some(e.relative_to_best),
                        Some(b) => {
                            let base = d.entries.iter().find(|e| e.label == b)?;
                            (e.mean > 0.0 && base.mean > 0.0).then(|| match d.direction {
                                Direction::Lower => base.mean / e.mean,
                                _ => e.mean / base.mean,
                            })
                        }
                    }
                })
                .collect();
            Some(Bar {
                name: label.clone(),
                colour: index,
                mean: geometric_mean(&rel)?,
                interval: None,
            })
        })
        .collect();
    if bars.is_empty() {
        return None;
    }
    let against = baseline.map_or("the best of each discipline".to_string(), |b| b.to_string());
    let title = format!("{workload}: relative to {against}");
    Some(ChartView {
        svg: charts::bars(
            &Labels {
                title: &title,
                x: "configuration",
                y: "relative performance (ratio, 1 = reference)",
                direction: "higher is better",
            },
            &bars,
            "",
        ),
        caption: format!(
            "{title}: geometric mean over {} disciplines of each configuration's figure relative to {against}, oriented so that higher is better (study 004's normalised view).",
            ds.len()
        ),
    })
}

/// One configuration's read-back, from the first of its cases' samples that has a target.
fn configuration_row(
    label: &str,
    colour: String,
    cases: &[&CaseView],
) -> BTreeMap<&'static str, String> {
    let target = cases
        .iter()
        .flat_map(|c| &c.samples)
        .find_map(|s| s.target_info());
    let samples: Vec<&fsbench_store::Sample> = cases.iter().flat_map(|c| &c.samples).collect();
    let ok = samples.iter().filter(|s| s.status == Outcome::Ok).count();
    // A sample that got past "unsupported" ran somewhere: in the directory given, when no
    // target was made.
    let ran = samples.iter().any(|s| s.status != Outcome::Unsupported);
    let mut row = BTreeMap::new();
    row.insert("label", label.to_string());
    row.insert("colour", colour);
    row.insert(
        "device",
        target
            .and_then(|t| Some((t, t.device.path.as_ref()?.display())))
            .map(|(t, p)| {
                let disk = match &t.device.disk {
                    Some(d) => match &d.model {
                        Some(model) => format!(" on {} ({model})", d.name),
                        None => format!(" on {}", d.name),
                    },
                    None => String::new(),
                };
                // An array: its layout and how many members.
                let array = t
                    .device
                    .array
                    .as_ref()
                    .map(|a| format!(", {} over {} members", a.layout, a.members.len()))
                    .unwrap_or_default();
                format!("{p} ({}{array}){disk}", t.device.kind)
            })
            .unwrap_or_else(|| match (target.is_some(), ran) {
                (true, _) => "memory".into(),
                (false, true) => "the directory given".into(),
                (false, false) => "— (never ran: not measured)".into(),
            }),
    );
    row.insert(
        "mkfs",
        target
            .and_then(|t| Some(t.mkfs.as_ref()?.command.clone()))
            .unwrap_or_else(|| "-".into()),
    );
    row.insert(
        "mount",
        match target.and_then(|t| t.mount.as_ref()) {
            Some(m) => format!("{} ({})", m.mount_options, m.super_options),
            None => cases
                .first()
                .map(|c| c.config.mount_options.clone())
                .filter(|o| !o.is_empty())
                .unwrap_or_else(|| "-".into()),
        },
    );
    row.insert(
        "scheduler",
        target
            .and_then(|t| Some(t.scheduler.as_ref()?.in_force.clone()))
            .unwrap_or_else(|| "-".into()),
    );
    row.insert(
        "cache",
        target
            .and_then(|t| Some(t.cache.as_ref()?.state.clone()))
            .unwrap_or_else(|| {
                cases.first().map_or("-".into(), |c| {
                    c.axis(fsbench_model::CaseAxis::Cache).into()
                })
            }),
    );
    // Every check of every target of the configuration.
    let checks: Vec<bool> = samples
        .iter()
        .filter_map(|s| Some(s.target_info()?.fsck.as_ref()?.clean))
        .collect();
    row.insert(
        "fsck",
        match (checks.len(), checks.iter().filter(|c| !**c).count()) {
            (0, _) => "-".into(),
            (n, 0) => format!("clean ({n} checks)"),
            (n, bad) => format!("PROBLEMS in {bad} of {n} checks"),
        },
    );
    row.insert("ok", format!("{ok} of {}", samples.len()));
    row
}

impl Exporter for Html {
    fn options(&self) -> Options {
        self.options.clone()
    }

    fn render(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        let model = findings.model();
        let standings = findings.get::<Standings>();
        let runs: Vec<_> = model
            .runs
            .iter()
            .map(|view| {
                let run = &view.run;
                let h = fsbench_model::records::HostRecord::of(&run.host);
                let s = |k: &Option<String>| k.as_deref().unwrap_or("?").to_string();
                let cpus = h.cpus.map_or("null".to_string(), |n| n.to_string());
                let gib = h.memory_bytes.map_or(0.0, |m| m as f64) / f64::from(1u32 << 30);
                // As the record was stored: its keys sorted, `null` when it has none.
                let clock = h.clock.as_ref().map_or("null".to_string(), |c| {
                    serde_json::to_value(c).map_or("null".to_string(), |v| v.to_string())
                });
                minijinja::context! {
                    id => run.id,
                    plan => run.plan_name.clone(),
                    status => format!("{}{}", run.status.name(), view.conditions_note()),
                    started => run.started_at.clone(),
                    finished => run.finished_at.clone(),
                    host => s(&h.hostname),
                    kernel => format!("{} {} ({})", s(&h.kernel_release), s(&h.kernel_version), s(&h.machine)),
                    cpu => format!("{} ({cpus} CPUs)", s(&h.cpu_model)),
                    memory => format!("{} GiB", fixed(gib, 1)),
                    clock => clock,
                    fsbench => run.fsbench_version.clone(),
                    machine => format!("{}, kernel {}, {} ({cpus} CPUs), {} GiB", s(&h.hostname), s(&h.kernel_release), s(&h.cpu_model), fixed(gib, 1)),
                }
            })
            .collect();
        let configurations: Vec<_> = model
            .configurations
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let cases: Vec<&CaseView> =
                    model.cases().filter(|k| k.configuration == i).collect();
                let colour = if c.measured {
                    charts::colour_hex(i)
                } else {
                    String::new()
                };
                configuration_row(&c.label, colour, &cases)
            })
            .collect();
        let tool_versions: Vec<String> = {
            let mut v: Vec<String> = Vec::new();
            for case in model.cases() {
                if let Some(t) = case.samples.iter().find_map(|s| s.target_info()) {
                    for tool in &t.tool_versions {
                        if !v.contains(tool) {
                            v.push(tool.clone());
                        }
                    }
                }
            }
            v
        };
        let mut workloads = Vec::new();
        for kind in model.kinds() {
            let names: Vec<&str> = {
                let mut names: Vec<&str> = Vec::new();
                for c in model.cases().filter(|c| c.kind == kind) {
                    let name = c.axis(fsbench_model::CaseAxis::Workload);
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
                names
            };
            for workload in names {
                let mut section = workload_section(
                    model,
                    standings,
                    kind,
                    workload,
                    self.options.baseline.as_deref(),
                );
                section.timelines = over_time::timelines(model, workload, self.series);
                workloads.push(section);
            }
        }
        let title = match model.runs.as_slice() {
            [one] => format!(
                "fsbench report: run {} \"{}\"",
                one.run.id, one.run.plan_name
            ),
            many => format!(
                "fsbench report: runs {}",
                many.iter()
                    .map(|r| r.run.id.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let legend: Vec<_> = model
            .configurations
            .iter()
            .enumerate()
            .filter(|(_, c)| c.measured)
            .map(|(i, c)| minijinja::context! { label => c.label.clone(), colour => charts::colour_hex(i) })
            .collect();
        // The sections, each rendered by its module, in the page's order: the answer (when
        // there is a verdict), the sections before the charts with run against run among them
        // (at `VERSUS`), and those that close the page.
        let (mut answer, mut head, mut tail) = (Vec::new(), Vec::new(), Vec::new());
        let answered = sections::answered(findings);
        let mut versus = Some(crate::versus::html(&self.changes).map_err(io::Error::other)?);
        for placed in sections::ordered(Output::Html) {
            if placed.part == Part::Answer && !answered {
                continue;
            }
            let Some(html) = placed.section.html(findings).map_err(io::Error::other)? else {
                continue;
            };
            match placed.part {
                Part::Answer => answer.push(html),
                Part::Head => {
                    if placed.rank(Output::Html) > VERSUS {
                        head.extend(versus.take());
                    }
                    head.push(html);
                }
                Part::Tail => tail.push(html),
            }
        }
        head.extend(versus);
        let mut env = minijinja::Environment::new();
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
        env.add_template("macros.html.j2", crate::section::MACROS)
            .map_err(io::Error::other)?;
        env.add_template("report", TEMPLATE)
            .map_err(io::Error::other)?;
        let html = env
            .get_template("report")
            .and_then(|t| {
                t.render(minijinja::context! {
                    title => title,
                    compared => model.compared(),
                    version => env!("CARGO_PKG_VERSION"),
                    runs => runs,
                    configurations => configurations,
                    tools => tool_versions,
                    legend => legend,
                    answer => answer,
                    sections => head,
                    closing => tail,
                    workloads => minijinja::value::Serde(&workloads),
                })
            })
            .map_err(io::Error::other)?;
        out.write_all(html.as_bytes())
    }
}

/// One workload's section: its charts and tables.
fn workload_section(
    model: &ReportModel,
    standings: &Standings,
    kind: &str,
    workload: &str,
    baseline: Option<&str>,
) -> Section {
    let mut section = Section {
        id: format!(
            "workload-{}",
            workload.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
        ),
        title: format!("{workload} ({kind})"),
        ..Section::default()
    };
    let tables: Vec<&Table> = model
        .tables
        .iter()
        .filter(|t| t.workload == kind && t.main)
        .collect();
    let grid = WorkloadSettings::grid_of(kind);
    for table in &tables {
        let gridded = grid
            .as_ref()
            .filter(|view| view.units.iter().any(|u| u.metric == table.metric));
        match gridded {
            Some(view) => grid_section(table, view, workload, &mut section),
            None => {
                // A plan may run a sweep and single loads of one kind (004's saturation
                // curve beside dbench at 5 and 20): curves for the one, bars for the other.
                sweep_charts(table, workload, &mut section);
                for row in table.rows.iter().filter(|r| charted(r)).take(60) {
                    let title = row.label(&table.metric);
                    section
                        .charts
                        .extend(bar_chart(table, row, workload, &title));
                }
            }
        }
    }
    if let Some(chart) = relative_chart(model, standings, workload, baseline) {
        section.charts.push(chart);
    }
    if grid.is_none() {
        // Beside the main figure's saturation curve, the latency it costs: the median and the
        // 99th percentile against the swept setting (queue depth, rate, threads).
        for metric in ["latency_p50", "latency_p99"] {
            if let Some(table) = model
                .tables
                .iter()
                .find(|t| t.workload == kind && t.metric == metric)
            {
                sweep_charts(table, workload, &mut section);
            }
        }
        summary_table(model, kind, workload, &mut section);
        figure_tables(model, kind, workload, &mut section);
        latency_charts(model, kind, workload, &mut section);
    }
    if section.charts.is_empty() && section.tables.is_empty() {
        section.note = "No sample measured anything.".into();
    }
    section
}
