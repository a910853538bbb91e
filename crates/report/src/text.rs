//! Numbers and text as every format writes them, in one place: figures (`fixed`, `signed`,
//! `significant`, `number`, a cell's mean ± half-width), names made safe for a terminal
//! (`printable`) or for Markdown (`escape_markdown`), and the terminal's layout within
//! [`WIDTH`] columns — text wrapped between words, never cut (`wrap`, `wrap_text`), headings,
//! two-column rows — that every section's terminal part writes through.

use fsbench_analysis::compare::{Comparison, Verdict};
use fsbench_analysis::Summary;
use fsbench_model::{metric_label, Direction};
use std::borrow::Cow;
use std::io::{self, Write};
use std::path::Path;

/// From this magnitude on, a figure is written in scientific notation: no unit or prefix
/// makes it readable, and written out 1e308 is 309 digits.
pub const SCIENTIFIC_FROM: f64 = 1e12;

/// `v` with `decimals` decimals, or from [`SCIENTIFIC_FROM`] on with 3 significant digits in
/// scientific notation (`1.00e308`). Every figure a report prints goes through it or
/// [`significant`].
pub fn fixed(v: f64, decimals: usize) -> String {
    if v.is_finite() && v.abs() >= SCIENTIFIC_FROM {
        format!("{v:.2e}")
    } else {
        format!("{v:.decimals$}")
    }
}

/// [`fixed`] with its sign always written (`+1.5`, `-0.3`), for changes.
pub fn signed(v: f64, decimals: usize) -> String {
    let text = fixed(v, decimals);
    if v.is_sign_negative() {
        text
    } else {
        format!("+{text}")
    }
}

/// A number with 3 significant digits, from 10,000 on in thousands, millions or billions:
/// 774474 -> "774 k", 33188 -> "33.2 k", 2 -> "2.00", 0.25 -> "0.250"; from
/// [`SCIENTIFIC_FROM`] on in scientific notation, "1.00e308".
pub fn significant(v: f64) -> String {
    if !v.is_finite() || v.abs() >= SCIENTIFIC_FROM {
        return fixed(v, 0);
    }
    let (v, suffix) = match v.abs() {
        a if a >= 1e9 => (v / 1e9, " G"),
        a if a >= 1e6 => (v / 1e6, " M"),
        a if a >= 1e4 => (v / 1e3, " k"),
        _ => (v, ""),
    };
    let digits = match v.abs() {
        a if a >= 100.0 || a == 0.0 => 0,
        a if a >= 10.0 => 1,
        a if a >= 1.0 => 2,
        _ => 3,
    };
    format!("{v:.digits$}{suffix}")
}

/// [`significant`] without trailing zeros, for tick labels: 70000 -> "70 k", 1.5 -> "1.5",
/// 2 -> "2".
pub fn short_number(v: f64) -> String {
    let text = significant(v);
    if text.contains('e') {
        // Scientific: its zeros are the exponent's.
        return text;
    }
    let (number, suffix) = match text.split_once(' ') {
        Some((n, s)) => (n.to_string(), format!(" {s}")),
        None => (text, String::new()),
    };
    let number = if number.contains('.') {
        number
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        number
    };
    format!("{number}{suffix}")
}

/// A value in its display unit: 3 significant digits below 1000, whole numbers above
/// (scientific from [`SCIENTIFIC_FROM`] on).
pub fn number(v: f64) -> String {
    let decimals = match v.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        _ => 2,
    };
    fixed(v, decimals)
}

/// A cell as text in the given scale: "mean ± half-width" of its 95 % interval, "mean (n=1)"
/// without one, "—" when it was not measured.
pub fn cell_text(summary: Option<&Summary>, factor: f64) -> String {
    match summary {
        Some(s) => match s.ci95_half_width {
            Some(h) => format!("{} ± {}", number(s.mean / factor), number(h / factor)),
            None => format!("{} (n=1)", number(s.mean / factor)),
        },
        None => "—".into(),
    }
}

/// How a configuration stands against the best: "tie (-1.2 %, 95 % CI -3.0..+0.7 %)" or
/// "12.3 % slower (95 % CI 10.1..14.4 %, paired by round)".
pub fn versus_text(direction: Direction, c: &Comparison) -> String {
    // The ratio is this / best; say it as "% lower/higher" of the figure, then what it means.
    let pct = |r: f64| signed((r - 1.0) * 100.0, 1);
    let interval = match (c.ci95_low, c.ci95_high) {
        (Some(lo), Some(hi)) => format!(
            "95 % CI {}..{} %{}",
            pct(lo),
            pct(hi),
            if c.paired {
                ", paired by round"
            } else {
                ", Welch"
            }
        ),
        _ => "too few repetitions for an interval".to_string(),
    };
    let worse = match direction {
        Direction::Lower => "slower",
        _ => "lower",
    };
    match c.verdict {
        Verdict::Tie => format!("tie ({} %, {interval})", pct(c.ratio)),
        Verdict::Unknown => format!("{} % ({interval})", pct(c.ratio)),
        Verdict::Higher | Verdict::Lower => {
            let by = match direction {
                Direction::Lower => (c.ratio - 1.0) * 100.0,
                _ => (1.0 - c.ratio) * 100.0,
            };
            format!("{} % {worse} ({interval})", fixed(by, 1))
        }
    }
}

