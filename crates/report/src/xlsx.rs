//! The XLSX workbook (rust_xlsxwriter): for a workload with a grid (its `GridView`: the
//! throughput matrix), one sheet per block laid out as iozone's Excel report — a block per
//! configuration, rows file size (KiB), columns record size (KiB), cells the mean in the grid's
//! first unit (KiB/s) — then the `verdict` (each discipline's winner or tie group and its
//! lead), the `ranking` with its rank intervals, what was `not measured` (one row per
//! configuration and reason), a study's figures and claims `then and now` with their verdicts
//! (crate::then_now), a `summary` sheet (every table's means and 95 % intervals) and a `tidy`
//! sheet with every stored value, one row per sample, result and measurement, as the CSV export.

use crate::export::{csv_row_values, Exporter};
use crate::findings::Findings;
use crate::model::{Row, Table};
use crate::sections::{self, Output};
use crate::text::sheet_name;
use fsbench_model::{Dim, DimValue};
use fsbench_workload::workload::{GridUnit, GridView};
use fsbench_workload::WorkloadSettings;
use rust_xlsxwriter::{Format, Workbook, XlsxError};
use std::io::{self, Write};

/// The XLSX exporter.
#[derive(Debug, Clone, Copy, Default)]
pub struct Xlsx;

/// A grid's row or column value in a cell: a size in KiB (iozone's Excel layout), a count,
/// or text.
fn write_dim(
    ws: &mut rust_xlsxwriter::Worksheet,
    row: u32,
    col: u16,
    value: &DimValue,
    format: &Format,
) -> Result<(), XlsxError> {
    match value {
        DimValue::Bytes(b) => ws.write_number_with_format(row, col, (*b / 1024) as f64, format)?,
        DimValue::Count(n) => ws.write_number_with_format(row, col, *n as f64, format)?,
        other => ws.write_string_with_format(row, col, other.to_string(), format)?,
    };
    Ok(())
}

/// Distinct values of a dimension among rows, in order of appearance (`sorted`: ascending).
fn dim_values(rows: &[&Row], dim: Dim, sorted: bool) -> Vec<DimValue> {
    let mut seen: Vec<DimValue> = Vec::new();
    for value in rows.iter().filter_map(|r| dim.get(&r.dims)) {
        if !seen.contains(&value) {
            seen.push(value);
        }
    }
    if sorted {
        seen.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    }
    seen
}

/// The sheets of a workload's grid (`GridView`), laid out as iozone's Excel report: a sheet
/// per block (the matrix's test), in it a block per configuration — rows by the grid's row
/// dimension, columns by its column dimension (sizes in KiB), cells the mean in the grid's
/// first unit.
fn grid_sheets(
    wb: &mut Workbook,
    table: &Table,
    view: &GridView,
    unit: &GridUnit,
    used: &mut Vec<String>,
) -> Result<(), XlsxError> {
    let bold = Format::new().set_bold();
    let all: Vec<&Row> = table.rows.iter().collect();
    let size = |dim: Dim, value: &DimValue| match value {
        DimValue::Bytes(_) => format!("{} (KiB)", dim.label()),
        _ => dim.label().to_string(),
    };
    for block in dim_values(&all, view.blocks, false) {
        let rows: Vec<&Row> = all
            .iter()
            .copied()
            .filter(|r| view.blocks.get(&r.dims).as_ref() == Some(&block))
            .collect();
        let ys = dim_values(&rows, view.rows, true);
        let xs = dim_values(&rows, view.columns, true);
        let (Some(y0), Some(x0)) = (ys.first(), xs.first()) else {
            continue;
        };
        let ws = wb.add_worksheet();
        ws.set_name(sheet_name(&block.to_string(), used))?;
        let mut at = 0u32;
        for (col, column) in table.columns.iter().enumerate() {
            if !rows.iter().any(|r| r.cells[col].is_some()) {
                continue;
            }
            ws.write_string_with_format(
                at,
                0,
                format!(
                    "{} — {} ({block}), {} in {} ({}); rows: {}, columns: {}",
                    column.label,
                    (view.block_title)(&block.to_string()),
                    table.metric,
                    unit.label,
                    unit.direction.phrase(),
                    size(view.rows, y0),
                    size(view.columns, x0),
                ),
                &bold,
            )?;
            at += 1;
            ws.write_string_with_format(
                at,
                0,
                format!("{} \\ {}", view.rows.label(), view.columns.label()),
                &bold,
            )?;
            for (j, x) in xs.iter().enumerate() {
                write_dim(ws, at, 1 + j as u16, x, &bold)?;
            }
            at += 1;
            for y in &ys {
                write_dim(ws, at, 0, y, &bold)?;
                for (j, x) in xs.iter().enumerate() {
                    let cell = rows
                        .iter()
                        .find(|r| {
                            view.rows.get(&r.dims).as_ref() == Some(y)
                                && view.columns.get(&r.dims).as_ref() == Some(x)
                        })
                        .and_then(|r| r.cells[col].as_ref());
                    if let Some(c) = cell {
                        ws.write_number(at, 1 + j as u16, (c.summary.mean / unit.divisor).round())?;
                    }
                }
                at += 1;
            }
            at += 2;
        }
    }
    Ok(())
}

fn workbook(findings: &Findings) -> Result<Vec<u8>, XlsxError> {
    let model = findings.model();
    let mut wb = Workbook::new();
    let mut used = Vec::new();
    let bold = Format::new().set_bold();
    for kind in model.kinds() {
        let Some(view) = WorkloadSettings::grid_of(kind) else {
            continue;
        };
        let unit = &view.units[0];
        if let Some(table) = model
            .tables
            .iter()
            .find(|t| t.workload == kind && t.metric == unit.metric)
        {
            grid_sheets(&mut wb, table, &view, unit, &mut used)?;
        }
    }
    for placed in sections::ordered(Output::Workbook) {
        placed.section.workbook(findings, &mut wb, &mut used)?;
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
    fn render(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        let bytes = workbook(findings).map_err(io::Error::other)?;
        out.write_all(&bytes)
    }
}
