//! tmpfs: memory only, the no-device upper bound for metadata (not for buffered data: large
//! folios make cached reads faster on ext4 and xfs). Its size comes from the device size.

use super::{Filesystem, Lifecycle, Tool};
use crate::system::Cmd;
use std::path::Path;

pub struct Tmpfs;

impl Filesystem for Tmpfs {
    fn name(&self) -> &'static str {
        "tmpfs"
    }
    fn kernel_name(&self) -> &'static str {
        "tmpfs"
    }
    fn tools(&self) -> Vec<Tool> {
        vec![Tool {
            program: "mount",
            package: "mount",
        }]
    }
    fn lifecycle(&self) -> Lifecycle {
        Lifecycle::Memory
    }
    fn min_device_bytes(&self) -> u64 {
        0
    }
    fn mkfs(&self, _device: &Path, _user_options: &[String]) -> Cmd {
        Cmd::new("true")
    }
    fn fsck(&self, _device: &Path) -> Option<Cmd> {
        None
    }
    fn versions(&self) -> Vec<Cmd> {
        Vec::new()
    }
    fn readback(&self, _device: &Path) -> Option<Cmd> {
        None
    }
}
