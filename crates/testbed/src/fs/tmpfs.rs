//! tmpfs: memory only, the no-device upper bound for metadata (not for buffered data: large
//! folios make cached reads faster on ext4 and xfs). Its size comes from the device size; it
//! has no mkfs, no scheduler and no fsck, and its cache can be neither dropped nor remounted.

use super::{Build, Capabilities, Filesystem, Storage, Tool};
use crate::error::TargetError;
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
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            storage: Storage::Memory,
            undroppable_cache: Some(
                "tmpfs keeps its files in the page cache: they cannot be dropped",
            ),
            prepare_estimate_ns: 200_000_000,
            ..Capabilities::BLOCK_DEVICE
        }
    }
    /// `mount -t tmpfs -o size=N fsbench-tmpfs MOUNTPOINT`: the size is the image size.
    fn create(&self, t: &mut dyn Build<'_>, _stop: &dyn Fn() -> bool) -> Result<(), TargetError> {
        t.set_mount_source("fsbench-tmpfs");
        let size = format!("size={}", t.info().device.size_bytes);
        t.mount(&[size])
    }
    fn remount(&self, _t: &mut dyn Build<'_>) -> Result<Option<&'static str>, TargetError> {
        Ok(Some(
            "remounting tmpfs would lose its files: nothing was done",
        ))
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
