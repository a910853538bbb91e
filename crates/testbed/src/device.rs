//! The device under a filesystem: a sparse image on a loop device (the default), or a real
//! block device, which is used only with an explicit destructive opt-in naming it, and refused
//! while it or a partition of it is mounted (in any mount namespace: the kernel refuses an
//! exclusive open), is swap, is held (device mapper, RAID, a member of a mounted multi-device
//! btrfs), is the device of `/`, leads to any of that through what it is stacked with
//! (`crate::stack`), or carries a signature the opt-in does not acknowledge.

use crate::error::TargetError;
use crate::stack::{self, Footprint};
use crate::system::{Cmd, System};
use fsbench_measure::units::{human_bytes, parse_size};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Where the filesystem goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum DeviceSpec {
    /// A sparse image file in the work directory on a loop device (one per member of an
    /// array, each of this size); None: the default size.
    Image { size_bytes: Option<u64> },
    /// Real block devices the user gave up for destruction: one, or an array's members.
    Block { devices: Vec<RealDevice> },
}

/// A real block device the user gave up for destruction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RealDevice {
    pub path: PathBuf,
    /// The signature (filesystem or partition-table type) the user agreed to overwrite.
    pub acknowledged_signature: Option<String>,
}

/// Where the user sets an image's size, so size advice names the right place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeSetting {
    /// `--device image:SIZE` on the command line.
    Flag,
    /// `image = "SIZE"` in the plan's `[device]` table.
    Plan,
}

impl SizeSetting {
    /// The setting that gives an image `size` (`512m`).
    pub fn suggest(self, size: &str) -> String {
        match self {
            SizeSetting::Flag => format!("--device image:{size}"),
            SizeSetting::Plan => format!("image = \"{size}\" in the plan's [device]"),
        }
    }
}

impl DeviceSpec {
    /// Parses `--device image[:SIZE]` or `--device /dev/X` with `--destroy-data-on /dev/X[:TYPE]`.
    pub fn parse(device: &str, destroy_data_on: Option<&str>) -> Result<DeviceSpec, TargetError> {
        if let (true, Some(ack)) = (
            device == "image" || device.starts_with("image:"),
            destroy_data_on,
        ) {
            return Err(TargetError::Invalid(format!(
                "--destroy-data-on {ack} without --device {}: name the device to use with --device too (the default is an image, which destroys nothing)",
                ack.split(':').next().unwrap_or(ack)
            )));
        }
        if device == "image" || device.starts_with("image:") {
            let size_bytes = match device.strip_prefix("image:") {
                None => None,
                Some(size) => Some(
                    parse_size(size)
                        .map_err(|e| TargetError::Invalid(format!("--device {device}: {e}")))?,
                ),
            };
            if size_bytes == Some(0) {
                return Err(TargetError::Invalid(
                    "--device image:0: an image needs a size (e.g. image:4g)".to_string(),
                ));
            }
            return Ok(DeviceSpec::Image { size_bytes });
        }
        // Several devices (an array's members) are a comma-separated list, each needing its
        // own consent.
        let paths: Vec<&str> = device.split(',').map(str::trim).collect();
        if let Some(bad) = paths.iter().find(|p| !p.starts_with('/')) {
            return Err(TargetError::Invalid(format!(
                "--device {bad}: use image[:SIZE] or the path of a block device (/dev/...; several: /dev/X,/dev/Y)"
            )));
        }
        let Some(ack) = destroy_data_on else {
            return Err(TargetError::Refused(format!(
                "{device} {} real device{} and everything on {} would be destroyed; to allow it, add --destroy-data-on {device}",
                if paths.len() == 1 { "is a" } else { "are" },
                if paths.len() == 1 { "" } else { "s" },
                if paths.len() == 1 { "it" } else { "them" },
            )));
        };
        let acks: Vec<(&str, Option<String>)> = ack
            .split(',')
            .map(str::trim)
            .map(|a| match a.split_once(':') {
                Some((p, sig)) => (p, Some(sig.to_string())),
                None => (a, None),
            })
            .collect();
        if let Some((stray, _)) = acks.iter().find(|(p, _)| !paths.contains(p)) {
            return Err(TargetError::Refused(format!(
                "--destroy-data-on {stray} does not name --device {device}: name the device itself"
            )));
        }
        let mut devices = Vec::new();
        for path in &paths {
            if devices
                .iter()
                .any(|d: &RealDevice| d.path == Path::new(path))
            {
                return Err(TargetError::Invalid(format!(
                    "--device names {path} twice: an array's members are distinct devices"
                )));
            }
            let Some((_, signature)) = acks.iter().find(|(p, _)| p == path) else {
                return Err(TargetError::Refused(format!(
                    "{path} is a real device and everything on it would be destroyed; to allow it, name it in --destroy-data-on too"
                )));
            };
            devices.push(RealDevice {
                path: PathBuf::from(path),
                acknowledged_signature: signature.clone(),
            });
        }
        Ok(DeviceSpec::Block { devices })
    }
}

