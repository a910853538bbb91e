//! A study's published figures and claims, as a plan carries them (`[[published]]` and
//! `[[claims]]`): what each figure is, the line of the write-up it comes from,
//! which of the run's results it is set beside (a workload, a metric, the result's dimensions)
//! and its value per configuration; and what a claim expects of the run ([`Expectation`],
//! [`Judged`]) under the rules every report applies (docs/then-and-now.md). The plan validates
//! them against its cases; the report reads them back from the run's stored plan text and sets
//! this run's ratios beside the study's.

use crate::{CaseAxis, CaseConfig, Dim, DimValue, Dims, Direction};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The metric name that stands for the points of a ranking (each discipline's placement
/// points, summed; [`PointsRule`] says which disciplines and among which configurations), not
/// for a measured figure: study 003 published points.
pub const POINTS: &str = "points";

/// The metric name that stands for the time of the read-only filesystem check after each
/// sample (from the sample's target record), for workloads that do not report the check as a
/// result of their own (the task chain reports it as its step `fsck`).
pub const FSCK: &str = "fsck";

/// The metric name that stands for the share of files e2fsck reports non-contiguous in its
/// summary line after each sample (`27939/8936928 files (3.9% non-contiguous)`, read from the
/// check's output kept in the sample's target record), in percent: study 001's footnote 3.
pub const NONCONTIGUOUS: &str = "non-contiguous";

/// The metric name that stands for the knee of a sweep's curve (the first point after which
/// more load adds less than 5 %, `fsbench_workload::sweep::curve`): a claim of it states the
/// load the study saw its curve saturate at (`at = 70`, study 004).
pub const KNEE: &str = "knee";

/// A published ratio within this factor of 1 (±5 % on the log scale) is a published tie: the
/// study's own noise (three runs averaged, or one) is at least that, so it claimed no
/// difference, and its ratio is judged as an "equal" claim with this margin.
pub const TIE_MARGIN: f64 = 1.05;

/// How far (as a factor, ±25 % on the log scale) the run's interval may lie from a published
/// ratio and still agree with it: a different machine, kernel and scale move ratios, and a
/// tolerance narrower than that would call every reproduction a different size.
pub const TOLERANCE: f64 = 1.25;

/// What a plan says of the study it reproduces: its published figures and its claims. Read
/// from a whole plan text, other keys ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StudyFigures {
    #[serde(default)]
    pub published: Vec<Published>,
    #[serde(default)]
    pub claims: Vec<Claim>,
}

impl StudyFigures {
    pub fn is_empty(&self) -> bool {
        self.published.is_empty() && self.claims.is_empty()
    }
}

/// One published figure: a table row of the write-up (or a figure it states in its text), a
/// value per configuration, set beside one result of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// What the write-up calls it ("untar linux-2.6.32.tar.bz2, real").
    pub title: String,
    /// Where: `FILE:LINE` of the write-up (the seed's file name and line number): the line of
    /// the table's row, or of its heading when each value is on a line of its own (then each
    /// value gives its line).
    pub source: String,
    /// How the figure was read when it is not a table's number (prose, a chart's caption), or
    /// anything the reader must know about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The plan's workload whose results it is set beside.
    pub workload: String,
    /// The workload's metric ([`POINTS`] and [`FSCK`] are the two that are not a result's).
    pub metric: String,
    /// The result's dimensions to match (`step = "untar"`); an empty value: the dimension is
    /// absent. Several matching rows are taken together (their geometric mean per round).
    #[serde(default, rename = "match", skip_serializing_if = "BTreeMap::is_empty")]
    pub dims: BTreeMap<String, String>,
    /// The study's unit, as it printed it ("s", "transactions/s", "%", "points").
    pub unit: String,
    /// Which way the study's figure is better.
    pub direction: Direction,
    /// The configuration every value is normalised to (one of `values`).
    pub reference: String,
    /// The study's value per configuration (a configuration label: `ext4`, `xfs mount=logbufs`,
    /// `ext4 mkfs=uninit mount=wb`). Reports list them in the order of the run's cases.
    pub values: BTreeMap<String, Value>,
    /// For `metric = "points"`: which results are the disciplines and among which
    /// configurations each is ranked (default: every matching row of the workload's main
    /// figure a discipline, every configuration ranked together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<PointsRule>,
}

