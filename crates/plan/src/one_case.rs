//! A workload command (`fsbench matrix ...`) as a plan of one case: its target flags checked as
//! flags, then every flag a plan file's key (stored with the run, so `fsbench run --plan` of the
//! stored text runs the same case), parsed like any plan, and run as a campaign's cases are
//! (`crate::run`: its one sample in this process).

use crate::plan::{scheduler_error, Overrides, Plan, PlanError};
use fsbench_measure::series::SeriesInterval;
use fsbench_model::CachePolicy;
use fsbench_testbed::aging::AgingSpec;
use fsbench_testbed::array::ArraySpec;
use fsbench_testbed::device::SizeSetting;
use fsbench_testbed::DeviceSpec;
use fsbench_workload::sweep::SweepSpec;
use fsbench_workload::WorkloadSettings;
use std::path::Path;

/// The first line of a one-case plan's text: the command it was made from.
pub const ONE_CASE_MARK: &str = "# one-case run:";

/// What a workload command asks for.
#[derive(Debug, Clone)]
pub struct OneCase<'a> {
    pub settings: &'a WorkloadSettings,
    pub sweep: Option<&'a SweepSpec>,
    pub scale: f64,
    /// How often the phases' series and the host monitors are taken (`--interval`).
    pub interval: SeriesInterval,
    /// The directory to run in (the user's, or a temporary one); None with a target.
    pub dir: Option<&'a Path>,
    /// Where state files (the sample's ledger, the guard's), images and mount points go
    /// (`--work-dir`, FSBENCH_WORK_DIR): in a directory too, where the sample's cgroup and its
    /// own directory are on record.
    pub work_dir: &'a Path,
    /// The filesystem to prepare (`--fs`), instead of a directory.
    pub target: Option<OneTarget<'a>>,
    /// The cache policy in a directory (`--cache` without `--fs`: warm, or drop, which drops
    /// the host's page cache); a target carries its own.
    pub dir_cache: CachePolicy,
}

/// A command's `--fs` and the flags that go with it.
#[derive(Debug, Clone)]
pub struct OneTarget<'a> {
    pub fs: &'a str,
    pub mkfs_options: Option<&'a str>,
    pub mount_options: Option<&'a str>,
    pub scheduler: Option<&'a str>,
    pub cache: CachePolicy,
    pub device: DeviceSpec,
    /// Several devices as one (`--array`).
    pub array: Option<&'a str>,
    pub loop_direct_io: bool,
    pub fsck: bool,
    /// Aged first (`--age`): the plan's one aging spec, `given`.
    pub age: Option<&'a AgingSpec>,
}

/// A command's target flags as typed (`--fs` and what goes with it), before they are checked.
#[derive(Debug, Clone, Copy)]
pub struct TargetFlags<'a> {
    pub fs: &'a str,
    pub mkfs_options: Option<&'a str>,
    pub mount_options: Option<&'a str>,
    pub scheduler: Option<&'a str>,
    pub cache: &'a str,
    pub device: &'a str,
    pub destroy_data_on: Option<&'a str>,
    pub array: Option<&'a str>,
    pub loop_buffered: bool,
    pub no_fsck: bool,
    /// `--age`, read.
    pub age: Option<&'a AgingSpec>,
}

