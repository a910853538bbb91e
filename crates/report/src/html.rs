//! One self-contained HTML report (inline SVG charts, no scripts, no network; opens from disk):
//! provenance and every configuration's read-back, who won each discipline and whether it is
//! real, rankings, then per workload its charts — bars with 95 % error bars, the matrix as
//! throughput against file size per test and record size (study 000's layout) and a heat-map
//! per configuration, saturation curves with their peak and knee, latency percentiles,
//! relative charts against the best or a baseline (study 004's), the tasks' real/user/sys
//! tables — and what was not measured, with the reasons. A minijinja template lays it out.

use crate::charts::{self, Labels};
use crate::export::Exporter;
use crate::markdown::{value_text, versus_text};
use crate::model::{CaseView, ReportModel, Row, Table};
use crate::standings::{Options, Standings};
use fsbench_analysis::compare::Verdict;
use fsbench_analysis::rank::geometric_mean;
use fsbench_measure::units::human_bytes;
use fsbench_model::{size_label, Direction, Unit};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};

const TEMPLATE: &str = include_str!("report.html.j2");

/// Points per configuration (by column index): one line each.
type Lines = BTreeMap<usize, Vec<(f64, f64)>>;

/// The HTML exporter, with the standings' options (baseline, weights).
#[derive(Debug, Clone, Default)]
pub struct Html {
    pub options: Options,
    /// Run against run (`fsbench compare --html`): shown as its own section when not empty.
    pub changes: Vec<crate::versus::Change>,
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
    cells: Vec<String>,
}

#[derive(Serialize, Default)]
struct Section {
    title: String,
    note: String,
    tables: Vec<TableView>,
    charts: Vec<ChartView>,
}

fn y_title(metric: &str, unit_label: &str) -> String {
    if unit_label.is_empty() {
        metric.replace('_', " ")
    } else {
        format!("{} [{unit_label}]", metric.replace('_', " "))
    }
}

/// The display unit for a table (from its largest mean).
fn display_unit(table: &Table) -> (f64, &'static str) {
    let typical = table
        .rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .map(|c| c.summary.mean.abs())
        .fold(0.0, f64::max);
    table.unit.display(typical)
}

