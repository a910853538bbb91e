//! ReiserFS 3 (reiserfsprogs); removed from mainline Linux in 6.13. `reiserfsck --check`
//! checks without changing anything.

use super::{dev, mkfs_cmd, Filesystem, Tool};
use crate::system::Cmd;
use std::path::Path;

pub struct Reiserfs;

impl Filesystem for Reiserfs {
    fn name(&self) -> &'static str {
        "reiserfs"
    }
    fn kernel_name(&self) -> &'static str {
        "reiserfs"
    }
    fn tools(&self) -> Vec<Tool> {
        ["mkfs.reiserfs", "reiserfsck", "debugreiserfs"]
            .map(|program| Tool {
                program,
                package: "reiserfsprogs",
            })
            .to_vec()
    }
    fn min_device_bytes(&self) -> u64 {
        64 << 20
    }
    fn mkfs(&self, device: &Path, user_options: &[String]) -> Cmd {
        mkfs_cmd(
            "mkfs.reiserfs",
            &["-q", "-f", "-f"],
            &[],
            user_options,
            device,
        )
    }
    fn fsck(&self, device: &Path) -> Option<Cmd> {
        Some(
            Cmd::new("reiserfsck")
                .args(["--check", "--yes", "-q"])
                .arg(dev(device)),
        )
    }
    fn versions(&self) -> Vec<Cmd> {
        vec![Cmd::new("mkfs.reiserfs").arg("-V")]
    }
    fn readback(&self, device: &Path) -> Option<Cmd> {
        Some(Cmd::new("debugreiserfs").arg(dev(device)))
    }
}
