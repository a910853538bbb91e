//! The Markdown summary, for pasting into an issue or a mail: provenance, the configurations,
//! who won each discipline and whether the lead is real (the ratio to the runner-up with its
//! 95 % interval, or "tie"), the rankings, and what was not measured.

use crate::export::Exporter;
use crate::model::ReportModel;
use crate::standings::{Discipline, Options, Standings};
use crate::terminal::printable;
use fsbench_analysis::compare::{Comparison, Verdict};
use fsbench_model::Direction;
use std::io::{self, Write};

/// The Markdown exporter, with the standings' options (baseline, weights).
#[derive(Debug, Clone, Default)]
pub struct Markdown {
    pub options: Options,
}

/// A number with 3 significant digits in the unit a typical value reads best in.
pub fn value_text(d: &Discipline, v: f64) -> String {
    let typical = d.entries.iter().map(|e| e.mean).fold(0.0, f64::max);
    let (factor, unit) = d.unit.display(typical);
    let x = v / factor;
    let text = if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    };
    if unit.is_empty() {
        text
    } else {
        format!("{text} {unit}")
    }
}

/// How a configuration stands against the best: "tie (-1.2 %, 95 % CI -3.0..+0.7 %)" or
/// "12.3 % slower (95 % CI 10.1..14.4 %, paired by round)".
pub fn versus_text(direction: Direction, c: &Comparison) -> String {
    // The ratio is this / best; say it as "% lower/higher" of the figure, then what it means.
    let pct = |r: f64| (r - 1.0) * 100.0;
    let interval = match (c.ci95_low, c.ci95_high) {
        (Some(lo), Some(hi)) => format!(
            "95 % CI {:+.1}..{:+.1} %{}",
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
        Verdict::Tie => format!("tie ({:+.1} %, {interval})", pct(c.ratio)),
        Verdict::Unknown => format!("{:+.1} % ({interval})", pct(c.ratio)),
        Verdict::Higher | Verdict::Lower => {
            let by = match direction {
                Direction::Lower => (c.ratio - 1.0) * 100.0,
                _ => (1.0 - c.ratio) * 100.0,
            };
            format!("{by:.1} % {worse} ({interval})")
        }
    }
}

/// Text from users or names (plan, configurations, reasons, a stored host), safe in Markdown:
/// HTML is shown, never run (`<script>`, `<img onerror>` become `&lt;script&gt;`, which every
/// renderer shows as typed, in Markdown or in a mail); `|` cannot end a table cell, `` ` `` open
/// a code span or `\` escape what follows; control characters are [`printable`] (the
/// summary goes to the terminal too).
fn escape(text: &str) -> String {
    let mut safe = String::with_capacity(text.len());
    for c in printable(text).chars() {
        match c {
            '&' => safe.push_str("&amp;"),
            '<' => safe.push_str("&lt;"),
            '>' => safe.push_str("&gt;"),
            '|' | '`' | '\\' => {
                safe.push('\\');
                safe.push(c);
            }
            c => safe.push(c),
        }
    }
    safe
}

/// Options as given (mkfs, mount), escaped; "(default)" when there are none.
fn options(text: &str) -> String {
    if text.is_empty() {
        "(default)".into()
    } else {
        escape(text)
    }
}

impl Exporter for Markdown {
    fn write(&self, model: &ReportModel, out: &mut dyn Write) -> io::Result<()> {
        let standings = Standings::of(model, &self.options);
        for view in &model.runs {
            let run = &view.run;
            writeln!(
                out,
                "# fsbench report: run {} \"{}\" ({}{})\n",
                run.id,
                escape(&run.plan_name),
                run.status,
                view.scale_note()
            )?;
            let host = &run.host;
            writeln!(
                out,
                "Started {}; fsbench {}; kernel {}; {} ({} CPUs); {:.1} GiB memory.\n",
                escape(&run.started_at),
                escape(&run.fsbench_version),
                escape(host["kernel_release"].as_str().unwrap_or("?")),
                escape(host["cpu_model"].as_str().unwrap_or("?")),
                host["cpus"],
                host["memory_bytes"].as_f64().unwrap_or(0.0) / f64::from(1u32 << 30),
            )?;
            writeln!(
                out,
                "| configuration | filesystem | mkfs options | mount options | scheduler | cache | samples ok |\n|---|---|---|---|---|---|---|"
            )?;
            for case in &view.cases {
                let c = &case.config;
                let (ok, all) = case.counts();
                writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {ok} of {all} |",
                    escape(&case.key),
                    escape(&c.filesystem),
                    options(&c.mkfs_options),
                    options(&c.mount_options),
                    escape(c.scheduler.as_deref().unwrap_or("default")),
                    escape(c.cache.name()),
                )?;
            }
            writeln!(out)?;
        }
        if !standings.disciplines.is_empty() {
            writeln!(out, "## Winners\n")?;
            writeln!(
                out,
                "Each discipline's best configuration (mean of its repetitions), and the runner-up against it: a difference whose 95 % interval includes zero is a tie.\n"
            )?;
            writeln!(
                out,
                "| discipline | best | value | runner-up | runner-up vs best |\n|---|---|---:|---|---|"
            )?;
            for d in &standings.disciplines {
                let best = d.entries.iter().find(|e| e.column == d.best).expect("best");
                let runner = d
                    .entries
                    .iter()
                    .filter(|e| e.column != d.best)
                    .max_by(|a, b| a.relative_to_best.total_cmp(&b.relative_to_best));
                let (runner_label, versus) = match runner {
                    Some(r) => (
                        escape(&r.label),
                        r.vs_best
                            .as_ref()
                            .map_or("-".into(), |c| versus_text(d.direction, c)),
                    ),
                    None => ("-".into(), "-".into()),
                };
                writeln!(
                    out,
                    "| {} ({}) | {} | {} | {runner_label} | {versus} |",
                    escape(&d.title()),
                    d.direction.phrase(),
                    escape(&best.label),
                    value_text(d, best.mean),
                )?;
            }
            writeln!(out)?;
            if let Some((gain, n)) = standings.pairing_gain {
                writeln!(
                    out,
                    "Pairing by round: the paired intervals are {:.0} % as wide as Welch's on the same values (median of {n} comparisons).\n",
                    gain * 100.0
                )?;
            }
            writeln!(out, "## Rankings\n")?;
            let categories = standings.categories();
            writeln!(
                out,
                "Points per placement in each discipline (with N configurations the best gets N, the last 1; ties share), per category; overall = Σ weight × mean points per discipline of the category; composite = geometric mean of each value relative to {} (above 1 is better).\n",
                escape(standings.baseline.as_deref().unwrap_or("the baseline"))
            )?;
            write!(out, "| rank | configuration |")?;
            for c in &categories {
                write!(
                    out,
                    " {} points (weight {}) |",
                    c.name(),
                    standings.weights[c]
                )?;
            }
            writeln!(out, " overall | composite |")?;
            write!(out, "|---:|---|")?;
            for _ in &categories {
                write!(out, "---:|")?;
            }
            writeln!(out, "---:|---:|")?;
            for (i, s) in standings.scores.iter().enumerate() {
                write!(out, "| {} | {} |", i + 1, escape(&s.label))?;
                for c in &categories {
                    match s.points.get(c) {
                        Some(p) => write!(out, " {p:.1} ({} disciplines) |", s.placed[c])?,
                        None => write!(out, " - |")?,
                    }
                }
                writeln!(
                    out,
                    " {:.2} | {} |",
                    s.overall,
                    s.composite.map_or("-".into(), |c| format!("{c:.3}"))
                )?;
            }
            writeln!(out)?;
        }
        if !model.problems.is_empty() {
            writeln!(out, "## Not measured\n")?;
            writeln!(
                out,
                "| case | status | samples | reason |\n|---|---|---:|---|"
            )?;
            for p in &model.problems {
                writeln!(
                    out,
                    "| {} | {} | {} | {} |",
                    escape(&p.case_key),
                    p.status,
                    p.count,
                    escape(&p.reason.replace('\n', " "))
                )?;
            }
            writeln!(out)?;
        }
        Ok(())
    }
}
