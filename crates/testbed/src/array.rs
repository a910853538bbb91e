//! Several devices as one target (`array = "raid0:2"`): the layout as written in plans and on
//! the command line, and what is the same whoever makes the array — md RAID under any
//! filesystem (`md-raid0:8,chunk=64k`, made with mdadm where the kernel has md), or the
//! filesystem's own over its members (btrfs's `-d raid0`, a zfs pool striped over its vdevs;
//! each filesystem says how through [`crate::fs::Filesystem::array_options`], and whether it
//! can is [`crate::fs::check_layout`]) — and the read-back that checks every member made is one
//! the array lists. It imports nothing of `fs`: the filesystems build on it.

use crate::system::{Cmd, System};
use fsbench_measure::units::{parse_size, size_label};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// How the data is laid over the members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Striped: each member holds every N-th chunk.
    Raid0,
    /// Mirrored: every member holds all of it.
    Raid1,
    /// Striped over mirrored pairs.
    Raid10,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Raid0 => "raid0",
            Level::Raid1 => "raid1",
            Level::Raid10 => "raid10",
        }
    }

    /// The md level number (`mdadm --level=N`).
    pub fn md_level(self) -> u32 {
        match self {
            Level::Raid0 => 0,
            Level::Raid1 => 1,
            Level::Raid10 => 10,
        }
    }
}

impl FromStr for Level {
    type Err = String;
    fn from_str(text: &str) -> Result<Level, String> {
        match text {
            "raid0" => Ok(Level::Raid0),
            "raid1" => Ok(Level::Raid1),
            "raid10" => Ok(Level::Raid10),
            other => Err(format!(
                "unknown RAID level '{other}'; use raid0, raid1 or raid10"
            )),
        }
    }
}

/// Who makes the array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layer {
    /// The filesystem itself, over its members (btrfs, zfs); `metadata` is btrfs's `-m`
    /// profile (None: mkfs.btrfs's default for several devices).
    Filesystem { metadata: Option<String> },
    /// md (Linux software RAID) under the filesystem; `chunk_bytes` is mdadm's `--chunk`
    /// (None: mdadm's default).
    Md { chunk_bytes: Option<u64> },
}

/// N devices as one target: `[md-]LEVEL:N[,chunk=SIZE][,metadata=PROFILE]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArraySpec {
    pub level: Level,
    /// How many members (images, or real devices) the array has: at least 2.
    pub devices: u32,
    pub layer: Layer,
}

impl ArraySpec {
    /// Whether md makes it (else the filesystem does).
    pub fn by_md(&self) -> bool {
        matches!(self.layer, Layer::Md { .. })
    }
}

/// The syntax, for messages.
pub const SYNTAX: &str = "[md-]LEVEL:N with LEVEL raid0, raid1 or raid10 and N members, then ,chunk=SIZE (md) or ,metadata=PROFILE (btrfs): raid0:2, md-raid0:8,chunk=64k";

impl FromStr for ArraySpec {
    type Err = String;
    fn from_str(text: &str) -> Result<ArraySpec, String> {
        let text = text.trim();
        let mut parts = text.split(',');
        let head = parts.next().unwrap_or("");
        let (md, head) = match head.strip_prefix("md-") {
            Some(rest) => (true, rest),
            None => (false, head),
        };
        let Some((level, count)) = head.split_once(':') else {
            return Err(format!("'{text}' is not an array layout: {SYNTAX}"));
        };
        let level: Level = level.parse()?;
        let devices: u32 = count
            .parse()
            .map_err(|_| format!("'{count}' is not a number of members in '{text}': {SYNTAX}"))?;
        if devices < 2 {
            return Err(format!(
                "an array has at least 2 members, not {devices} (one device needs no array)"
            ));
        }
        let (mut chunk_bytes, mut metadata) = (None, None);
        for part in parts {
            match part.split_once('=') {
                Some(("chunk", size)) if md => {
                    let bytes = parse_size(size).map_err(|e| format!("chunk: {e}"))?;
                    if bytes < 4096 || bytes % 4096 != 0 {
                        return Err(format!(
                            "chunk: {size} is not a multiple of 4 KiB (md's chunk is whole pages)"
                        ));
                    }
                    chunk_bytes = Some(bytes);
                }
                Some(("chunk", _)) => {
                    return Err(format!(
                        "chunk is md's setting: write md-{}:{devices},chunk=... (btrfs stripes in 64 KiB, zfs by record)",
                        level.name()
                    ))
                }
                Some(("metadata", profile)) if !md && !profile.is_empty() => {
                    metadata = Some(profile.to_string())
                }
                Some(("metadata", _)) => {
                    return Err("metadata is btrfs's -m profile; md has none".to_string())
                }
                _ => return Err(format!("unknown array setting '{part}': {SYNTAX}")),
            }
        }
        Ok(ArraySpec {
            level,
            devices,
            layer: if md {
                Layer::Md { chunk_bytes }
            } else {
                Layer::Filesystem { metadata }
            },
        })
    }
}

impl fmt::Display for ArraySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let md = if self.by_md() { "md-" } else { "" };
        write!(f, "{md}{}:{}", self.level.name(), self.devices)?;
        match &self.layer {
            Layer::Md {
                chunk_bytes: Some(bytes),
            } => write!(f, ",chunk={}", size_label(*bytes)),
            Layer::Filesystem {
                metadata: Some(profile),
            } => write!(f, ",metadata={profile}"),
            _ => Ok(()),
        }
    }
}

fsbench_model::text_serde!(ArraySpec);

