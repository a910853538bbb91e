//! The filesystems fsbench can prepare, one small module each, behind one trait: how to make it,
//! mount it, remount it cold, check it read-only, ask its tools' versions and read its effective
//! configuration back. What is special about one filesystem (zfs's pool and daemon, tmpfs's
//! memory) lives in its module as [`Filesystem`] hooks, so the generic target lifecycle has no
//! per-filesystem branch. [`all`] lists them; [`by_name`] finds one; [`support`] says whether
//! this host can run it. `raw`, the bare device, is here too: a target with no filesystem, the
//! baseline the others are set against.

mod btrfs;
mod ext;
mod f2fs;
mod jfs;
mod nilfs2;
mod raw;
mod reiserfs;
mod tmpfs;
mod xfs;
pub mod zfs;

use crate::aging::FreeSpace;
use crate::array::ArraySpec;
use crate::error::{check_stop, TargetError};
use crate::ledger::Resource;
use crate::system::{tail, Cmd, CmdOutput, System};
use fsbench_model::target::{FsckInfo, TargetInfo};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A target as the [`Filesystem`] hooks see it while it is made, remounted or checked: the
/// generic steps (mkfs, mount, a host lock, the ledger) and the facts they need, nothing more.
/// `crate::target` implements it; the hooks know nothing else of a target.
pub trait Build<'s> {
    fn sys(&self) -> &'s dyn System;
    /// The user's mkfs options (after fsbench's defaults).
    fn mkfs_options(&self) -> &[String];
    /// The user's mount options, or dataset properties for zfs.
    fn mount_options(&self) -> Option<&str>;
    /// Several devices as one (None: one device).
    fn array(&self) -> Option<&ArraySpec>;
    /// Where images, mount points and the state directory go.
    fn work_dir(&self) -> &Path;
    /// The block device the filesystem goes on (an md array, or an array's first member;
    /// None for a filesystem in memory).
    fn device(&self) -> Option<&Path>;
    /// Every member of an array, in order (one device: that device).
    fn members(&self) -> Vec<PathBuf>;
    fn mountpoint(&self) -> &Path;
    /// Names this target (`zfs-PID-N`), unique on the host.
    fn tag(&self) -> &str;
    fn info(&self) -> &TargetInfo;
    fn info_mut(&mut self) -> &mut TargetInfo;
    /// What is mounted: the device unless [`Build::set_mount_source`] named something else.
    fn mount_source(&self) -> String;
    fn set_mount_source(&mut self, source: &str);
    /// Puts something made on record, so teardown and `fsbench cleanup` undo it.
    fn record(&mut self, resource: Resource);
    /// Like [`Build::record`], for the entry that holds the filesystem when it is not a mount
    /// (a zfs pool): the check runs next to its undoing.
    fn record_filesystem(&mut self, resource: Resource);
    /// The filesystem's mkfs with fsbench's defaults and the user's options, then its read-back.
    fn mkfs(&mut self) -> Result<(), TargetError>;
    /// mount(8) with `extra` options before the user's, on record as the filesystem.
    fn mount(&mut self, extra: &[String]) -> Result<(), TargetError>;
    fn umount_and_mount(&mut self) -> Result<(), TargetError>;
    /// Waits for a host lock, holds it until teardown ends (`Target::hold_host_lock`).
    fn hold_host_lock(
        &mut self,
        path: &Path,
        wait: std::time::Duration,
        stop: &dyn Fn() -> bool,
        why: &str,
    ) -> Result<(), TargetError>;
}

/// Runs a check command and records what it said; `clean` reads the verdict.
pub(crate) fn run_check(
    sys: &dyn System,
    cmd: &Cmd,
    clean: impl Fn(&CmdOutput) -> bool,
) -> FsckInfo {
    match sys.run(cmd) {
        Ok(out) => FsckInfo {
            command: cmd.to_string(),
            elapsed_ns: out.elapsed_ns,
            exit_status: out.status,
            clean: clean(&out),
            output_tail: tail(&format!("{}{}", out.stdout, out.stderr), 6),
        },
        Err(e) => FsckInfo {
            command: cmd.to_string(),
            elapsed_ns: 0,
            exit_status: None,
            clean: false,
            output_tail: e.to_string(),
        },
    }
}

/// What reports a filesystem's free space in fragments, and how to read its report.
#[derive(Debug, Clone)]
pub struct FreeSpaceProbe {
    pub cmd: Cmd,
    pub read: fn(&str) -> FreeSpace,
}

