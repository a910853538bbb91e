//! F2FS (f2fs-tools). `fsck.f2fs --dry-run` checks without changing anything.

use super::{dev, mkfs_cmd, Filesystem, Tool};
use crate::system::Cmd;
use std::path::Path;

pub struct F2fs;

impl Filesystem for F2fs {
    fn name(&self) -> &'static str {
        "f2fs"
    }
    fn kernel_name(&self) -> &'static str {
        "f2fs"
    }
    fn tools(&self) -> Vec<Tool> {
        ["mkfs.f2fs", "fsck.f2fs", "dump.f2fs"]
            .map(|program| Tool {
                program,
                package: "f2fs-tools",
            })
            .to_vec()
    }
    fn min_device_bytes(&self) -> u64 {
        64 << 20
    }
    fn mkfs(&self, device: &Path, user_options: &[String]) -> Cmd {
        mkfs_cmd("mkfs.f2fs", &["-f"], &[], user_options, device)
    }
    fn fsck(&self, device: &Path) -> Option<Cmd> {
        Some(Cmd::new("fsck.f2fs").arg("--dry-run").arg(dev(device)))
    }
    fn versions(&self) -> Vec<Cmd> {
        vec![Cmd::new("mkfs.f2fs").arg("-V")]
    }
    fn readback(&self, device: &Path) -> Option<Cmd> {
        Some(Cmd::new("dump.f2fs").arg(dev(device)))
    }
}