impl<'a> OneTarget<'a> {
    /// The target the flags ask for, checked as flags: a mistake names its flag (`--cache:
    /// ...`), as a plan's names its key; the plan made of them is checked again as a plan.
    pub fn from_flags(flags: &TargetFlags<'a>) -> Result<OneTarget<'a>, PlanError> {
        let fs = flags.fs;
        let Some(filesystem) = fsbench_testbed::fs::by_name(fs) else {
            return Err(flag(
                "--fs",
                format!(
                    "unknown filesystem '{fs}'; use one of {}",
                    fsbench_testbed::fs::names()
                ),
            ));
        };
        let cache = flags
            .cache
            .parse::<CachePolicy>()
            .map_err(|e| flag("--cache", e))?;
        if let Some(e) = flags.scheduler.and_then(scheduler_error) {
            return Err(flag("--scheduler", e));
        }
        let device = DeviceSpec::parse(flags.device, flags.destroy_data_on)
            .map_err(|e| flag("", e.to_string()))?;
        // The layout, checked as the flags say it (the plan of the command would name its keys).
        let array = match flags.array {
            None => None,
            Some(text) => Some(
                text.parse::<ArraySpec>()
                    .map_err(|e| flag(&format!("--array {text}"), e))?,
            ),
        };
        let real = match &device {
            DeviceSpec::Block { devices } => Some(devices.len()),
            DeviceSpec::Image { .. } => None,
        };
        fsbench_testbed::fs::check_layout(filesystem, array.as_ref(), real).map_err(|e| {
            flag(
                if array.is_some() {
                    "--array"
                } else {
                    "--device"
                },
                e,
            )
        })?;
        let sized = matches!(
            device,
            DeviceSpec::Image {
                size_bytes: Some(_)
            }
        );
        if flags.age.is_some() && !sized {
            return Err(flag(
                "--age",
                "an aged filesystem is made once, on an image, and copied for every run: give the image's size (--device image:SIZE, e.g. image:4g)",
            ));
        }
        Ok(OneTarget {
            fs,
            mkfs_options: flags.mkfs_options,
            mount_options: flags.mount_options,
            scheduler: flags.scheduler,
            cache,
            device,
            array: flags.array,
            loop_direct_io: !flags.loop_buffered,
            fsck: !flags.no_fsck,
            age: flags.age,
        })
    }
}

impl Plan {
    /// The plan of one case that a workload command runs: one repetition, no timeout (a
    /// command runs as long as its workload does), its option sets named `given` (or
    /// `default` when empty), as a campaign names them.
    pub fn one_case(one: &OneCase<'_>) -> Result<Plan, PlanError> {
        let kind = one.settings.kind();
        beyond_a_plan(one.settings)?;
        let mut workload = match toml::Value::try_from(one.settings) {
            Ok(toml::Value::Table(table)) => table,
            _ => {
                return Err(generated(format!(
                    "the {kind} settings cannot be written as a plan table"
                )))
            }
        };
        workload.insert("name".into(), kind.into());
        if let Some(sweep) = one.sweep {
            workload.insert("sweep".into(), sweep.to_string().into());
        }
        let mut plan = toml::Table::new();
        plan.insert("name".into(), kind.into());
        plan.insert("repetitions".into(), 1.into());
        plan.insert("timeout".into(), "none".into());
        if one.scale != 1.0 {
            plan.insert("scale".into(), one.scale.into());
        }
        if one.interval != SeriesInterval::Auto {
            plan.insert("interval".into(), one.interval.to_string().into());
        }
        if let Some(target) = &one.target {
            let set = |options: Option<&str>| {
                let (name, options) = match options {
                    None | Some("") => ("default", ""),
                    Some(options) => ("given", options),
                };
                toml::Table::from_iter([(name.to_string(), toml::Value::from(options))])
            };
            let mut filesystem = toml::Table::from_iter([
                ("name".to_string(), toml::Value::from(target.fs)),
                ("mkfs_options".into(), set(target.mkfs_options).into()),
                ("mount_options".into(), set(target.mount_options).into()),
            ]);
            if let Some(array) = target.array {
                filesystem.insert("array".into(), array.into());
            }
            plan.insert("filesystems".into(), vec![filesystem].into());
            if let Some(scheduler) = target.scheduler {
                plan.insert("schedulers".into(), vec![scheduler].into());
            }
            plan.insert("cache".into(), vec![target.cache.name()].into());
            if !target.fsck {
                plan.insert("fsck".into(), false.into());
            }
            if let Some(age) = target.age {
                // The spec's own text, key by key (numbers as numbers).
                let table: toml::Table = age
                    .to_string()
                    .split(',')
                    .filter_map(|pair| pair.split_once('='))
                    .map(|(key, value)| {
                        let value = value
                            .parse::<i64>()
                            .map(toml::Value::from)
                            .or_else(|_| value.parse::<f64>().map(toml::Value::from))
                            .unwrap_or_else(|_| value.into());
                        (key.to_string(), value)
                    })
                    .collect();
                plan.insert(
                    "aging".into(),
                    toml::Table::from_iter([("given".to_string(), toml::Value::from(table))])
                        .into(),
                );
                plan.insert("ages".into(), vec!["given"].into());
            }
        }
        if one.target.is_none() && one.dir_cache != CachePolicy::Warm {
            plan.insert("cache".into(), vec![one.dir_cache.name()].into());
        }
        plan.insert("workloads".into(), vec![workload].into());
        let text = format!(
            "{ONE_CASE_MARK} fsbench {kind}\n{}",
            toml::to_string(&plan).map_err(|e| generated(e.to_string()))?
        );
        let overrides = Overrides {
            dir: one.dir.map(Path::to_path_buf),
            scale: None,
            repetitions: None,
            work_dir: Some(one.work_dir.to_path_buf()),
            device: one
                .target
                .as_ref()
                .map(|t| (t.device.clone(), t.loop_direct_io, SizeSetting::Flag)),
        };
        Plan::parse_with(
            &text,
            &format!("(the plan of `fsbench {kind}`)"),
            &overrides,
        )
    }

