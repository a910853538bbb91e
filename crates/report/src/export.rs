//! Exporters: one trait, rendering a [`ReportModel`] into any writer, and the file formats of
//! `fsbench export` — versioned JSON (`fsbench.run` v2: the whole model with its standings,
//! series included when loaded), tidy CSV (v5: one row per sample, result and measurement,
//! every case axis and dimension a column) and the long-form series CSV ([`SeriesCsv`]: one row
//! per point).

use crate::findings::{Findings, Options};
use crate::model::ReportModel;
use crate::sections::{self, Output};
use fsbench_model::{CaseAxis, Dim, DimValue};
use std::borrow::Cow;
use std::io::{self, Write};

/// Renders a report model. Exporters write into any `io::Write`; they never decide file names
/// or print on their own.
pub trait Exporter {
    /// The options its standings are ranked with (by default: the first configuration the
    /// baseline, every category weighing 1).
    fn options(&self) -> Options {
        Options::default()
    }

    /// Renders a model's findings (the model is `findings.model()`), reading each finding
    /// rather than computing it.
    fn render(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()>;

    /// Renders a model with the findings found for this exporter's options.
    fn write(&self, model: &ReportModel, out: &mut dyn Write) -> io::Result<()> {
        self.render(&Findings::new(model, &self.options()), out)
    }
}

/// The whole model as JSON (schema `fsbench.run`, version 2), with what every report says
/// of it: the members of the sections that have one (`crate::sections`, in the JSON's order:
/// the standings, each filesystem against its bare device, a study's figures then and now).
pub struct Json;

/// A JSON error as the I/O error it is when it is one (a closed pipe is the reader's choice).
fn json_error(e: serde_json::Error) -> io::Error {
    match e.io_error_kind() {
        Some(kind) => io::Error::new(kind, e),
        None => io::Error::other(e),
    }
}

impl Exporter for Json {
    fn render(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        // The model's members, then each section's, as one object written pretty: the
        // model's closing brace gives way to the sections' members, each value indented one
        // level deeper (pretty JSON breaks lines between tokens only).
        let mut document = serde_json::to_string_pretty(findings.model()).map_err(json_error)?;
        let close = document.rfind('}').expect("an object");
        document.truncate(close.saturating_sub(1));
        for placed in sections::ordered(Output::Json) {
            if let Some(member) = placed.section.json(findings).map_err(json_error)? {
                let key = serde_json::to_string(member.key).map_err(json_error)?;
                document.push_str(&format!(
                    ",\n  {key}: {}",
                    member.value.replace('\n', "\n  ")
                ));
            }
        }
        document.push_str("\n}");
        writeln!(out, "{document}")
    }
}

/// Tidy CSV (version 5, docs/results-schema.md): one row per sample × result × measurement. A sample without results
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

/// A text cell (a name, a reason: never a number, which [`CsvValue::Number`] writes as it is):
/// one that starts with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, so
/// a spreadsheet shows it as text instead of running it as a formula (OWASP's "CSV injection";
/// `=cmd|' /c calc'!A0` in a plan name); quoted when it holds a comma, quote or line break.
fn field(text: &str) -> String {
    let neutral = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        Cow::Owned(format!("'{text}"))
    } else {
        Cow::Borrowed(text)
    };
    if neutral.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", neutral.replace('"', "\"\""))
    } else {
        neutral.into_owned()
    }
}

/// One value of a tidy row: text, or a number (which the XLSX keeps as a number, and the CSV
/// writes as it is, `-1.5` included: only text is neutralised against formulas).
#[derive(Debug, Clone, PartialEq)]
pub enum CsvValue {
    Text(String),
    Number(f64),
}

fn dim_value(value: Option<DimValue>) -> CsvValue {
    match value {
        None => CsvValue::Text(String::new()),
        Some(DimValue::Text(t)) => CsvValue::Text(t),
        Some(DimValue::Bytes(n) | DimValue::Count(n)) => CsvValue::Number(n as f64),
        Some(DimValue::Sweep(p, v)) => CsvValue::Text(format!("{p}={v}")),
    }
}