/// How a study gave points: the disciplines (the rows of each workload's main figure that
/// `match` selects, rows differing only in `together`'s dimensions taken as one discipline:
/// their geometric mean per round) and the configurations ranked in each (all of them, or those
/// sharing one value of the axis `within`: a study that ranked its filesystems per device).
/// Each discipline places its configurations as the standings do (docs/reports.md: a
/// configuration that does not differ significantly from the one before shares its place; with N
/// ranked, place k is worth N - k + 1 points); a configuration label's points are those of
/// every case it names, added up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PointsRule {
    /// Further workloads of the plan whose disciplines count with the figure's own (the same
    /// `match` selects their rows).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<String>,
    /// Result dimensions whose rows are taken together as one discipline
    /// (`["file_size_bytes", "record_size_bytes"]`: one discipline per test, over every size).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub together: Vec<String>,
    /// A configuration axis, as include rules name it (`platform`): the configurations of each
    /// of its values are ranked apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<String>,
}

impl PointsRule {
    /// The axis `within` names (None: every configuration ranked together); an error says what
    /// to write.
    pub fn within_axis(&self) -> Result<Option<CaseAxis>, String> {
        let Some(name) = &self.within else {
            return Ok(None);
        };
        CaseAxis::ALL
            .into_iter()
            .filter(|a| *a != CaseAxis::Workload)
            .find(|a| a.rule_key() == name)
            .map(Some)
            .ok_or_else(|| {
                format!(
                    "points.within: unknown axis '{name}'; use one of filesystem, mkfs_options, mount_options, scheduler, platform, age, cache"
                )
            })
    }
}

/// A published value: a number (on the line `source` names), or a number with the line of
/// the write-up it is on (`{ value = 32.51, line = 55 }`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Number(f64),
    OnLine(OnLine),
}

/// A value and its line.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnLine {
    pub value: f64,
    pub line: u32,
}

impl Value {
    pub fn value(self) -> f64 {
        match self {
            Value::Number(v) | Value::OnLine(OnLine { value: v, .. }) => v,
        }
    }

    /// The line it is on, when it is not the one `source` names.
    pub fn line(self) -> Option<u32> {
        match self {
            Value::Number(_) => None,
            Value::OnLine(OnLine { line, .. }) => Some(line),
        }
    }
}

/// One claim of the write-up: `config` against `against` in one result and what the study
/// found (a ratio it states, or higher / lower / equal in words, with the margin of "equal");
/// or, of points, the order of the first places (`ranking`); or, of a sweep, the load its
/// curve saturates at (`metric = "knee"`, `at`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// The claim as the write-up makes it (quoted or closely paraphrased).
    pub text: String,
    /// `FILE:LINE` of the write-up.
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub workload: String,
    pub metric: String,
    #[serde(default, rename = "match", skip_serializing_if = "BTreeMap::is_empty")]
    pub dims: BTreeMap<String, String>,
    /// The configuration the claim is about. When it names several (`on=ram`), each is set
    /// against the configurations of `against` that share its value on every axis neither
    /// label names (`on=ram` against `on=disk`: each filesystem in memory against itself on
    /// disk).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub config: String,
    /// The configuration(s) it is set against (`*`: every other one).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub against: String,
    /// The ratio config / against the study states (12 % more: 1.12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub then: Option<f64>,
    /// What the study found of config's figure against against's, when it states no ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<Finding>,
    /// For `finding = "equal"`: how far apart the two may be and still be equal, as a fraction
    /// (0.10: ±10 % on the log scale); default [`TIE_MARGIN`]'s 5 %.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// For `metric = "points"`: the configurations that hold the first places, best first
    /// (each ahead of the next, the last ahead of every configuration not listed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranking: Vec<String>,
    /// For `metric = "knee"`: the load (the swept setting's value) the study's curve of
    /// `config` saturated at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<f64>,
    /// For `metric = "points"`: which disciplines and among which configurations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<PointsRule>,
}

/// What a study found of one configuration's figure against another's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Finding {
    Higher,
    Lower,
    /// About the same ("nearly identical").
    Equal,
}