/// The default image size: a quarter of the work directory's free space, between 1 GiB and
/// 8 GiB (sparse: only written blocks take space).
pub fn default_image_bytes(free_bytes: u64) -> u64 {
    (free_bytes / 4).clamp(1 << 30, 8 << 30) / (1 << 20) * (1 << 20)
}

/// Checks that a real block device may be overwritten; every refusal says why and what to do.
/// Besides the device itself, everything writing it reaches is checked (`crate::stack`): what
/// it is stacked on and what else is stacked on that. Returns what writing it writes, for
/// [`check_block_devices`] to compare an array's members.
pub fn check_block_device(
    sys: &dyn System,
    device: &Path,
    acknowledged_signature: Option<&str>,
) -> Result<Footprint, TargetError> {
    let shown = device.display();
    let refuse = |why: String| Err(TargetError::Refused(format!("{shown} {why}")));
    let number = match sys.block_device_number(device) {
        Ok(Some(n)) => n,
        Ok(None) => return refuse("is not a block device".to_string()),
        Err(e) => return refuse(format!("cannot be examined: {e}")),
    };
    let footprint = stack::walk(sys, device, number)
        .map_err(|in_use| TargetError::Refused(in_use.message(&shown.to_string())))?;
    let probe = Cmd::new("blkid")
        .args(["-p", "-o", "export"])
        .arg(device.display().to_string());
    let out = sys
        .run(&probe)
        .map_err(|e| TargetError::io("probe", device, e))?;
    let signature = out.stdout.lines().find_map(|l| {
        l.strip_prefix("TYPE=")
            .or_else(|| l.strip_prefix("PTTYPE="))
            .map(str::to_string)
    });
    if let Some(found) = signature {
        if acknowledged_signature != Some(found.as_str()) {
            return refuse(format!(
                "carries a {found} signature; to overwrite it, acknowledge it: --destroy-data-on {shown}:{found}"
            ));
        }
    }
    Ok(footprint)
}

/// Checks every real device of a target (one, or an array's members) with
/// [`check_block_device`], and that the members are distinct storage: not one device named
/// twice (by device number, however the paths differ), nor one stacked on another or two over
/// one file.
pub fn check_block_devices(sys: &dyn System, devices: &[RealDevice]) -> Result<(), TargetError> {
    let mut checked: Vec<(&Path, Footprint)> = Vec::new();
    for real in devices {
        let footprint =
            check_block_device(sys, &real.path, real.acknowledged_signature.as_deref())?;
        for (earlier, theirs) in &checked {
            let Some((ours, their_chain)) = footprint.shared(theirs) else {
                continue;
            };
            let (this, that) = (real.path.display(), earlier.display());
            if footprint.devices.first().map(|d| d.0) == theirs.devices.first().map(|d| d.0) {
                let (major, minor) = footprint.devices[0].0;
                return Err(TargetError::Invalid(format!(
                    "{this} and {that} are the same device ({major}:{minor}): an array's members are distinct devices; name each once"
                )));
            }
            // The ways to the shared storage, but a member's bare name.
            let chains: Vec<String> = [(ours, real.path.as_path()), (their_chain, *earlier)]
                .into_iter()
                .filter(|(chain, member)| Path::new(chain) != *member)
                .map(|(chain, _)| chain)
                .collect();
            return Err(TargetError::Refused(format!(
                "{this} and {that} share storage: {}; an array's members are distinct devices, neither stacked on another nor over one file",
                chains.join(" and ")
            )));
        }
        checked.push((&real.path, footprint));
    }
    Ok(())
}

