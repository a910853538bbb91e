//! NILFS2 (nilfs-tools). Mounted through mount(8), whose helper starts the `nilfs_cleanerd`
//! garbage collector as a real mount does. nilfs-tools has no offline checker.

use super::{dev, mkfs_cmd, Filesystem, Tool};
use crate::system::Cmd;
use std::path::Path;

pub struct Nilfs2;

impl Filesystem for Nilfs2 {
    fn name(&self) -> &'static str {
        "nilfs2"
    }
    fn kernel_name(&self) -> &'static str {
        "nilfs2"
    }
    fn tools(&self) -> Vec<Tool> {
        ["mkfs.nilfs2", "nilfs-tune"]
            .map(|program| Tool {
                program,
                package: "nilfs-tools",
            })
            .to_vec()
    }
    fn min_device_bytes(&self) -> u64 {
        128 << 20
    }
    fn mkfs(&self, device: &Path, user_options: &[String]) -> Cmd {
        mkfs_cmd("mkfs.nilfs2", &["-f", "-q"], &[], user_options, device)
    }
    fn fsck(&self, _device: &Path) -> Option<Cmd> {
        None
    }
    fn versions(&self) -> Vec<Cmd> {
        vec![Cmd::new("mkfs.nilfs2").arg("-V")]
    }
    fn readback(&self, device: &Path) -> Option<Cmd> {
        Some(Cmd::new("nilfs-tune").arg("-l").arg(dev(device)))
    }
}
