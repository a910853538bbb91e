//! The pieces of the report model and how they are built from stored runs: a run with its
//! cases and their samples, the configurations (every axis but the workload: one label and one
//! colour each), the summary tables (one per workload kind, metric and unit; rows are result
//! dimensions, columns are cases, cells are means with their confidence intervals) and what
//! was not measured per configuration and reason. [`crate::model::ReportModel`] holds them.

use fsbench_analysis::Summary;
use fsbench_model::{CaseAxis, CaseConfig, Dim, Dims, Direction, Unit};
use fsbench_store::{Outcome, Run, Sample};
use serde::{Serialize, Serializer};
use std::collections::{BTreeMap, HashMap};

/// A configuration of a run: its value on every axis but the workload. Every report names it
/// by its label and draws it in the colour of its index.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Configuration {
    pub run_id: i64,
    /// The axes that vary among the report's configurations (the filesystem always), led by
    /// `run N` when the report has several runs: `ext4 mount=noatime`.
    pub label: String,
    /// Some sample of it measured something.
    pub measured: bool,
    /// It is the bare device (`raw`): a baseline the filesystems' results are set against
    /// (`efficiency`), not a contender in the verdicts and rankings.
    pub bare: bool,
}

/// What was not measured, per configuration, outcome and reason.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotMeasured {
    pub run_id: i64,
    /// The configuration's label.
    pub configuration: String,
    pub status: Outcome,
    pub reason: String,
    /// Its samples with this outcome and reason, over every workload.
    pub samples: usize,
    /// The workloads they were of, in order.
    pub workloads: Vec<String>,
}

/// A run as stored, with its cases.
#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    #[serde(flatten)]
    pub run: Run,
    pub cases: Vec<CaseView>,
}

impl RunView {
    /// The scale the run ran at (1 when it was not scaled): every report states it, since
    /// sizes and durations shrank with it.
    pub fn scale(&self) -> f64 {
        self.run.scale.unwrap_or(1.0)
    }

    /// What changed how the run ran, after its status: ", at scale F" when it was scaled, ",
    /// no md here: one device, not RAID 0" when its md arrays ran on one device each; else
    /// nothing.
    pub fn conditions_note(&self) -> String {
        let scale = self.scale();
        let mut note = String::new();
        if scale != 1.0 {
            note.push_str(&format!(", at scale {scale}"));
        }
        if self.cases.iter().any(|c| c.config.one_device_for.is_some()) {
            note.push_str(&format!(", {}", fsbench_model::NO_MD));
        }
        note
    }
}

/// A case: its key, its value on every axis, its configuration and workload as stored, and
/// its samples in repetition order (each with its typed results, seed and warnings).
#[derive(Debug, Clone, Serialize)]
pub struct CaseView {
    pub run_id: i64,
    pub id: i64,
    pub key: String,
    pub position: i64,
    #[serde(serialize_with = "axis_map")]
    pub axes: BTreeMap<CaseAxis, String>,
    /// The workload's kind (`matrix`, `sleep`); its name in the plan is the workload axis.
    pub kind: String,
    pub config: CaseConfig,
    pub workload: serde_json::Value,
    pub samples: Vec<Sample>,
    /// Its configuration: an index into the model's `configurations`.
    pub configuration: usize,
}

impl CaseView {
    pub fn axis(&self, axis: CaseAxis) -> &str {
        self.axes.get(&axis).map_or("", String::as_str)
    }

    /// (ok samples, all samples).
    pub fn counts(&self) -> (usize, usize) {
        let ok = self
            .samples
            .iter()
            .filter(|s| s.status == Outcome::Ok)
            .count();
        (ok, self.samples.len())
    }
}

/// A column of a table: one case of one run, labelled by the axes that vary in the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    pub run_id: i64,
    pub case_key: String,
    pub label: String,
    /// The plan's name of the column's workload.
    pub workload: String,
    /// The label without the workload: the configuration alone (what rankings rank), the
    /// same in every table.
    pub config_label: String,
    /// Its configuration: an index into the model's `configurations` (and its colour).
    pub configuration: usize,
    /// The case's (ok, all) sample counts.
    pub ok: usize,
    pub samples: usize,
}

/// One metric of one workload kind in one unit, over every case of that kind.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    /// The workload kind.
    pub workload: String,
    /// The names the plans gave the workloads of its columns, in order of appearance.
    pub workload_names: Vec<String>,
    pub metric: String,
    pub unit: Unit,
    pub direction: Direction,
    /// The workload's main figure (what the terminal summary shows).
    pub main: bool,
    pub columns: Vec<Column>,
    #[serde(serialize_with = "axis_list")]
    pub varying_axes: Vec<CaseAxis>,
    /// The dimensions that differ between rows.
    pub varying_dims: Vec<Dim>,
    pub rows: Vec<Row>,
}

