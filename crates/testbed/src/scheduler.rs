//! The block I/O scheduler ("elevator") of the device under a filesystem: read, set (with the
//! legacy names mapped to their blk-mq successors), and restored afterwards.

use crate::system::System;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Legacy single-queue names and the blk-mq scheduler that replaced each.
const LEGACY: [(&str, &str, &str); 3] = [
    ("noop", "none", "noop became none in blk-mq kernels"),
    (
        "deadline",
        "mq-deadline",
        "deadline became mq-deadline in blk-mq kernels",
    ),
    (
        "cfq",
        "bfq",
        "cfq was removed in Linux 5.0; bfq is its closest successor",
    ),
];

/// The schedulers a device offers and the one in force, from
/// `/sys/block/<dev>/queue/scheduler` ("[mq-deadline] kyber bfq none").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchedulerState {
    pub available: Vec<String>,
    pub current: String,
}

pub fn parse(text: &str) -> SchedulerState {
    let mut current = String::new();
    let available = text
        .split_whitespace()
        .map(|word| {
            if let Some(inner) = word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
                current = inner.to_string();
                inner.to_string()
            } else {
                word.to_string()
            }
        })
        .collect();
    SchedulerState { available, current }
}

/// The sysfs scheduler attribute of a block device node (a partition uses its disk's queue).
pub fn sysfs_path(sys: &dyn System, device: &Path) -> Option<PathBuf> {
    let name = device.file_name()?.to_str()?;
    let own = PathBuf::from(format!("/sys/class/block/{name}/queue/scheduler"));
    if sys.read_file(&own).is_ok() {
        return Some(own);
    }
    // A partition: /sys/class/block/sda1 links into .../block/sda/sda1.
    let resolved = std::fs::canonicalize(format!("/sys/class/block/{name}")).ok()?;
    let parent = resolved.parent()?.join("queue/scheduler");
    sys.read_file(&parent).is_ok().then_some(parent)
}

/// The sysfs scheduler attribute of the disk holding `path` (for a loop device's backing file).
pub fn sysfs_path_of_file(path: &Path) -> Option<PathBuf> {
    let attribute = crate::disk::disk_of_file(path)?.join("queue/scheduler");
    attribute.exists().then_some(attribute)
}

/// A scheduler name as the user typed it, resolved against what the device offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolved {
    pub name: String,
    /// Why the name differs from what was asked (legacy name), if it does.
    pub note: Option<String>,
}

/// Maps legacy names, then checks the device offers the scheduler.
pub fn resolve(requested: &str, state: &SchedulerState) -> Result<Resolved, String> {
    let (name, note) = match LEGACY.iter().find(|(old, _, _)| *old == requested) {
        Some((old, new, why)) if !state.available.iter().any(|a| a == old) => {
            (new.to_string(), Some(format!("{old} -> {new}: {why}")))
        }
        _ => (requested.to_string(), None),
    };
    if state.available.contains(&name) {
        Ok(Resolved { name, note })
    } else {
        Err(format!(
            "scheduler '{name}' is not offered by this device (available: {})",
            state.available.join(" ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_sysfs_list() {
        let s = parse("[none] mq-deadline kyber bfq \n");
        assert_eq!(s.current, "none");
        assert_eq!(s.available, ["none", "mq-deadline", "kyber", "bfq"]);
        assert_eq!(parse("none [mq-deadline]").current, "mq-deadline");
    }

    #[test]
    fn legacy_names_map_with_a_note() {
        let s = parse("[none] mq-deadline kyber bfq");
        let r = resolve("deadline", &s).unwrap();
        assert_eq!(r.name, "mq-deadline");
        assert!(r.note.unwrap().contains("deadline -> mq-deadline"));
        assert_eq!(resolve("noop", &s).unwrap().name, "none");
        assert_eq!(resolve("cfq", &s).unwrap().name, "bfq");
        assert_eq!(resolve("kyber", &s).unwrap().note, None);
        let e = resolve("anticipatory", &s).unwrap_err();
        assert!(e.contains("available: none mq-deadline kyber bfq"), "{e}");
    }
}
