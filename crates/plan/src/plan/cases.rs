//! The case matrix: every configuration of every filesystem table (mkfs set x mount set x
//! scheduler x platform x cache policy x age) x every workload, each with its stable key; the
//! include and exclude rules; and the cases of a plan run in an existing directory.

use super::check::Checker;
use super::sections::{Platform, Table};
use super::{Case, Overrides, PlanError};
use crate::file::{OptionSets, PlanFile, RuleFile};
use crate::workload::PlannedWorkload;
use fsbench_model::{CachePolicy, CaseAxis, CaseConfig, DEFAULT_PLATFORM, FRESH};
use fsbench_testbed::array::ArraySpec;
use fsbench_testbed::fs::Storage;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// The axes every filesystem's option sets multiply: what the plan's sections gave.
pub(super) struct Axes {
    pub schedulers: Vec<Option<String>>,
    pub platforms: Vec<Platform>,
    pub caches: Vec<CachePolicy>,
    pub ages: Vec<String>,
}

impl Case {
    /// A case of `config` running `workload`, keyed by its axes (numbered later).
    fn of(config: CaseConfig, workload: &PlannedWorkload) -> Case {
        let mut case = Case {
            key: String::new(),
            position: 0,
            config,
            workload: workload.clone(),
        };
        case.key = case.key_of();
        case
    }
}

/// The cases of the plan's filesystem tables, in order, every key distinct (or of a plan
/// without filesystems, each platform x cache policy x workload on the directory it runs in).
pub(super) fn cases(
    check: &Checker<'_>,
    tables: &[Table<'_>],
    axes: &Axes,
    workloads: &[PlannedWorkload],
) -> Result<Vec<Case>, PlanError> {
    if tables.is_empty() {
        return Ok(in_directory_only(axes, workloads));
    }
    let mut cases: Vec<Case> = Vec::new();
    for table in tables {
        for config in configurations(table, axes) {
            for workload in workloads {
                let case = Case::of(config.clone(), workload);
                if let Some(other) = cases.iter().find(|c| c.key == case.key) {
                    return Err(check.at(&table.file.name, "filesystems", clash(other, &case)));
                }
                cases.push(case);
            }
        }
    }
    Ok(cases)
}

/// A scheduler belongs to a block device: a filesystem in memory (tmpfs) has none.
const NO_SCHEDULER: &[Option<String>] = &[None];

/// Every configuration of one filesystem table, in the order its cases are numbered: mkfs set
/// x mount set x scheduler x platform x cache policy x age.
fn configurations(table: &Table<'_>, axes: &Axes) -> Vec<CaseConfig> {
    let sets = |given: &Option<OptionSets>| match given {
        Some(sets) => sets
            .iter()
            .map(|(name, options)| (name.get_ref().clone(), options.clone()))
            .collect(),
        None => BTreeMap::from([("default".to_string(), String::new())]),
    };
    let (mkfs_sets, mount_sets) = (
        sets(&table.file.mkfs_options),
        sets(&table.file.mount_options),
    );
    let in_memory = table.fs.capabilities().storage == Storage::Memory;
    let schedulers = if in_memory {
        NO_SCHEDULER
    } else {
        &axes.schedulers
    };
    let mut configs = Vec::new();
    for (mkfs_set, mkfs_options) in &mkfs_sets {
        for (mount_set, mount_options) in &mount_sets {
            for ((scheduler, platform, cache), age) in
                combinations(schedulers, &axes.platforms, &axes.caches)
                    .flat_map(|c| axes.ages.iter().map(move |age| (c, age)))
            {
                configs.push(CaseConfig {
                    filesystem: table.fs.name().to_string(),
                    mkfs_set: mkfs_set.clone(),
                    mkfs_options: mkfs_options.clone(),
                    mount_set: mount_set.clone(),
                    mount_options: mount_options.clone(),
                    array: table.array.as_ref().map(ArraySpec::to_string),
                    one_device_for: None,
                    scheduler: scheduler.clone(),
                    platform: platform.name.clone(),
                    image_in_ram: platform.ram && !in_memory,
                    cpu_percent: platform.cpu_percent,
                    age: age.clone(),
                    cache: *cache,
                });
            }
        }
    }
    configs
}

/// Why two cases got one id: the same filesystem's option sets listed in two tables, or names
/// that, joined with '.', spell the same id (mkfs set `a.b` with mount set `c`, and `a` with
/// `b.c`).
fn clash(first: &Case, second: &Case) -> String {
    let differ: Vec<(String, String)> = CaseAxis::ALL
        .into_iter()
        .filter(|&axis| first.value(axis) != second.value(axis))
        .map(|axis| {
            let name = axis.rule_key();
            (
                format!("{name} '{}'", first.value(axis)),
                format!("{name} '{}'", second.value(axis)),
            )
        })
        .collect();
    if differ.is_empty() {
        return format!(
            "the filesystem '{}' is listed twice with mkfs set '{}' and mount set '{}': merge its option sets into one [[filesystems]] table",
            first.config.filesystem, first.config.mkfs_set, first.config.mount_set
        );
    }
    let (a, b): (Vec<String>, Vec<String>) = differ.into_iter().unzip();
    format!(
        "two cases get the id '{}': {}, and {} (an id joins the names with '.'): rename one so the ids differ (e.g. without a '.')",
        first.key,
        a.join(" with "),
        b.join(" with ")
    )
}

/// The cases of a plan without filesystems: each platform x cache policy x workload, on a
/// directory (its configuration is set by [`in_directory`]).
fn in_directory_only(axes: &Axes, workloads: &[PlannedWorkload]) -> Vec<Case> {
    let mut cases = Vec::new();
    for (_, platform, cache) in combinations(NO_SCHEDULER, &axes.platforms, &axes.caches) {
        for workload in workloads {
            let config = CaseConfig {
                filesystem: String::new(),
                mkfs_set: String::new(),
                mkfs_options: String::new(),
                mount_set: String::new(),
                mount_options: String::new(),
                array: None,
                one_device_for: None,
                scheduler: None,
                platform: platform.name.clone(),
                image_in_ram: platform.ram,
                cpu_percent: platform.cpu_percent,
                age: FRESH.into(),
                cache: *cache,
            };
            cases.push(Case::of(config, workload));
        }
    }
    cases
}

/// Every combination of a scheduler, a platform and a cache policy, in that nesting order.
fn combinations<'a, A, B, C>(
    a: &'a [A],
    b: &'a [B],
    c: &'a [C],
) -> impl Iterator<Item = (&'a A, &'a B, &'a C)> {
    a.iter()
        .flat_map(move |x| b.iter().flat_map(move |y| c.iter().map(move |z| (x, y, z))))
}

