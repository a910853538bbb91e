//! XFS (xfsprogs). `xfs_repair -n` checks without changing anything.

use super::{dev, mkfs_cmd, Filesystem, Tool};
use crate::system::Cmd;
use std::path::Path;

pub struct Xfs;

impl Filesystem for Xfs {
    fn name(&self) -> &'static str {
        "xfs"
    }
    fn kernel_name(&self) -> &'static str {
        "xfs"
    }
    fn tools(&self) -> Vec<Tool> {
        ["mkfs.xfs", "xfs_repair", "xfs_info"]
            .map(|program| Tool {
                program,
                package: "xfsprogs",
            })
            .to_vec()
    }
    fn min_device_bytes(&self) -> u64 {
        300 << 20
    }
    fn mkfs(&self, device: &Path, user_options: &[String]) -> Cmd {
        mkfs_cmd("mkfs.xfs", &["-f"], &[], user_options, device)
    }
    fn fsck(&self, device: &Path) -> Option<Cmd> {
        Some(Cmd::new("xfs_repair").arg("-n").arg(dev(device)))
    }
    fn versions(&self) -> Vec<Cmd> {
        vec![Cmd::new("mkfs.xfs").arg("-V")]
    }
    fn readback(&self, device: &Path) -> Option<Cmd> {
        Some(Cmd::new("xfs_info").arg(dev(device)))
    }
}
