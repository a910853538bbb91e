//! Aged against fresh, computed once with the model: every aged configuration's main figures
//! against the same configuration fresh (the same run, every other axis equal: the aging
//! penalty, with the 95 % interval of aged / fresh) and, per discipline and age, whether aging
//! changes the ranking of the configurations; and the section every report gives it (the
//! terminal summary, the Markdown, the HTML).

use crate::compare::{better, compare};
use crate::findings::Findings;
use crate::section::Section;
use crate::tables::{CaseView, RunView, Table};
use crate::text::{
    arrow, escape_markdown as escape, fixed, heading, number, printable, say, signed, title,
    versus_text, write_rows,
};
use fsbench_analysis::compare::{Comparison, Verdict};
use fsbench_analysis::rank::placements;
use fsbench_model::{CaseAxis, Direction, Unit, FRESH};
use fsbench_workload::WorkloadSettings;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// Aged against fresh: the penalty of every aged configuration and, per discipline and age,
/// the ranking fresh and aged. Empty when no run aged a filesystem.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AgingReport {
    pub penalties: Vec<AgingPenalty>,
    pub rankings: Vec<AgedRanking>,
}

impl AgingReport {
    pub fn is_empty(&self) -> bool {
        self.penalties.is_empty() && self.rankings.is_empty()
    }
}

/// One aged configuration's figure against the same configuration fresh (same run, every other
/// axis equal), in one discipline.
#[derive(Debug, Clone, Serialize)]
pub struct AgingPenalty {
    /// The plan's name of the workload.
    pub workload: String,
    pub metric: String,
    pub unit: Unit,
    pub direction: Direction,
    /// The row's dimensions (`write 256m 1m`), or the metric's name.
    pub row: String,
    /// The configuration, labelled without its age (`ext4`, `xfs mount=noatime`).
    pub configuration: String,
    pub age: String,
    pub run_id: i64,
    pub fresh_mean: f64,
    pub aged_mean: f64,
    /// Aged / fresh, with its 95 % interval and verdict (paired by round when it can be).
    pub vs_fresh: Option<Comparison>,
    /// How much worse the aged figure is, in percent of the fresh one, whatever the figure's
    /// direction (below 0: aged is better).
    pub penalty_percent: f64,
}

impl AgingPenalty {
    pub fn title(&self) -> String {
        title(&self.workload, &self.row, &self.metric)
    }
}

/// One discipline's ranking of the configurations that ran both fresh and at one age.
#[derive(Debug, Clone, Serialize)]
pub struct AgedRanking {
    pub workload: String,
    pub metric: String,
    pub row: String,
    pub age: String,
    /// The configurations best first, each with its place (ties, which the 95 % intervals do
    /// not separate, share one).
    pub fresh: Vec<(String, usize)>,
    pub aged: Vec<(String, usize)>,
    /// Two configurations the fresh ranking places apart are placed the other way round aged.
    pub changed: bool,
}

impl AgedRanking {
    pub fn title(&self) -> String {
        title(&self.workload, &self.row, &self.metric)
    }
}

