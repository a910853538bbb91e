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
use crate::markdown::{value_text, versus_text};
use crate::model::{ReportModel, Row, Table};
use crate::standings::{AgedRanking, AgingPenalty, AgingReport, Discipline, Options, Standings};
use crate::then_now::ThenNow;
use fsbench_model::metric_label;
use fsbench_store::Outcome;
use std::borrow::Cow;
use std::io::{self, Write};
use std::path::Path;

/// The widest line the summary prints.
pub const WIDTH: usize = 120;

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
    /// End with each discipline's verdict and the ranking (a campaign's summary).
    pub ranking: bool,
}

/// A value in its display unit: 3 significant digits below 1000, whole numbers above
/// (scientific from [`crate::charts::SCIENTIFIC_FROM`] on).
pub fn number(v: f64) -> String {
    let decimals = match v.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        _ => 2,
    };
    crate::charts::fixed(v, decimals)
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

/// `text` within `width` characters: the middle elided ("…") when it is longer, keeping its
/// start and its end, cut between words where one is near. For a cell of a table whose
/// column cannot grow (the dry run's options); what the summary says is wrapped instead
/// ([`wrap`]).
pub fn fit(text: &str, width: usize) -> String {
    let all: Vec<char> = text.chars().collect();
    if all.len() <= width {
        return text.to_string();
    }
    let keep = width.saturating_sub(1);
    let (mut head, mut tail) = (keep - keep / 2, keep / 2);
    // Between words, if that loses less than a fifth of what is kept.
    let slack = keep / 5;
    if let Some(cut) = (head.saturating_sub(slack)..head)
        .rev()
        .find(|&i| i > 0 && all[i] == ' ')
    {
        head = cut + 1;
    }
    let from = all.len() - tail;
    if let Some(cut) = (from..(from + slack).min(all.len())).find(|&i| all[i - 1] == ' ') {
        tail = all.len() - cut;
    }
    let start: String = all[..head].iter().collect();
    let end: String = all[all.len() - tail..].iter().collect();
    format!("{start}…{end}")
}

/// Words wrapped into lines of at most `width` columns, the first after `lead`, the next ones
/// indented by `indent`; broken only between words, and nothing left out: a word longer than
/// a line is split across lines (a path, a long name: after a hyphen or a slash where it has
/// one), and a lead wider than a line is wrapped with the words (its leading spaces kept).
pub fn wrap(lead: &str, words: &[String], indent: usize, width: usize) -> Vec<String> {
    let margin = chars(lead) - chars(lead.trim_start_matches(' '));
    let lead_words: Vec<String> = if chars(lead) > width {
        lead.split_whitespace().map(String::from).collect()
    } else {
        Vec::new()
    };
    let mut lines = Vec::new();
    let mut line = if lead_words.is_empty() {
        lead.to_string()
    } else {
        " ".repeat(margin)
    };
    // A line holds more than its indentation: a word may not go on a fresh one.
    let started =
        |line: &str, lines: &[String]| chars(line) > if lines.is_empty() { margin } else { indent };
    for word in lead_words.iter().chain(words) {
        let mut word: &str = word;
        while !word.is_empty() {
            let gap = usize::from(started(&line, &lines) && !line.ends_with(' '));
            let room = width.saturating_sub(chars(&line) + gap);
            if chars(word) <= room {
                line.push_str(&" ".repeat(gap));
                line.push_str(word);
                break;
            }
            if started(&line, &lines) {
                lines.push(std::mem::replace(&mut line, " ".repeat(indent)));
                continue;
            }
            // Longer than a whole line: as much as fits — up to a hyphen, a slash, `=`, `_`,
            // `,` or `.` in its second half, where a name breaks best — the rest on the next.
            let limit = word
                .char_indices()
                .nth(room.max(1))
                .map_or(word.len(), |(i, _)| i);
            let cut = word[..limit]
                .rfind(['-', '/', '=', '_', ',', '.'])
                .map(|i| i + 1)
                .filter(|&i| i > limit / 2)
                .unwrap_or(limit);
            line.push_str(&word[..cut]);
            word = &word[cut..];
            if !word.is_empty() {
                lines.push(std::mem::replace(&mut line, " ".repeat(indent)));
            }
        }
    }
    lines.push(line);
    lines
}

/// `text` wrapped ([`wrap`]) after `lead`, its next lines indented by `indent`; as it is
/// (its spaces kept: columns lined up in it) when it fits on one line.
pub fn wrap_text(lead: &str, text: &str, indent: usize, width: usize) -> Vec<String> {
    let gap = if lead.trim().is_empty() || lead.ends_with(' ') || text.is_empty() {
        ""
    } else {
        " "
    };
    if chars(lead) + gap.len() + chars(text) <= width && !text.contains('\n') {
        return vec![format!("{lead}{gap}{text}")];
    }
    let words: Vec<String> = text.split_whitespace().map(String::from).collect();
    wrap(lead, &words, indent, width)
}

