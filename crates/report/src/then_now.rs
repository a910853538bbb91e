//! Then and now: a study's published figures (the `[[published]]` and `[[claims]]` of the
//! run's stored plan text, `fsbench_model::published`) beside the run's own. The hardware
//! differs, so what can agree is the ratios between configurations: each published value is
//! normalised to the study's reference configuration, and the run's value of the same
//! configuration is set against the run's reference paired by round (as the standings compare:
//! [`compare_rounds`]), with its 95 % interval; each claim gets a verdict — agrees, disagrees,
//! tie now (the interval spans 1) or not measured. Computed once from a [`ReportModel`];
//! rendered by the Markdown, terminal and HTML exporters.

use crate::model::{CaseView, ReportModel, RunView};
use crate::standings::{compare_rounds, Options, Standings};
use crate::terminal::number;
use fsbench_model::published::{self, Claim, Finding, Published, Selector, StudyFigures};
use fsbench_model::{Direction, Unit};
use fsbench_store::Outcome;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io;

/// What a claim is found to be now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The run's interval lies wholly on the side the study found (or, for "about equal",
    /// spans 1).
    Agrees,
    /// It lies wholly on the other side (or, for "about equal", away from 1).
    Disagrees,
    /// The study found a difference; the run's interval spans 1.
    TieNow,
    /// A configuration has no figure in the run (unsupported, failed, not in the run), or too
    /// few rounds for an interval.
    NotMeasured,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Agrees => "agrees",
            Verdict::Disagrees => "disagrees",
            Verdict::TieNow => "tie now",
            Verdict::NotMeasured => "not measured",
        }
    }

    /// Of one claim set against several configurations: disagrees when it does against any,
    /// a tie when it ties with any, agrees when it agrees with every one measured.
    fn of_all(verdicts: &[Verdict]) -> Verdict {
        let measured: Vec<Verdict> = verdicts
            .iter()
            .copied()
            .filter(|v| *v != Verdict::NotMeasured)
            .collect();
        if measured.is_empty() {
            Verdict::NotMeasured
        } else if measured.contains(&Verdict::Disagrees) {
            Verdict::Disagrees
        } else if measured.contains(&Verdict::TieNow) {
            Verdict::TieNow
        } else {
            Verdict::Agrees
        }
    }
}

/// The run's ratio of one configuration to another: with its 95 % interval (paired by round,
/// or Welch's), or exact (points, which have no interval).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Now {
    pub ratio: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub paired: bool,
    /// Rounds paired (or the smaller side's count).
    pub n: usize,
}

impl Now {
    fn exact(ratio: f64) -> Now {
        Now {
            ratio,
            low: Some(ratio),
            high: Some(ratio),
            paired: false,
            n: 1,
        }
    }
}

/// What the run says of a claim the study made (`finding`), given the run's ratio.
pub fn verdict(finding: Finding, now: Option<&Now>) -> Verdict {
    let Some((lo, hi)) = now.and_then(|n| n.low.zip(n.high)) else {
        return Verdict::NotMeasured;
    };
    match finding {
        Finding::Higher if lo > 1.0 => Verdict::Agrees,
        Finding::Higher if hi < 1.0 => Verdict::Disagrees,
        Finding::Lower if hi < 1.0 => Verdict::Agrees,
        Finding::Lower if lo > 1.0 => Verdict::Disagrees,
        Finding::Higher | Finding::Lower => Verdict::TieNow,
        Finding::Equal if lo > 1.0 || hi < 1.0 => Verdict::Disagrees,
        Finding::Equal => Verdict::Agrees,
    }
}

/// One configuration of a published figure, then and now.
#[derive(Debug, Clone, Serialize)]
pub struct FigureRow {
    /// The configuration as the figure names it.
    pub label: String,
    pub reference: bool,
    /// The published value and the line it is on (when not the figure's `source`).
    pub then: f64,
    pub line: Option<u32>,
    /// then / the reference's.
    pub then_ratio: f64,
    /// The run's mean (in the run's unit), when measured.
    pub now_mean: Option<f64>,
    /// The run's ratio to its reference (None for the reference itself, or not measured).
    pub now: Option<Now>,
    /// None for the reference.
    pub verdict: Option<Verdict>,
    /// Why it has no figure now (`unsupported`, `no sample`), when it has none.
    pub missing: Option<String>,
}

/// One published figure beside the run's.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    pub published: Published,
    /// What the run's figure is (`copy-untar-remove untar (real time)`), its unit and direction;
    /// `missing` says why there is none.
    pub now_title: String,
    pub now_unit: Option<Unit>,
    pub now_direction: Option<Direction>,
    /// How many of the run's result rows it takes together (their geometric mean per round).
    pub rows_taken: usize,
    pub rows: Vec<FigureRow>,
    pub missing: Option<String>,
}

/// One claim beside the run's.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimView {
    pub claim: Claim,
    pub finding: Finding,
    /// The run's ratio config / against (the closest to contradicting the claim when it is set
    /// against several configurations).
    pub now: Option<Now>,
    /// The configuration `now` is against, and how many it was set against.
    pub against: Option<String>,
    pub against_count: usize,
    pub verdict: Verdict,
    pub missing: Option<String>,
}

