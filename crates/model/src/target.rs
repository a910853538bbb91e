//! What a target was, as read back while it was made and taken down: the device (and an
//! array's members), mkfs, the on-disk configuration, the mount, the scheduler, the cache
//! state reached, the check ([`TargetInfo`] and its parts), and the aged image a target
//! started from ([`AgedTarget`]). `fsbench-testbed` fills them in;
//! they are stored with each sample as JSON and read back typed by the reports. Records of
//! older fsbench versions read too: a field they lack takes its empty value.

use crate::aging::{Aged, AgingSpec};
use crate::CachePolicy;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::path::PathBuf;

/// One timed command and what it said.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct StepInfo {
    pub command: String,
    pub elapsed_ns: u64,
    pub exit_status: Option<i32>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceInfo {
    /// "image", "block" or "memory".
    pub kind: Cow<'static, str>,
    /// The block device the filesystem is on (a loop device for images).
    pub path: Option<PathBuf>,
    pub size_bytes: u64,
    pub image: Option<PathBuf>,
    /// Whether the loop device does direct I/O on its backing file, as the kernel reports it.
    pub loop_direct_io: Option<bool>,
    /// The physical disk: the device's own, or the one holding the image.
    pub disk: Option<DiskIdentity>,
    /// An array's layout and members (None: one device). `path` is then the md array, or the
    /// first member of an array the filesystem makes itself; `size_bytes` is the members'
    /// sum; `image` the first member's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<ArrayInfo>,
}

/// An array as made and as read back.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ArrayInfo {
    /// The layout as asked (`raid0:2`, `md-raid0:8,chunk=64k`).
    pub layout: String,
    /// What made it: `md`, or the filesystem (`btrfs`, `zfs`).
    pub made_by: String,
    pub members: Vec<MemberInfo>,
    /// The command that made it (`mdadm --create`; the filesystem's own is its mkfs).
    pub made: Option<StepInfo>,
    /// The command that listed the members in use, and the members it named (every one made,
    /// or the target is not used).
    pub read_back: Option<String>,
    pub listed: Vec<PathBuf>,
}

/// One member of an array.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MemberInfo {
    /// Its block device (a loop device for an image).
    pub path: PathBuf,
    pub image: Option<PathBuf>,
    pub size_bytes: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MountReadBack {
    pub command: String,
    pub elapsed_ns: u64,
    pub requested: Option<String>,
    pub fs_type: String,
    /// Per-mount options in force (`rw,noatime`), from /proc/self/mountinfo.
    pub mount_options: String,
    /// Filesystem options in force (`rw,data=writeback`).
    pub super_options: String,
    /// Requested options in force with another value: (requested, in force).
    pub changed: Vec<(String, String)>,
    /// Requested options the kernel does not show (defaults it omits, or silently ignored).
    pub not_shown: Vec<String>,
}