impl AgingReport {
    /// From the runs and their tables (once, as the model is built).
    pub fn of(runs: &[RunView], tables: &[Table]) -> AgingReport {
        let cases: BTreeMap<(i64, &str), &CaseView> = runs
            .iter()
            .flat_map(|r| &r.cases)
            .map(|c| ((c.run_id, c.key.as_str()), c))
            .collect();
        let mut report = AgingReport::default();
        if !cases.values().any(|c| c.config.age != FRESH) {
            return report;
        }
        for table in tables {
            if WorkloadSettings::category_of(&table.workload).is_none()
                || !table.main
                || table.direction == Direction::None
            {
                continue;
            }
            let case_of = |i: usize| {
                let column = &table.columns[i];
                cases
                    .get(&(column.run_id, column.case_key.as_str()))
                    .copied()
            };
            let several_runs = table
                .columns
                .iter()
                .any(|c| c.run_id != table.columns[0].run_id);
            let label = |case: &CaseView| {
                let axes = table
                    .varying_axes
                    .iter()
                    .filter(|&&axis| axis != CaseAxis::Age && axis != CaseAxis::Workload)
                    .map(|&axis| format!("{}{}", axis.label_prefix(), case.axis(axis)));
                let run = several_runs.then(|| format!("run {}", case.run_id));
                run.into_iter().chain(axes).collect::<Vec<_>>().join(" ")
            };
            // Each aged column with its fresh twin: the same run, every other axis equal.
            let twins: Vec<(usize, usize)> = (0..table.columns.len())
                .filter_map(|aged| {
                    let a = case_of(aged).filter(|c| c.config.age != FRESH)?;
                    let fresh = (0..table.columns.len()).find(|&f| {
                        case_of(f).is_some_and(|c| {
                            c.run_id == a.run_id
                                && c.config.age == FRESH
                                && CaseAxis::ALL
                                    .iter()
                                    .filter(|&&axis| axis != CaseAxis::Age)
                                    .all(|&axis| c.axis(axis) == a.axis(axis))
                        })
                    })?;
                    Some((fresh, aged))
                })
                .collect();
            let is_better = better(table.direction);
            for row in table.rows.iter().filter(|r| r.dims.client.is_none()) {
                let measured: Vec<(usize, usize)> = twins
                    .iter()
                    .copied()
                    .filter(|&(f, a)| row.cells[f].is_some() && row.cells[a].is_some())
                    .collect();
                let cell = |i: usize| row.cells[i].as_ref().expect("measured");
                for &(f, a) in &measured {
                    let (fresh_mean, aged_mean) = (cell(f).summary.mean, cell(a).summary.mean);
                    let (vs_fresh, _) = compare(cell(f), cell(a), true);
                    let ratio = if fresh_mean != 0.0 {
                        aged_mean / fresh_mean
                    } else {
                        1.0
                    };
                    let aged_case = case_of(a).expect("a twin");
                    report.penalties.push(AgingPenalty {
                        workload: table.columns[a].workload.clone(),
                        metric: table.metric.clone(),
                        unit: table.unit,
                        direction: table.direction,
                        row: row.label(&table.metric),
                        configuration: label(aged_case),
                        age: aged_case.config.age.clone(),
                        run_id: aged_case.run_id,
                        fresh_mean,
                        aged_mean,
                        vs_fresh,
                        penalty_percent: match table.direction {
                            Direction::Lower => (ratio - 1.0) * 100.0,
                            _ => (1.0 - ratio) * 100.0,
                        },
                    });
                }
                // Per workload and age: the configurations that ran both, ranked each way.
                let mut groups: Vec<(String, String)> = Vec::new();
                for &(_, a) in &measured {
                    let key = (
                        table.columns[a].workload.clone(),
                        case_of(a).expect("a twin").config.age.clone(),
                    );
                    if !groups.contains(&key) {
                        groups.push(key);
                    }
                }
                for (workload, age) in groups {
                    let pairs: Vec<(usize, usize)> = measured
                        .iter()
                        .copied()
                        .filter(|&(_, a)| {
                            table.columns[a].workload == workload
                                && case_of(a).is_some_and(|c| c.config.age == age)
                        })
                        .collect();
                    if pairs.len() < 2 {
                        continue;
                    }
                    let placed = |side: fn(&(usize, usize)) -> usize| {
                        let columns: Vec<usize> = pairs.iter().map(side).collect();
                        let means: Vec<Option<f64>> = columns
                            .iter()
                            .map(|&i| Some(cell(i).summary.mean))
                            .collect();
                        let differs = |x: usize, y: usize| {
                            let (c, _) = compare(
                                cell(columns[x]),
                                cell(columns[y]),
                                table.columns[columns[x]].run_id
                                    == table.columns[columns[y]].run_id,
                            );
                            c.is_some_and(|c| matches!(c.verdict, Verdict::Higher | Verdict::Lower))
                        };
                        placements(&means, &is_better, differs)
                            .into_iter()
                            .map(|p| p.map_or(usize::MAX, |p| p.place))
                            .collect::<Vec<usize>>()
                    };
                    let fresh = placed(|p| p.0);
                    let aged = placed(|p| p.1);
                    let changed = (0..pairs.len()).any(|x| {
                        (0..pairs.len()).any(|y| fresh[x] < fresh[y] && aged[y] < aged[x])
                    });
                    let order = |places: &[usize]| {
                        let mut order: Vec<(String, usize)> = pairs
                            .iter()
                            .zip(places)
                            .map(|(&(_, a), &place)| (label(case_of(a).expect("a twin")), place))
                            .collect();
                        order.sort_by_key(|(_, place)| *place);
                        order
                    };
                    report.rankings.push(AgedRanking {
                        metric: table.metric.clone(),
                        row: row.label(&table.metric),
                        fresh: order(&fresh),
                        aged: order(&aged),
                        workload,
                        age,
                        changed,
                    });
                }
            }
        }
        report
    }
}

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