impl Finding {
    /// What a ratio of two published values says.
    pub fn of_ratio(ratio: f64) -> Finding {
        if ratio > 1.0 {
            Finding::Higher
        } else if ratio < 1.0 {
            Finding::Lower
        } else {
            Finding::Equal
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Finding::Higher => "higher",
            Finding::Lower => "lower",
            Finding::Equal => "equal",
        }
    }
}

/// What a claim (or a published ratio) expects of the run's ratio config / against, as the
/// verdict weighs it (docs/then-and-now.md).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expectation {
    /// A difference of about this size: the ratio the study published, beyond
    /// [`TIE_MARGIN`]; it agrees within [`TOLERANCE`].
    Ratio(f64),
    /// A difference this way (higher or lower), its size not stated.
    Direction(Finding),
    /// No difference: within this factor of 1 either way (1.05: ±5 %).
    Equal(f64),
}

impl Expectation {
    /// What a published ratio claims: a tie within [`TIE_MARGIN`], else a difference of its size.
    pub fn of_ratio(ratio: f64) -> Expectation {
        if ratio.ln().abs() <= TIE_MARGIN.ln() + 1e-12 {
            Expectation::Equal(TIE_MARGIN)
        } else {
            Expectation::Ratio(ratio)
        }
    }

    /// Higher, lower or equal.
    pub fn finding(self) -> Finding {
        match self {
            Expectation::Ratio(r) => Finding::of_ratio(r),
            Expectation::Direction(f) => f,
            Expectation::Equal(_) => Finding::Equal,
        }
    }
}

/// What kind of judgement a claim asks for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Judged {
    /// `config` against `against`: the run's ratio weighed against the expectation.
    Compare(Expectation),
    /// Points: the `ranking`'s configurations in the first places, in its order.
    Ranking,
    /// A sweep's knee near this load.
    Knee(f64),
}

impl Claim {
    /// What the claim asks: from its keys, each kind with only its own. An error names the key
    /// that is wrong and says what to write.
    pub fn judged(&self) -> Result<Judged, (&'static str, String)> {
        let given = |key: &'static str, set: bool, kind: &str| {
            if set {
                Err((key, format!("`{key}` does not belong to {kind}: drop it")))
            } else {
                Ok(())
            }
        };
        if !self.ranking.is_empty() {
            let kind = "a ranking claim (`ranking`)";
            if self.metric != POINTS {
                return Err((
                    "ranking",
                    format!(
                        "a ranking is of points: set metric = \"{POINTS}\" (not '{}')",
                        self.metric
                    ),
                ));
            }
            given("config", !self.config.is_empty(), kind)?;
            given("against", !self.against.is_empty(), kind)?;
            given("then", self.then.is_some(), kind)?;
            given("finding", self.finding.is_some(), kind)?;
            given("margin", self.margin.is_some(), kind)?;
            given("at", self.at.is_some(), kind)?;
            return Ok(Judged::Ranking);
        }
        if self.metric == KNEE {
            let kind = "a knee claim";
            given("against", !self.against.is_empty(), kind)?;
            given("then", self.then.is_some(), kind)?;
            given("finding", self.finding.is_some(), kind)?;
            given("margin", self.margin.is_some(), kind)?;
            given("points", self.points.is_some(), kind)?;
            return match self.at {
                Some(at) if at.is_finite() && at > 0.0 => Ok(Judged::Knee(at)),
                Some(at) => Err(("at", format!("`at` must be a load above 0 (got {at})"))),
                None => Err((
                    "at",
                    "a knee claim says where the study's curve saturated: at = LOAD (70 processes: at = 70)"
                        .into(),
                )),
            };
        }
        given(
            "at",
            self.at.is_some(),
            "a claim that is not of a knee (metric = \"knee\")",
        )?;
        if self.points.is_some() && self.metric != POINTS {
            return Err((
                "points",
                format!("`points` says how points are given: it belongs to metric = \"{POINTS}\""),
            ));
        }
        for (key, value) in [("config", &self.config), ("against", &self.against)] {
            if value.trim().is_empty() {
                return Err((
                    key,
                    format!("a claim names `config` and `against` (or, of points, a `ranking`): `{key}` is missing"),
                ));
            }
        }
        let expectation = match (self.then, self.finding) {
            (None, None) => {
                return Err((
                    "then",
                    "says neither `then` (the ratio the study states) nor `finding` (higher, lower or equal)"
                        .into(),
                ))
            }
            (Some(r), _) if !(r.is_finite() && r > 0.0) => {
                return Err(("then", format!("`then` must be a ratio above 0 (got {r})")))
            }
            (Some(r), Some(f)) if Finding::of_ratio(r) != f => {
                return Err((
                    "then",
                    format!(
                        "`then = {r}` says {}, `finding` says {}: give one",
                        Finding::of_ratio(r).name(),
                        f.name()
                    ),
                ))
            }
            (Some(r), _) => Expectation::of_ratio(r),
            (None, Some(Finding::Equal)) => Expectation::Equal(TIE_MARGIN),
            (None, Some(f)) => Expectation::Direction(f),
        };
        match (self.margin, expectation) {
            (None, e) => Ok(Judged::Compare(e)),
            (Some(m), Expectation::Equal(_)) if self.then.is_none() => {
                if m.is_finite() && m > 0.0 && m <= 1.0 {
                    Ok(Judged::Compare(Expectation::Equal(1.0 + m)))
                } else {
                    Err((
                        "margin",
                        format!("`margin` is a fraction above 0 and at most 1 (0.10 for ±10 %; got {m})"),
                    ))
                }
            }
            (Some(_), _) => Err((
                "margin",
                "`margin` is the margin of finding = \"equal\" (a stated ratio is weighed within ±25 %)"
                    .into(),
            )),
        }
    }
}

