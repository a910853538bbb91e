//! One run's results as grids on the terminal, laid out by its workload's
//! [`GridView`](fsbench_workload::workload::GridView): the matrix's iozone-style blocks (one per
//! phase, rows file sizes, columns record sizes). Only formatting; the values are stored ones.

use crate::text::{wrap_text, WIDTH};
use fsbench_model::{metric_heading, metric_label, Dim, DimValue, ResultRecord};
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

/// One run's results as a table, for workloads without a grid: a row per result (labelled by
/// the dimensions that vary), a column per figure in `shown` (empty: every figure that has a
/// direction; facts such as counts are in the exports), each column in one readable unit.
pub fn write_table(
    out: &mut dyn Write,
    records: &[ResultRecord],
    shown: &[&str],
) -> io::Result<()> {
    let mut columns: Vec<(&str, fsbench_model::Unit, fsbench_model::Direction)> = Vec::new();
    for m in records.iter().flat_map(|r| &r.measurements) {
        let wanted = if shown.is_empty() {
            m.direction != fsbench_model::Direction::None
        } else {
            shown.contains(&m.metric.as_ref())
        };
        if wanted && !columns.iter().any(|c| c.0 == m.metric) {
            columns.push((&m.metric, m.unit, m.direction));
        }
    }
    if !shown.is_empty() {
        columns.sort_by_key(|c| shown.iter().position(|s| *s == c.0));
    }
    let all: Vec<&ResultRecord> = records.iter().collect();
    // A swept setting that is a dimension of its own (threads) is shown once, as the sweep.
    let swept: Option<&str> = records
        .iter()
        .find_map(|r| r.dims.sweep.as_ref())
        .map(|s| s.parameter.as_str());
    let varying: Vec<Dim> = Dim::ALL
        .into_iter()
        .filter(|&d| values(&all, d, false).len() > 1 && Some(d.column()) != swept)
        .collect();
    // Rows are told apart by the dimensions that vary; a lone row shows all of its own.
    let shown: Vec<Dim> = if varying.is_empty() {
        Dim::ALL.to_vec()
    } else {
        varying
    };
    let labels: Vec<String> = records
        .iter()
        .map(|r| {
            let label: Vec<String> = shown.iter().filter_map(|d| d.text(&r.dims)).collect();
            if label.is_empty() {
                "(all)".to_string()
            } else {
                label.join(" ")
            }
        })
        .collect();
    let label_width = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(1)
        .max(6);
    let mut cells: Vec<Vec<String>> = vec![Vec::new(); records.len()];
    let mut headers = Vec::new();
    for (metric, unit, direction) in &columns {
        let typical = records
            .iter()
            .filter_map(|r| r.measurement(metric))
            .map(|m| m.value.abs())
            .fold(0.0, f64::max);
        let (divisor, label) = unit.display(typical);
        let arrow = match direction {
            fsbench_model::Direction::Higher => "↑",
            fsbench_model::Direction::Lower => "↓",
            fsbench_model::Direction::None => "",
        };
        headers.push((metric_heading(metric, label), arrow));
        for (row, r) in records.iter().enumerate() {
            cells[row].push(r.measurement(metric).map_or("-".into(), |m| {
                let v = m.value / divisor;
                if v.abs() >= 100.0 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.2}")
                }
            }));
        }
    }
    let chars = |text: &str| text.chars().count();
    let cell_width = |i: usize| cells.iter().map(|row| chars(&row[i])).max().unwrap_or(1);
    let whole = |(name, arrow): &(String, &str)| chars(name) + 2 * usize::from(!arrow.is_empty());
    let mut widths: Vec<usize> = headers
        .iter()
        .enumerate()
        .map(|(i, h)| cell_width(i).max(whole(h)))
        .collect();
    // Each heading's lines in `w` columns, its arrow (which way is better) after its last word.
    let heading = |(name, arrow): &(String, &str), w: usize| {
        let mut lines = wrap_text("", name, 0, w);
        let last = lines.last_mut().expect("a line");
        if arrow.is_empty() {
        } else if chars(last) + 2 <= w {
            last.push(' ');
            last.push_str(arrow);
        } else {
            lines.push(arrow.to_string());
        }
        lines
    };
    let total = |widths: &[usize]| label_width + widths.iter().map(|w| 2 + w).sum::<usize>();
    // Too wide for the terminal: the headings wrap between their words over their columns'
    // cells (a figure's name is never cut), each column as narrow as its cells and longest
    // word, then the room left given where it saves the deepest heading a line.
    if total(&widths) > WIDTH {
        for (i, h) in headers.iter().enumerate() {
            let word = h.0.split_whitespace().map(chars).max().unwrap_or(1);
            widths[i] = cell_width(i).max(word);
        }
        loop {
            let spare = WIDTH.saturating_sub(total(&widths));
            let wider = (0..headers.len())
                .filter_map(|i| {
                    let depth = heading(&headers[i], widths[i]).len();
                    let w = (widths[i] + 1..=widths[i] + spare)
                        .find(|&w| heading(&headers[i], w).len() < depth)?;
                    Some((depth, std::cmp::Reverse(w - widths[i]), i, w))
                })
                .max();
            let Some((_, _, i, w)) = wider else { break };
            widths[i] = w;
        }
    }
    let wrapped: Vec<Vec<String>> = headers
        .iter()
        .zip(&widths)
        .map(|(h, &w)| heading(h, w))
        .collect();
    let depth = wrapped.iter().map(Vec::len).max().unwrap_or(1);
    for line in 0..depth {
        let mut text = " ".repeat(label_width);
        for (lines, w) in wrapped.iter().zip(&widths) {
            // The last line of each heading right above its cells.
            let part = (line + lines.len())
                .checked_sub(depth)
                .map_or("", |at| lines[at].as_str());
            text.push_str(&format!("  {part:>w$}"));
        }
        writeln!(out, "{}", text.trim_end())?;
    }
    for (label, row) in labels.iter().zip(&cells) {
        write!(out, "{label:<label_width$}")?;
        for (cell, w) in row.iter().zip(&widths) {
            write!(out, "  {cell:>w$}")?;
        }
        writeln!(out)?;
    }
    writeln!(out, "(↑ higher is better, ↓ lower is better)")
}

