//! What was not measured, per configuration, outcome and reason (the model's `not_measured`,
//! computed once with it): what it cost (its samples and workloads) and why, in every report.

use crate::findings::Findings;
use crate::model::ReportModel;
use crate::section::{colour, Section};
use crate::text::{chars, escape_markdown as escape, heading, printable, say, sheet_name};
use rust_xlsxwriter::{Format, Workbook, XlsxError};
use std::io::{self, Write};

/// What was not measured: per configuration and reason, a line of what it cost (its outcome,
/// samples and workloads), then the reason whole beneath it, wrapped.
pub fn terminal(out: &mut dyn Write, model: &ReportModel) -> io::Result<()> {
    if model.not_measured.is_empty() {
        return Ok(());
    }
    heading(
        out,
        "Not measured (per configuration: the samples it cost, then why):",
    )?;
    let several_runs = model.runs.len() > 1;
    let all_workloads = model.workload_names();
    let heads: Vec<String> = model
        .not_measured
        .iter()
        .map(|n| {
            let run = if several_runs && !n.configuration.starts_with("run ") {
                format!("run {} ", n.run_id)
            } else {
                String::new()
            };
            format!("{run}{}", printable(&n.configuration))
        })
        .collect();
    // The outcomes line up after the configurations, unless one is too long to.
    let width = heads
        .iter()
        .map(|h| chars(h))
        .filter(|&w| w <= 40)
        .max()
        .unwrap_or(0);
    for (n, head) in model.not_measured.iter().zip(&heads) {
        let workloads = if n.workloads.len() > 1 && n.workloads.len() == all_workloads.len() {
            "every workload".to_string()
        } else {
            printable(&n.workloads.join(", ")).into_owned()
        };
        let lead = format!(
            "  {head}{}  ",
            " ".repeat(width.saturating_sub(chars(head)))
        );
        let cost = format!("{} ×{} ({workloads}):", n.status, n.samples);
        say(out, &lead, &cost, 4)?;
        say(out, "    ", &printable(&n.reason.replace('\n', " ")), 4)?;
    }
    Ok(())
}

/// The Markdown: one row per configuration and reason.
pub fn markdown(out: &mut dyn Write, model: &ReportModel) -> io::Result<()> {
    if model.not_measured.is_empty() {
        return Ok(());
    }
    writeln!(out, "## Not measured\n")?;
    writeln!(
        out,
        "| configuration | status | samples | workloads | reason |\n|---|---|---:|---|---|"
    )?;
    for n in &model.not_measured {
        writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            escape(&n.configuration),
            n.status,
            n.samples,
            escape(&n.workloads.join(", ")),
            escape(&n.reason.replace('\n', " "))
        )?;
    }
    writeln!(out)?;
    Ok(())
}

/// The HTML: one row per configuration and reason, in the configuration's colour.
pub fn html(
    model: &ReportModel,
    colour_of: &dyn Fn(&str) -> String,
) -> Result<String, minijinja::Error> {
    let rows: Vec<minijinja::Value> = model
        .not_measured
        .iter()
        .map(|n| {
            minijinja::context! {
                configuration => n.configuration.clone(),
                colour => colour_of(&n.configuration),
                status => n.status.name(),
                samples => n.samples,
                workloads => n.workloads.join(", "),
                reason => n.reason.clone(),
            }
        })
        .collect();
    crate::section::render_html(
        "not_measured.html.j2",
        include_str!("not_measured.html.j2"),
        minijinja::context! { not_measured => rows },
    )
}

/// The workbook's sheet: one row per configuration and reason.
pub fn xlsx(
    wb: &mut Workbook,
    model: &ReportModel,
    used: &mut Vec<String>,
) -> Result<(), XlsxError> {
    let bold = Format::new().set_bold();
    if model.not_measured.is_empty() {
        return Ok(());
    }
    let ws = wb.add_worksheet();
    ws.set_name(sheet_name("not measured", used))?;
    for (j, h) in ["configuration", "status", "samples", "workloads", "reason"]
        .iter()
        .enumerate()
    {
        ws.write_string_with_format(0, j as u16, *h, &bold)?;
    }
    for (i, n) in model.not_measured.iter().enumerate() {
        let r = 1 + i as u32;
        ws.write_string(r, 0, &n.configuration)?;
        ws.write_string(r, 1, n.status.name())?;
        ws.write_number(r, 2, n.samples as f64)?;
        ws.write_string(r, 3, n.workloads.join(", "))?;
        ws.write_string(r, 4, &n.reason)?;
    }
    Ok(())
}

/// What was not measured, and why: in every output but the JSON (which has it in the model).
pub struct NotMeasuredSection;

impl Section for NotMeasuredSection {
    fn name(&self) -> &'static str {
        "not_measured"
    }

    fn terminal(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        terminal(out, findings.model())
    }

    fn markdown(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        markdown(out, findings.model())
    }

    fn html(&self, findings: &Findings) -> Result<Option<String>, minijinja::Error> {
        let model = findings.model();
        html(model, &|label| colour(model, label)).map(Some)
    }

    fn workbook(
        &self,
        findings: &Findings,
        workbook: &mut Workbook,
        used: &mut Vec<String>,
    ) -> Result<(), XlsxError> {
        xlsx(workbook, findings.model(), used)
    }
}