/// A discipline's name, its metric as a reader knows it (`fsbench_model::metric_label`):
/// `stream write 256m 1m (throughput)`, `files create threads=1 (operations/s)`, or `nap time
/// slept` when the row has no dimensions (its label is the metric's).
pub fn title(workload: &str, row: &str, metric: &str) -> String {
    let metric = metric_label(metric);
    if row == metric {
        format!("{workload} {metric}")
    } else {
        format!("{workload} {row} ({metric})")
    }
}

/// Text from users or names (plan, configurations, reasons, a stored host), safe in Markdown:
/// shown as typed, never as markup. HTML is shown, never run (`<script>`, `<img onerror>`
/// become `&lt;script&gt;`, which every renderer shows as typed, in Markdown or in a mail).
/// `[` and `]` are escaped, so no image (`![x](URL)`, which a renderer would fetch), link or
/// link reference definition can be made; `(` and `)` mean nothing without them and are kept
/// (escaped, every "(default)" would read `\(default\)` in the page's source), `!` is escaped
/// too. So are `*`, `_`, `~` (emphasis, strikethrough), `|` (it would end a table cell), `` ` ``
/// (a code span) and `\` (an escape of what follows). A bare URL stays text that some renderers
/// (GitHub's) show as a link to click, never fetch. Control characters are [`printable`] (the
/// summary goes to the terminal too), so a name never starts a line of its own (a heading, a
/// list, a quote).
pub fn escape_markdown(text: &str) -> String {
    let mut safe = String::with_capacity(text.len());
    for c in printable(text).chars() {
        match c {
            '&' => safe.push_str("&amp;"),
            '<' => safe.push_str("&lt;"),
            '>' => safe.push_str("&gt;"),
            '|' | '`' | '\\' | '[' | ']' | '!' | '*' | '_' | '~' => {
                safe.push('\\');
                safe.push(c);
            }
            c => safe.push(c),
        }
    }
    safe
}

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

pub(crate) fn chars(text: &str) -> usize {
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
pub(crate) fn two_columns(
    margin: usize,
    left: &str,
    left_width: usize,
    right: &str,
) -> Vec<String> {
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
pub(crate) const LEFT_MOST: usize = 48;

/// Rows of two columns ([`two_columns`]) after a margin of `margin`: the left texts (names) in
/// a column as wide as the widest of them — when every right text fits beside it, else up to
/// [`LEFT_MOST`] — the right ones beside them; a left text wider than the column has the
/// row's first line(s) to itself, its right text beneath, in the right column — so a name is
/// never broken to make room.
pub(crate) fn rows_of(margin: usize, rows: &[(String, String)]) -> Vec<String> {
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
pub(crate) fn heading(out: &mut dyn Write, text: &str) -> io::Result<()> {
    writeln!(out)?;
    for line in wrap_text("", text, 2, WIDTH) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// `text` wrapped within [`WIDTH`] after `lead`, its next lines indented by `indent`.
pub(crate) fn say(out: &mut dyn Write, lead: &str, text: &str, indent: usize) -> io::Result<()> {
    for line in wrap_text(lead, text, indent, WIDTH) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Lines of a table: a header of column names over rows of cells, the first column (names)
/// left-aligned, the others right-aligned, two spaces apart; each row may end with a note
/// (its unit) after its cells. With `squeeze`, names wrap (between words) in a narrower first
/// column when the table would pass [`WIDTH`] — for a block of one column, the last resort.
pub(crate) fn lay_out(
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

pub(crate) fn widest(lines: &[String]) -> usize {
    lines.iter().map(|l| chars(l)).max().unwrap_or(0)
}

/// [`rows_of`], written.
pub(crate) fn write_rows(
    out: &mut dyn Write,
    margin: usize,
    rows: &[(String, String)],
) -> io::Result<()> {
    for line in rows_of(margin, rows) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// A figure's direction as an arrow (HTML tables): ↑ higher is better, ↓ lower is.
pub fn arrow(direction: Direction) -> &'static str {
    match direction {
        Direction::Higher => "↑",
        Direction::Lower => "↓",
        Direction::None => "",
    }
}

/// A sheet name Excel accepts: at most 31 characters, none of []:*?/\.
pub fn sheet_name(text: &str, used: &mut Vec<String>) -> String {
    let clean: String = text
        .chars()
        .map(|c| if "[]:*?/\\".contains(c) { '_' } else { c })
        .take(28)
        .collect();
    let mut name = clean.clone();
    let mut n = 2;
    while used.iter().any(|u| u.eq_ignore_ascii_case(&name)) {
        name = format!("{clean}-{n}");
        n += 1;
    }
    used.push(name.clone());
    name
}

/// `text` as one shell word: as it is when it is plain, else in single quotes.
pub fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ",.=_/:@%+-".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
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