/// A row of two columns within [`WIDTH`] after a margin of `margin` spaces: `left` within the
/// first `left_width` columns, `right` two columns after it in the rest, each wrapped between
/// words in its own column (its next lines indented by two), so the right ones line up.
fn two_columns(margin: usize, left: &str, left_width: usize, right: &str) -> Vec<String> {
    let right_width = WIDTH.saturating_sub(margin + left_width + 2).max(1);
    let left = wrap_text("", left, 2, left_width);
    let right = wrap_text("", right, 2, right_width);
    (0..left.len().max(right.len()))
        .map(|i| {
            let l = left.get(i).map_or("", String::as_str);
            let r = right.get(i).map_or("", String::as_str);
            let pad = " ".repeat(left_width.saturating_sub(chars(l)));
            format!("{}{l}{pad}  {r}", " ".repeat(margin))
                .trim_end()
                .to_string()
        })
        .collect()
}

/// The widest the left column of [`rows_of`] grows when the right texts do not fit beside
/// the widest left one: the right column keeps at least 66 columns.
const LEFT_MOST: usize = 48;

/// Rows of two columns ([`two_columns`]) after a margin of `margin`: the left texts (names) in
/// a column as wide as the widest of them — when every right text fits beside it, else up to
/// [`LEFT_MOST`] — the right ones beside them; a left text wider than the column has the
/// row's first line(s) to itself, its right text beneath, in the right column — so a name is
/// never broken to make room.
fn rows_of(margin: usize, rows: &[(String, String)]) -> Vec<String> {
    let widest = |texts: &mut dyn Iterator<Item = &String>| texts.map(|t| chars(t)).max();
    let lefts = widest(&mut rows.iter().map(|(left, _)| left)).unwrap_or(0);
    let rights = widest(&mut rows.iter().map(|(_, right)| right)).unwrap_or(0);
    let column = if margin + lefts + 2 + rights <= WIDTH {
        lefts
    } else {
        rows.iter()
            .map(|(left, _)| chars(left))
            .filter(|&w| w <= LEFT_MOST)
            .max()
            .unwrap_or(2)
    };
    let mut lines = Vec::new();
    for (left, right) in rows {
        if chars(left) <= column {
            lines.extend(two_columns(margin, left, column, right));
        } else {
            lines.extend(wrap_text(&" ".repeat(margin), left, margin + 2, WIDTH));
            lines.extend(two_columns(margin, "", column, right));
        }
    }
    lines
}

