//! Btrfs (btrfs-progs). `btrfs check --readonly` checks without changing anything. Over
//! several devices (`array = "raid0:2"`) it lays out data (`-d`) and, when asked, metadata
//! (`-m`; else mkfs.btrfs's default for several devices, raid1) itself; `btrfs filesystem
//! show` lists the members it uses.

use super::{dev, mkfs_cmd, Build, Filesystem, FreeSpaceProbe, Tool};
use crate::aging::FreeSpace;
use crate::array::{ArraySpec, Layer};
use crate::system::Cmd;
use std::path::Path;

pub struct Btrfs;

/// The block group profiles mkfs.btrfs takes for `-m`.
const PROFILES: [&str; 9] = [
    "single", "dup", "raid0", "raid1", "raid1c3", "raid1c4", "raid10", "raid5", "raid6",
];

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
    fn array_options(&self, array: &ArraySpec) -> Result<Vec<String>, String> {
        let mut options = vec!["-d".to_string(), array.level.name().to_string()];
        if let Layer::Filesystem {
            metadata: Some(profile),
        } = &array.layer
        {
            if !PROFILES.contains(&profile.as_str()) {
                return Err(format!(
                    "metadata={profile} is not a btrfs profile; use one of {}",
                    PROFILES.join(", ")
                ));
            }
            options.extend(["-m".to_string(), profile.clone()]);
        }
        Ok(options)
    }
    fn list_members(&self, t: &dyn Build<'_>) -> Option<Cmd> {
        Some(
            Cmd::new("btrfs")
                .args(["filesystem", "show"])
                .arg(t.mountpoint().display().to_string()),
        )
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
    /// The free space tree (tree 10): each block group's count of free extents (kept also
    /// where the group stores its free space as bitmaps), and the extents' lengths where it
    /// does not.
    fn free_space(&self, device: &Path) -> Option<FreeSpaceProbe> {
        Some(FreeSpaceProbe {
            cmd: Cmd::new("btrfs")
                .args(["inspect-internal", "dump-tree", "-t", "10"])
                .arg(dev(device)),
            read: read_free_space_tree,
        })
    }
}

/// Sums `free space info extent count N` over the block groups; the bytes and the largest
/// extent from the `FREE_SPACE_EXTENT` keys (`(START FREE_SPACE_EXTENT LENGTH)`), unless a
/// group keeps bitmaps, whose bits this does not read.
fn read_free_space_tree(text: &str) -> FreeSpace {
    let mut extents = 0u64;
    let mut bitmaps = false;
    let mut lengths = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("free space info extent count ") {
            let mut words = rest.split_whitespace();
            extents += words
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
            // flags 1: the group's free space is in bitmaps.
            bitmaps |= words.nth(1).is_some_and(|f| f != "0");
        }
        if let Some(key) = line.split("key (").nth(1) {
            let mut words = key.split_whitespace();
            if words.nth(1) == Some("FREE_SPACE_EXTENT") {
                if let Some(length) = words
                    .next()
                    .and_then(|l| l.trim_end_matches(')').parse().ok())
                {
                    lengths.push(length);
                }
            }
        }
    }
    let whole = !bitmaps;
    FreeSpace {
        free_extents: Some(extents),
        free_bytes: whole.then(|| lengths.iter().sum()),
        largest_bytes: whole.then(|| lengths.iter().copied().max().unwrap_or(0)),
        note: Some(if whole {
            "free space inside the allocated block groups (unallocated device space is not in the free space tree)".into()
        } else {
            "free space inside the allocated block groups; some groups keep it as bitmaps, whose bytes are not counted".into()
        }),
        ..FreeSpace::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_free_space_tree_is_read() {
        let report = read_free_space_tree(
            "free space tree key (FREE_SPACE_TREE ROOT_ITEM 0) \n\titem 0 key (1048576 FREE_SPACE_INFO 4194304) itemoff 16275 itemsize 8\n\t\tfree space info extent count 1 flags 0\n\titem 1 key (1048576 FREE_SPACE_EXTENT 4194304) itemoff 16275 itemsize 0\n\t\tfree space extent\n\titem 6 key (22020096 FREE_SPACE_INFO 8388608) itemoff 16251 itemsize 8\n\t\tfree space info extent count 2 flags 0\n\titem 7 key (22020096 FREE_SPACE_EXTENT 16384) itemoff 16251 itemsize 0\n\titem 8 key (22052864 FREE_SPACE_EXTENT 8355840) itemoff 16251 itemsize 0\n",
        );
        assert_eq!(report.free_extents, Some(3));
        assert_eq!(report.free_bytes, Some(4_194_304 + 16_384 + 8_355_840));
        assert_eq!(report.largest_bytes, Some(8_355_840));
        let bitmaps = read_free_space_tree("\t\tfree space info extent count 7 flags 1\n");
        assert_eq!((bitmaps.free_extents, bitmaps.free_bytes), (Some(7), None));
    }
}
