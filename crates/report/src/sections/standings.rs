//! Who won what, and whether it is real: every main figure of every result row is a
//! discipline; in each, every configuration is compared with the best one (paired by round when
//! both come from one run, Welch otherwise: `fsbench_analysis::compare`), placed and given
//! points (ties share them: `fsbench_analysis::rank`), and the points add up per category and
//! overall; a geometric-mean composite relative to a baseline configuration sums it up in one
//! number. Each discipline's verdict is its leaders (the winner, or the group that ties for
//! first) with their lead over the rest and its interval; the overall ranks carry their 95 %
//! intervals (`fsbench_analysis::rank::rank_intervals`), and only the order they establish is
//! claimed. Found from a [`ReportModel`] once (`crate::findings`); written here in every
//! output as two sections, [`VerdictSection`] (the HTML's with its heat-map; the JSON's
//! `standings`) and [`RankingSection`].

use crate::charts;
use crate::compare::{better, compare};
use crate::findings::{Find, Findings};
use crate::model::{ReportModel, Row, Table};
use crate::over_time::Marked;
use crate::section::{colour, render_html, JsonMember, Section};
use crate::sections::durability::{Durability, Promise};
use crate::sections::marks::HostMarks;
use crate::text::{
    arrow, chars, escape_markdown as escape, fixed, heading, printable, sheet_name, significant,
    title, versus_text, write_rows,
};
use fsbench_analysis::compare::{Comparison, Verdict};
use fsbench_analysis::rank::{
    geometric_mean, overall_scores, placements, rank_intervals, Contest, Placement, RankInterval,
};
pub use fsbench_model::Category;
use fsbench_model::{metric_label, Direction, Unit};
use fsbench_workload::WorkloadSettings;
use rust_xlsxwriter::{Format, Workbook, XlsxError};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// One configuration in one discipline.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// Index into the table's columns.
    pub column: usize,
    pub label: String,
    pub mean: f64,
    /// Its value relative to the best (best = 1; below 1 is worse whatever the direction).
    pub relative_to_best: f64,
    /// This configuration / the best, with the interval and verdict (None for the best itself).
    pub vs_best: Option<Comparison>,
    pub placement: Option<Placement>,
}

/// One figure of one result row, over the configurations that measured it.
#[derive(Debug, Clone, Serialize)]
pub struct Discipline {
    pub workload: String,
    pub category: Category,
    pub metric: String,
    pub unit: Unit,
    pub direction: Direction,
    /// The row's dimensions (`write 16m 4k`, `untar`), or the metric's name.
    pub row: String,
    /// Index of the best configuration's column.
    pub best: usize,
    pub entries: Vec<Entry>,
    /// The verdict: the configurations placed first (the winner, or the group that ties for
    /// first), best first.
    pub leaders: Vec<String>,
    /// How far the leaders are ahead of the rest, when some configuration is behind them.
    pub lead: Option<Lead>,
    /// Where the report has durability results: the fastest configuration that kept every
    /// promise, beside the fastest (absent without durability results).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept_promises: Option<KeptPromises>,
    /// Where it comes from: the model's table and the row in it.
    #[serde(skip)]
    pub table: usize,
    #[serde(skip)]
    pub row_index: usize,
}

/// The leaders' lead: the last of them against the best of the rest.
#[derive(Debug, Clone, Serialize)]
pub struct Lead {
    /// The best configuration behind the leaders.
    pub over: String,
    /// How many times better the last leader is (above 1, whatever the direction: 1.25 is
    /// 25 % ahead — 25 % more throughput, or the other taking 25 % longer).
    pub factor: f64,
    /// Its 95 % interval (None with too few repetitions).
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
    pub paired: bool,
}

impl Lead {
    /// "8.1 % ahead of ext4 (95 % CI 5.2..11.0 %)".
    pub fn text(&self) -> String {
        let pct = |f: f64| fixed((f - 1.0) * 100.0, 1);
        let interval = match (self.ci95_low, self.ci95_high) {
            (Some(lo), Some(hi)) => format!(" (95 % CI {}..{} %)", pct(lo), pct(hi)),
            _ => String::new(),
        };
        format!("{} % ahead of {}{interval}", pct(self.factor), self.over)
    }
}

impl Discipline {
    pub fn title(&self) -> String {
        title(&self.workload, &self.row, &self.metric)
    }

    /// Its name without the metric, where a heading names it: `stream write 256m 1m`, or
    /// `files` when the row has no dimensions.
    pub fn short_title(&self) -> String {
        if self.row == metric_label(&self.metric) {
            self.workload.clone()
        } else {
            format!("{} {}", self.workload, self.row)
        }
    }
}

/// A configuration's total.
#[derive(Debug, Clone, Serialize)]
pub struct Score {
    pub label: String,
    /// Points per category (sum over its disciplines).
    pub points: BTreeMap<Category, f64>,
    /// Disciplines it was placed in, per category.
    pub placed: BTreeMap<Category, usize>,
    /// Σ weight × (mean points per discipline of the category).
    pub overall: f64,
    /// Geometric mean over disciplines of value relative to the baseline (> 1: better).
    pub composite: Option<f64>,
    /// The 95 % interval of its overall rank: it is `rank.best` at best, `rank.worst` at worst.
    pub rank: RankInterval,
}