/// Why this host cannot make an md array (empty: it can): the kernel's md driver (it shows
/// /proc/mdstat), then mdadm.
pub fn md_support(sys: &dyn System) -> Vec<String> {
    let mut reasons = Vec::new();
    if sys.read_file(Path::new("/proc/mdstat")).is_err() {
        reasons.push(
            "the kernel has no md (software RAID) driver: /proc/mdstat is absent (md is not \
             built in and md_mod is not loaded)"
                .to_string(),
        );
    }
    if sys.find_program("mdadm").is_none() {
        reasons.push("mdadm is not installed (apt-get install mdadm)".to_string());
    }
    reasons
}

/// The md device fsbench names for a target (`/dev/md/fsbench-ext4-PID-N`): mdadm makes the
/// array and this link to it.
pub fn md_device(tag: &str) -> PathBuf {
    PathBuf::from(format!("/dev/md/fsbench-{tag}"))
}

/// `mdadm --create DEVICE --run --level=N [--chunk=KiB] --raid-devices=N --metadata=1.2
/// MEMBERS`: made at once, without asking (`--run`).
pub fn md_create(device: &Path, array: &ArraySpec, members: &[PathBuf]) -> Cmd {
    let mut cmd = Cmd::new("mdadm")
        .arg("--create")
        .arg(device.display().to_string())
        .args(["--run", "--metadata=1.2"])
        .arg(format!("--level={}", array.level.md_level()));
    if let Layer::Md {
        chunk_bytes: Some(bytes),
    } = array.layer
    {
        cmd = cmd.arg(format!("--chunk={}", bytes / 1024));
    }
    cmd.arg(format!("--raid-devices={}", members.len()))
        .args(members.iter().map(|m| m.display().to_string()))
}

/// `mdadm --stop DEVICE`.
pub fn md_stop(device: &Path) -> Cmd {
    Cmd::new("mdadm")
        .arg("--stop")
        .arg(device.display().to_string())
}

/// `mdadm --detail DEVICE`: the array's level, chunk and members.
pub fn md_detail(device: &Path) -> Cmd {
    Cmd::new("mdadm")
        .arg("--detail")
        .arg(device.display().to_string())
}

/// The members of `made` a read-back (`btrfs filesystem show`, `zpool status`, `mdadm
/// --detail`) names as a word — by path, or by name as zpool shows loop devices — in the order
/// made.
pub fn members_named(text: &str, made: &[PathBuf]) -> Vec<PathBuf> {
    let words: Vec<&str> = text.split_whitespace().collect();
    made.iter()
        .filter(|member| {
            let path = member.display().to_string();
            let name = member
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            words.iter().any(|w| *w == path || *w == name)
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_parse_and_print_alike() {
        for text in [
            "raid0:2",
            "raid1:2,metadata=raid1",
            "raid10:4",
            "md-raid0:8,chunk=64k",
            "md-raid1:2",
        ] {
            let spec: ArraySpec = text.parse().unwrap();
            assert_eq!(spec.to_string(), text);
        }
        let spec: ArraySpec = "md-raid0:8,chunk=64k".parse().unwrap();
        assert_eq!(
            spec,
            ArraySpec {
                level: Level::Raid0,
                devices: 8,
                layer: Layer::Md {
                    chunk_bytes: Some(64 << 10)
                }
            }
        );
        for (bad, says) in [
            ("raid0", "not an array layout"),
            ("raid5:3", "unknown RAID level 'raid5'"),
            ("raid0:1", "at least 2 members"),
            ("raid0:two", "not a number of members"),
            ("raid0:2,chunk=64k", "chunk is md's setting"),
            ("md-raid0:2,metadata=raid1", "md has none"),
            ("md-raid0:2,chunk=6k", "multiple of 4 KiB"),
            ("raid0:2,stripe=4", "unknown array setting 'stripe=4'"),
        ] {
            let e = bad.parse::<ArraySpec>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn mdadm_is_asked_for_the_level_chunk_and_members() {
        let spec: ArraySpec = "md-raid0:2,chunk=64k".parse().unwrap();
        let members = [PathBuf::from("/dev/loop40"), PathBuf::from("/dev/loop41")];
        assert_eq!(
            md_create(&md_device("ext4-7-0"), &spec, &members).to_string(),
            "mdadm --create /dev/md/fsbench-ext4-7-0 --run --metadata=1.2 --level=0 --chunk=64 \
             --raid-devices=2 /dev/loop40 /dev/loop41"
        );
    }

    #[test]
    fn the_read_back_names_members_by_path_or_by_name() {
        let made = [PathBuf::from("/dev/loop3"), PathBuf::from("/dev/loop12")];
        let btrfs = "Label: none  uuid: 1\n\tdevid    1 size 256.00MiB used 104.00MiB path /dev/loop3\n\tdevid    2 size 256.00MiB path /dev/loop12\n";
        assert_eq!(members_named(btrfs, &made), made);
        let zpool = "config:\n\n\tNAME        STATE\n\tfsbench-1  ONLINE\n\t  loop3     ONLINE\n";
        assert_eq!(members_named(zpool, &made), [PathBuf::from("/dev/loop3")]);
        // loop1 is not loop12.
        assert!(members_named("path /dev/loop1", &made).is_empty());
    }

    #[test]
    fn md_support_names_the_kernel_and_the_tool() {
        let sys = crate::system::RecordingSystem::new();
        sys.hide_program("mdadm");
        let reasons = md_support(&sys);
        assert!(reasons[0].contains("/proc/mdstat is absent"), "{reasons:?}");
        assert!(reasons[1].contains("apt-get install mdadm"), "{reasons:?}");
        sys.set_file("/proc/mdstat", "Personalities : [raid0]\n");
        assert_eq!(md_support(&sys).len(), 1);
    }
}
