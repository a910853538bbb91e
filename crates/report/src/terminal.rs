//! The terminal summary of stored runs (`fsbench run` ends with it), every line within
//! [`WIDTH`] columns and every text whole — wrapped between words ([`wrap`]), never cut: per
//! run its sample counts; per workload and table (by default the main metrics) the mean ± the
//! half-width of each 95 % confidence interval in a readable unit, one row per result and one
//! column per configuration — or, when that is too wide, one row per configuration (and split
//! further if need be); each configuration that was not measured, with its reason; for a
//! campaign, the verdict of each discipline and the ranking by points with their rank
//! intervals (crate::standings), where a reader looks first; a study's published figures
//! beside the run's, a verdict per claim (crate::then_now); aged against fresh (the aging
//! penalty, rankings aging changes). Metrics are named as a reader knows them
//! (`fsbench_model::metric_label`).

use crate::export::Exporter;
use crate::findings::Findings;
use crate::model::{Row, Table};
use crate::sections::{self, Output, Part};
use crate::text::{cell_text, heading, lay_out, say, widest};
pub use crate::text::{fit, printable, printable_path, wrap, wrap_text, WIDTH};
use fsbench_model::metric_label;
use fsbench_store::Outcome;
use std::io::{self, Write};
use std::path::Path;

/// The terminal summary.
#[derive(Debug, Clone, Copy, Default)]
pub struct Terminal<'a> {
    /// The database the runs are stored in, for the closing "Stored as run N in DB" line.
    pub db: Option<&'a Path>,
    /// Every metric, not only each workload's main one.
    pub all_metrics: bool,
    /// End with each discipline's verdict and the ranking (a campaign's summary).
    pub ranking: bool,
}

/// The table of one workload's columns: a row per result, a column per configuration, each
/// cell the mean ± half-width of its interval. Laid out that way when it fits [`WIDTH`];
/// else with a row per configuration; else that, split into blocks of result columns.
fn write_table(
    out: &mut dyn Write,
    table: &Table,
    workload: &str,
    titled_by_metric: bool,
) -> io::Result<()> {
    // This workload's columns that measured something, and its rows that have a cell among
    // them; one client's share of a client load is a breakdown of the total (in the exports).
    let columns: Vec<usize> = (0..table.columns.len())
        .filter(|&c| table.columns[c].workload == workload)
        .filter(|&c| table.rows.iter().any(|r| r.cells[c].is_some()))
        .collect();
    let rows: Vec<&Row> = table
        .rows
        .iter()
        .filter(|r| r.dims.client.is_none() && columns.iter().any(|&c| r.cells[c].is_some()))
        .collect();
    if columns.is_empty() || rows.is_empty() {
        return Ok(());
    }
    // Each row in its own display unit, from its first measured cell.
    let units: Vec<(f64, &str)> = rows
        .iter()
        .map(|row| {
            let typical = columns
                .iter()
                .find_map(|&c| row.cells[c].as_ref())
                .map_or(0.0, |c| c.summary.mean);
            table.unit.display(typical)
        })
        .collect();
    let shared = units.windows(2).all(|w| w[0].1 == w[1].1);
    let labels: Vec<String> = rows
        .iter()
        .map(|r| printable(&r.label(&table.metric)).into_owned())
        .collect();
    let names: Vec<String> = columns
        .iter()
        .map(|&c| printable(&table.columns[c].config_label).into_owned())
        .collect();
    let mut title = printable(workload).into_owned();
    if titled_by_metric {
        title = format!("{title} {}", metric_label(&table.metric));
    }
    let mut notes: Vec<&str> = Vec::new();
    if shared {
        notes.push(units.first().map_or("", |u| u.1));
    }
    notes.push(table.direction.phrase());
    let notes: Vec<&str> = notes.into_iter().filter(|n| !n.is_empty()).collect();
    heading(
        out,
        &format!(
            "{title} [{}each cell: mean ± half-width of the 95 % confidence interval]",
            if notes.is_empty() {
                String::new()
            } else {
                format!("{}; ", notes.join(", "))
            }
        ),
    )?;
    let cells: Vec<Vec<String>> = rows
        .iter()
        .zip(&units)
        .map(|(row, (factor, _))| {
            columns
                .iter()
                .map(|&c| cell_text(row.cells[c].as_ref().map(|c| &c.summary), *factor))
                .collect()
        })
        .collect();
    let counts: Vec<String> = columns
        .iter()
        .map(|&c| format!("{} of {}", table.columns[c].ok, table.columns[c].samples))
        .collect();
    let unit_note = |i: usize| {
        if shared {
            String::new()
        } else {
            units[i].1.to_string()
        }
    };
    // A row per result, a column per configuration.
    let mut natural: Vec<(String, Vec<String>, String)> = labels
        .iter()
        .zip(&cells)
        .enumerate()
        .map(|(i, (label, row))| (label.clone(), row.clone(), unit_note(i)))
        .collect();
    natural.push(("n".to_string(), counts.clone(), String::new()));
    let lines = lay_out("", &names, &natural, false);
    if widest(&lines) <= WIDTH {
        for line in lines {
            writeln!(out, "{line}")?;
        }
        return Ok(());
    }
    // A row per configuration, a column per result (with its unit when rows differ), split
    // into blocks of columns that fit.
    let header: Vec<String> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let unit = unit_note(i);
            if unit.is_empty() {
                l.clone()
            } else {
                format!("{l} [{unit}]")
            }
        })
        .collect();
    let mut start = 0;
    while start < header.len() {
        let mut end = header.len();
        let block = |end: usize, squeeze: bool| {
            let rows: Vec<(String, Vec<String>, String)> = names
                .iter()
                .enumerate()
                .map(|(c, name)| {
                    let mut row: Vec<String> = (start..end).map(|r| cells[r][c].clone()).collect();
                    if end == header.len() {
                        row.push(counts[c].clone());
                    }
                    (name.clone(), row, String::new())
                })
                .collect();
            let mut head: Vec<String> = header[start..end].to_vec();
            if end == header.len() {
                head.push("n".to_string());
            }
            lay_out("", &head, &rows, squeeze)
        };
        let mut lines = block(end, false);
        while widest(&lines) > WIDTH && end > start + 1 {
            end -= 1;
            lines = block(end, false);
        }
        if widest(&lines) > WIDTH {
            lines = block(end, true);
        }
        if start > 0 {
            writeln!(out)?;
        }
        for line in lines {
            writeln!(out, "{line}")?;
        }
        start = end;
    }
    Ok(())
}