/// One run's study: its figures and claims.
#[derive(Debug, Clone, Serialize)]
pub struct Study {
    pub run_id: i64,
    pub plan: String,
    pub figures: Vec<Figure>,
    pub claims: Vec<ClaimView>,
    /// The run's plan text could not be read for its figures (stored by another version).
    pub error: Option<String>,
}

/// Every study of a model: one per run whose plan carries published figures.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ThenNow {
    pub studies: Vec<Study>,
}

impl ThenNow {
    pub fn of(model: &ReportModel) -> ThenNow {
        let mut studies = Vec::new();
        for run in &model.runs {
            let figures = match toml::from_str::<StudyFigures>(&run.run.plan_text) {
                Ok(f) if f.is_empty() => continue,
                Ok(f) => f,
                Err(e) if run.run.plan_text.contains("[[published]]") => {
                    studies.push(Study {
                        run_id: run.run.id,
                        plan: run.run.plan_name.clone(),
                        figures: Vec::new(),
                        claims: Vec::new(),
                        error: Some(e.message().trim().to_string()),
                    });
                    continue;
                }
                Err(_) => continue,
            };
            studies.push(Study::of(run, &figures));
        }
        ThenNow { studies }
    }

    pub fn is_empty(&self) -> bool {
        self.studies.is_empty()
    }
}

/// Where the run's values of one figure come from.
struct Source<'a> {
    run: &'a RunView,
    workload: &'a str,
    metric: &'a str,
    dims: &'a BTreeMap<String, String>,
    /// The run alone as a model (its tables) and its standings (for points).
    alone: &'a (ReportModel, Standings),
}

/// A configuration's values, or why it has none.
type Series = Result<Vec<(u32, f64)>, String>;

