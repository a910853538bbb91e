//! A stored campaign run, rendered: the terminal summary (per configuration and main metric:
//! mean, 95 % confidence interval, n, unit, direction; every sample that is not `ok` listed with
//! its reason), and the exports of `fsbench export` (versioned JSON, tidy CSV).

use fsbench_analysis::Summary;
use fsbench_model::{CaseAxis, DEFAULT_SCHEDULER};
use fsbench_store::{CaseData, Outcome, RunData};
use fsbench_workload::metric;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

pub const SCHEMA: &str = "fsbench.run";
pub const SCHEMA_VERSION: u32 = 1;

/// Values of one metric over the ok samples of a case.
fn values(case: &CaseData, metric: &str) -> Vec<f64> {
    case.samples
        .iter()
        .filter(|s| s.status == Outcome::Ok)
        .filter_map(|s| s.metrics.iter().find(|m| m.name == metric).map(|m| m.value))
        .collect()
}

/// A stored case's value on one axis.
fn axis_value(case: &CaseData, axis: CaseAxis) -> String {
    if axis == CaseAxis::Workload {
        return workload_name(case);
    }
    match &case.case.config[axis.column()] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => DEFAULT_SCHEDULER.into(),
        other => other.to_string(),
    }
}

fn workload_name(case: &CaseData) -> String {
    case.case.workload["name"]
        .as_str()
        .unwrap_or("?")
        .to_string()
}

