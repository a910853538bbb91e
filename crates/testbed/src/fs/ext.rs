//! ext2, ext3 and ext4 (e2fsprogs). Inode tables and the journal are initialised at mkfs time
//! (`lazy_itable_init=0,lazy_journal_init=0`), so no background thread writes during the first
//! minutes of a benchmark; a user's own `-E` options are merged into that one `-E`.

use super::{dev, mkfs_cmd, number_after, Filesystem, FreeSpaceProbe, Tool};
use crate::aging::FreeSpace;
use crate::system::{Cmd, CmdOutput};
use std::path::Path;

pub struct Ext {
    name: &'static str,
    journal: bool,
}

pub const EXT2: Ext = Ext {
    name: "ext2",
    journal: false,
};
pub const EXT3: Ext = Ext {
    name: "ext3",
    journal: true,
};
pub const EXT4: Ext = Ext {
    name: "ext4",
    journal: true,
};

const E2FSPROGS: &str = "e2fsprogs";

impl Ext {
    fn lazy_defaults(&self) -> &'static str {
        if self.journal {
            "lazy_itable_init=0,lazy_journal_init=0"
        } else {
            "lazy_itable_init=0"
        }
    }
}

impl Filesystem for Ext {
    fn name(&self) -> &'static str {
        self.name
    }

    fn kernel_name(&self) -> &'static str {
        self.name
    }

    fn tools(&self) -> Vec<Tool> {
        ["mkfs.ext4", "e2fsck", "dumpe2fs"]
            .map(|program| Tool {
                program: if program == "mkfs.ext4" {
                    match self.name {
                        "ext2" => "mkfs.ext2",
                        "ext3" => "mkfs.ext3",
                        _ => "mkfs.ext4",
                    }
                } else {
                    program
                },
                package: E2FSPROGS,
            })
            .to_vec()
    }

    fn min_device_bytes(&self) -> u64 {
        if self.journal {
            16 << 20
        } else {
            1 << 20
        }
    }

    fn default_mkfs_options(&self) -> Vec<String> {
        vec!["-E".into(), self.lazy_defaults().into()]
    }

    fn mkfs(&self, device: &Path, user_options: &[String]) -> Cmd {
        // mke2fs keeps only the last -E: fold the user's extended options into ours.
        let mut extended = self.lazy_defaults().to_string();
        let mut rest = Vec::new();
        let mut options = user_options.iter();
        while let Some(option) = options.next() {
            if option == "-E" {
                if let Some(value) = options.next() {
                    extended.push(',');
                    extended.push_str(value);
                }
            } else if let Some(value) = option.strip_prefix("-E") {
                extended.push(',');
                extended.push_str(value);
            } else {
                rest.push(option.clone());
            }
        }
        let program = format!("mkfs.{}", self.name);
        mkfs_cmd(&program, &["-F"], &["-E".into(), extended], &rest, device)
    }

    fn fsck(&self, device: &Path) -> Option<Cmd> {
        Some(Cmd::new("e2fsck").args(["-f", "-n"]).arg(dev(device)))
    }

    fn fsck_clean(&self, output: &CmdOutput) -> bool {
        output.status == Some(0)
    }

    fn versions(&self) -> Vec<Cmd> {
        vec![Cmd::new(format!("mkfs.{}", self.name)).arg("-V")]
    }

    fn readback(&self, device: &Path) -> Option<Cmd> {
        Some(Cmd::new("dumpe2fs").arg("-h").arg(dev(device)))
    }

    /// `e2freefrag`: free extents, free blocks and the largest free extent.
    fn free_space(&self, device: &Path) -> Option<FreeSpaceProbe> {
        Some(FreeSpaceProbe {
            cmd: Cmd::new("e2freefrag").arg(dev(device)),
            read: read_e2freefrag,
        })
    }
}

fn read_e2freefrag(text: &str) -> FreeSpace {
    let block = number_after(text, "Blocksize:");
    FreeSpace {
        free_extents: number_after(text, "Num. free extent:"),
        free_bytes: number_after(text, "Free blocks:")
            .zip(block)
            .map(|(n, b)| n * b),
        largest_bytes: number_after(text, "Max. free extent:").map(|kb| kb << 10),
        ..FreeSpace::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e2freefrag_is_read() {
        let report = read_e2freefrag(
            "Device: /dev/loop3\nBlocksize: 1024 bytes\nTotal blocks: 409600\nFree blocks: 373344 (91.1%)\n\nMin. free extent: 205 KB \nMax. free extent: 122848 KB\nAvg. free extent: 28718 KB\nNum. free extent: 13\n",
        );
        assert_eq!(report.free_extents, Some(13));
        assert_eq!(report.free_bytes, Some(373_344 * 1024));
        assert_eq!(report.largest_bytes, Some(122_848 << 10));
    }

    #[test]
    fn user_extended_options_are_merged_not_lost() {
        let cmd = EXT4.mkfs(
            Path::new("/dev/loop1"),
            &[
                "-E".into(),
                "stride=16".into(),
                "-O".into(),
                "^has_journal".into(),
            ],
        );
        assert_eq!(
            cmd.to_string(),
            "mkfs.ext4 -F -E lazy_itable_init=0,lazy_journal_init=0,stride=16 -O ^has_journal /dev/loop1"
        );
        assert_eq!(
            EXT2.mkfs(Path::new("/dev/loop1"), &[]).to_string(),
            "mkfs.ext2 -F -E lazy_itable_init=0 /dev/loop1"
        );
    }
}