/// The cases the plan's `[[include]]` and `[[exclude]]` rules leave: each rule names only
/// values some case has (a typo is not a silent no-op), and some case is left.
pub(super) fn rules(
    check: &Checker<'_>,
    raw: &PlanFile,
    mut cases: Vec<Case>,
) -> Result<Vec<Case>, PlanError> {
    for rule in raw.include.iter().chain(&raw.exclude) {
        check_rule(check, rule, &cases)?;
    }
    cases.retain(|c| {
        (raw.include.is_empty() || raw.include.iter().any(|r| matches(r, c)))
            && !raw.exclude.iter().any(|r| matches(r, c))
    });
    if cases.is_empty() {
        return Err(check.whole(
            "include/exclude",
            "the include and exclude rules leave no case to run",
        ));
    }
    Ok(cases)
}

/// A rule's value on one axis, if it names one.
fn rule_value(rule: &RuleFile, axis: CaseAxis) -> Option<&Spanned<String>> {
    match axis {
        CaseAxis::Filesystem => rule.filesystem.as_ref(),
        CaseAxis::MkfsSet => rule.mkfs_options.as_ref(),
        CaseAxis::MountSet => rule.mount_options.as_ref(),
        CaseAxis::Scheduler => rule.scheduler.as_ref(),
        CaseAxis::Platform => rule.platform.as_ref(),
        CaseAxis::Age => rule.age.as_ref(),
        CaseAxis::Cache => rule.cache.as_ref(),
        CaseAxis::Workload => rule.workload.as_ref(),
    }
}

