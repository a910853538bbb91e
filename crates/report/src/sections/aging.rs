//! Aged against fresh, as every report gives it (the terminal summary, the Markdown, the
//! HTML): each aged configuration's penalty and the rankings aging changes; found as the model
//! is built (`crate::aged`).

pub use crate::aged::{AgedRanking, AgingPenalty, AgingReport};
use crate::findings::Findings;
use crate::section::Section;
use crate::text::{
    arrow, escape_markdown as escape, fixed, heading, number, printable, say, signed, versus_text,
    write_rows,
};
use fsbench_analysis::compare::Verdict;
use std::io::{self, Write};

/// "18.3 % lower (95 % CI ..., paired by round)", or without an interval the plain difference.
pub fn penalty_text(p: &AgingPenalty) -> String {
    match &p.vs_fresh {
        Some(c) => versus_text(p.direction, c),
        None => format!(
            "{} % (too few repetitions for an interval)",
            signed(-p.penalty_percent, 1)
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

/// Aged against fresh: each aged configuration's penalty per discipline, then the disciplines
/// whose ranking aging changes (and how many it does not).
pub fn terminal(out: &mut dyn Write, aging: &AgingReport) -> io::Result<()> {
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

/// The Markdown: each aged configuration against itself fresh, then the rankings fresh and aged.
pub fn markdown(out: &mut dyn Write, aging: &AgingReport) -> io::Result<()> {
    if aging.penalties.is_empty() {
        return Ok(());
    }
    writeln!(out, "## Aged against fresh\n")?;
    writeln!(
            out,
            "Each aged configuration against the same configuration fresh (the aging penalty: how much worse aged is), with the 95 % interval of aged / fresh; a tie: no difference can be claimed.\n"
        )?;
    writeln!(
            out,
            "| discipline | configuration | age | fresh | aged | aged vs fresh |\n|---|---|---|---:|---:|---|"
        )?;
    for p in &aging.penalties {
        let (factor, unit) = p.unit.display(p.fresh_mean.max(p.aged_mean));
        let value = |v: f64| format!("{} {unit}", fixed(v / factor, 3));
        writeln!(
            out,
            "| {} ({}) | {} | {} | {} | {} | {} |",
            escape(&p.title()),
            p.direction.phrase(),
            escape(&p.configuration),
            escape(&p.age),
            value(p.fresh_mean),
            value(p.aged_mean),
            escape(&penalty_text(p)),
        )?;
    }
    writeln!(out)?;
    if !aging.rankings.is_empty() {
        writeln!(out, "### Ranking, fresh and aged\n")?;
        writeln!(
                out,
                "Best first; `=` joins configurations the 95 % intervals do not separate. Changed: two configurations the fresh ranking places apart are placed the other way round aged.\n"
            )?;
        writeln!(
            out,
            "| discipline | age | fresh | aged | changed |\n|---|---|---|---|---|"
        )?;
        for r in &aging.rankings {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                escape(&r.title()),
                escape(&r.age),
                escape(&ranking_text(&r.fresh)),
                escape(&ranking_text(&r.aged)),
                if r.changed { "**yes**" } else { "no" }
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Aged against fresh (`model.aging`, computed with the model): each aged configuration's
/// means fresh and aged with aged / fresh and its verdict, and the rankings fresh and aged.
pub fn html(aging: &AgingReport) -> Result<String, minijinja::Error> {
    crate::section::render_html(
        "aging.html.j2",
        include_str!("aging.html.j2"),
        minijinja::context! { aging => view(aging) },
    )
}

/// What the aging fragment shows (None: nothing was aged).
fn view(aging: &AgingReport) -> Option<minijinja::Value> {
    if aging.penalties.is_empty() {
        return None;
    }
    let penalties: Vec<_> = aging
        .penalties
        .iter()
        .map(|p| {
            let (factor, unit) = p.unit.display(p.fresh_mean.abs().max(p.aged_mean.abs()));
            let value = |v: f64| format!("{} {unit}", number(v / factor));
            let real = p
                .vs_fresh
                .as_ref()
                .is_some_and(|c| matches!(c.verdict, Verdict::Higher | Verdict::Lower));
            minijinja::context! {
                title => p.title(),
                arrow => arrow(p.direction),
                direction => p.direction.phrase(),
                configuration => p.configuration.clone(),
                age => p.age.clone(),
                fresh => value(p.fresh_mean),
                aged => value(p.aged_mean),
                versus => penalty_text(p),
                class => match (real, p.penalty_percent > 0.0) {
                    (false, _) => "tie",
                    (true, true) => "bad",
                    (true, false) => "win",
                },
            }
        })
        .collect();
    let changed = aging.rankings.iter().filter(|r| r.changed).count();
    let rankings: Vec<_> = aging
        .rankings
        .iter()
        .map(|r| {
            minijinja::context! {
                title => r.title(),
                age => r.age.clone(),
                fresh => ranking_text(&r.fresh),
                aged => ranking_text(&r.aged),
                changed => r.changed,
            }
        })
        .collect();
    Some(minijinja::context! {
        penalties => penalties,
        rankings => rankings,
        summary => format!(
            "Aging changes {changed} of {} rankings: {}",
            aging.rankings.len(),
            if changed == 0 {
                "each ranks the configurations fresh as it does aged, or only reorders those the 95 % intervals do not separate."
            } else {
                "where it says yes, two configurations the fresh ranking places apart are placed the other way round aged."
            }
        ),
    })
}

/// Aged against fresh: in the terminal summary, the Markdown and the HTML (the JSON has it
/// in the model).
pub struct AgingSection;

impl Section for AgingSection {
    fn name(&self) -> &'static str {
        "aging"
    }

    fn terminal(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        terminal(out, &findings.model().aging)
    }

    fn markdown(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        markdown(out, &findings.model().aging)
    }

    fn html(&self, findings: &Findings) -> Result<Option<String>, minijinja::Error> {
        html(&findings.model().aging).map(Some)
    }
}
