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

use crate::efficiency::Efficiency;
use crate::export::Exporter;
use crate::model::{ReportModel, Row, Table};
use crate::standings::{
    leaders_text, penalty_text, ranking_text, value_text, AgedRanking, AgingReport, Options,
    Standings,
};
use crate::text::{cell_text, chars, heading, lay_out, say, widest, write_rows};
pub use crate::text::{fit, printable, printable_path, wrap, wrap_text, WIDTH};
use crate::then_now::ThenNow;
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
    fn write(&self, model: &ReportModel, out: &mut dyn Write) -> io::Result<()> {
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
        // What was not measured before the answer, which closes the summary (where a reader
        // looks first) and leaves the configurations out that this says why.
        write_not_measured(out, model)?;
        if self.ranking {
            let standings = Standings::of(model, &Options::default());
            write_verdicts(out, &standings)?;
            write_efficiency(out, model)?;
            write_ranking(out, &standings, model)?;
        }
        write_then_now(out, &ThenNow::of(model))?;
        write_aging(out, &model.aging)?;
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

/// What was not measured: per configuration and reason, a line of what it cost (its outcome,
/// samples and workloads), then the reason whole beneath it, wrapped.
fn write_not_measured(out: &mut dyn Write, model: &ReportModel) -> io::Result<()> {
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

/// Each discipline's verdict: its leaders, the best value and their lead over the rest.
fn write_verdicts(out: &mut dyn Write, standings: &Standings) -> io::Result<()> {
    if standings.disciplines.is_empty() {
        return Ok(());
    }
    heading(
        out,
        "Verdict (per discipline: the winner, or those that tie for first; their lead over the rest, 95 % CI):",
    )?;
    let rows: Vec<(String, String)> = standings
        .disciplines
        .iter()
        .map(|d| {
            let best = d.entries.iter().find(|e| e.column == d.best).expect("best");
            let lead = match &d.lead {
                Some(lead) => format!("; {}", lead.text()),
                None if d.entries.len() == 1 => " (alone)".to_string(),
                None => String::new(),
            };
            let rest = format!("{} {}{lead}", leaders_text(d), value_text(d, best.mean));
            (
                printable(&d.title()).into_owned(),
                printable(&rest).into_owned(),
            )
        })
        .collect();
    write_rows(out, 2, &rows)
}

/// Each filesystem's share of its bare device, one line per filesystem and figure.
fn write_efficiency(out: &mut dyn Write, model: &ReportModel) -> io::Result<()> {
    let figures = Efficiency::of(model);
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

/// The study's published figures beside the run's: per figure a line per configuration (then
/// and now, each relative to the reference, and the verdict), then the claims.
fn write_then_now(out: &mut dyn Write, then_now: &ThenNow) -> io::Result<()> {
    if then_now.is_empty() {
        return Ok(());
    }
    heading(
        out,
        "Then and now (the study's figures and this run's, each relative to the study's reference configuration; this run's paired by round, with its 95 % interval):",
    )?;
    for study in &then_now.studies {
        if then_now.studies.len() > 1 {
            let run = format!("run {} \"{}\":", study.run_id, printable(&study.plan));
            say(out, "  ", &run, 4)?;
        }
        if let Some(e) = &study.error {
            let error = format!(
                "the run's published figures could not be read: {}",
                printable(e)
            );
            say(out, "  ", &error, 4)?;
        }
        for f in &study.figures {
            let p = &f.published;
            let now = match &f.missing {
                Some(why) => format!("not measured ({why})"),
                None => f.now_title.clone(),
            };
            let figure = format!(
                "{} ({}); now: {}",
                printable(&p.title),
                printable(&p.source),
                printable(&now)
            );
            say(out, "  ", &figure, 6)?;
            let rows: Vec<(String, String)> = f
                .rows
                .iter()
                .map(|r| {
                    let label = printable(&r.label).into_owned();
                    if r.reference {
                        return (label, format!("the reference (then {})", f.then_value(r)));
                    }
                    let text = format!(
                        "then {}, now {}: {}",
                        r.then_ratio_text(),
                        r.now_ratio_text(),
                        r.verdict_text()
                    );
                    (label, text)
                })
                .collect();
            write_rows(out, 4, &rows)?;
        }
        if !study.claims.is_empty() {
            writeln!(out, "  Claims:")?;
            for c in &study.claims {
                let claim = format!(
                    "{} ({}): then {}, now {}: {}",
                    printable(&c.claim.text),
                    printable(&c.claim.source),
                    c.then_text(),
                    printable(&c.now_text()),
                    c.verdict_text()
                );
                say(out, "    ", &claim, 6)?;
            }
        }
    }
    Ok(())
}

/// Aged against fresh: each aged configuration's penalty per discipline, then the disciplines
/// whose ranking aging changes (and how many it does not).
fn write_aging(out: &mut dyn Write, aging: &AgingReport) -> io::Result<()> {
    if aging.penalties.is_empty() {
        return Ok(());
    }
    heading(
        out,
        "Aging penalty (each aged configuration against the same configuration fresh, its mean and 95 % interval; a tie: no difference can be claimed):",
    )?;
    let rows: Vec<(String, String)> = aging
        .penalties
        .iter()
        .map(|p| {
            let penalty = format!(
                "{} age={}: {}",
                printable(&p.configuration),
                printable(&p.age),
                penalty_text(p)
            );
            (printable(&p.title()).into_owned(), penalty)
        })
        .collect();
    write_rows(out, 2, &rows)?;
    if aging.rankings.is_empty() {
        return Ok(());
    }
    let changed: Vec<&AgedRanking> = aging.rankings.iter().filter(|r| r.changed).collect();
    heading(
        out,
        &format!(
            "Ranking, fresh and aged: aging changes {} of {} rankings (two configurations the fresh ranking places apart, placed the other way round aged){}",
            changed.len(),
            aging.rankings.len(),
            if changed.is_empty() { "." } else { ":" }
        ),
    )?;
    for r in changed {
        let ranking = format!(
            "{} age={}: fresh {}; aged {}",
            printable(&r.title()),
            printable(&r.age),
            ranking_text(&r.fresh),
            ranking_text(&r.aged)
        );
        say(out, "  ", &ranking, 4)?;
    }
    Ok(())
}

/// The ranking, in the order of its points (best first): each configuration's points, the
/// 95 % interval of its rank beside them, and its points per category.
fn write_ranking(
    out: &mut dyn Write,
    standings: &Standings,
    model: &ReportModel,
) -> io::Result<()> {
    if standings.scores.is_empty() {
        return Ok(());
    }
    let categories = standings.categories();
    let rounds = model
        .cases()
        .flat_map(|c| &c.samples)
        .map(|s| s.repetition)
        .max()
        .unwrap_or(0);
    heading(
        out,
        &format!(
            "Ranking (most points first: per placement in each discipline; rank: 95 % interval over {rounds} rounds, 1–2 = not separated):"
        ),
    )?;
    let ranks: Vec<String> = standings.scores.iter().map(|s| s.rank.text()).collect();
    let rank_width = ranks.iter().map(|r| chars(r)).max().unwrap_or(1);
    let rows: Vec<(String, String)> = standings
        .scores
        .iter()
        .zip(&ranks)
        .map(|(s, rank)| {
            let parts: Vec<String> = categories
                .iter()
                .map(|c| match s.points.get(c) {
                    Some(p) => format!("{} {p:.1} in {}", c.name(), s.placed[c]),
                    None => format!("{} -", c.name()),
                })
                .collect();
            let points = format!(
                "{:>6.2} points  rank {rank}{}  ({})",
                s.overall,
                " ".repeat(rank_width - chars(rank)),
                parts.join(", ")
            );
            (printable(&s.label).into_owned(), points)
        })
        .collect();
    write_rows(out, 2, &rows)
}
