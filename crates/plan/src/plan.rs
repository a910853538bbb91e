//! A validated plan: the campaign's settings and its cases, each a configuration (filesystem x
//! mkfs option set x mount option set x scheduler x platform x age x cache policy) x workload,
//! with a stable key.
//!
//! Parsing goes in typed steps, as ripgrep's flags go from `LowArgs` to `HiArgs`: the file as
//! written, with its spans ([`crate::file`]); each section read on its own from it (`sections`:
//! the repetitions, the device, the platforms, the ages, the schedulers, the cache policies,
//! the filesystems; `workloads`); the cases they multiply into (`cases`: the rules, a
//! directory's cases) and the study's figures checked against those (`figures`). Parsing has
//! no side effects and asks the host nothing but, for a plan run in an existing directory,
//! which filesystem holds it (its cases are that filesystem). What this host makes of a plan —
//! a workload's file or program missing here, md arrays where the kernel has no md — is asked
//! afterwards, through `System` ([`Plan::on_host`]); whether the host can run a case is found
//! out when it runs (an `unsupported` result), not here.

mod cases;
mod check;
mod figures;
mod host;
mod sections;
mod workloads;

use crate::file::PlanFile;
use crate::workload::PlannedWorkload;
pub use cases::directory_config;
use cases::Axes;
pub use check::{name_error, scheduler_error};
use check::{position, Checker};
use fsbench_measure::series::SeriesInterval;
use fsbench_model::published::StudyFigures;
use fsbench_model::CaseAxis;
pub use fsbench_model::{CaseConfig, DEFAULT_PLATFORM, FRESH};
use fsbench_testbed::aging::AgingSpec;
use fsbench_testbed::device::SizeSetting;
use fsbench_testbed::fs;
use fsbench_testbed::target::DEFAULT_WORK_DIR;
use fsbench_testbed::DeviceSpec;
use fsbench_workload::Context;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// A plan error: where (line 0: on the command line, `key` names the flag), which key, what
/// is wrong and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub key: String,
    pub message: String,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Line 0: a mistake of the command line (`--scale`), not of a line of the file.
        if self.line > 0 {
            write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        }
        if !self.key.is_empty() {
            write!(f, "{}: ", self.key)?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for PlanError {}

/// Repetitions per case.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Repetitions {
    pub min: u32,
    pub max: u32,
    /// Adaptive: stop repeating a case once the 95 % CI half-width of every main metric is within
    /// this fraction of its mean (0.05 = 5 %).
    pub target_ci: Option<f64>,
}

/// When a campaign makes its targets anew (`remake_target`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Remake {
    /// For every sample (`true`, the default): no sample sees what another left.
    Sample,
    /// Once per configuration and round (`"configuration"`): the configuration's workloads run
    /// one after another on it, each cleaning up after itself; fsck once, after the last.
    Configuration,
    /// Once per case for the whole campaign (`false`).
    Never,
}

/// One configuration x workload, run `repetitions` times.
#[derive(Debug, Clone, Serialize)]
pub struct Case {
    /// Stable identifier: `fs.mkfs-set.mount-set.scheduler.cache.workload`.
    pub key: String,
    pub position: usize,
    pub config: CaseConfig,
    pub workload: PlannedWorkload,
}

impl Case {
    /// The stable key the case's axes make: `fs.mkfs-set.mount-set.scheduler.cache.workload`,
    /// with the platform before the cache when the plan names platforms, and the age before
    /// the cache when the filesystem is aged (so a plan without aging keeps its keys).
    pub fn key_of(&self) -> String {
        CaseAxis::ALL
            .into_iter()
            .filter(|&axis| axis != CaseAxis::Platform || self.config.platform != DEFAULT_PLATFORM)
            .filter(|&axis| axis != CaseAxis::Age || self.config.age != FRESH)
            .map(|axis| self.value(axis))
            .collect::<Vec<_>>()
            .join(".")
    }

    /// The key of the case's configuration: its key without the workload (the cases that
    /// share one target when targets are made per configuration).
    pub fn config_key(&self) -> String {
        self.key
            .rsplit_once('.')
            .map_or(self.key.clone(), |(config, _)| config.to_string())
    }

    /// The case's value on one axis (the scheduler's is `default` when the case sets none).
    pub fn value(&self, axis: CaseAxis) -> String {
        self.config
            .value(axis)
            .unwrap_or_else(|| self.workload.name.clone())
    }
}

/// The largest plan file fsbench reads (`--plan`): plans are a few KiB; anything larger (or not
/// a regular file: `/dev/zero`, a FIFO) is refused before it is read.
pub const MAX_PLAN_BYTES: u64 = 1 << 20;

/// A validated plan.
#[derive(Debug, Clone)]
pub struct Plan {
    pub name: String,
    /// One line saying what the plan measures (empty when it has none).
    pub description: String,
    /// What the reader of its results must know, one line each (`notes`).
    pub notes: Vec<String>,
    /// The plan's source text (stored with the run, so `--resume` rebuilds the same cases).
    pub text: String,
    pub repetitions: Repetitions,
    /// How long a workload may run (None: as long as it takes, `timeout = "none"`).
    pub timeout_ns: Option<u64>,
    pub remake: Remake,
    pub work_dir: PathBuf,
    pub device: DeviceSpec,
    pub loop_direct_io: bool,
    /// The read-only filesystem check after each target (`fsck = false` skips it).
    pub fsck: bool,
    /// Where the image's size is set, for size advice: the plan's `[device]`, or a workload
    /// command's `--device` for its one-case plan.
    pub size_setting: SizeSetting,
    /// Sizes and times shrunk by this factor (1: as written); see `scale` in docs/plans.md.
    pub scale: f64,
    /// An existing directory the workloads run in (no filesystem is made); see `dir`.
    pub dir: Option<PathBuf>,
    /// How often phases' series and the host monitors are taken (`interval`).
    pub interval: SeriesInterval,
    /// Extra attempts of a sample the host disturbed (`repeat_disturbed`).
    pub repeat_disturbed: u32,
    /// The plan's aging specs by name (`[aging.NAME]`).
    pub agings: BTreeMap<String, AgingSpec>,
    pub cases: Vec<Case>,
    /// The study's published figures and claims (`[[published]]`, `[[claims]]`), each checked
    /// against the cases: the report sets the run's figures beside them.
    pub figures: StudyFigures,
    /// Every workload of the plan, in its order (before the include and exclude rules).
    pub workloads: Vec<PlannedWorkload>,
    /// What becomes of the cases on md arrays where the kernel has no md ([`Plan::on_host`]).
    pub without_md: WithoutMd,
}

