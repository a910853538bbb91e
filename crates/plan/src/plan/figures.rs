//! A study's published figures (`[[published]]`) and claims (`[[claims]]`), checked against
//! the plan's cases so the report can set the run's figures beside them.

use super::check::Checker;
use super::{Case, PlanError};
use crate::file::PlanFile;
use fsbench_model::published::{
    self, Claim, Judged, PointsRule, Published, Selector, StudyFigures,
};
use std::collections::BTreeMap;
use std::ops::Range;

/// The published figures and claims, checked: each names a workload of the plan, result
/// dimensions that exist, and configurations its cases have (exactly one each, but for points,
/// which add up over every configuration a label matches, and for a claim's configurations,
/// which it sets against each other pair by pair); each figure's reference is one of its
/// values; each claim has the keys of its kind (a comparison, a ranking of points, a knee).
pub(super) fn figures(
    check: &Checker<'_>,
    raw: &PlanFile,
    cases: &[Case],
) -> Result<StudyFigures, PlanError> {
    Ok(StudyFigures {
        published: published_figures(check, raw, cases)?,
        claims: claims(check, raw, cases)?,
    })
}

/// Each `[[published]]` figure: a title and a unit, its values above 0 with their lines, and
/// a reference among them.
fn published_figures(
    check: &Checker<'_>,
    raw: &PlanFile,
    cases: &[Case],
) -> Result<Vec<Published>, PlanError> {
    let mut out = Vec::new();
    for table in &raw.published {
        let p = table.get_ref();
        let fail = |(key, message): (String, String)| {
            let is_label = p.values.contains_key(&key) && key != "reference";
            let span = if is_label {
                key_in(check.text, "published", table.span(), &key, Some("values"))
            } else {
                key_in(check.text, "published", table.span(), &key, None)
            };
            let name = if is_label { "values" } else { key.as_str() };
            check.error(span, &format!("published.{name}"), message)
        };
        for (key, value) in [("title", &p.title), ("unit", &p.unit)] {
            if value.trim().is_empty() {
                return Err(fail((key.into(), "must not be empty".into())));
            }
        }
        let mut labels: Vec<(&str, bool)> = p.values.keys().map(|l| (l.as_str(), false)).collect();
        labels.push((&p.reference, false));
        common(
            cases,
            &p.source,
            &p.workload,
            &p.metric,
            &p.dims,
            p.points.as_ref(),
            &labels,
        )
        .map_err(fail)?;
        if !p.values.contains_key(&p.reference) {
            return Err(fail((
                "reference".into(),
                format!(
                    "'{}' has no value: the reference is one of the configurations in `values`",
                    p.reference
                ),
            )));
        }
        for (label, value) in &p.values {
            let (line, value) = (value.line(), value.value());
            if line == Some(0) {
                return Err(fail((
                    label.clone(),
                    format!("the line of '{label}' must be a line number from 1"),
                )));
            }
            if !(value.is_finite() && value > 0.0) {
                return Err(fail((
                    label.clone(),
                    format!(
                        "the value of '{label}' must be above 0 (got {value}): ratios are taken"
                    ),
                )));
            }
        }
        out.push(p.clone());
    }
    Ok(out)
}

/// Each `[[claims]]` claim: its text, and the keys of its kind.
fn claims(check: &Checker<'_>, raw: &PlanFile, cases: &[Case]) -> Result<Vec<Claim>, PlanError> {
    let mut out = Vec::new();
    for table in &raw.claims {
        let c = table.get_ref();
        let fail = |(key, message): (String, String)| {
            let name = if !c.config.is_empty() && key == c.config {
                "config"
            } else if !c.against.is_empty() && key == c.against {
                "against"
            } else if c.ranking.contains(&key) {
                "ranking"
            } else {
                key.as_str()
            };
            check.error(
                key_in(check.text, "claims", table.span(), name, None),
                &format!("claims.{name}"),
                message,
            )
        };
        if c.text.trim().is_empty() {
            return Err(fail(("text".into(), "must not be empty".into())));
        }
        let judged = c.judged().map_err(|(key, e)| fail((key.into(), e)))?;
        // A comparison may set several configurations against several (pair by pair, on the
        // axes neither names) or one against several (`on=disk`, `*`); a ranking names
        // configurations as points add them up; a knee is of one configuration's curve.
        let labels: Vec<(&str, bool)> = match judged {
            Judged::Compare(_) => vec![(&c.config, true), (&c.against, true)],
            Judged::Ranking => c.ranking.iter().map(|l| (l.as_str(), true)).collect(),
            Judged::Knee(_) => vec![(&c.config, false)],
        };
        common(
            cases,
            &c.source,
            &c.workload,
            &c.metric,
            &c.dims,
            c.points.as_ref(),
            &labels,
        )
        .map_err(fail)?;
        out.push(c.clone());
    }
    Ok(out)
}

