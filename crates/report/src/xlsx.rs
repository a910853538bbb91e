//! The XLSX workbook (rust_xlsxwriter): for the throughput matrix, one sheet per test laid out
//! as iozone's Excel report — a block per configuration, rows file size (KiB), columns record
//! size (KiB), cells the mean throughput in KiB/s — then a `summary` sheet (every table's means
//! and 95 % intervals) and a `tidy` sheet with every stored value, one row per sample, result
//! and measurement, as the CSV export.

use crate::export::{csv_row_values, Exporter};
use crate::model::{ReportModel, Table};
use rust_xlsxwriter::{Format, Workbook, XlsxError};
use std::io::{self, Write};

/// The XLSX exporter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Xlsx;

/// A sheet name Excel accepts: at most 31 characters, none of []:*?/\.
fn sheet_name(text: &str, used: &mut Vec<String>) -> String {
    let clean: String = text
        .chars()
        .map(|c| if "[]:*?/\\".contains(c) { '_' } else { c })
        .take(28)
        .collect();
    let mut name = clean.clone();
    let mut n = 2;
    while used.iter().any(|u| u.eq_ignore_ascii_case(&name)) {
        name = format!("{clean}-{n}");
        n += 1;
    }
    used.push(name.clone());
    name
}

/// The iozone sheets of a matrix throughput table.
fn matrix_sheets(
    wb: &mut Workbook,
    table: &Table,
    used: &mut Vec<String>,
) -> Result<(), XlsxError> {
    let bold = Format::new().set_bold();
    let mut phases: Vec<String> = Vec::new();
    for r in &table.rows {
        if let Some(p) = &r.dims.phase {
            if !phases.contains(p) {
                phases.push(p.clone());
            }
        }
    }
    for phase in phases {
        let rows: Vec<_> = table
            .rows
            .iter()
            .filter(|r| r.dims.phase.as_ref() == Some(&phase))
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
        let ws = wb.add_worksheet();
        ws.set_name(sheet_name(&phase, used))?;
        let mut at = 0u32;
        for (col, column) in table.columns.iter().enumerate() {
            ws.write_string_with_format(
                at,
                0,
                format!(
                    "{} — {phase} report, throughput in KiB/s (higher is better); rows: file size (KiB), columns: record size (KiB)",
                    column.label
                ),
                &bold,
            )?;
            at += 1;
            ws.write_string_with_format(at, 0, "file KiB \\ record KiB", &bold)?;
            for (j, r) in records.iter().enumerate() {
                ws.write_number_with_format(at, 1 + j as u16, (*r / 1024) as f64, &bold)?;
            }
            at += 1;
            for f in &files {
                ws.write_number_with_format(at, 0, (*f / 1024) as f64, &bold)?;
                for (j, r) in records.iter().enumerate() {
                    let cell = rows
                        .iter()
                        .find(|row| {
                            row.dims.file_size_bytes == Some(*f)
                                && row.dims.record_size_bytes == Some(*r)
                        })
                        .and_then(|row| row.cells[col].as_ref());
                    if let Some(c) = cell {
                        ws.write_number(at, 1 + j as u16, (c.summary.mean / 1024.0).round())?;
                    }
                }
                at += 1;
            }
            at += 2;
        }
    }
    Ok(())
}

fn workbook(model: &ReportModel) -> Result<Vec<u8>, XlsxError> {
    let mut wb = Workbook::new();
    let mut used = Vec::new();
    let bold = Format::new().set_bold();
    for table in model
        .tables
        .iter()
        .filter(|t| t.workload == "matrix" && t.main)
    {
        matrix_sheets(&mut wb, table, &mut used)?;
    }
    // Every table's means.
    let ws = wb.add_worksheet();
    ws.set_name(sheet_name("summary", &mut used))?;
    let header = [
        "workload",
        "metric",
        "unit",
        "direction",
        "row",
        "configuration",
        "n",
        "mean",
        "median",
        "stddev",
        "ci95_low",
        "ci95_high",
        "min",
        "max",
    ];
    for (j, h) in header.iter().enumerate() {
        ws.write_string_with_format(0, j as u16, *h, &bold)?;
    }
    let mut at = 1u32;
    for t in &model.tables {
        for row in &t.rows {
            for (col, cell) in t.columns.iter().zip(&row.cells) {
                let Some(c) = cell else { continue };
                let s = &c.summary;
                ws.write_string(at, 0, t.workload_names.join(", "))?;
                ws.write_string(at, 1, &t.metric)?;
                ws.write_string(at, 2, t.unit.name())?;
                ws.write_string(at, 3, t.direction.phrase())?;
                ws.write_string(at, 4, row.label(&t.metric))?;
                ws.write_string(at, 5, &col.label)?;
                ws.write_number(at, 6, s.n as f64)?;
                ws.write_number(at, 7, s.mean)?;
                ws.write_number(at, 8, s.median)?;
                ws.write_number(at, 9, s.stddev)?;
                if let (Some(lo), Some(hi)) = (s.ci95_low, s.ci95_high) {
                    ws.write_number(at, 10, lo)?;
                    ws.write_number(at, 11, hi)?;
                }
                ws.write_number(at, 12, s.min)?;
                ws.write_number(at, 13, s.max)?;
                at += 1;
            }
        }
    }
    // Every stored value, as the CSV.
    let ws = wb.add_worksheet();
    ws.set_name(sheet_name("tidy", &mut used))?;
    for (j, h) in crate::export::csv_header().split(',').enumerate() {
        ws.write_string_with_format(0, j as u16, h, &bold)?;
    }
    for (i, values) in csv_row_values(model).into_iter().enumerate() {
        for (j, v) in values.into_iter().enumerate() {
            let (r, c) = (1 + i as u32, j as u16);
            match v {
                crate::export::CsvValue::Number(n) => ws.write_number(r, c, n)?,
                crate::export::CsvValue::Text(t) if t.is_empty() => ws,
                crate::export::CsvValue::Text(t) => ws.write_string(r, c, t)?,
            };
        }
    }
    wb.save_to_buffer()
}

impl Exporter for Xlsx {
    fn write(&self, model: &ReportModel, out: &mut dyn Write) -> io::Result<()> {
        let bytes = workbook(model).map_err(io::Error::other)?;
        out.write_all(&bytes)
    }
}