/// The results that share their dimensions, one cell per column.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub dims: Dims,
    pub cells: Vec<Option<Cell>>,
}

impl Row {
    /// The row's name: its dimensions (`write 16m 4k`), or without any the metric's as a reader
    /// knows it (`fsbench_model::metric_label`: `time slept`).
    pub fn label(&self, metric: &str) -> String {
        let label = self.dims.label();
        if label.is_empty() {
            fsbench_model::metric_label(metric).into_owned()
        } else {
            label
        }
    }
}

/// A metric's values over the `ok` samples of one case: mean, spread, 95 % CI, n.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    #[serde(flatten)]
    pub summary: Summary,
    /// Each value with the repetition (round) it was measured in, for comparisons paired by
    /// round (not exported: the samples carry them).
    #[serde(skip)]
    pub values: Vec<(u32, f64)>,
}

/// Samples of a case that ended other than `ok`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    pub run_id: i64,
    pub case_key: String,
    pub status: Outcome,
    pub count: usize,
    /// The first sample's reason.
    pub reason: String,
}

fn axis_map<S: Serializer>(axes: &BTreeMap<CaseAxis, String>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(axes.iter().map(|(axis, value)| (axis.column(), value)))
}

fn axis_list<S: Serializer>(axes: &[CaseAxis], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(axes.iter().map(|axis| axis.column()))
}

/// A stored case's value on one axis: the workload's name from its JSON, the rest from its
/// configuration.
pub(crate) fn axis_value(
    config: &CaseConfig,
    workload: &serde_json::Value,
    axis: CaseAxis,
) -> String {
    config
        .value(axis)
        .unwrap_or_else(|| workload["name"].as_str().unwrap_or("?").to_string())
}

/// A table while it is built: rows by their dimensions, values per (row, column).
struct Builder {
    table: Table,
    row_of: HashMap<String, usize>,
    values: HashMap<(usize, usize), Vec<(u32, f64)>>,
}

/// The configurations of every run's cases (every axis but the workload), each case's set to
/// its index.
pub(crate) fn configurations(runs: &mut [RunView]) -> Vec<Configuration> {
    let (labels, _) = {
        let cases: Vec<&CaseView> = runs.iter().flat_map(|r| &r.cases).collect();
        labels(&cases, false)
    };
    let mut out: Vec<Configuration> = Vec::new();
    for (case, label) in runs.iter_mut().flat_map(|r| &mut r.cases).zip(labels) {
        let measured = case.samples.iter().any(|s| s.status == Outcome::Ok);
        let at = match out
            .iter()
            .position(|c| c.run_id == case.run_id && c.label == label)
        {
            Some(at) => at,
            None => {
                out.push(Configuration {
                    run_id: case.run_id,
                    label,
                    measured: false,
                    bare: fsbench_testbed::fs::by_name(&case.config.filesystem)
                        .is_some_and(|fs| !fs.capabilities().filesystem),
                });
                out.len() - 1
            }
        };
        out[at].measured |= measured;
        case.configuration = at;
    }
    out
}

/// What was not measured, per configuration, outcome and reason (the first sample's reason
/// of each case, as `problems` has it).
pub(crate) fn not_measured(runs: &[RunView], configurations: &[Configuration]) -> Vec<NotMeasured> {
    let mut out: Vec<NotMeasured> = Vec::new();
    for case in runs.iter().flat_map(|r| &r.cases) {
        let mut seen: Vec<(Outcome, String)> = Vec::new();
        for s in case.samples.iter().filter(|s| s.status != Outcome::Ok) {
            let reason = match seen.iter().find(|(o, _)| *o == s.status) {
                Some((_, first)) => first.clone(),
                None => {
                    let first = s.reason.clone().unwrap_or_default();
                    seen.push((s.status, first.clone()));
                    first
                }
            };
            let configuration = &configurations[case.configuration].label;
            let workload = case.axis(CaseAxis::Workload).to_string();
            let line = out.iter_mut().find(|n| {
                n.run_id == case.run_id
                    && &n.configuration == configuration
                    && n.status == s.status
                    && n.reason == reason
            });
            match line {
                Some(line) => {
                    line.samples += 1;
                    if !line.workloads.contains(&workload) {
                        line.workloads.push(workload);
                    }
                }
                None => out.push(NotMeasured {
                    run_id: case.run_id,
                    configuration: configuration.clone(),
                    status: s.status,
                    reason,
                    samples: 1,
                    workloads: vec![workload],
                }),
            }
        }
    }
    out
}