/// Everything the rankings say.
#[derive(Debug, Clone, Serialize)]
pub struct Standings {
    pub disciplines: Vec<Discipline>,
    /// Most points (`overall`) first.
    pub scores: Vec<Score>,
    pub baseline: Option<String>,
    pub weights: BTreeMap<Category, f64>,
    /// Median width of paired intervals relative to unpaired ones over the comparisons that
    /// could be made both ways (how much pairing by round narrowed them), with the count.
    pub pairing_gain: Option<(f64, usize)>,
    /// The overall order that is claimed: (a, b) when a is ahead of b beyond the rank
    /// intervals' resampling (`fsbench_analysis::rank::RankIntervals::ahead`); every other
    /// pair cannot be separated.
    pub ahead: Vec<(String, String)>,
    /// Resamples behind the rank intervals.
    pub resamples: usize,
}

/// How a standings table is asked for (the findings' options).
pub use crate::findings::Options;

impl Find for Standings {
    /// The standings, each discipline with the fastest configuration that kept its promises
    /// when the report has durability results.
    fn find(findings: &Findings) -> Standings {
        let mut standings = Standings::of(findings.model(), findings.options());
        let durability = findings.get::<Durability>();
        if durability.has_results() {
            for d in &mut standings.disciplines {
                d.kept_promises = Some(KeptPromises::of(d, durability));
            }
        }
        standings
    }
}

/// Beside a discipline's fastest configuration, the fastest that kept every promise when it was
/// cut (`crate::sections::durability`): a configuration without a durability result is not
/// checked, never assumed safe; one with violations is named as such.
#[derive(Debug, Clone, Serialize)]
pub struct KeptPromises {
    /// The fastest configuration (the discipline's best figure) and what it kept.
    pub fastest: String,
    pub fastest_promise: Promise,
    /// The fastest configuration with 0 violations (None: none measured here has).
    pub safe: Option<String>,
    /// Its figure.
    pub safe_mean: Option<f64>,
    /// It is among the leaders (the winner, or those that tie for first).
    pub safe_leads: bool,
    /// It against the fastest (None: it is the fastest, or there is none).
    pub safe_vs_fastest: Option<Comparison>,
    /// The configurations measured here that broke promises, and those not checked.
    pub broken: usize,
    pub not_checked: usize,
}

impl KeptPromises {
    /// What the durability results say of `d`'s configurations.
    pub fn of(d: &Discipline, durability: &Durability) -> KeptPromises {
        let is_better = better(d.direction);
        let best = d.entries.iter().find(|e| e.column == d.best).expect("best");
        let promise = |label: &str| durability.promise(label);
        let safe = d
            .entries
            .iter()
            .filter(|e| matches!(promise(&e.label), Promise::Kept { .. }))
            .reduce(|a, b| if is_better(b.mean, a.mean) { b } else { a });
        let count =
            |f: fn(&Promise) -> bool| d.entries.iter().filter(|e| f(&promise(&e.label))).count();
        KeptPromises {
            fastest: best.label.clone(),
            fastest_promise: promise(&best.label),
            safe: safe.map(|e| e.label.clone()),
            safe_mean: safe.map(|e| e.mean),
            safe_leads: safe.is_some_and(|e| d.leaders.contains(&e.label)),
            safe_vs_fastest: safe.and_then(|e| e.vs_best),
            broken: count(|p| matches!(p, Promise::Broken { .. })),
            not_checked: count(|p| matches!(p, Promise::NotChecked)),
        }
    }

    /// "xfs itself (kept every promise in 200 cuts)"; "ext4 4.70 GiB/s, 12.0 % lower (95 % CI
    /// ...); the fastest, ext4 mount=writeback, broke 12 promises in 200 cuts"; "none: ...".
    pub fn text(&self, d: &Discipline) -> String {
        let fastest = format!(
            "the fastest, {}, {}",
            self.fastest,
            self.fastest_promise.text()
        );
        match (&self.safe, self.safe_mean) {
            (Some(safe), _) if *safe == self.fastest => {
                format!("{safe} itself ({})", self.fastest_promise.text())
            }
            (Some(safe), Some(mean)) => {
                let versus = match (&self.safe_vs_fastest, self.safe_leads) {
                    (_, true) => "ties for first".to_string(),
                    (Some(v), false) => versus_text(d.direction, v),
                    (None, false) => "behind".to_string(),
                };
                format!("{safe} {}, {versus}; {fastest}", value_text(d, mean))
            }
            _ => format!(
                "none of the {} configurations measured here ({} broke promises, {} not checked); {fastest}",
                d.entries.len(),
                self.broken,
                self.not_checked
            ),
        }
    }
}