/// The checks a published figure and a claim share: its source, workload, metric, dimensions,
/// points rule and the configurations its labels name (`several`: a label may match more than
/// one); a mistake as (the key as the error names it, what is wrong).
fn common(
    cases: &[Case],
    source: &str,
    workload: &str,
    metric: &str,
    dims: &BTreeMap<String, String>,
    rule: Option<&PointsRule>,
    labels: &[(&str, bool)],
) -> Result<(), (String, String)> {
    published::check_source(source).map_err(|e| ("source".to_string(), e))?;
    let mut workloads: Vec<&str> = Vec::new();
    for case in cases {
        if !workloads.contains(&case.workload.name.as_str()) {
            workloads.push(&case.workload.name);
        }
    }
    let unknown = |key: &str, name: &str| {
        (
            key.to_string(),
            format!(
                "names workload '{name}', which the plan does not have; its workloads: {}",
                workloads.join(", ")
            ),
        )
    };
    if !workloads.contains(&workload) {
        return Err(unknown("workload", workload));
    }
    if metric.trim().is_empty() {
        return Err(("metric".into(), "must name the workload's metric".into()));
    }
    for key in dims.keys() {
        published::match_dim(key).map_err(|e| ("match".to_string(), e))?;
    }
    // The workloads whose cases a label may name: points add up over the rule's others.
    let mut of: Vec<&str> = vec![workload];
    if let Some(rule) = rule {
        if metric != published::POINTS {
            return Err((
                "points".into(),
                format!(
                    "`points` says how points are given: it belongs to metric = \"{}\"",
                    published::POINTS
                ),
            ));
        }
        for other in &rule.also {
            if !workloads.contains(&other.as_str()) {
                return Err(unknown("points", other));
            }
            of.push(other);
        }
        for key in &rule.together {
            published::match_dim(key)
                .map_err(|e| ("points".to_string(), format!("points.together: {e}")))?;
        }
        rule.within_axis().map_err(|e| ("points".to_string(), e))?;
    }
    let of_workload: Vec<&Case> = cases
        .iter()
        .filter(|c| of.contains(&c.workload.name.as_str()))
        .collect();
    for &(label, several) in labels {
        let selector: Selector = label.parse().map_err(|e| (label.to_string(), e))?;
        let mut configs: Vec<String> = of_workload
            .iter()
            .filter(|c| selector.matches(&c.config))
            .map(|c| c.config_key())
            .collect();
        configs.sort();
        configs.dedup();
        let known = || {
            let mut all: Vec<String> = of_workload.iter().map(|c| c.config_key()).collect();
            all.dedup();
            all.join(", ")
        };
        if configs.is_empty() {
            return Err((
                label.to_string(),
                format!(
                    "configuration '{label}' matches no case of workload '{workload}'; its configurations: {}",
                    known()
                ),
            ));
        }
        if configs.len() > 1 && !several && metric != published::POINTS {
            return Err((
                label.to_string(),
                format!(
                    "configuration '{label}' matches {} configurations of workload '{workload}' ({}): name the one meant (mkfs=, mount=, sched=, on=, cache=)",
                    configs.len(),
                    configs.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Where `key` is written in the entry of the array of tables `array` whose header spans
/// `header` (toml gives a `[[published]]` table the span of its header; its keys, and its
/// sub-tables such as `[published.values]`, run to the next other header), from `after` when
/// given (a configuration in `values`), so an error names its line; the header otherwise.
fn key_in(
    text: &str,
    array: &str,
    header: Range<usize>,
    key: &str,
    after: Option<&str>,
) -> Range<usize> {
    let start = header.start.min(text.len());
    let rest = &text[header.end.min(text.len())..];
    let mut end = text.len();
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if offset > 0 && trimmed.starts_with('[') && !trimmed.starts_with(&format!("[{array}.")) {
            end = header.end + offset;
            break;
        }
        offset += line.len();
    }
    let body = &text[start..end];
    let found = match after {
        // A key of the table: at the start of its line.
        None => body.match_indices(key).map(|(i, _)| i).find(|&i| {
            body[..i]
                .rsplit('\n')
                .next()
                .is_some_and(|l| l.trim().is_empty())
                && body[i + key.len()..].starts_with([' ', '=', '\t'])
        }),
        Some(a) => body
            .find(a)
            .and_then(|from| body[from..].find(key).map(|i| from + i)),
    };
    match found {
        Some(i) => start + i..start + i + key.len(),
        None => header,
    }
}