fn fmt_number(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Bars per configuration for one row of a table (mean, 95 % interval).
fn bar_chart(table: &Table, row: &Row, title: &str) -> ChartView {
    let (factor, unit) = display_unit(table);
    let mut names = Vec::new();
    let mut values = Vec::new();
    for (col, cell) in table.columns.iter().zip(&row.cells) {
        if let Some(c) = cell {
            names.push(col.label.clone());
            let s = &c.summary;
            values.push((
                s.mean / factor,
                s.ci95_low
                    .zip(s.ci95_high)
                    .map(|(lo, hi)| (lo / factor, hi / factor)),
            ));
        }
    }
    let y = y_title(&table.metric, unit);
    ChartView {
        svg: charts::bars(
            &Labels {
                title,
                x: "configuration",
                y: &y,
                direction: table.direction.phrase(),
            },
            &names,
            &values,
        ),
        caption: format!(
            "{title}: mean of each configuration's repetitions; error bars: 95 % confidence interval; {}.",
            table.direction.phrase()
        ),
    }
}

/// The matrix: one line chart per test and record size (throughput against file size, a line
/// per configuration), and one heat-map per configuration and test.
fn matrix_section(table: &Table, section: &mut Section) {
    let (factor, unit) = display_unit(table);
    let y = y_title(&table.metric, unit);
    // (phase, record) in order of appearance -> configuration -> points.
    let mut order: Vec<(String, u64)> = Vec::new();
    let mut groups: BTreeMap<(String, u64), Lines> = BTreeMap::new();
    for row in &table.rows {
        let (Some(phase), Some(file), Some(record)) = (
            row.dims.phase.clone(),
            row.dims.file_size_bytes,
            row.dims.record_size_bytes,
        ) else {
            continue;
        };
        let key = (phase.clone(), record);
        if !order.contains(&key) {
            order.push(key.clone());
        }
        for (col, cell) in row.cells.iter().enumerate() {
            if let Some(c) = cell {
                groups
                    .entry(key.clone())
                    .or_default()
                    .entry(col)
                    .or_default()
                    .push((file as f64, c.summary.mean / factor));
            }
        }
    }
    for key in &order {
        let (phase, record) = key;
        let by_col = &groups[key];
        let title = format!("{phase}, record {}", size_label(*record));
        let files: Vec<u64> = {
            let mut f: Vec<u64> = table
                .rows
                .iter()
                .filter(|r| {
                    r.dims.phase.as_ref() == Some(phase)
                        && r.dims.record_size_bytes == Some(*record)
                })
                .filter_map(|r| r.dims.file_size_bytes)
                .collect();
            f.sort_unstable();
            f.dedup();
            f
        };
        if files.len() < 2 {
            // One file size: bars with their intervals say more than a line of one point.
            if let Some(row) = table.rows.iter().find(|r| {
                r.dims.phase.as_ref() == Some(phase) && r.dims.record_size_bytes == Some(*record)
            }) {
                let title = format!(
                    "{phase}, file {}, record {}",
                    files.first().map_or(String::new(), |f| size_label(*f)),
                    size_label(*record)
                );
                section.charts.push(bar_chart(table, row, &title));
            }
            continue;
        }
        let series: Vec<(String, Vec<(f64, f64)>)> = by_col
            .iter()
            .map(|(col, points)| {
                let mut points = points.clone();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                (table.columns[*col].label.clone(), points)
            })
            .collect();
        section.charts.push(ChartView {
            svg: charts::lines(
                &Labels {
                    title: &title,
                    x: "file size [bytes, log scale]",
                    y: &y,
                    direction: table.direction.phrase(),
                },
                &series,
                true,
                &|x| human_bytes(x.round() as u64),
                &[],
            ),
            caption: format!(
                "{title}: {} against file size, a line per configuration (study 000's layout); {}.",
                table.metric,
                table.direction.phrase()
            ),
        });
    }
    // Heat-maps: per configuration and phase, rows file size, columns record size.
    let phases: Vec<String> = {
        let mut p: Vec<String> = Vec::new();
        for r in &table.rows {
            if let Some(ph) = &r.dims.phase {
                if !p.contains(ph) {
                    p.push(ph.clone());
                }
            }
        }
        p
    };
    for (col, column) in table.columns.iter().enumerate() {
        for phase in &phases {
            let rows: Vec<&Row> = table
                .rows
                .iter()
                .filter(|r| r.dims.phase.as_ref() == Some(phase))
                .collect();
            let mut files: Vec<u64> = rows.iter().filter_map(|r| r.dims.file_size_bytes).collect();
            let mut records: Vec<u64> = rows
                .iter()
                .filter_map(|r| r.dims.record_size_bytes)
                .collect();
            files.sort_unstable();
            files.dedup();
            records.sort_unstable();
            records.dedup();
            if files.len() < 2 && records.len() < 2 {
                continue;
            }
            let values: Vec<Vec<Option<f64>>> = files
                .iter()
                .map(|f| {
                    records
                        .iter()
                        .map(|r| {
                            rows.iter()
                                .find(|row| {
                                    row.dims.file_size_bytes == Some(*f)
                                        && row.dims.record_size_bytes == Some(*r)
                                })
                                .and_then(|row| row.cells[col].as_ref())
                                .map(|c| c.summary.mean / factor)
                        })
                        .collect()
                })
                .collect();
            let title = format!("{} — {phase}", column.label);
            section.charts.push(ChartView {
                svg: charts::heatmap(
                    &Labels {
                        title: &title,
                        x: "record size",
                        y: "file size",
                        direction: &format!("{unit}, {}", table.direction.phrase()),
                    },
                    &records.iter().map(|r| size_label(*r)).collect::<Vec<_>>(),
                    &files.iter().map(|f| size_label(*f)).collect::<Vec<_>>(),
                    &values,
                    &fmt_number,
                ),
                caption: format!(
                    "{title}: {} [{unit}] per file size and record size; darker is higher; {}.",
                    table.metric,
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

/// Saturation curves: rows that differ only in their sweep point, one line per configuration,
/// with each line's peak and knee marked. A client load's per-client rows are left out, and
/// the thread count that moves with a swept client or thread count is not part of a curve's
/// name (else every point would be a chart of its own).
fn sweep_charts(table: &Table, section: &mut Section) {
    let (factor, unit) = display_unit(table);
    let y = y_title(&table.metric, unit);
    let mut curves: BTreeMap<String, (String, Lines)> = BTreeMap::new();
    for row in &table.rows {
        let Some(sweep) = &row.dims.sweep else {
            continue;
        };
        if row.dims.client.is_some() {
            continue;
        }
        let mut rest = row.dims.without_sweep();
        if matches!(sweep.parameter.as_str(), "clients" | "threads") {
            rest.threads = None;
        }
        let key = rest.label();
        let entry = curves
            .entry(key)
            .or_insert_with(|| (sweep.parameter.clone(), BTreeMap::new()));
        for (col, cell) in row.cells.iter().enumerate() {
            if let Some(c) = cell {
                entry
                    .1
                    .entry(col)
                    .or_default()
                    .push((sweep.value, c.summary.mean / factor));
            }
        }
    }
    for (rest, (parameter, by_col)) in curves {
        let mut marks = Vec::new();
        let series: Vec<(String, Vec<(f64, f64)>)> = by_col
            .into_iter()
            .map(|(col, mut points)| {
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                if table.direction == Direction::Higher {
                    if let Some(c) = fsbench_workload::sweep::curve(&points) {
                        marks.push((c.peak.0, c.peak.1, "peak".to_string()));
                        if let Some(k) = c.knee {
                            marks.push((k.0, k.1, "knee".to_string()));
                        }
                    }
                }
                (table.columns[col].label.clone(), points)
            })
            .collect();
        let title = if rest.is_empty() {
            format!("{} over {parameter}", table.metric)
        } else {
            format!("{rest}: {} over {parameter}", table.metric)
        };
        section.charts.push(ChartView {
            svg: charts::lines(
                &Labels {
                    title: &title,
                    x: &parameter,
                    y: &y,
                    direction: table.direction.phrase(),
                },
                &series,
                false,
                &|x| fmt_number(x),
                &marks,
            ),
            caption: format!(
                "{title}: the saturation curve of each configuration; peak and knee (the first point after which more load adds less than 5 %) marked; {}.",
                table.direction.phrase()
            ),
        });
    }
}

/// Latency percentiles per row: p50, p90, p99, p99.9 (and max) per configuration.
fn latency_charts(model: &ReportModel, kind: &str, section: &mut Section) {
    const PCTS: [(&str, f64); 4] = [
        ("latency_p50", 50.0),
        ("latency_p90", 90.0),
        ("latency_p99", 99.0),
        ("latency_p99_9", 99.9),
    ];
    let tables: Vec<&Table> = PCTS
        .iter()
        .filter_map(|(m, _)| {
            model
                .tables
                .iter()
                .find(|t| t.workload == kind && t.metric == *m)
        })
        .collect();
    if tables.len() < 2 {
        return;
    }
    let first = tables[0];
    let typical = tables
        .iter()
        .flat_map(|t| t.rows.iter().flat_map(|r| r.cells.iter().flatten()))
        .map(|c| c.summary.mean)
        .fold(0.0, f64::max);
    let (factor, unit) = Unit::Nanos.display(typical);
    for (ri, row) in first
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| charted(r))
        .take(24)
    {
        let label = row.label(&first.metric);
        let series: Vec<(String, Vec<(f64, f64)>)> = first
            .columns
            .iter()
            .enumerate()
            .map(|(col, c)| {
                let points = tables
                    .iter()
                    .zip(PCTS)
                    .filter_map(|(t, (_, pct))| {
                        t.rows.get(ri)?.cells[col]
                            .as_ref()
                            .map(|cell| (pct, cell.summary.mean / factor))
                    })
                    .collect();
                (c.label.clone(), points)
            })
            .filter(|(_, p): &(String, Vec<(f64, f64)>)| !p.is_empty())
            .collect();
        if series.is_empty() {
            continue;
        }
        let title = format!("{label}: latency percentiles");
        let y = format!("latency [{unit}]");
        section.charts.push(ChartView {
            svg: charts::lines(
                &Labels {
                    title: &title,
                    x: "percentile",
                    y: &y,
                    direction: Direction::Lower.phrase(),
                },
                &series,
                false,
                &|x| format!("p{x}"),
                &[],
            ),
            caption: format!("{title} per configuration; lower is better."),
        });
    }
}

/// The studies' task tables: per step, rows real/user/sys/sync, columns configurations.
fn task_tables(model: &ReportModel, section: &mut Section) {
    let metrics = ["real", "user", "sys", "sync"];
    let tables: Vec<&Table> = metrics
        .iter()
        .filter_map(|m| {
            model
                .tables
                .iter()
                .find(|t| t.workload == "task" && t.metric == *m)
        })
        .collect();
    let Some(real) = tables.first() else { return };
    for (ri, row) in real.rows.iter().enumerate() {
        let header: Vec<String> = real.columns.iter().map(|c| c.label.clone()).collect();
        let rows = tables
            .iter()
            .filter_map(|t| {
                let r = t.rows.get(ri)?;
                Some(RowView {
                    name: format!("{} [s]", t.metric),
                    cells: r
                        .cells
                        .iter()
                        .map(|c| match c {
                            Some(c) => match c.summary.ci95_half_width {
                                Some(h) => format!("{:.2} ± {:.2}", c.summary.mean / 1e9, h / 1e9),
                                None => format!("{:.2} (n=1)", c.summary.mean / 1e9),
                            },
                            None => "—".into(),
                        })
                        .collect(),
                })
            })
            .collect();
        section.tables.push(TableView {
            title: {
                let d = &row.dims;
                let phase = d
                    .phase
                    .as_ref()
                    .map(|p| format!(" {p}"))
                    .unwrap_or_default();
                match (&d.step, &d.operation) {
                    (Some(step), Some(how)) => format!("{step}{phase} ({how}), lower is better"),
                    _ => format!("{}, lower is better", row.label("task")),
                }
            },
            header,
            rows,
        });
    }
}

/// The study's table of a workload (002's TPS, CPU % and fsck time): one row per
/// configuration, one column per figure of the workload's whole-run results (rows without
/// dimensions, or of a client load's total), and the time of the filesystem check after it.
fn summary_table(model: &ReportModel, kind: &str, section: &mut Section) {
    // The one row of a table that is the whole run: no operation, phase, step, client or
    // sweep point of its own.
    let whole = |t: &'_ Table| -> Option<usize> {
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
    };
    let tables: Vec<(&Table, usize)> = model
        .tables
        .iter()
        .filter(|t| t.workload == kind)
        .filter_map(|t| Some((t, whole(t)?)))
        .collect();
    let Some(&(first, _)) = tables.first() else {
        return;
    };
    // One scale per column, chosen by its largest mean (as the charts choose theirs).
    let display = |t: &Table, row: usize| {
        let typical = t.rows[row]
            .cells
            .iter()
            .flatten()
            .map(|c| c.summary.mean.abs())
            .fold(0.0, f64::max);
        t.unit.display(typical)
    };
    let mut header: Vec<String> = tables
        .iter()
        .map(|&(t, row)| {
            let (_, unit) = display(t, row);
            if unit.is_empty() {
                t.metric.clone()
            } else {
                format!("{} [{unit}]", t.metric)
            }
        })
        .collect();
    header.push("fsck [s]".into());
    let fsck_of = |case_key: &str, run_id: i64| -> String {
        let times: Vec<f64> = model
            .cases()
            .filter(|c| c.key == case_key && c.run_id == run_id)
            .flat_map(|c| &c.samples)
            .filter_map(|s| s.target.as_ref()?["fsck"]["elapsed_ns"].as_f64())
            .collect();
        if times.is_empty() {
            "—".into()
        } else {
            format!(
                "{:.2}",
                times.iter().sum::<f64>() / times.len() as f64 / 1e9
            )
        }
    };
    let rows = first
        .columns
        .iter()
        .enumerate()
        .map(|(i, column)| {
            let mut cells: Vec<String> = tables
                .iter()
                .map(|&(t, row)| {
                    let (factor, _) = display(t, row);
                    match t.rows[row].cells.get(i).and_then(|c| c.as_ref()) {
                        Some(c) => match c.summary.ci95_half_width {
                            Some(h) => {
                                format!("{:.2} ± {:.2}", c.summary.mean / factor, h / factor)
                            }
                            None => format!("{:.2} (n=1)", c.summary.mean / factor),
                        },
                        None => "—".into(),
                    }
                })
                .collect();
            cells.push(fsck_of(&column.case_key, column.run_id));
            RowView {
                name: column.label.clone(),
                cells,
            }
        })
        .collect();
    section.tables.push(TableView {
        title: format!(
            "{}: every figure of the whole run per configuration (mean ± 95 % CI half-width), and the filesystem check after it",
            first.workload_names.join(", ")
        ),
        header,
        rows,
    });
}

/// Relative to the best per discipline (or to the baseline), as study 004 normalised: the
/// geometric mean over the workload's disciplines, per configuration.
fn relative_chart(
    standings: &Standings,
    workload: &str,
    baseline: Option<&str>,
) -> Option<ChartView> {
    let ds: Vec<_> = standings
        .disciplines
        .iter()
        .filter(|d| d.workload == workload)
        .collect();
    if ds.is_empty() {
        return None;
    }
    let mut labels: Vec<String> = Vec::new();
    for d in &ds {
        for e in &d.entries {
            if !labels.contains(&e.label) {
                labels.push(e.label.clone());
            }
        }
    }
    let values: Vec<(f64, Option<(f64, f64)>)> = labels
        .iter()
        .map(|label| {
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
            (geometric_mean(&rel).unwrap_or(0.0), None)
        })
        .collect();
    let against = baseline.map_or("the best of each discipline".to_string(), |b| b.to_string());
    let title = format!("{workload}: relative to {against}");
    Some(ChartView {
        svg: charts::bars(
            &Labels {
                title: &title,
                x: "configuration",
                y: "relative performance [ratio, 1 = reference]",
                direction: "higher is better",
            },
            &labels,
            &values,
        ),
        caption: format!(
            "{title}: geometric mean over {} disciplines of each configuration's figure relative to {against}, oriented so that higher is better (study 004's normalised view).",
            ds.len()
        ),
    })
}

fn case_row(case: &CaseView) -> BTreeMap<&'static str, String> {
    let target = case.samples.iter().find_map(|s| s.target.as_ref());
    let get = |path: &[&str]| {
        let mut v = target?;
        for p in path {
            v = v.get(p)?;
        }
        match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Null => None,
            other => Some(other.to_string()),
        }
    };
    let (ok, all) = case.counts();
    let mut row = BTreeMap::new();
    row.insert("label", case.key.clone());
    row.insert(
        "device",
        get(&["device", "path"])
            .map(|p| {
                let disk = match (
                    get(&["device", "disk", "name"]),
                    get(&["device", "disk", "model"]),
                ) {
                    (Some(name), Some(model)) => format!(" on {name} ({model})"),
                    (Some(name), None) => format!(" on {name}"),
                    _ => String::new(),
                };
                // An array: its layout and how many members.
                let array = get(&["device", "array", "layout"])
                    .map(|layout| {
                        let members = target
                            .and_then(|t| t["device"]["array"]["members"].as_array())
                            .map_or(0, Vec::len);
                        format!(", {layout} over {members} members")
                    })
                    .unwrap_or_default();
                format!(
                    "{p} ({}{array}){disk}",
                    get(&["device", "kind"]).unwrap_or_default()
                )
            })
            .unwrap_or_else(|| {
                if target.is_some() {
                    "memory".into()
                } else {
                    "the directory given".into()
                }
            }),
    );
    row.insert(
        "mkfs",
        get(&["mkfs", "command"]).unwrap_or_else(|| "-".into()),
    );
    row.insert(
        "mount",
        match (
            get(&["mount", "mount_options"]),
            get(&["mount", "super_options"]),
        ) {
            (Some(m), Some(s)) => format!("{m} ({s})"),
            (Some(m), None) => m,
            _ => case.config.mount_options.clone(),
        },
    );
    row.insert(
        "scheduler",
        get(&["scheduler", "in_force"]).unwrap_or_else(|| "-".into()),
    );
    row.insert(
        "cache",
        get(&["cache", "state"])
            .unwrap_or_else(|| case.axis(fsbench_model::CaseAxis::Cache).into()),
    );
    row.insert(
        "fsck",
        match (get(&["fsck", "clean"]), get(&["fsck", "command"])) {
            (Some(clean), Some(cmd)) => {
                format!(
                    "{} ({cmd})",
                    if clean == "true" { "clean" } else { "PROBLEMS" }
                )
            }
            _ => "-".into(),
        },
    );
    row.insert("ok", format!("{ok} of {all}"));
    row
}

impl Exporter for Html {
    fn write(&self, model: &ReportModel, out: &mut dyn Write) -> io::Result<()> {
        let standings = Standings::of(model, &self.options);
        let runs: Vec<_> = model
            .runs
            .iter()
            .map(|view| {
                let run = &view.run;
                let h = &run.host;
                let s = |k: &str| h[k].as_str().unwrap_or("?").to_string();
                minijinja::context! {
                    id => run.id,
                    plan => run.plan_name.clone(),
                    status => format!("{}{}", run.status.name(), view.scale_note()),
                    started => run.started_at.clone(),
                    finished => run.finished_at.clone(),
                    host => s("hostname"),
                    kernel => format!("{} {} ({})", s("kernel_release"), s("kernel_version"), s("machine")),
                    cpu => format!("{} ({} CPUs)", s("cpu_model"), h["cpus"]),
                    memory => format!("{:.1} GiB", h["memory_bytes"].as_f64().unwrap_or(0.0) / f64::from(1u32 << 30)),
                    clock => h["clock"].to_string(),
                    fsbench => run.fsbench_version.clone(),
                    cases => view.cases.iter().map(case_row).collect::<Vec<_>>(),
                }
            })
            .collect();
        let tool_versions: Vec<String> = {
            let mut v: Vec<String> = Vec::new();
            for case in model.cases() {
                if let Some(t) = case.samples.iter().find_map(|s| s.target.as_ref()) {
                    for tool in t["tool_versions"].as_array().into_iter().flatten() {
                        if let Some(s) = tool.as_str() {
                            if !v.iter().any(|x| x == s) {
                                v.push(s.to_string());
                            }
                        }
                    }
                }
            }
            v
        };
        let winners: Vec<_> = standings
            .disciplines
            .iter()
            .map(|d| {
                let best = d.entries.iter().find(|e| e.column == d.best).expect("best");
                let others: Vec<_> = d
                    .entries
                    .iter()
                    .filter(|e| e.column != d.best)
                    .map(|e| {
                        let class = match e.vs_best.map(|c| c.verdict) {
                            Some(Verdict::Tie) | Some(Verdict::Unknown) | None => "tie",
                            _ => "",
                        };
                        minijinja::context! {
                            label => e.label.clone(),
                            text => e.vs_best.as_ref().map_or("-".into(), |c| versus_text(d.direction, c)),
                            class => class,
                        }
                    })
                    .collect();
                minijinja::context! {
                    title => d.title(),
                    direction => d.direction.phrase(),
                    best => best.label.clone(),
                    value => value_text(d, best.mean),
                    others => others,
                }
            })
            .collect();
        let categories = standings.categories();
        let scores: Vec<_> = standings
            .scores
            .iter()
            .map(|s| {
                minijinja::context! {
                    label => s.label.clone(),
                    points => categories.iter().map(|c| s.points.get(c).map_or("-".into(), |p| format!("{p:.1} ({} disciplines)", s.placed[c]))).collect::<Vec<String>>(),
                    overall => format!("{:.2}", s.overall),
                    composite => s.composite.map_or("-".into(), |c| format!("{c:.3}")),
                }
            })
            .collect();
        let mut sections = Vec::new();
        for kind in model.kinds() {
            let mut section = Section {
                title: format!("Workload: {kind}"),
                ..Section::default()
            };
            let tables: Vec<&Table> = model
                .tables
                .iter()
                .filter(|t| t.workload == kind && t.main)
                .collect();
            for table in &tables {
                section.title = format!("Workload: {} ({kind})", table.workload_names.join(", "));
                if kind == "matrix" {
                    matrix_section(table, &mut section);
                } else {
                    // A plan may run a sweep and single loads of one kind (004's saturation
                    // curve beside dbench at 5 and 20): curves for the one, bars for the other.
                    sweep_charts(table, &mut section);
                    for row in table.rows.iter().filter(|r| charted(r)).take(60) {
                        let title = row.label(&table.metric);
                        section.charts.push(bar_chart(table, row, &title));
                    }
                }
                for workload in &table.workload_names {
                    if let Some(chart) =
                        relative_chart(&standings, workload, self.options.baseline.as_deref())
                    {
                        section.charts.push(chart);
                    }
                }
            }
            if kind == "task" {
                task_tables(model, &mut section);
            } else if kind != "matrix" {
                // Beside the main figure's saturation curve, the latency it costs: the median
                // and the 99th percentile against the swept setting (queue depth, rate, threads).
                for metric in ["latency_p50", "latency_p99"] {
                    if let Some(table) = model
                        .tables
                        .iter()
                        .find(|t| t.workload == kind && t.metric == metric)
                    {
                        sweep_charts(table, &mut section);
                    }
                }
                summary_table(model, kind, &mut section);
                latency_charts(model, kind, &mut section);
            }
            if section.charts.is_empty() && section.tables.is_empty() {
                section.note = "No sample measured anything.".into();
            }
            sections.push(section);
        }
        let comparison: Vec<_> = self
            .changes
            .iter()
            .map(|c| {
                let (factor, unit) = c.unit.display(c.base_mean.abs().max(c.mean.abs()));
                let pct = |v: f64| format!("{:+.1} %", (v - 1.0) * 100.0);
                minijinja::context! {
                    case => c.case_key.clone(),
                    figure => format!("{} {} ({})", c.workload, c.row, c.direction.phrase()),
                    runs => format!("{} -> {}", c.base_run, c.run),
                    before => format!("{} {unit}", fmt_number(c.base_mean / factor)),
                    after => format!("{} {unit}", fmt_number(c.mean / factor)),
                    change => pct(c.comparison.ratio),
                    interval => match (c.comparison.ci95_low, c.comparison.ci95_high) {
                        (Some(lo), Some(hi)) => format!("{} .. {}", pct(lo), pct(hi)),
                        _ => "too few repetitions".to_string(),
                    },
                    verdict => if c.is_worse() { "worse" } else if c.is_better() { "better" } else { "tie" },
                }
            })
            .collect();
        let problems: Vec<_> = model
            .problems
            .iter()
            .map(|p| {
                minijinja::context! {
                    case => p.case_key.clone(),
                    status => p.status.name(),
                    count => p.count,
                    reason => p.reason.clone(),
                }
            })
            .collect();
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
        let mut env = minijinja::Environment::new();
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
        env.add_template("report", TEMPLATE)
            .map_err(io::Error::other)?;
        let ranking_note = format!(
            "Points per placement in each discipline: with N configurations the best gets N points and the last 1; configurations that do not differ significantly share their places' points. Overall = Σ category weight × mean points per discipline of the category (weights: {}). Composite = geometric mean over every discipline of the figure relative to {} (above 1 is better).",
            standings.weights.iter().map(|(c, w)| format!("{} {w}", c.name())).collect::<Vec<_>>().join(", "),
            standings.baseline.as_deref().unwrap_or("the baseline"),
        );
        let pairing = standings.pairing_gain.map(|(g, n)| {
            format!(
                "Pairing by round: over {n} comparisons, the paired intervals are {:.0} % as wide as Welch's intervals on the same values (median). Below 100 %, the configurations of a round shared the machine's drift and pairing removed it; above, they did not, and pairing's fewer degrees of freedom cost more than it removed.",
                g * 100.0
            )
        });
        let html = env
            .get_template("report")
            .and_then(|t| {
                t.render(minijinja::context! {
                    title => title,
                    version => env!("CARGO_PKG_VERSION"),
                    runs => runs,
                    tools => tool_versions,
                    winners => winners,
                    pairing => pairing,
                    ranking_note => ranking_note,
                    categories => categories.iter().map(|c| format!("{} points (weight {})", c.name(), standings.weights[c])).collect::<Vec<_>>(),
                    baseline => standings.baseline.clone().unwrap_or_default(),
                    scores => scores,
                    sections => minijinja::value::Serde(&sections),
                    problems => problems,
                    comparison => comparison,
                })
            })
            .map_err(io::Error::other)?;
        out.write_all(html.as_bytes())
    }
}