/// A configuration as a published figure names it: its filesystem and, as the reports label
/// configurations, `mkfs=SET`, `mount=SET`, `sched=NAME`, `on=PLATFORM`, `cache=POLICY` for
/// the axes that tell it apart (`ext4 mkfs=uninit mount=wb`). Axes not named match any value;
/// `on=disk` alone is every configuration on that platform, `*` every configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector(pub Vec<(CaseAxis, String)>);

impl std::str::FromStr for Selector {
    type Err = String;
    fn from_str(text: &str) -> Result<Selector, String> {
        // Every configuration (a claim against all the others).
        if text.trim() == "*" {
            return Ok(Selector(Vec::new()));
        }
        let mut parts = Vec::new();
        for word in text.split_whitespace() {
            let (axis, value) = match word.split_once('=') {
                None => (CaseAxis::Filesystem, word),
                Some((prefix, value)) => {
                    let axis = CaseAxis::ALL
                        .into_iter()
                        .filter(|a| !a.label_prefix().is_empty())
                        .find(|a| a.label_prefix().trim_end_matches('=') == prefix)
                        .ok_or_else(|| {
                            format!(
                                "'{word}' in configuration '{text}': a configuration is its filesystem, then any of mkfs=SET mount=SET sched=NAME on=PLATFORM cache=POLICY"
                            )
                        })?;
                    (axis, value)
                }
            };
            if value.is_empty() || parts.iter().any(|(a, _)| *a == axis) {
                return Err(format!(
                    "configuration '{text}' gives its {} twice or empty",
                    axis.column()
                ));
            }
            parts.push((axis, value.to_string()));
        }
        if parts.is_empty() {
            return Err("a configuration label must not be empty".into());
        }
        Ok(Selector(parts))
    }
}

impl Selector {
    /// Whether `config` has every value the label names.
    pub fn matches(&self, config: &CaseConfig) -> bool {
        self.0
            .iter()
            .all(|(axis, value)| config.value(*axis).as_deref() == Some(value.as_str()))
    }
}

/// The dimension a `match` key names (its column name: `step`, `phase`, `file_size_bytes`).
pub fn match_dim(key: &str) -> Result<Dim, String> {
    Dim::ALL
        .into_iter()
        .find(|d| d.column() == key)
        .ok_or_else(|| {
            format!(
                "unknown result dimension '{key}'; use one of {}",
                Dim::ALL.map(Dim::column).join(", ")
            )
        })
}