impl MountReadBack {
    /// A mount done by `command`; what is in force is filled in from mountinfo afterwards.
    pub fn new(command: String, elapsed_ns: u64, requested: Option<String>) -> MountReadBack {
        MountReadBack {
            command,
            elapsed_ns,
            requested,
            fs_type: String::new(),
            mount_options: String::new(),
            super_options: String::new(),
            changed: Vec::new(),
            not_shown: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SchedulerInfo {
    pub sysfs: PathBuf,
    pub available: Vec<String>,
    pub previous: String,
    pub requested: Option<String>,
    /// The scheduler in force during the run (read back after setting it).
    pub in_force: String,
    pub note: Option<String>,
    /// The scheduler of the disk holding an image's backing file (it matters too).
    pub backing_disk: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FsckInfo {
    pub command: String,
    pub elapsed_ns: u64,
    pub exit_status: Option<i32>,
    /// The integrity verdict: the check found nothing wrong.
    pub clean: bool,
    /// The check's last lines, for the record.
    pub output_tail: String,
}

/// Everything read back about a target, stored with its results.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TargetInfo {
    pub filesystem: Cow<'static, str>,
    pub device: DeviceInfo,
    /// Where the workload runs: the mount point, or for the bare device (`raw`) the device.
    pub mountpoint: PathBuf,
    /// First line of each tool's version output.
    pub tool_versions: Vec<String>,
    /// fsbench's default mkfs options (shown because they change the result).
    pub default_mkfs_options: Vec<String>,
    pub mkfs: Option<StepInfo>,
    /// The effective on-disk configuration (dumpe2fs -h, xfs_info, ...).
    pub readback: Option<String>,
    pub mount: Option<MountReadBack>,
    pub scheduler: Option<SchedulerInfo>,
    pub cache: Option<CacheReached>,
    pub fsck: Option<FsckInfo>,
    /// What teardown did, and anything it could not undo.
    pub teardown: Vec<String>,
    /// The aged image it started from, how it was copied, and what aging did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aging: Option<AgedTarget>,
}

/// Page-cache figures from /proc/meminfo, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemInfo {
    pub cached_bytes: u64,
    pub dirty_bytes: u64,
    pub writeback_bytes: u64,
}

/// What applying the policy achieved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CacheReached {
    pub policy: CachePolicy,
    /// "warm", "dropped", "remounted", "direct", or "not dropped" with the reason in `note`.
    #[serde(default)]
    pub state: String,
    pub before: Option<MemInfo>,
    pub after: Option<MemInfo>,
    pub note: Option<String>,
}

/// A disk as sysfs describes it. Fields sysfs does not have (virtio disks have no model) are None.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiskIdentity {
    /// Kernel name of the whole disk (`vda`, `nvme0n1`, `loop3`).
    pub name: String,
    pub model: Option<String>,
    pub vendor: Option<String>,
    pub rotational: Option<bool>,
    pub size_bytes: Option<u64>,
}

/// How one sample's image was copied from the aged one.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CopyInfo {
    /// `reflink`, `sparse copy (copy_file_range)` or `sparse copy (read/write)`.
    pub method: String,
    pub elapsed_ns: u64,
    /// Bytes of data copied (0 for a reflink, which copies none).
    pub data_bytes: u64,
}

/// What an aged image is and how it was made: the cache's record of it, and part of the
/// read-back of every target that starts from it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgedRecord {
    /// The cache key: a hash of everything below that makes the image what it is.
    pub key: String,
    pub filesystem: String,
    /// The user's mkfs options (fsbench's defaults are in `target`).
    pub mkfs_options: Vec<String>,
    pub image_bytes: u64,
    pub spec: AgingSpec,
    /// When it was made (UTC) and by which fsbench.
    pub made_at: String,
    pub fsbench_version: String,
    /// What aging did and measured (fill, files, extents per file, free-space fragments).
    pub aged: Aged,
    /// The read-back of the target it was aged on (mkfs, on-disk configuration, mount, fsck);
    /// empty in a record that has none (`null`, or a part it cannot read), as before it was
    /// typed: the record still names its image.
    #[serde(default, deserialize_with = "target_or_empty")]
    pub target: Box<TargetInfo>,
    /// A fingerprint of the image's content (its non-zero 4 KiB blocks and where they are):
    /// a copy with the same fingerprint holds the same bytes.
    pub fingerprint: String,
}

/// A record's target: what it holds, or empty where it is `null` or cannot be read.
fn target_or_empty<'de, D: serde::Deserializer<'de>>(de: D) -> Result<Box<TargetInfo>, D::Error> {
    let value = serde_json::Value::deserialize(de)?;
    Ok(Box::new(TargetInfo::deserialize(value).unwrap_or_default()))
}