impl<'a> Source<'a> {
    /// The run's cases of this workload that `label` names.
    fn cases(&self, label: &Selector) -> Vec<&'a CaseView> {
        self.run
            .cases
            .iter()
            .filter(|c| c.axis(fsbench_model::CaseAxis::Workload) == self.workload)
            .filter(|c| label.matches(&c.config))
            .collect()
    }

    /// Why a case has no values: how its samples ended.
    fn why_not(case: &CaseView) -> String {
        case.samples
            .iter()
            .find(|s| s.status != Outcome::Ok)
            .map_or_else(|| "no value".to_string(), |s| s.status.name().to_string())
    }

    /// The run's figure: (its title, unit, direction, how many result rows it takes), or why
    /// there is none.
    fn describe(&self) -> Result<(String, Unit, Direction, usize), String> {
        match self.metric {
            published::POINTS => Ok((
                format!("{} points", self.workload),
                Unit::Count,
                Direction::Higher,
                0,
            )),
            published::FSCK => Ok((
                format!("{}: the filesystem check after each sample", self.workload),
                Unit::Nanos,
                Direction::Lower,
                1,
            )),
            metric => {
                let (table, rows) = self.table().ok_or_else(|| {
                    format!(
                        "the run has no {metric} of workload {} matching {}",
                        self.workload,
                        match_text(self.dims)
                    )
                })?;
                let row = if rows.len() == 1 {
                    table.rows[rows[0]].label(metric)
                } else {
                    format!("{} rows", rows.len())
                };
                Ok((
                    crate::standings::title(self.workload, &row, metric),
                    table.unit,
                    table.direction,
                    rows.len(),
                ))
            }
        }
    }

    /// The model's table of this metric with a column of this workload in this run, and its
    /// rows the dimensions match.
    fn table(&self) -> Option<(&crate::model::Table, Vec<usize>)> {
        let model_tables = self.model_tables();
        model_tables.into_iter().find_map(|t| {
            let rows: Vec<usize> = (0..t.rows.len())
                .filter(|&i| published::dims_match(self.dims, &t.rows[i].dims))
                .collect();
            (!rows.is_empty()).then_some((t, rows))
        })
    }

    fn model_tables(&self) -> Vec<&crate::model::Table> {
        self.alone
            .0
            .tables
            .iter()
            .filter(|t| {
                t.metric == self.metric
                    && t.columns
                        .iter()
                        .any(|c| c.run_id == self.run.run.id && c.workload == self.workload)
            })
            .collect()
    }

    /// One case's values per round: of the matching rows (their geometric mean in the rounds
    /// every row has), of the check after each sample, or why there are none.
    fn series(&self, case: &CaseView) -> Series {
        if self.metric == published::FSCK {
            let values: Vec<(u32, f64)> = case
                .samples
                .iter()
                .filter(|s| s.status == Outcome::Ok)
                .filter_map(|s| {
                    let ns = s.target.as_ref()?["fsck"]["elapsed_ns"].as_f64()?;
                    Some((s.repetition, ns))
                })
                .collect();
            return if values.is_empty() {
                Err(Self::why_not(case))
            } else {
                Ok(values)
            };
        }
        let Some((table, rows)) = self.table() else {
            return Err(Self::why_not(case));
        };
        let Some(col) = table
            .columns
            .iter()
            .position(|c| c.run_id == case.run_id && c.case_key == case.key)
        else {
            return Err(Self::why_not(case));
        };
        let per_row: Vec<&[(u32, f64)]> = rows
            .iter()
            .filter_map(|&r| {
                table.rows[r].cells[col]
                    .as_ref()
                    .map(|c| c.values.as_slice())
            })
            .collect();
        if per_row.len() < rows.len() || per_row.is_empty() {
            return Err(Self::why_not(case));
        }
        let mut rounds: Vec<u32> = per_row[0].iter().map(|(r, _)| *r).collect();
        rounds.retain(|r| per_row.iter().all(|vs| vs.iter().any(|(x, _)| x == r)));
        let values: Vec<(u32, f64)> = rounds
            .into_iter()
            .filter_map(|r| {
                let xs: Vec<f64> = per_row
                    .iter()
                    .filter_map(|vs| vs.iter().find(|(x, _)| *x == r).map(|(_, v)| *v))
                    .collect();
                fsbench_analysis::rank::geometric_mean(&xs).map(|g| (r, g))
            })
            .collect();
        if values.is_empty() {
            Err(Self::why_not(case))
        } else {
            Ok(values)
        }
    }

    /// The points of the configurations `cases` in this workload's disciplines, added up.
    fn points(&self, cases: &[&CaseView]) -> Result<f64, String> {
        let (model, standings) = self.alone;
        let keys: Vec<&str> = cases.iter().map(|c| c.key.as_str()).collect();
        let mut total = None;
        for d in standings
            .disciplines
            .iter()
            .filter(|d| d.workload == self.workload)
        {
            for e in &d.entries {
                let Some(p) = e.placement else { continue };
                let column = model
                    .tables
                    .iter()
                    .filter(|t| t.metric == d.metric && t.unit == d.unit)
                    .find_map(|t| {
                        t.columns
                            .get(e.column)
                            .filter(|c| c.workload == d.workload && c.config_label == e.label)
                    });
                if column.is_some_and(|c| keys.contains(&c.case_key.as_str())) {
                    *total.get_or_insert(0.0) += p.points;
                }
            }
        }
        total.ok_or_else(|| {
            cases
                .first()
                .map_or_else(|| "not in the run".to_string(), |c| Self::why_not(c))
        })
    }

    /// `label` against `against`: the run's ratio, or why there is none (`against_name`
    /// says which side lacks it when `against` does: "the reference: unsupported").
    fn compare(
        &self,
        label: &[&CaseView],
        against: &[&CaseView],
        against_name: &str,
    ) -> Result<Now, String> {
        let other_side = |e: String| format!("{against_name}: {e}");
        if self.metric == published::POINTS {
            let a = self.points(label)?;
            let b = self.points(against).map_err(other_side)?;
            if b <= 0.0 {
                return Err(other_side("no points".into()));
            }
            return Ok(Now::exact(a / b));
        }
        let Some(case) = label.first() else {
            return Err("not in the run".into());
        };
        let Some(other) = against.first() else {
            return Err(other_side("not in the run".into()));
        };
        let a = self.series(case)?;
        let b = self.series(other).map_err(other_side)?;
        let (c, _) = compare_rounds(&b, &a, true);
        let c = c.ok_or("no positive values")?;
        Ok(Now {
            ratio: c.ratio,
            low: c.ci95_low,
            high: c.ci95_high,
            paired: c.paired,
            n: c.n,
        })
    }
}

/// `step=untar phase=` as a figure names its dimensions.
fn match_text(dims: &BTreeMap<String, String>) -> String {
    if dims.is_empty() {
        return "any dimensions".into();
    }
    dims.iter()
        .map(|(k, v)| {
            if v.is_empty() {
                format!("no {k}")
            } else {
                format!("{k}={v}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Study {
    fn of(run: &RunView, figures: &StudyFigures) -> Study {
        // The run alone: its tables and, for points, its own ranking.
        let model = ReportModel::from_runs(vec![run.clone()]);
        let standings = Standings::of(&model, &Options::default());
        let both = (model, standings);
        Study {
            run_id: run.run.id,
            plan: run.run.plan_name.clone(),
            figures: figures
                .published
                .iter()
                .map(|p| figure(run, &both, p))
                .collect(),
            claims: figures
                .claims
                .iter()
                .map(|c| claim(run, &both, c))
                .collect(),
            error: None,
        }
    }
}

fn source<'a>(
    run: &'a RunView,
    both: &'a (ReportModel, Standings),
    workload: &'a str,
    metric: &'a str,
    dims: &'a BTreeMap<String, String>,
) -> Source<'a> {
    Source {
        run,
        workload,
        metric,
        dims,
        alone: both,
    }
}

/// The cases `label` names (none when it does not parse: the plan checked it when it ran).
fn named<'a>(source: &Source<'a>, label: &str) -> Vec<&'a CaseView> {
    label
        .parse::<Selector>()
        .map(|s| source.cases(&s))
        .unwrap_or_default()
}

fn mean(values: &[(u32, f64)]) -> f64 {
    values.iter().map(|(_, v)| v).sum::<f64>() / values.len() as f64
}

