//! One run's results as grids on the terminal, laid out by its workload's
//! [`GridView`](fsbench_workload::workload::GridView): the matrix's iozone-style blocks (one per
//! phase, rows file sizes, columns record sizes). Only formatting; the values are stored ones.

use fsbench_model::{Dim, DimValue, ResultRecord};
use fsbench_workload::workload::{GridUnit, GridView};
use std::io::{self, Write};

/// The grid unit a user asked for (`--unit`), or what the grid offers.
pub fn unit<'v>(view: &'v GridView, key: Option<&str>) -> Result<&'v GridUnit, String> {
    match key {
        None => Ok(&view.units[0]),
        Some(key) => view.units.iter().find(|u| u.key == key).ok_or_else(|| {
            let keys: Vec<&str> = view.units.iter().map(|u| u.key).collect();
            format!("unknown unit '{key}': use {}", keys.join(", "))
        }),
    }
}

fn format(value: f64, decimals: usize) -> String {
    let decimals = if decimals > 0 && value.abs() < 10.0 {
        decimals + 1
    } else {
        decimals
    };
    format!("{value:.decimals$}")
}

/// Distinct values of a dimension, in the order the records have them (blocks) or sorted
/// (rows and columns).
fn values(records: &[&ResultRecord], dim: Dim, sorted: bool) -> Vec<DimValue> {
    let mut seen: Vec<DimValue> = Vec::new();
    for value in records.iter().filter_map(|r| dim.get(&r.dims)) {
        if !seen.contains(&value) {
            seen.push(value);
        }
    }
    if sorted {
        seen.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    }
    seen
}

/// Writes a line on the unit and then one block per value of `view.blocks`.
pub fn write_grids(
    out: &mut dyn Write,
    view: &GridView,
    unit: &GridUnit,
    records: &[ResultRecord],
    spread: bool,
) -> io::Result<()> {
    let spread = if spread { view.spread } else { None };
    let spread_note = spread.map_or(String::new(), |(_, what)| format!("; ±N% = {what}"));
    writeln!(
        out,
        "Values in {}, {}; {}{spread_note}.",
        unit.label,
        unit.direction.phrase(),
        view.note
    )?;
    let all: Vec<&ResultRecord> = records.iter().collect();
    let rows = values(&all, view.rows, true);
    let columns = values(&all, view.columns, true);
    for block in values(&all, view.blocks, false) {
        let cells: Vec<&ResultRecord> = all
            .iter()
            .copied()
            .filter(|r| view.blocks.get(&r.dims).as_ref() == Some(&block))
            .collect();
        let text = |r: &ResultRecord| -> String {
            let Some(m) = r.measurement(unit.metric) else {
                return "-".into();
            };
            let value = format(m.value / unit.divisor, unit.decimals);
            match spread.and_then(|(metric, _)| r.measurement(metric)) {
                Some(cv) => format!("{value}±{:.0}%", cv.value * 100.0),
                None => value,
            }
        };
        let width = cells
            .iter()
            .map(|c| text(c).chars().count())
            .max()
            .unwrap_or(1)
            .max(6);
        let name = block.to_string();
        writeln!(
            out,
            "\n{} ({name}) [{}, {}]",
            (view.block_title)(&name),
            unit.label,
            unit.direction.phrase()
        )?;
        let corner = format!("{}\\{}", view.rows.label(), view.columns.label());
        write!(out, "{corner:>12}")?;
        for column in &columns {
            write!(out, " {:>width$}", column.to_string())?;
        }
        writeln!(out)?;
        for row in &rows {
            let in_row: Vec<&ResultRecord> = cells
                .iter()
                .copied()
                .filter(|r| view.rows.get(&r.dims).as_ref() == Some(row))
                .collect();
            if in_row.is_empty() {
                continue;
            }
            write!(out, "{:>12}", row.to_string())?;
            for column in &columns {
                let cell = in_row
                    .iter()
                    .find(|r| view.columns.get(&r.dims).as_ref() == Some(column))
                    .map(|r| text(r))
                    .unwrap_or_default();
                write!(out, " {cell:>width$}")?;
            }
            writeln!(out)?;
        }
        writeln!(out, "{:>12} {}", "", (view.footer)(&cells))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsbench_workload::matrix::MatrixSettings;
    use fsbench_workload::workload::{Collect, Workload};
    use fsbench_workload::{Context, StopFlag};

    #[test]
    fn the_matrix_grid_has_a_block_per_phase_and_a_cell_per_result() {
        let dir = tempfile::tempdir().unwrap();
        let settings = MatrixSettings {
            tests: vec![fsbench_workload::matrix::MatrixTest::Write],
            file_sizes: "4k..8k".parse().unwrap(),
            record_sizes: "4k..8k".parse().unwrap(),
            min_time: "0".parse().unwrap(),
            ..MatrixSettings::default()
        };
        let mut sink = Collect::default();
        settings.run(&Context::default(), dir.path(), &StopFlag::new(), &mut sink);
        let view = MatrixSettings::grid().unwrap();
        assert!(unit(&view, Some("furlongs"))
            .unwrap_err()
            .contains("kib, mib, ops, us, p99"));
        let mut out = Vec::new();
        write_grids(
            &mut out,
            &view,
            unit(&view, None).unwrap(),
            &sink.records,
            true,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("Values in KiB/s, higher is better; each value is the rate over all passes of a cell; ±N% = coefficient"), "{text}");
        assert!(
            text.contains("\nWriter report (write) [KiB/s, higher is better]\n"),
            "{text}"
        );
        assert!(text.contains("\nRe-writer report (rewrite)"), "{text}");
        assert!(text.contains("file\\record"), "{text}");
        // Rows 4k and 8k; the 4k file has no 8k record.
        let block: Vec<&str> = text.split("\n\n").nth(1).unwrap().lines().collect();
        assert_eq!(block.len(), 5, "{block:?}");
        assert!(block[2].trim_start().starts_with("4k") && block[2].contains('%'));
        assert!(
            block[4].contains("passes per cell: 1..1; cache: "),
            "{block:?}"
        );
    }
}