/// Short labels naming only the configuration axes that vary across the run's cases (the
/// filesystem always); the workload heads its own table.
fn labels(cases: &[&CaseData]) -> Vec<String> {
    let varying: Vec<CaseAxis> = CaseAxis::ALL
        .into_iter()
        .filter(|&axis| axis != CaseAxis::Workload)
        .filter(|&axis| {
            let mut seen: Vec<String> = cases.iter().map(|c| axis_value(c, axis)).collect();
            seen.sort();
            seen.dedup();
            seen.len() > 1 || axis == CaseAxis::Filesystem
        })
        .collect();
    cases
        .iter()
        .map(|c| {
            varying
                .iter()
                .map(|&axis| format!("{}{}", axis.label_prefix(), axis_value(c, axis)))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// Scale and label for showing a stored unit.
fn display(unit: &str, mean: f64) -> (f64, &'static str) {
    match unit {
        "B/s" => (1.0 / (1024.0 * 1024.0), "MiB/s"),
        "ns" if mean >= 1e8 => (1e-9, "s"),
        "ns" => (1e-3, "µs"),
        "ops/s" => (1.0, "ops/s"),
        _ => (1.0, "?"),
    }
}

fn number(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The terminal summary of a run.
pub fn write_summary(out: &mut dyn Write, data: &RunData, db: &Path) -> io::Result<()> {
    let run = &data.run;
    let samples: Vec<_> = data.cases.iter().flat_map(|c| &c.samples).collect();
    let count = |status: Outcome| samples.iter().filter(|s| s.status == status).count();
    writeln!(
        out,
        "Run {} \"{}\" ({}): {} samples: {} ok, {} unsupported, {} failed, {} timeout",
        run.id,
        run.plan_name,
        run.status,
        samples.len(),
        count(Outcome::Ok),
        count(Outcome::Unsupported),
        count(Outcome::Failed),
        count(Outcome::Timeout)
    )?;
    let mut workloads: Vec<String> = data.cases.iter().map(workload_name).collect();
    workloads.dedup();
    let mut seen = Vec::new();
    for workload in workloads {
        if seen.contains(&workload) {
            continue;
        }
        seen.push(workload.clone());
        let cases: Vec<&CaseData> = data
            .cases
            .iter()
            .filter(|c| workload_name(c) == workload)
            .collect();
        let labels = labels(&cases);
        let mut metrics: Vec<(String, String, bool)> = Vec::new();
        for case in &cases {
            for sample in &case.samples {
                for m in sample.metrics.iter().filter(|m| metric::is_main(&m.name)) {
                    if !metrics.iter().any(|(n, _, _)| *n == m.name) {
                        metrics.push((m.name.clone(), m.unit.clone(), m.higher_is_better));
                    }
                }
            }
        }
        if metrics.is_empty() {
            writeln!(out, "\n{workload}: no sample measured anything")?;
            continue;
        }
        // Group metrics that share a unit and direction into one table.
        let (unit, higher) = (metrics[0].1.clone(), metrics[0].2);
        let first_mean = Summary::of(&values(cases[0], &metrics[0].0)).map_or(0.0, |s| s.mean);
        let (scale, unit_label) = display(&unit, first_mean);
        writeln!(
            out,
            "\n{workload} [{unit_label}, {}; each cell: mean ± half-width of the 95 % confidence interval]",
            if higher { "higher is better" } else { "lower is better" }
        )?;
        let cells: Vec<Vec<String>> = metrics
            .iter()
            .map(|(name, _, _)| {
                cases
                    .iter()
                    .map(|c| match Summary::of(&values(c, name)) {
                        None => "—".to_string(),
                        Some(s) => match s.ci95_half_width {
                            Some(h) => {
                                format!("{} ± {}", number(s.mean * scale), number(h * scale))
                            }
                            None => format!("{} (n=1)", number(s.mean * scale)),
                        },
                    })
                    .collect()
            })
            .collect();
        let name_width = metrics
            .iter()
            .map(|(n, _, _)| metric::row_label(n).len())
            .max()
            .unwrap_or(4)
            .max(6);
        let width = cells
            .iter()
            .flatten()
            .map(|c| c.chars().count())
            .chain(labels.iter().map(|l| l.chars().count()))
            .max()
            .unwrap_or(8);
        write!(out, "{:<name_width$}", "")?;
        for label in &labels {
            write!(out, "  {label:>width$}")?;
        }
        writeln!(out)?;
        for ((name, _, _), row) in metrics.iter().zip(&cells) {
            write!(out, "{:<name_width$}", metric::row_label(name))?;
            for cell in row {
                write!(out, "  {cell:>width$}")?;
            }
            writeln!(out)?;
        }
        write!(out, "{:<name_width$}", "n")?;
        for case in &cases {
            let n = case
                .samples
                .iter()
                .filter(|s| s.status == Outcome::Ok)
                .count();
            write!(
                out,
                "  {:>width$}",
                format!("{n} of {}", case.samples.len())
            )?;
        }
        writeln!(out)?;
    }
    let mut problems: BTreeMap<(String, &'static str), (usize, String)> = BTreeMap::new();
    for case in &data.cases {
        for s in case.samples.iter().filter(|s| s.status != Outcome::Ok) {
            let entry = problems
                .entry((case.case.key.clone(), s.status.name()))
                .or_insert((0, s.reason.clone().unwrap_or_default()));
            entry.0 += 1;
        }
    }
    if !problems.is_empty() {
        writeln!(out, "\nNot measured:")?;
        for ((key, status), (n, reason)) in problems {
            writeln!(
                out,
                "  {key}: {status} ×{n}: {}",
                reason.trim_end_matches(" (not retried)")
            )?;
        }
    }
    writeln!(
        out,
        "\nStored as run {} in {} (`fsbench export {} --json FILE`).",
        run.id,
        db.display(),
        run.id
    )
}

#[derive(Serialize)]
struct ExportCase<'a> {
    #[serde(flatten)]
    case: &'a CaseData,
    /// Per metric over the ok samples: n, mean, stddev, ci95_half_width, min, max.
    summaries: BTreeMap<String, Summary>,
}

#[derive(Serialize)]
struct Export<'a> {
    schema: &'static str,
    schema_version: u32,
    run: &'a fsbench_store::Run,
    cases: Vec<ExportCase<'a>>,
}

/// The whole run as JSON (schema `fsbench.run`), with per-metric summaries.
pub fn write_json(out: &mut dyn Write, data: &RunData) -> io::Result<()> {
    let cases = data
        .cases
        .iter()
        .map(|case| {
            let mut names: Vec<&str> = case
                .samples
                .iter()
                .flat_map(|s| s.metrics.iter().map(|m| m.name.as_str()))
                .collect();
            names.sort_unstable();
            names.dedup();
            let summaries = names
                .into_iter()
                .filter_map(|n| Summary::of(&values(case, n)).map(|s| (n.to_string(), s)))
                .collect();
            ExportCase { case, summaries }
        })
        .collect();
    let export = Export {
        schema: SCHEMA,
        schema_version: SCHEMA_VERSION,
        run: &data.run,
        cases,
    };
    serde_json::to_writer_pretty(&mut *out, &export).map_err(io::Error::other)?;
    writeln!(out)
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Tidy CSV: one row per sample and metric (a sample without metrics has one row with an empty
/// metric, so failures stay visible).
pub fn write_csv(out: &mut dyn Write, data: &RunData) -> io::Result<()> {
    writeln!(
        out,
        "run_id,case_key,{},repetition,status,reason,metric,value,unit,higher_is_better",
        CaseAxis::ALL.map(CaseAxis::column).join(",")
    )?;
    for case in &data.cases {
        let fixed = [data.run.id.to_string(), case.case.key.clone()]
            .into_iter()
            .chain(CaseAxis::ALL.map(|axis| axis_value(case, axis)))
            .map(|f| csv_field(&f))
            .collect::<Vec<_>>()
            .join(",");
        for s in &case.samples {
            let head = format!(
                "{fixed},{},{},{}",
                s.repetition,
                s.status.name(),
                csv_field(s.reason.as_deref().unwrap_or(""))
            );
            if s.metrics.is_empty() {
                writeln!(out, "{head},,,,")?;
            }
            for m in &s.metrics {
                writeln!(
                    out,
                    "{head},{},{},{},{}",
                    csv_field(&m.name),
                    m.value,
                    m.unit,
                    m.higher_is_better
                )?;
            }
        }
    }
    Ok(())
}