fn figure(run: &RunView, both: &(ReportModel, Standings), p: &Published) -> Figure {
    let source = source(run, both, &p.workload, &p.metric, &p.dims);
    let (now_title, now_unit, now_direction, rows_taken, missing) = match source.describe() {
        Ok((title, unit, direction, n)) => (title, Some(unit), Some(direction), n, None),
        Err(e) => (String::new(), None, None, 0, Some(e)),
    };
    let reference_then = p.values.get(&p.reference).map_or(f64::NAN, |v| v.value());
    let reference = named(&source, &p.reference);
    let mut rows: Vec<(i64, FigureRow)> = Vec::new();
    for (label, value) in &p.values {
        let cases = named(&source, label);
        let then_ratio = value.value() / reference_then;
        let is_reference = *label == p.reference;
        let now_mean = if p.metric == published::POINTS {
            source.points(&cases).ok()
        } else {
            cases
                .first()
                .and_then(|c| source.series(c).ok())
                .map(|v| mean(&v))
        };
        let (now, verdict, missing) = if is_reference {
            let missing = now_mean.is_none().then(|| {
                cases
                    .first()
                    .map_or_else(|| "not in the run".into(), |c| Source::why_not(c))
            });
            (None, None, missing)
        } else {
            match source.compare(&cases, &reference, "the reference") {
                Ok(now) => (
                    Some(now),
                    Some(verdict(Finding::of_ratio(then_ratio), Some(&now))),
                    None,
                ),
                Err(e) => (None, Some(Verdict::NotMeasured), Some(e)),
            }
        };
        rows.push((
            cases.first().map_or(i64::MAX, |c| c.position),
            FigureRow {
                label: label.clone(),
                reference: is_reference,
                then: value.value(),
                line: value.line(),
                then_ratio,
                now_mean,
                now,
                verdict,
                missing,
            },
        ));
    }
    // In the order of the run's cases (the plan's order of the configurations).
    rows.sort_by_key(|(position, _)| *position);
    Figure {
        published: p.clone(),
        now_title,
        now_unit,
        now_direction,
        rows_taken,
        rows: rows.into_iter().map(|(_, r)| r).collect(),
        missing,
    }
}

/// A case's configuration as the run's tables label it (`xfs mount=logbufs`).
fn label_of(model: &ReportModel, case: &CaseView) -> String {
    model
        .tables
        .iter()
        .flat_map(|t| &t.columns)
        .find(|c| c.run_id == case.run_id && c.case_key == case.key)
        .map_or_else(
            || {
                case.key
                    .rsplit_once('.')
                    .map_or(case.key.clone(), |(c, _)| c.to_string())
            },
            |c| c.config_label.clone(),
        )
}

fn claim(run: &RunView, both: &(ReportModel, Standings), c: &Claim) -> ClaimView {
    let source = source(run, both, &c.workload, &c.metric, &c.dims);
    // The plan checked it; a stored text from elsewhere that says neither reads as "equal".
    let finding = c.finding().unwrap_or(Finding::Equal);
    let config = named(&source, &c.config);
    let mut against = named(&source, &c.against);
    against.retain(|a| !config.iter().any(|x| x.key == a.key));
    let view = |now: Option<Now>, label: Option<String>, count, verdict, missing| ClaimView {
        claim: c.clone(),
        finding,
        now,
        against: label,
        against_count: count,
        verdict,
        missing,
    };
    if config.is_empty() || against.is_empty() {
        return view(
            None,
            None,
            against.len(),
            Verdict::NotMeasured,
            Some("not in the run".into()),
        );
    }
    if c.metric == published::POINTS {
        return match source.compare(&config, &against, "against") {
            Ok(now) => view(
                Some(now),
                Some(c.against.clone()),
                1,
                verdict(finding, Some(&now)),
                None,
            ),
            Err(e) => view(None, None, 1, Verdict::NotMeasured, Some(e)),
        };
    }
    let results: Vec<(String, Result<Now, String>)> = against
        .iter()
        .map(|a| {
            (
                label_of(&both.0, a),
                source.compare(&config, &[a], "against"),
            )
        })
        .collect();
    let verdicts: Vec<Verdict> = results
        .iter()
        .map(|(_, r)| verdict(finding, r.as_ref().ok()))
        .collect();
    // The one closest to contradicting the claim.
    let severity = |n: &Now| match finding {
        Finding::Higher => -n.ratio,
        Finding::Lower => n.ratio,
        Finding::Equal => n.ratio.ln().abs(),
    };
    let shown = results
        .iter()
        .filter_map(|(l, r)| r.as_ref().ok().map(|n| (l, n)))
        .max_by(|a, b| severity(a.1).total_cmp(&severity(b.1)));
    let missing = match shown {
        Some(_) => None,
        None => results.iter().find_map(|(_, r)| r.as_ref().err().cloned()),
    };
    view(
        shown.map(|(_, n)| *n),
        shown.map(|(l, _)| l.clone()),
        against.len(),
        Verdict::of_all(&verdicts),
        missing,
    )
}