/// The size of a block device in bytes (sysfs counts 512-byte sectors).
pub fn block_device_bytes(sys: &dyn System, device: &Path) -> Option<u64> {
    let (major, minor) = sys.block_device_number(device).ok()??;
    let text = sys
        .read_file(&PathBuf::from(format!(
            "/sys/dev/block/{major}:{minor}/size"
        )))
        .ok()?;
    text.trim().parse::<u64>().ok().map(|sectors| sectors * 512)
}

/// A size check with a message that says what to do.
pub fn check_size(
    fs_name: &str,
    size: u64,
    minimum: u64,
    what: &str,
    setting: SizeSetting,
) -> Result<(), TargetError> {
    if size < minimum {
        return Err(TargetError::Invalid(format!(
            "{what} is too small for {fs_name}: {} < the {} its mkfs needs; use {} or larger",
            human_bytes(size),
            human_bytes(minimum),
            setting.suggest(&fsbench_measure::units::size_label(
                minimum.next_power_of_two()
            ))
        )));
    }
    Ok(())
}

/// Where images in memory go (see [`memory_dir`]). World-writable (sticky): fsbench makes only
/// files there, under names nobody can guess, with O_EXCL, and never follows what it finds.
pub const MEMORY_DIR: &str = "/dev/shm";

