//! Efficiency: each filesystem's result as a fraction of its bare device's (`raw`) — "ext4
//! delivers 93 % of the device's random reads" — for every main figure a bare device measured,
//! paired by round with the device's samples of the same run, workload, scheduler, platform
//! and cache, with its 95 % interval.

use crate::compare::compare;
use crate::findings::{Find, Findings};
use crate::model::{Column, ReportModel, Table};
use crate::section::{colour, JsonMember, Section};
use crate::text::{arrow, escape_markdown as escape, heading, printable, write_rows};
use fsbench_analysis::Comparison;
use fsbench_model::{CaseAxis, Direction, Unit};
use serde::Serialize;
use std::io::{self, Write};

/// One figure (a table's row for one workload) of the bare device and of the filesystems set
/// against it.
#[derive(Debug, Clone, Serialize)]
pub struct Efficiency {
    pub workload: String,
    pub metric: String,
    pub unit: Unit,
    pub direction: Direction,
    /// The row's dimensions (`randread read 64m 4k`), or the metric.
    pub row: String,
    /// The bare device's configuration and mean.
    pub device: String,
    pub device_mean: f64,
    pub entries: Vec<Share>,
}

/// One filesystem's share of its device.
#[derive(Debug, Clone, Serialize)]
pub struct Share {
    pub label: String,
    pub mean: f64,
    /// Its performance over the device's: value / device for a figure where higher is better,
    /// device / value where lower is (a latency twice the device's is 0.5). Above 1: faster
    /// than the bare device (a cache the device does not have).
    pub efficiency: f64,
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
    /// Paired by round (else Welch's interval on independent samples).
    pub paired: bool,
    pub n: usize,
}

impl Share {
    /// `93.1 % (95 % CI 90.2–96.0 %)`.
    pub fn text(&self) -> String {
        let pct = |v: f64| crate::text::fixed(v * 100.0, 1);
        match (self.ci95_low, self.ci95_high) {
            (Some(lo), Some(hi)) => format!(
                "{} % (95 % CI {}–{} %{})",
                pct(self.efficiency),
                pct(lo),
                pct(hi),
                if self.paired { ", paired" } else { "" }
            ),
            _ => format!(
                "{} % (too few rounds for an interval)",
                pct(self.efficiency)
            ),
        }
    }
}

/// The axes a filesystem and its device must share to be set against each other: all but the
/// filesystem and its option sets.
const SHARED: [CaseAxis; 4] = [
    CaseAxis::Workload,
    CaseAxis::Scheduler,
    CaseAxis::Platform,
    CaseAxis::Cache,
];

impl Efficiency {
    /// Every main figure of the model that a bare device measured, with the filesystems that
    /// measured it too. Empty when the report has no bare device.
    pub fn of(model: &ReportModel) -> Vec<Efficiency> {
        if !model.configurations.iter().any(|c| c.bare) {
            return Vec::new();
        }
        let axes = |column: &Column| -> Option<Vec<String>> {
            let case = model
                .cases()
                .find(|c| c.run_id == column.run_id && c.key == column.case_key)?;
            Some(SHARED.iter().map(|a| case.axis(*a).to_string()).collect())
        };
        let mut out = Vec::new();
        for table in model
            .tables
            .iter()
            .filter(|t| t.main && t.direction != Direction::None)
        {
            let shared: Vec<Option<Vec<String>>> = table.columns.iter().map(axes).collect();
            for (device_column, device) in table.columns.iter().enumerate() {
                if !model.configurations[device.configuration].bare {
                    continue;
                }
                for row in &table.rows {
                    let Some(base) = &row.cells[device_column] else {
                        continue;
                    };
                    let entries: Vec<Share> = table
                        .columns
                        .iter()
                        .enumerate()
                        .filter(|(i, c)| {
                            !model.configurations[c.configuration].bare
                                && c.run_id == device.run_id
                                && shared[*i].is_some()
                                && shared[*i] == shared[device_column]
                        })
                        .filter_map(|(i, c)| {
                            let cell = row.cells[i].as_ref()?;
                            share(table, base, cell, c)
                        })
                        .collect();
                    if entries.is_empty() {
                        continue;
                    }
                    out.push(Efficiency {
                        workload: device.workload.clone(),
                        metric: table.metric.clone(),
                        unit: table.unit,
                        direction: table.direction,
                        row: row.label(&table.metric),
                        device: device.config_label.clone(),
                        device_mean: base.summary.mean,
                        entries,
                    });
                }
            }
        }
        out
    }

    /// `randread read 64m 4k (ops_rate)` of workload `randread`.
    pub fn title(&self) -> String {
        crate::text::title(&self.workload, &self.row, &self.metric)
    }

    /// A value of this figure with 3 significant digits in the unit the device's reads best
    /// in: `49.0 k ops/s`.
    pub fn value_text(&self, v: f64) -> String {
        let (factor, unit) = self.unit.display(self.device_mean);
        let text = crate::text::significant(v / factor);
        if unit.is_empty() {
            text
        } else {
            format!("{text} {unit}")
        }
    }

    /// `raw 49.0 k ops/s; ext4 97.2 % (95 % CI 95.0–99.4 %, paired)`.
    pub fn text(&self) -> String {
        let shares: Vec<String> = self
            .entries
            .iter()
            .map(|e| format!("{} {}", e.label, e.text()))
            .collect();
        format!(
            "{} {}; {}",
            self.device,
            self.value_text(self.device_mean),
            shares.join("; ")
        )
    }
}

