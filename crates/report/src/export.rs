//! Exporters: one trait, rendering a [`ReportModel`] into any writer, and the two file formats
//! of `fsbench export` — versioned JSON (`fsbench.run` v2: the whole model) and tidy CSV (v2:
//! one row per sample, result and measurement, every case axis and dimension a column).

use crate::model::ReportModel;
use fsbench_model::{CaseAxis, Dim, DimValue};
use std::io::{self, Write};

/// Renders a report model. Exporters write into any `io::Write`; they never decide file names
/// or print on their own.
pub trait Exporter {
    fn write(&self, model: &ReportModel, out: &mut dyn Write) -> io::Result<()>;
}

/// The whole model as JSON (schema `fsbench.run`, version 2).
pub struct Json;

impl Exporter for Json {
    fn write(&self, model: &ReportModel, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, model).map_err(io::Error::other)?;
        writeln!(out)
    }
}

/// Tidy CSV (version 2): one row per sample × result × measurement. A sample without results
/// (unsupported, failed, timeout) has one row with empty dimension and metric columns, so
/// failures stay visible.
pub struct Csv;

/// The CSV header, in order: run and case, every case axis, the sample, every dimension, the
/// measurement.
pub fn csv_header() -> String {
    ["run_id", "case_key"]
        .into_iter()
        .chain(CaseAxis::ALL.map(CaseAxis::column))
        .chain(["repetition", "status", "reason"])
        .chain(Dim::ALL.map(Dim::column))
        .chain(["metric", "value", "unit", "direction", "main"])
        .collect::<Vec<_>>()
        .join(",")
}

fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// A dimension as a CSV value: sizes and counts as plain integers.
fn dim_field(value: Option<DimValue>) -> String {
    match value {
        None => String::new(),
        Some(DimValue::Text(t)) => field(&t),
        Some(DimValue::Bytes(n) | DimValue::Count(n)) => n.to_string(),
        Some(DimValue::Sweep(p, v)) => field(&format!("{p}={v}")),
    }
}

impl Exporter for Csv {
    fn write(&self, model: &ReportModel, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "{}", csv_header())?;
        let no_dims = vec![String::new(); Dim::ALL.len()].join(",");
        for case in model.cases() {
            let fixed = [case.run_id.to_string(), case.key.clone()]
                .into_iter()
                .chain(CaseAxis::ALL.map(|axis| case.axis(axis).to_string()))
                .map(|f| field(&f))
                .collect::<Vec<_>>()
                .join(",");
            for s in &case.samples {
                let head = format!(
                    "{fixed},{},{},{}",
                    s.repetition,
                    s.status.name(),
                    field(s.reason.as_deref().unwrap_or(""))
                );
                if s.results.is_empty() {
                    writeln!(out, "{head},{no_dims},,,,,")?;
                }
                for r in &s.results {
                    let dims = Dim::ALL.map(|d| dim_field(d.get(&r.dims))).join(",");
                    if r.measurements.is_empty() {
                        writeln!(out, "{head},{dims},,,,,")?;
                    }
                    for m in &r.measurements {
                        writeln!(
                            out,
                            "{head},{dims},{},{},{},{},{}",
                            field(&m.metric),
                            m.value,
                            m.unit.name(),
                            m.direction.name(),
                            m.main
                        )?;
                    }
                }
            }
        }
        Ok(())
    }
}
