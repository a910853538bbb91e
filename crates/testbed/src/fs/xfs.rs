//! XFS (xfsprogs). `xfs_repair -n` checks without changing anything.

use super::{dev, mkfs_cmd, number_after, Filesystem, FreeSpaceProbe, Tool};
use crate::aging::FreeSpace;
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
    /// `xfs_db -r` on the device: the block size, then `freesp -s`'s totals.
    fn free_space(&self, device: &Path) -> Option<FreeSpaceProbe> {
        Some(FreeSpaceProbe {
            cmd: Cmd::new("xfs_db")
                .args(["-r", "-c", "sb 0", "-c", "p blocksize", "-c", "freesp -s"])
                .arg(dev(device)),
            read: read_freesp,
        })
    }
}

fn read_freesp(text: &str) -> FreeSpace {
    let block = number_after(text, "blocksize =");
    FreeSpace {
        free_extents: number_after(text, "total free extents"),
        free_bytes: number_after(text, "total free blocks")
            .zip(block)
            .map(|(n, b)| n * b),
        ..FreeSpace::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freesp_is_read() {
        let report = read_freesp(
            "blocksize = 4096\n   from      to extents  blocks    pct\n      1       1      16      16   0.02\n  16384   25600       3   76756  89.27\ntotal free extents 21\ntotal free blocks 85984\naverage free extent size 4094.48\n",
        );
        assert_eq!(report.free_extents, Some(21));
        assert_eq!(report.free_bytes, Some(85_984 * 4096));
    }
}
