//! Btrfs (btrfs-progs). `btrfs check --readonly` checks without changing anything. Over
//! several devices (`array = "raid0:2"`) it lays out data (`-d`) and, when asked, metadata
//! (`-m`; else mkfs.btrfs's default for several devices, raid1) itself; `btrfs filesystem
//! show` lists the members it uses.

use super::{dev, mkfs_cmd, Filesystem, Tool};
use crate::array::{ArraySpec, Layer};
use crate::system::Cmd;
use crate::target::Build;
use std::path::Path;

pub struct Btrfs;

/// The block group profiles mkfs.btrfs takes for `-m`.
const PROFILES: [&str; 9] = [
    "single", "dup", "raid0", "raid1", "raid1c3", "raid1c4", "raid10", "raid5", "raid6",
];

impl Filesystem for Btrfs {
    fn name(&self) -> &'static str {
        "btrfs"
    }
    fn kernel_name(&self) -> &'static str {
        "btrfs"
    }
    fn tools(&self) -> Vec<Tool> {
        ["mkfs.btrfs", "btrfs"]
            .map(|program| Tool {
                program,
                package: "btrfs-progs",
            })
            .to_vec()
    }
    fn array_options(&self, array: &ArraySpec) -> Result<Vec<String>, String> {
        let mut options = vec!["-d".to_string(), array.level.name().to_string()];
        if let Layer::Filesystem {
            metadata: Some(profile),
        } = &array.layer
        {
            if !PROFILES.contains(&profile.as_str()) {
                return Err(format!(
                    "metadata={profile} is not a btrfs profile; use one of {}",
                    PROFILES.join(", ")
                ));
            }
            options.extend(["-m".to_string(), profile.clone()]);
        }
        Ok(options)
    }
    fn list_members(&self, t: &Build<'_, '_>) -> Option<Cmd> {
        Some(
            Cmd::new("btrfs")
                .args(["filesystem", "show"])
                .arg(t.mountpoint().display().to_string()),
        )
    }
    fn min_device_bytes(&self) -> u64 {
        128 << 20
    }
    fn mkfs(&self, device: &Path, user_options: &[String]) -> Cmd {
        mkfs_cmd("mkfs.btrfs", &["-f"], &[], user_options, device)
    }
    fn fsck(&self, device: &Path) -> Option<Cmd> {
        Some(
            Cmd::new("btrfs")
                .args(["check", "--readonly"])
                .arg(dev(device)),
        )
    }
    fn versions(&self) -> Vec<Cmd> {
        vec![Cmd::new("mkfs.btrfs").arg("--version")]
    }
    fn readback(&self, device: &Path) -> Option<Cmd> {
        Some(
            Cmd::new("btrfs")
                .args(["inspect-internal", "dump-super"])
                .arg(dev(device)),
        )
    }
}