    /// Whether this plan is a workload command's (not a campaign to resume).
    pub fn is_one_case(text: &str) -> bool {
        text.starts_with(ONE_CASE_MARK)
    }
}

/// Refuses a setting whose number a plan cannot hold (TOML's integers are signed 64-bit: a
/// `u64` flag such as `--rate-iops` or `--seed` takes more): the user's number, said with its
/// flag and plan key (a workload's flags are its keys in kebab-case), not as fsbench's fault.
fn beyond_a_plan(settings: &WorkloadSettings) -> Result<(), PlanError> {
    fn too_big(value: &serde_json::Value) -> Option<u64> {
        match value {
            serde_json::Value::Number(n) if n.as_i64().is_none() => n.as_u64(),
            serde_json::Value::Array(items) => items.iter().find_map(too_big),
            serde_json::Value::Object(map) => map.values().find_map(too_big),
            _ => None,
        }
    }
    let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(settings) else {
        return Ok(());
    };
    match fields.iter().find_map(|(key, v)| Some((key, too_big(v)?))) {
        None => Ok(()),
        Some((key, n)) => Err(PlanError {
            file: "(a workload command's plan)".into(),
            line: 0,
            column: 0,
            key: format!("--{}", key.replace('_', "-")),
            message: format!(
                "{n} is more than fsbench takes: at most {} (plan key {key})",
                i64::MAX
            ),
        }),
    }
}

/// A mistake in a command's flag `name` (line 0: the command line's, not a plan's line).
fn flag(name: &str, message: impl Into<String>) -> PlanError {
    PlanError {
        file: "(a workload command's flags)".into(),
        line: 0,
        column: 0,
        key: name.to_string(),
        message: message.into(),
    }
}

/// A one-case plan that does not parse is fsbench's mistake, not the user's: said as such.
fn generated(message: String) -> PlanError {
    PlanError {
        file: "(a workload command's plan)".into(),
        line: 0,
        column: 0,
        key: String::new(),
        message: format!("{message} (a bug in fsbench: please report it)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every workload's settings, as a command gives them, come back from the plan unchanged:
    /// one case, the workload named by its kind, one repetition, no timeout.
    #[test]
    fn every_workload_command_is_a_plan_of_one_case() {
        let dir = tempfile::tempdir().unwrap();
        for settings in WorkloadSettings::defaults() {
            // The replay has no default trace: a command names one.
            let settings = match settings {
                WorkloadSettings::Replay(replay) => {
                    WorkloadSettings::Replay(fsbench_workload::replay::ReplaySettings {
                        trace: Some("app.trace".into()),
                        ..replay
                    })
                }
                other => other,
            };
            let plan = Plan::one_case(&OneCase {
                settings: &settings,
                sweep: None,
                scale: 0.5,
                interval: SeriesInterval::Every(250_000_000),
                dir: Some(dir.path()),
                work_dir: Path::new("/var/lib/fsbench/work"),
                target: None,
                dir_cache: CachePolicy::Warm,
            })
            .unwrap_or_else(|e| panic!("{}: {e}", settings.kind()));
            assert_eq!(plan.cases.len(), 1);
            let case = &plan.cases[0];
            assert_eq!(case.workload.settings, settings);
            assert_eq!(case.workload.name, settings.kind());
            assert_eq!(plan.repetitions.min, 1);
            assert_eq!(plan.timeout_ns, None);
            assert_eq!(plan.scale, 0.5);
            assert_eq!(plan.interval, SeriesInterval::Every(250_000_000));
            assert_eq!(plan.dir.as_deref(), Some(dir.path()));
            assert!(Plan::is_one_case(&plan.text));
            // The stored text is a plan of its own (run in the same directory).
            let again = Plan::parse_with(
                &plan.text,
                "stored",
                &Overrides {
                    dir: Some(dir.path().to_path_buf()),
                    ..Overrides::default()
                },
            )
            .unwrap();
            assert_eq!(again.cases[0].key, case.key);
        }
    }

    /// A setting past what a plan holds (TOML's integers are signed 64-bit) is the user's
    /// number, refused naming its flag and plan key, not a fault of fsbench's.
    #[test]
    fn a_number_a_plan_cannot_hold_is_refused_naming_its_flag_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let io = |settings: fsbench_workload::io::IoSettings| {
            let settings = WorkloadSettings::Io(settings);
            Plan::one_case(&OneCase {
                settings: &settings,
                sweep: None,
                scale: 1.0,
                interval: SeriesInterval::Auto,
                dir: Some(dir.path()),
                work_dir: Path::new("/var/lib/fsbench/work"),
                target: None,
                dir_cache: CachePolicy::Warm,
            })
            .map(drop)
            .map_err(|e| e.to_string())
        };
        let e = io(fsbench_workload::io::IoSettings {
            rate_iops: 1 << 63,
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(
            e,
            "--rate-iops: 9223372036854775808 is more than fsbench takes: at most \
             9223372036854775807 (plan key rate_iops)"
        );
        let e = io(fsbench_workload::io::IoSettings {
            seed: Some(u64::MAX),
            ..Default::default()
        })
        .unwrap_err();
        assert!(
            e.starts_with("--seed: 18446744073709551615 is more than"),
            "{e}"
        );
        io(fsbench_workload::io::IoSettings {
            rate_iops: i64::MAX as u64,
            seed: Some(i64::MAX as u64),
            ..Default::default()
        })
        .unwrap();
    }

    #[test]
    fn a_target_names_its_option_sets_as_a_campaign_does() {
        let settings = WorkloadSettings::defaults().remove(0);
        let sweep: SweepSpec = "min_time=1ms,2ms".parse().unwrap();
        let one = |mkfs: Option<&'static str>| OneCase {
            settings: &settings,
            sweep: Some(&sweep),
            scale: 1.0,
            interval: SeriesInterval::Auto,
            dir: None,
            work_dir: Path::new("/var/lib/fsbench/work"),
            target: Some(OneTarget {
                fs: "ext4",
                mkfs_options: mkfs,
                mount_options: Some("noatime"),
                scheduler: Some("mq-deadline"),
                cache: CachePolicy::Drop,
                device: DeviceSpec::Image {
                    size_bytes: Some(2 << 30),
                },
                array: None,
                loop_direct_io: false,
                fsck: false,
                age: None,
            }),
            dir_cache: CachePolicy::Warm,
        };
        let plan = Plan::one_case(&one(None)).unwrap();
        assert_eq!(
            plan.cases[0].key,
            "ext4.default.given.mq-deadline.drop.matrix"
        );
        assert_eq!(plan.cases[0].config.mount_options, "noatime");
        assert!(!plan.fsck && !plan.loop_direct_io);
        assert_eq!(plan.size_setting, SizeSetting::Flag);
        assert_eq!(plan.work_dir, Path::new("/var/lib/fsbench/work"));
        assert_eq!(plan.cases[0].workload.sweep.as_ref(), Some(&sweep));
        let given = Plan::one_case(&one(Some("-I 256"))).unwrap();
        assert_eq!(given.cases[0].config.mkfs_set, "given");
        assert_eq!(given.cases[0].config.mkfs_options, "-I 256");
        // Aged: one case, on the aging spec `given`, which the stored text runs again.
        let age: AgingSpec = "fill=60,churn=2,sizes=4k:3/1m:1,seed=7".parse().unwrap();
        let mut aged = one(None);
        if let Some(t) = aged.target.as_mut() {
            t.age = Some(&age);
        }
        let plan = Plan::one_case(&aged).unwrap();
        assert_eq!(plan.cases.len(), 1);
        assert_eq!(
            plan.cases[0].key,
            "ext4.default.given.mq-deadline.given.drop.matrix"
        );
        assert_eq!(plan.aging_of(&plan.cases[0]), Some(&age));
        let overrides = Overrides {
            device: Some((
                DeviceSpec::Image {
                    size_bytes: Some(2 << 30),
                },
                true,
                SizeSetting::Flag,
            )),
            ..Overrides::default()
        };
        let again = Plan::parse_with(&plan.text, "stored", &overrides).unwrap();
        assert_eq!(again.cases[0].key, plan.cases[0].key);
        assert_eq!(again.aging_of(&again.cases[0]), Some(&age));
    }
}