/// Whether `fs` on this device can take `array` (None: one device), whatever the host: the
/// filesystem lays itself out so (or md goes under it), it has devices at all (not tmpfs), and
/// real devices (`real`: how many are named; None for images) are one per member. The error
/// says what to write instead.
pub fn check_layout(
    fs: &dyn Filesystem,
    array: Option<&ArraySpec>,
    real: Option<usize>,
) -> Result<(), String> {
    let Some(array) = array else {
        return match real {
            Some(n) if n > 1 => Err(format!(
                "{n} real devices for one {}: lay them out as an array (md-raid0:{n}, or raid0:{n} for btrfs and zfs) or name one device",
                fs.name()
            )),
            _ => Ok(()),
        };
    };
    if fs.capabilities().storage == Storage::Memory {
        return Err(format!(
            "{} lives in memory: it has no devices to make an array of",
            fs.name()
        ));
    }
    if let Some(n) = real.filter(|&n| n != array.devices as usize) {
        return Err(format!(
            "the array {array} has {} members, but {n} real device{} named: name one per member",
            array.devices,
            if n == 1 { " is" } else { "s are" }
        ));
    }
    if array.by_md() {
        Ok(())
    } else {
        fs.array_options(array).map(drop)
    }
}

/// A program a filesystem needs, and the Debian package that provides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Tool {
    pub program: &'static str,
    pub package: &'static str,
}

/// Where a filesystem keeps its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// On a block device (an image's loop device or a disk): it has a scheduler.
    BlockDevice,
    /// In memory: no device, no mkfs, no scheduler, no fsck; the size comes from the image size.
    Memory,
}

/// What a filesystem is, as data the generic code reads (the behaviours are trait hooks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    pub storage: Storage,
    /// Paths that must exist besides the kernel name (`/dev/fuse` for a FUSE filesystem).
    pub requires_paths: &'static [&'static str],
    /// Whether the requested mount options can be compared with /proc/self/mountinfo (zfs
    /// properties are not mount options).
    pub mount_options_in_mountinfo: bool,
    /// Why `--cache drop` cannot empty its cache, when it cannot.
    pub undroppable_cache: Option<&'static str>,
    /// A rough time to prepare and take down one target, for plan estimates.
    pub prepare_estimate_ns: u64,
    /// One target per host at a time (zfs-fuse: one daemon serves one pool at a time): the
    /// ranks of a job on one host cannot each have one.
    pub one_per_host: bool,
    /// Whether a filesystem is made and mounted; false for the bare device (`raw`), which is
    /// given as it is to the workloads that can run on a block device.
    pub filesystem: bool,
    /// Why a copy of its image cannot serve as another target, when it cannot (an aged image
    /// is made once and copied for each sample: `crate::images`).
    pub no_image_copy: Option<&'static str>,
}

impl Capabilities {
    /// mkfs on a block device, then mount(8): most filesystems.
    pub const BLOCK_DEVICE: Capabilities = Capabilities {
        storage: Storage::BlockDevice,
        requires_paths: &[],
        mount_options_in_mountinfo: true,
        undroppable_cache: None,
        prepare_estimate_ns: 2_000_000_000,
        one_per_host: false,
        filesystem: true,
        no_image_copy: None,
    };
}

/// When teardown runs the read-only check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckPoint {
    /// Right after the filesystem is unmounted (fsck needs it unmounted).
    AfterUnmount,
    /// Right before the filesystem is destroyed (a zfs scrub needs the pool alive).
    BeforeDestroy,
}

