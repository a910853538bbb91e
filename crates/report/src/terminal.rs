//! The terminal summary of stored runs (`fsbench run` ends with it), every line within
//! [`WIDTH`] columns: per run its sample counts; per workload and table (by default the main
//! metrics) the mean ± the half-width of each 95 % confidence interval in a readable unit, one
//! row per result and one column per configuration — or, when that is too wide, one row per
//! configuration (and split further if need be); for a campaign, the verdict of each
//! discipline and the ranking with its rank intervals (crate::standings) close it, where a
//! reader looks first; a study's published figures beside the run's, a verdict per claim
//! (crate::then_now); aged against fresh (the aging penalty, rankings aging changes); then one line per configuration that was not measured, with its reason.

use crate::efficiency::Efficiency;
use crate::export::Exporter;
use crate::markdown::{value_text, versus_text};
use crate::model::{ReportModel, Row, Table};
use crate::standings::{AgedRanking, AgingPenalty, AgingReport, Discipline, Options, Standings};
use crate::then_now::{now_text, ratio_text, verdict_text, ThenNow};
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

pub fn number(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

/// `text` within `width` characters: the middle elided ("…") when it is longer, keeping its
/// start and its end (where fsbench's reasons say what to do), cut between words where one is
/// near.
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

/// Words wrapped into lines of at most `width` columns (a word longer than a line has one of
/// its own), the first after `lead`, the next ones indented by `indent`.
pub fn wrap(lead: &str, words: &[String], indent: usize, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = lead.to_string();
    for word in words {
        let fits = line.chars().count() + 1 + word.chars().count() <= width;
        if !fits && line.chars().count() > indent {
            lines.push(line);
            line = " ".repeat(indent);
        }
        if !line.ends_with(' ') && !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// A reason within `width` characters: its parenthesised details left out, first ones first
/// (the last usually says what to do), then [`fit`].
pub fn shorten(reason: &str, width: usize) -> String {
    let mut text = reason.to_string();
    while text.chars().count() > width {
        // The first outermost "(...)" that is not the last one.
        let mut depth = 0;
        let mut groups: Vec<(usize, usize)> = Vec::new();
        let mut open = 0;
        for (i, c) in text.char_indices() {
            match c {
                '(' => {
                    if depth == 0 {
                        open = i;
                    }
                    depth += 1;
                }
                ')' if depth > 0 => {
                    depth -= 1;
                    if depth == 0 {
                        groups.push((open, i + 1));
                    }
                }
                _ => {}
            }
        }
        if groups.len() < 2 {
            break;
        }
        let (start, end) = groups[0];
        let before = text[..start].trim_end();
        text = format!("{before}{}", &text[end..]);
    }
    fit(&text, width)
}

/// Lines of a table: a header of column names over rows of cells, the first column (names)
/// left-aligned, the others right-aligned, two spaces apart; each row may end with a note
/// (its unit) after its cells.
fn lay_out(corner: &str, header: &[String], rows: &[(String, Vec<String>, String)]) -> Vec<String> {
    let name_width = rows
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
    let pad = |text: &str, w: usize| format!("{}{text}", " ".repeat(w.saturating_sub(chars(text))));
    let mut lines = Vec::new();
    let mut line = format!("{corner}{}", " ".repeat(name_width - chars(corner)));
    for h in header {
        line.push_str(&format!("  {}", pad(h, width)));
    }
    lines.push(line.trim_end().to_string());
    for (name, cells, note) in rows {
        let mut line = format!("{name}{}", " ".repeat(name_width - chars(name)));
        for cell in cells {
            line.push_str(&format!("  {}", pad(cell, width)));
        }
        if !note.is_empty() {
            line.push_str(&format!("  {note}"));
        }
        lines.push(line);
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
    writeln!(
        out,
        "\n{} [{}each cell: mean ± half-width of the 95 % confidence interval]",
        fit(&title, 30),
        if notes.is_empty() {
            String::new()
        } else {
            format!("{}; ", notes.join(", "))
        }
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
    let lines = lay_out("", &names, &natural);
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
        let block = |end: usize| {
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
            lay_out("", &head, &rows)
        };
        let mut lines = block(end);
        while widest(&lines) > WIDTH && end > start + 1 {
            end -= 1;
            lines = block(end);
        }
        if start > 0 {
            writeln!(out)?;
        }
        for line in lines {
            writeln!(out, "{}", fit(&line, WIDTH))?;
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
            let head = format!("Run {} \"\"", run.id);
            let room = WIDTH.saturating_sub(chars(&head) + chars(&rest)).max(20);
            writeln!(
                out,
                "Run {} \"{}\"{rest}",
                run.id,
                fit(&printable(&run.plan_name), room),
            )?;
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
                    writeln!(
                        out,
                        "\n{}: no sample measured anything",
                        fit(&printable(name), 60)
                    )?;
                }
                for table in &shown {
                    write_table(out, table, name, shown.len() > 1)?;
                }
            }
        }
        if self.ranking {
            let standings = Standings::of(model, &Options::default());
            write_verdicts(out, &standings)?;
            write_efficiency(out, model)?;
            write_ranking(out, &standings, model)?;
        }
        write_then_now(out, &ThenNow::of(model))?;
        write_aging(out, &model.aging)?;
        write_not_measured(out, model)?;
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

/// What was not measured: one line per configuration, outcome and reason, the reason elided
/// in its middle to fit (the exports and the HTML report have it whole).
fn write_not_measured(out: &mut dyn Write, model: &ReportModel) -> io::Result<()> {
    if model.not_measured.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\nNot measured (one line per configuration; the reasons in full: `fsbench export RUN --json -`):"
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
            fit(&format!("{run}{}", printable(&n.configuration)), 40)
        })
        .collect();
    let width = heads.iter().map(|h| chars(h)).max().unwrap_or(0);
    for (n, head) in model.not_measured.iter().zip(&heads) {
        let workloads = if n.workloads.len() > 1 && n.workloads.len() == all_workloads.len() {
            "every workload".to_string()
        } else {
            fit(&printable(&n.workloads.join(", ")), 30)
        };
        let start = format!(
            "  {head}{}  {} ×{} ({workloads}): ",
            " ".repeat(width - chars(head)),
            n.status,
            n.samples
        );
        let reason = printable(&n.reason.replace('\n', " ")).into_owned();
        let room = WIDTH.saturating_sub(chars(&start)).max(20);
        writeln!(out, "{start}{}", shorten(&reason, room))?;
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

/// Each discipline's verdict: its leaders, the best value and their lead over the rest.
fn write_verdicts(out: &mut dyn Write, standings: &Standings) -> io::Result<()> {
    if standings.disciplines.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\nVerdict (per discipline: the winner, or those that tie for first; their lead over the rest, 95 % CI):"
    )?;
    let titles: Vec<String> = standings
        .disciplines
        .iter()
        .map(|d| printable(&d.title()).into_owned())
        .collect();
    let rests: Vec<String> = standings
        .disciplines
        .iter()
        .map(|d| {
            let best = d.entries.iter().find(|e| e.column == d.best).expect("best");
            let lead = match &d.lead {
                Some(lead) => format!("; {}", lead.text()),
                None if d.entries.len() == 1 => " (alone)".to_string(),
                None => String::new(),
            };
            printable(&format!(
                "{} {}{lead}",
                fit(&leaders_text(d), 40),
                value_text(d, best.mean)
            ))
            .into_owned()
        })
        .collect();
    let longest_rest = rests.iter().map(|r| chars(r)).max().unwrap_or(0);
    let width = titles
        .iter()
        .map(|t| chars(t))
        .max()
        .unwrap_or(10)
        .min(WIDTH.saturating_sub(4 + longest_rest).max(24));
    for (title, rest) in titles.iter().zip(&rests) {
        let title = fit(title, width);
        let line = format!("  {title}{}  {rest}", " ".repeat(width - chars(&title)));
        writeln!(out, "{}", fit(&line, WIDTH))?;
    }
    Ok(())
}

/// Each filesystem's share of its bare device, one line per filesystem and figure.
fn write_efficiency(out: &mut dyn Write, model: &ReportModel) -> io::Result<()> {
    let figures = Efficiency::of(model);
    if figures.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\nEfficiency (each filesystem's result as a share of its bare device's, per-round ratios, 95 % CI):"
    )?;
    let lines: Vec<(String, String)> = figures
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
    let longest_rest = lines.iter().map(|(_, r)| chars(r)).max().unwrap_or(0);
    let width = lines
        .iter()
        .map(|(t, _)| chars(t))
        .max()
        .unwrap_or(10)
        .min(WIDTH.saturating_sub(4 + longest_rest).max(24));
    for (title, rest) in &lines {
        let title = fit(title, width);
        let line = format!("  {title}{}  {rest}", " ".repeat(width - chars(&title)));
        writeln!(out, "{}", fit(&line, WIDTH))?;
    }
    Ok(())
}

/// The study's published figures beside the run's: per figure a line per configuration (then
/// and now, each relative to the reference, and the verdict), then the claims.
fn write_then_now(out: &mut dyn Write, then_now: &ThenNow) -> io::Result<()> {
    if then_now.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\nThen and now (the study's figures and this run's, each relative to the study's reference configuration; this run's paired by round, with its 95 % interval):"
    )?;
    for study in &then_now.studies {
        if then_now.studies.len() > 1 {
            writeln!(
                out,
                "  run {} \"{}\":",
                study.run_id,
                printable(&study.plan)
            )?;
        }
        if let Some(e) = &study.error {
            writeln!(
                out,
                "  the run's published figures could not be read: {}",
                printable(e)
            )?;
        }
        for f in &study.figures {
            let p = &f.published;
            let now = match &f.missing {
                Some(why) => format!("not measured ({why})"),
                None => f.now_title.clone(),
            };
            writeln!(
                out,
                "  {} ({}); now: {}",
                printable(&p.title),
                printable(&p.source),
                printable(&now)
            )?;
            let width = f
                .rows
                .iter()
                .map(|r| printable(&r.label).chars().count())
                .max()
                .unwrap_or(10);
            for r in &f.rows {
                let label = printable(&r.label);
                let pad = " ".repeat(width - label.chars().count());
                if r.reference {
                    writeln!(
                        out,
                        "    {label}{pad}  the reference (then {})",
                        f.then_value(r)
                    )?;
                    continue;
                }
                let now = r.now.as_ref().map_or("—".into(), now_text);
                writeln!(
                    out,
                    "    {label}{pad}  then {}, now {now}: {}",
                    ratio_text(r.then_ratio),
                    r.verdict
                        .map(|v| verdict_text(v, r.missing.as_deref()))
                        .unwrap_or_default()
                )?;
            }
        }
        if !study.claims.is_empty() {
            writeln!(out, "  Claims:")?;
            for c in &study.claims {
                writeln!(
                    out,
                    "    {} ({}): then {}, now {}: {}",
                    printable(&c.claim.text),
                    printable(&c.claim.source),
                    c.then_text(),
                    printable(&c.now_text()),
                    verdict_text(c.verdict, c.missing.as_deref())
                )?;
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
    writeln!(
        out,
        "\nAging penalty (each aged configuration against the same configuration fresh, its mean and 95 % interval; a tie: no difference can be claimed):"
    )?;
    let width = aging
        .penalties
        .iter()
        .map(|p| printable(&p.title()).chars().count())
        .max()
        .unwrap_or(10);
    for p in &aging.penalties {
        writeln!(
            out,
            "  {:<width$}  {} age={}: {}",
            printable(&p.title()),
            printable(&p.configuration),
            printable(&p.age),
            penalty_text(p)
        )?;
    }
    if aging.rankings.is_empty() {
        return Ok(());
    }
    let changed: Vec<&AgedRanking> = aging.rankings.iter().filter(|r| r.changed).collect();
    writeln!(
        out,
        "\nRanking, fresh and aged: aging changes {} of {} rankings (two configurations the fresh ranking places apart, placed the other way round aged){}",
        changed.len(),
        aging.rankings.len(),
        if changed.is_empty() { "." } else { ":" }
    )?;
    for r in changed {
        writeln!(
            out,
            "  {} age={}: fresh {}; aged {}",
            printable(&r.title()),
            printable(&r.age),
            ranking_text(&r.fresh),
            ranking_text(&r.aged)
        )?;
    }
    Ok(())
}

/// "18.3 % lower (95 % CI ..., paired by round)", or without an interval the plain difference.
pub fn penalty_text(p: &AgingPenalty) -> String {
    match &p.vs_fresh {
        Some(c) => versus_text(p.direction, c),
        None => format!(
            "{:+.1} % (too few repetitions for an interval)",
            -p.penalty_percent
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

/// The ranking: each configuration's rank with its 95 % interval, best first, and its points.
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
    writeln!(
        out,
        "\nRanking (rank: its 95 % interval over the {rounds} rounds, 1–2 = not separated; points per placement in each discipline):"
    )?;
    let ranks: Vec<String> = standings.scores.iter().map(|s| s.rank.text()).collect();
    let rank_width = ranks.iter().map(|r| chars(r)).max().unwrap_or(1);
    let labels: Vec<String> = standings
        .scores
        .iter()
        .map(|s| fit(&printable(&s.label), 40))
        .collect();
    let label_width = labels.iter().map(|l| chars(l)).max().unwrap_or(4);
    for ((s, rank), label) in standings.scores.iter().zip(&ranks).zip(&labels) {
        let parts: Vec<String> = categories
            .iter()
            .map(|c| match s.points.get(c) {
                Some(p) => format!("{} {p:.1} in {}", c.name(), s.placed[c]),
                None => format!("{} -", c.name()),
            })
            .collect();
        let line = format!(
            "  {}{rank}  {label}{}  {:>5.2} points ({})",
            " ".repeat(rank_width - chars(rank)),
            " ".repeat(label_width - chars(label)),
            s.overall,
            parts.join(", ")
        );
        writeln!(out, "{}", fit(&line, WIDTH))?;
    }
    Ok(())
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
        let reason = "jfs cannot run on this host: the kernel lacks jfs (not in /proc/filesystems: not built in and no module loaded); mkfs.jfs, fsck.jfs are not installed (apt-get install jfsutils)";
        let short = shorten(reason, 80);
        assert!(short.chars().count() <= 80, "{short}");
        assert!(!short.contains("/proc/filesystems"), "{short}");
        assert!(short.ends_with("(apt-get install jfsutils)"), "{short}");
        assert_eq!(
            shorten("no parentheses to drop", 100),
            "no parentheses to drop"
        );
    }
}
