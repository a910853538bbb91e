//! Then and now: a study's published figures and claims (the `[[published]]` and `[[claims]]`
//! of the run's stored plan text, `fsbench_model::published`) beside the run's own. The
//! hardware differs, so what can agree is the ratios between configurations: each published
//! value is normalised to the study's reference configuration, and the run's value of the same
//! configuration is set against the run's reference paired by round (as the standings compare:
//! [`compare_rounds`]), with its 95 % interval. The [`verdict`] weighs the size as well as the
//! direction (docs/then-and-now.md): agrees, same direction but a different size, contradicts,
//! inconclusive, not measurable at this scale (a figure of a few steps of its clock) or not
//! measured. Computed once from a [`ReportModel`]; rendered by every exporter.

use crate::compare::compare_rounds;
use crate::findings::{Find, Findings};
use crate::model::{CaseView, ReportModel, RunView};
use crate::section::{JsonMember, Section};
use crate::study_points::{self, match_text, Points};
use crate::text::{
    escape_markdown as escape, heading, number, printable, say, sheet_name, write_rows,
    SCIENTIFIC_FROM,
};
use fsbench_model::published::{
    self, Claim, Expectation, Finding, Judged, PointsRule, Published, Selector, StudyFigures,
    TIE_MARGIN, TOLERANCE,
};
use fsbench_model::target::FsckInfo;
use fsbench_model::{CaseAxis, Direction, Unit};
use fsbench_store::Outcome;
use fsbench_workload::WorkloadSettings;
use rust_xlsxwriter::{Format, Workbook, XlsxError};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// How many steps of its clock a figure must hold on both sides of a ratio to be measured (a
/// CPU time counted in ticks of up to 10 ms: 100 ms): below that, one step more or less moves
/// the ratio by more than a tenth, and a figure of 0 or 1 step makes any ratio.
pub const MEASURABLE_STEPS: f64 = 10.0;

/// The step e2fsck prints its share of non-contiguous files in: a tenth of a percent.
const NONCONTIGUOUS_STEP: f64 = 0.1;