/// The disciplines of a table: each row (but a client's share) for each workload, among the
/// configurations that contend (`contends[configuration]`: not the bare device).
fn disciplines_of(
    index: usize,
    table: &Table,
    contends: &[bool],
    gains: &mut Vec<f64>,
) -> Vec<Discipline> {
    let Some(category) = WorkloadSettings::category_of(&table.workload) else {
        return Vec::new();
    };
    if !table.main || table.direction == Direction::None {
        return Vec::new();
    }
    let is_better = better(table.direction);
    let mut out = Vec::new();
    // Two workloads of one kind (a plan's `files` and `fsync` metadata loops) are different
    // disciplines: a configuration competes with the others on the same workload only.
    for workload in &table.workload_names {
        // One client's share of a client load is a breakdown of the whole, not a discipline.
        for (row_index, row) in table.rows.iter().enumerate() {
            if row.dims.client.is_some() {
                continue;
            }
            if let Some(mut d) =
                discipline(table, row, workload, category, &is_better, contends, gains)
            {
                (d.table, d.row_index) = (index, row_index);
                out.push(d);
            }
        }
    }
    out
}

/// One row of a table for one workload's columns, placed; None when nobody measured it.
fn discipline(
    table: &Table,
    row: &Row,
    workload: &str,
    category: Category,
    is_better: &impl Fn(f64, f64) -> bool,
    contends: &[bool],
    gains: &mut Vec<f64>,
) -> Option<Discipline> {
    let means: Vec<Option<f64>> = row
        .cells
        .iter()
        .zip(&table.columns)
        .map(|(c, col)| {
            c.as_ref()
                .filter(|_| col.workload == workload && contends[col.configuration])
                .map(|c| c.summary.mean)
        })
        .collect();
    let best = (0..means.len())
        .filter(|&i| means[i].is_some())
        .reduce(|i, j| {
            if is_better(means[j].unwrap(), means[i].unwrap()) {
                j
            } else {
                i
            }
        })?;
    let cell = |i: usize| row.cells[i].as_ref().expect("measured");
    let same_run = |i: usize, j: usize| table.columns[i].run_id == table.columns[j].run_id;
    let differs = |i: usize, j: usize| {
        let (c, _) = compare(cell(i), cell(j), same_run(i, j));
        c.is_some_and(|c| matches!(c.verdict, Verdict::Higher | Verdict::Lower))
    };
    let placed = placements(&means, is_better, differs);
    let best_mean = means[best].unwrap();
    let mut entries = Vec::new();
    for (i, mean) in means.iter().enumerate() {
        let Some(mean) = *mean else { continue };
        let (vs_best, unpaired) = if i == best {
            (None, None)
        } else {
            compare(cell(best), cell(i), same_run(best, i))
        };
        if let (Some(p), Some(u)) = (vs_best, unpaired) {
            if let (Some(pl), Some(ph), Some(ul), Some(uh)) =
                (p.ci95_low, p.ci95_high, u.ci95_low, u.ci95_high)
            {
                let (pw, uw) = ((ph / pl).ln(), (uh / ul).ln());
                if uw > 0.0 {
                    gains.push(pw / uw);
                }
            }
        }
        let relative_to_best = match table.direction {
            Direction::Lower if mean > 0.0 => best_mean / mean,
            _ if best_mean != 0.0 => mean / best_mean,
            _ => 1.0,
        };
        entries.push(Entry {
            column: i,
            label: table.columns[i].config_label.clone(),
            mean,
            relative_to_best,
            vs_best,
            placement: placed[i],
        });
    }
    // The verdict: those placed first, and the last of them against the best of the rest (the
    // comparison that separated the groups).
    // By place, and within a place by figure, best first: the first of the rest is then the
    // one the placement compared with the last leader (not the first of its group in the
    // plan's order, which may tie with the leaders).
    let by_figure = |&a: &usize, &b: &usize| {
        if is_better(means[a].unwrap(), means[b].unwrap()) {
            std::cmp::Ordering::Less
        } else if is_better(means[b].unwrap(), means[a].unwrap()) {
            std::cmp::Ordering::Greater
        } else {
            a.cmp(&b)
        }
    };
    let mut ranked: Vec<usize> = (0..means.len()).filter(|&i| placed[i].is_some()).collect();
    ranked.sort_by(|a, b| {
        placed[*a]
            .map(|p| p.place)
            .cmp(&placed[*b].map(|p| p.place))
            .then_with(|| by_figure(a, b))
    });
    let leaders: Vec<usize> = ranked
        .iter()
        .copied()
        .filter(|&i| placed[i].is_some_and(|p| p.place == 1))
        .collect();
    let next = ranked.iter().copied().find(|i| !leaders.contains(i));
    let lead = next.and_then(|next| {
        let last = *leaders.last()?;
        let (c, _) = compare(cell(last), cell(next), same_run(last, next));
        let c = c?;
        // c is next / last: turn it into how many times better the leader is.
        let (factor, low, high) = match table.direction {
            Direction::Lower => (c.ratio, c.ci95_low, c.ci95_high),
            _ => (
                1.0 / c.ratio,
                c.ci95_high.map(|h| 1.0 / h),
                c.ci95_low.map(|l| 1.0 / l),
            ),
        };
        Some(Lead {
            over: table.columns[next].config_label.clone(),
            factor,
            ci95_low: low,
            ci95_high: high,
            paired: c.paired,
        })
    });
    Some(Discipline {
        workload: workload.to_string(),
        category,
        metric: table.metric.clone(),
        unit: table.unit,
        direction: table.direction,
        row: row.label(&table.metric),
        best,
        entries,
        leaders: leaders
            .iter()
            .map(|&i| table.columns[i].config_label.clone())
            .collect(),
        lead,
        kept_promises: None,
        table: 0,
        row_index: 0,
    })
}

