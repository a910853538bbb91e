//! Btrfs (btrfs-progs). `btrfs check --readonly` checks without changing anything.

use super::{dev, mkfs_cmd, Filesystem, Tool};
use crate::system::Cmd;
use std::path::Path;

pub struct Btrfs;

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