/// The aging part of a target's read-back: the aged image it started from, how that was
/// copied, and the image's record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AgedTarget {
    pub image: PathBuf,
    pub copy: CopyInfo,
    pub made: AgedRecord,
    /// Why the image was made again for this sample (the cached one had changed since it was
    /// made); absent when the cache's was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remade: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> TargetInfo {
        TargetInfo {
            filesystem: "ext4".into(),
            device: DeviceInfo {
                kind: "image".into(),
                path: Some("/dev/loop3".into()),
                size_bytes: 1 << 30,
                image: Some("/var/tmp/fsbench/ext4.img".into()),
                loop_direct_io: Some(true),
                disk: Some(DiskIdentity {
                    name: "vda".into(),
                    model: None,
                    vendor: Some("0x1af4".into()),
                    rotational: Some(true),
                    size_bytes: Some(1 << 40),
                }),
                array: None,
            },
            mountpoint: "/var/tmp/fsbench/mnt".into(),
            tool_versions: vec!["mke2fs 1.47.0".into()],
            default_mkfs_options: vec!["-E".into(), "lazy_itable_init=0".into()],
            mkfs: Some(StepInfo {
                command: "mkfs.ext4 /dev/loop3".into(),
                elapsed_ns: 5,
                exit_status: Some(0),
            }),
            readback: None,
            mount: Some(MountReadBack {
                changed: vec![("data=journal".into(), "data=ordered".into())],
                not_shown: vec!["relatime".into()],
                ..MountReadBack::new("mount /dev/loop3".into(), 7, Some("noatime".into()))
            }),
            scheduler: None,
            cache: Some(CacheReached {
                policy: CachePolicy::Drop,
                state: "dropped".into(),
                before: Some(MemInfo {
                    cached_bytes: 4096,
                    dirty_bytes: 0,
                    writeback_bytes: 0,
                }),
                after: None,
                note: None,
            }),
            fsck: Some(FsckInfo {
                command: "fsck.ext4 -f -n /dev/loop3".into(),
                elapsed_ns: 9,
                exit_status: Some(0),
                clean: true,
                output_tail: "clean".into(),
            }),
            teardown: vec!["unmounted".into()],
            aging: None,
        }
    }

    /// A target's read-back is written as it always was (the store and the exports keep that
    /// text) and reads back to what was written.
    #[test]
    fn a_target_record_round_trips_through_json() {
        let text = serde_json::to_string(&target()).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"{"filesystem":"ext4","device":{"kind":"image","path":"/dev/loop3","size_bytes":1073741824,"#,
                r#""image":"/var/tmp/fsbench/ext4.img","loop_direct_io":true,"disk":{"name":"vda","model":null,"#,
                r#""vendor":"0x1af4","rotational":true,"size_bytes":1099511627776}},"mountpoint":"/var/tmp/fsbench/mnt","#,
                r#""tool_versions":["mke2fs 1.47.0"],"default_mkfs_options":["-E","lazy_itable_init=0"],"#,
                r#""mkfs":{"command":"mkfs.ext4 /dev/loop3","elapsed_ns":5,"exit_status":0},"readback":null,"#,
                r#""mount":{"command":"mount /dev/loop3","elapsed_ns":7,"requested":"noatime","fs_type":"","#,
                r#""mount_options":"","super_options":"","changed":[["data=journal","data=ordered"]],"not_shown":["relatime"]},"#,
                r#""scheduler":null,"cache":{"policy":"drop","state":"dropped","before":{"cached_bytes":4096,"#,
                r#""dirty_bytes":0,"writeback_bytes":0},"after":null,"note":null},"fsck":{"command":"fsck.ext4 -f -n /dev/loop3","#,
                r#""elapsed_ns":9,"exit_status":0,"clean":true,"output_tail":"clean"},"teardown":["unmounted"]}"#
            )
        );
        let back: TargetInfo = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }

    /// A record of an older fsbench, or a part of one, reads: what it lacks is empty.
    #[test]
    fn an_older_record_reads_with_what_it_lacks_empty() {
        let t: TargetInfo =
            serde_json::from_str(r#"{"fsck":{"clean":true,"elapsed_ns":1250000000}}"#).unwrap();
        let fsck = t.fsck.unwrap();
        assert!(fsck.clean);
        assert_eq!(
            (fsck.elapsed_ns, fsck.command.as_str()),
            (1_250_000_000, "")
        );
        assert_eq!((t.filesystem.as_ref(), t.device.path), ("", None));
        assert!(t.aging.is_none() && t.mount.is_none() && t.teardown.is_empty());
        // Not a target at all: an error, for the reader to say so.
        assert!(serde_json::from_str::<TargetInfo>(r#"{"fsck":"clean"}"#).is_err());
    }
}
