//! The terminal summary of stored runs (`fsbench run` ends with it): per run its sample
//! counts; per table (by default the workloads' main metrics) one row per result dimensions
//! and one column per case, each cell the mean ± the half-width of its 95 % confidence
//! interval in a readable unit; for a campaign, each discipline's winner and the ranking
//! (crate::standings); every sample that is not `ok`, with its reason.

use crate::export::Exporter;
use crate::markdown::{value_text, versus_text};
use crate::model::{ReportModel, Table};
use crate::standings::{Options, Standings};
use fsbench_store::Outcome;
use std::borrow::Cow;
use std::io::{self, Write};
use std::path::Path;

/// `text` safe to print on a terminal: control characters (ESC and the rest of C0, DEL, C1,
/// a newline or tab inside a name) and the bidirectional overrides that reorder what is shown
/// are written as Rust escapes (`\u{1b}`, `\n`), so a name from a plan, a database or a mount
/// cannot recolour, move the cursor, retitle the terminal, start a line of its own or hide
/// text. Everything else is printed as given. Every user-provided name printed goes through it.
pub fn printable(text: &str) -> Cow<'_, str> {
    let unsafe_char =
        |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !text.contains(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut safe = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            safe.extend(c.escape_debug());
        } else {
            safe.push(c);
        }
    }
    Cow::Owned(safe)
}

/// A path, [`printable`].
pub fn printable_path(path: &Path) -> String {
    printable(&path.display().to_string()).into_owned()
}

/// The terminal summary.
#[derive(Debug, Clone, Copy, Default)]
pub struct Terminal<'a> {
    /// The database the runs are stored in, for the closing "Stored as run N in DB" line.
    pub db: Option<&'a Path>,
    /// Every metric, not only each workload's main one.
    pub all_metrics: bool,
    /// End with each discipline's winner and the ranking (a campaign's summary).
    pub ranking: bool,
}

fn number(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Writes one table; `titled_by_metric` when its workload has more than one table shown. The
/// unit is in the header when every row shares it, else at the end of each row.
fn write_table(out: &mut dyn Write, table: &Table, titled_by_metric: bool) -> io::Result<()> {
    // Each row in its own display unit, from its first measured cell.
    let units: Vec<(f64, &str)> = table
        .rows
        .iter()
        .map(|row| {
            let typical = row
                .cells
                .iter()
                .flatten()
                .next()
                .map_or(0.0, |c| c.summary.mean);
            table.unit.display(typical)
        })
        .collect();
    let shared = units.windows(2).all(|w| w[0].1 == w[1].1);
    let labels: Vec<String> = table
        .rows
        .iter()
        .map(|r| printable(&r.label(&table.metric)).into_owned())
        .collect();
    let columns: Vec<Cow<'_, str>> = table.columns.iter().map(|c| printable(&c.label)).collect();
    let mut title = printable(&table.workload_names.join(", ")).into_owned();
    if titled_by_metric {
        title = format!("{title} {}", printable(&table.metric));
    }
    let mut notes: Vec<&str> = Vec::new();
    if shared {
        notes.push(units.first().map_or("", |u| u.1));
    }
    notes.push(table.direction.phrase());
    let notes: Vec<&str> = notes.into_iter().filter(|n| !n.is_empty()).collect();
    writeln!(
        out,
        "\n{title} [{}each cell: mean ± half-width of the 95 % confidence interval]",
        if notes.is_empty() {
            String::new()
        } else {
            format!("{}; ", notes.join(", "))
        }
    )?;
    let cells: Vec<Vec<String>> = table
        .rows
        .iter()
        .zip(&units)
        .map(|(row, (factor, _))| {
            row.cells
                .iter()
                .map(|cell| match cell {
                    None => "—".to_string(),
                    Some(c) => {
                        let s = &c.summary;
                        match s.ci95_half_width {
                            Some(h) => {
                                format!("{} ± {}", number(s.mean / factor), number(h / factor))
                            }
                            None => format!("{} (n=1)", number(s.mean / factor)),
                        }
                    }
                })
                .collect()
        })
        .collect();
    let counts: Vec<String> = table
        .columns
        .iter()
        .map(|c| format!("{} of {}", c.ok, c.samples))
        .collect();
    let name_width = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(4)
        .max(6);
    let width = cells
        .iter()
        .flatten()
        .chain(&counts)
        .map(|c| c.chars().count())
        .chain(columns.iter().map(|c| c.chars().count()))
        .max()
        .unwrap_or(8);
    let pad = |text: &str, w: usize| {
        let n = text.chars().count();
        format!("{}{text}", " ".repeat(w.saturating_sub(n)))
    };
    write!(out, "{:<name_width$}", "")?;
    for column in &columns {
        write!(out, "  {}", pad(column, width))?;
    }
    writeln!(out)?;
    for ((label, row), (_, unit)) in labels.iter().zip(&cells).zip(&units) {
        write!(
            out,
            "{label}{}",
            " ".repeat(name_width - label.chars().count())
        )?;
        for cell in row {
            write!(out, "  {}", pad(cell, width))?;
        }
        // Units that differ between rows close each row (the labels and columns stay aligned).
        if !shared {
            write!(out, "  {unit}")?;
        }
        writeln!(out)?;
    }
    write!(out, "{:<name_width$}", "n")?;
    for count in &counts {
        write!(out, "  {}", pad(count, width))?;
    }
    writeln!(out)
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
            writeln!(
                out,
                "Run {} \"{}\" ({}): {} samples: {} ok, {} unsupported, {} failed, {} timeout{interrupted}",
                run.id,
                printable(&run.plan_name),
                run.status,
                statuses.len(),
                count(Outcome::Ok),
                count(Outcome::Unsupported),
                count(Outcome::Failed),
                count(Outcome::Timeout),
            )?;
        }
        for kind in model.kinds() {
            let tables: Vec<&Table> = model
                .tables
                .iter()
                .filter(|t| t.workload == kind && (self.all_metrics || t.main))
                .collect();
            if tables.is_empty() {
                let mut names: Vec<&str> = Vec::new();
                for c in model.cases().filter(|c| c.kind == kind) {
                    let name = c.axis(fsbench_model::CaseAxis::Workload);
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
                writeln!(
                    out,
                    "\n{}: no sample measured anything",
                    printable(&names.join(", "))
                )?;
            }
            for table in &tables {
                write_table(out, table, tables.len() > 1)?;
            }
        }
        if self.ranking {
            write_ranking(out, &Standings::of(model, &Options::default()))?;
        }
        if !model.problems.is_empty() {
            writeln!(out, "\nNot measured:")?;
            let several_runs = model.runs.len() > 1;
            // One line per configuration, status and reason, its workloads listed.
            let mut lines: Vec<(String, String, Vec<String>)> = Vec::new();
            for p in &model.problems {
                let run = if several_runs {
                    format!("run {} ", p.run_id)
                } else {
                    String::new()
                };
                let (config, workload) = p.case_key.rsplit_once('.').unwrap_or((&p.case_key, ""));
                let head = format!("{run}{}", printable(config));
                let tail = format!("{} ×{}: {}", p.status, p.count, printable(&p.reason));
                match lines.iter_mut().find(|(h, t, _)| *h == head && *t == tail) {
                    Some((_, _, workloads)) => workloads.push(printable(workload).into_owned()),
                    None => lines.push((head, tail, vec![printable(workload).into_owned()])),
                }
            }
            for (head, tail, workloads) in lines {
                writeln!(out, "  {head} ({}): {tail}", workloads.join(", "))?;
            }
        }
        if let (Some(db), [view]) = (self.db, model.runs.as_slice()) {
            let id = view.run.id;
            writeln!(
                out,
                "\nStored as run {id} in {} (`fsbench export {id} --json FILE`).",
                printable_path(db)
            )?;
        }
        Ok(())
    }
}

