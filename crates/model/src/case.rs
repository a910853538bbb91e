//! What a case is configured as, as every stage reads it: the plan makes it, the store keeps it
//! (as JSON), the report shows it — one type, never read back by column name. And what a
//! workload's figures are ranked among ([`Category`]), which each workload declares.

use crate::{CachePolicy, CaseAxis, DEFAULT_SCHEDULER};
use serde::{Deserialize, Serialize};

/// The platform a plan that names none runs on: the `[device]` as given, the whole CPU.
pub const DEFAULT_PLATFORM: &str = "default";

fn default_platform() -> String {
    DEFAULT_PLATFORM.into()
}

/// The age of a filesystem made just before its sample (every case of a plan without aging).
pub const FRESH: &str = "fresh";

fn fresh() -> String {
    FRESH.into()
}

fn is_fresh(age: &str) -> bool {
    age == FRESH
}

/// What every output and report says, once, of a run whose md arrays ran on one device each
/// ([`CaseConfig::one_device_for`]).
pub const NO_MD: &str = "no md here: one device, not RAID 0";

/// The configuration half of a case: filesystem x mkfs option set x mount option set x
/// scheduler x platform x age x cache policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseConfig {
    pub filesystem: String,
    pub mkfs_set: String,
    #[serde(default)]
    pub mkfs_options: String,
    pub mount_set: String,
    #[serde(default)]
    pub mount_options: String,
    /// Several devices as one (`raid0:2`, `md-raid0:8,chunk=64k`; docs/plans.md); None: one
    /// device. Part of the filesystem's table, so its cases' keys are as without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<String>,
    /// The md array the plan asked for where this host has no md (`[device] without_md =
    /// "one-device"`): the case runs on one device of the array's total size in its place
    /// (`array` is then None), and every report says "no md here: one device, not RAID 0".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_device_for: Option<String>,
    #[serde(default)]
    pub scheduler: Option<String>,
    /// The platform's name (`default` when the plan names none) and what it sets.
    #[serde(default = "default_platform")]
    pub platform: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub image_in_ram: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_percent: Option<f64>,
    /// `fresh`, or the name of the plan's aging spec the filesystem is aged by (its spec is
    /// the plan's, and each sample's target read-back holds what the aging did).
    #[serde(default = "fresh", skip_serializing_if = "is_fresh")]
    pub age: String,
    pub cache: CachePolicy,
}

impl CaseConfig {
    /// The configuration's value on one axis (the scheduler's is `default` when it sets none);
    /// None for the workload, which is not configuration.
    pub fn value(&self, axis: CaseAxis) -> Option<String> {
        Some(match axis {
            CaseAxis::Filesystem => self.filesystem.clone(),
            CaseAxis::MkfsSet => self.mkfs_set.clone(),
            CaseAxis::MountSet => self.mount_set.clone(),
            CaseAxis::Scheduler => self
                .scheduler
                .clone()
                .unwrap_or_else(|| DEFAULT_SCHEDULER.into()),
            CaseAxis::Platform => self.platform.clone(),
            CaseAxis::Age => self.age.clone(),
            CaseAxis::Cache => self.cache.name().to_string(),
            CaseAxis::Workload => return None,
        })
    }
}

/// What a workload's figures measure, for per-category rankings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Bytes per second: the matrix, the client load.
    Throughput,
    /// Metadata loops and small-file mixes.
    Metadata,
    /// Whole tasks (untar, build, ...).
    Tasks,
}

impl Category {
    pub const ALL: [Category; 3] = [Category::Throughput, Category::Metadata, Category::Tasks];

    pub fn name(self) -> &'static str {
        match self {
            Category::Throughput => "throughput",
            Category::Metadata => "metadata",
            Category::Tasks => "tasks",
        }
    }

    pub fn parse(text: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.name() == text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Configurations stored by earlier versions (no platform, no option strings) still read.
    #[test]
    fn a_stored_configuration_reads_back_with_what_it_lacks_defaulted() {
        let old: CaseConfig = serde_json::from_str(
            r#"{"filesystem":"ext4","mkfs_set":"default","mount_set":"noatime","scheduler":null,"cache":"warm"}"#,
        )
        .unwrap();
        assert_eq!(old.platform, DEFAULT_PLATFORM);
        assert_eq!(old.age, FRESH);
        assert_eq!(old.value(CaseAxis::MountSet).as_deref(), Some("noatime"));
        assert_eq!(old.value(CaseAxis::Scheduler).as_deref(), Some("default"));
        assert_eq!(old.value(CaseAxis::Workload), None);
        let text = serde_json::to_string(&old).unwrap();
        assert!(
            !text.contains("image_in_ram")
                && !text.contains("cpu_percent")
                && !text.contains("array")
                && !text.contains("one_device_for")
                && !text.contains("age")
        );
        assert_eq!(serde_json::from_str::<CaseConfig>(&text).unwrap(), old);
    }
}