/// The tidy rows (one per sample x result x measurement; a sample or result without any has
/// one row with empty dimension and metric columns), in the order of [`csv_header`].
pub fn csv_row_values(model: &ReportModel) -> Vec<Vec<CsvValue>> {
    let text = |t: &str| CsvValue::Text(t.to_string());
    let empty = || CsvValue::Text(String::new());
    let mut rows = Vec::new();
    for case in model.cases() {
        let fixed: Vec<CsvValue> = [CsvValue::Number(case.run_id as f64), text(&case.key)]
            .into_iter()
            .chain(CaseAxis::ALL.map(|axis| text(case.axis(axis))))
            .collect();
        for s in &case.samples {
            let mut head = fixed.clone();
            head.extend([
                CsvValue::Number(f64::from(s.repetition)),
                text(s.status.name()),
                text(&reason_shown(s)),
            ]);
            let no_dims = || (0..Dim::ALL.len()).map(|_| empty()).collect::<Vec<_>>();
            let no_metric = || (0..5).map(|_| empty()).collect::<Vec<_>>();
            if s.results.is_empty() {
                rows.push([head.clone(), no_dims(), no_metric()].concat());
            }
            for r in &s.results {
                let dims: Vec<CsvValue> = Dim::ALL.map(|d| dim_value(d.get(&r.dims))).to_vec();
                if r.measurements.is_empty() {
                    rows.push([head.clone(), dims.clone(), no_metric()].concat());
                }
                for m in &r.measurements {
                    let measurement = vec![
                        text(&m.metric),
                        CsvValue::Number(m.value),
                        text(m.unit.name()),
                        text(m.direction.name()),
                        text(if m.main { "true" } else { "false" }),
                    ];
                    rows.push([head.clone(), dims.clone(), measurement].concat());
                }
            }
        }
    }
    rows
}

impl Exporter for Csv {
    fn render(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        let model = findings.model();
        writeln!(out, "{}", csv_header())?;
        for row in csv_row_values(model) {
            let line: Vec<String> = row
                .into_iter()
                .map(|v| match v {
                    CsvValue::Text(t) => field(&t),
                    CsvValue::Number(n) => n.to_string(),
                })
                .collect();
            writeln!(out, "{}", line.join(","))?;
        }
        Ok(())
    }
}

/// A sample's reason as the CSV shows it: with " (not retried)" when the sample was not tried
/// because its case was known unsupported (the store keeps that as a flag of its own).
fn reason_shown(sample: &fsbench_store::Sample) -> String {
    let reason = sample.reason.as_deref().unwrap_or("");
    if sample.not_retried {
        format!("{reason} (not retried)")
    } else {
        reason.to_string()
    }
}

/// Every loaded series as long-form CSV (docs/results-schema.md, "Series"): one row per point
/// — its sample, what it measures, when (seconds since the sample's monitors started), over how
/// long, its value and unit — ready to plot (a count's rate is value / duration_s).
pub struct SeriesCsv;

/// The series CSV's header, in order.
pub const SERIES_HEADER: &str = "run_id,case_key,repetition,sample_id,series,source,phase,label,subject,metric,time_s,duration_s,value,unit";

impl Exporter for SeriesCsv {
    fn render(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        let model = findings.model();
        writeln!(out, "{SERIES_HEADER}")?;
        for case in model.cases() {
            for sample in &case.samples {
                for s in &sample.series {
                    let head = [
                        case.run_id.to_string(),
                        field(&case.key),
                        sample.repetition.to_string(),
                        sample.id.to_string(),
                        field(&s.name()),
                        field(&s.source),
                        s.phase.map(|p| p.to_string()).unwrap_or_default(),
                        field(&s.label),
                        field(&s.subject),
                        field(&s.metric),
                    ]
                    .join(",");
                    for p in &s.points {
                        writeln!(
                            out,
                            "{head},{},{},{},{}",
                            p.t_ns() as f64 / 1e9,
                            p.dt_ns() as f64 / 1e9,
                            p.value(),
                            s.unit.name()
                        )?;
                    }
                }
            }
        }
        Ok(())
    }
}