fn matches(rule: &RuleFile, case: &Case) -> bool {
    CaseAxis::ALL
        .iter()
        .all(|&axis| rule_value(rule, axis).is_none_or(|v| case.value(axis) == *v.get_ref()))
}

/// A rule naming a value no case has is a typo, not a silent no-op.
fn check_rule(check: &Checker<'_>, rule: &RuleFile, cases: &[Case]) -> Result<(), PlanError> {
    for axis in CaseAxis::ALL {
        if let Some(v) = rule_value(rule, axis) {
            let key = axis.rule_key();
            let mut known: Vec<String> = cases.iter().map(|c| c.value(axis)).collect();
            known.sort();
            known.dedup();
            if !known.contains(v.get_ref()) {
                return Err(check.at(
                    v,
                    key,
                    format!(
                        "'{}' matches no case; the plan has: {}",
                        v.get_ref(),
                        known.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The configuration of an existing directory: its filesystem as mounted (`unknown` when no
/// mount is found), option sets `existing`, no scheduler, the default platform.
pub fn directory_config(dir: Option<&Path>, cache: CachePolicy) -> CaseConfig {
    let mount = dir.and_then(fsbench_measure::host::mount_of);
    CaseConfig {
        filesystem: mount
            .as_ref()
            .map_or("unknown".into(), |m| m.fs_type.clone()),
        mkfs_set: "existing".into(),
        mkfs_options: String::new(),
        mount_set: "existing".into(),
        mount_options: mount.map(|m| m.mount_options).unwrap_or_default(),
        array: None,
        one_device_for: None,
        scheduler: None,
        platform: DEFAULT_PLATFORM.into(),
        image_in_ram: false,
        cpu_percent: None,
        age: FRESH.into(),
        cache,
    }
}

/// The cases run in the existing directory `dir`: every configuration becomes the directory's
/// filesystem as mounted (sets `existing`, no scheduler), keeping the platform's CPU share and
/// the cache policy; cases that become the same are run once. What needs a filesystem fsbench
/// makes is a mistake, said at the plan's `dir` (or of `--dir`, when the command line gave it).
pub(super) fn in_directory(
    check: &Checker<'_>,
    raw: &PlanFile,
    overrides: &Overrides,
    cases: Vec<Case>,
    dir: &Path,
) -> Result<Vec<Case>, PlanError> {
    on_directory(cases, dir).map_err(|(key, e)| match &raw.dir {
        Some(own) if overrides.dir.is_none() => check.at(own, key, e),
        _ => check.flag("--dir", e),
    })
}

/// [`in_directory`]'s cases, or what needs a filesystem fsbench makes: (key, message).
fn on_directory(cases: Vec<Case>, dir: &Path) -> Result<Vec<Case>, (&'static str, String)> {
    let there = directory_config(Some(dir), CachePolicy::Warm);
    let mut kept: Vec<Case> = Vec::new();
    for mut case in cases {
        if case.config.image_in_ram {
            return Err((
                "dir",
                format!(
                    "platform '{}' puts the image in RAM, but a plan with dir makes no image: \
                     drop its `ram` or the dir",
                    case.config.platform
                ),
            ));
        }
        if case.config.age != FRESH {
            return Err((
                "dir",
                format!(
                    "age '{}' ages a filesystem fsbench makes, but a plan with dir runs on the \
                     directory's as it is: drop the aging (ages = [\"fresh\"]) or the dir",
                    case.config.age
                ),
            ));
        }
        if case.config.cache == CachePolicy::Remount {
            return Err((
                "dir",
                "cache \"remount\" remounts a filesystem fsbench made; in a directory use \
                 \"drop\" (sync and drop the page cache) or \"warm\""
                    .into(),
            ));
        }
        case.config = CaseConfig {
            platform: case.config.platform,
            cpu_percent: case.config.cpu_percent,
            cache: case.config.cache,
            ..there.clone()
        };
        case.key = case.key_of();
        if !kept.iter().any(|c| c.key == case.key) {
            kept.push(case);
        }
    }
    Ok(kept)
}
