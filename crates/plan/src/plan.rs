//! A validated plan: the campaign's settings and its cases, each a configuration (filesystem x
//! mkfs option set x mount option set x scheduler x platform x age x cache policy) x workload,
//! with a stable key.
//! Parsing has no side effects; whether the host can run a case is found out when it runs (an
//! `unsupported` result), not here.

use crate::file::{PlanFile, RuleFile, WorkloadTable};
use crate::workload::PlannedWorkload;
use fsbench_measure::series::SeriesInterval;
use fsbench_measure::units::{parse_duration_ns, parse_size};
use fsbench_model::published::{self, Judged, PointsRule, Selector, StudyFigures};
use fsbench_model::CaseAxis;
pub use fsbench_model::{CaseConfig, DEFAULT_PLATFORM, FRESH};
use fsbench_testbed::aging::{AgingSpec, KEYS as AGING_KEYS};
use fsbench_testbed::array::ArraySpec;
use fsbench_testbed::device::SizeSetting;
use fsbench_testbed::fs::{self, Storage};
use fsbench_testbed::target::DEFAULT_WORK_DIR;
use fsbench_testbed::{CachePolicy, DeviceSpec};
use fsbench_workload::sweep::SweepSpec;
use fsbench_workload::workload::{Check, HostNotes, KeepsFiles};
use fsbench_workload::{Context, WorkloadError, WorkloadSettings, KINDS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

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
}

/// Where a span starts, as 1-based line and column.
fn position(text: &str, span: Range<usize>) -> (usize, usize) {
    let start = span.start.min(text.len());
    let before = &text[..start];
    let line = before.matches('\n').count() + 1;
    let column = before.rfind('\n').map_or(start, |nl| start - nl - 1) + 1;
    (line, column)
}

struct Checker<'a> {
    file: &'a str,
    text: &'a str,
}

impl Checker<'_> {
    fn error(&self, span: Range<usize>, key: &str, message: impl Into<String>) -> PlanError {
        let (line, column) = position(self.text, span);
        PlanError {
            file: self.file.to_string(),
            line,
            column,
            key: key.to_string(),
            message: message.into(),
        }
    }

    fn at<T>(&self, value: &Spanned<T>, key: &str, message: impl Into<String>) -> PlanError {
        self.error(value.span(), key, message)
    }

    /// Refuses a name the plan gives something (an option set, a platform, an aging spec, a
    /// scheduler, a workload), at `key` where it is written; see [`name_error`].
    fn name(&self, name: &Spanned<String>, key: &str) -> Result<(), PlanError> {
        match name_error(name.get_ref()) {
            None => Ok(()),
            Some(e) => Err(self.at(name, key, e)),
        }
    }
}

/// Why `name` cannot name something in a plan, or None when it can. A name is one word of
/// letters (of any script), digits, `-` and `_`: names are joined by dots into each case's key
/// (a dot in one could make two cases one key), become labels on terminals and in reports,
/// and must never be a path (`/`, `..`), empty, or hold a NUL, a control character or a space.
pub fn name_error(name: &str) -> Option<String> {
    let fine = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    if !name.is_empty() && name.chars().all(fine) {
        return None;
    }
    Some(format!(
        "{name:?} is not a name: a name may contain only letters, digits, '-' and '_' \
         (e.g. big-inodes), and is not empty"
    ))
}

