//! The vocabulary every stage of fsbench shares, defined once: how a sample, a workload, a run
//! and a command ended ([`Outcome`]), the state of a stored run ([`RunState`]), the axes of
//! a campaign's cases ([`CaseAxis`]) and their configuration ([`case`]: `CaseConfig`, the
//! `Category` a workload ranks in), and typed results ([`result`]: dimensions, units,
//! directions, measurements), what a sample measured over time ([`series`]: per-interval
//! figures, the host monitors' series, the verdicts on them), which process owns something
//! ([`owner`]: a run, a ledger), and a study's published figures and claims as a plan carries
//! them ([`published`]), the records of where a run happened ([`records`]: the host and its
//! clock) and of what it ran on ([`target`]: the target's read-back; [`aging`]: how it was
//! aged), and sizes and durations as people type them ([`units`]).
//! Depends on no other fsbench crate.

pub mod aging;
pub mod case;
pub mod owner;
pub mod published;
pub mod records;
pub mod result;
pub mod series;
pub mod target;
pub mod units;

pub use case::{CaseConfig, Category, DEFAULT_PLATFORM, FRESH, NO_MD};

pub use result::{
    metric_heading, metric_label, size_label, Amount, Dim, DimKind, DimValue, Dims, Direction,
    Measurement, Merge, MetricDef, ResultRecord, Stat, Sweep, Unit,
};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How something measured ended: a sample of a campaign, a workload run, a one-case command.
/// Every outcome is a result, shown in every report with its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Measured to the end.
    Ok,
    /// The host cannot run the configuration (kernel, tool, rejected option).
    Unsupported,
    /// The target or the workload failed; the reason says how.
    Failed,
    /// The workload ran past its timeout and was stopped.
    Timeout,
    /// Stopped by Ctrl-C or SIGTERM; what finished before is kept.
    Interrupted,
    /// Verified data read back other than it was written; the reason names the file, the
    /// first bad offset, what was expected and what was found.
    Corrupt,
}

impl Outcome {
    pub const ALL: [Outcome; 6] = [
        Outcome::Ok,
        Outcome::Unsupported,
        Outcome::Failed,
        Outcome::Timeout,
        Outcome::Interrupted,
        Outcome::Corrupt,
    ];

    /// The one spelling, in the store, the exports and the reports.
    pub const fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Unsupported => "unsupported",
            Outcome::Failed => "failed",
            Outcome::Timeout => "timeout",
            Outcome::Interrupted => "interrupted",
            Outcome::Corrupt => "corrupt",
        }
    }

    pub fn parse(text: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.name() == text)
    }

    /// The exit code of a command that ended so (README, "Exit codes"): 0, 3, 1, 1, 130, 1.
    pub const fn exit_code(self) -> i32 {
        match self {
            Outcome::Ok => 0,
            Outcome::Unsupported => 3,
            Outcome::Failed | Outcome::Timeout | Outcome::Corrupt => 1,
            Outcome::Interrupted => 130,
        }
    }

    /// How a run of several samples ended, by the README's rule: interrupted first; then
    /// failed if any sample failed or timed out; then unsupported if every sample was; else ok
    /// (unsupported cases beside measured ones are listed, not failures). No samples is ok.
    pub fn of_run(samples: impl IntoIterator<Item = Outcome>) -> Outcome {
        let (mut any, mut all_unsupported, mut failed) = (false, true, false);
        for outcome in samples {
            match outcome {
                Outcome::Interrupted => return Outcome::Interrupted,
                Outcome::Failed | Outcome::Timeout | Outcome::Corrupt => failed = true,
                _ => {}
            }
            any = true;
            all_unsupported &= outcome == Outcome::Unsupported;
        }
        if failed {
            Outcome::Failed
        } else if any && all_unsupported {
            Outcome::Unsupported
        } else {
            Outcome::Ok
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // pad, not write_str: tables align these with width specifiers.
        f.pad(self.name())
    }
}

/// The state of a stored run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunState {
    /// Its owner is measuring (or was, if it is gone: then readers show it as interrupted).
    Running,
    Complete,
    Interrupted,
    /// The campaign itself failed (the store could not take a sample); `--resume` continues.
    Failed,
}

impl RunState {
    pub const ALL: [RunState; 4] = [
        RunState::Running,
        RunState::Complete,
        RunState::Interrupted,
        RunState::Failed,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            RunState::Running => "running",
            RunState::Complete => "complete",
            RunState::Interrupted => "interrupted",
            RunState::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<RunState> {
        RunState::ALL.into_iter().find(|s| s.name() == text)
    }
}

impl fmt::Display for RunState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // pad, not write_str: tables align these with width specifiers.
        f.pad(self.name())
    }
}

/// One axis of a campaign's case matrix: a case is one value on each, and its stable key is
/// those values joined by dots in this order (`ext4.default.noatime.mq-deadline.warm.matrix`;
/// the platform only when the plan names platforms: `ext4.default.default.default.ram.warm.matrix`;
/// the age only when the case runs on an aged filesystem: `ext4.default.default.default.aged.warm.matrix`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CaseAxis {
    Filesystem,
    /// The name of the mkfs option set (`big-inodes`), not the options themselves.
    MkfsSet,
    /// The name of the mount option set.
    MountSet,
    Scheduler,
    /// The name of the platform (the device and CPU the configuration runs on); `default` when
    /// the plan names none.
    Platform,
    /// The state the filesystem starts in: `fresh` (made just before), or the name of the
    /// plan's aging spec (`[aging.NAME]`) it was aged by.
    Age,
    Cache,
    /// The workload's name in the plan.
    Workload,
}