/// A ratio as the table shows it: `0.70×`, `4.57×`, `0.031×`.
pub fn ratio_text(r: f64) -> String {
    if !r.is_finite() {
        "-".into()
    } else if r >= 10.0 {
        format!("{r:.1}×")
    } else if r >= 0.1 {
        format!("{r:.2}×")
    } else {
        format!("{r:.3}×")
    }
}

/// The run's ratio with its interval: `0.85× [0.80–0.91]`, or with what it lacks.
pub fn now_text(now: &Now) -> String {
    match (now.low, now.high) {
        (Some(lo), Some(hi)) if lo == hi => format!("{} (no interval)", ratio_text(now.ratio)),
        (Some(lo), Some(hi)) => format!(
            "{} [{}–{}]",
            ratio_text(now.ratio),
            ratio_text(lo).trim_end_matches('×'),
            ratio_text(hi).trim_end_matches('×')
        ),
        _ => format!("{} (too few rounds for an interval)", ratio_text(now.ratio)),
    }
}

/// A figure's value in the run's unit (`2.24 s`).
pub fn value_text(unit: Unit, typical: f64, v: f64) -> String {
    let (factor, label) = unit.display(typical);
    let n = number(v / factor);
    if label.is_empty() {
        n
    } else {
        format!("{n} {label}")
    }
}

/// A published value as the study printed it, with its unit (`32.418 s`, `7090 transactions/s`).
pub fn then_text(value: f64, unit: &str) -> String {
    format!("{value} {unit}")
}

/// The verdict with why it was not measured, when it was not (`not measured (unsupported)`).
pub fn verdict_text(verdict: Verdict, missing: Option<&str>) -> String {
    match (verdict, missing) {
        (Verdict::NotMeasured, Some(why)) => format!("not measured ({why})"),
        (v, _) => v.name().to_string(),
    }
}

impl Figure {
    /// The run's value of one row in its unit, scaled by the figure's largest mean.
    pub fn now_value(&self, row: &FigureRow) -> String {
        let typical = self
            .rows
            .iter()
            .filter_map(|r| r.now_mean)
            .fold(0.0, f64::max);
        match (row.now_mean, self.now_unit) {
            (Some(v), _) if self.published.metric == published::POINTS => format!("{v} points"),
            (Some(v), Some(unit)) => value_text(unit, typical, v),
            _ => "—".into(),
        }
    }

    /// The published value of one row, with its line when it has one of its own.
    pub fn then_value(&self, row: &FigureRow) -> String {
        let text = then_text(row.then, &self.published.unit);
        match row.line {
            Some(line) => format!("{text} (l.{line})"),
            None => text,
        }
    }
}

impl ClaimView {
    /// What the study found: its ratio, or higher / lower / about equal.
    pub fn then_text(&self) -> String {
        match self.claim.then {
            Some(r) => ratio_text(r),
            None => match self.finding {
                Finding::Higher => "higher".into(),
                Finding::Lower => "lower".into(),
                Finding::Equal => "about equal".into(),
            },
        }
    }

    /// The run's ratio and what it is against: `1.05× [0.98–1.12] against xfs on=disk (the
    /// closest of 5)`.
    pub fn now_text(&self) -> String {
        let Some(now) = &self.now else {
            return "—".into();
        };
        let against = match (&self.against, self.against_count) {
            (Some(a), n) if n > 1 => format!(" against {a} (the closest of {n})"),
            (Some(a), _) => format!(" against {a}"),
            (None, _) => String::new(),
        };
        format!("{}{against}", now_text(now))
    }
}