impl Exporter for Terminal<'_> {
    fn render(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        let model = findings.model();
        for view in &model.runs {
            let run = &view.run;
            let statuses: Vec<Outcome> = view
                .cases
                .iter()
                .flat_map(|c| c.samples.iter().map(|s| s.status))
                .collect();
            let count = |o: Outcome| statuses.iter().filter(|s| **s == o).count();
            let interrupted = match count(Outcome::Interrupted) {
                0 => String::new(),
                n => format!(", {n} interrupted"),
            };
            let interrupted = match count(Outcome::Corrupt) {
                0 => interrupted,
                n => format!("{interrupted}, {n} corrupt"),
            };
            let rest = format!(
                " ({}): {} samples: {} ok, {} unsupported, {} failed, {} timeout{interrupted}",
                run.status,
                statuses.len(),
                count(Outcome::Ok),
                count(Outcome::Unsupported),
                count(Outcome::Failed),
                count(Outcome::Timeout),
            );
            let line = format!("Run {} \"{}\"{rest}", run.id, printable(&run.plan_name));
            say(out, "", &line, 2)?;
        }
        for kind in model.kinds() {
            let tables: Vec<&Table> = model
                .tables
                .iter()
                .filter(|t| t.workload == kind && (self.all_metrics || t.main))
                .collect();
            let mut names: Vec<&str> = Vec::new();
            for c in model.cases().filter(|c| c.kind == kind) {
                let name = c.axis(fsbench_model::CaseAxis::Workload);
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            // Each workload on its own: two of one kind (a plan's `files` and `fsync`) are
            // different measures.
            for name in names {
                let shown: Vec<&&Table> = tables
                    .iter()
                    .filter(|t| t.columns.iter().any(|c| c.workload == name))
                    .filter(|t| {
                        t.rows.iter().any(|r| {
                            r.cells
                                .iter()
                                .zip(&t.columns)
                                .any(|(cell, c)| cell.is_some() && c.workload == name)
                        })
                    })
                    .collect();
                if shown.is_empty() {
                    heading(
                        out,
                        &format!("{}: no sample measured anything", printable(name)),
                    )?;
                }
                for table in &shown {
                    write_table(out, table, name, shown.len() > 1)?;
                }
            }
        }
        // The sections in the terminal's order: what was not measured before the answer,
        // which closes the summary (where a reader looks first) and leaves the configurations
        // out that this says why; the answer in a campaign's summary only.
        for placed in sections::ordered(Output::Terminal) {
            if placed.part != Part::Answer || self.ranking {
                placed.section.terminal(findings, out)?;
            }
        }
        if let (Some(db), [view]) = (self.db, model.runs.as_slice()) {
            let id = view.run.id;
            heading(
                out,
                &format!(
                    "Stored as run {id} in {} (`fsbench export {id} --json FILE`).",
                    printable_path(db)
                ),
            )?;
        }
        Ok(())
    }
}