/// One filesystem kind.
pub trait Filesystem: Send + Sync {
    /// The name users type (`ext4`).
    fn name(&self) -> &'static str;
    /// What must appear in /proc/filesystems for the kernel to mount it.
    fn kernel_name(&self) -> &'static str;
    /// Programs needed to make, check and read it back.
    fn tools(&self) -> Vec<Tool>;
    /// Storage kind, required paths and notes; the default is a block-device filesystem.
    fn capabilities(&self) -> Capabilities {
        Capabilities::BLOCK_DEVICE
    }
    /// Makes and mounts the filesystem once its device exists: mkfs with the read-back, then
    /// mount(8). `stop` is polled between steps (Ctrl-C).
    fn create(&self, t: &mut dyn Build<'_>, stop: &dyn Fn() -> bool) -> Result<(), TargetError> {
        t.mkfs()?;
        check_stop(stop)?;
        t.mount(&[])
    }
    /// Brings it to a cold cache by unmounting and mounting it again; returns a note when that
    /// is not what happened.
    fn remount(&self, t: &mut dyn Build<'_>) -> Result<Option<&'static str>, TargetError> {
        t.umount_and_mount().map(|()| None)
    }
    /// When teardown runs [`Filesystem::check`].
    fn check_point(&self) -> CheckPoint {
        CheckPoint::AfterUnmount
    }
    /// The read-only check in teardown: [`Filesystem::fsck`] on the device, if it has one.
    fn check(&self, t: &dyn Build<'_>) -> Option<FsckInfo> {
        let cmd = self.fsck(t.device()?)?;
        Some(run_check(t.sys(), &cmd, |out| self.fsck_clean(out)))
    }
    /// How it lays itself over several devices (`array = "raid0:N"`, not md): the mkfs
    /// options that say the layout, put before the user's (btrfs: `-d raid0 -m raid1`), the
    /// other members then following the first; a filesystem with its own `create` makes its
    /// layout there (zfs: the pool's vdevs) and only checks it here. Err: why it cannot, saying
    /// what to use instead.
    fn array_options(&self, array: &ArraySpec) -> Result<Vec<String>, String> {
        Err(format!(
            "{} cannot lay itself over several devices: put md under it (md-{}:{}) or use btrfs or zfs",
            self.name(),
            array.level.name(),
            array.devices
        ))
    }
    /// The command whose output names the members of the mounted filesystem (`btrfs
    /// filesystem show`, `zpool status`), for the read-back of an array it spans itself.
    fn list_members(&self, _t: &dyn Build<'_>) -> Option<Cmd> {
        None
    }
    /// The smallest device mkfs accepts, in bytes (an array's each member).
    fn min_device_bytes(&self) -> u64;
    /// Options fsbench adds to every mkfs, so the first minutes are not disturbed by background
    /// initialisation; the user's options come after them.
    fn default_mkfs_options(&self) -> Vec<String> {
        Vec::new()
    }
    /// The full mkfs command: defaults, then the user's options, then the device.
    fn mkfs(&self, device: &Path, user_options: &[String]) -> Cmd;
    /// The `-t` type for mount(8).
    fn mount_type(&self) -> &'static str {
        self.name()
    }
    /// A check that changes nothing (`e2fsck -fn`), or None when the tools have none.
    fn fsck(&self, device: &Path) -> Option<Cmd>;
    /// Whether a check's result means "clean".
    fn fsck_clean(&self, output: &CmdOutput) -> bool {
        output.success()
    }
    /// Commands that print the tools' versions.
    fn versions(&self) -> Vec<Cmd>;
    /// A command that prints the effective on-disk configuration (`dumpe2fs -h`).
    fn readback(&self, device: &Path) -> Option<Cmd>;
    /// What reports its free space in fragments from the (quiet) device, and how to read
    /// the report; None when its tools have nothing (an aged filesystem then has only its
    /// extents per file).
    fn free_space(&self, _device: &Path) -> Option<FreeSpaceProbe> {
        None
    }
}

/// The number after `label` on the line that has it (`Num. free extent: 13` -> 13).
pub(crate) fn number_after(text: &str, label: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.trim().strip_prefix(label))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

impl std::fmt::Debug for dyn Filesystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

static ALL: [&dyn Filesystem; 12] = [
    &ext::EXT2,
    &ext::EXT3,
    &ext::EXT4,
    &xfs::Xfs,
    &btrfs::Btrfs,
    &f2fs::F2fs,
    &jfs::Jfs,
    &reiserfs::Reiserfs,
    &nilfs2::Nilfs2,
    &zfs::Zfs,
    &tmpfs::Tmpfs,
    &raw::Raw,
];

/// Every filesystem fsbench knows, in a stable order.
pub fn all() -> &'static [&'static dyn Filesystem] {
    &ALL
}

/// The filesystem called `name`, if fsbench knows it.
pub fn by_name(name: &str) -> Option<&'static dyn Filesystem> {
    let wanted = if name == "zfs-fuse" { "zfs" } else { name };
    ALL.iter().copied().find(|fs| fs.name() == wanted)
}