/// Each discipline's winner with the runner-up against it, and the ranking by points.
fn write_ranking(out: &mut dyn Write, standings: &Standings) -> io::Result<()> {
    if standings.disciplines.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\nWinners (mean of the repetitions; the runner-up against the winner with its 95 % interval; a tie: no difference can be claimed):"
    )?;
    let width = standings
        .disciplines
        .iter()
        .map(|d| printable(&d.title()).chars().count())
        .max()
        .unwrap_or(10);
    for d in &standings.disciplines {
        let best = d.entries.iter().find(|e| e.column == d.best).expect("best");
        let runner = d
            .entries
            .iter()
            .filter(|e| e.column != d.best)
            .max_by(|a, b| a.relative_to_best.total_cmp(&b.relative_to_best));
        let versus = match runner {
            Some(r) => format!(
                "; {}: {}",
                printable(&r.label),
                r.vs_best
                    .as_ref()
                    .map_or("-".into(), |c| versus_text(d.direction, c))
            ),
            None => String::new(),
        };
        writeln!(
            out,
            "  {:<width$}  {} {} ({}){versus}",
            printable(&d.title()),
            printable(&best.label),
            value_text(d, best.mean),
            d.direction.phrase(),
        )?;
    }
    let categories = standings.categories();
    writeln!(
        out,
        "\nRanking (points per placement in each discipline, ties share them; overall = mean points per discipline, summed over {}):",
        categories
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(", ")
    )?;
    let width = standings
        .scores
        .iter()
        .map(|s| printable(&s.label).chars().count())
        .max()
        .unwrap_or(10);
    for (i, s) in standings.scores.iter().enumerate() {
        let parts: Vec<String> = categories
            .iter()
            .map(|c| match s.points.get(c) {
                Some(p) => format!("{} {p:.1} pts in {}", c.name(), s.placed[c]),
                None => format!("{} -", c.name()),
            })
            .collect();
        writeln!(
            out,
            "  {:>2}. {:<width$}  overall {:>5.2}  ({})",
            i + 1,
            printable(&s.label),
            s.overall,
            parts.join(", ")
        )?;
    }
    Ok(())
}