/// What a claim is found to be now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The run's interval lies on the study's side of 1 and reaches within ±25 % of the
    /// study's ratio (or, for a tie or "equal", lies wholly within its margin).
    Agrees,
    /// It lies on the study's side of 1 but wholly more than ±25 % from its ratio.
    DifferentSize,
    /// It lies wholly on the other side of 1, or (the study found a difference) wholly within
    /// ±5 % of 1; for a tie or "equal", wholly outside the margin.
    Contradicts,
    /// It spans 1 and reaches beyond ±5 % (or, for a tie or "equal", the margin's edge): the
    /// run cannot tell.
    Inconclusive,
    /// A figure of fewer than [`MEASURABLE_STEPS`] steps of its clock at the run's scale (the
    /// CPU time of a 10 ms task): a ratio of it says nothing.
    NotMeasurable,
    /// A configuration has no figure in the run (unsupported, failed, not in the run), or too
    /// few rounds for an interval.
    NotMeasured,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Agrees => "agrees",
            Verdict::DifferentSize => "same direction, different size",
            Verdict::Contradicts => "contradicts",
            Verdict::Inconclusive => "inconclusive",
            Verdict::NotMeasurable => "not measurable at this scale",
            Verdict::NotMeasured => "not measured",
        }
    }

    /// Of one claim set against several configurations: the worst that was measured
    /// (contradicts, then a different size, then inconclusive), agrees when every one measured
    /// agrees; not measurable or not measured when none was.
    fn of_all(verdicts: &[Verdict]) -> Verdict {
        use Verdict::*;
        [
            Contradicts,
            DifferentSize,
            Inconclusive,
            Agrees,
            NotMeasurable,
        ]
        .into_iter()
        .find(|v| verdicts.contains(v))
        .unwrap_or(NotMeasured)
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

/// What the run says of what the study expects, given the run's ratio (config / against) and
/// its interval; the rules are docs/then-and-now.md's. Everything is weighed on the log scale,
/// where a ratio and its inverse are as far from 1.
pub fn verdict(expectation: Expectation, now: Option<&Now>) -> Verdict {
    let Some((lo, hi)) = now.and_then(|n| n.low.zip(n.high)) else {
        return Verdict::NotMeasured;
    };
    if lo.is_nan() || hi.is_nan() {
        return Verdict::NotMeasured;
    }
    let (a, b) = (lo.ln(), hi.ln());
    let tie = TIE_MARGIN.ln();
    match expectation {
        Expectation::Equal(margin) => {
            let m = margin.ln();
            if a >= -m && b <= m {
                Verdict::Agrees
            } else if a > m || b < -m {
                Verdict::Contradicts
            } else {
                Verdict::Inconclusive
            }
        }
        Expectation::Ratio(_) | Expectation::Direction(_) => {
            // Turned so that the side the study found is above 0.
            let (a, b) = if expectation.finding() == Finding::Lower {
                (-b, -a)
            } else {
                (a, b)
            };
            if a > 0.0 {
                match expectation {
                    Expectation::Ratio(r) => {
                        let (r, t) = (r.ln().abs(), TOLERANCE.ln());
                        if b >= r - t && a <= r + t {
                            Verdict::Agrees
                        } else {
                            Verdict::DifferentSize
                        }
                    }
                    _ => Verdict::Agrees,
                }
            } else if b < 0.0 {
                Verdict::Contradicts
            } else if a < b && a >= -tie && b <= tie {
                // Equal within the noise, where the study found a difference (an exact ratio
                // of 1 — points tied — shows no difference, it does not prove equality).
                Verdict::Contradicts
            } else {
                Verdict::Inconclusive
            }
        }
    }
}

/// What a verdict of a different size says: both ratios.
fn size_detail(then: f64, now: &Now) -> String {
    format!("then {}, now {}", ratio_text(then), ratio_text(now.ratio))
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
    /// What that ratio claims: a difference of its size, or a tie (None for the reference).
    pub expectation: Option<Expectation>,
    /// The run's mean (in the run's unit), when measured.
    pub now_mean: Option<f64>,
    /// The run's ratio to its reference (None for the reference itself, or not measured).
    pub now: Option<Now>,
    /// None for the reference.
    pub verdict: Option<Verdict>,
    /// What the verdict says beyond its name: why there is no ratio now (`unsupported`, a
    /// figure too small for its clock), or both ratios of a different size.
    pub detail: Option<String>,
}

impl FigureRow {
    /// The verdict with its detail (`not measured (unsupported)`); empty for the reference.
    pub fn verdict_text(&self) -> String {
        self.verdict
            .map(|v| verdict_text(v, self.detail.as_deref()))
            .unwrap_or_default()
    }

    /// then / reference as the tables show it: `4.57×`, `1.00× (a tie)`, `1 (reference)`.
    pub fn then_ratio_text(&self) -> String {
        match self.expectation {
            None => "1 (reference)".into(),
            Some(Expectation::Equal(_)) => format!("{} (a tie)", ratio_text(self.then_ratio)),
            Some(_) => ratio_text(self.then_ratio),
        }
    }

    /// now / reference with its interval: `1.05× [1.03–1.08]`, `1 (reference)`, `—`.
    pub fn now_ratio_text(&self) -> String {
        if self.reference {
            "1 (reference)".into()
        } else {
            self.now.as_ref().map_or("—".into(), now_text)
        }
    }
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

/// A sweep's knee in the run: of the curve of the means, and of each round's curve.
#[derive(Debug, Clone, Serialize)]
pub struct KneeNow {
    /// The swept setting (`clients`).
    pub parameter: String,
    /// None: the curve still climbs at its last point.
    pub mean: Option<f64>,
    pub rounds: Vec<Option<f64>>,
    /// The sweep's last point.
    pub last: f64,
}

/// One claim beside the run's.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimView {
    pub claim: Claim,
    /// What it asks (None: a stored claim of another version that cannot be read as one;
    /// `detail` says why).
    pub judged: Option<Judged>,
    /// The run's ratio config / against (the closest to contradicting the claim when it is set
    /// against several configurations); for a knee, the run's knee over the study's.
    pub now: Option<Now>,
    /// Of a claim whose `config` names several configurations: the one `now` is of.
    pub config: Option<String>,
    /// The configuration `now` is against, and how many it was set against.
    pub against: Option<String>,
    pub against_count: usize,
    /// Of a ranking: each configuration's points in the run, most first.
    pub standing: Vec<(String, f64)>,
    /// Of a knee: the run's.
    pub knee: Option<KneeNow>,
    pub verdict: Verdict,
    /// What the verdict says beyond its name (why not measured, the pair out of order, both
    /// ratios of a different size).
    pub detail: Option<String>,
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

impl Find for ThenNow {
    fn find(findings: &Findings) -> ThenNow {
        ThenNow::of(findings.model())
    }
}

impl ThenNow {
    pub fn of(model: &ReportModel) -> ThenNow {
        let mut studies = Vec::new();
        for run in &model.runs {
            let figures = match toml::from_str::<StudyFigures>(&run.run.plan_text) {
                Ok(f) if f.is_empty() => continue,
                Ok(f) => f,
                Err(e)
                    if run.run.plan_text.contains("[[published]]")
                        || run.run.plan_text.contains("[[claims]]") =>
                {
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

/// Why a configuration has no ratio now: not measured (`unsupported`), or not measurable at
/// this scale (a figure too small for its clock).
type Missing = (Verdict, String);

fn not_measured(why: impl Into<String>) -> Missing {
    (Verdict::NotMeasured, why.into())
}

/// Where the run's values of one figure come from.
struct Source<'a> {
    run: &'a RunView,
    workload: &'a str,
    metric: &'a str,
    dims: &'a BTreeMap<String, String>,
    /// The run alone as a model (its tables).
    alone: &'a ReportModel,
    /// For points: the run's, once.
    points: Option<Result<Points, String>>,
}

/// A configuration's values per round, or why it has none.
type Series = Result<Vec<(u32, f64)>, String>;

impl<'a> Source<'a> {
    fn new(
        run: &'a RunView,
        alone: &'a ReportModel,
        workload: &'a str,
        metric: &'a str,
        dims: &'a BTreeMap<String, String>,
        rule: Option<&PointsRule>,
    ) -> Source<'a> {
        let points = (metric == published::POINTS).then(|| {
            study_points::points(
                alone,
                run,
                workload,
                dims,
                rule.unwrap_or(&PointsRule::default()),
            )
        });
        Source {
            run,
            workload,
            metric,
            dims,
            alone,
            points,
        }
    }

    /// The run's cases of this workload that `label` names.
    fn cases(&self, label: &Selector) -> Vec<&'a CaseView> {
        self.run
            .cases
            .iter()
            .filter(|c| c.axis(CaseAxis::Workload) == self.workload)
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

    /// The workload's kind (`task`), from its cases.
    fn kind(&self) -> Option<&'a str> {
        self.run
            .cases
            .iter()
            .find(|c| c.axis(CaseAxis::Workload) == self.workload)
            .map(|c| c.kind.as_str())
    }

    /// The step the figure is counted in, when coarser than the clock.
    fn resolution(&self) -> Option<f64> {
        if self.metric == published::NONCONTIGUOUS {
            return Some(NONCONTIGUOUS_STEP);
        }
        WorkloadSettings::resolution_of(self.kind()?, self.metric)
    }

    /// The run's figure: (its title, unit, direction, how many result rows it takes), or why
    /// there is none.
    fn describe(&self) -> Result<(String, Unit, Direction, usize), String> {
        match self.metric {
            published::POINTS => match &self.points {
                Some(Ok(p)) => Ok((
                    format!("{} points ({} disciplines)", self.workload, p.disciplines),
                    Unit::Count,
                    Direction::Higher,
                    0,
                )),
                Some(Err(e)) => Err(e.clone()),
                None => Err("no points".into()),
            },
            published::FSCK => Ok((
                format!("{}: the filesystem check after each sample", self.workload),
                Unit::Nanos,
                Direction::Lower,
                1,
            )),
            published::NONCONTIGUOUS => Ok((
                format!(
                    "{}: the files e2fsck reports non-contiguous after each sample",
                    self.workload
                ),
                Unit::Percent,
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
                    crate::text::title(self.workload, &row, metric),
                    table.unit,
                    table.direction,
                    rows.len(),
                ))
            }
        }
    }

    /// The model's table of this metric with a column of this workload in this run, and its
    /// rows the dimensions match.
    fn table(&self) -> Option<(&'a crate::model::Table, Vec<usize>)> {
        self.alone
            .tables
            .iter()
            .filter(|t| {
                t.metric == self.metric
                    && t.columns
                        .iter()
                        .any(|c| c.run_id == self.run.run.id && c.workload == self.workload)
            })
            .find_map(|t| {
                let rows: Vec<usize> = (0..t.rows.len())
                    .filter(|&i| published::dims_match(self.dims, &t.rows[i].dims))
                    .collect();
                (!rows.is_empty()).then_some((t, rows))
            })
    }

    /// One case's values per round: of the matching rows (their geometric mean in the rounds
    /// every row has), of the check after each sample, or why there are none.
    fn series(&self, case: &CaseView) -> Series {
        let from_check = |read: &dyn Fn(&FsckInfo) -> Option<f64>| {
            let values: Vec<(u32, f64)> = case
                .samples
                .iter()
                .filter(|s| s.status == Outcome::Ok)
                .filter_map(|s| Some((s.repetition, read(s.target_info()?.fsck.as_ref()?)?)))
                .collect();
            if values.is_empty() {
                Err(Self::why_not(case))
            } else {
                Ok(values)
            }
        };
        match self.metric {
            published::FSCK => return from_check(&|fsck| Some(fsck.elapsed_ns as f64)),
            published::NONCONTIGUOUS => {
                return from_check(&|fsck| noncontiguous(&fsck.output_tail)).map_err(|why| {
                    if why == "no value" {
                        "the check after it reports no non-contiguous share (e2fsck does; \
                             xfs_repair and btrfs check do not)"
                            .into()
                    } else {
                        why
                    }
                })
            }
            _ => {}
        }
        let Some((table, rows)) = self.table() else {
            // A case that ran, where no result has these dimensions (a size a small scale does
            // not reach), says so rather than "no value".
            return Err(match Self::why_not(case) {
                why if why == "no value" => format!(
                    "the run has no {} of workload {} matching {}",
                    self.metric,
                    self.workload,
                    match_text(self.dims)
                ),
                why => why,
            });
        };
        let Some(col) = table
            .columns
            .iter()
            .position(|c| c.run_id == case.run_id && c.case_key == case.key)
        else {
            return Err(Self::why_not(case));
        };
        study_points::together_per_round(table, &rows, col).ok_or_else(|| Self::why_not(case))
    }

    /// A case's values, or why it has none; not measurable when they average fewer than
    /// [`MEASURABLE_STEPS`] steps of the figure's clock.
    fn measurable(&self, case: &CaseView, label: &str) -> Result<Vec<(u32, f64)>, Missing> {
        let values = self.series(case).map_err(not_measured)?;
        if let Some(step) = self.resolution() {
            let m = mean(&values);
            if m < MEASURABLE_STEPS * step {
                let unit = self.describe().map_or(Unit::Count, |d| d.1);
                return Err((
                    Verdict::NotMeasurable,
                    format!(
                        "{label}'s {} averages {}, under {MEASURABLE_STEPS} steps of the {} it is counted in",
                        self.metric,
                        value_text(unit, step, m),
                        value_text(unit, step, step)
                    ),
                ));
            }
        }
        Ok(values)
    }

    /// The points of the cases `label` names, added up, or why there are none.
    fn label_points(&self, cases: &[&CaseView]) -> Result<f64, String> {
        let points = match &self.points {
            Some(Ok(p)) => p,
            Some(Err(e)) => return Err(e.clone()),
            None => return Err("no points".into()),
        };
        let mut total = None;
        for c in cases {
            if let Some(p) = points.of_case.get(&c.key) {
                *total.get_or_insert(0.0) += p;
            }
        }
        total.ok_or_else(|| {
            cases
                .iter()
                .map(|c| Self::why_not(c))
                .find(|w| w != "no value")
                .unwrap_or_else(|| {
                    if cases.is_empty() {
                        "not in the run".into()
                    } else {
                        "no points".into()
                    }
                })
        })
    }

    /// `label` against `against` (`names`: their labels): the run's ratio, or why there is
    /// none, saying so by `role` when `against` lacks it ("the reference: unsupported").
    fn compare(
        &self,
        label: &[&CaseView],
        against: &[&CaseView],
        names: (&str, &str),
        role: &str,
    ) -> Result<Now, Missing> {
        // A figure too small for its clock names its configuration itself.
        let other_side = |(v, e): Missing| match v {
            Verdict::NotMeasured => (v, format!("{role}: {e}")),
            _ => (v, e),
        };
        if self.metric == published::POINTS {
            let a = self.label_points(label).map_err(not_measured)?;
            let b = self
                .label_points(against)
                .map_err(not_measured)
                .map_err(other_side)?;
            if b <= 0.0 {
                return Err(other_side(not_measured("no points")));
            }
            return Ok(Now::exact(a / b));
        }
        let Some(case) = label.first() else {
            return Err(not_measured("not in the run"));
        };
        let Some(other) = against.first() else {
            return Err(other_side(not_measured("not in the run")));
        };
        let a = self.measurable(case, names.0)?;
        let b = self.measurable(other, names.1).map_err(other_side)?;
        let (c, _) = compare_rounds(&b, &a, true);
        let c = c.ok_or_else(|| not_measured("no positive values"))?;
        Ok(Now {
            ratio: c.ratio,
            low: c.ci95_low,
            high: c.ci95_high,
            paired: c.paired,
            n: c.n,
        })
    }

    /// The cases `label` names in this workload and, for points, the rule's others.
    fn named(&self, label: &str, rule: Option<&PointsRule>) -> Vec<&'a CaseView> {
        let Ok(selector) = label.parse::<Selector>() else {
            // The plan checked it when it ran.
            return Vec::new();
        };
        let mut cases = self.cases(&selector);
        if self.metric == published::POINTS {
            for other in rule.map(|r| r.also.as_slice()).unwrap_or_default() {
                cases.extend(
                    self.run
                        .cases
                        .iter()
                        .filter(|c| c.axis(CaseAxis::Workload) == other)
                        .filter(|c| selector.matches(&c.config)),
                );
            }
        }
        cases
    }
}

/// The share of non-contiguous files in e2fsck's summary line (`... files (3.9%
/// non-contiguous), ...`).
fn noncontiguous(output: &str) -> Option<f64> {
    let end = output.find("% non-contiguous")?;
    let start = output[..end].rfind('(')? + 1;
    output[start..end].trim().parse().ok()
}

impl Study {
    fn of(run: &RunView, figures: &StudyFigures) -> Study {
        // The run alone: its tables.
        let model = ReportModel::from_runs(vec![run.clone()]);
        Study {
            run_id: run.run.id,
            plan: run.run.plan_name.clone(),
            figures: figures
                .published
                .iter()
                .map(|p| figure(run, &model, p))
                .collect(),
            claims: figures
                .claims
                .iter()
                .map(|c| claim(run, &model, c))
                .collect(),
            error: None,
        }
    }
}

fn mean(values: &[(u32, f64)]) -> f64 {
    values.iter().map(|(_, v)| v).sum::<f64>() / values.len() as f64
}

fn figure(run: &RunView, model: &ReportModel, p: &Published) -> Figure {
    let rule = p.points.as_ref();
    let source = Source::new(run, model, &p.workload, &p.metric, &p.dims, rule);
    let (now_title, now_unit, now_direction, rows_taken, missing) = match source.describe() {
        Ok((title, unit, direction, n)) => (title, Some(unit), Some(direction), n, None),
        Err(e) => (String::new(), None, None, 0, Some(e)),
    };
    let reference_then = p.values.get(&p.reference).map_or(f64::NAN, |v| v.value());
    let reference = source.named(&p.reference, rule);
    let mut rows: Vec<(i64, FigureRow)> = Vec::new();
    for (label, value) in &p.values {
        let cases = source.named(label, rule);
        let then_ratio = value.value() / reference_then;
        let is_reference = *label == p.reference;
        let now_mean = if p.metric == published::POINTS {
            source.label_points(&cases).ok()
        } else {
            cases
                .first()
                .and_then(|c| source.series(c).ok())
                .map(|v| mean(&v))
        };
        let expectation = (!is_reference).then(|| Expectation::of_ratio(then_ratio));
        let (now, verdict, detail) = match expectation {
            None => {
                let missing = now_mean.is_none().then(|| {
                    cases
                        .first()
                        .map_or_else(|| "not in the run".into(), |c| Source::why_not(c))
                });
                (None, None, missing)
            }
            Some(expectation) => {
                match source.compare(&cases, &reference, (label, &p.reference), "the reference") {
                    Ok(now) => {
                        let v = verdict(expectation, Some(&now));
                        let detail =
                            (v == Verdict::DifferentSize).then(|| size_detail(then_ratio, &now));
                        (Some(now), Some(v), detail)
                    }
                    Err((v, why)) => (None, Some(v), Some(why)),
                }
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
                expectation,
                now_mean,
                now,
                verdict,
                detail,
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

/// The axes a configuration label names (`xfs on=disk`: the filesystem and the platform).
fn axes_named(label: &str) -> Vec<CaseAxis> {
    label
        .parse::<Selector>()
        .map(|s| s.0.into_iter().map(|(axis, _)| axis).collect())
        .unwrap_or_default()
}

/// A configuration's values on `axes`, as a label writes them (`btrfs on=disk`).
fn label_on(case: &CaseView, axes: &[CaseAxis]) -> String {
    CaseAxis::ALL
        .into_iter()
        .filter(|a| axes.contains(a))
        .map(|a| format!("{}{}", a.label_prefix(), case.axis(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The claim before any measurement: what the run lacks for it.
fn claim_view(c: &Claim, judged: Option<Judged>) -> ClaimView {
    ClaimView {
        claim: c.clone(),
        judged,
        now: None,
        config: None,
        against: None,
        against_count: 0,
        standing: Vec::new(),
        knee: None,
        verdict: Verdict::NotMeasured,
        detail: None,
    }
}

fn claim(run: &RunView, model: &ReportModel, c: &Claim) -> ClaimView {
    match c.judged() {
        Ok(Judged::Compare(expectation)) => compare_claim(run, model, c, expectation),
        Ok(Judged::Ranking) => ranking_claim(run, model, c),
        Ok(Judged::Knee(at)) => knee_claim(run, model, c, at),
        // The plan checked it; a stored text of another version may not be one.
        Err((key, why)) => ClaimView {
            detail: Some(format!("the claim cannot be read: {key}: {why}")),
            ..claim_view(c, None)
        },
    }
}

/// `config` against `against`: every pair of configurations the two name that agree on the
/// axes neither names (points: each other configuration as the axes `config` names group
/// them, its points added up), the verdict the worst of the pairs', the pair shown one with
/// that verdict, the closest to contradicting the claim.
fn compare_claim(
    run: &RunView,
    model: &ReportModel,
    c: &Claim,
    expectation: Expectation,
) -> ClaimView {
    let rule = c.points.as_ref();
    let source = Source::new(run, model, &c.workload, &c.metric, &c.dims, rule);
    let judged = Some(Judged::Compare(expectation));
    let config = source.named(&c.config, rule);
    let mut against = source.named(&c.against, rule);
    against.retain(|a| !config.iter().any(|x| x.key == a.key));
    if config.is_empty() || against.is_empty() {
        return ClaimView {
            detail: Some("not in the run".into()),
            ..claim_view(c, judged)
        };
    }
    let config_axes = axes_named(&c.config);
    // (the configuration's label, the one's it is against, the ratio or why none).
    type Pair = (String, String, Result<Now, Missing>);
    let pairs: Vec<Pair> = if c.metric == published::POINTS {
        // Each other configuration as `config`'s axes tell them apart, its cases' points added.
        let mut groups: Vec<(String, Vec<&CaseView>)> = Vec::new();
        for a in &against {
            let label = label_on(a, &config_axes);
            match groups.iter_mut().find(|(l, _)| *l == label) {
                Some((_, cases)) => cases.push(a),
                None => groups.push((label, vec![a])),
            }
        }
        groups
            .into_iter()
            .map(|(label, cases)| {
                let now = source.compare(&config, &cases, (&c.config, &label), "against");
                (c.config.clone(), label, now)
            })
            .collect()
    } else {
        let named: Vec<CaseAxis> = config_axes
            .iter()
            .chain(&axes_named(&c.against))
            .copied()
            .collect();
        let free: Vec<CaseAxis> = CaseAxis::ALL
            .into_iter()
            .filter(|a| *a != CaseAxis::Workload && !named.contains(a))
            .collect();
        let mut pairs = Vec::new();
        for x in &config {
            for a in against
                .iter()
                .filter(|a| free.iter().all(|&axis| a.axis(axis) == x.axis(axis)))
            {
                let (lx, la) = (label_of(model, x), label_of(model, a));
                let now = source.compare(&[x], &[a], (&lx, &la), "against");
                pairs.push((lx, la, now));
            }
        }
        pairs
    };
    if pairs.is_empty() {
        return ClaimView {
            detail: Some(format!(
                "no configuration of '{}' shares the other axes of one of '{}'",
                c.config, c.against
            )),
            ..claim_view(c, judged)
        };
    }
    let verdicts: Vec<Verdict> = pairs
        .iter()
        .map(|(_, _, r)| match r {
            Ok(now) => verdict(expectation, Some(now)),
            Err((v, _)) => *v,
        })
        .collect();
    let verdict = Verdict::of_all(&verdicts);
    // The pair shown has the claim's verdict (its ratio is the one the verdict speaks of): of
    // those, the closest to contradicting the claim.
    let severity = |n: &Now| match expectation.finding() {
        Finding::Higher => -n.ratio,
        Finding::Lower => n.ratio,
        Finding::Equal => n.ratio.ln().abs(),
    };
    let with_verdict = || {
        pairs
            .iter()
            .zip(&verdicts)
            .filter(|(_, v)| **v == verdict)
            .map(|(pair, _)| pair)
    };
    let shown = with_verdict()
        .filter_map(|(x, a, r)| r.as_ref().ok().map(|n| (x, a, n)))
        .max_by(|p, q| severity(p.2).total_cmp(&severity(q.2)));
    let detail = match (shown, verdict) {
        (Some((_, _, now)), Verdict::DifferentSize) => match expectation {
            Expectation::Ratio(r) => Some(size_detail(r, now)),
            _ => None,
        },
        (Some(_), _) => None,
        (None, _) => with_verdict().find_map(|(_, _, r)| r.as_ref().err().map(|e| e.1.clone())),
    };
    ClaimView {
        now: shown.map(|(_, _, n)| *n),
        config: shown
            .filter(|_| config.len() > 1 && c.metric != published::POINTS)
            .map(|(x, _, _)| x.clone()),
        against: shown.map(|(_, a, _)| a.clone()),
        against_count: pairs.len(),
        verdict,
        detail,
        ..claim_view(c, judged)
    }
}

/// A ranking: the configurations listed hold the first places of the points, in order. Each
/// listed one the run measured is set against the next one measured, the last against every
/// configuration not listed; a pair out of order contradicts, a pair that ties is inconclusive.
fn ranking_claim(run: &RunView, model: &ReportModel, c: &Claim) -> ClaimView {
    let rule = c.points.as_ref();
    let source = Source::new(run, model, &c.workload, &c.metric, &c.dims, rule);
    let judged = Some(Judged::Ranking);
    let axes: Vec<CaseAxis> = c.ranking.iter().flat_map(|l| axes_named(l)).collect();
    let everyone = source.named("*", rule);
    // Every configuration as the ranking's labels tell them apart, with its points.
    let mut groups: Vec<(String, Vec<&CaseView>)> = Vec::new();
    for case in &everyone {
        let label = label_on(case, &axes);
        match groups.iter_mut().find(|(l, _)| *l == label) {
            Some((_, cases)) => cases.push(case),
            None => groups.push((label, vec![case])),
        }
    }
    let mut standing: Vec<(String, f64)> = groups
        .iter()
        .filter_map(|(label, cases)| Some((label.clone(), source.label_points(cases).ok()?)))
        .collect();
    standing.sort_by(|a, b| b.1.total_cmp(&a.1));
    let points_of = |label: &str| standing.iter().find(|(l, _)| l == label).map(|(_, p)| *p);
    let listed: Vec<&String> = c
        .ranking
        .iter()
        .filter(|l| points_of(l).is_some())
        .collect();
    let unmeasured: Vec<String> = c
        .ranking
        .iter()
        .filter(|l| points_of(l).is_none())
        .cloned()
        .collect();
    if listed.is_empty() {
        let why = match &source.points {
            Some(Err(e)) => e.clone(),
            _ => format!("{} not measured", c.ranking.join(", ")),
        };
        return ClaimView {
            standing,
            detail: Some(why),
            ..claim_view(c, judged)
        };
    }
    let mut pairs: Vec<(String, String)> = listed
        .windows(2)
        .map(|w| (w[0].clone(), w[1].clone()))
        .collect();
    let last = listed.last().expect("not empty");
    for (label, _) in &standing {
        if !c.ranking.contains(label) {
            pairs.push(((*last).clone(), label.clone()));
        }
    }
    let judged_pairs: Vec<(String, String, Verdict)> = pairs
        .into_iter()
        .map(|(a, b)| {
            let (pa, pb) = (points_of(&a).unwrap_or(0.0), points_of(&b).unwrap_or(0.0));
            let now = (pb > 0.0).then(|| Now::exact(pa / pb));
            let v = match now {
                Some(now) => verdict(Expectation::Direction(Finding::Higher), Some(&now)),
                // Nothing ahead of no points but more of them.
                None if pa > 0.0 => Verdict::Agrees,
                None => Verdict::Inconclusive,
            };
            (a, b, v)
        })
        .collect();
    let verdicts: Vec<Verdict> = judged_pairs.iter().map(|p| p.2).collect();
    let verdict = if verdicts.is_empty() {
        Verdict::NotMeasured
    } else {
        Verdict::of_all(&verdicts)
    };
    let mut details = Vec::new();
    match verdict {
        Verdict::Contradicts => details.extend(
            judged_pairs
                .iter()
                .filter(|p| p.2 == Verdict::Contradicts)
                .map(|(a, b, _)| format!("{b} ahead of {a}")),
        ),
        Verdict::Inconclusive => details.extend(
            judged_pairs
                .iter()
                .filter(|p| p.2 == Verdict::Inconclusive)
                .map(|(a, b, _)| format!("{a} and {b} tie")),
        ),
        Verdict::NotMeasured => details.push("only one of them measured".into()),
        _ => {}
    }
    if !unmeasured.is_empty() {
        details.push(format!("{} not measured", unmeasured.join(", ")));
    }
    ClaimView {
        standing,
        against_count: judged_pairs.len(),
        verdict,
        detail: (!details.is_empty()).then(|| details.join("; ")),
        ..claim_view(c, judged)
    }
}

/// A sweep's knee: the first point after which more load adds less than 5 %
/// (`fsbench_workload::sweep::curve`), of each round's curve and of the curve of the means,
/// set against the load the study saw it at; it agrees when every round's knee lies within
/// ±25 % of it, contradicts when none does (a curve still climbing at its last point has its
/// knee beyond it).
fn knee_claim(run: &RunView, model: &ReportModel, c: &Claim, at: f64) -> ClaimView {
    let judged = Some(Judged::Knee(at));
    let source = Source::new(run, model, &c.workload, &c.metric, &c.dims, None);
    let missing = |why: String| ClaimView {
        detail: Some(why),
        ..claim_view(c, judged)
    };
    let config = source.named(&c.config, None);
    let Some(case) = config.first() else {
        return missing("not in the run".into());
    };
    // The curve: the rows of the workload's main figure (higher is better) at each point of
    // the sweep, those `match` selects; one curve only.
    let Some(table) = model.tables.iter().find(|t| {
        t.main
            && t.direction == Direction::Higher
            && t.columns
                .iter()
                .any(|col| col.run_id == run.run.id && col.workload == c.workload)
    }) else {
        return missing(format!(
            "the run has no main figure of workload {}",
            c.workload
        ));
    };
    let rows: Vec<usize> = (0..table.rows.len())
        .filter(|&i| {
            let dims = &table.rows[i].dims;
            dims.sweep.is_some() && dims.client.is_none() && published::dims_match(&c.dims, dims)
        })
        .collect();
    let curve_of = |i: usize| {
        let mut d = table.rows[i].dims.without_sweep();
        d.threads = None;
        d
    };
    let Some(first) = rows.first() else {
        return missing(format!(
            "the run has no sweep of workload {} matching {}",
            c.workload,
            match_text(&c.dims)
        ));
    };
    if rows.iter().any(|&i| curve_of(i) != curve_of(*first)) {
        return missing(format!(
            "workload {}'s rows matching {} make several curves: narrow `match`",
            c.workload,
            match_text(&c.dims)
        ));
    }
    let Some(col) = table
        .columns
        .iter()
        .position(|x| x.run_id == case.run_id && x.case_key == case.key)
    else {
        return missing(Source::why_not(case));
    };
    let parameter = table.rows[*first]
        .dims
        .sweep
        .as_ref()
        .map_or_else(String::new, |s| s.parameter.clone());
    // Each point: (x, its values per round).
    let mut points: Vec<(f64, Vec<(u32, f64)>)> = rows
        .iter()
        .filter_map(|&i| {
            let x = table.rows[i].dims.sweep.as_ref()?.value;
            Some((x, table.rows[i].cells[col].as_ref()?.values.clone()))
        })
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    if points.len() < 2 {
        return missing(Source::why_not(case));
    }
    let last = points.last().expect("two").0;
    let knee_of = |curve: Vec<(f64, f64)>| -> Option<f64> {
        fsbench_workload::sweep::curve(&curve)?.knee.map(|k| k.0)
    };
    let mut rounds: Vec<u32> = points[0].1.iter().map(|(r, _)| *r).collect();
    rounds.retain(|r| points.iter().all(|(_, vs)| vs.iter().any(|(x, _)| x == r)));
    let per_round: Vec<Option<f64>> = rounds
        .iter()
        .map(|r| {
            knee_of(
                points
                    .iter()
                    .filter_map(|(x, vs)| vs.iter().find(|(y, _)| y == r).map(|(_, v)| (*x, *v)))
                    .collect(),
            )
        })
        .collect();
    let mean_knee = knee_of(points.iter().map(|(x, vs)| (*x, mean(vs))).collect());
    let knee = KneeNow {
        parameter,
        mean: mean_knee,
        rounds: per_round.clone(),
        last,
    };
    // A curve still climbing has its knee beyond its last point.
    let beyond = |k: Option<f64>| k.unwrap_or(f64::INFINITY) / at;
    let now = (per_round.len() >= 2).then(|| Now {
        ratio: beyond(mean_knee),
        low: per_round.iter().map(|k| beyond(*k)).reduce(f64::min),
        high: per_round.iter().map(|k| beyond(*k)).reduce(f64::max),
        paired: false,
        n: per_round.len(),
    });
    let verdict = verdict(Expectation::Equal(TOLERANCE), now.as_ref());
    ClaimView {
        now,
        knee: Some(knee),
        against_count: 1,
        verdict,
        detail: (verdict == Verdict::NotMeasured).then(|| {
            format!(
                "{} round{} with every point: a knee's spread needs two",
                per_round.len(),
                if per_round.len() == 1 { "" } else { "s" }
            )
        }),
        ..claim_view(c, judged)
    }
}

/// A ratio as the table shows it, with the precision it supports: `0.70×`, `4.57×`, `13.3×`,
/// `148×`, `0.031×`; beyond 10⁴ or under 10⁻³ (a figure near its clock's step) in
/// scientific notation (`1.1e15×`).
pub fn ratio_text(r: f64) -> String {
    if !r.is_finite() {
        "-".into()
    } else if r == 0.0 {
        "0×".into()
    } else if !(1e-3..1e4).contains(&r) {
        format!("{r:.1e}×")
    } else if r >= 100.0 {
        format!("{r:.0}×")
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

/// A published value as the study printed it, with its unit (`32.418 s`, `7090 transactions/s`);
/// one no study prints in full (from [`SCIENTIFIC_FROM`] on, or nearer 0 than
/// 0.0001) in scientific notation (`1e308 s`), not as hundreds of digits.
pub fn then_text(value: f64, unit: &str) -> String {
    let a = value.abs();
    if a.is_finite() && (a >= SCIENTIFIC_FROM || (a > 0.0 && a < 1e-4)) {
        format!("{value:e} {unit}")
    } else {
        format!("{value} {unit}")
    }
}

/// The verdict with what it says beyond its name, when it says more (`not measured
/// (unsupported)`, `same direction, different size (then 4.57×, now 1.05×)`).
pub fn verdict_text(verdict: Verdict, detail: Option<&str>) -> String {
    match detail {
        Some(detail) => format!("{} ({detail})", verdict.name()),
        None => verdict.name().to_string(),
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

/// A count as it is written: whole numbers without decimals (`70`, `10`), others as
/// [`number`] shows them (`10.5`).
fn count_text(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        number(x)
    }
}

/// A margin as a claim states it: `±5 %`.
fn margin_text(margin: f64) -> String {
    format!(
        "±{} %",
        count_text(((margin - 1.0) * 1000.0).round() / 10.0)
    )
}

impl ClaimView {
    /// What the study found: its ratio, higher / lower / about equal, its ranking, its knee.
    pub fn then_text(&self) -> String {
        match self.judged {
            Some(Judged::Compare(Expectation::Ratio(r))) => ratio_text(r),
            Some(Judged::Compare(Expectation::Direction(f))) => f.name().to_string(),
            Some(Judged::Compare(Expectation::Equal(m))) => match self.claim.then {
                Some(r) => format!("{} (a tie)", ratio_text(r)),
                None => format!("about equal ({})", margin_text(m)),
            },
            Some(Judged::Ranking) => format!("{} first", self.claim.ranking.join(" > ")),
            Some(Judged::Knee(at)) => format!("knee near {}", count_text(at)),
            None => "—".into(),
        }
    }

    /// The run's: a ratio and what it is against (`1.05× [0.98–1.12] against xfs on=disk
    /// (the closest of 5)`), the points of a ranking, a knee.
    pub fn now_text(&self) -> String {
        if self.judged == Some(Judged::Ranking) {
            if self.standing.is_empty() {
                return "—".into();
            }
            return format!(
                "{} points",
                self.standing
                    .iter()
                    .map(|(l, p)| format!("{l} {}", count_text(*p)))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if let Some(k) = &self.knee {
            let at = |x: f64| format!("{}={}", k.parameter, count_text(x));
            let mean = match k.mean {
                Some(x) => format!("knee at {}", at(x)),
                None => format!("no knee: still climbing at {}", at(k.last)),
            };
            let rounds: Vec<String> = k
                .rounds
                .iter()
                .map(|r| r.map_or("none".into(), count_text))
                .collect();
            return format!("{mean} (each round's: {})", rounds.join(", "));
        }
        let Some(now) = &self.now else {
            return "—".into();
        };
        let of = match &self.config {
            Some(x) => format!(" for {x}"),
            None => String::new(),
        };
        let against = match (&self.against, self.against_count) {
            (Some(a), n) if n > 1 => format!(" against {a} (the closest of {n})"),
            (Some(a), _) => format!(" against {a}"),
            (None, _) => String::new(),
        };
        format!("{}{of}{against}", now_text(now))
    }

    /// The verdict with its detail.
    pub fn verdict_text(&self) -> String {
        verdict_text(self.verdict, self.detail.as_deref())
    }
}

/// The Markdown of every study: per figure a table (configuration, then, then / reference,
/// now, now / reference with its interval, verdict), then the claims.
pub fn markdown(out: &mut dyn Write, then_now: &ThenNow) -> io::Result<()> {
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
                writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} |",
                    escape(&row.label),
                    escape(&f.then_value(row)),
                    escape(&row.then_ratio_text()),
                    escape(&f.now_value(row)),
                    escape(&row.now_ratio_text()),
                    escape(&row.verdict_text()),
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
                    escape(&c.verdict_text()),
                )?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

/// The study's published figures beside the run's: per figure a line per configuration (then
/// and now, each relative to the reference, and the verdict), then the claims.
pub fn terminal(out: &mut dyn Write, then_now: &ThenNow) -> io::Result<()> {
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

/// A study's published figures and claims beside the run's, one row per configuration of a
/// figure and per claim, with the verdict the other reports give (crate::then_now).
pub fn xlsx(
    wb: &mut Workbook,
    then_now: &ThenNow,
    used: &mut Vec<String>,
) -> Result<(), XlsxError> {
    if then_now.is_empty() {
        return Ok(());
    }
    let bold = Format::new().set_bold();
    let ws = wb.add_worksheet();
    ws.set_name(sheet_name("then and now", used))?;
    let header = [
        "run",
        "figure or claim",
        "source",
        "configuration",
        "then",
        "then (ratio or finding)",
        "now",
        "now (ratio)",
        "now ci95_low",
        "now ci95_high",
        "verdict",
    ];
    for (j, h) in header.iter().enumerate() {
        ws.write_string_with_format(0, j as u16, *h, &bold)?;
    }
    let mut r = 1u32;
    let ratio = |ws: &mut rust_xlsxwriter::Worksheet, r: u32, now: &Option<Now>| {
        if let Some(now) = now {
            ws.write_number(r, 7, now.ratio)?;
            if let (Some(lo), Some(hi)) = (now.low, now.high) {
                ws.write_number(r, 8, lo)?;
                ws.write_number(r, 9, hi)?;
            }
        }
        Ok::<(), XlsxError>(())
    };
    for study in &then_now.studies {
        if let Some(e) = &study.error {
            ws.write_number(r, 0, study.run_id as f64)?;
            ws.write_string(
                r,
                1,
                format!("the run's published figures could not be read: {e}"),
            )?;
            r += 1;
        }
        for f in &study.figures {
            for row in &f.rows {
                ws.write_number(r, 0, study.run_id as f64)?;
                ws.write_string(r, 1, &f.published.title)?;
                ws.write_string(r, 2, &f.published.source)?;
                ws.write_string(r, 3, &row.label)?;
                ws.write_string(r, 4, f.then_value(row))?;
                ws.write_string(r, 5, row.then_ratio_text())?;
                ws.write_string(r, 6, f.now_value(row))?;
                ratio(ws, r, &row.now)?;
                ws.write_string(r, 10, row.verdict_text())?;
                r += 1;
            }
        }
        for c in &study.claims {
            ws.write_number(r, 0, study.run_id as f64)?;
            ws.write_string(r, 1, &c.claim.text)?;
            ws.write_string(r, 2, &c.claim.source)?;
            ws.write_string(r, 3, &c.claim.config)?;
            ws.write_string(r, 5, c.then_text())?;
            ws.write_string(r, 6, c.now_text())?;
            ratio(ws, r, &c.now)?;
            ws.write_string(r, 10, c.verdict_text())?;
            r += 1;
        }
    }
    Ok(())
}

/// What the then-and-now tables are, said once above them.
pub const INTRO: &str = "The study's published figures beside this run's. The hardware differs, so what can agree is the ratios between configurations: each published value is normalised to the study's reference configuration, and this run's value of the same configuration is set against this run's reference, paired by round, with its 95 % interval. The verdict weighs the size as well as the direction (docs/then-and-now.md): it agrees when the interval lies on the study's side of 1 and reaches within ±25 % of its ratio; same direction, different size when it lies on that side but farther; contradicts when it lies on the other side, or within ±5 % of 1 where the study found a difference; inconclusive when it spans 1 and reaches beyond ±5 %. A published ratio within ±5 % of 1 is a tie: a tie or an \"equal\" claim agrees only when the whole interval lies within its margin (±5 % unless the claim states one). A figure of fewer than 10 steps of its clock (CPU times counted in ticks) is not measurable at this scale.";

const HTML_TEMPLATE: &str = include_str!("then_now.html.j2");

/// The class a verdict is shown with in the HTML report.
fn verdict_class(verdict: Option<Verdict>) -> &'static str {
    match verdict {
        Some(Verdict::Agrees) => "win",
        Some(Verdict::Contradicts) => "bad",
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
                                then_ratio => r.then_ratio_text(),
                                now => f.now_value(r),
                                now_ratio => r.now_ratio_text(),
                                verdict => r.verdict_text(),
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
                        verdict => c.verdict_text(),
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
    crate::section::render_html(
        "then_now.html.j2",
        HTML_TEMPLATE,
        minijinja::context! {
            studies => studies,
            several => then_now.studies.len() > 1,
            intro => INTRO,
        },
    )
}

/// A study's figures and claims then and now: in every output (absent from the JSON without a
/// study).
pub struct ThenNowSection;

impl Section for ThenNowSection {
    fn name(&self) -> &'static str {
        "then_now"
    }

    fn terminal(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        terminal(out, findings.get())
    }

    fn markdown(&self, findings: &Findings, out: &mut dyn Write) -> io::Result<()> {
        markdown(out, findings.get())
    }

    fn html(&self, findings: &Findings) -> Result<Option<String>, minijinja::Error> {
        html(findings.get()).map(Some)
    }

    fn workbook(
        &self,
        findings: &Findings,
        workbook: &mut Workbook,
        used: &mut Vec<String>,
    ) -> Result<(), XlsxError> {
        xlsx(workbook, findings.get(), used)
    }

    fn json(&self, findings: &Findings) -> serde_json::Result<Option<JsonMember>> {
        let then_now = findings.get::<ThenNow>();
        if then_now.is_empty() {
            return Ok(None);
        }
        JsonMember::new("then_now", then_now).map(Some)
    }
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

    /// The verdict, rule by rule (docs/then-and-now.md): a stated ratio agrees when the run's
    /// interval is on its side of 1 and reaches within ±25 % of it, else is the same direction
    /// but a different size; the other side of 1 contradicts, and so does equality within ±5 %
    /// where the study found a difference; an interval across 1 and beyond ±5 % is
    /// inconclusive; "equal" agrees only within its margin; no interval is not measured.
    #[test]
    fn a_verdict_weighs_the_size_and_the_direction() {
        use Expectation::{Direction as Dir, Equal, Ratio};
        use Verdict::*;
        let v = |e: Expectation, lo: f64, hi: f64| verdict(e, Some(&now((lo * hi).sqrt(), lo, hi)));
        // A stated ratio.
        assert_eq!(v(Ratio(4.57), 3.9, 4.6), Agrees);
        assert_eq!(v(Ratio(4.57), 5.0, 6.0), Agrees, "within ±25 % of 4.57");
        assert_eq!(v(Ratio(4.57), 1.02, 1.08), DifferentSize);
        assert_eq!(v(Ratio(4.57), 6.0, 8.0), DifferentSize, "beyond it, too");
        assert_eq!(v(Ratio(4.57), 0.7, 0.9), Contradicts);
        assert_eq!(v(Ratio(4.57), 0.98, 1.03), Contradicts, "equal within ±5 %");
        assert_eq!(v(Ratio(4.57), 0.9, 1.5), Inconclusive);
        // Lower: the same, mirrored.
        assert_eq!(v(Ratio(0.7), 0.66, 0.72), Agrees);
        assert_eq!(v(Ratio(0.2), 0.66, 0.72), DifferentSize);
        assert_eq!(v(Ratio(0.7), 1.1, 1.3), Contradicts);
        // A direction alone.
        assert_eq!(v(Dir(Finding::Higher), 1.1, 1.3), Agrees);
        assert_eq!(v(Dir(Finding::Higher), 0.7, 0.9), Contradicts);
        assert_eq!(v(Dir(Finding::Lower), 0.7, 0.9), Agrees);
        assert_eq!(v(Dir(Finding::Lower), 0.9, 1.1), Inconclusive);
        // Equal, and a published tie (the same).
        assert_eq!(v(Equal(1.05), 0.97, 1.04), Agrees);
        assert_eq!(
            v(Equal(1.05), 0.71, 1.41),
            Inconclusive,
            "±40 %: never agreement"
        );
        assert_eq!(v(Equal(1.05), 1.02, 1.08), Inconclusive);
        assert_eq!(v(Equal(1.05), 1.38, 1.63), Contradicts);
        assert_eq!(v(Equal(1.10), 1.02, 1.08), Agrees, "a claim's own margin");
        // Nothing to weigh.
        assert_eq!(verdict(Ratio(4.57), None), NotMeasured);
        let one_round = Now {
            low: None,
            high: None,
            ..now(1.2, 1.1, 1.3)
        };
        assert_eq!(verdict(Ratio(4.57), Some(&one_round)), NotMeasured);
        // Points have no interval: their ratio decides; tied points tell nothing.
        assert_eq!(
            verdict(Dir(Finding::Higher), Some(&Now::exact(1.33))),
            Agrees
        );
        assert_eq!(
            verdict(Dir(Finding::Higher), Some(&Now::exact(1.0))),
            Inconclusive
        );
        assert_eq!(verdict(Ratio(0.8125), Some(&Now::exact(0.9))), Agrees);
        assert_eq!(Verdict::of_all(&[Agrees, NotMeasured, Agrees]), Agrees);
        assert_eq!(Verdict::of_all(&[Agrees, Inconclusive]), Inconclusive);
        assert_eq!(Verdict::of_all(&[DifferentSize, Agrees]), DifferentSize);
        assert_eq!(Verdict::of_all(&[Inconclusive, Contradicts]), Contradicts);
        assert_eq!(
            Verdict::of_all(&[NotMeasured, NotMeasurable]),
            NotMeasurable
        );
        assert_eq!(Verdict::of_all(&[NotMeasured]), NotMeasured);
    }

    const REAL: MetricDef =
        MetricDef::new("real", fsbench_model::Unit::Nanos, Direction::Lower).main();
    const USER: MetricDef = MetricDef::new("user", fsbench_model::Unit::Nanos, Direction::Lower);

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
    /// 1.5 times (the study found it faster: contradicts), btrfs within ±5 % but with an
    /// interval of ±13 % (the study found it 20 % faster: inconclusive), jfs is unsupported
    /// (not measured).
    fn study() -> (tempfile::TempDir, Store, i64) {
        study_of(PLAN)
    }

    /// The run of [`study`] under the plan `plan` (its published figures and claims).
    fn study_of(plan: &str) -> (tempfile::TempDir, Store, i64) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("r.db")).unwrap();
        let run = store
            .begin_run(&NewRun {
                started_at: "t0",
                plan_name: "study",
                plan_text: plan,
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
        assert_eq!(row("xfs").verdict, Some(Verdict::Contradicts));
        assert_eq!(row("btrfs").verdict, Some(Verdict::Inconclusive));
        assert_eq!(row("jfs").verdict, Some(Verdict::NotMeasured));
        assert_eq!(row("jfs").detail.as_deref(), Some("unsupported"));
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
            "**Untar, real** (000\\_x.txt:436)",
            "| configuration | then | then / ext3 | now | now / ext3 (95 % CI) | verdict |",
            "| ext3 | 32.418 s | 1 (reference) | 10.0 s | 1 (reference) |  |",
            "| ext4 | 22.683 s | 0.70× | 7.00 s | 0.70× \\[0.70–0.70\\] | agrees |",
            "| xfs | 20 s | 0.62× | 14.9 s | 1.50× \\[1.38–1.63\\] | contradicts |",
            "| btrfs | 25.854 s | 0.80× | 9.97 s | 1.00× \\[0.88–1.13\\] | inconclusive |",
            "| jfs | 53.747 s | 1.66× | — | — | not measured (unsupported) |",
            "| ext4 untars faster than every other | 000\\_x.txt:440 | lower | 0.70× \\[0.62–0.79\\]",
            "against btrfs (the closest of 4) | agrees |",
            "| ext4 has more points than ext3 | 000\\_x.txt:441 | 1.50× | 1.60× (no interval) against ext3 | agrees |",
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
        assert!(
            html.contains("<td class=\"bad\">contradicts</td>"),
            "{html}"
        );
    }

    /// One stored case of a synthetic run: its filesystem, platform, workload (name, kind)
    /// and per round its results and target record (None: unsupported).
    struct Synth {
        fs: &'static str,
        platform: &'static str,
        workload: &'static str,
        kind: &'static str,
        rounds: Vec<Option<(Vec<ResultRecord>, Option<String>)>>,
    }

    /// A stored run of `cases` under `plan`, as a report model.
    fn stored(plan: &str, cases: &[Synth]) -> (tempfile::TempDir, ReportModel) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("r.db")).unwrap();
        let run = store
            .begin_run(&NewRun {
                started_at: "t0",
                plan_name: "study",
                plan_text: plan,
                fsbench_version: "0",
                host_json: "{}",
                planned_samples: cases.iter().map(|c| c.rounds.len() as u64).sum(),
                overrides_json: None,
                scale: 1.0,
            })
            .unwrap();
        for (position, c) in cases.iter().enumerate() {
            let config: CaseConfig = serde_json::from_str(&format!(
                r#"{{"filesystem":"{}","mkfs_set":"default","mount_set":"default","scheduler":null,"platform":"{}","cache":"warm"}}"#,
                c.fs, c.platform
            ))
            .unwrap();
            let case = store
                .add_case(
                    run,
                    &format!(
                        "{}.default.default.default.{}.warm.{}",
                        c.fs, c.platform, c.workload
                    ),
                    position as i64,
                    &config,
                    &format!(r#"{{"kind":"{}","name":"{}"}}"#, c.kind, c.workload),
                )
                .unwrap();
            for (i, round) in c.rounds.iter().enumerate() {
                let (results, target) = round.clone().unwrap_or_default();
                store
                    .record_sample(
                        case,
                        &NewSample {
                            repetition: i as u32 + 1,
                            status: if round.is_some() {
                                Outcome::Ok
                            } else {
                                Outcome::Unsupported
                            },
                            reason: round.is_none().then_some("not in this kernel"),
                            not_retried: false,
                            started_at: "t",
                            elapsed_ns: 1,
                            target_json: target.as_deref(),
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
        let model = ReportModel::load(&store, &[run]).unwrap();
        (dir, model)
    }

    /// A task chain's untar over three rounds that drift by ±20 % together: `real` is 10 s and
    /// `user` 2 ms times each round's drift and factor (None: unsupported).
    fn chain(fs: &'static str, factors: Option<[f64; 3]>) -> Synth {
        let drift = [1.0, 1.2, 0.8];
        Synth {
            fs,
            platform: "default",
            workload: "chain",
            kind: "task",
            rounds: (0..3)
                .map(|i| {
                    factors.map(|f| {
                        let records = vec![ResultRecord {
                            dims: Dims {
                                step: Some("untar".into()),
                                operation: Some("tool".into()),
                                ..Dims::default()
                            },
                            measurements: vec![
                                REAL.at(10e9 * drift[i] * f[i]),
                                USER.at(2e6 * drift[i] * f[i]),
                            ],
                            ..ResultRecord::default()
                        }];
                        (records, None)
                    })
                })
                .collect(),
        }
    }

    /// A run of task chains (see [`chain`]).
    fn synthetic(
        plan: &str,
        configs: &[(&'static str, Option<[f64; 3]>)],
    ) -> (tempfile::TempDir, ReportModel) {
        let cases: Vec<Synth> = configs.iter().map(|(fs, f)| chain(fs, *f)).collect();
        stored(plan, &cases)
    }

    /// Issue 36's cases, through a stored run and every renderer: a run at 1.05× [1.03–1.08]
    /// of a published 4.57× is the same direction but a different size (it "agreed" when only
    /// the side of 1 was weighed); 4.20× [3.89–4.53] agrees with 4.57×; a published 1.00× is a
    /// tie, which a run at 1.00× [0.98–1.03] agrees with, one at 1.50× contradicts and one at
    /// 1.05× [1.03–1.08] cannot settle; an "equal" claim with a ±40 % interval is
    /// inconclusive, never agreement.
    #[test]
    fn the_verdict_weighs_the_size_and_a_tie_is_an_equivalence_claim() {
        let plan = r#"
name = "study"
[[published]]
title = "Untar, real"
source = "000_x.txt:436"
workload = "chain"
metric = "real"
match = { step = "untar" }
unit = "s"
direction = "lower"
reference = "ext3"
values = { ext3 = 10, xfs = 45.7, ext4 = 45.7, btrfs = 10, jfs = 10, reiserfs = 10 }

[[claims]]
text = "zfs untars as fast as ext3"
source = "000_x.txt:440"
workload = "chain"
metric = "real"
match = { step = "untar" }
config = "zfs"
against = "ext3"
finding = "equal"
"#;
        let (_dir, model) = synthetic(
            plan,
            &[
                ("ext3", Some([1.0; 3])),
                ("xfs", Some([1.05, 1.04, 1.06])),
                ("ext4", Some([4.2, 4.07, 4.33])),
                ("btrfs", Some([1.0, 1.01, 0.99])),
                ("jfs", Some([1.5, 1.45, 1.55])),
                ("reiserfs", Some([1.05, 1.04, 1.06])),
                ("zfs", Some([1.0, 1.15, 0.87])),
            ],
        );
        let then_now = ThenNow::of(&model);
        let study = &then_now.studies[0];
        let row = |label: &str| {
            let r = study.figures[0]
                .rows
                .iter()
                .find(|r| r.label == label)
                .unwrap_or_else(|| panic!("no row {label}: {study:?}"));
            (
                r.then_ratio_text(),
                r.now_ratio_text(),
                r.verdict,
                r.verdict_text(),
            )
        };
        use Verdict::*;
        let text = |s: &str| s.to_string();
        assert_eq!(
            row("xfs"),
            (
                text("4.57×"),
                text("1.05× [1.03–1.08]"),
                Some(DifferentSize),
                text("same direction, different size (then 4.57×, now 1.05×)")
            )
        );
        assert_eq!(
            row("ext4"),
            (
                text("4.57×"),
                text("4.20× [3.89–4.53]"),
                Some(Agrees),
                text("agrees")
            )
        );
        assert_eq!(
            row("btrfs"),
            (
                text("1.00× (a tie)"),
                text("1.00× [0.98–1.03]"),
                Some(Agrees),
                text("agrees")
            )
        );
        assert_eq!(
            row("jfs"),
            (
                text("1.00× (a tie)"),
                text("1.50× [1.38–1.63]"),
                Some(Contradicts),
                text("contradicts")
            )
        );
        assert_eq!(
            row("reiserfs"),
            (
                text("1.00× (a tie)"),
                text("1.05× [1.03–1.08]"),
                Some(Inconclusive),
                text("inconclusive")
            )
        );
        let c = &study.claims[0];
        assert_eq!(c.then_text(), "about equal (±5 %)");
        assert_eq!(c.now_text(), "1.00× [0.71–1.41] against ext3");
        assert_eq!(c.verdict, Inconclusive);
        // Every renderer says the same.
        let mut out = Vec::new();
        Markdown::default().write(&model, &mut out).unwrap();
        let md = String::from_utf8(out).unwrap();
        assert!(
            md.contains("same direction, different size (then 4.57×, now 1.05×) |"),
            "{md}"
        );
        assert!(md.contains("| 1.00× (a tie) |"), "{md}");
        let mut out = Vec::new();
        crate::Terminal::default().write(&model, &mut out).unwrap();
        let terminal = String::from_utf8(out).unwrap();
        for line in [
            "    xfs       then 4.57×, now 1.05× [1.03–1.08]: same direction, different size (then 4.57×, now 1.05×)\n",
            "    jfs       then 1.00× (a tie), now 1.50× [1.38–1.63]: contradicts\n",
        ] {
            assert!(terminal.contains(line), "{line}{terminal}");
        }
        let page = html(&then_now).unwrap();
        assert!(
            page.contains(">same direction, different size (then 4.57×, now 1.05×)</td>"),
            "{page}"
        );
        assert!(
            page.contains("<td class=\"tie\">inconclusive</td>"),
            "{page}"
        );
        let mut out = Vec::new();
        crate::Json.write(&model, &mut out).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let rows = &doc["then_now"]["studies"][0]["figures"][0]["rows"];
        assert_eq!(rows[1]["label"], "xfs", "{rows}");
        assert_eq!(rows[1]["verdict"], "different-size", "{rows}");
        assert_eq!(rows[1]["detail"], "then 4.57×, now 1.05×", "{rows}");
        assert_eq!(rows[1]["expectation"]["ratio"], 4.57, "{rows}");
        assert_eq!(rows[3]["expectation"]["equal"], 1.05, "{rows}");
        assert_eq!(
            doc["then_now"]["studies"][0]["claims"][0]["verdict"],
            "inconclusive"
        );
        use calamine::{Data, Reader, Xlsx as XlsxReader};
        let mut bytes = Vec::new();
        crate::Xlsx.write(&model, &mut bytes).unwrap();
        let mut book: XlsxReader<_> = XlsxReader::new(std::io::Cursor::new(bytes)).unwrap();
        let sheet = book.worksheet_range("then and now").unwrap();
        let cell = |r: u32, c: u32| sheet.get_value((r, c)).cloned();
        assert_eq!(cell(0, 10), Some(Data::String("verdict".into())));
        assert_eq!(cell(2, 3), Some(Data::String("xfs".into())));
        assert_eq!(
            cell(2, 10),
            Some(Data::String(
                "same direction, different size (then 4.57×, now 1.05×)".into()
            ))
        );
        assert!(matches!(cell(2, 8), Some(Data::Float(lo)) if (lo - 1.03).abs() < 0.01));
        assert_eq!(
            cell(7, 1),
            Some(Data::String("zfs untars as fast as ext3".into()))
        );
        assert_eq!(cell(7, 10), Some(Data::String("inconclusive".into())));
    }

    /// lourdas-2009 at --scale 0.01 printed "rm …, user: xfs then 13.3×, now 4.00×
    /// [0.000–1085966093893834.0]: tie now": a CPU time of a few ticks on either side is not
    /// measurable at this scale, and says how small it is; an interval that does reach such
    /// numbers prints them in scientific notation.
    #[test]
    fn a_figure_too_small_for_its_clock_is_not_measurable() {
        let plan = r#"
name = "study"
[[published]]
title = "Untar, user"
source = "000_x.txt:437"
workload = "chain"
metric = "user"
match = { step = "untar" }
unit = "s"
direction = "lower"
reference = "ext3"
values = { ext3 = 11.74, xfs = 12.531 }
"#;
        let (_dir, model) = synthetic(
            plan,
            &[("ext3", Some([1.0; 3])), ("xfs", Some([4.0, 4.1, 3.9]))],
        );
        let then_now = ThenNow::of(&model);
        let xfs = &then_now.studies[0].figures[0].rows[1];
        assert_eq!(xfs.verdict, Some(Verdict::NotMeasurable), "{xfs:?}");
        assert_eq!(xfs.now, None);
        assert_eq!(
            xfs.verdict_text(),
            "not measurable at this scale (xfs's user averages 8.03 ms, under 10 steps of the 10.0 ms it is counted in)"
        );
        assert_eq!(ratio_text(1085966093893834.0), "1.1e15×");
        assert_eq!(ratio_text(148.3), "148×");
        assert_eq!(ratio_text(13.33), "13.3×");
        assert_eq!(ratio_text(0.0004), "4.0e-4×");
        assert_eq!(ratio_text(0.0), "0×");
    }

    const THROUGHPUT: MetricDef = MetricDef::new(
        "throughput",
        fsbench_model::Unit::BytesPerSec,
        Direction::Higher,
    )
    .main();

    /// A matrix case: per round, for each (phase, file size) its throughput, 100 MB/s times
    /// `factor` (each round within 1 %).
    fn matrix(fs: &'static str, platform: &'static str, factor: impl Fn(&str) -> f64) -> Synth {
        let noise = [1.0, 1.01, 0.99];
        Synth {
            fs,
            platform,
            workload: "iozone",
            kind: "matrix",
            rounds: noise
                .iter()
                .map(|n| {
                    let mut records = Vec::new();
                    for phase in ["write", "rewrite", "read"] {
                        for size in [64u64 << 10, 1 << 20] {
                            records.push(ResultRecord {
                                dims: Dims {
                                    phase: Some(phase.into()),
                                    file_size_bytes: Some(size),
                                    record_size_bytes: Some(4096),
                                    ..Dims::default()
                                },
                                measurements: vec![THROUGHPUT.at(100e6 * factor(phase) * n)],
                                ..ResultRecord::default()
                            });
                        }
                    }
                    Some((records, None))
                })
                .collect(),
        }
    }

    /// Study 003's way: seven filesystems ranked per array, each IOzone test one discipline
    /// over every size. Here three filesystems on two platforms, ranked per platform over write
    /// and read (rewrite, which btrfs wins, is not one of the study's): on disk xfs, ext4,
    /// btrfs (3, 2, 1 points a discipline); in memory ext4, btrfs, xfs. The points, a ranking
    /// claim in and out of their order, and a claim set pair by pair (each filesystem in memory
    /// against itself on disk).
    #[test]
    fn a_study_s_points_rank_within_each_platform_over_its_disciplines() {
        let plan = r#"
name = "study"
[[published]]
title = "IOzone points"
source = "003_x.txt:53"
workload = "iozone"
metric = "points"
unit = "points"
direction = "higher"
reference = "ext4"
match = { phase = "write|read" }
points = { together = ["file_size_bytes", "record_size_bytes"], within = "platform" }
values = { ext4 = 30, xfs = 24, btrfs = 18 }

[[claims]]
text = "ext4 first, then xfs"
source = "003_x.txt:51"
workload = "iozone"
metric = "points"
match = { phase = "write|read" }
points = { together = ["file_size_bytes", "record_size_bytes"], within = "platform" }
ranking = ["ext4", "xfs"]

[[claims]]
text = "xfs first"
source = "003_x.txt:66"
workload = "iozone"
metric = "points"
match = { phase = "write|read" }
points = { together = ["file_size_bytes", "record_size_bytes"], within = "platform" }
ranking = ["xfs"]

[[claims]]
text = "memory writes faster than disk"
source = "003_x.txt:73"
workload = "iozone"
metric = "throughput"
match = { phase = "write" }
config = "on=ram"
against = "on=disk"
finding = "higher"
"#;
        let order = |first: &'static str, second: &'static str| {
            move |fs: &str, phase: &str| match phase {
                "rewrite" if fs == "btrfs" => 3.0,
                _ if fs == first => 1.5,
                _ if fs == second => 1.2,
                _ => 1.0,
            }
        };
        let (disk, ram) = (order("xfs", "ext4"), order("ext4", "btrfs"));
        let cases: Vec<Synth> = ["ext4", "xfs", "btrfs"]
            .into_iter()
            .flat_map(|fs| {
                [
                    matrix(fs, "disk", move |p| disk(fs, p)),
                    matrix(fs, "ram", move |p| 2.0 * ram(fs, p)),
                ]
            })
            .collect();
        let (_dir, model) = stored(plan, &cases);
        let then_now = ThenNow::of(&model);
        let study = &then_now.studies[0];
        let f = &study.figures[0];
        assert_eq!(f.now_title, "iozone points (4 disciplines)");
        let points: Vec<(&str, Option<f64>, Option<Verdict>)> = f
            .rows
            .iter()
            .map(|r| (r.label.as_str(), r.now_mean, r.verdict))
            .collect();
        // disk: xfs 6, ext4 4, btrfs 2; memory: ext4 6, btrfs 4, xfs 2.
        assert_eq!(
            points,
            [
                ("ext4", Some(10.0), None),
                ("xfs", Some(8.0), Some(Verdict::Agrees)),
                ("btrfs", Some(6.0), Some(Verdict::Agrees))
            ]
        );
        let [in_order, out_of_order, paired] = study.claims.as_slice() else {
            panic!("{study:?}");
        };
        assert_eq!(in_order.verdict, Verdict::Agrees, "{in_order:?}");
        assert_eq!(in_order.then_text(), "ext4 > xfs first");
        assert_eq!(in_order.now_text(), "ext4 10, xfs 8, btrfs 6 points");
        assert_eq!(out_of_order.verdict, Verdict::Contradicts);
        assert_eq!(
            out_of_order.verdict_text(),
            "contradicts (ext4 ahead of xfs)"
        );
        assert_eq!(paired.verdict, Verdict::Agrees, "{paired:?}");
        assert_eq!(paired.against_count, 3, "each filesystem against itself");
        assert!(
            paired.now_text().contains(" for ") && paired.now_text().contains(" against "),
            "{}",
            paired.now_text()
        );
    }

    /// A dbench-like sweep: per round the throughput at 10, 20, ..., 100 clients, rising to
    /// `knee` clients and flat after it.
    fn sweep(fs: &'static str, knee: f64) -> Synth {
        Synth {
            fs,
            platform: "default",
            workload: "saturation",
            kind: "clients",
            rounds: [1.0, 1.01, 0.99]
                .iter()
                .map(|n| {
                    let records = (1..=10)
                        .map(|i| {
                            let clients = f64::from(i * 10);
                            ResultRecord {
                                dims: Dims {
                                    threads: Some(i64::from(i * 10) as u64),
                                    sweep: Some(fsbench_model::Sweep {
                                        parameter: "clients".into(),
                                        value: clients,
                                    }),
                                    ..Dims::default()
                                },
                                measurements: vec![THROUGHPUT.at(1e6 * clients.min(knee) * n)],
                                ..ResultRecord::default()
                            }
                        })
                        .collect();
                    Some((records, None))
                })
                .collect(),
        }
    }

    /// 004:52, "the saturation point around 70 processes": the knee of btrfs's curve in each
    /// round set beside 70 (within ±25 %: agrees); one at 30 contradicts.
    #[test]
    fn a_knee_claim_sets_the_run_s_knee_beside_the_study_s() {
        let claim = |fs: &str| {
            format!(
                r#"
[[claims]]
text = "{fs} saturates around 70 processes"
source = "004_x.txt:52"
workload = "saturation"
metric = "knee"
config = "{fs}"
at = 70
"#
            )
        };
        let plan = format!("name = \"s\"\n{}{}", claim("btrfs"), claim("ext4"));
        let (_dir, model) = stored(&plan, &[sweep("btrfs", 70.0), sweep("ext4", 30.0)]);
        let then_now = ThenNow::of(&model);
        let [btrfs, ext4] = then_now.studies[0].claims.as_slice() else {
            panic!("{then_now:?}");
        };
        assert_eq!(btrfs.verdict, Verdict::Agrees, "{btrfs:?}");
        assert_eq!(btrfs.then_text(), "knee near 70");
        assert_eq!(
            btrfs.now_text(),
            "knee at clients=70 (each round's: 70, 70, 70)"
        );
        assert_eq!(ext4.verdict, Verdict::Contradicts, "{ext4:?}");
    }

    /// 001's footnote 3: the share of non-contiguous files, read from e2fsck's summary line
    /// after each sample; a share of a few tenths of a percent is not measurable.
    #[test]
    fn footnote_3_s_fragmentation_is_read_from_the_check_s_output() {
        assert_eq!(
            noncontiguous(
                "x\n/dev/sdc1: 27939/8936928 files (3.9% non-contiguous), 725683/17871210 blocks\n"
            ),
            Some(3.9)
        );
        assert_eq!(noncontiguous("Phase 7 - verify link counts...\n"), None);
        let plan = r#"
name = "study"
[[published]]
title = "files e2fsck reports non-contiguous"
source = "001_x.txt:129"
workload = "chain"
metric = "non-contiguous"
unit = "%"
direction = "lower"
reference = "ext4"
values = { ext4 = 0.1, ext3 = 3.9 }
"#;
        let fsck = |share: f64| {
            Some(format!(
                r#"{{"fsck":{{"elapsed_ns":1,"clean":true,"output_tail":"/dev/loop0: 11/65536 files ({share}% non-contiguous), 1/2 blocks"}}}}"#
            ))
        };
        let mut ext4 = chain("ext4", Some([1.0; 3]));
        let mut ext3 = chain("ext3", Some([1.0; 3]));
        for (i, round) in ext4.rounds.iter_mut().enumerate() {
            round.as_mut().unwrap().1 = fsck([0.1, 0.2, 0.1][i]);
        }
        for (i, round) in ext3.rounds.iter_mut().enumerate() {
            round.as_mut().unwrap().1 = fsck([3.9, 4.0, 3.8][i]);
        }
        let (_dir, model) = stored(plan, &[ext4, ext3]);
        let then_now = ThenNow::of(&model);
        let f = &then_now.studies[0].figures[0];
        assert_eq!(
            f.now_title,
            "chain: the files e2fsck reports non-contiguous after each sample"
        );
        let ext3 = f.rows.iter().find(|r| r.label == "ext3").unwrap();
        assert!((ext3.now_mean.unwrap() - 3.9).abs() < 1e-9, "{ext3:?}");
        assert_eq!(ext3.verdict, Some(Verdict::NotMeasurable), "{ext3:?}");
        assert!(
            ext3.verdict_text()
                .contains("ext4's non-contiguous averages 0.13 %"),
            "{}",
            ext3.verdict_text()
        );
    }

    /// A run whose md arrays ran on one device each says so after its status, in every report
    /// that states the run's conditions (its scale too).
    #[test]
    fn a_run_on_one_device_in_place_of_md_says_so() {
        let (_dir, mut model) = synthetic("name = \"s\"\n", &[("ext4", Some([1.0; 3]))]);
        assert_eq!(model.runs[0].conditions_note(), "");
        model.runs[0].cases[0].config.one_device_for = Some("md-raid0:2,chunk=64k".into());
        assert_eq!(
            model.runs[0].conditions_note(),
            ", no md here: one device, not RAID 0"
        );
        let mut out = Vec::new();
        Markdown::default().write(&model, &mut out).unwrap();
        let md = String::from_utf8(out).unwrap();
        assert!(md.contains("no md here: one device, not RAID 0)"), "{md}");
    }

    /// A claim set against several configurations takes the worst verdict of its pairs, and
    /// shows a pair with that verdict: a different size (with both ratios) is not shown with the
    /// ratio of another pair that was merely inconclusive.
    #[test]
    fn a_claim_against_several_shows_a_pair_with_its_verdict() {
        let plan = r#"
name = "study"
[[claims]]
text = "ext3 untars in a quarter of the others' time"
source = "000_x.txt:436"
workload = "chain"
metric = "real"
match = { step = "untar" }
config = "ext3"
against = "*"
then = 0.25
"#;
        let (_dir, model) = synthetic(
            plan,
            &[
                ("ext3", Some([1.0; 3])),
                ("xfs", Some([1.05, 1.04, 1.06])),
                ("zfs", Some([1.0, 1.15, 0.87])),
            ],
        );
        let then_now = ThenNow::of(&model);
        let c = &then_now.studies[0].claims[0];
        assert_eq!(c.verdict, Verdict::DifferentSize, "{c:?}");
        assert_eq!(c.against.as_deref(), Some("xfs"));
        assert_eq!(
            c.verdict_text(),
            "same direction, different size (then 0.25×, now 0.95×)"
        );
    }

    /// What a plan says of its study is shown as text in the Markdown: an image or a link in
    /// it is not one (a renderer would fetch the image), and a value no unit makes readable
    /// (1e308) is written in scientific notation, not as 309 digits.
    #[test]
    fn a_plan_s_study_text_is_inert_and_its_huge_values_short_in_the_markdown() {
        let hostile = PLAN
            .replace(
                "title = \"Untar, real\"",
                "title = \"![x](https://evil.example/x.png) [y](https://evil.example/) *b* _i_ ~s~\"\nnote = \"[r]: https://evil.example/r.png\"",
            )
            .replace("unit = \"s\"", "unit = \"![u](https://evil.example/u.png)\"")
            .replace("ext3 = 32.418", "ext3 = 1e308")
            .replace("jfs = 53.747", "jfs = 1e-300")
            .replace("then = 1.5", "then = 1e300");
        let (_dir, store, run) = study_of(&hostile);
        let model = ReportModel::load(&store, &[run]).unwrap();
        let mut out = Vec::new();
        Markdown::default().write(&model, &mut out).unwrap();
        let md = String::from_utf8(out).unwrap();
        // Every bracket is escaped: no image, link or link reference is left.
        let bare = md
            .char_indices()
            .filter(|&(i, c)| matches!(c, '[' | ']') && !md[..i].ends_with('\\'))
            .count();
        assert_eq!(bare, 0, "{md}");
        for raw in ["*b*", "_i_", "~s~"] {
            assert!(!md.contains(raw), "{raw:?} in {md}");
        }
        assert!(
            md.contains("**\\!\\[x\\](https://evil.example/x.png) \\[y\\](https://evil.example/)"),
            "{md}"
        );
        let longest = md
            .split(|c: char| !c.is_ascii_digit())
            .map(str::len)
            .max()
            .unwrap_or(0);
        assert!(longest < 20, "a number of {longest} digits in {md}");
        for part in ["| ext3 | 1e308 \\!\\[u\\]", "| jfs | 1e-300 \\!\\[u\\]"] {
            assert!(md.contains(part), "{part}\n{md}");
        }
    }
}