/// What becomes of the cases on md arrays where the kernel has no md (`[device] without_md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithoutMd {
    /// They end unsupported, saying why (the default).
    Unsupported,
    /// Each runs on one image of the array's total size (`"one-device"`).
    OneDevice,
}

/// What the command line sets over a plan's own keys (`fsbench run --dir`, `--scale`,
/// `--work-dir`): applied to the parsed plan before it is validated, so errors still name the
/// plan's lines; stored with the run beside the plan's text, so `--resume` rebuilds the same
/// cases.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Overrides {
    /// An existing directory to run in, over the plan's `dir` (an absolute path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    /// The scale, over the plan's `scale` (0 < scale <= 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// The repetitions of every case, over the plan's `repetitions` (1..=1000); adaptive
    /// repetitions stop at no fewer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetitions: Option<u32>,
    /// Where images, mount points and state files go, over the plan's `work_dir`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<PathBuf>,
    /// A workload command's device (`--device`, `--destroy-data-on`, `--loop-buffered`) over
    /// the plan's `[device]`: the spec, direct I/O on the backing file, and where its size is
    /// set (for advice). Not stored: a command's plan is not resumed.
    #[serde(skip)]
    pub device: Option<(DeviceSpec, bool, SizeSetting)>,
}

impl Overrides {
    /// Nothing to store with the run.
    pub fn is_empty(&self) -> bool {
        self.dir.is_none()
            && self.scale.is_none()
            && self.work_dir.is_none()
            && self.repetitions.is_none()
    }
}

impl Plan {
    /// Parses and validates a plan; `file` names it in errors. No side effects.
    pub fn parse(text: &str, file: &str) -> Result<Plan, PlanError> {
        Plan::parse_with(text, file, &Overrides::default())
    }