impl Standings {
    pub fn of(model: &ReportModel, options: &Options) -> Standings {
        let mut gains = Vec::new();
        let contends: Vec<bool> = model.configurations.iter().map(|c| !c.bare).collect();
        let disciplines: Vec<Discipline> = model
            .tables
            .iter()
            .enumerate()
            .flat_map(|(i, t)| disciplines_of(i, t, &contends, &mut gains))
            .collect();
        let mut labels: Vec<String> = Vec::new();
        for d in &disciplines {
            for e in &d.entries {
                if !labels.contains(&e.label) {
                    labels.push(e.label.clone());
                }
            }
        }
        let baseline = options
            .baseline
            .clone()
            .filter(|b| labels.contains(b))
            .or_else(|| labels.first().cloned());
        let weights: BTreeMap<Category, f64> = Category::ALL
            .into_iter()
            .map(|c| (c, options.weights.get(&c).copied().unwrap_or(1.0)))
            .collect();
        // Points are comparable only among disciplines most configurations ran: one that fewer
        // than half of its category's configurations took part in (a sweep on one platform) is
        // shown among the winners but does not score, or winning among 4 would weigh as much
        // as winning among 32.
        let participants =
            |d: &Discipline| d.entries.iter().filter(|e| e.placement.is_some()).count();
        let mut most: BTreeMap<Category, usize> = BTreeMap::new();
        for d in &disciplines {
            let n = most.entry(d.category).or_insert(0);
            *n = (*n).max(participants(d));
        }
        let scores_points = |d: &Discipline| participants(d) * 2 >= most[&d.category];
        let scoring: Vec<&Discipline> = disciplines.iter().filter(|d| scores_points(d)).collect();
        let category_index = |c: Category| {
            Category::ALL
                .iter()
                .position(|x| *x == c)
                .expect("a category")
        };
        let weight_list: Vec<f64> = Category::ALL.iter().map(|c| weights[c]).collect();
        // Per scoring discipline, each configuration's entry (by label order).
        let entry_of = |d: &Discipline, label: &str| -> Option<usize> {
            d.entries.iter().position(|e| e.label == label)
        };
        let overall = overall_scores(
            &scoring
                .iter()
                .map(|d| {
                    let points = labels
                        .iter()
                        .map(|l| entry_of(d, l).and_then(|e| d.entries[e].placement))
                        .map(|p| p.map(|p| p.points))
                        .collect();
                    (category_index(d.category), points)
                })
                .collect::<Vec<_>>(),
            &weight_list,
            labels.len(),
        );
        let contests: Vec<Contest> = scoring
            .iter()
            .map(|d| {
                let table = &model.tables[d.table];
                Contest {
                    values: labels
                        .iter()
                        .map(|l| {
                            let e = &d.entries[entry_of(d, l)?];
                            e.placement?;
                            let column = &table.columns[e.column];
                            let cell = table.rows[d.row_index].cells[e.column].as_ref()?;
                            Some(
                                cell.values
                                    .iter()
                                    .map(|(round, v)| ((column.run_id, *round), *v))
                                    .collect(),
                            )
                        })
                        .collect(),
                    higher_is_better: d.direction != Direction::Lower,
                    category: category_index(d.category),
                }
            })
            .collect();
        let intervals = rank_intervals(&contests, &weight_list, labels.len());
        let mut scores: Vec<Score> = labels
            .iter()
            .enumerate()
            .map(|(index, label)| {
                let mut points = BTreeMap::new();
                let mut placed = BTreeMap::new();
                let mut relative = Vec::new();
                for d in &disciplines {
                    let Some(e) = d.entries.iter().find(|e| &e.label == label) else {
                        continue;
                    };
                    if let Some(p) = e.placement.filter(|_| scores_points(d)) {
                        *points.entry(d.category).or_insert(0.0) += p.points;
                        *placed.entry(d.category).or_insert(0) += 1;
                    }
                    let base = baseline
                        .as_ref()
                        .and_then(|b| d.entries.iter().find(|e| &e.label == b));
                    if let Some(base) = base {
                        if e.mean > 0.0 && base.mean > 0.0 {
                            relative.push(match d.direction {
                                Direction::Lower => base.mean / e.mean,
                                _ => e.mean / base.mean,
                            });
                        }
                    }
                }
                Score {
                    label: label.clone(),
                    points,
                    placed,
                    overall: overall[index],
                    composite: geometric_mean(&relative),
                    rank: intervals.ranks[index],
                }
            })
            .collect();
        // Most points first, as a reader expects of a ranking (the rank intervals beside them
        // say which of its steps are real); equal points (to rounding) by their intervals,
        // then in the order the configurations first appear.
        let points = |s: &Score| (s.overall * 1e9).round();
        scores.sort_by(|a, b| {
            points(b)
                .total_cmp(&points(a))
                .then((a.rank.best, a.rank.worst).cmp(&(b.rank.best, b.rank.worst)))
        });
        gains.sort_by(f64::total_cmp);
        let pairing_gain = (!gains.is_empty()).then(|| (gains[gains.len() / 2], gains.len()));
        Standings {
            disciplines,
            scores,
            baseline,
            weights,
            pairing_gain,
            ahead: intervals
                .ahead
                .iter()
                .map(|&(a, b)| (labels[a].clone(), labels[b].clone()))
                .collect(),
            resamples: intervals.resamples,
        }
    }