/// The Markdown of every study: per figure a table (configuration, then, then / reference,
/// now, now / reference with its interval, verdict), then the claims.
pub fn write_markdown(
    then_now: &ThenNow,
    out: &mut dyn io::Write,
    escape: &dyn Fn(&str) -> String,
) -> io::Result<()> {
    if then_now.is_empty() {
        return Ok(());
    }
    writeln!(out, "## Then and now\n")?;
    writeln!(out, "{}\n", INTRO)?;
    let several = then_now.studies.len() > 1;
    for study in &then_now.studies {
        if several {
            writeln!(
                out,
                "### Run {} \"{}\"\n",
                study.run_id,
                escape(&study.plan)
            )?;
        }
        if let Some(e) = &study.error {
            writeln!(
                out,
                "The run's published figures could not be read: {}\n",
                escape(e)
            )?;
        }
        for f in &study.figures {
            let p = &f.published;
            writeln!(out, "**{}** ({})\n", escape(&p.title), escape(&p.source))?;
            let mut lines = Vec::new();
            match &f.missing {
                Some(why) => lines.push(format!("Now: not measured ({}).", escape(why))),
                None => lines.push(format!(
                    "Now: {}{}.",
                    escape(&f.now_title),
                    f.now_direction
                        .filter(|d| *d != Direction::None)
                        .map_or(String::new(), |d| format!(", {}", d.phrase()))
                )),
            }
            if let Some(note) = &p.note {
                lines.push(format!("Note: {}.", escape(note.trim_end_matches('.'))));
            }
            writeln!(out, "{}\n", lines.join(" "))?;
            let reference = escape(&p.reference);
            writeln!(
                out,
                "| configuration | then | then / {reference} | now | now / {reference} (95 % CI) | verdict |\n|---|---:|---:|---:|---|---|"
            )?;
            for row in &f.rows {
                let (now_ratio, verdict) = if row.reference {
                    ("1 (reference)".to_string(), String::new())
                } else {
                    (
                        row.now.as_ref().map_or("—".into(), now_text),
                        row.verdict
                            .map(|v| verdict_text(v, row.missing.as_deref()))
                            .unwrap_or_default(),
                    )
                };
                writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} |",
                    escape(&row.label),
                    escape(&f.then_value(row)),
                    if row.reference {
                        "1 (reference)".to_string()
                    } else {
                        ratio_text(row.then_ratio)
                    },
                    escape(&f.now_value(row)),
                    escape(&now_ratio),
                    escape(&verdict),
                )?;
            }
            writeln!(out)?;
        }
        if !study.claims.is_empty() {
            writeln!(
                out,
                "| claim | source | then | now (95 % CI) | verdict |\n|---|---|---|---|---|"
            )?;
            for c in &study.claims {
                let text = match &c.claim.note {
                    Some(note) => format!("{} ({})", c.claim.text, note),
                    None => c.claim.text.clone(),
                };
                writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    escape(&text),
                    escape(&c.claim.source),
                    escape(&c.then_text()),
                    escape(&c.now_text()),
                    escape(&verdict_text(c.verdict, c.missing.as_deref())),
                )?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

/// What the then-and-now tables are, said once above them.
pub const INTRO: &str = "The study's published figures beside this run's. The hardware differs, so what can agree is the ratios between configurations: each published value is normalised to the study's reference configuration, and this run's value of the same configuration is set against this run's reference, paired by round, with its 95 % interval. Verdict per claim: agrees, disagrees, tie now (the interval spans 1), or not measured.";

const HTML_TEMPLATE: &str = include_str!("then_now.html.j2");

/// The class a verdict is shown with in the HTML report.
fn verdict_class(verdict: Option<Verdict>) -> &'static str {
    match verdict {
        Some(Verdict::Agrees) => "win",
        Some(Verdict::Disagrees) => "bad",
        _ => "tie",
    }
}