/// A heading: a blank line, then `text` wrapped within [`WIDTH`].
fn heading(out: &mut dyn Write, text: &str) -> io::Result<()> {
    writeln!(out)?;
    for line in wrap_text("", text, 2, WIDTH) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// `text` wrapped within [`WIDTH`] after `lead`, its next lines indented by `indent`.
fn say(out: &mut dyn Write, lead: &str, text: &str, indent: usize) -> io::Result<()> {
    for line in wrap_text(lead, text, indent, WIDTH) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Lines of a table: a header of column names over rows of cells, the first column (names)
/// left-aligned, the others right-aligned, two spaces apart; each row may end with a note
/// (its unit) after its cells. With `squeeze`, names wrap (between words) in a narrower first
/// column when the table would pass [`WIDTH`] — for a block of one column, the last resort.
fn lay_out(
    corner: &str,
    header: &[String],
    rows: &[(String, Vec<String>, String)],
    squeeze: bool,
) -> Vec<String> {
    let mut name_width = rows
        .iter()
        .map(|(name, _, _)| chars(name))
        .chain([chars(corner)])
        .max()
        .unwrap_or(0)
        .max(6);
    let width = rows
        .iter()
        .flat_map(|(_, cells, _)| cells.iter().map(|c| chars(c)))
        .chain(header.iter().map(|h| chars(h)))
        .max()
        .unwrap_or(1);
    if squeeze {
        let cells = header.len() * (2 + width);
        let notes = rows
            .iter()
            .map(|(_, _, n)| if n.is_empty() { 0 } else { 2 + chars(n) })
            .max()
            .unwrap_or(0);
        name_width = name_width.min(WIDTH.saturating_sub(cells + notes).max(12));
    }
    let pad = |text: &str, w: usize| format!("{}{text}", " ".repeat(w.saturating_sub(chars(text))));
    let mut lines = Vec::new();
    let mut line = format!(
        "{corner}{}",
        " ".repeat(name_width.saturating_sub(chars(corner)))
    );
    for h in header {
        line.push_str(&format!("  {}", pad(h, width)));
    }
    lines.push(line.trim_end().to_string());
    for (name, cells, note) in rows {
        let names = wrap_text("", name, 2, name_width);
        let first = &names[0];
        let mut line = format!("{first}{}", " ".repeat(name_width - chars(first)));
        for cell in cells {
            line.push_str(&format!("  {}", pad(cell, width)));
        }
        if !note.is_empty() {
            line.push_str(&format!("  {note}"));
        }
        lines.push(line);
        lines.extend(names[1..].iter().cloned());
    }
    lines
}

fn widest(lines: &[String]) -> usize {
    lines.iter().map(|l| chars(l)).max().unwrap_or(0)
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
                .map(|&c| match &row.cells[c] {
                    None => "—".to_string(),
                    Some(cell) => {
                        let s = &cell.summary;
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

/// The leaders of a discipline as one phrase: "xfs", "ext4, xfs (tie)", "all 6 tie".
pub fn leaders_text(d: &Discipline) -> String {
    let placed = d.entries.iter().filter(|e| e.placement.is_some()).count();
    match d.leaders.as_slice() {
        [one] => one.clone(),
        all if all.len() == placed && placed > 2 => format!("all {placed} tie"),
        several => format!("{} (tie)", several.join(", ")),
    }
}

/// [`rows_of`], written.
fn write_rows(out: &mut dyn Write, margin: usize, rows: &[(String, String)]) -> io::Result<()> {
    for line in rows_of(margin, rows) {
        writeln!(out, "{line}")?;
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

/// "18.3 % lower (95 % CI ..., paired by round)", or without an interval the plain difference.
pub fn penalty_text(p: &AgingPenalty) -> String {
    match &p.vs_fresh {
        Some(c) => versus_text(p.direction, c),
        None => format!(
            "{} % (too few repetitions for an interval)",
            crate::charts::signed(-p.penalty_percent, 1)
        ),
    }
}

/// `xfs > ext4 = btrfs`: best first, ties joined by `=`.
pub fn ranking_text(order: &[(String, usize)]) -> String {
    let mut text = String::new();
    for (i, (label, place)) in order.iter().enumerate() {
        if i > 0 {
            text.push_str(if order[i - 1].1 == *place {
                " = "
            } else {
                " > "
            });
        }
        text.push_str(&printable(label));
    }
    text
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_elided_in_the_middle_between_words() {
        assert_eq!(fit("short", 10), "short");
        let text = "the kernel lacks jfs and mkfs.jfs is not installed (apt-get install jfsutils)";
        let fitted = fit(text, 50);
        assert!(fitted.chars().count() <= 50, "{fitted}");
        assert!(
            fitted.starts_with("the kernel lacks ") && fitted.ends_with(" jfsutils)"),
            "{fitted}"
        );
    }

    const REASON: &str = "jfs cannot run on this host: the kernel lacks jfs (not in /proc/filesystems: not built in and no module loaded); mkfs.jfs, fsck.jfs are not installed (apt-get install jfsutils)";

    /// The words of `lines` (their indentation dropped), as one text.
    fn words_of(lines: &[String]) -> String {
        lines
            .iter()
            .flat_map(|l| l.split_whitespace())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn a_reason_wraps_between_words_and_is_kept_whole() {
        let lines = wrap_text("    ", REASON, 4, 60);
        assert!(lines.len() > 2, "{lines:#?}");
        for line in &lines {
            assert!(line.chars().count() <= 60, "{line}");
            assert!(
                line.starts_with("    ") && !line.starts_with("     "),
                "{line}"
            );
            assert!(!line.contains('…'), "{line}");
        }
        // Broken only between words: each line's words are whole words of the reason.
        assert_eq!(words_of(&lines), REASON);
        let words: Vec<&str> = REASON.split(' ').collect();
        for word in lines.iter().flat_map(|l| l.split_whitespace()) {
            assert!(
                words.contains(&word),
                "{word:?} is not a word of the reason"
            );
        }
        // Greedy: no line could have taken the next line's first word.
        for pair in lines.windows(2) {
            let next = pair[1].split_whitespace().next().unwrap();
            assert!(
                pair[0].chars().count() + 1 + next.chars().count() > 60,
                "{pair:#?}"
            );
        }
    }

    #[test]
    fn what_fits_is_kept_as_it_is_and_a_word_longer_than_a_line_is_split_not_elided() {
        assert_eq!(
            wrap_text("  ", "ext4   12.00 points", 4, 40),
            ["  ext4   12.00 points"]
        );
        assert_eq!(
            wrap_text("Run 1", "(complete)", 2, 40),
            ["Run 1 (complete)"]
        );
        let path = format!("/var/lib/{}/results.db", "fsbench-".repeat(8));
        let lines = wrap("Stored in", std::slice::from_ref(&path), 2, 30);
        for line in &lines {
            assert!(line.chars().count() <= 30, "{line}");
        }
        assert_eq!(lines[0], "Stored in");
        let rest: String = lines[1..].iter().map(|l| l.trim_start()).collect();
        assert_eq!(rest, path, "{lines:#?}");
        // Split after a hyphen or a slash where the word has one.
        assert!(
            lines[1..lines.len() - 1]
                .iter()
                .all(|l| l.ends_with('-') || l.ends_with('/')),
            "{lines:#?}"
        );
        // A lead wider than a line wraps with the words, its margin kept.
        let lead = format!("  {} unsupported ×6:", "tmpfs mount=a-long-set ".repeat(4));
        let lines = wrap(&lead, &["every".into(), "workload".into()], 4, 50);
        for line in &lines {
            assert!(line.chars().count() <= 50, "{line}");
        }
        assert!(lines[0].starts_with("  tmpfs "), "{lines:#?}");
        let lead_words: Vec<&str> = lead.split_whitespace().collect();
        assert_eq!(
            words_of(&lines),
            format!("{} every workload", lead_words.join(" "))
        );
    }

    #[test]
    fn two_columns_wrap_each_in_its_own_and_line_up() {
        let title = "small-files-made-by-one-thread create threads=1 (operations/s)";
        let rest = "tmpfs, tmpfs mount=noatime-and-no-directory-access-times, tmpfs mount=at-most-a-million-inodes (tie) 50.6 k ops/s; 12.0 % ahead of tmpfs mount=the-slowest (95 % CI 3.1..21.7 %)";
        let lines = two_columns(2, title, 40, rest);
        assert!(lines.len() >= 2, "{lines:#?}");
        for line in &lines {
            assert!(line.chars().count() <= WIDTH, "{line}");
            assert!(!line.contains('…'), "{line}");
        }
        // The right column starts at one place on every line that has it.
        let right_at = 2 + 40 + 2;
        assert!(lines.iter().all(|l| l.chars().count() > right_at));
        let (lefts, rights): (Vec<String>, Vec<String>) = lines
            .iter()
            .map(|l| {
                let (left, right) = l.split_at(l.char_indices().nth(right_at).unwrap().0);
                (left.to_string(), right.to_string())
            })
            .unzip();
        assert_eq!(words_of(&lefts), title);
        assert_eq!(words_of(&rights), rest);
        assert!(
            rights[0].starts_with("tmpfs, ") && rights[1].starts_with("  "),
            "{lines:#?}"
        );
        assert!(
            lefts[0].starts_with("  small-files-made-by-one-thread "),
            "{lines:#?}"
        );
    }
    #[test]
    fn a_name_too_long_for_its_column_has_a_line_of_its_own_and_is_never_broken() {
        let long =
            "small-files-created-listed-and-removed-by-one-thread create threads=1 (operations/s)";
        let rows = [
            (
                "files create threads=1 (operations/s)".to_string(),
                "ext4 61.4 k ops/s; ".repeat(6),
            ),
            (long.to_string(), "tmpfs 542 k ops/s".to_string()),
        ];
        let lines = rows_of(2, &rows);
        for line in &lines {
            assert!(line.chars().count() <= WIDTH, "{line}");
        }
        // The short name in a column of its width, its text beside it and wrapped under it.
        let column = 2 + rows[0].0.len() + 2;
        assert!(
            lines[0].starts_with("  files create threads=1 (operations/s)  ext4"),
            "{lines:#?}"
        );
        assert!(
            lines[1].starts_with(&format!("{}  ext4", " ".repeat(column))),
            "{lines:#?}"
        );
        // The long one whole on its own line, its text beneath in the same column.
        let at = lines
            .iter()
            .position(|l| l.contains("small-files"))
            .unwrap();
        assert_eq!(lines[at], format!("  {long}"));
        assert_eq!(
            lines[at + 1],
            format!("{}tmpfs 542 k ops/s", " ".repeat(column))
        );
        // Rows whose texts all fit beside the widest name keep it whole in the column.
        let fits = [(long.to_string(), "1.00 points".to_string())];
        assert_eq!(rows_of(2, &fits), [format!("  {long}  1.00 points")]);
    }
}