/// Why `name` cannot name an I/O scheduler (a plan's `schedulers`, `--scheduler`), or None:
/// it is part of each case's key, so it is a name ([`name_error`]).
pub fn scheduler_error(name: &str) -> Option<String> {
    name_error(name).map(|e| {
        format!("{e}; the schedulers are none, mq-deadline, kyber, bfq (or noop, deadline, cfq)")
    })
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
    /// name the lines of `text` as written (an override's own mistake names its flag).
    pub fn parse_with(text: &str, file: &str, overrides: &Overrides) -> Result<Plan, PlanError> {
        let check = Checker { file, text };
        let flag_error = |key: &str, message: String| PlanError {
            file: file.to_string(),
            line: 0,
            column: 0,
            key: key.to_string(),
            message,
        };
        let dir = overrides.dir.as_deref();
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

        let min = match (overrides.repetitions, &raw.repetitions) {
            (Some(n), _) if (1..=1000).contains(&n) => n,
            (Some(n), _) => {
                return Err(flag_error(
                    "--repetitions",
                    format!("must be between 1 and 1000 (got {n})"),
                ))
            }
            (None, None) => 3,
            (None, Some(r)) if (1..=1000).contains(r.get_ref()) => *r.get_ref() as u32,
            (None, Some(r)) => {
                return Err(check.at(r, "repetitions", "must be between 1 and 1000"))
            }
        };
        let target_ci = match &raw.target_ci_percent {
            None => None,
            Some(t) if *t.get_ref() > 0.0 && *t.get_ref() < 100.0 => Some(*t.get_ref() / 100.0),
            Some(t) => {
                return Err(check.at(
                    t,
                    "target_ci_percent",
                    "must be a percentage above 0 and below 100",
                ))
            }
        };
        let max = match &raw.max_repetitions {
            None => {
                if target_ci.is_some() {
                    min.max(10)
                } else {
                    min
                }
            }
            // Fewer repetitions asked on the command line: adaptive ones stop at no fewer.
            Some(m) if overrides.repetitions.is_some() => (*m.get_ref() as u32).max(min),
            Some(m) if *m.get_ref() >= min as i64 && *m.get_ref() <= 1000 => *m.get_ref() as u32,
            Some(m) => {
                return Err(check.at(
                    m,
                    "max_repetitions",
                    format!("must be between repetitions ({min}) and 1000"),
                ))
            }
        };
        if let (Some(m), None, true) = (&raw.max_repetitions, target_ci, max > min) {
            return Err(check.at(
                m,
                "max_repetitions",
                "needs target_ci_percent (the stability target that stops repetitions early)",
            ));
        }
        let timeout_ns = match &raw.timeout {
            None => Some(30 * 60 * 1_000_000_000),
            Some(t) if t.get_ref() == "none" => None,
            Some(t) => match parse_duration_ns(t.get_ref()) {
                Ok(0) => return Err(check.at(t, "timeout", "must be longer than 0 (or \"none\")")),
                Ok(ns) => Some(ns),
                Err(e) => return Err(check.at(t, "timeout", format!("{e} (or \"none\")"))),
            },
        };

        let scale = match (overrides.scale, &raw.scale) {
            (Some(s), _) if s > 0.0 && s <= 1.0 => s,
            (Some(s), _) => {
                return Err(flag_error(
                    "--scale",
                    format!("must be above 0 and at most 1 (got {s})"),
                ))
            }
            (None, None) => 1.0,
            (None, Some(s)) if *s.get_ref() > 0.0 && *s.get_ref() <= 1.0 => *s.get_ref(),
            (None, Some(s)) => return Err(check.at(s, "scale", "must be above 0 and at most 1")),
        };
        let (device, loop_direct_io) = match &raw.device {
            None => (DeviceSpec::Image { size_bytes: None }, true),
            Some(d) => {
                // The acknowledgement of a real device means nothing without that device: a
                // plan that says it but images instead has a mistake in it.
                if let (Some(destroy), None) = (&d.destroy_data_on, &d.block) {
                    return Err(check.at(
                        destroy,
                        "device.destroy_data_on",
                        "names a device to destroy, but the plan has no device.block; add block = \"/dev/X\" (the same device) or remove destroy_data_on",
                    ));
                }
                let device = match (&d.image, &d.block) {
                    (Some(_), Some(b)) => {
                        return Err(check.at(
                            b,
                            "device.block",
                            "give either device.image or device.block, not both",
                        ))
                    }
                    (Some(size), None) => {
                        let bytes = parse_size(size.get_ref())
                            .map_err(|e| check.at(size, "device.image", e.to_string()))?;
                        if bytes == 0 {
                            return Err(check.at(
                                size,
                                "device.image",
                                "an image needs a size (e.g. \"4g\")",
                            ));
                        }
                        DeviceSpec::Image {
                            size_bytes: Some(bytes),
                        }
                    }
                    (None, Some(block)) => DeviceSpec::parse(
                        block.get_ref(),
                        d.destroy_data_on.as_ref().map(|s| s.get_ref().as_str()),
                    )
                    .map_err(|e| check.at(block, "device.block", e.to_string()))?,
                    (None, None) => DeviceSpec::Image { size_bytes: None },
                };
                (device, !d.loop_buffered.unwrap_or(false))
            }
        };

        let description = match &raw.description {
            None => String::new(),
            Some(d) if d.get_ref().contains('\n') => {
                return Err(check.at(d, "description", "must be one line"))
            }
            Some(d) => d.get_ref().trim().to_string(),
        };
        let mut notes = Vec::new();
        for note in &raw.notes {
            let text = note.get_ref().trim();
            if text.is_empty() || text.contains('\n') {
                return Err(check.at(note, "notes", "each note is one line of text"));
            }
            notes.push(text.to_string());
        }
        let remake = match &raw.remake_target {
            None => Remake::Sample,
            Some(v) => match v.get_ref() {
                toml::Value::Boolean(true) => Remake::Sample,
                toml::Value::Boolean(false) => Remake::Never,
                toml::Value::String(s) if s == "configuration" => Remake::Configuration,
                _ => {
                    return Err(check.at(
                        v,
                        "remake_target",
                        "must be true (every sample), \"configuration\" (once per configuration and round) or false (once per case)",
                    ))
                }
            },
        };
        let mut platforms: Vec<(String, bool, Option<f64>)> = Vec::new();
        for (name, p) in &raw.platforms {
            check.name(name, "platforms")?;
            let name = name.get_ref();
            let ram = p.ram.unwrap_or(false);
            if ram && matches!(device, DeviceSpec::Block { .. }) {
                return Err(PlanError {
                    file: file.to_string(),
                    line: 1,
                    column: 1,
                    key: format!("platforms.{name}.ram"),
                    message: "puts a loop image in memory, but the plan's device is a real block device: use [device] image = \"SIZE\" or drop ram".into(),
                });
            }
            let cpu =
                match &p.cpu_percent {
                    None => None,
                    Some(c) if *c.get_ref() > 0.0 && *c.get_ref() <= 100.0 => Some(*c.get_ref()),
                    Some(c) => return Err(check.at(
                        c,
                        &format!("platforms.{name}.cpu_percent"),
                        "must be a percentage of the machine's CPU time above 0 and at most 100",
                    )),
                };
            platforms.push((name.clone(), ram, cpu));
        }
        if platforms.is_empty() {
            platforms.push((DEFAULT_PLATFORM.to_string(), false, None));
        }
        let agings = aging_specs(&check, &raw.aging)?;
        let mut ages: Vec<String> = Vec::new();
        for age in &raw.ages {
            let name = age.get_ref();
            if name != FRESH && !agings.contains_key(name) {
                let mut known = vec![FRESH.to_string()];
                known.extend(agings.keys().cloned());
                return Err(check.at(
                    age,
                    "ages",
                    format!(
                        "'{name}' is neither fresh nor an [aging.NAME] table of the plan; it has: {}",
                        known.join(", ")
                    ),
                ));
            }
            if !ages.contains(name) {
                ages.push(name.clone());
            }
        }
        if ages.is_empty() {
            ages.push(FRESH.to_string());
            ages.extend(agings.keys().cloned());
        }

        let mut schedulers: Vec<Option<String>> = Vec::new();
        for s in &raw.schedulers {
            let name = s.get_ref().trim();
            if let Some(e) = scheduler_error(name) {
                return Err(check.at(s, "schedulers", e));
            }
            schedulers.push(Some(name.to_string()));
        }
        if schedulers.is_empty() {
            schedulers.push(None);
        }
        let mut caches = Vec::new();
        for c in &raw.cache {
            caches.push(
                c.get_ref()
                    .parse::<CachePolicy>()
                    .map_err(|e| check.at(c, "cache", e))?,
            );
        }
        if caches.is_empty() {
            caches.push(CachePolicy::Warm);
        }

        if raw.filesystems.is_empty() && raw.dir.is_none() && dir.is_none() {
            return Err(PlanError {
                file: file.to_string(),
                line: 1,
                column: 1,
                key: "filesystems".into(),
                message: "the plan names no filesystem: add a [[filesystems]] table with name = \"ext4\" (or another), or run it in an existing directory (`fsbench run --dir PATH`)".into(),
            });
        }
        let mut arrays: Vec<Option<ArraySpec>> = Vec::new();
        // (A workload command's device is its flags', set over the plan's below.)
        let real_devices = match overrides.device.as_ref().map_or(&device, |(d, ..)| d) {
            DeviceSpec::Block { devices } => Some(devices.len()),
            DeviceSpec::Image { .. } => None,
        };
        for f in &raw.filesystems {
            let Some(fs) = fs::by_name(f.name.get_ref()) else {
                return Err(check.at(
                    &f.name,
                    "filesystems.name",
                    format!(
                        "unknown filesystem '{}'; use one of {}",
                        f.name.get_ref(),
                        fs::names()
                    ),
                ));
            };
            for (sets, key) in [
                (&f.mkfs_options, "filesystems.mkfs_options"),
                (&f.mount_options, "filesystems.mount_options"),
            ] {
                for name in sets.iter().flat_map(BTreeMap::keys) {
                    check.name(name, key)?;
                }
            }
            // The bare device has nothing to make or mount: options would be silently unused.
            let options = |sets: &Option<crate::file::OptionSets>| {
                sets.as_ref()
                    .is_some_and(|sets| sets.values().any(|o| !o.trim().is_empty()))
            };
            if !fs.capabilities().filesystem
                && (options(&f.mkfs_options) || options(&f.mount_options))
            {
                return Err(check.at(
                    &f.name,
                    "filesystems",
                    "the bare device has no filesystem to make or mount: drop its mkfs_options \
                     and mount_options",
                ));
            }
            // Whether this filesystem takes the layout on this device: said at its `array`
            // (or, without one, at the devices that need one).
            let array = match &f.array {
                None => None,
                Some(text) => Some(
                    text.get_ref()
                        .parse::<ArraySpec>()
                        .map_err(|e| check.at(text, "filesystems.array", e))?,
                ),
            };
            fsbench_testbed::array::check_layout(fs, array.as_ref(), real_devices).map_err(
                |e| match (&f.array, raw.device.as_ref().and_then(|d| d.block.as_ref())) {
                    (Some(text), _) => check.at(text, "filesystems.array", e),
                    (None, Some(block)) => check.at(block, "device.block", e),
                    (None, None) => check.at(&f.name, "filesystems", e),
                },
            )?;
            arrays.push(array);
        }
        // An image too small for one of the filesystems could never run: say so now, not
        // after a dry run passed and the campaign started.
        if let (
            DeviceSpec::Image {
                size_bytes: Some(bytes),
            },
            Some(span),
        ) = (&device, raw.device.as_ref().and_then(|d| d.image.as_ref()))
        {
            for f in &raw.filesystems {
                let fs = fs::by_name(f.name.get_ref()).expect("checked");
                fsbench_testbed::device::check_size(
                    fs.name(),
                    *bytes,
                    fs.min_device_bytes(),
                    "the image",
                    SizeSetting::Plan,
                )
                .map_err(|e| check.at(span, "device.image", e.to_string()))?;
            }
        }
        // A scaled image shrinks with the plan (in whole MiB), never below what its largest
        // filesystem needs nor below 4 GiB (or the size asked for, if smaller): not every
        // workload's data shrinks with the scale (a mix's file sizes, a task's least tree),
        // and a sparse image costs only what is written to it.
        let device = match device {
            DeviceSpec::Image {
                size_bytes: Some(bytes),
            } if scale < 1.0 => {
                let floor = raw
                    .filesystems
                    .iter()
                    .filter_map(|f| fs::by_name(f.name.get_ref()))
                    .map(|fs| fs.min_device_bytes())
                    .max()
                    .unwrap_or(0);
                let scaled = ((bytes as f64 * scale) as u64) >> 20 << 20;
                DeviceSpec::Image {
                    size_bytes: Some(scaled.max(floor).max(4 << 30).min(bytes)),
                }
            }
            other => other,
        };
        // A workload command's device is as its flags say (never scaled).
        let (device, loop_direct_io, size_setting) = match &overrides.device {
            Some((device, direct, setting)) => (device.clone(), *direct, *setting),
            None => (device, loop_direct_io, SizeSetting::Plan),
        };
        // An aged image is made once and copied for every sample: its size must be known
        // before any is made (a default size would follow the free space, which the cache
        // itself takes).
        let aged = ages.iter().find(|a| *a != FRESH);
        if let (Some(age), false) = (
            aged,
            matches!(
                device,
                DeviceSpec::Image {
                    size_bytes: Some(_)
                }
            ),
        ) {
            if dir.is_none() && raw.dir.is_none() {
                return Err(PlanError {
                    file: file.to_string(),
                    line: 1,
                    column: 1,
                    key: format!("aging.{age}"),
                    message: format!(
                        "an aged filesystem is made once, on an image, and copied for every sample: give the image's size ({})",
                        size_setting.suggest("SIZE")
                    ),
                });
            }
        }
        if raw.workloads.is_empty() {
            return Err(PlanError {
                file: file.to_string(),
                line: 1,
                column: 1,
                key: "workloads".into(),
                message: format!("the plan names no workload: add a [[workloads]] table with kind = \"matrix\" (or one of {})", KINDS.join(", ")),
            });
        }
        let mut workloads: Vec<PlannedWorkload> = Vec::new();
        for table in &raw.workloads {
            let (workload, name_span) = workload(&check, table, scale)?;
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
            let in_dir = dir.is_some() || raw.dir.is_some();
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

        let mut cases = Vec::new();
        for (f, array) in raw.filesystems.iter().zip(&arrays) {
            let fs_name = fs::by_name(f.name.get_ref()).expect("checked").name();
            let sets = |given: &Option<crate::file::OptionSets>| match given {
                Some(sets) => sets
                    .iter()
                    .map(|(name, options)| (name.get_ref().clone(), options.clone()))
                    .collect(),
                None => BTreeMap::from([("default".to_string(), String::new())]),
            };
            let (mkfs_sets, mount_sets) = (sets(&f.mkfs_options), sets(&f.mount_options));
            let in_memory =
                fs::by_name(fs_name).expect("known").capabilities().storage == Storage::Memory;
            for (mkfs_set, mkfs_options) in &mkfs_sets {
                for (mount_set, mount_options) in &mount_sets {
                    // A scheduler belongs to a block device: tmpfs has none.
                    let fs_schedulers = if in_memory {
                        vec![None]
                    } else {
                        schedulers.clone()
                    };
                    for ((scheduler, (platform, ram, cpu), cache), age) in
                        combinations(&fs_schedulers, &platforms, &caches)
                            .flat_map(|c| ages.iter().map(move |age| (c, age)))
                    {
                        for workload in &workloads {
                            let config = CaseConfig {
                                filesystem: fs_name.to_string(),
                                mkfs_set: mkfs_set.clone(),
                                mkfs_options: mkfs_options.clone(),
                                mount_set: mount_set.clone(),
                                mount_options: mount_options.clone(),
                                array: array.as_ref().map(ArraySpec::to_string),
                                one_device_for: None,
                                scheduler: scheduler.clone(),
                                platform: platform.clone(),
                                image_in_ram: *ram && !in_memory,
                                cpu_percent: *cpu,
                                age: age.clone(),
                                cache: *cache,
                            };
                            let mut case = Case {
                                key: String::new(),
                                position: 0,
                                config,
                                workload: workload.clone(),
                            };
                            case.key = case.key_of();
                            if let Some(other) = cases.iter().find(|c: &&Case| c.key == case.key) {
                                return Err(check.at(&f.name, "filesystems", clash(other, &case)));
                            }
                            cases.push(case);
                        }
                    }
                }
            }
        }
        if raw.filesystems.is_empty() {
            cases = in_directory_only(&workloads, &platforms, &caches);
        }
        for rule in raw.include.iter().chain(&raw.exclude) {
            check_rule(&check, rule, &cases)?;
        }
        cases.retain(|c| {
            (raw.include.is_empty() || raw.include.iter().any(|r| matches(r, c)))
                && !raw.exclude.iter().any(|r| matches(r, c))
        });
        if cases.is_empty() {
            return Err(PlanError {
                file: file.to_string(),
                line: 1,
                column: 1,
                key: "include/exclude".into(),
                message: "the include and exclude rules leave no case to run".into(),
            });
        }
        // The command line's directory runs the plan there, whatever the plan says.
        let dir = match (dir, &raw.dir) {
            (Some(given), _) if !given.is_absolute() => {
                return Err(flag_error(
                    "--dir",
                    format!("{} must be an absolute path", given.display()),
                ))
            }
            (Some(given), _) => Some(given.to_path_buf()),
            (None, own) => own.as_ref().map(|d| PathBuf::from(d.get_ref())),
        };
        if let Some(own) = raw
            .dir
            .as_ref()
            .filter(|d| overrides.dir.is_none() && !Path::new(d.get_ref()).is_absolute())
        {
            return Err(check.at(own, "dir", "must be an absolute path"));
        }
        if let Some(dir) = &dir {
            cases = on_directory(cases, dir).map_err(|(key, e)| match &raw.dir {
                Some(own) if overrides.dir.is_none() => check.at(own, key, e),
                _ => flag_error("--dir", e),
            })?;
        }
        for (i, case) in cases.iter_mut().enumerate() {
            case.position = i;
        }
        let figures = figures(&check, &raw, &cases)?;
        let fsck = match &raw.fsck {
            None => true,
            Some(f) => *f,
        };
        let interval = match &raw.interval {
            None => SeriesInterval::Auto,
            Some(i) => i
                .get_ref()
                .parse()
                .map_err(|e: String| check.at(i, "interval", e))?,
        };
        let repeat_disturbed = match &raw.repeat_disturbed {
            None => 0,
            Some(r) if (0..=10).contains(r.get_ref()) => *r.get_ref() as u32,
            Some(r) => {
                return Err(check.at(
                    r,
                    "repeat_disturbed",
                    "must be between 0 and 10 (extra attempts of a disturbed sample)",
                ))
            }
        };
        // What this host makes of the workloads (a study's file or program missing here, and
        // what runs instead), said once each after the plan's own notes.
        let ctx = Context {
            scale,
            ..Context::default()
        };
        for workload in &workloads {
            for note in workload.settings.apply(HostNotes(&ctx)) {
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
        // And of its md arrays, once: where the kernel has no md, their cases end unsupported,
        // or run on one image of the array's total size when the plan says so.
        let one_device = match raw.device.as_ref().and_then(|d| d.without_md.as_ref()) {
            None => false,
            Some(w) => match w.get_ref().as_str() {
                "unsupported" => false,
                "one-device" if matches!(device, DeviceSpec::Image { .. }) => true,
                "one-device" => {
                    return Err(check.at(
                        w,
                        "device.without_md",
                        "\"one-device\" runs an md array's cases on one image of its total size; real devices (device.block) are one per member: drop without_md",
                    ))
                }
                other => {
                    return Err(check.at(
                        w,
                        "device.without_md",
                        format!(
                            "'{other}': use \"one-device\" (where the kernel has no md, the cases on md arrays run on one image of the array's total size) or \"unsupported\" (the default: they end unsupported)"
                        ),
                    ))
                }
            },
        };
        let on_md = |c: &Case| {
            c.config
                .array
                .as_deref()
                .is_some_and(|a| a.parse::<ArraySpec>().is_ok_and(|a| a.by_md()))
        };
        if dir.is_none() && cases.iter().any(on_md) {
            let reasons = fsbench_testbed::array::md_support(&fsbench_testbed::RealSystem);
            if reasons.is_empty() {
                // This host has md: the arrays as asked.
            } else if one_device {
                let mut arrays: Vec<String> = Vec::new();
                for case in cases.iter_mut().filter(|c| on_md(c)) {
                    let array = case.config.array.take().expect("on md");
                    if !arrays.contains(&array) {
                        arrays.push(array.clone());
                    }
                    case.config.one_device_for = Some(array);
                }
                notes.push(format!(
                    "{}: the cases on md arrays ({}) run on one image of the array's total size ({})",
                    fsbench_model::NO_MD,
                    arrays.join(", "),
                    reasons.join("; ")
                ));
            } else {
                notes.push(format!(
                    "md RAID cannot be made on this host, so the cases on md arrays end unsupported: {}",
                    reasons.join("; ")
                ));
            }
        }
        Ok(Plan {
            name,
            description,
            notes,
            text: text.to_string(),
            repetitions: Repetitions {
                min,
                max,
                target_ci,
            },
            timeout_ns,
            remake,
            work_dir: overrides.work_dir.clone().unwrap_or_else(|| {
                raw.work_dir
                    .map_or_else(|| PathBuf::from(DEFAULT_WORK_DIR), PathBuf::from)
            }),
            device,
            loop_direct_io,
            fsck,
            size_setting,
            scale,
            dir,
            interval,
            repeat_disturbed,
            agings,
            cases,
            figures,
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

/// The cases of a plan without filesystems: each platform x cache policy x workload, on a
/// directory (its configuration is set by [`on_directory`]).
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

fn in_directory_only(
    workloads: &[PlannedWorkload],
    platforms: &[(String, bool, Option<f64>)],
    caches: &[CachePolicy],
) -> Vec<Case> {
    let none: [Option<String>; 1] = [None];
    let mut cases = Vec::new();
    for (_, (platform, ram, cpu), cache) in combinations(&none, platforms, caches) {
        for workload in workloads {
            cases.push(Case {
                key: String::new(),
                position: 0,
                config: CaseConfig {
                    filesystem: String::new(),
                    mkfs_set: String::new(),
                    mkfs_options: String::new(),
                    mount_set: String::new(),
                    mount_options: String::new(),
                    array: None,
                    one_device_for: None,
                    scheduler: None,
                    platform: platform.clone(),
                    image_in_ram: *ram,
                    cpu_percent: *cpu,
                    age: FRESH.into(),
                    cache: *cache,
                },
                workload: workload.clone(),
            });
        }
    }
    cases
}

/// The cases run in an existing directory: every configuration becomes the directory's
/// filesystem as mounted (sets `existing`, no scheduler), keeping the platform's CPU share
/// and the cache policy; cases that become the same are run once. What needs a filesystem
/// fsbench makes is an error: (key, message).
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

/// The plan's `[aging.NAME]` tables as specs: every key read by the spec itself (its errors
/// name the key as written), the rest at their defaults.
fn aging_specs(
    check: &Checker<'_>,
    tables: &BTreeMap<Spanned<String>, crate::file::AgingTable>,
) -> Result<BTreeMap<String, AgingSpec>, PlanError> {
    let mut specs = BTreeMap::new();
    for (spanned, table) in tables {
        check.name(spanned, "aging")?;
        let name = spanned.get_ref();
        if name == FRESH {
            return Err(check.at(
                spanned,
                "aging",
                "`fresh` is the age of a filesystem not aged: give the aging spec another name",
            ));
        }
        let mut spec = AgingSpec::default();
        for (key, value) in table {
            let at = format!("aging.{name}.{}", key.get_ref());
            if !AGING_KEYS.contains(&key.get_ref().as_str()) {
                return Err(check.at(
                    key,
                    &at,
                    format!("unknown key; the keys are {}", AGING_KEYS.join(", ")),
                ));
            }
            let text = match value.get_ref() {
                toml::Value::String(text) => text.clone(),
                toml::Value::Integer(n) => n.to_string(),
                toml::Value::Float(x) => x.to_string(),
                _ => return Err(check.at(value, &at, "must be a number or a string")),
            };
            spec.set(key.get_ref(), &text)
                .map_err(|e| check.at(value, &at, e))?;
        }
        specs.insert(name.clone(), spec);
    }
    Ok(specs)
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

/// The published figures and claims, checked: each names a workload of the plan, result
/// dimensions that exist, and configurations its cases have (exactly one each, but for points,
/// which add up over every configuration a label matches, and for a claim's configurations,
/// which it sets against each other pair by pair); each figure's reference is one of its
/// values; each claim has the keys of its kind (a comparison, a ranking of points, a knee).
fn figures(check: &Checker<'_>, raw: &PlanFile, cases: &[Case]) -> Result<StudyFigures, PlanError> {
    // (the key as the error names it, what is wrong) for one table: checks shared by both.
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
    let mut out = StudyFigures::default();
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
        out.published.push(p.clone());
    }
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
        out.claims.push(c.clone());
    }
    Ok(out)
}

/// The first line of a deserializer's message (toml adds "in `key`" on the next).
fn first_line(message: &str) -> String {
    message
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let md = fsbench_testbed::array::md_support(&fsbench_testbed::RealSystem).is_empty();
        for (without, one_device) in [("one-device", !md), ("unsupported", false)] {
            let parsed = Plan::parse(&plan(without), "a.toml").unwrap();
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