/// For results of a sweep: per result kind (the same dimensions but the sweep point), its main
/// figure at every point, the peak and the knee (`fsbench_workload::sweep::curve`).
pub fn write_curves(out: &mut dyn Write, records: &[ResultRecord]) -> io::Result<()> {
    /// (result kind and figure, swept setting, the figure's unit, its points).
    type Group = (String, String, fsbench_model::Unit, Vec<(f64, f64)>);
    let mut groups: Vec<Group> = Vec::new();
    for r in records {
        let (Some(point), Some(main)) = (&r.dims.sweep, r.main()) else {
            continue;
        };
        // A client load's per-client rows are a breakdown of its total, not a curve each.
        if main.direction != fsbench_model::Direction::Higher || r.dims.client.is_some() {
            continue;
        }
        let mut dims = r.dims.without_sweep();
        dims.threads = None;
        let label = if dims.label().is_empty() {
            "(all)".into()
        } else {
            dims.label()
        };
        let key = format!("{label} {}", metric_label(&main.metric));
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.3.push((point.value, main.value)),
            None => groups.push((
                key,
                point.parameter.clone(),
                main.unit,
                vec![(point.value, main.value)],
            )),
        }
    }
    for (key, parameter, unit, mut points) in groups {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let Some(curve) = fsbench_workload::sweep::curve(&points) else {
            continue;
        };
        let (divisor, label) = unit.display(curve.peak.1);
        let value = |y: f64| format!("{:.1} {label}", y / divisor);
        let knee = match curve.knee {
            Some((x, y)) => format!("knee at {parameter}={x} ({})", value(y)),
            None => "no knee: still climbing at the last point".into(),
        };
        let line = format!(
            "{key} over {parameter}: peak at {parameter}={} ({}); {knee}",
            curve.peak.0,
            value(curve.peak.1)
        );
        for line in wrap_text("", &line, 2, WIDTH) {
            writeln!(out, "{line}")?;
        }
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
        settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut fsbench_workload::harness::Detached,
        );
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

    #[test]
    fn a_table_has_a_row_per_result_and_a_column_per_figure() {
        use fsbench_model::{Dims, Direction, MetricDef, Unit};
        const RATE: MetricDef =
            MetricDef::new("ops_rate", Unit::OpsPerSec, Direction::Higher).main();
        const P99: MetricDef = MetricDef::new("latency_p99", Unit::Nanos, Direction::Lower);
        const OPS: MetricDef = MetricDef::new("ops", Unit::Count, Direction::None);
        let record = |op: &str, rate: f64| ResultRecord {
            dims: Dims {
                operation: Some(op.into()),
                threads: Some(2),
                ..Dims::default()
            },
            measurements: vec![RATE.at(rate), P99.at(25_000.0), OPS.at(100.0)],
            ..ResultRecord::default()
        };
        let mut out = Vec::new();
        let records = [record("create", 51234.0), record("unlink", 9.5)];
        write_table(&mut out, &records, &[]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].contains(" operations/s ↑") && lines[0].contains(" p99 latency [µs] ↓"),
            "{text}"
        );
        assert!(
            !lines[0].contains(" ops "),
            "facts stay in the exports: {text}"
        );
        assert!(
            lines[1].starts_with("create ")
                && lines[1].contains("51234")
                && lines[1].contains("25.00"),
            "{text}"
        );
        assert!(lines[2].contains("9.50"), "{text}");
        let mut out = Vec::new();
        write_table(&mut out, &records, &["latency_p99", "ops_rate"]).unwrap();
        let header = String::from_utf8(out).unwrap();
        let header = header.lines().next().unwrap();
        assert!(
            header.find("p99 latency") < header.find("operations/s"),
            "{header}"
        );
    }
    /// A table of many figures is wider than the terminal: the headings wrap between their
    /// words over their columns, every line within 120 columns and every name whole.
    #[test]
    fn a_wide_table_wraps_its_headings_and_never_cuts_a_name() {
        use fsbench_model::{Dims, Direction, MetricDef, Unit};
        let names = [
            "ops_rate",
            "throughput",
            "latency_mean",
            "latency_p50",
            "latency_p99",
            "latency_p99_9",
            "slat_mean",
            "cpu_per_op",
        ];
        let record = |depth: u64| ResultRecord {
            dims: Dims {
                iodepth: Some(depth),
                ..Dims::default()
            },
            measurements: names
                .iter()
                .map(|&name| {
                    let unit = match name {
                        "ops_rate" => Unit::OpsPerSec,
                        "throughput" => Unit::BytesPerSec,
                        _ => Unit::Nanos,
                    };
                    MetricDef::new(name, unit, Direction::Higher).at(123_456.0)
                })
                .collect(),
            ..ResultRecord::default()
        };
        let mut out = Vec::new();
        write_table(&mut out, &[record(1), record(32)], &[]).unwrap();
        let text = String::from_utf8(out).unwrap();
        for line in text.lines() {
            assert!(line.chars().count() <= WIDTH, "{line}\n{text}");
        }
        // The headings above the first row, read column by column.
        let heads: Vec<&str> = text
            .lines()
            .take_while(|l| !l.starts_with("iodepth="))
            .collect();
        assert!(heads.len() > 1, "{text}");
        let first = text.lines().nth(heads.len()).unwrap();
        let mut columns: Vec<(usize, usize)> = Vec::new();
        let mut end = 0;
        for cell in first.split_whitespace().skip(1) {
            let at = end + first[end..].find(cell).unwrap();
            end = at + cell.len();
            columns.push((columns.last().map_or(12, |c| c.1 + 2), end));
        }
        // (The first row is ASCII: its byte offsets are the headings' columns.)
        let words = |(from, to): (usize, usize)| {
            heads
                .iter()
                .map(|h| h.chars().skip(from).take(to - from).collect::<String>())
                .collect::<Vec<_>>()
                .join(" ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        let read: Vec<String> = columns.into_iter().map(words).collect();
        assert_eq!(read[0], "operations/s ↑", "{text}");
        assert_eq!(read[6], "mean submission latency [µs] ↑", "{text}");
        assert_eq!(read[7], "CPU time per operation [µs] ↑", "{text}");
    }
}
