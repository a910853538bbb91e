//! A study's published figures and claims, as a plan carries them (`[[published]]` and
//! `[[claims]]`): what each figure is, the line of the write-up it comes from,
//! which of the run's results it is set beside (a workload, a metric, the result's dimensions)
//! and its value per configuration. The plan validates them against its cases; the report reads
//! them back from the run's stored plan text and sets this run's ratios beside the study's.

use crate::{CaseAxis, CaseConfig, Dim, DimValue, Dims, Direction};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The metric name that stands for the points of a ranking (each workload's disciplines'
/// placement points, summed), not for a measured figure: study 003 published points.
pub const POINTS: &str = "points";

/// The metric name that stands for the time of the read-only filesystem check after each
/// sample (from the sample's target record), for workloads that do not report the check as a
/// result of their own (the task chain reports it as its step `fsck`).
pub const FSCK: &str = "fsck";

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

/// One claim of the write-up: `config` against `against` in one result, what the study found
/// (a ratio it states, or higher / lower / equal in words).
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
    /// The configuration the claim is about.
    pub config: String,
    /// The configuration it is set against.
    pub against: String,
    /// The ratio config / against the study states (12 % more: 1.12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub then: Option<f64>,
    /// What the study found of config's figure against against's, when it states no ratio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<Finding>,
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

impl Claim {
    /// What the study found: from its ratio, else as it is stated. An error says what is wrong
    /// (neither given, or the two disagree).
    pub fn finding(&self) -> Result<Finding, String> {
        match (self.then, self.finding) {
            (None, None) => Err(
                "says neither `then` (the ratio the study states) nor `finding` (higher, lower or equal)"
                    .into(),
            ),
            (Some(r), _) if !(r.is_finite() && r > 0.0) => {
                Err(format!("`then` must be a ratio above 0 (got {r})"))
            }
            (Some(r), Some(f)) if Finding::of_ratio(r) != f => Err(format!(
                "`then = {r}` says {}, `finding` says {}: give one",
                Finding::of_ratio(r).name(),
                f.name()
            )),
            (Some(r), _) => Ok(Finding::of_ratio(r)),
            (None, Some(f)) => Ok(f),
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
/// value; an empty value asks for the dimension to be absent. Unknown keys never match.
pub fn dims_match(wanted: &BTreeMap<String, String>, dims: &Dims) -> bool {
    wanted.iter().all(|(key, want)| {
        let Ok(dim) = match_dim(key) else {
            return false;
        };
        match dim.get(dims) {
            None => want.is_empty(),
            Some(DimValue::Text(t)) => &t == want,
            Some(DimValue::Bytes(b)) => crate::size_label(b) == *want || b.to_string() == *want,
            Some(DimValue::Count(n)) => n.to_string() == *want,
            Some(DimValue::Sweep(p, v)) => format!("{p}={v}") == *want || v.to_string() == *want,
        }
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

    #[test]
    fn a_claim_states_a_ratio_or_a_finding_and_they_must_agree() {
        let claim = |then: Option<f64>, finding: Option<Finding>| Claim {
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
        };
        assert_eq!(claim(Some(1.12), None).finding(), Ok(Finding::Higher));
        assert_eq!(
            claim(None, Some(Finding::Equal)).finding(),
            Ok(Finding::Equal)
        );
        assert!(claim(None, None).finding().is_err());
        assert!(claim(Some(0.9), Some(Finding::Higher)).finding().is_err());
        assert!(check_source("000_x.txt:436").is_ok());
        assert!(check_source("000_x.txt").is_err());
        assert!(check_source("000_x.txt:0").is_err());
    }
}