/// Where an image in memory goes: /dev/shm, the tmpfs every Linux distribution mounts (its
/// files live in RAM, counted against the memory it may use). Unsupported when it is missing or
/// not a tmpfs.
pub fn memory_dir() -> Result<PathBuf, TargetError> {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    let dir = PathBuf::from(MEMORY_DIR);
    let path = std::ffi::CString::new(MEMORY_DIR).expect("no NUL");
    // SAFETY: a valid C string and a zeroed statfs for the kernel to fill.
    let mut stat: libc::statfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statfs(path.as_ptr(), &mut stat) };
    if rc != 0 || stat.f_type as i64 != TMPFS_MAGIC {
        return Err(TargetError::Unsupported(
            "an image in memory goes in /dev/shm, which is missing or not a tmpfs on this host (mount one: mount -t tmpfs tmpfs /dev/shm)".into(),
        ));
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::{CmdOutput, RecordingSystem};

    fn host() -> RecordingSystem {
        let sys = RecordingSystem::new();
        sys.set_block_device("/dev/vdb", 253, 16);
        sys.set_file(
            "/sys/dev/block/253:16/uevent",
            "MAJOR=253\nMINOR=16\nDEVNAME=vdb\n",
        );
        sys.set_dir(
            "/sys/class/block/vdb",
            &["holders", "queue", "vdb1", "vdb2"],
        );
        sys.set_file("/sys/class/block/vdb/vdb1/dev", "253:17\n");
        sys.set_file("/sys/class/block/vdb/vdb2/dev", "253:18\n");
        sys.set_file(
            "/proc/self/mountinfo",
            "22 1 253:0 / / rw - ext4 /dev/vda rw\n",
        );
        sys.set_file("/proc/swaps", "Filename Type Size Used Priority\n");
        sys.respond(
            "blkid",
            CmdOutput {
                timed_out: false,
                status: Some(2),
                ..CmdOutput::default()
            },
        );
        sys
    }

    #[test]
    fn parses_device_options() {
        assert_eq!(
            DeviceSpec::parse("image", None).unwrap(),
            DeviceSpec::Image { size_bytes: None }
        );
        assert_eq!(
            DeviceSpec::parse("image:512m", None).unwrap(),
            DeviceSpec::Image {
                size_bytes: Some(512 << 20)
            }
        );
        let e = DeviceSpec::parse("/dev/sdb", None).unwrap_err().to_string();
        assert!(e.contains("--destroy-data-on /dev/sdb"), "{e}");
        let e = DeviceSpec::parse("/dev/sdb", Some("/dev/sdc"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not name"), "{e}");
        assert_eq!(
            DeviceSpec::parse("/dev/sdb", Some("/dev/sdb:ext4")).unwrap(),
            DeviceSpec::Block {
                devices: vec![RealDevice {
                    path: "/dev/sdb".into(),
                    acknowledged_signature: Some("ext4".into())
                }]
            }
        );
        // An array's members: each named in the consent, each with its own signature.
        assert_eq!(
            DeviceSpec::parse("/dev/sdb,/dev/sdc", Some("/dev/sdc:xfs,/dev/sdb")).unwrap(),
            DeviceSpec::Block {
                devices: vec![
                    RealDevice {
                        path: "/dev/sdb".into(),
                        acknowledged_signature: None
                    },
                    RealDevice {
                        path: "/dev/sdc".into(),
                        acknowledged_signature: Some("xfs".into())
                    }
                ]
            }
        );
        let e = DeviceSpec::parse("/dev/sdb,/dev/sdc", Some("/dev/sdb"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/dev/sdc is a real device") && e.contains("--destroy-data-on"),
            "{e}"
        );
        let e = DeviceSpec::parse("/dev/sdb,/dev/sdb", Some("/dev/sdb"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("twice"), "{e}");
        assert!(DeviceSpec::parse("sdb", Some("sdb")).is_err());
        // Consent without a device is a mistake, not something to ignore.
        let e = DeviceSpec::parse("image", Some("/dev/sdb")).unwrap_err();
        assert!(e.to_string().contains("without --device /dev/sdb"), "{e}");
        assert_eq!(e.outcome(), None);
    }

    #[test]
    fn a_blank_unused_device_passes() {
        let sys = host();
        check_block_device(&sys, Path::new("/dev/vdb"), None).unwrap();
        // Only reads and one probe: nothing was written.
        assert_eq!(sys.log(), ["run blkid -p -o export /dev/vdb"]);
    }

    #[test]
    fn the_root_device_and_mounted_partitions_are_refused_before_anything_runs() {
        let sys = host();
        sys.set_block_device("/dev/vda", 253, 0);
        sys.set_file("/sys/dev/block/253:0/uevent", "DEVNAME=vda\n");
        let e = check_block_device(&sys, Path::new("/dev/vda"), Some("ext4")).unwrap_err();
        assert!(e.to_string().contains("holds the root filesystem"), "{e}");
        sys.set_file(
            "/proc/self/mountinfo",
            "22 1 253:0 / / rw - ext4 /dev/vda rw\n40 22 253:18 / /data rw - xfs /dev/vdb2 rw\n",
        );
        let e = check_block_device(&sys, Path::new("/dev/vdb"), None).unwrap_err();
        assert!(
            e.to_string().contains("/dev/vdb2 is mounted on /data"),
            "{e}"
        );
        assert!(sys.log().is_empty(), "nothing may run: {:?}", sys.log());
    }

    #[test]
    fn swap_holders_and_signatures_are_refused() {
        let sys = host();
        sys.set_file("/proc/swaps", "Filename Type\n/dev/vdb1 partition 1 0 -2\n");
        let e = check_block_device(&sys, Path::new("/dev/vdb"), None).unwrap_err();
        assert!(e.to_string().contains("swap"), "{e}");

        let sys = host();
        sys.set_dir("/sys/class/block/vdb1/holders", &["dm-0"]);
        let e = check_block_device(&sys, Path::new("/dev/vdb"), None).unwrap_err();
        assert!(e.to_string().contains("held by dm-0"), "{e}");

        let sys = host();
        sys.respond(
            "blkid",
            CmdOutput {
                timed_out: false,
                status: Some(0),
                stdout: "DEVNAME=/dev/vdb\nPTTYPE=gpt\n".into(),
                ..CmdOutput::default()
            },
        );
        let e = check_block_device(&sys, Path::new("/dev/vdb"), None).unwrap_err();
        assert!(
            e.to_string().contains("--destroy-data-on /dev/vdb:gpt"),
            "{e}"
        );
        check_block_device(&sys, Path::new("/dev/vdb"), Some("gpt")).unwrap();
    }

    /// What this process's mountinfo does not show: a mount in another mount namespace (the
    /// kernel refuses the exclusive open) and the other member of a mounted two-device btrfs.
    #[test]
    fn the_kernels_exclusive_open_and_btrfs_members_are_asked() {
        let sys = host();
        sys.set_busy("/dev/vdb");
        let e = check_block_device(&sys, Path::new("/dev/vdb"), None).unwrap_err();
        assert!(
            e.to_string()
                .contains("the kernel refuses to open /dev/vdb exclusively"),
            "{e}"
        );
        let sys = host();
        sys.set_busy("/dev/vdb2");
        let e = check_block_device(&sys, Path::new("/dev/vdb"), None).unwrap_err();
        assert!(e.to_string().contains("/dev/vdb2 exclusively"), "{e}");

        let sys = host();
        sys.set_dir("/sys/fs/btrfs", &["features", "0c8f-uuid"]);
        sys.set_dir("/sys/fs/btrfs/0c8f-uuid/devices", &["loop7", "vdb1"]);
        let e = check_block_device(&sys, Path::new("/dev/vdb"), Some("gpt")).unwrap_err();
        assert!(
            e.to_string()
                .contains("/dev/vdb1 is a member of the mounted btrfs 0c8f-uuid (with /dev/loop7)"),
            "{e}"
        );
        assert!(sys.log().is_empty(), "nothing may run: {:?}", sys.log());
    }

    /// An array's members are compared by what they write, not by path: one device named
    /// twice (through a link), or a disk and its partition, are refused; two partitions are
    /// distinct.
    #[test]
    fn array_members_are_compared_by_device_number_and_storage() {
        let sys = host();
        sys.set_block_device("/dev/disk/by-id/virtio-b", 253, 16);
        for (name, minor) in [("vdb1", 17), ("vdb2", 18)] {
            sys.set_block_device(format!("/dev/{name}"), 253, minor);
            sys.set_file(
                format!("/sys/dev/block/253:{minor}/uevent"),
                &format!("DEVNAME={name}\n"),
            );
            sys.set_file(format!("/sys/class/block/{name}/partition"), "1\n");
            sys.set_file(format!("/sys/class/block/{name}/../dev"), "253:16\n");
        }
        let members = |paths: &[&str]| -> Vec<RealDevice> {
            paths
                .iter()
                .map(|p| RealDevice {
                    path: p.into(),
                    acknowledged_signature: None,
                })
                .collect()
        };
        let e = check_block_devices(&sys, &members(&["/dev/vdb", "/dev/disk/by-id/virtio-b"]))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/disk/by-id/virtio-b and /dev/vdb are the same device (253:16): an array's \
             members are distinct devices; name each once"
        );
        assert_eq!(e.outcome(), None, "bad input");
        check_block_devices(&sys, &members(&["/dev/vdb1", "/dev/vdb2"])).unwrap();
        let e = check_block_devices(&sys, &members(&["/dev/vdb1", "/dev/vdb"])).unwrap_err();
        assert!(
            e.to_string().contains(
                "/dev/vdb and /dev/vdb1 share storage: /dev/vdb (its partition /dev/vdb1); an \
                 array's members are distinct devices"
            ),
            "{e}"
        );
    }

    #[test]
    fn not_a_block_device() {
        let sys = host();
        let e = check_block_device(&sys, Path::new("/dev/null"), None).unwrap_err();
        assert!(e.to_string().contains("not a block device"), "{e}");
    }

    #[test]
    fn default_image_is_sized_to_the_disk() {
        assert_eq!(default_image_bytes(100 << 30), 8 << 30);
        assert_eq!(default_image_bytes(8 << 30), 2 << 30);
        assert_eq!(default_image_bytes(1 << 30), 1 << 30);
    }
}
