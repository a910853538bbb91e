//! JFS (jfsutils). `jfs_fsck -n` checks without changing anything.

use super::{dev, mkfs_cmd, Filesystem, Tool};
use crate::system::Cmd;
use std::path::Path;

pub struct Jfs;

impl Filesystem for Jfs {
    fn name(&self) -> &'static str {
        "jfs"
    }
    fn kernel_name(&self) -> &'static str {
        "jfs"
    }
    fn tools(&self) -> Vec<Tool> {
        ["mkfs.jfs", "jfs_fsck", "jfs_tune"]
            .map(|program| Tool {
                program,
                package: "jfsutils",
            })
            .to_vec()
    }
    fn min_device_bytes(&self) -> u64 {
        16 << 20
    }
    fn mkfs(&self, device: &Path, user_options: &[String]) -> Cmd {
        mkfs_cmd("mkfs.jfs", &["-q"], &[], user_options, device)
    }
    fn fsck(&self, device: &Path) -> Option<Cmd> {
        Some(Cmd::new("jfs_fsck").args(["-n", "-f"]).arg(dev(device)))
    }
    fn versions(&self) -> Vec<Cmd> {
        vec![Cmd::new("mkfs.jfs").arg("-V")]
    }
    fn readback(&self, device: &Path) -> Option<Cmd> {
        Some(Cmd::new("jfs_tune").arg("-l").arg(dev(device)))
    }
}
