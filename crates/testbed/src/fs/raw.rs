//! The bare device: no filesystem at all, the baseline a filesystem's result is set against
//! ("ext4 delivers 93 % of its device's random reads"). The device is made as for any
//! filesystem (an image on a loop device, or a guarded real device), its scheduler set, and a
//! workload that can run on a block device (`Workload::ON_DEVICE`: the io workload) is given
//! the device itself instead of a directory. Nothing is made on it, mounted or checked.

use super::{Build, Capabilities, Filesystem, Tool};
use crate::error::missing_tool;
use crate::error::TargetError;
use crate::system::Cmd;
use std::path::Path;

pub struct Raw;

impl Filesystem for Raw {
    fn name(&self) -> &'static str {
        "raw"
    }
    /// No filesystem: nothing the kernel must have.
    fn kernel_name(&self) -> &'static str {
        ""
    }
    fn tools(&self) -> Vec<Tool> {
        Vec::new()
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            filesystem: false,
            prepare_estimate_ns: 500_000_000,
            ..Capabilities::BLOCK_DEVICE
        }
    }
    /// Nothing to make: the device is ready as it is.
    fn create(&self, _t: &mut dyn Build<'_>, _stop: &dyn Fn() -> bool) -> Result<(), TargetError> {
        Ok(())
    }
    /// No filesystem to remount: the device's own page cache is written back and dropped
    /// (`blockdev --flushbufs`, the BLKFLSBUF ioctl), which is what a remount does to a
    /// filesystem's.
    fn remount(&self, t: &mut dyn Build<'_>) -> Result<Option<&'static str>, TargetError> {
        let device = t.device().map(Path::to_path_buf).unwrap_or_default();
        let cmd = Cmd::new("blockdev")
            .arg("--flushbufs")
            .arg(device.display().to_string());
        let out = t.sys().run(&cmd).map_err(|e| missing_tool(&cmd, e))?;
        if !out.success() {
            return Err(TargetError::command(
                "remount",
                &cmd,
                &out,
                "the device may be in use",
            ));
        }
        Ok(Some(
            "no filesystem to remount: the device's page cache was flushed and dropped \
             (blockdev --flushbufs)",
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
