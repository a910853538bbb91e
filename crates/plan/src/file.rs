//! The plan file as written: TOML deserialized with every key known (unknown keys are errors)
//! and spans kept on the values that can still be wrong after parsing, so every error names the
//! file, line, column and key.

use fsbench_model::published::{Claim, Published};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    pub name: Spanned<String>,
    /// One line saying what the plan measures (`fsbench profiles` lists it).
    pub description: Option<Spanned<String>>,
    /// What the reader of its results must know (a study's profile: what differs from the
    /// study on this host), one line each; `fsbench run` prints them with the summary.
    #[serde(default)]
    pub notes: Vec<Spanned<String>>,
    /// Repetitions of every case (the minimum when adaptive).
    pub repetitions: Option<Spanned<i64>>,
    /// Adaptive repetitions: stop at this many even if not stable.
    pub max_repetitions: Option<Spanned<i64>>,
    /// Adaptive repetitions: repeat until the 95 % CI half-width of every main metric is within
    /// this percentage of its mean.
    pub target_ci_percent: Option<Spanned<f64>>,
    /// Per-case timeout of the workload ("10m"; "none": no timeout).
    pub timeout: Option<Spanned<String>>,
    /// Shrinks every workload's sizes and times and the image (0 < scale <= 1; default 1).
    pub scale: Option<Spanned<f64>>,
    /// When targets are made anew: true (every sample, the default), "configuration" (once
    /// per configuration and round, its workloads one after another on it) or false (once per
    /// case for the whole campaign).
    pub remake_target: Option<Spanned<toml::Value>>,
    #[serde(default)]
    pub schedulers: Vec<Spanned<String>>,
    #[serde(default)]
    pub cache: Vec<Spanned<String>>,
    pub work_dir: Option<String>,
    /// The read-only filesystem check after each target (default true).
    pub fsck: Option<bool>,
    /// How often a timed phase's series and the host monitors are taken: "auto" (100 ms, 1 s
    /// past a minute), "off", or a duration ("250ms").
    pub interval: Option<Spanned<String>>,
    /// How many more times a sample the host disturbed (CPU steal, another process's I/O on
    /// its disk) is run, the last attempt kept (default 0).
    pub repeat_disturbed: Option<Spanned<i64>>,
    /// An existing directory to run the workloads in, instead of filesystems fsbench makes
    /// (`fsbench run --dir` writes it): every configuration is that directory's filesystem.
    pub dir: Option<Spanned<String>>,
    pub device: Option<DeviceFile>,
    /// Named platforms: where the configurations run (the device's place, the CPU's share).
    #[serde(default)]
    pub platforms: BTreeMap<Spanned<String>, PlatformFile>,
    /// Named aging specs (`[aging.NAME]`): how a filesystem is aged before its samples.
    #[serde(default)]
    pub aging: BTreeMap<Spanned<String>, AgingTable>,
    /// The ages the configurations run at: `fresh` and names of aging specs (default: fresh and
    /// every aging spec).
    #[serde(default)]
    pub ages: Vec<Spanned<String>>,
    #[serde(default)]
    pub filesystems: Vec<FilesystemFile>,
    #[serde(default)]
    pub workloads: Vec<WorkloadTable>,
    #[serde(default)]
    pub include: Vec<RuleFile>,
    #[serde(default)]
    pub exclude: Vec<RuleFile>,
    /// The study's published figures, each set beside one result of the run (a study's
    /// profile; `fsbench_model::published` says every key).
    #[serde(default)]
    pub published: Vec<Spanned<Published>>,
    /// The study's claims, one configuration against another.
    #[serde(default)]
    pub claims: Vec<Spanned<Claim>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceFile {
    /// Size of the sparse image ("4g"), of each member's for an array.
    pub image: Option<Spanned<String>>,
    /// A real block device instead of an image ("/dev/sdb"; an array's members: "/dev/sdb,/dev/sdc").
    pub block: Option<Spanned<String>>,
    pub destroy_data_on: Option<Spanned<String>>,
    pub loop_buffered: Option<bool>,
    /// Where the kernel has no md: `"unsupported"` (the default: the cases on md arrays end
    /// so, saying why) or `"one-device"` (each runs on one image of the array's total size).
    pub without_md: Option<Spanned<String>>,
}

/// One `[platforms.NAME]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlatformFile {
    /// The loop image lives in memory (a tmpfs) instead of the work directory's disk.
    pub ram: Option<bool>,
    /// The workload's processes get at most this share of the machine's CPU time (a cgroup CPU
    /// quota), in percent.
    pub cpu_percent: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilesystemFile {
    pub name: Spanned<String>,
    /// Named mkfs option sets: `{ default = "", big-inodes = "-I 512" }`.
    pub mkfs_options: Option<OptionSets>,
    /// Named mount option sets: `{ default = "", noatime = "noatime" }`.
    pub mount_options: Option<OptionSets>,
    /// Several devices as one for every case of this table: `"raid0:2"` (the filesystem's own
    /// layout: btrfs, zfs), `"md-raid0:8,chunk=64k"` (md under any filesystem).
    pub array: Option<Spanned<String>>,
}

/// Named option sets, each name with its span (the names are checked after parsing).
pub type OptionSets = BTreeMap<Spanned<String>, String>;

/// One `[aging.NAME]` table: its keys (`fill`, `sizes`, ...) with their spans, each read by
/// `fsbench_testbed::aging::AgingSpec::set`.
pub type AgingTable = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

/// One workload as written: its keys with their spans. `kind` picks the settings type that
/// reads the rest (the workload registry), `name` is the plan's; errors point at the key.
pub type WorkloadTable = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

/// An include or exclude rule: a case matches when every given key equals its value.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    pub filesystem: Option<Spanned<String>>,
    pub mkfs_options: Option<Spanned<String>>,
    pub mount_options: Option<Spanned<String>>,
    pub scheduler: Option<Spanned<String>>,
    pub platform: Option<Spanned<String>>,
    pub age: Option<Spanned<String>>,
    pub cache: Option<Spanned<String>>,
    pub workload: Option<Spanned<String>>,
}