    /// The categories that have disciplines, in order.
    pub fn categories(&self) -> Vec<Category> {
        Category::ALL
            .into_iter()
            .filter(|c| self.disciplines.iter().any(|d| d.category == *c))
            .collect()
    }
}

/// A number with 3 significant digits in the unit a typical value reads best in (thousands
/// as k: "33.2 k ops/s").
pub fn value_text(d: &Discipline, v: f64) -> String {
    let typical = d.entries.iter().map(|e| e.mean).fold(0.0, f64::max);
    let (factor, unit) = d.unit.display(typical);
    let text = significant(v / factor);
    if unit.is_empty() {
        text
    } else {
        format!("{text} {unit}")
    }
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
pub fn terminal_verdicts(out: &mut dyn Write, standings: &Standings) -> io::Result<()> {
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
    write_rows(out, 2, &rows)?;
    let kept: Vec<(String, String)> = standings
        .disciplines
        .iter()
        .filter_map(|d| {
            let k = d.kept_promises.as_ref()?;
            Some((
                printable(&d.title()).into_owned(),
                printable(&k.text(d)).into_owned(),
            ))
        })
        .collect();
    if kept.is_empty() {
        return Ok(());
    }
    heading(out, KEPT_HEADING)?;
    write_rows(out, 2, &kept)
}

/// What the fastest-that-kept-its-promises lines say, for every report.
pub const KEPT_HEADING: &str = "Fastest that kept its promises (per discipline: the fastest configuration with 0 violations when its filesystem was cut, beside the fastest; one the durability workload did not check is never assumed safe):";

/// The ranking, in the order of its points (best first): each configuration's points, the
/// 95 % interval of its rank beside them, and its points per category.
pub fn terminal_ranking(
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

/// The Markdown verdict: per discipline its leaders, their value and their lead; how much pairing
/// by round narrowed the intervals.
pub fn markdown_verdict(out: &mut dyn Write, standings: &Standings) -> io::Result<()> {
    writeln!(out, "## Verdict\n")?;
    writeln!(
    out,
    "Per discipline: the winner, or those that tie for first (no difference can be claimed between them), with the mean of its repetitions, and the lead over the best of the rest with its 95 % interval.\n"
)?;
    let kept = standings
        .disciplines
        .iter()
        .any(|d| d.kept_promises.is_some());
    if kept {
        writeln!(
            out,
            "| discipline | winner, or those that tie for first | value | lead over the rest (95 % CI) | fastest with no violation when cut |\n|---|---|---:|---|---|"
        )?;
    } else {
        writeln!(
    out,
    "| discipline | winner, or those that tie for first | value | lead over the rest (95 % CI) |\n|---|---|---:|---|"
)?;
    }
    for d in &standings.disciplines {
        let best = d.entries.iter().find(|e| e.column == d.best).expect("best");
        let lead = match &d.lead {
            Some(lead) => escape(&lead.text()),
            None if d.entries.len() == 1 => "the only one measured".into(),
            None => "all tie: no difference can be claimed".into(),
        };
        let kept = match &d.kept_promises {
            Some(k) => format!(" {} |", escape(&k.text(d))),
            None => String::new(),
        };
        writeln!(
            out,
            "| {} ({}) | {} | {} | {lead} |{kept}",
            escape(&d.title()),
            d.direction.phrase(),
            escape(&leaders_text(d)),
            value_text(d, best.mean),
        )?;
    }
    writeln!(out)?;
    if kept {
        writeln!(
            out,
            "Fastest with no violation when cut: per discipline, the fastest configuration whose filesystem kept every promise when the durability workload cut it (see Durability), beside the fastest; a configuration it did not check is never assumed safe.\n"
        )?;
    }
    if let Some((gain, n)) = standings.pairing_gain {
        writeln!(
        out,
        "Pairing by round: the paired intervals are {} % as wide as Welch's on the same values (median of {n} comparisons).\n",
        fixed(gain * 100.0, 0)
    )?;
    }
    Ok(())
}

/// The Markdown ranking: per configuration its rank interval, points per category, overall points
/// and composite.
pub fn markdown_ranking(out: &mut dyn Write, standings: &Standings) -> io::Result<()> {
    writeln!(out, "## Ranking\n")?;
    let categories = standings.categories();
    writeln!(
    out,
    "Most overall points first. Rank: its 95 % interval (a bootstrap over the rounds, paired; {} resamples): 1–2 means the order between those configurations is not established. Points per placement in each discipline (with N configurations the best gets N, the last 1; ties share), per category; overall = Σ weight × mean points per discipline of the category; composite = geometric mean of each value relative to {} (above 1 is better).\n",
    standings.resamples,
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
    for s in &standings.scores {
        write!(out, "| {} | {} |", s.rank.text(), escape(&s.label))?;
        for c in &categories {
            match s.points.get(c) {
                Some(p) => write!(out, " {} ({} disciplines) |", fixed(*p, 1), s.placed[c])?,
                None => write!(out, " - |")?,
            }
        }
        writeln!(
            out,
            " {} | {} |",
            fixed(s.overall, 2),
            s.composite.map_or("-".into(), |c| fixed(c, 3))
        )?;
    }
    writeln!(out)?;
    Ok(())
}

/// The workbook's verdict sheet (none without a discipline).
pub fn xlsx_verdict(
    wb: &mut Workbook,
    standings: &Standings,
    used: &mut Vec<String>,
) -> Result<(), XlsxError> {
    let bold = Format::new().set_bold();
    if standings.disciplines.is_empty() {
        return Ok(());
    }
    let ws = wb.add_worksheet();
    ws.set_name(sheet_name("verdict", used))?;
    let header = [
        "discipline",
        "direction",
        "winner, or those that tie for first",
        "value",
        "unit",
        "lead over",
        "lead (times better)",
        "lead ci95_low",
        "lead ci95_high",
    ];
    for (j, h) in header.iter().enumerate() {
        ws.write_string_with_format(0, j as u16, *h, &bold)?;
    }
    for (i, d) in standings.disciplines.iter().enumerate() {
        let r = 1 + i as u32;
        let best = d.entries.iter().find(|e| e.column == d.best).expect("best");
        ws.write_string(r, 0, d.title())?;
        ws.write_string(r, 1, d.direction.phrase())?;
        ws.write_string(r, 2, leaders_text(d))?;
        ws.write_number(r, 3, best.mean)?;
        ws.write_string(r, 4, d.unit.name())?;
        if let Some(lead) = &d.lead {
            ws.write_string(r, 5, &lead.over)?;
            ws.write_number(r, 6, lead.factor)?;
            if let (Some(lo), Some(hi)) = (lead.ci95_low, lead.ci95_high) {
                ws.write_number(r, 7, lo)?;
                ws.write_number(r, 8, hi)?;
            }
        }
    }
    Ok(())
}

/// The workbook's ranking sheet, with the rank intervals (none without a discipline).
pub fn xlsx_ranking(
    wb: &mut Workbook,
    standings: &Standings,
    used: &mut Vec<String>,
) -> Result<(), XlsxError> {
    let bold = Format::new().set_bold();
    if standings.disciplines.is_empty() {
        return Ok(());
    }
    let ws = wb.add_worksheet();
    ws.set_name(sheet_name("ranking", used))?;
    let categories = standings.categories();
    let mut header: Vec<String> = ["rank best", "rank worst", "configuration"]
        .map(String::from)
        .to_vec();
    header.extend(categories.iter().map(|c| format!("{} points", c.name())));
    header.extend(["overall".to_string(), "composite".to_string()]);
    for (j, h) in header.iter().enumerate() {
        ws.write_string_with_format(0, j as u16, h, &bold)?;
    }
    for (i, s) in standings.scores.iter().enumerate() {
        let r = 1 + i as u32;
        ws.write_number(r, 0, s.rank.best as f64)?;
        ws.write_number(r, 1, s.rank.worst as f64)?;
        ws.write_string(r, 2, &s.label)?;
        for (j, c) in categories.iter().enumerate() {
            if let Some(p) = s.points.get(c) {
                ws.write_number(r, 3 + j as u16, *p)?;
            }
        }
        let next = 3 + categories.len() as u16;
        ws.write_number(r, next, s.overall)?;
        if let Some(c) = s.composite {
            ws.write_number(r, next + 1, c)?;
        }
    }
    Ok(())
}

/// The HTML verdict: per category, each discipline's leaders with their value and lead (a
/// leader whose samples the host marked marked too), with the heat-map of every configuration
/// against the best (empty without a discipline).
pub fn html_verdict(findings: &Findings) -> Result<String, minijinja::Error> {
    let (model, standings) = (findings.model(), findings.get::<Standings>());
    let marked = findings.get::<Marked>();
    let colour_of = |label: &str| colour(model, label);
    let host = &findings.get::<HostMarks>().0;
    let categories = standings.categories();
    // The verdict, grouped by category.
    let verdict: Vec<_> = categories
        .iter()
        .map(|category| {
            let rows: Vec<_> = standings
                .disciplines
                .iter()
                .filter(|d| d.category == *category)
                .map(|d| {
                    let best = d.entries.iter().find(|e| e.column == d.best).expect("best");
                    minijinja::context! {
                        title => d.title(),
                        arrow => arrow(d.direction),
                        direction => d.direction.phrase(),
                        leaders => d.leaders.iter().map(|l| minijinja::context! { label => l.clone(), colour => colour_of(l), marked => marked_text(marked, &d.workload, l) }).collect::<Vec<_>>(),
                        tie => d.leaders.len() > 1,
                        leaders_text => leaders_text(d),
                        value => value_text(d, best.mean),
                        lead => d.lead.as_ref().map(|l| l.text()),
                        alone => d.entries.len() == 1,
                        kept => d.kept_promises.as_ref().map(|k| minijinja::context! { text => k.text(d), safe => k.safe.is_some() }),
                    }
                })
                .collect();
            minijinja::context! { name => category.name(), rows => rows }
        })
        .collect();
    let heatmap = heatmap_view(
        model,
        standings,
        &categories,
        marked,
        findings.get::<Durability>(),
    );
    if verdict.is_empty() {
        return Ok(String::new());
    }
    let pairing = standings.pairing_gain.map(|(g, n)| {
        format!(
            "Pairing by round: over {n} comparisons, the paired intervals are {:.0} % as wide as Welch's intervals on the same values (median). Below 100 %, the configurations of a round shared the machine's drift and pairing removed it; above, they did not, and pairing's fewer degrees of freedom cost more than it removed.",
            g * 100.0
        )
    });
    render_html(
        "verdict.html.j2",
        VERDICT_TEMPLATE,
        minijinja::context! {
            verdict => verdict,
            heatmap => heatmap,
            kept => standings.disciplines.iter().any(|d| d.kept_promises.is_some()),
            pairing => pairing,
            host => host,
        },
    )
}

/// The HTML ranking, with its rank intervals (empty without a discipline).
pub fn html_ranking(findings: &Findings) -> Result<String, minijinja::Error> {
    let (model, standings) = (findings.model(), findings.get::<Standings>());
    let colour_of = |label: &str| colour(model, label);
    let categories = standings.categories();
    if categories.is_empty() {
        return Ok(String::new());
    }
    let scores: Vec<_> = standings
        .scores
        .iter()
        .map(|s| {
            minijinja::context! {
                rank => s.rank.text(),
                label => s.label.clone(),
                colour => colour_of(&s.label),
                points => categories.iter().map(|c| s.points.get(c).map_or("-".into(), |p| format!("{} ({} disciplines)", fixed(*p, 1), s.placed[c]))).collect::<Vec<String>>(),
                overall => fixed(s.overall, 2),
                composite => s.composite.map_or("-".into(), |c| fixed(c, 3)),
            }
        })
        .collect();
    let ranking_note = format!(
        "In the order of the overall points, most first. Rank: its 95 % interval — a bootstrap over the rounds ({} resamples, paired: every configuration keeps the rounds drawn), so 1–2 means the order between those configurations is not established; only an order the intervals separate is claimed. Points per placement in each discipline: with N configurations the best gets N points and the last 1; configurations that do not differ significantly share their places' points. Overall = Σ category weight × mean points per discipline of the category (weights: {}). Composite = geometric mean over every discipline of the figure relative to {} (above 1 is better).",
        standings.resamples,
        standings.weights.iter().map(|(c, w)| format!("{} {w}", c.name())).collect::<Vec<_>>().join(", "),
        standings.baseline.as_deref().unwrap_or("the baseline"),
    );
    render_html(
        "ranking.html.j2",
        RANKING_TEMPLATE,
        minijinja::context! {
            ranking_note => ranking_note,
            categories => categories.iter().map(|c| format!("{} points (weight {})", c.name(), standings.weights[c])).collect::<Vec<_>>(),
            baseline => standings.baseline.clone().unwrap_or_default(),
            scores => scores,
        },
    )
}

/// Each discipline's verdict: in every output (the JSON's `standings`, the whole standings).
pub struct VerdictSection;

impl Section for VerdictSection {
    fn name(&self) -> &'static str {
        "verdict"
    }

    fn terminal(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        terminal_verdicts(out, findings.get())
    }

    fn markdown(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        markdown_verdict(out, findings.get())
    }

    fn html(&self, findings: &Findings) -> Result<Option<String>, minijinja::Error> {
        html_verdict(findings).map(Some)
    }

    fn workbook(
        &self,
        findings: &Findings,
        workbook: &mut Workbook,
        used: &mut Vec<String>,
    ) -> Result<(), XlsxError> {
        xlsx_verdict(workbook, findings.get(), used)
    }

    fn json(&self, findings: &Findings) -> serde_json::Result<Option<JsonMember>> {
        JsonMember::new("standings", findings.get::<Standings>()).map(Some)
    }
}

/// The ranking by points, with its rank intervals.
pub struct RankingSection;

impl Section for RankingSection {
    fn name(&self) -> &'static str {
        "ranking"
    }

    fn terminal(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        terminal_ranking(out, findings.get(), findings.model())
    }

    fn markdown(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        markdown_ranking(out, findings.get())
    }

    fn html(&self, findings: &Findings) -> Result<Option<String>, minijinja::Error> {
        html_ranking(findings).map(Some)
    }

    fn workbook(
        &self,
        findings: &Findings,
        workbook: &mut Workbook,
        used: &mut Vec<String>,
    ) -> Result<(), XlsxError> {
        xlsx_ranking(workbook, findings.get(), used)
    }
}

const VERDICT_TEMPLATE: &str = include_str!("verdict.html.j2");
const RANKING_TEMPLATE: &str = include_str!("ranking.html.j2");

/// The heat-map of configurations × disciplines (grouped by category): each cell the
/// configuration's figure relative to the best of the discipline, coloured by it, with its
/// value and its comparison with the best on hover; the leaders' cells marked.
fn heatmap_view(
    model: &ReportModel,
    standings: &Standings,
    categories: &[Category],
    marked: &Marked,
    durability: &Durability,
) -> minijinja::Value {
    let ordered: Vec<&Discipline> = categories
        .iter()
        .flat_map(|c| {
            standings
                .disciplines
                .iter()
                .filter(move |d| d.category == *c)
        })
        .collect();
    let mut groups: Vec<_> = categories
        .iter()
        .map(|c| {
            minijinja::context! {
                name => c.name(),
                span => ordered.iter().filter(|d| d.category == *c).count(),
            }
        })
        .collect();
    let mut columns: Vec<_> = ordered
        .iter()
        .map(|d| {
            minijinja::context! { short => d.short_title(), title => format!("{} ({})", d.title(), d.direction.phrase()) }
        })
        .collect();
    let durable = durability.has_results();
    if durable {
        groups.push(minijinja::context! { name => "durability", span => 1 });
        columns.push(minijinja::context! {
            short => "violations",
            title => "durability violations (lower is better; 0 is the only good value)",
        });
    }
    let rows: Vec<_> = model
        .configurations
        .iter()
        .enumerate()
        .filter(|(_, c)| c.measured)
        .map(|(i, c)| {
            let cells: Vec<_> = ordered
                .iter()
                .map(|d| match d.entries.iter().find(|e| e.label == c.label) {
                    None => minijinja::context! { text => "", title => format!("{}: not measured in {}", c.label, d.title()), background => "", dark => false, leader => false },
                    Some(e) => {
                        let (background, dark) = heat(e.relative_to_best);
                        let versus = match &e.vs_best {
                            None => "the best".to_string(),
                            Some(v) => versus_text(d.direction, v),
                        };
                        let tie = matches!(e.vs_best.map(|v| v.verdict), Some(Verdict::Tie | Verdict::Unknown));
                        let host = marked_text(marked, &d.workload, &c.label);
                        minijinja::context! {
                            text => fixed(e.relative_to_best * 100.0, 0),
                            title => format!("{} in {}: {} — {versus}{}", c.label, d.title(), value_text(d, e.mean), host.as_ref().map_or(String::new(), |h| format!("; ⚠ {h}"))),
                            marked => host.is_some(),
                            background => background,
                            dark => dark,
                            leader => d.leaders.contains(&c.label),
                            tie => tie,
                        }
                    }
                })
                .chain(durable.then(|| durability_cell(durability, &c.label)))
                .collect();
            minijinja::context! { label => c.label.clone(), colour => charts::colour_hex(i), cells => cells }
        })
        .collect();
    minijinja::context! {
        groups => groups,
        columns => columns,
        rows => rows,
        numbers => ordered.len() <= 24,
        durability => durable,
    }
}

/// The heat-map's durability cell for a configuration: its count of violations, not a share
/// of the best. The speed columns colour a figure by its ratio to the best on a log scale;
/// for violations the best is 0, so every ratio is 0/0 or infinite, and a count of broken
/// promises is not a speed to scale anyway — 0 is good and any other count is a fault. So the
/// cell is the best's colour (outlined, as the leaders are) with 0, red with any violation
/// (the count as its text), and empty when the configuration was not checked (never assumed
/// safe; hover says why).
fn durability_cell(durability: &Durability, label: &str) -> minijinja::Value {
    match durability.promise(label) {
        Promise::Kept { cuts } => minijinja::context! {
            text => "0",
            title => format!("{label}: 0 violations in {cuts} cuts — kept every promise"),
            background => heat(1.0).0,
            dark => true,
            leader => true,
        },
        Promise::Broken { violations, cuts } => minijinja::context! {
            text => violations.to_string(),
            title => format!(
                "{label}: {violations} violation{} in {cuts} cuts — broke promises when cut",
                if violations == 1 { "" } else { "s" }
            ),
            background => "hsl(0, 65%, 45%)",
            dark => true,
            leader => false,
        },
        Promise::NotChecked => minijinja::context! {
            text => "",
            title => match durability.why_not(label) {
                Some(n) => format!("{label}: not checked for durability: {}", n.text()),
                None => format!("{label}: not checked for durability"),
            },
            background => "",
            dark => false,
            leader => false,
        },
    }
}
/// The heat-map's colour for a value relative to the best (1 = the best, darkest), and whether
/// it needs light text: on a log scale, so half the best is half-way and a quarter is palest.
fn heat(relative: f64) -> (String, bool) {
    let t = (1.0 + relative.max(1e-9).ln() / 4f64.ln()).clamp(0.0, 1.0);
    // Pale yellow (a quarter of the best or less) to dark green (the best).
    let (hue, lightness) = (50.0 + 90.0 * t, 88.0 - 52.0 * t);
    (format!("hsl({hue:.0}, 55%, {lightness:.0}%)"), t > 0.65)
}
/// What the marks of a workload's samples on a configuration say, in one line ("repetition
/// 2: not steady: ...; repetition 3: ..."); None when they have none.
pub fn marked_text(marked: &Marked, workload: &str, label: &str) -> Option<String> {
    let marks = marked.get(&(workload.to_string(), label.to_string()))?;
    Some(
        marks
            .iter()
            .map(|(r, m)| format!("repetition {r}: {}", m.text))
            .collect::<Vec<_>>()
            .join("; "),
    )
}