/// The HTML section of every study (empty when no run has published figures): a
/// self-contained `<section id="then-and-now">` the report's layout places as it likes.
pub fn html(then_now: &ThenNow) -> Result<String, minijinja::Error> {
    let studies: Vec<_> = then_now
        .studies
        .iter()
        .map(|study| {
            let figures: Vec<_> = study
                .figures
                .iter()
                .map(|f| {
                    let p = &f.published;
                    let rows: Vec<_> = f
                        .rows
                        .iter()
                        .map(|r| {
                            minijinja::context! {
                                label => r.label.clone(),
                                then => f.then_value(r),
                                then_ratio => if r.reference { "1 (reference)".to_string() } else { ratio_text(r.then_ratio) },
                                now => f.now_value(r),
                                now_ratio => if r.reference { "1 (reference)".to_string() } else { r.now.as_ref().map_or("—".into(), now_text) },
                                verdict => r.verdict.map(|v| verdict_text(v, r.missing.as_deref())).unwrap_or_default(),
                                class => verdict_class(r.verdict),
                            }
                        })
                        .collect();
                    let now = match &f.missing {
                        Some(why) => format!("not measured ({why})."),
                        None => format!(
                            "{}{}.",
                            f.now_title,
                            f.now_direction
                                .filter(|d| *d != Direction::None)
                                .map_or(String::new(), |d| format!(", {}", d.phrase()))
                        ),
                    };
                    minijinja::context! {
                        title => p.title.clone(),
                        source => p.source.clone(),
                        note => p.note.clone(),
                        reference => p.reference.clone(),
                        now => now,
                        rows => rows,
                    }
                })
                .collect();
            let claims: Vec<_> = study
                .claims
                .iter()
                .map(|c| {
                    minijinja::context! {
                        text => c.claim.text.clone(),
                        note => c.claim.note.clone(),
                        source => c.claim.source.clone(),
                        then => c.then_text(),
                        now => c.now_text(),
                        verdict => verdict_text(c.verdict, c.missing.as_deref()),
                        class => verdict_class(Some(c.verdict)),
                    }
                })
                .collect();
            minijinja::context! {
                run => study.run_id,
                plan => study.plan.clone(),
                error => study.error.clone(),
                figures => figures,
                claims => claims,
            }
        })
        .collect();
    let mut env = minijinja::Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    env.add_template("then_now", HTML_TEMPLATE)?;
    env.get_template("then_now")?.render(minijinja::context! {
        studies => studies,
        several => then_now.studies.len() > 1,
        intro => INTRO,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Exporter, Markdown};
    use fsbench_model::{CaseConfig, Dims, MetricDef, ResultRecord};
    use fsbench_store::{NewRun, NewSample, Store};

    fn now(ratio: f64, low: f64, high: f64) -> Now {
        Now {
            ratio,
            low: Some(low),
            high: Some(high),
            paired: true,
            n: 3,
        }
    }

    /// The verdict: the run's interval wholly on the side the study found agrees, wholly on
    /// the other side disagrees, spanning 1 is a tie now (but agrees with "about equal"); no
    /// figure, or no interval, is not measured.
    #[test]
    fn a_claim_agrees_disagrees_ties_now_or_is_not_measured() {
        let (up, down, across) = (now(1.2, 1.1, 1.3), now(0.8, 0.7, 0.9), now(1.0, 0.9, 1.1));
        assert_eq!(verdict(Finding::Higher, Some(&up)), Verdict::Agrees);
        assert_eq!(verdict(Finding::Higher, Some(&down)), Verdict::Disagrees);
        assert_eq!(verdict(Finding::Higher, Some(&across)), Verdict::TieNow);
        assert_eq!(verdict(Finding::Lower, Some(&down)), Verdict::Agrees);
        assert_eq!(verdict(Finding::Lower, Some(&up)), Verdict::Disagrees);
        assert_eq!(verdict(Finding::Lower, Some(&across)), Verdict::TieNow);
        assert_eq!(verdict(Finding::Equal, Some(&across)), Verdict::Agrees);
        assert_eq!(verdict(Finding::Equal, Some(&up)), Verdict::Disagrees);
        assert_eq!(verdict(Finding::Higher, None), Verdict::NotMeasured);
        let one_round = Now {
            low: None,
            high: None,
            ..up
        };
        assert_eq!(
            verdict(Finding::Higher, Some(&one_round)),
            Verdict::NotMeasured
        );
        // Points have no interval: their ratio decides.
        assert_eq!(
            verdict(Finding::Higher, Some(&Now::exact(1.33))),
            Verdict::Agrees
        );
        assert_eq!(
            verdict(Finding::Higher, Some(&Now::exact(1.0))),
            Verdict::TieNow
        );
        use Verdict::*;
        assert_eq!(Verdict::of_all(&[Agrees, NotMeasured, Agrees]), Agrees);
        assert_eq!(Verdict::of_all(&[Agrees, TieNow]), TieNow);
        assert_eq!(Verdict::of_all(&[TieNow, Disagrees]), Disagrees);
        assert_eq!(Verdict::of_all(&[NotMeasured]), NotMeasured);
    }

    const REAL: MetricDef =
        MetricDef::new("real", fsbench_model::Unit::Nanos, Direction::Lower).main();

    const PLAN: &str = r#"
name = "study"
[[filesystems]]
name = "ext3"
[[workloads]]
kind = "task"
name = "chain"

[[published]]
title = "Untar, real"
source = "000_x.txt:436"
workload = "chain"
metric = "real"
match = { step = "untar" }
unit = "s"
direction = "lower"
reference = "ext3"
values = { ext3 = 32.418, ext4 = 22.683, xfs = 20.0, btrfs = 25.854, jfs = 53.747 }

[[claims]]
text = "ext4 untars faster than every other"
source = "000_x.txt:440"
workload = "chain"
metric = "real"
match = { step = "untar" }
config = "ext4"
against = "*"
finding = "lower"

[[claims]]
text = "ext4 has more points than ext3"
source = "000_x.txt:441"
workload = "chain"
metric = "points"
config = "ext4"
against = "ext3"
then = 1.5
"#;

    /// A run of five configurations of a task chain over three rounds that drift by ±20 %
    /// together: ext4 takes 0.70 of ext3's time every round (the study's 0.70: agrees), xfs
    /// 1.5 times (the study found it faster: disagrees), btrfs within ±5 % (the study found it
    /// faster: a tie now), jfs is unsupported (not measured).
    fn study() -> (tempfile::TempDir, Store, i64) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("r.db")).unwrap();
        let run = store
            .begin_run(&NewRun {
                started_at: "t0",
                plan_name: "study",
                plan_text: PLAN,
                fsbench_version: "0",
                host_json: "{}",
                planned_samples: 15,
                overrides_json: None,
                scale: 1.0,
            })
            .unwrap();
        let drift = [1.0, 1.2, 0.8];
        let configs: [(&str, Option<[f64; 3]>); 5] = [
            ("ext3", Some([1.0; 3])),
            ("ext4", Some([0.7; 3])),
            ("xfs", Some([1.5, 1.45, 1.55])),
            ("btrfs", Some([1.05, 0.95, 1.0])),
            ("jfs", None),
        ];
        for (position, (fs, factors)) in configs.into_iter().enumerate() {
            let config: CaseConfig = serde_json::from_str(&format!(
                r#"{{"filesystem":"{fs}","mkfs_set":"default","mount_set":"default","scheduler":null,"cache":"warm"}}"#
            ))
            .unwrap();
            let case = store
                .add_case(
                    run,
                    &format!("{fs}.default.default.default.warm.chain"),
                    position as i64,
                    &config,
                    r#"{"kind":"task","name":"chain"}"#,
                )
                .unwrap();
            for round in 1..=3u32 {
                let i = round as usize - 1;
                let results = factors.map(|f| {
                    vec![ResultRecord {
                        dims: Dims {
                            step: Some("untar".into()),
                            operation: Some("tool".into()),
                            ..Dims::default()
                        },
                        measurements: vec![REAL.at(10e9 * drift[i] * f[i])],
                        ..ResultRecord::default()
                    }]
                });
                let results = results.unwrap_or_default();
                store
                    .record_sample(
                        case,
                        &NewSample {
                            repetition: round,
                            status: if factors.is_some() {
                                Outcome::Ok
                            } else {
                                Outcome::Unsupported
                            },
                            reason: factors.is_none().then_some("jfs is not in this kernel"),
                            not_retried: false,
                            started_at: "t",
                            elapsed_ns: 1,
                            target_json: None,
                            results: &results,
                            seed: None,
                            warnings: &[],
                            config_json: None,
                            series: &[],
                            assessment: None,
                        },
                    )
                    .unwrap();
            }
        }
        (dir, store, run)
    }

    #[test]
    fn published_figures_sit_beside_the_run_s_ratios_with_a_verdict_each() {
        let (_dir, store, run) = study();
        let model = ReportModel::load(&store, &[run]).unwrap();
        let then_now = ThenNow::of(&model);
        let [study] = then_now.studies.as_slice() else {
            panic!("one study: {then_now:?}");
        };
        let f = &study.figures[0];
        assert_eq!(f.now_title, "chain tool untar (real time)");
        let row = |label: &str| f.rows.iter().find(|r| r.label == label).unwrap();
        // In the run's order of its cases.
        let order: Vec<&str> = f.rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(order, ["ext3", "ext4", "xfs", "btrfs", "jfs"]);
        assert!(row("ext3").reference && row("ext3").verdict.is_none());
        let ext4 = row("ext4");
        assert!((ext4.then_ratio - 0.6997).abs() < 1e-3, "{ext4:?}");
        let n = ext4.now.unwrap();
        assert!((n.ratio - 0.7).abs() < 1e-9 && n.paired, "{n:?}");
        assert_eq!(ext4.verdict, Some(Verdict::Agrees));
        assert_eq!(row("xfs").verdict, Some(Verdict::Disagrees));
        assert_eq!(row("btrfs").verdict, Some(Verdict::TieNow));
        assert_eq!(row("jfs").verdict, Some(Verdict::NotMeasured));
        assert_eq!(row("jfs").missing.as_deref(), Some("unsupported"));
        // Against every other configuration: agrees with all that were measured; the one
        // shown is the closest to contradicting it (btrfs, the fastest of the others).
        let c = &study.claims[0];
        assert_eq!(c.verdict, Verdict::Agrees, "{c:?}");
        assert_eq!(c.against_count, 4);
        assert_eq!(c.against.as_deref(), Some("btrfs"));
        // Points: ext4 won the one discipline.
        let p = &study.claims[1];
        assert_eq!(p.verdict, Verdict::Agrees, "{p:?}");
        assert!(p.now.unwrap().ratio > 1.0);

        let mut out = Vec::new();
        Markdown::default().write(&model, &mut out).unwrap();
        let md = String::from_utf8(out).unwrap();
        for part in [
            "## Then and now",
            "**Untar, real** (000_x.txt:436)",
            "| configuration | then | then / ext3 | now | now / ext3 (95 % CI) | verdict |",
            "| ext3 | 32.418 s | 1 (reference) | 10.0 s | 1 (reference) |  |",
            "| ext4 | 22.683 s | 0.70× | 7.00 s | 0.70× [0.70–0.70] | agrees |",
            "| xfs | 20 s | 0.62× | 14.9 s | 1.50× [1.38–1.63] | disagrees |",
            "| btrfs | 25.854 s | 0.80× | 9.97 s | 1.00× [0.88–1.13] | tie now |",
            "| jfs | 53.747 s | 1.66× | — | — | not measured (unsupported) |",
            "| ext4 untars faster than every other | 000_x.txt:440 | lower | 0.70× [0.62–0.79]",
            "against btrfs (the closest of 4) | agrees |",
            "| ext4 has more points than ext3 | 000_x.txt:441 | 1.50× | 1.60× (no interval) against ext3 | agrees |",
        ] {
            assert!(md.contains(part), "{part}\n{md}");
        }
        let mut out = Vec::new();
        crate::Terminal::default().write(&model, &mut out).unwrap();
        let terminal = String::from_utf8(out).unwrap();
        for part in [
            "\nThen and now (",
            "  Untar, real (000_x.txt:436); now: chain tool untar (real time)\n",
            "    ext3   the reference (then 32.418 s)\n",
            "    ext4   then 0.70×, now 0.70× [0.70–0.70]: agrees\n",
            "    jfs    then 1.66×, now —: not measured (unsupported)\n",
        ] {
            assert!(terminal.contains(part), "{part}\n{terminal}");
        }
        // A claim too long for a line wraps between words.
        let words = terminal.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains("against btrfs (the closest of 4): agrees "),
            "{terminal}"
        );
        let html = html(&then_now).unwrap();
        assert!(html.contains("<section id=\"then-and-now\""), "{html}");
        assert!(html.contains("<td class=\"win\">agrees</td>"), "{html}");
        assert!(html.contains("<td class=\"bad\">disagrees</td>"), "{html}");
    }
}
