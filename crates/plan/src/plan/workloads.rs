//! The plan's `[[workloads]]`: each table read into a workload of the registry, key by key so
//! an error points at the key that is wrong, then checked as a whole under the plan's scale.

use super::check::{first_line, name_error, Checker};
use super::PlanError;
use crate::file::{PlanFile, WorkloadTable};
use crate::workload::PlannedWorkload;
use fsbench_workload::sweep::SweepSpec;
use fsbench_workload::workload::{Check, KeepsFiles};
use fsbench_workload::{Context, WorkloadError, WorkloadSettings, KINDS};
use std::ops::Range;

/// Every workload of the plan, in its order: at least one, each with a name of its own, and
/// none keeping a file where nobody could find it (`in_dir`: the plan runs in a directory).
pub(super) fn workloads(
    check: &Checker<'_>,
    raw: &PlanFile,
    scale: f64,
    in_dir: bool,
) -> Result<Vec<PlannedWorkload>, PlanError> {
    if raw.workloads.is_empty() {
        return Err(check.whole(
            "workloads",
            format!("the plan names no workload: add a [[workloads]] table with kind = \"matrix\" (or one of {})", KINDS.join(", ")),
        ));
    }
    let mut workloads: Vec<PlannedWorkload> = Vec::new();
    for table in &raw.workloads {
        let (workload, name_span) = workload(check, table, scale)?;
        if workloads.iter().any(|x| x.name == workload.name) {
            return Err(check.error(
                name_span,
                "workloads.name",
                format!(
                    "two workloads are called '{}': give each a distinct name",
                    workload.name
                ),
            ));
        }
        // A file kept on purpose outlives the run only where the user can find it: in a
        // directory, not on a filesystem fsbench removes afterwards.
        if !in_dir && workload.settings.apply(KeepsFiles) {
            let keep = table
                .iter()
                .find(|(k, _)| k.get_ref() == "keep")
                .map_or(name_span, |(_, v)| v.span());
            return Err(check.error(
                keep,
                "workloads.keep",
                "keeps a file on a filesystem fsbench removes after the run: run the plan \
                 in a directory (`dir`, or `fsbench run --dir PATH`) or drop keep",
            ));
        }
        workloads.push(workload);
    }
    Ok(workloads)
}

/// One `[[workloads]]` table: `kind` picks the settings type from the registry, `name` is the
/// plan's, every other key is a setting. Each key is read on its own first, so an error points
/// at the key that is wrong; then the settings are checked as a whole under the plan's scale.
/// Returns the workload and the span of its name (or kind).
fn workload(
    check: &Checker<'_>,
    table: &WorkloadTable,
    scale: f64,
) -> Result<(PlannedWorkload, Range<usize>), PlanError> {
    let get = |key: &str| table.iter().find(|(k, _)| k.get_ref() == key);
    let text = |key: &str| -> Result<Option<(String, Range<usize>)>, PlanError> {
        match get(key) {
            None => Ok(None),
            Some((_, v)) => match v.get_ref() {
                toml::Value::String(s) => Ok(Some((s.clone(), v.span()))),
                _ => Err(check.at(v, &format!("workloads.{key}"), "must be a string")),
            },
        }
    };
    let Some((kind, kind_span)) = text("kind")? else {
        let span = table.keys().next().map_or(0..0, |k| k.span());
        return Err(check.error(
            span,
            "workloads.kind",
            format!("every workload needs a kind: {}", KINDS.join(", ")),
        ));
    };
    let unknown_kind = || {
        check.error(
            kind_span.clone(),
            "workloads.kind",
            format!(
                "unknown workload kind '{kind}'; use one of {}",
                KINDS.join(", ")
            ),
        )
    };
    let (name, name_span) = text("name")?.unwrap_or((kind.clone(), kind_span.clone()));
    let sweep = text("sweep")?;
    if let Some(e) = name_error(&name) {
        return Err(check.error(name_span, "workloads.name", e));
    }
    let settings_of = |entries: toml::Table| {
        WorkloadSettings::from_kind(&kind, toml::Value::Table(entries)).ok_or_else(unknown_kind)
    };
    let defaults = settings_of(toml::Table::new())?
        .map_err(|e| check.error(kind_span.clone(), "workloads", first_line(&e.to_string())))?;
    let keys: Vec<String> = match serde_json::to_value(&defaults) {
        Ok(serde_json::Value::Object(map)) => map
            .into_iter()
            .map(|(k, _)| k)
            .filter(|k| k != "kind")
            .collect(),
        _ => Vec::new(),
    };
    let mut entries = toml::Table::new();
    for (key, value) in table {
        let key_text = key.get_ref().as_str();
        if key_text == "kind" || key_text == "name" || key_text == "sweep" {
            continue;
        }
        let at = format!("workloads.{key_text}");
        let one = toml::Table::from_iter([(key_text.to_string(), value.get_ref().clone())]);
        // A key the defaults leave out when unset (a shared file, a stonewall) is still one:
        // the settings know it.
        let known = keys.iter().any(|k| k == key_text)
            || match settings_of(one.clone())? {
                Ok(_) => true,
                Err(e) => !e.to_string().contains("unknown field"),
            };
        if !known {
            return Err(check.at(
                key,
                &at,
                format!(
                    "does not apply to a {kind} workload; its keys are: name, sweep, {}",
                    keys.join(", ")
                ),
            ));
        }
        if let Err(e) = settings_of(one)? {
            return Err(check.at(value, &at, first_line(&e.to_string())));
        }
        entries.insert(key_text.to_string(), value.get_ref().clone());
    }
    let settings = settings_of(entries)?
        .map_err(|e| check.error(kind_span.clone(), "workloads", first_line(&e.to_string())))?;
    // Under mpirun the plan is checked as a job's (a shared file, a first-done stonewall need
    // one); alone, as one process's.
    let ctx = Context {
        scale,
        job: fsbench_scale::launched_size()
            .map(|ranks| fsbench_workload::workload::Place { rank: 0, ranks }),
        ..Context::default()
    };
    if let Err(e) = settings.apply(Check(&ctx)) {
        let (span, key, message) = match &e {
            WorkloadError::Invalid { field, message } => (
                get(field).map_or(kind_span.clone(), |(_, v)| v.span()),
                format!("workloads.{field}"),
                message.clone(),
            ),
            other => (
                kind_span.clone(),
                "workloads".to_string(),
                other.to_string(),
            ),
        };
        return Err(check.error(span, &key, message));
    }
    let sweep = match sweep {
        None => None,
        Some((text, span)) => {
            let spec: SweepSpec = text
                .parse()
                .map_err(|e: String| check.error(span.clone(), "workloads.sweep", e))?;
            spec.points(&settings, &ctx).map_err(|e| {
                let message = match e {
                    WorkloadError::Invalid { message, .. } => message,
                    other => other.to_string(),
                };
                check.error(span.clone(), "workloads.sweep", message)
            })?;
            Some(spec)
        }
    };
    Ok((
        PlannedWorkload {
            name,
            sweep,
            settings,
        },
        name_span,
    ))
}