/// Whether a result's dimensions have every value `dims` asks for: text as it is, sizes as
/// bytes or as labelled (`64m`), counts as numbers, a sweep point as `PARAMETER=VALUE` or its
/// value; an empty value asks for the dimension to be absent, and `a|b|` for any of its
/// alternatives (here a, b or absent). Unknown keys never match.
pub fn dims_match(wanted: &BTreeMap<String, String>, dims: &Dims) -> bool {
    wanted.iter().all(|(key, want)| {
        let Ok(dim) = match_dim(key) else {
            return false;
        };
        let value = dim.get(dims);
        want.split('|').any(|want| match &value {
            None => want.is_empty(),
            Some(DimValue::Text(t)) => t == want,
            Some(DimValue::Bytes(b)) => crate::size_label(*b) == want || b.to_string() == want,
            Some(DimValue::Count(n)) => n.to_string() == want,
            Some(DimValue::Sweep(p, v)) => format!("{p}={v}") == want || v.to_string() == want,
        })
    })
}

/// Whether `source` is `FILE:LINE` with a line number from 1.
pub fn check_source(source: &str) -> Result<(), String> {
    match source.rsplit_once(':') {
        Some((file, line)) if !file.trim().is_empty() && line.parse::<u32>().is_ok_and(|l| l > 0) => {
            Ok(())
        }
        _ => Err(format!(
            "'{source}' is not FILE:LINE (the write-up's file and the line the figure is on, e.g. 000_54e63b6255832411.txt:436)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CachePolicy;

    fn config(fs: &str, mount: &str, platform: &str) -> CaseConfig {
        CaseConfig {
            filesystem: fs.into(),
            mkfs_set: "default".into(),
            mkfs_options: String::new(),
            mount_set: mount.into(),
            mount_options: String::new(),
            scheduler: None,
            platform: platform.into(),
            image_in_ram: false,
            cpu_percent: None,
            cache: CachePolicy::Warm,
            array: None,
            one_device_for: None,
            age: crate::FRESH.into(),
        }
    }

    #[test]
    fn a_label_names_the_configurations_it_matches() {
        let xfs: Selector = "xfs mount=logbufs".parse().unwrap();
        assert!(xfs.matches(&config("xfs", "logbufs", "default")));
        assert!(!xfs.matches(&config("xfs", "noatime", "default")));
        let any_xfs: Selector = "xfs".parse().unwrap();
        assert!(any_xfs.matches(&config("xfs", "noatime", "default")));
        let on_ram: Selector = "ext4 on=ram".parse().unwrap();
        assert!(on_ram.matches(&config("ext4", "default", "ram")));
        assert!(!on_ram.matches(&config("ext4", "default", "disk")));
        assert!("ext4 size=4"
            .parse::<Selector>()
            .unwrap_err()
            .contains("mkfs=SET"));
        assert!("ext4 xfs".parse::<Selector>().is_err());
        assert!("".parse::<Selector>().is_err());
    }

    #[test]
    fn dimensions_match_as_written_and_empty_means_absent() {
        let dims = Dims {
            step: Some("untar".into()),
            file_size_bytes: Some(64 << 20),
            threads: Some(128),
            ..Dims::default()
        };
        let m = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert!(dims_match(&m(&[("step", "untar")]), &dims));
        assert!(dims_match(&m(&[("file_size_bytes", "64m")]), &dims));
        assert!(dims_match(&m(&[("threads", "128"), ("phase", "")]), &dims));
        assert!(!dims_match(&m(&[("step", "")]), &dims));
        assert!(!dims_match(&m(&[("stage", "untar")]), &dims));
    }

    fn claim(then: Option<f64>, finding: Option<Finding>) -> Claim {
        Claim {
            text: "t".into(),
            source: "s:1".into(),
            note: None,
            workload: "w".into(),
            metric: "m".into(),
            dims: BTreeMap::new(),
            config: "a".into(),
            against: "b".into(),
            then,
            finding,
            margin: None,
            ranking: Vec::new(),
            at: None,
            points: None,
        }
    }

    #[test]
    fn a_claim_states_a_ratio_or_a_finding_and_they_must_agree() {
        let judged = |c: &Claim| c.judged().map_err(|(key, _)| key);
        assert_eq!(
            judged(&claim(Some(1.12), None)),
            Ok(Judged::Compare(Expectation::Ratio(1.12)))
        );
        assert_eq!(
            judged(&claim(None, Some(Finding::Lower))),
            Ok(Judged::Compare(Expectation::Direction(Finding::Lower)))
        );
        assert_eq!(
            judged(&claim(None, Some(Finding::Equal))),
            Ok(Judged::Compare(Expectation::Equal(TIE_MARGIN)))
        );
        assert_eq!(judged(&claim(None, None)), Err("then"));
        assert_eq!(
            judged(&claim(Some(0.9), Some(Finding::Higher))),
            Err("then")
        );
        assert!(check_source("000_x.txt:436").is_ok());
        assert!(check_source("000_x.txt").is_err());
        assert!(check_source("000_x.txt:0").is_err());
    }

    /// A published ratio within 5 % of 1 is a tie (the study's own noise), judged as "equal";
    /// an "equal" claim may state its own margin; a ranking and a knee take only their keys.
    #[test]
    fn a_small_published_difference_is_a_tie_and_each_kind_of_claim_takes_its_own_keys() {
        assert_eq!(Expectation::of_ratio(1.0), Expectation::Equal(TIE_MARGIN));
        assert_eq!(Expectation::of_ratio(0.995), Expectation::Equal(TIE_MARGIN));
        assert_eq!(Expectation::of_ratio(1.05), Expectation::Equal(TIE_MARGIN));
        assert_eq!(Expectation::of_ratio(1.06), Expectation::Ratio(1.06));
        assert_eq!(Expectation::of_ratio(4.57).finding(), Finding::Higher);
        // A stated ratio that is a tie reads as one.
        assert_eq!(
            claim(Some(1.03), None).judged().unwrap(),
            Judged::Compare(Expectation::Equal(TIE_MARGIN))
        );
        let mut equal = claim(None, Some(Finding::Equal));
        equal.margin = Some(0.1);
        assert_eq!(
            equal.judged().unwrap(),
            Judged::Compare(Expectation::Equal(1.1))
        );
        equal.margin = Some(0.0);
        assert_eq!(equal.judged().unwrap_err().0, "margin");
        let mut higher = claim(None, Some(Finding::Higher));
        higher.margin = Some(0.1);
        assert_eq!(higher.judged().unwrap_err().0, "margin");

        let mut ranking = claim(None, None);
        (ranking.config, ranking.against) = (String::new(), String::new());
        ranking.ranking = vec!["xfs".into(), "ext4".into()];
        assert_eq!(ranking.judged().unwrap_err().0, "ranking", "not of points");
        ranking.metric = POINTS.into();
        assert_eq!(ranking.judged(), Ok(Judged::Ranking));
        ranking.against = "*".into();
        assert_eq!(ranking.judged().unwrap_err().0, "against");

        let mut knee = claim(None, None);
        (knee.metric, knee.against) = (KNEE.into(), String::new());
        assert_eq!(knee.judged().unwrap_err().0, "at");
        knee.at = Some(70.0);
        assert_eq!(knee.judged(), Ok(Judged::Knee(70.0)));
        let mut not_knee = claim(Some(1.2), None);
        not_knee.at = Some(70.0);
        assert_eq!(not_knee.judged().unwrap_err().0, "at");
    }

    #[test]
    fn a_match_value_may_list_alternatives_absent_among_them() {
        let m = |v: &str| BTreeMap::from([("phase".to_string(), v.to_string())]);
        let read = Dims {
            phase: Some("read".into()),
            ..Dims::default()
        };
        assert!(dims_match(&m("write|read"), &read));
        assert!(!dims_match(&m("write|rewrite"), &read));
        assert!(dims_match(&m("write|"), &Dims::default()));
        assert!(!dims_match(&m("write|read"), &Dims::default()));
    }

    #[test]
    fn points_rank_within_an_axis_named_as_rules_name_it() {
        let rule = |within: &str| PointsRule {
            within: Some(within.into()),
            ..PointsRule::default()
        };
        assert_eq!(rule("platform").within_axis(), Ok(Some(CaseAxis::Platform)));
        assert!(rule("on").within_axis().unwrap_err().contains("platform"));
        assert_eq!(PointsRule::default().within_axis(), Ok(None));
    }
}