/// The labels of `cases` by the axes that vary among them (the filesystem always), and those
/// axes; the run id leads when the cases come from more than one run.
fn labels(cases: &[&CaseView], with_workload: bool) -> (Vec<String>, Vec<CaseAxis>) {
    let varying: Vec<CaseAxis> = CaseAxis::ALL
        .into_iter()
        .filter(|&axis| with_workload || axis != CaseAxis::Workload)
        .filter(|&axis| {
            let mut seen: Vec<&str> = cases.iter().map(|c| c.axis(axis)).collect();
            seen.sort_unstable();
            seen.dedup();
            seen.len() > 1 || axis == CaseAxis::Filesystem
        })
        .collect();
    let runs = {
        let mut ids: Vec<i64> = cases.iter().map(|c| c.run_id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len()
    };
    let labels = cases
        .iter()
        .map(|c| {
            let axes = varying
                .iter()
                .map(|&axis| format!("{}{}", axis.label_prefix(), c.axis(axis)));
            let run = (runs > 1).then(|| format!("run {}", c.run_id));
            run.into_iter().chain(axes).collect::<Vec<_>>().join(" ")
        })
        .collect();
    (labels, varying)
}

pub(crate) fn tables(runs: &[RunView], configurations: &[Configuration]) -> Vec<Table> {
    let cases: Vec<&CaseView> = runs.iter().flat_map(|r| &r.cases).collect();
    let mut kinds: Vec<&str> = Vec::new();
    for case in &cases {
        if !kinds.contains(&case.kind.as_str()) {
            kinds.push(&case.kind);
        }
    }
    let mut out = Vec::new();
    for kind in kinds {
        let columns: Vec<&CaseView> = cases.iter().copied().filter(|c| c.kind == kind).collect();
        let (labels, varying_axes) = labels(&columns, true);
        let mut names: Vec<String> = Vec::new();
        for c in &columns {
            let name = c.axis(CaseAxis::Workload).to_string();
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let column_list: Vec<Column> = columns
            .iter()
            .zip(labels)
            .map(|(c, label)| {
                let (ok, samples) = c.counts();
                Column {
                    run_id: c.run_id,
                    case_key: c.key.clone(),
                    label,
                    workload: c.axis(CaseAxis::Workload).to_string(),
                    config_label: configurations[c.configuration].label.clone(),
                    configuration: c.configuration,
                    ok,
                    samples,
                }
            })
            .collect();
        let mut builders: Vec<Builder> = Vec::new();
        let mut builder_of: HashMap<(String, Unit), usize> = HashMap::new();
        for (col, case) in columns.iter().enumerate() {
            for sample in &case.samples {
                let ok = sample.status == Outcome::Ok;
                for result in &sample.results {
                    let dims_key = serde_json::to_string(&result.dims).unwrap_or_default();
                    for m in &result.measurements {
                        let b = *builder_of
                            .entry((m.metric.to_string(), m.unit))
                            .or_insert_with(|| {
                                builders.push(Builder {
                                    table: Table {
                                        workload: kind.to_string(),
                                        workload_names: names.clone(),
                                        metric: m.metric.to_string(),
                                        unit: m.unit,
                                        direction: m.direction,
                                        main: m.main,
                                        columns: column_list.clone(),
                                        varying_axes: varying_axes.clone(),
                                        varying_dims: Vec::new(),
                                        rows: Vec::new(),
                                    },
                                    row_of: HashMap::new(),
                                    values: HashMap::new(),
                                });
                                builders.len() - 1
                            });
                        let builder = &mut builders[b];
                        builder.table.main |= m.main;
                        let rows = &mut builder.table.rows;
                        let row = *builder.row_of.entry(dims_key.clone()).or_insert_with(|| {
                            rows.push(Row {
                                dims: result.dims.clone(),
                                cells: Vec::new(),
                            });
                            rows.len() - 1
                        });
                        if ok && m.value.is_finite() {
                            builder
                                .values
                                .entry((row, col))
                                .or_default()
                                .push((sample.repetition, m.value));
                        }
                    }
                }
            }
        }
        for mut b in builders {
            let n = b.table.columns.len();
            for (i, row) in b.table.rows.iter_mut().enumerate() {
                row.cells = (0..n)
                    .map(|col| {
                        let values = b.values.remove(&(i, col)).unwrap_or_default();
                        let plain: Vec<f64> = values.iter().map(|(_, v)| *v).collect();
                        Summary::of(&plain).map(|summary| Cell { summary, values })
                    })
                    .collect();
            }
            b.table.varying_dims = Dim::ALL
                .into_iter()
                .filter(|d| {
                    let first = b.table.rows.first().map(|r| d.get(&r.dims));
                    b.table.rows.iter().any(|r| Some(d.get(&r.dims)) != first)
                })
                .collect();
            out.push(b.table);
        }
    }
    out
}