    /// As [`Plan::parse`], with the command line's `overrides` over the plan's keys: errors
    /// name the lines of `text` as written (an override's own mistake names its flag). The
    /// sections are read in the order their mistakes are said.
    pub fn parse_with(text: &str, file: &str, overrides: &Overrides) -> Result<Plan, PlanError> {
        let check = Checker { file, text };
        let raw: PlanFile = toml::from_str(text).map_err(|e| {
            let (line, column) = e.span().map_or((1, 1), |s| position(text, s));
            PlanError {
                file: file.to_string(),
                line,
                column,
                key: String::new(),
                message: e.message().trim().to_string(),
            }
        })?;
        let name = raw.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(check.at(&raw.name, "name", "must not be empty"));
        }
        let repetitions = sections::repetitions(&check, &raw, overrides)?;
        let timeout_ns = sections::timeout(&check, &raw)?;
        let scale = sections::scale(&check, &raw, overrides)?;
        let plan_device = sections::device(&check, &raw)?;
        let (description, notes) = sections::words(&check, &raw)?;
        let remake = sections::remake(&check, &raw)?;
        let platforms = sections::platforms(&check, &raw, &plan_device.0)?;
        let (agings, ages) = sections::ages(&check, &raw)?;
        let axes = Axes {
            schedulers: sections::schedulers(&check, &raw)?,
            platforms,
            caches: sections::caches(&check, &raw)?,
            ages,
        };
        // (A workload command's device is its flags', set over the plan's below.)
        let real_devices = match overrides
            .device
            .as_ref()
            .map_or(&plan_device.0, |(d, ..)| d)
        {
            DeviceSpec::Block { devices } => Some(devices.len()),
            DeviceSpec::Image { .. } => None,
        };
        let tables = sections::filesystems(&check, &raw, overrides, real_devices)?;
        let (device, loop_direct_io, size_setting) =
            sections::sized_device(&check, &raw, plan_device, &tables, scale, overrides)?;
        sections::aged_image(&check, &raw, overrides, &axes.ages, &device, size_setting)?;
        let in_dir = overrides.dir.is_some() || raw.dir.is_some();
        let workloads = workloads::workloads(&check, &raw, scale, in_dir)?;
        let cases = cases::cases(&check, &tables, &axes, &workloads)?;
        let mut cases = cases::rules(&check, &raw, cases)?;
        // The command line's directory runs the plan there, whatever the plan says.
        let dir = sections::dir(&check, &raw, overrides)?;
        if let Some(dir) = &dir {
            cases = cases::in_directory(&check, &raw, overrides, cases, dir)?;
        }
        for (i, case) in cases.iter_mut().enumerate() {
            case.position = i;
        }
        let figures = figures::figures(&check, &raw, &cases)?;
        let interval = sections::interval(&check, &raw)?;
        let repeat_disturbed = sections::repeat_disturbed(&check, &raw)?;
        let without_md = sections::without_md(&check, &raw, &device)?;
        Ok(Plan {
            name,
            description,
            notes,
            text: text.to_string(),
            repetitions,
            timeout_ns,
            remake,
            work_dir: overrides.work_dir.clone().unwrap_or_else(|| {
                raw.work_dir
                    .map_or_else(|| PathBuf::from(DEFAULT_WORK_DIR), PathBuf::from)
            }),
            device,
            loop_direct_io,
            fsck: raw.fsck.unwrap_or(true),
            size_setting,
            scale,
            dir,
            interval,
            repeat_disturbed,
            agings,
            cases,
            figures,
            workloads,
            without_md,
        })
    }

    /// A rough duration of the whole campaign at its minimum repetitions.
    pub fn estimate_ns(&self) -> u64 {
        self.cases
            .iter()
            .map(|c| self.case_estimate_ns(c))
            .sum::<u64>()
            * self.repetitions.min as u64
    }

    /// A rough duration of one repetition of a case at the plan's scale: its workload, the
    /// child's start, and making, checking and taking down its target (its share of that when
    /// the target serves several samples).
    pub fn case_estimate_ns(&self, case: &Case) -> u64 {
        // An aged case: its image aged once for every case and repetition that shares it
        // (about 200 MB/s of writes, churn included) and copied for each target (400 MB/s).
        let (aging, copy) = match (self.aging_of(case), &self.device) {
            (
                Some(spec),
                DeviceSpec::Image {
                    size_bytes: Some(bytes),
                },
            ) => {
                let data = *bytes as f64 * spec.fill_percent / 100.0;
                let written = data * (1.0 + f64::from(spec.churn) * 2.0 / 3.0);
                let sharing = self
                    .cases
                    .iter()
                    .filter(|c| {
                        c.config.filesystem == case.config.filesystem
                            && c.config.mkfs_set == case.config.mkfs_set
                            && c.config.age == case.config.age
                    })
                    .count() as f64
                    * f64::from(self.repetitions.min.max(1));
                (
                    (written / 200e6 * 1e9 / sharing) as u64,
                    (data / 400e6 * 1e9) as u64,
                )
            }
            _ => (0, 0),
        };
        let target = fs::by_name(&case.config.filesystem)
            .map_or(2_000_000_000, |f| f.capabilities().prepare_estimate_ns)
            + 1_000_000_000
            + copy;
        let share = match self.remake {
            // In a directory nothing is made.
            _ if self.dir.is_some() => 0,
            Remake::Sample => target,
            Remake::Configuration => {
                let key = case.config_key();
                let sharing = self.cases.iter().filter(|c| c.config_key() == key).count();
                target / sharing.max(1) as u64
            }
            Remake::Never => target / self.repetitions.min.max(1) as u64,
        };
        share + aging + case.workload.estimate_ns(&self.context(case)) + 200_000_000
    }

    /// What a case's workload is given besides its settings: the plan's scale, the case's cache
    /// policy.
    pub fn context(&self, case: &Case) -> Context {
        Context {
            scale: self.scale,
            cache: case.config.cache,
            // A target kept for the next sample must not fill up with what each left; a
            // directory is the user's.
            disposable: self.dir.is_none() && self.remake == Remake::Sample,
            job: None,
            interval: self.interval,
        }
    }

    /// The aging spec of a case's filesystem (None: fresh).
    pub fn aging_of(&self, case: &Case) -> Option<&AgingSpec> {
        self.agings.get(&case.config.age)
    }

    /// Samples the campaign takes at its minimum repetitions.
    pub fn sample_count(&self) -> usize {
        self.cases.len() * self.repetitions.min as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsbench_workload::workload::KeepsFiles;
    use fsbench_workload::{WorkloadSettings, KINDS};
    use std::path::Path;

    const PLAN: &str = r#"
name = "two-by-two"
repetitions = 2
timeout = "5m"
schedulers = ["mq-deadline"]

[device]
image = "512m"

[[filesystems]]
name = "ext4"
mount_options = { default = "", noatime = "noatime" }

[[filesystems]]
name = "btrfs"
mount_options = { default = "", noatime = "noatime" }

[[workloads]]
kind = "matrix"
name = "small"
tests = ["write", "read"]
file_sizes = "64k..256k"
record_sizes = "64k"
min_time = "1ms"
"#;

    /// `dir` (what `fsbench run --dir` writes): every configuration is the directory's
    /// filesystem, so the plan's four become one case per workload; a plan without
    /// filesystems needs it; what needs a filesystem fsbench makes is refused.
    #[test]
    fn a_plan_in_a_directory_runs_each_workload_once_on_its_filesystem() {
        let dir = std::env::temp_dir();
        let in_dir = |dir: &Path| Overrides {
            dir: Some(dir.to_path_buf()),
            ..Overrides::default()
        };
        let there = Plan::parse_with(PLAN, "p.toml", &in_dir(&dir)).unwrap();
        assert_eq!(there.text, PLAN, "the plan's text is kept as written");
        assert_eq!(there.dir.as_deref(), Some(dir.as_path()));
        let fs = fsbench_measure::host::mount_of(&dir).unwrap().fs_type;
        let keys: Vec<&str> = there.cases.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(keys, [format!("{fs}.existing.existing.default.warm.small")]);
        assert_eq!(there.cases[0].config.scheduler, None);
        assert!(
            !there.context(&there.cases[0]).disposable,
            "the directory is the user's"
        );
        // The stored text and overrides run there again (resume).
        let overrides: Overrides =
            serde_json::from_str(&serde_json::to_string(&in_dir(&dir)).unwrap()).unwrap();
        let again = Plan::parse_with(&there.text, "p.toml", &overrides).unwrap();
        assert_eq!(again.cases[0].key, there.cases[0].key);
        // The command line's directory is the one the plan runs in, over the plan's own.
        let own = format!("dir = \"/elsewhere\"\n{PLAN}");
        let over = Plan::parse_with(&own, "p.toml", &in_dir(&dir)).unwrap();
        assert_eq!(over.dir.as_deref(), Some(dir.as_path()));
        let e = Plan::parse_with(PLAN, "p.toml", &in_dir(Path::new("relative")))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--dir: relative must be an absolute path"),
            "{e}"
        );
        // Errors name the lines as written.
        let e = Plan::parse_with(&PLAN.replace("\"5m\"", "\"soon\""), "p.toml", &in_dir(&dir))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("p.toml:4:"), "{e}");
        let e = error_of(&format!("dir = \"relative\"\n{PLAN}"));
        assert!(e.contains("dir: must be an absolute path"), "{e}");

        let workloads_only = "name = \"w\"\ncache = [\"warm\", \"drop\"]\n[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\n";
        let e = error_of(workloads_only);
        assert!(e.contains("fsbench run --dir PATH"), "{e}");
        let text = format!("dir = {:?}\n{workloads_only}", dir.display().to_string());
        let plan = Plan::parse(&text, "w.toml").unwrap();
        let keys: Vec<&str> = plan.cases.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                format!("{fs}.existing.existing.default.warm.sleep"),
                format!("{fs}.existing.existing.default.drop.sleep")
            ]
        );
        let e = error_of(&text.replace("\"drop\"", "\"remount\""));
        assert!(e.contains("w.toml:1:") || e.contains("bad.toml:1:"), "{e}");
        assert!(e.contains("remount") && e.contains("drop"), "{e}");
        let e = error_of(&format!("{text}[platforms.ram]\nram = true\n"));
        assert!(e.contains("puts the image in RAM"), "{e}");
    }

    #[test]
    fn expands_the_matrix_into_cases_with_stable_keys() {
        let plan = Plan::parse(PLAN, "p.toml").unwrap();
        let keys: Vec<&str> = plan.cases.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "ext4.default.default.mq-deadline.warm.small",
                "ext4.default.noatime.mq-deadline.warm.small",
                "btrfs.default.default.mq-deadline.warm.small",
                "btrfs.default.noatime.mq-deadline.warm.small",
            ]
        );
        assert_eq!(
            plan.repetitions,
            Repetitions {
                min: 2,
                max: 2,
                target_ci: None
            }
        );
        assert_eq!(plan.timeout_ns, Some(300_000_000_000));
        assert_eq!(
            plan.device,
            DeviceSpec::Image {
                size_bytes: Some(512 << 20)
            }
        );
        assert_eq!(plan.sample_count(), 8);
        assert!(plan.estimate_ns() > 0);
        // The same text gives the same keys (resume depends on it).
        let again = Plan::parse(PLAN, "p.toml").unwrap();
        assert_eq!(
            again.cases.iter().map(|c| &c.key).collect::<Vec<_>>(),
            plan.cases.iter().map(|c| &c.key).collect::<Vec<_>>()
        );
    }

    #[test]
    fn include_and_exclude_rules_filter_cases() {
        let text =
            format!("{PLAN}\n[[exclude]]\nfilesystem = \"btrfs\"\nmount_options = \"noatime\"\n");
        let plan = Plan::parse(&text, "p.toml").unwrap();
        assert_eq!(plan.cases.len(), 3);
        assert!(!plan
            .cases
            .iter()
            .any(|c| c.key.starts_with("btrfs.default.noatime")));
        let text = format!("{PLAN}\n[[include]]\nfilesystem = \"ext4\"\n");
        assert_eq!(Plan::parse(&text, "p.toml").unwrap().cases.len(), 2);
        let text = format!("{PLAN}\n[[exclude]]\nfilesystem = \"ext5\"\n");
        let e = Plan::parse(&text, "p.toml").unwrap_err().to_string();
        assert!(
            e.contains("'ext5' matches no case; the plan has: btrfs, ext4"),
            "{e}"
        );
    }

    fn error_of(text: &str) -> String {
        Plan::parse(text, "bad.toml").unwrap_err().to_string()
    }

    /// A plan's notes, then once each what this host makes of its workloads (dbench's file
    /// asked for where it is not installed), each one line.
    #[test]
    fn notes_are_the_plan_s_and_then_the_host_s_once_each() {
        let text = format!(
            "notes = [\"one image, not the study's RAID 0\"]\n{PLAN}\n[[workloads]]\nkind = \"clients\"\nname = \"a\"\nloadfile = \"dbench\"\n[[workloads]]\nkind = \"clients\"\nname = \"b\"\nloadfile = \"dbench\"\n"
        );
        let plan = Plan::parse(&text, "p.toml").unwrap();
        // Parsing asks the host nothing: the plan's own notes only.
        assert_eq!(plan.notes, ["one image, not the study's RAID 0"]);
        let plan = plan.on_host(&fsbench_testbed::RealSystem);
        assert_eq!(plan.notes[0], "one image, not the study's RAID 0");
        let installed = fsbench_workload::clients::DBENCH_LOADFILES
            .iter()
            .any(|p| Path::new(p).is_file());
        // Where dbench's client.txt is missing, one note for both workloads.
        assert_eq!(
            plan.notes.len(),
            if installed { 1 } else { 2 },
            "{:?}",
            plan.notes
        );
        let e = error_of(&format!("notes = [\"\"]\n{PLAN}"));
        assert!(e.contains("notes: each note is one line of text"), "{e}");
    }

    #[test]
    fn two_cases_with_one_id_are_named_for_what_they_are() {
        let sleep = "[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\n";
        // The same filesystem's set in two tables.
        let e = error_of(&format!(
            "name = \"x\"\n[[filesystems]]\nname = \"ext4\"\n[[filesystems]]\nname = \"ext4\"\n{sleep}"
        ));
        assert!(
            e.starts_with("bad.toml:5:8: filesystems: the filesystem 'ext4' is listed twice"),
            "{e}"
        );
    }

    /// Every name a plan gives — option sets, platforms, aging specs, schedulers, workloads —
    /// is part of its cases' keys (joined by dots) and of the labels shown; one that is empty,
    /// a path (`/`, `..`), holds a dot (two cases could get one key), a NUL, a control
    /// character or a space is refused where it is written, saying what a name may contain.
    /// (Before: `/`, `..`, empty and NUL set names were accepted.)
    #[test]
    fn a_name_is_letters_digits_dashes_and_underscores() {
        let fs = "name = \"x\"\n[[filesystems]]\nname = \"ext4\"\n";
        let sleep = "[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\n";
        let what = "may contain only letters, digits, '-' and '_'";
        for bad in [
            "/",
            "..",
            "",
            "a\\u0000b",
            "a/b",
            "a.b",
            "a b",
            "\\u001b[31m",
        ] {
            let shown = format!(
                "{:?}",
                toml::from_str::<toml::Value>(&format!("v = \"{bad}\"")).unwrap()["v"]
                    .as_str()
                    .unwrap()
            );
            for (text, at) in [
                (format!("{fs}mkfs_options = {{ \"{bad}\" = \"-I 256\" }}\n{sleep}"), "bad.toml:4:18: filesystems.mkfs_options: "),
                (format!("{fs}mount_options = {{ default = \"\", \"{bad}\" = \"noatime\" }}\n{sleep}"), "bad.toml:4:33: filesystems.mount_options: "),
                (format!("name = \"x\"\n[platforms.\"{bad}\"]\nram = true\n[[filesystems]]\nname = \"ext4\"\n{sleep}"), "bad.toml:2:12: platforms: "),
                (format!("name = \"x\"\n[device]\nimage = \"4g\"\n[aging.\"{bad}\"]\nfill = 50\n[[filesystems]]\nname = \"ext4\"\n{sleep}"), "bad.toml:4:8: aging: "),
                (format!("name = \"x\"\nschedulers = [\"{bad}\"]\n[[filesystems]]\nname = \"ext4\"\n{sleep}"), "bad.toml:2:15: schedulers: "),
                (format!("{fs}{sleep}name = \"{bad}\"\n"), "bad.toml:7:8: workloads.name: "),
            ] {
                let e = error_of(&text);
                assert!(
                    e.starts_with(&format!("{at}{shown} is not a name: ")) && e.contains(what),
                    "{bad:?}: {e}"
                );
            }
        }
        // Letters of any script, digits, '-' and '_' are names.
        let plan = Plan::parse(
            &format!("{fs}mkfs_options = {{ big-inodes_2 = \"-I 512\", \"größer\" = \"-I 1024\" }}\n{sleep}"),
            "p.toml",
        )
        .unwrap();
        assert_eq!(plan.cases.len(), 2);
    }

    #[test]
    fn errors_name_file_line_key_and_what_is_allowed() {
        let e = error_of("name = \"x\"\nrepetitions = 3\n[[filesystems]\n");
        assert!(e.starts_with("bad.toml:3:"), "{e}");

        let e = error_of("name = \"x\"\ncolour = \"blue\"\n");
        assert!(
            e.starts_with("bad.toml:2:1: ") && e.contains("unknown field `colour`"),
            "{e}"
        );

        let e = error_of("name = \"x\"\n[[filesystems]]\nname = \"ext5\"\n[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\n");
        assert!(
            e.starts_with(
                "bad.toml:3:8: filesystems.name: unknown filesystem 'ext5'; use one of ext2"
            ),
            "{e}"
        );

        let e = error_of("name = \"x\"\n[[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"matrix\"\nfile_sizes = \"3k\"\n");
        assert!(
            e.starts_with("bad.toml:6:14: workloads.file_sizes: ")
                || e.starts_with("bad.toml:6:14: workloads: "),
            "{e}"
        );
        assert!(e.contains("not a power of two"), "{e}");

        let e = error_of("name = \"x\"\n[device]\nimage = \"lots\"\n[[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\n");
        assert!(
            e.starts_with("bad.toml:3:9: device.image: 'lots' is not a size"),
            "{e}"
        );

        let e = error_of("name = \"x\"\n[[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\nfile_sizes = \"4k\"\n");
        assert!(
            e.contains("workloads.file_sizes: does not apply to a sleep workload"),
            "{e}"
        );

        let e = error_of("name = \"x\"\ncache = [\"lukewarm\"]\n[[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\n");
        assert!(
            e.starts_with("bad.toml:2:10: cache: unknown cache policy 'lukewarm'"),
            "{e}"
        );

        let e = error_of("name = \"x\"\n[[filesystems]]\nname = \"ext4\"\n");
        assert!(e.contains("names no workload"), "{e}");

        let e = error_of("name = \"x\"\nrepetitions = 0\n");
        assert!(
            e.starts_with("bad.toml:2:15: repetitions: must be between 1 and 1000"),
            "{e}"
        );
    }

    #[test]
    fn every_matrix_flag_is_a_plan_key_with_the_same_checks() {
        let base =
            "name = \"x\"\n[[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"matrix\"\n";
        let plan = Plan::parse(
            &format!("{base}stride = 3\nmix_read_percent = 70\nseed = 9\npurge_cpu_cache = true\npurge_size = \"1m\"\ndata = \"compressible:50\"\n"),
            "p.toml",
        )
        .unwrap();
        let WorkloadSettings::Matrix(m) = &plan.cases[0].workload.settings else {
            panic!("a matrix")
        };
        assert_eq!((m.stride, m.mix_read_percent, m.seed), (3, 70, Some(9)));
        assert!(m.purge_cpu_cache);
        let e = error_of(&format!("{base}mix_read_percent = 101\n"));
        assert!(
            e.starts_with("bad.toml:6:20: workloads.mix_read_percent: must be between 0 and 100"),
            "{e}"
        );
        let e = error_of(&format!("{base}min_time = \"fast\"\n"));
        assert!(
            e.starts_with("bad.toml:6:12: workloads.min_time: 'fast' is not a duration"),
            "{e}"
        );
        let e = error_of(&format!("{base}tests = [\"write\", \"fsync\"]\n"));
        assert!(e.contains("workloads.tests: unknown test 'fsync'"), "{e}");
        // A kept file belongs in a directory, not on a filesystem fsbench removes.
        let e = error_of(&format!("{base}keep = true\n"));
        assert!(
            e.starts_with(
                "bad.toml:6:8: workloads.keep: keeps a file on a filesystem fsbench removes"
            ),
            "{e}"
        );
        let in_dir = format!("dir = \"/tmp\"\n{base}keep = true\n");
        let kept = Plan::parse(&in_dir, "p.toml").unwrap();
        assert!(kept.cases[0].workload.settings.apply(KeepsFiles));
        // Keys left out of the defaults when unset are keys all the same.
        let plan = Plan::parse(&format!("{base}stonewall = \"2s\"\n"), "p.toml").unwrap();
        let json = serde_json::to_value(&plan.cases[0].workload).unwrap();
        assert_eq!(json["stonewall"], "2s", "{json}");
        // (Under mpirun a plan is checked as a job's, and this one parses.)
        if fsbench_scale::launched_size().is_none() {
            let e = error_of(&format!("{base}shared_file = true\n"));
            assert!(
                e.contains("workloads.shared_file: one file shared by the ranks of a job"),
                "{e}"
            );
        }
        let e = error_of(
            "name = \"x\"\n[[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"fio\"\n",
        );
        assert!(
            e.starts_with(&format!(
                "bad.toml:5:8: workloads.kind: unknown workload kind 'fio'; use one of {}",
                KINDS.join(", ")
            )),
            "{e}"
        );
    }

    #[test]
    fn scale_shrinks_workloads_and_images_whether_the_plan_or_the_command_line_sets_it() {
        let plan = Plan::parse(PLAN, "p.toml").unwrap();
        assert_eq!(plan.scale, 1.0);
        let at = |scale: f64| Overrides {
            scale: Some(scale),
            ..Overrides::default()
        };
        let scaled = Plan::parse_with(PLAN, "p.toml", &at(0.25)).unwrap();
        assert_eq!(scaled.scale, 0.25);
        assert_eq!(scaled.text, PLAN, "the plan's text is kept as written");
        // The plan's own key says the same.
        let own = Plan::parse(&format!("scale = 0.25\n{PLAN}"), "p.toml").unwrap();
        assert_eq!(own.scale, 0.25);
        assert_eq!(own.device, scaled.device);
        // The command line's scale is the one the plan runs at, over the plan's own (no
        // duplicate key).
        let over = Plan::parse_with(&format!("scale = 0.5\n{PLAN}"), "p.toml", &at(0.25)).unwrap();
        assert_eq!(over.scale, 0.25);
        // An image shrinks, but never below 4 GiB (or the size asked for, if smaller).
        assert_eq!(
            scaled.device,
            DeviceSpec::Image {
                size_bytes: Some(512 << 20)
            }
        );
        let big = PLAN.replace("image = \"512m\"", "image = \"8g\"");
        for (factor, gib) in [(0.75, 6), (0.01, 4)] {
            assert_eq!(
                Plan::parse_with(&big, "p", &at(factor)).unwrap().device,
                DeviceSpec::Image {
                    size_bytes: Some(gib << 30)
                }
            );
        }
        let WorkloadSettings::Matrix(m) = &scaled.cases[0].workload.settings else {
            panic!("a matrix")
        };
        let ctx = Context {
            scale: scaled.scale,
            ..Context::default()
        };
        let cells = m.plan(&ctx).unwrap();
        // 64k..256k x 0.25 -> 64k (the smallest record keeps its cell).
        assert_eq!(cells.file_sizes_bytes, [64 << 10]);
        // The same keys: a scaled run is the same campaign, smaller.
        assert_eq!(
            scaled.cases.iter().map(|c| &c.key).collect::<Vec<_>>(),
            plan.cases.iter().map(|c| &c.key).collect::<Vec<_>>()
        );
        let e = error_of(&format!("scale = 2.0\n{PLAN}"));
        assert!(e.starts_with("bad.toml:1:9: scale: must be above 0"), "{e}");
        let e = Plan::parse_with(PLAN, "p.toml", &at(2.0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("--scale: must be above 0 and at most 1"), "{e}");
    }

    /// An array belongs to its filesystem's table: that table's cases carry it (their keys are
    /// as without it, so two tables tell a single btrfs from a RAID 0 by their set names), and
    /// what the filesystem or the device cannot take is refused at the key.
    #[test]
    fn an_md_array_runs_on_one_device_where_the_host_has_no_md_when_the_plan_says_so() {
        let sleep = "[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\n";
        let plan = |without: &str| {
            format!(
                "name = \"a\"\n[device]\nimage = \"1g\"\nwithout_md = \"{without}\"\n[[filesystems]]\nname = \"ext4\"\narray = \"md-raid0:2,chunk=64k\"\n[[filesystems]]\nname = \"btrfs\"\narray = \"raid0:2\"\n{sleep}"
            )
        };
        // A host without md (no /proc/mdstat, no mdadm) and one with it, as `System` answers.
        let no_md = fsbench_testbed::RecordingSystem::new();
        no_md.hide_program("mdadm");
        let with_md = fsbench_testbed::RecordingSystem::new();
        with_md.set_file("/proc/mdstat", "Personalities : [raid0]\n");
        for (host, md, without, one_device) in [
            (&no_md, false, "one-device", true),
            (&no_md, false, "unsupported", false),
            (&with_md, true, "one-device", false),
            (&with_md, true, "unsupported", false),
        ] {
            let parsed = Plan::parse(&plan(without), "a.toml").unwrap();
            // Parsing asks the host nothing: the arrays as asked, until the host is asked.
            assert_eq!(
                parsed.cases[0].config.array.as_deref(),
                Some("md-raid0:2,chunk=64k")
            );
            let parsed = parsed.on_host(host);
            let md_note = parsed
                .notes
                .iter()
                .any(|n| n.starts_with("md RAID cannot be made"));
            assert_eq!(md_note, !md && !one_device, "{:?}", parsed.notes);
            let [ext4, btrfs] = parsed.cases.as_slice() else {
                panic!("{:?}", parsed.cases);
            };
            assert_eq!(btrfs.config.array.as_deref(), Some("raid0:2"));
            assert_eq!(btrfs.config.one_device_for, None);
            if one_device {
                assert_eq!(ext4.config.array, None);
                assert_eq!(
                    ext4.config.one_device_for.as_deref(),
                    Some("md-raid0:2,chunk=64k")
                );
                assert!(parsed.notes.iter().any(|n| n.starts_with(
                    "no md here: one device, not RAID 0: the cases on md arrays (md-raid0:2,chunk=64k) run on one image of the array's total size"
                )), "{:?}", parsed.notes);
            } else {
                assert_eq!(ext4.config.array.as_deref(), Some("md-raid0:2,chunk=64k"));
                assert_eq!(ext4.config.one_device_for, None);
            }
        }
        let e = error_of(&plan("one device"));
        assert!(
            e.starts_with("bad.toml:4:14: device.without_md: 'one device': use \"one-device\""),
            "{e}"
        );
        let e = error_of(&plan("one-device").replace(
            "image = \"1g\"",
            "block = \"/dev/vdx,/dev/vdy\"\ndestroy_data_on = \"/dev/vdx,/dev/vdy\"",
        ));
        assert!(
            e.contains("device.without_md: \"one-device\" runs an md array's cases on one image"),
            "{e}"
        );
    }

    #[test]
    fn an_array_is_its_filesystem_tables_and_checked_at_its_key() {
        let sleep = "[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\n";
        let text = format!(
            "name = \"a\"\n[[filesystems]]\nname = \"btrfs\"\nmkfs_options = {{ single = \"\" }}\n[[filesystems]]\nname = \"btrfs\"\nmkfs_options = {{ raid0 = \"\" }}\narray = \"raid0:2\"\n[[filesystems]]\nname = \"ext4\"\narray = \"md-raid0:8,chunk=64k\"\n{sleep}"
        );
        let plan = Plan::parse(&text, "a.toml").unwrap();
        let arrays: Vec<(&str, Option<&str>)> = plan
            .cases
            .iter()
            .map(|c| (c.key.as_str(), c.config.array.as_deref()))
            .collect();
        assert_eq!(
            arrays,
            [
                ("btrfs.single.default.default.warm.sleep", None),
                ("btrfs.raid0.default.default.warm.sleep", Some("raid0:2")),
                (
                    "ext4.default.default.default.warm.sleep",
                    Some("md-raid0:8,chunk=64k")
                ),
            ]
        );
        let e = error_of(&format!(
            "name = \"a\"\n[[filesystems]]\nname = \"ext4\"\narray = \"raid0:2\"\n{sleep}"
        ));
        assert!(
            e.starts_with("bad.toml:4:9: filesystems.array: ext4 cannot lay itself over several devices: put md under it (md-raid0:2)"),
            "{e}"
        );
        let e = error_of(&format!(
            "name = \"a\"\n[[filesystems]]\nname = \"zfs\"\narray = \"raid10:3\"\n{sleep}"
        ));
        assert!(e.contains("mirrored pairs"), "{e}");
        let e = error_of(&format!(
            "name = \"a\"\n[[filesystems]]\nname = \"btrfs\"\narray = \"raid0\"\n{sleep}"
        ));
        assert!(
            e.starts_with("bad.toml:4:9: filesystems.array: 'raid0' is not an array layout"),
            "{e}"
        );
        // Real devices: one per member, each given up.
        let devices =
            "[device]\nblock = \"/dev/vdx,/dev/vdy\"\ndestroy_data_on = \"/dev/vdx,/dev/vdy\"\n";
        let e = error_of(&format!(
            "name = \"a\"\n{devices}[[filesystems]]\nname = \"ext4\"\n{sleep}"
        ));
        assert!(
            e.starts_with("bad.toml:3:9: device.block: 2 real devices for one ext4"),
            "{e}"
        );
        let e = error_of(&format!(
            "name = \"a\"\n{devices}[[filesystems]]\nname = \"btrfs\"\narray = \"raid1:3\"\n{sleep}"
        ));
        assert!(
            e.contains("has 3 members, but 2 real devices are named"),
            "{e}"
        );
        let plan = Plan::parse(
            &format!("name = \"a\"\n{devices}[[filesystems]]\nname = \"btrfs\"\narray = \"raid1:2\"\n{sleep}"),
            "a.toml",
        )
        .unwrap();
        let DeviceSpec::Block { devices } = &plan.device else {
            panic!("real devices")
        };
        assert_eq!(devices.len(), 2);
    }

    #[test]
    fn destroy_data_on_without_a_block_device_is_a_mistake() {
        let e = error_of(&format!(
            "name = \"x\"\n[device]\ndestroy_data_on = \"/dev/sdb\"\n{}",
            &PLAN[PLAN.find("[[filesystems]]").unwrap()..]
        ));
        assert!(
            e.starts_with("bad.toml:3:19: device.destroy_data_on: names a device to destroy"),
            "{e}"
        );
    }

    #[test]
    fn adaptive_repetitions_need_a_target() {
        let base = "[[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\n";
        let plan = Plan::parse(
            &format!("name = \"a\"\nrepetitions = 3\ntarget_ci_percent = 5.0\n{base}"),
            "a.toml",
        )
        .unwrap();
        assert_eq!(
            plan.repetitions,
            Repetitions {
                min: 3,
                max: 10,
                target_ci: Some(0.05)
            }
        );
        let e = error_of(&format!(
            "name = \"a\"\nrepetitions = 3\nmax_repetitions = 9\n{base}"
        ));
        assert!(e.contains("needs target_ci_percent"), "{e}");
    }

    #[test]
    fn tmpfs_has_no_scheduler_axis() {
        let text = "name = \"q\"\nschedulers = [\"none\", \"bfq\"]\n[[filesystems]]\nname = \"ext4\"\n[[filesystems]]\nname = \"xfs\"\n[[filesystems]]\nname = \"tmpfs\"\n[[workloads]]\nkind = \"sleep\"\n";
        let plan = Plan::parse(text, "q").unwrap();
        assert_eq!(
            plan.cases
                .iter()
                .filter(|c| c.config.filesystem == "tmpfs")
                .count(),
            1
        );
        assert_eq!(plan.cases.len(), 5);
    }

    #[test]
    fn platforms_multiply_the_configurations_and_name_themselves_in_the_key() {
        let text = format!("{PLAN}\n[platforms.disk]\n[platforms.ram]\nram = true\n[platforms.slow]\ncpu_percent = 50\n");
        let plan = Plan::parse(&text, "p.toml").unwrap();
        assert_eq!(plan.cases.len(), 12);
        let ram: Vec<&Case> = plan
            .cases
            .iter()
            .filter(|c| c.config.platform == "ram")
            .collect();
        assert_eq!(ram.len(), 4);
        assert!(ram
            .iter()
            .all(|c| c.config.image_in_ram && c.config.cpu_percent.is_none()));
        assert_eq!(
            ram[0].key,
            "ext4.default.default.mq-deadline.ram.warm.small"
        );
        let slow = plan
            .cases
            .iter()
            .find(|c| c.config.platform == "slow")
            .unwrap();
        assert_eq!(slow.config.cpu_percent, Some(50.0));
        assert!(!slow.config.image_in_ram);
        // Without platforms the keys are as they always were (stored runs resume).
        let plain = Plan::parse(PLAN, "p.toml").unwrap();
        assert_eq!(
            plain.cases[0].key,
            "ext4.default.default.mq-deadline.warm.small"
        );
        assert_eq!(
            plain.cases[0].config_key(),
            "ext4.default.default.mq-deadline.warm"
        );
        // A rule can pick a platform.
        let only = format!("{text}\n[[include]]\nplatform = \"ram\"\n");
        assert_eq!(Plan::parse(&only, "p.toml").unwrap().cases.len(), 4);
        let e = error_of(&format!("{PLAN}\n[platforms.slow]\ncpu_percent = 150\n"));
        assert!(e.contains("platforms.slow.cpu_percent"), "{e}");
        let e = error_of(&format!("{PLAN}\n[platforms.\"a.b\"]\n"));
        assert!(e.contains("platforms: \"a.b\" is not a name"), "{e}");
    }

    /// `[aging.NAME]` tables add the age axis: every configuration fresh and aged by each
    /// (or the `ages` listed); fresh cases keep the keys of a plan without aging, aged ones
    /// name their age before the cache; rules pick an age; mistakes name their key.
    #[test]
    fn aging_specs_make_the_age_axis() {
        let text = format!(
            "{PLAN}\n[aging.aged]\nfill = 70\nchurn = 2\n[aging.full]\nfill = \"85%\"\nsizes = \"4k:1/1m:1\"\nseed = 3\n"
        );
        let plan = Plan::parse(&text, "p.toml").unwrap();
        assert_eq!(plan.cases.len(), 12);
        let keys: Vec<&str> = plan.cases.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(
            keys[..3],
            [
                "ext4.default.default.mq-deadline.warm.small",
                "ext4.default.default.mq-deadline.aged.warm.small",
                "ext4.default.default.mq-deadline.full.warm.small",
            ]
        );
        let full = &plan.cases[2];
        assert_eq!(full.config.age, "full");
        let spec = plan.aging_of(full).unwrap();
        assert_eq!((spec.fill_percent, spec.seed, spec.churn), (85.0, 3, 3));
        assert_eq!(plan.aging_of(&plan.cases[0]), None);
        // The configuration's key includes its age: a kept target serves one age only.
        assert_ne!(plan.cases[0].config_key(), plan.cases[1].config_key());
        let only = format!("ages = [\"full\"]\n{text}");
        let plan = Plan::parse(&only, "p.toml").unwrap();
        assert!(plan.cases.iter().all(|c| c.config.age == "full"));
        let rule = format!("{text}\n[[exclude]]\nage = \"fresh\"\n");
        assert_eq!(Plan::parse(&rule, "p.toml").unwrap().cases.len(), 8);
        let e = error_of(&format!("{PLAN}\n[aging.aged]\ncolour = 3\n"));
        assert!(
            e.contains("aging.aged.colour: unknown key; the keys are fill, sizes"),
            "{e}"
        );
        let e = error_of(&format!("{PLAN}\n[aging.aged]\nfill = 99\n"));
        assert!(e.starts_with("bad.toml:"), "{e}");
        assert!(
            e.contains("aging.aged.fill: 99 %: a fill level is 1 to 95 %"),
            "{e}"
        );
        let e = error_of(&format!("ages = [\"old\"]\n{text}"));
        assert!(
            e.contains("ages: 'old' is neither fresh nor an [aging.NAME] table of the plan; it has: fresh, aged, full"),
            "{e}"
        );
        let e = error_of(&format!("{PLAN}\n[aging.fresh]\n"));
        assert!(
            e.contains("aging: `fresh` is the age of a filesystem not aged"),
            "{e}"
        );
        // An aged image has a known size.
        let e = error_of(&format!(
            "{}\n[aging.aged]\n",
            PLAN.replace("[device]\nimage = \"512m\"\n", "")
        ));
        assert!(
            e.contains("aging.aged: an aged filesystem is made once, on an image")
                && e.contains("image = \"SIZE\""),
            "{e}"
        );
        // A directory is the user's filesystem, as it is.
        let e = error_of(&format!("dir = \"/tmp\"\n{text}"));
        assert!(e.contains("ages a filesystem fsbench makes"), "{e}");
    }

    #[test]
    fn remake_target_takes_true_false_or_configuration() {
        for (value, remake) in [
            ("true", Remake::Sample),
            ("false", Remake::Never),
            ("\"configuration\"", Remake::Configuration),
        ] {
            let plan = Plan::parse(&format!("remake_target = {value}\n{PLAN}"), "p").unwrap();
            assert_eq!(plan.remake, remake);
            assert_eq!(
                plan.context(&plan.cases[0]).disposable,
                remake == Remake::Sample
            );
        }
        let e = error_of(&format!("remake_target = \"round\"\n{PLAN}"));
        assert!(
            e.contains("remake_target") && e.contains("configuration"),
            "{e}"
        );
    }

    #[test]
    fn an_image_too_small_for_a_filesystem_is_refused_at_parse_time() {
        let e = error_of("name = \"x\"\n[device]\nimage = \"256m\"\n[[filesystems]]\nname = \"ext4\"\n[[filesystems]]\nname = \"xfs\"\n[[workloads]]\nkind = \"sleep\"\nduration = \"1s\"\n");
        assert!(e.starts_with("bad.toml:3:9: device.image:"), "{e}");
        assert!(e.contains("too small for xfs"), "{e}");
        assert!(e.contains("image = \"512m\" in the plan's [device]"), "{e}");
    }

    /// A published figure and a claim on the two-by-two plan: they parse into the plan's
    /// figures; a workload, a configuration or a key the plan does not have is an error at
    /// its line; a label that matches two configurations must say which.
    #[test]
    fn published_figures_name_only_what_the_plan_has() {
        let figure = r#"
[[published]]
title = "write"
source = "000_x.txt:415"
workload = "small"
metric = "throughput"
match = { phase = "write", file_size_bytes = "64k" }
unit = "MB/s"
direction = "higher"
reference = "ext4 mount=default"
[published.values]
"ext4 mount=default" = 10.0
"btrfs mount=noatime" = { value = 12, line = 416 }

[[claims]]
text = "btrfs writes faster than ext4"
source = "000_x.txt:420"
workload = "small"
metric = "throughput"
config = "btrfs mount=default"
against = "ext4 mount=default"
finding = "higher"
"#;
        let plan = Plan::parse(&format!("{PLAN}{figure}"), "p.toml").unwrap();
        assert_eq!(plan.figures.published.len(), 1);
        let values = &plan.figures.published[0].values;
        assert_eq!(values["btrfs mount=noatime"].value(), 12.0);
        assert_eq!(values["btrfs mount=noatime"].line(), Some(416));
        assert_eq!(plan.figures.claims[0].config, "btrfs mount=default");
        let line_of = |needle: &str| {
            let text = format!("{PLAN}{figure}");
            text[..text.find(needle).unwrap()].matches('\n').count() + 1
        };
        let bad =
            |from: &str, to: &str| error_of(&format!("{PLAN}{}", figure.replacen(from, to, 1)));
        let e = bad("workload = \"small\"", "workload = \"big\"");
        assert!(
            e.starts_with(&format!("bad.toml:{}:", line_of("workload = \"small\"")))
                && e.contains("published.workload: names workload 'big', which the plan does not have; its workloads: small"),
            "{e}"
        );
        let e = bad("\"btrfs mount=noatime\" = {", "\"xfs mount=noatime\" = {");
        assert!(
            e.starts_with(&format!("bad.toml:{}:", line_of("\"btrfs mount=noatime\" =")))
                && e.contains("published.values: configuration 'xfs mount=noatime' matches no case of workload 'small'"),
            "{e}"
        );
        let e = bad("\"btrfs mount=noatime\" = {", "btrfs = {");
        assert!(
            e.contains("matches 2 configurations of workload 'small'"),
            "{e}"
        );
        let e = bad("unit = \"MB/s\"", "unit = \"MB/s\"\nunits = \"s\"");
        assert!(
            e.starts_with(&format!("bad.toml:{}:", line_of("unit = ") + 1)) && e.contains("units"),
            "{e}"
        );
        let e = bad(
            "reference = \"ext4 mount=default\"",
            "reference = \"btrfs mount=default\"",
        );
        assert!(
            e.contains("published.reference: 'btrfs mount=default' has no value"),
            "{e}"
        );
        let e = bad("match = { phase", "match = { stage");
        assert!(
            e.contains("published.match: unknown result dimension 'stage'"),
            "{e}"
        );
        let e = bad("source = \"000_x.txt:415\"", "source = \"000_x.txt\"");
        assert!(
            e.contains("published.source: '000_x.txt' is not FILE:LINE"),
            "{e}"
        );
        let e = bad("against = \"ext4 mount=default\"", "against = \"ext3\"");
        assert!(
            e.starts_with(&format!("bad.toml:{}:", line_of("against = ")))
                && e.contains("claims.against: configuration 'ext3' matches no case"),
            "{e}"
        );
        let e = bad("finding = \"higher\"", "then = 0.9\nfinding = \"higher\"");
        assert!(e.contains("claims.then: `then = 0.9` says lower"), "{e}");
    }
}