/// The sentence that says what the figures are, for every report.
pub const EXPLAINED: &str = "each filesystem's result as a share of its bare device's \
    (raw: the same device, scheduler and cache, no filesystem), the geometric mean of the \
    per-round ratios with its 95 % interval; for a figure where lower is better, device / \
    filesystem; above 100 %: faster than the device (a cache it does not have)";

/// A filesystem's cell against its device's: the ratio oriented so that above 1 is better.
fn share(
    table: &Table,
    device: &crate::model::Cell,
    cell: &crate::model::Cell,
    column: &Column,
) -> Option<Share> {
    let (c, _): (Option<Comparison>, _) = compare(device, cell, true);
    let c = c?;
    // c is value / device.
    let (efficiency, low, high) = match table.direction {
        Direction::Lower => (
            1.0 / c.ratio,
            c.ci95_high.map(|h| 1.0 / h),
            c.ci95_low.map(|l| 1.0 / l),
        ),
        _ => (c.ratio, c.ci95_low, c.ci95_high),
    };
    Some(Share {
        label: column.config_label.clone(),
        mean: cell.summary.mean,
        efficiency,
        ci95_low: low,
        ci95_high: high,
        paired: c.paired,
        n: c.n,
    })
}

/// Each filesystem's share of its bare device (empty without one).
impl Find for Vec<Efficiency> {
    fn find(findings: &Findings) -> Vec<Efficiency> {
        Efficiency::of(findings.model())
    }
}

/// Each filesystem's share of its bare device, one line per filesystem and figure.
pub fn terminal(out: &mut dyn Write, figures: &[Efficiency]) -> io::Result<()> {
    if figures.is_empty() {
        return Ok(());
    }
    heading(
        out,
        "Efficiency (each filesystem's result as a share of its bare device's, per-round ratios, 95 % CI):",
    )?;
    let rows: Vec<(String, String)> = figures
        .iter()
        .flat_map(|f| {
            f.entries.iter().map(move |e| {
                let share = e.text();
                let share = share.replace(", paired", "");
                (
                    printable(&f.title()).into_owned(),
                    printable(&format!(
                        "{} {share} of {} {}",
                        e.label,
                        f.device,
                        f.value_text(f.device_mean)
                    ))
                    .into_owned(),
                )
            })
        })
        .collect();
    write_rows(out, 2, &rows)
}

/// The Markdown: one row per filesystem and figure, with the device beside it.
pub fn markdown(out: &mut dyn Write, efficiency: &[Efficiency]) -> io::Result<()> {
    if efficiency.is_empty() {
        return Ok(());
    }
    writeln!(out, "## Efficiency\n")?;
    writeln!(
        out,
        "{}.\n",
        EXPLAINED[..1].to_uppercase() + &EXPLAINED[1..]
    )?;
    writeln!(
        out,
        "| figure | bare device | filesystem | share of the device (95 % CI) |\n|---|---:|---|---|"
    )?;
    for f in efficiency {
        for e in &f.entries {
            writeln!(
                out,
                "| {} ({}) | {} {} | {} ({}) | {} |",
                escape(&f.title()),
                f.direction.phrase(),
                escape(&f.device),
                f.value_text(f.device_mean),
                escape(&e.label),
                f.value_text(e.mean),
                e.text()
            )?;
        }
    }
    writeln!(out)?;
    Ok(())
}

/// The HTML: one row per filesystem and figure, each configuration in its colour (nothing
/// without a bare device).
pub fn html(
    figures: &[Efficiency],
    colour_of: &dyn Fn(&str) -> String,
) -> Result<String, minijinja::Error> {
    let rows: Vec<minijinja::Value> = figures
        .iter()
        .flat_map(|f| {
            f.entries.iter().map(move |e| {
                minijinja::context! {
                    title => f.title(),
                    arrow => arrow(f.direction),
                    direction => f.direction.phrase(),
                    device => f.device.clone(),
                    device_colour => colour_of(&f.device),
                    device_value => f.value_text(f.device_mean),
                    label => e.label.clone(),
                    colour => colour_of(&e.label),
                    value => f.value_text(e.mean),
                    share => e.text(),
                }
            })
        })
        .collect();
    crate::section::render_html(
        "efficiency.html.j2",
        include_str!("efficiency.html.j2"),
        minijinja::context! { efficiency => rows, efficiency_note => EXPLAINED },
    )
}

/// Each filesystem against its bare device: with the verdict, and in the JSON.
pub struct EfficiencySection;

impl Section for EfficiencySection {
    fn name(&self) -> &'static str {
        "efficiency"
    }

    fn terminal(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        terminal(out, findings.get::<Vec<Efficiency>>())
    }

    fn markdown(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        markdown(out, findings.get::<Vec<Efficiency>>())
    }

    fn html(&self, findings: &Findings) -> Result<Option<String>, minijinja::Error> {
        let model = findings.model();
        html(findings.get::<Vec<Efficiency>>(), &|label| {
            colour(model, label)
        })
        .map(Some)
    }

    fn json(&self, findings: &Findings) -> serde_json::Result<Option<JsonMember>> {
        JsonMember::new("efficiency", findings.get::<Vec<Efficiency>>()).map(Some)
    }
}