/// What a case without a scheduler of its own shows on the scheduler axis (the device keeps
/// whatever it had; tmpfs has none).
pub const DEFAULT_SCHEDULER: &str = "default";

impl CaseAxis {
    /// Every axis, in the order of a case key.
    pub const ALL: [CaseAxis; 8] = [
        CaseAxis::Filesystem,
        CaseAxis::MkfsSet,
        CaseAxis::MountSet,
        CaseAxis::Scheduler,
        CaseAxis::Platform,
        CaseAxis::Age,
        CaseAxis::Cache,
        CaseAxis::Workload,
    ];

    /// The key of a plan's include/exclude rule on this axis (docs/plans.md).
    pub const fn rule_key(self) -> &'static str {
        match self {
            CaseAxis::Filesystem => "filesystem",
            CaseAxis::MkfsSet => "mkfs_options",
            CaseAxis::MountSet => "mount_options",
            CaseAxis::Scheduler => "scheduler",
            CaseAxis::Platform => "platform",
            CaseAxis::Age => "age",
            CaseAxis::Cache => "cache",
            CaseAxis::Workload => "workload",
        }
    }

    /// The column of exports, and the field of a stored case's configuration (the workload's
    /// name is in its own JSON, under `name`).
    pub const fn column(self) -> &'static str {
        match self {
            CaseAxis::Filesystem => "filesystem",
            CaseAxis::MkfsSet => "mkfs_set",
            CaseAxis::MountSet => "mount_set",
            CaseAxis::Scheduler => "scheduler",
            CaseAxis::Platform => "platform",
            CaseAxis::Age => "age",
            CaseAxis::Cache => "cache",
            CaseAxis::Workload => "workload",
        }
    }

    /// How summaries label a configuration's value on this axis (`mount=noatime`).
    pub const fn label_prefix(self) -> &'static str {
        match self {
            CaseAxis::Filesystem | CaseAxis::Workload => "",
            CaseAxis::MkfsSet => "mkfs=",
            CaseAxis::MountSet => "mount=",
            CaseAxis::Scheduler => "sched=",
            CaseAxis::Platform => "on=",
            CaseAxis::Age => "age=",
            CaseAxis::Cache => "cache=",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for o in Outcome::ALL {
            assert_eq!(Outcome::parse(o.name()), Some(o));
            assert_eq!(serde_json::to_value(o).unwrap(), o.name());
        }
        for s in RunState::ALL {
            assert_eq!(RunState::parse(s.name()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
        assert_eq!(Outcome::parse("complete"), None);
        // Tables align these with width specifiers.
        assert_eq!(format!("{:<11}|", RunState::Complete), "complete   |");
        assert_eq!(format!("{:>8}|", Outcome::Ok), "      ok|");
    }

    #[test]
    fn case_axes_have_distinct_keys_columns_and_a_fixed_order() {
        let columns = CaseAxis::ALL.map(CaseAxis::column);
        assert_eq!(
            columns,
            [
                "filesystem",
                "mkfs_set",
                "mount_set",
                "scheduler",
                "platform",
                "age",
                "cache",
                "workload"
            ]
        );
        let rules = CaseAxis::ALL.map(CaseAxis::rule_key);
        let mut unique = rules.to_vec();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), rules.len());
    }

    #[test]
    fn a_run_ends_by_the_documented_rule() {
        use Outcome::*;
        assert_eq!(Outcome::of_run([]), Ok);
        assert_eq!(Outcome::of_run([Ok, Unsupported]), Ok);
        assert_eq!(Outcome::of_run([Unsupported, Unsupported]), Unsupported);
        assert_eq!(Outcome::of_run([Ok, Timeout, Unsupported]), Failed);
        assert_eq!(Outcome::of_run([Failed, Interrupted]), Interrupted);
        assert_eq!(
            [Ok, Unsupported, Failed, Timeout, Interrupted].map(Outcome::exit_code),
            [0, 3, 1, 1, 130]
        );
    }
}

/// The page-cache state a workload starts from: warm (as left), drop (sync + drop_caches),
/// remount (umount + mount), or direct (the workload bypasses the cache with O_DIRECT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CachePolicy {
    Warm,
    Drop,
    Remount,
    Direct,
}

impl CachePolicy {
    pub fn name(self) -> &'static str {
        match self {
            CachePolicy::Warm => "warm",
            CachePolicy::Drop => "drop",
            CachePolicy::Remount => "remount",
            CachePolicy::Direct => "direct",
        }
    }
}

impl fmt::Display for CachePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CachePolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<CachePolicy, String> {
        match s {
            "warm" => Ok(CachePolicy::Warm),
            "drop" | "cold" => Ok(CachePolicy::Drop),
            "remount" => Ok(CachePolicy::Remount),
            "direct" => Ok(CachePolicy::Direct),
            _ => Err(format!(
                "unknown cache policy '{s}': use warm, drop, remount or direct"
            )),
        }
    }
}

/// Serde as text: a value type that is written the same way on the command line, in a plan and
/// in the stored JSON (`"4k..64m"`, `"20ms"`, `"compressible:50"`) gets `Serialize` from its
/// `Display` and `Deserialize` from its `FromStr`, whose error message becomes serde's.
#[macro_export]
macro_rules! text_serde {
    ($($type:ty),+ $(,)?) => {$(
        impl serde::Serialize for $type {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }
        impl<'de> serde::Deserialize<'de> for $type {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    )+};
}