/// The names of every filesystem, for messages.
pub fn names() -> String {
    ALL.iter()
        .map(|fs| fs.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether this host can run a filesystem, and if not exactly why.
#[derive(Debug, Clone, Serialize)]
pub struct Support {
    pub filesystem: &'static str,
    pub supported: bool,
    /// Kernel support: the name found in /proc/filesystems (and /dev/fuse for FUSE).
    pub kernel: bool,
    /// Tools that are installed, with their paths.
    pub tools_found: Vec<String>,
    /// Tools that are missing, with the package that provides them.
    pub tools_missing: Vec<Tool>,
    /// Every reason it cannot run here (empty when supported).
    pub reasons: Vec<String>,
}

/// Checks the kernel (/proc/filesystems) and the tools (PATH) for `fs`.
pub fn support(sys: &dyn System, fs: &dyn Filesystem) -> Support {
    let proc_filesystems = sys
        .read_file(Path::new("/proc/filesystems"))
        .unwrap_or_default();
    let kernel_has = |name: &str| {
        proc_filesystems
            .lines()
            .any(|line| line.split_whitespace().last() == Some(name))
    };
    let mut reasons = Vec::new();
    // The bare device needs no filesystem of the kernel's.
    let mut kernel = fs.kernel_name().is_empty() || kernel_has(fs.kernel_name());
    if !kernel {
        reasons.push(format!(
            "the kernel lacks {} (not in /proc/filesystems: not built in and no module loaded)",
            fs.kernel_name()
        ));
    }
    for path in fs.capabilities().requires_paths {
        if kernel && sys.read_file(Path::new(path)).is_err() && !Path::new(path).exists() {
            kernel = false;
            reasons.push(format!("{path} is missing"));
        }
    }
    let mut tools_found = Vec::new();
    let mut tools_missing = Vec::new();
    for tool in fs.tools() {
        match sys.find_program(tool.program) {
            Some(path) => tools_found.push(path.display().to_string()),
            None => tools_missing.push(tool),
        }
    }
    let mut packages: Vec<&str> = tools_missing.iter().map(|t| t.package).collect();
    packages.dedup();
    for package in packages {
        let programs: Vec<&str> = tools_missing
            .iter()
            .filter(|t| t.package == package)
            .map(|t| t.program)
            .collect();
        let verb = if programs.len() == 1 { "is" } else { "are" };
        reasons.push(format!(
            "{} {verb} not installed (apt-get install {package})",
            programs.join(", ")
        ));
    }
    Support {
        filesystem: fs.name(),
        supported: reasons.is_empty(),
        kernel,
        tools_found,
        tools_missing,
        reasons,
    }
}

/// The first line a version command printed (stdout or stderr), or its error.
pub fn version_line(output: &CmdOutput) -> String {
    output
        .stdout
        .lines()
        .chain(output.stderr.lines())
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("unknown")
        .to_string()
}

/// `program [defaults] [user options] device`.
fn mkfs_cmd(
    program: &str,
    fixed: &[&str],
    defaults: &[String],
    user: &[String],
    device: &Path,
) -> Cmd {
    Cmd::new(program)
        .args(fixed.iter().copied())
        .args(defaults.iter().cloned())
        .args(user.iter().cloned())
        .arg(device.display().to_string())
}

fn dev(device: &Path) -> String {
    device.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::RecordingSystem;

    #[test]
    fn every_filesystem_is_listed_once_and_found_by_name() {
        assert_eq!(all().len(), 12);
        for fs in all() {
            assert_eq!(by_name(fs.name()).unwrap().name(), fs.name());
        }
        assert_eq!(by_name("zfs-fuse").unwrap().name(), "zfs");
        assert!(by_name("fat").is_none());
    }

    #[test]
    fn support_names_every_reason() {
        let sys = RecordingSystem::new();
        sys.set_file("/proc/filesystems", "nodev\ttmpfs\n\text4\n\txfs\n");
        sys.hide_program("mkfs.xfs");
        let ext4 = support(&sys, by_name("ext4").unwrap());
        assert!(ext4.supported, "{:?}", ext4.reasons);
        let xfs = support(&sys, by_name("xfs").unwrap());
        assert!(!xfs.supported && xfs.kernel);
        assert_eq!(
            xfs.reasons,
            ["mkfs.xfs is not installed (apt-get install xfsprogs)"]
        );
        sys.hide_program("mkfs.jfs");
        let jfs = support(&sys, by_name("jfs").unwrap());
        assert!(!jfs.kernel);
        assert!(
            jfs.reasons[0].contains("kernel lacks jfs"),
            "{:?}",
            jfs.reasons
        );
        assert!(jfs.reasons.iter().any(|r| r.contains("jfsutils")));
    }

    #[test]
    fn mkfs_puts_defaults_before_user_options_and_the_device_last() {
        let ext4 = by_name("ext4").unwrap();
        let cmd = ext4.mkfs(Path::new("/dev/loop9"), &["-I".into(), "256".into()]);
        assert_eq!(
            cmd.to_string(),
            "mkfs.ext4 -F -E lazy_itable_init=0,lazy_journal_init=0 -I 256 /dev/loop9"
        );
    }
}
