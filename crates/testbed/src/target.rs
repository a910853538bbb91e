//! A prepared system under test: device, filesystem, mount, scheduler and cache state, made in
//! order and recorded in the ledger as each piece exists, then taken down in reverse (unmount,
//! fsck, scheduler restore, detach, remove) on success, error, panic or interruption.
//!
//! Order of operations (checked by the recording-fake tests):
//! support check -> mkdir -> image -> attach loop -> mkfs -> read-back -> mount -> mountinfo
//! read-back -> scheduler -> [cache] -> workload -> umount -> fsck -> scheduler restore ->
//! detach -> remove image -> rmdir.
//!
//! What differs between filesystems is not decided here: the steps from "mkfs" to "mount", the
//! cold-cache remount and the check are [`Filesystem`] hooks (zfs and tmpfs override them), and
//! [`fs::Build`] is the view of a target those hooks work through.
//!
//! An array (`TargetSpec::array`) has several members: each image and loop device is made and
//! recorded as one device is, the scheduler is set on each, md (when it makes the array) goes
//! between them and mkfs, and after the mount the members are read back from what made the
//! array. [`Devices`] keeps them in one place.

use crate::array::{self, ArraySpec};
use crate::cache::{parse_meminfo, CachePolicy, CacheReached};
use crate::device::{self, DeviceSpec};
use crate::error::{check_stop, missing_tool, TargetError};
use crate::fs::{self, CheckPoint, Filesystem, Storage};
use crate::ledger::{Ledger, Resource};
use crate::scheduler;
use crate::system::{Cmd, HostLock, LoopDevice, System};
use crate::undo;

mod power;
use fsbench_measure::host::parse_mountinfo;
use fsbench_measure::units::human_bytes;
pub use fsbench_model::target::{
    AgedRecord, AgedTarget, ArrayInfo, DeviceInfo, FsckInfo, MemberInfo, MountReadBack,
    SchedulerInfo, StepInfo, TargetInfo,
};
pub use power::{CrashState, StateMounted};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What to prepare.
#[derive(Debug, Clone)]
pub struct TargetSpec {
    pub fs: &'static dyn Filesystem,
    /// The user's mkfs options (after fsbench's defaults).
    pub mkfs_options: Vec<String>,
    /// The user's mount options (`noatime,data=writeback`), or dataset properties for zfs.
    pub mount_options: Option<String>,
    pub scheduler: Option<String>,
    pub cache: CachePolicy,
    pub device: DeviceSpec,
    /// Several devices as one (None: one device): each member an image of the device's size,
    /// or one of its real devices.
    pub array: Option<ArraySpec>,
    /// Attach images with direct I/O on the backing file (default) or buffered.
    pub loop_direct_io: bool,
    /// Where images, mount points and the state directory go.
    pub work_dir: PathBuf,
    /// Where the image goes instead of the work directory (a tmpfs: an image in memory).
    pub image_dir: Option<PathBuf>,
    /// Run the filesystem's read-only check after unmounting.
    pub fsck: bool,
    /// Where the user sets the image size (named in size advice).
    pub size_setting: crate::device::SizeSetting,
    /// How many targets this host makes at once (the ranks of a job on it): a default image
    /// size takes its share of the free space.
    pub host_share: u32,
    /// Start from a copy of this aged image instead of a new filesystem (`crate::images`).
    pub start_from: Option<AgedImage>,
    /// The image served through the recording device ([`crate::recorder`]), its every write
    /// logged for power cuts; for durability only.
    pub recording: bool,
}

/// An aged image to start a target from, with its record (`crate::images` makes it).
#[derive(Debug, Clone)]
pub struct AgedImage {
    pub image: PathBuf,
    pub record: Box<AgedRecord>,
    /// Why it was made again now (the cached one no longer matched its record's fingerprint).
    pub remade: Option<String>,
}

impl TargetSpec {
    /// The one way to make a spec: start from `fs_name`'s defaults (an image of the default
    /// size, no options, warm cache, direct I/O, fsck) and set what the caller asks for.
    pub fn builder(fs_name: &str, work_dir: impl Into<PathBuf>) -> TargetBuilder {
        TargetBuilder {
            fs_name: fs_name.to_string(),
            spec_work_dir: work_dir.into(),
            mkfs_options: String::new(),
            mount_options: None,
            scheduler: None,
            cache: CachePolicy::Warm,
            device: DeviceSpec::Image { size_bytes: None },
            array: None,
            loop_direct_io: true,
            image_dir: None,
            fsck: true,
            size_setting: crate::device::SizeSetting::Flag,
            host_share: 1,
            recording: false,
        }
    }

    /// A spec for `fs_name` with every default.
    pub fn new(fs_name: &str, work_dir: impl Into<PathBuf>) -> Result<TargetSpec, TargetError> {
        TargetSpec::builder(fs_name, work_dir).build()
    }

    /// Where the ledgers of running and killed fsbench processes live.
    pub fn state_dir(&self) -> PathBuf {
        state_dir(&self.work_dir)
    }
}

/// Typed, already-validated target settings, turned into a [`TargetSpec`] in one place so the
/// CLI and the plan runner cannot drift apart. Errors speak in testbed terms; callers add
/// their own flag or key names.
#[derive(Debug, Clone)]
pub struct TargetBuilder {
    fs_name: String,
    spec_work_dir: PathBuf,
    mkfs_options: String,
    mount_options: Option<String>,
    scheduler: Option<String>,
    cache: CachePolicy,
    device: DeviceSpec,
    array: Option<ArraySpec>,
    loop_direct_io: bool,
    image_dir: Option<PathBuf>,
    fsck: bool,
    size_setting: crate::device::SizeSetting,
    host_share: u32,
    recording: bool,
}

impl TargetBuilder {
    /// The user's mkfs options as one text; split once, in `build`.
    pub fn mkfs_options(mut self, text: &str) -> Self {
        self.mkfs_options = text.to_string();
        self
    }

    /// Mount options; empty text means none (so the read-back has nothing to compare).
    pub fn mount_options(mut self, text: Option<&str>) -> Self {
        self.mount_options = text.filter(|o| !o.is_empty()).map(str::to_string);
        self
    }

    pub fn scheduler(mut self, scheduler: Option<&str>) -> Self {
        self.scheduler = scheduler.map(str::to_string);
        self
    }

    pub fn cache(mut self, cache: CachePolicy) -> Self {
        self.cache = cache;
        self
    }

    pub fn device(mut self, device: DeviceSpec) -> Self {
        self.device = device;
        self
    }

    /// Several devices as one (None: one device).
    pub fn array(mut self, array: Option<ArraySpec>) -> Self {
        self.array = array;
        self
    }

    pub fn loop_direct_io(mut self, direct: bool) -> Self {
        self.loop_direct_io = direct;
        self
    }

    /// Puts the image in memory (a tmpfs; see [`crate::device::memory_dir`]), attached
    /// buffered since tmpfs refuses direct I/O.
    pub fn image_in_memory(mut self) -> Result<Self, TargetError> {
        self.image_dir = Some(crate::device::memory_dir()?);
        self.loop_direct_io = false;
        Ok(self)
    }

    pub fn fsck(mut self, fsck: bool) -> Self {
        self.fsck = fsck;
        self
    }

    /// Where the user sets the image size, so size advice names the right knob.
    pub fn size_setting(mut self, setting: crate::device::SizeSetting) -> Self {
        self.size_setting = setting;
        self
    }

    /// How many targets this host makes at once (at least 1): a default image size is worked
    /// out from its share of the free space.
    pub fn host_share(mut self, targets: u32) -> Self {
        self.host_share = targets.max(1);
        self
    }

    /// The image served through the recording device (power cuts: [`crate::recorder`]).
    pub fn recording(mut self, recording: bool) -> Self {
        self.recording = recording;
        self
    }

    /// The spec; an unknown filesystem is the only request this can refuse.
    pub fn build(self) -> Result<TargetSpec, TargetError> {
        let fs = fs::by_name(&self.fs_name).ok_or_else(|| {
            TargetError::Invalid(format!(
                "unknown filesystem '{}'; use one of {}",
                self.fs_name,
                fs::names()
            ))
        })?;
        Ok(TargetSpec {
            fs,
            mkfs_options: split_options(&self.mkfs_options),
            mount_options: self.mount_options,
            scheduler: self.scheduler,
            cache: self.cache,
            device: self.device,
            array: self.array,
            loop_direct_io: self.loop_direct_io,
            // Absolute, so ledgers name the same paths whatever directory cleanup runs in.
            work_dir: std::path::absolute(&self.spec_work_dir).unwrap_or(self.spec_work_dir),
            image_dir: self.image_dir,
            fsck: self.fsck,
            size_setting: self.size_setting,
            host_share: self.host_share,
            start_from: None,
            recording: self.recording,
        })
    }
}

/// Where images, mount points and state files go unless told otherwise: on disk, since images
/// are sparse files, not cleared at boot like /tmp may be, and not in a world-writable
/// directory such as /var/tmp, where any local user could make it first.
pub const DEFAULT_WORK_DIR: &str = "/var/lib/fsbench/work";

pub use crate::ledger::state_dir;

/// Makes the work directory and its state directory where missing, and checks that nobody but
/// root can change them or a directory leading to them (refused otherwise, saying how to fix
/// it): fsbench mounts, attaches and later undoes what it finds there.
pub fn prepare_work_dir(sys: &dyn System, work_dir: &Path) -> Result<(), TargetError> {
    for dir in [work_dir.to_path_buf(), state_dir(work_dir)] {
        sys.create_trusted_dir(&dir).map_err(|e| {
            if e.kind() == std::io::ErrorKind::PermissionDenied {
                TargetError::Refused(format!(
                    "work directory {}: {e}; or pass another --work-dir",
                    work_dir.display()
                ))
            } else {
                TargetError::io("create the work directory", &dir, e)
            }
        })?;
    }
    Ok(())
}

/// A name nobody can guess (8 hex digits from the kernel's random pool): what fsbench makes in
/// a directory is never at a name another process could have prepared for it.
pub(crate) fn unguessable() -> String {
    let mut bytes = [0u8; 4];
    // SAFETY: getrandom writes at most `bytes.len()` bytes into the buffer.
    let got = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if got != bytes.len() as isize {
        // No getrandom (very old kernels): the clock's nanoseconds still differ per call.
        bytes = (fsbench_measure::clock::now_ns() as u32).to_le_bytes();
    }
    format!("{:08x}", u32::from_le_bytes(bytes))
}

/// Splits an option string the way a shell would split words, honouring quotes.
pub fn split_options(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut has_word = false;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                has_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if has_word || !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                    has_word = false;
                }
            }
            (None, c) => current.push(c),
        }
    }
    if has_word || !current.is_empty() {
        words.push(current);
    }
    words
}

static TARGETS: AtomicU64 = AtomicU64::new(0);

/// What [`Target::cut`] did.
#[derive(Debug, Clone)]
pub struct CutDone {
    /// How the filesystem was cut.
    pub how: String,
    /// mount(8) after the cut: the recovery, the log's replay included.
    pub recovery_ns: u64,
    /// The read-only check after the recovery (None: the filesystem has no check tool).
    pub fsck: Option<FsckInfo>,
}

/// A prepared target. Dropping it tears it down; prefer [`Target::finish`] to get the fsck
/// verdict and the teardown notes.
pub struct Target<'s> {
    sys: &'s dyn System,
    spec: TargetSpec,
    ledger: Ledger,
    info: TargetInfo,
    devices: Devices,
    /// Names this target's process, images and mount point (`ext4-PID-N`).
    tag: String,
    /// What mount(8) mounts, when it is not the device (`fsbench-tmpfs`, a zfs pool's name).
    mount_source: Option<String>,
    /// The ledger entry that holds the filesystem (its mount, or a zfs pool): the check runs
    /// next to its undoing.
    filesystem: Option<Resource>,
    mount_cmd: Option<Cmd>,
    /// Host locks held while the target exists (zfs-fuse: fsbench processes take turns).
    held: Vec<HostLock>,
    torn_down: bool,
    /// Teardown renames the image here instead of removing it ([`Target::finish_into`]).
    keep_image: Option<PathBuf>,
    /// The recording device serving the image (`spec.recording`).
    recorder: Option<crate::recorder::Recorder>,
    /// A power cut's crash states, between [`Target::power_cut`] and [`Target::resume`].
    power: Option<power::Power>,
    /// A log under way, between [`Target::record`] and [`Target::power_cut`].
    recording: Option<power::Recording>,
}

impl<'s> Target<'s> {
    /// Makes the target. On any error, what was already made is undone before returning.
    /// `stop` is polled between steps (Ctrl-C).
    pub fn prepare(
        sys: &'s dyn System,
        spec: TargetSpec,
        stop: &dyn Fn() -> bool,
    ) -> Result<Target<'s>, TargetError> {
        let n = TARGETS.fetch_add(1, Ordering::Relaxed);
        let tag = format!("{}-{}-{n}", spec.fs.name(), std::process::id());
        let ledger = Ledger::new(Some(&spec.state_dir()), &tag);
        let mut target = Target {
            sys,
            info: TargetInfo {
                filesystem: spec.fs.name().into(),
                device: DeviceInfo {
                    kind: "image".into(),
                    path: None,
                    size_bytes: 0,
                    image: None,
                    loop_direct_io: None,
                    disk: None,
                    array: None,
                },
                // Made fresh in `build`.
                mountpoint: PathBuf::new(),
                tool_versions: Vec::new(),
                default_mkfs_options: spec.fs.default_mkfs_options(),
                mkfs: None,
                readback: None,
                mount: None,
                scheduler: None,
                cache: None,
                fsck: None,
                teardown: Vec::new(),
                aging: None,
            },
            spec,
            ledger,
            devices: Devices::default(),
            tag,
            mount_source: None,
            filesystem: None,
            mount_cmd: None,
            held: Vec::new(),
            torn_down: false,
            keep_image: None,
            recorder: None,
            power: None,
            recording: None,
        };
        match target.build(stop) {
            Ok(()) => Ok(target),
            Err(error) => {
                target.teardown();
                Err(error)
            }
        }
    }

    pub fn mountpoint(&self) -> &Path {
        &self.info.mountpoint
    }

    pub fn info(&self) -> &TargetInfo {
        &self.info
    }

    pub fn spec(&self) -> &TargetSpec {
        &self.spec
    }

    /// The block device under the filesystem (loop device, real disk, md array, or an array's
    /// first member).
    pub fn block_device(&self) -> Option<&Path> {
        self.devices.main()
    }

    fn build(&mut self, stop: &dyn Fn() -> bool) -> Result<(), TargetError> {
        let sys = self.sys;
        let fs = self.spec.fs;
        let storage = fs.capabilities().storage;
        let support = fs::support(sys, fs);
        if !support.supported {
            return Err(TargetError::Unsupported(format!(
                "{} cannot run on this host: {}",
                fs.name(),
                support.reasons.join("; ")
            )));
        }
        self.check_array()?;
        for cmd in fs.versions() {
            if let Ok(out) = sys.run(&cmd) {
                self.info.tool_versions.push(fs::version_line(&out));
            }
        }
        let work_dir = self.spec.work_dir.clone();
        prepare_work_dir(sys, &work_dir)?;
        let filesystem = fs.capabilities().filesystem;
        if filesystem {
            self.info.mountpoint = self.make_fresh(
                &work_dir,
                &format!("mnt-{}", self.tag),
                "",
                "create the mount point",
                |path| Resource::Dir { path },
                |path| sys.create_new_dir(path),
            )?;
        }
        check_stop(stop)?;

        match storage {
            Storage::BlockDevice => {
                self.make_device()?;
                check_stop(stop)?;
            }
            Storage::Memory => {
                self.info.device.kind = "memory".into();
                self.info.device.size_bytes = match self.spec.device {
                    DeviceSpec::Image { size_bytes } => size_bytes.unwrap_or(1 << 30),
                    DeviceSpec::Block { .. } => {
                        return Err(TargetError::Invalid(format!(
                            "{} lives in memory: use --device image[:SIZE] to set its size",
                            fs.name()
                        )))
                    }
                };
            }
        }
        match &self.spec.start_from {
            // A copy of an aged image holds its filesystem already.
            Some(_) => self.mount(&[])?,
            None => fs.create(&mut Building { target: self }, stop)?,
        }
        check_stop(stop)?;
        if filesystem {
            self.read_mount_back()?;
            self.read_members_back()?;
        } else {
            // The bare device: what the workload is given is the device itself.
            self.info.mountpoint = self.info.device.path.clone().unwrap_or_default();
        }
        if storage == Storage::BlockDevice {
            self.set_scheduler()?;
        }
        check_stop(stop)
    }

    /// What an array asks, checked before anything is made (the plan checked its own part when
    /// parsed): a layout this filesystem takes, one real device per member, and md on this host
    /// when md makes it.
    fn check_array(&self) -> Result<(), TargetError> {
        let real = match &self.spec.device {
            DeviceSpec::Block { devices } => Some(devices.len()),
            DeviceSpec::Image { .. } => None,
        };
        fs::check_layout(self.spec.fs, self.spec.array.as_ref(), real)
            .map_err(TargetError::Invalid)?;
        match &self.spec.array {
            Some(layout) if layout.by_md() => {
                let reasons = array::md_support(self.sys);
                if reasons.is_empty() {
                    Ok(())
                } else {
                    Err(TargetError::Unsupported(format!(
                        "md RAID ({layout}) cannot be made on this host: {}",
                        reasons.join("; ")
                    )))
                }
            }
            _ => Ok(()),
        }
    }

    /// Makes the device, or each member of an array (an image on a loop device, or a real
    /// device checked by the guard), each on record as it exists; then the md array over them
    /// when md makes it.
    fn make_device(&mut self) -> Result<(), TargetError> {
        let sys = self.sys;
        let fs = self.spec.fs;
        let count = self.spec.array.as_ref().map_or(1, |a| a.devices);
        match self.spec.device.clone() {
            DeviceSpec::Image { size_bytes } => {
                let image_dir = self.spec.image_dir.as_ref().unwrap_or(&self.spec.work_dir);
                let aged = self.spec.start_from.clone();
                if self.spec.recording && (count > 1 || aged.is_some()) {
                    return Err(TargetError::Invalid(format!(
                        "the recording device serves one new image: it cannot be {}",
                        if count > 1 {
                            "an array's member"
                        } else {
                            "an aged image (run the durability workload without --age)"
                        }
                    )));
                }
                let size = aged.as_ref().map(|a| a.record.image_bytes).or(size_bytes);
                // Recorded: every state of its log is a copy of its data; 512 MiB holds xfs.
                let size = size.or(self
                    .spec
                    .recording
                    .then(|| (512 << 20u64).max(fs.min_device_bytes())));
                let size = size.unwrap_or_else(|| {
                    let free = fsbench_measure::host::free_bytes(image_dir).unwrap_or(16 << 30);
                    // Every image this host makes at once shares the free space.
                    let share = free / u64::from(self.spec.host_share.max(1)) / u64::from(count);
                    device::default_image_bytes(share).max(fs.min_device_bytes())
                });
                device::check_size(
                    fs.name(),
                    size,
                    fs.min_device_bytes(),
                    if count > 1 {
                        "each member's image"
                    } else {
                        "the image"
                    },
                    self.spec.size_setting,
                )?;
                let (image_dir, tag) = (image_dir.clone(), self.tag.clone());
                // An aged image is one filesystem's image: copied for a target of one device.
                let copied = std::cell::RefCell::new(None);
                for member in 1..=count {
                    let stem = if count > 1 {
                        format!("{tag}-m{member}")
                    } else {
                        tag.clone()
                    };
                    let image = self.make_fresh(
                        &image_dir,
                        &stem,
                        ".img",
                        "create the image",
                        |path| Resource::Image { path },
                        |path| match &aged {
                            Some(aged) => sys
                                .copy_image(&aged.image, path)
                                .map(|copy| *copied.borrow_mut() = Some(copy)),
                            None => sys.create_sparse_file(path, size),
                        },
                    )?;
                    let (attached, direct) = match self.spec.recording {
                        true => (self.serve_recorded(&image, &image_dir)?, false),
                        false => (image.clone(), self.spec.loop_direct_io),
                    };
                    let loop_device = sys
                        .attach_loop(&attached, direct)
                        .map_err(|e| TargetError::io("attach a loop device to", &attached, e))?;
                    self.ledger.push(
                        self.sys,
                        Resource::Loop {
                            device: loop_device.path.clone(),
                            backing_file: attached,
                        },
                    );
                    self.devices.members.push(MemberInfo {
                        path: loop_device.path.clone(),
                        image: Some(image),
                        size_bytes: size,
                    });
                    self.devices.loops.push(loop_device);
                }
                self.info.aging = aged
                    .zip(copied.into_inner())
                    .map(|(aged, copy)| AgedTarget {
                        image: aged.image,
                        copy,
                        made: *aged.record,
                        remade: aged.remade,
                    });
                let first = &self.devices.members[0];
                let image = first.image.clone().expect("an image");
                self.info.device = DeviceInfo {
                    kind: if self.spec.recording {
                        "recorded image"
                    } else {
                        "image"
                    }
                    .into(),
                    path: Some(first.path.clone()),
                    size_bytes: size * u64::from(count),
                    disk: crate::disk::disk_of_file(&image)
                        .map(|dir| crate::disk::identity(sys, &dir)),
                    loop_direct_io: sys
                        .loop_direct_io(&first.path)
                        .or(Some(self.spec.loop_direct_io)),
                    image: Some(image),
                    array: None,
                };
            }
            DeviceSpec::Block { .. } if self.spec.recording => {
                return Err(TargetError::Invalid(
                    "the recording device serves an image fsbench makes: power cuts do not run \
                     on a real block device (leave --device at image)"
                        .into(),
                ));
            }
            DeviceSpec::Block { devices } => {
                device::check_block_devices(sys, &devices)?;
                for real in &devices {
                    let path = &real.path;
                    let size = device::block_device_bytes(sys, path).unwrap_or(0);
                    device::check_size(
                        fs.name(),
                        size,
                        fs.min_device_bytes(),
                        &path.display().to_string(),
                        self.spec.size_setting,
                    )?;
                    self.devices.members.push(MemberInfo {
                        path: path.clone(),
                        image: None,
                        size_bytes: size,
                    });
                }
                let first = self.devices.members[0].path.clone();
                self.info.device = DeviceInfo {
                    kind: "block".into(),
                    path: Some(first.clone()),
                    size_bytes: self.devices.members.iter().map(|m| m.size_bytes).sum(),
                    image: None,
                    loop_direct_io: None,
                    disk: crate::disk::disk_of_device(sys, &first)
                        .map(|dir| crate::disk::identity(sys, &dir)),
                    array: None,
                };
            }
        }
        if let Some(layout) = self.spec.array.clone() {
            self.info.device.array = Some(ArrayInfo {
                layout: layout.to_string(),
                made_by: if layout.by_md() { "md" } else { fs.name() }.to_string(),
                members: self.devices.members.clone(),
                made: None,
                read_back: None,
                listed: Vec::new(),
            });
            if layout.by_md() {
                self.make_md(&layout)?;
            }
        }
        Ok(())
    }

    /// `mdadm --create` over the members, on record before it exists: the filesystem then goes
    /// on the md array.
    fn make_md(&mut self, layout: &ArraySpec) -> Result<(), TargetError> {
        let md = array::md_device(&self.tag);
        let members = self.devices.paths();
        self.ledger.push(
            self.sys,
            Resource::MdArray {
                device: md.clone(),
                members: members.clone(),
            },
        );
        let cmd = array::md_create(&md, layout, &members);
        let out = self.sys.run(&cmd).map_err(|e| missing_tool(&cmd, e))?;
        if let Some(info) = self.info.device.array.as_mut() {
            info.made = Some(out.step(&cmd));
        }
        if !out.success() {
            // Kept on record: stopping an array that was never made is a no-op.
            return Err(TargetError::command(
                "mdadm --create",
                &cmd,
                &out,
                "see `dmesg` for the kernel's reason",
            ));
        }
        self.info.device.path = Some(md.clone());
        self.devices.md = Some(md);
        Ok(())
    }

    /// Reads back which members the array uses (`mdadm --detail`, or the filesystem's own list:
    /// `btrfs filesystem show`, `zpool status`): a target whose array does not list every
    /// member made is not measured.
    fn read_members_back(&mut self) -> Result<(), TargetError> {
        let Some(layout) = self.spec.array.clone() else {
            return Ok(());
        };
        let cmd = match &self.devices.md {
            Some(md) => Some(array::md_detail(md)),
            None => self.spec.fs.list_members(&Building { target: self }),
        };
        let Some(cmd) = cmd else {
            return Ok(());
        };
        let out = self.sys.run(&cmd).map_err(|e| missing_tool(&cmd, e))?;
        let made = self.devices.paths();
        let listed = array::members_named(&out.stdout, &made);
        if let Some(info) = self.info.device.array.as_mut() {
            info.read_back = Some(cmd.to_string());
            info.listed = listed.clone();
        }
        if out.success() && listed.len() == made.len() {
            return Ok(());
        }
        let missing: Vec<String> = made
            .iter()
            .filter(|m| !listed.contains(m))
            .map(|m| m.display().to_string())
            .collect();
        Err(TargetError::command(
            "the member read-back",
            &cmd,
            &out,
            &format!(
                "the {layout} array lists {} of the {} members made (not listed: {}), so it is not measured",
                listed.len(),
                made.len(),
                missing.join(", ")
            ),
        ))
    }

    /// Makes `<dir>/<stem>-<unguessable><ext>` with `make`, on record before it exists (a kill
    /// right after leaves nothing unlisted). What is already at a name — a planted symlink or
    /// directory, a leftover — is never taken over: `make` refuses it and another name is
    /// drawn, so no ledger ever names what fsbench did not make.
    fn make_fresh(
        &mut self,
        dir: &Path,
        stem: &str,
        ext: &str,
        action: &'static str,
        record: impl Fn(PathBuf) -> Resource,
        make: impl Fn(&Path) -> std::io::Result<()>,
    ) -> Result<PathBuf, TargetError> {
        let mut last = None;
        for _ in 0..8 {
            let path = dir.join(format!("{stem}-{}{ext}", unguessable()));
            let resource = record(path.clone());
            self.ledger.push(self.sys, resource.clone());
            match make(&path) {
                Ok(()) => return Ok(path),
                Err(e) => {
                    self.ledger.forget(self.sys, &resource);
                    if e.kind() != std::io::ErrorKind::AlreadyExists {
                        return Err(TargetError::io(action, &path, e));
                    }
                    last = Some((path, e));
                }
            }
        }
        let (path, e) = last.expect("tried at least once");
        Err(TargetError::io(action, &path, e))
    }

    /// Serves `image` through the recording device, in a new directory in `dir`: the file a
    /// loop device is attached to (buffered: the device serves it with direct I/O).
    fn serve_recorded(&mut self, image: &Path, dir: &Path) -> Result<PathBuf, TargetError> {
        // tmpfs lives in memory; a zfs pool (zfs-fuse) is made on the loop device as any
        // filesystem is.
        if self.spec.fs.capabilities().storage != Storage::BlockDevice {
            return Err(TargetError::Unsupported(format!(
                "{} is not on a block device fsbench attaches, so the recording device cannot \
                 serve it",
                self.spec.fs.name()
            )));
        }
        // A mount point's name (`mnt-`), as `fsbench cleanup` knows them.
        let stem = format!("mnt-{}-device", self.tag);
        let served = self.make_fresh(
            dir,
            &stem,
            "",
            "make the recording device's directory",
            |path| Resource::Dir { path },
            |path| std::fs::create_dir(path),
        )?;
        // On record before it exists, as every mount.
        self.ledger.push(
            self.sys,
            Resource::Mount {
                mountpoint: served.clone(),
                source: crate::recorder::SOURCE.into(),
            },
        );
        let recorder = crate::recorder::Recorder::serve(image, &served)
            .map_err(|e| TargetError::io("serve through FUSE (the recording device)", image, e))?;
        let file = recorder.image();
        self.recorder = Some(recorder);
        Ok(file)
    }

    fn device_path(&self) -> PathBuf {
        self.devices
            .main()
            .expect("a device exists after make_device")
            .to_path_buf()
    }

    fn mkfs(&mut self) -> Result<(), TargetError> {
        let device = self.device_path();
        let fs = self.spec.fs;
        // An array the filesystem lays out itself: its layout options before the user's, and
        // every member after the first.
        let (mut options, others) = match &self.spec.array {
            Some(layout) if !layout.by_md() => (
                fs.array_options(layout).map_err(TargetError::Invalid)?,
                self.devices.paths().split_off(1),
            ),
            _ => (Vec::new(), Vec::new()),
        };
        options.extend(self.spec.mkfs_options.iter().cloned());
        let cmd = fs
            .mkfs(&device, &options)
            .args(others.iter().map(|m| m.display().to_string()));
        let out = self.sys.run(&cmd).map_err(|e| missing_tool(&cmd, e))?;
        self.info.mkfs = Some(out.step(&cmd));
        if !out.success() {
            let text = format!("{}\n{}", out.stderr, out.stdout).to_lowercase();
            // A feature this mkfs no longer (or does not yet) know is the host's limit, like a
            // mount option the kernel rejects: unsupported, with mkfs's own words.
            let unknown_feature = [
                "invalid filesystem option set",
                "unknown feature",
                "unknown option",
            ]
            .iter()
            .any(|p| text.contains(p));
            if unknown_feature
                && !self.spec.mkfs_options.is_empty()
                && self.host_full_hint().is_none()
            {
                let said = format!("{}\n{}", out.stderr, out.stdout);
                let said = said
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty())
                    .unwrap_or("");
                return Err(TargetError::Unsupported(format!(
                    "{} on this host rejects the mkfs options `{}`: {said}",
                    cmd.program,
                    self.spec.mkfs_options.join(" ")
                )));
            }
            let hint = if let Some(full) = self.host_full_hint() {
                full
            } else if text.contains("too small")
                || text.contains("must be larger")
                || text.contains("must be at least")
            {
                format!(
                    "the device is too small for this filesystem: use a larger {}",
                    self.spec.size_setting.suggest("SIZE")
                )
            } else if self.spec.mkfs_options.is_empty() {
                "see the mkfs output above and `dmesg`".to_string()
            } else {
                "check --mkfs-options against the mkfs manual page".to_string()
            };
            return Err(TargetError::command("mkfs", &cmd, &out, &hint));
        }
        if let Some(readback) = fs.readback(&device) {
            if let Ok(out) = self.sys.run(&readback) {
                if out.success() {
                    self.info.readback = Some(out.stdout);
                }
            }
        }
        Ok(())
    }

    /// When the image is larger than the free space of the disk holding it and that disk is
    /// (nearly) full, the advice for a failure on the loop device: the host filesystem under the
    /// image ran out of space, not the filesystem under test.
    pub fn host_full_hint(&self) -> Option<String> {
        let image = self.info.device.image.as_ref()?;
        let dir = image.parent()?;
        let free = fsbench_measure::host::free_bytes(dir).ok()?;
        // A sparse image takes space as it is written: trouble when the rest no longer fits
        // (every member's image is in the same directory).
        let used: u64 = self
            .devices
            .members
            .iter()
            .filter_map(|m| m.image.as_ref())
            .map(|image| {
                std::fs::metadata(image)
                    .map(|m| std::os::unix::fs::MetadataExt::blocks(&m) * 512)
                    .unwrap_or(0)
            })
            .sum();
        let size = self.info.device.size_bytes;
        (free < size.saturating_sub(used) && free < (64 << 20)).then(|| {
            format!(
                "the disk holding the image ({}) is full: {} free for a {} image; free space there, pass another --work-dir, or a smaller {}",
                dir.display(),
                human_bytes(free),
                human_bytes(size),
                self.spec.size_setting.suggest("SIZE")
            )
        })
    }

    /// Seconds since boot, as the kernel log stamps its lines (None when unknown).
    fn uptime_s(&self) -> Option<f64> {
        let text = self.sys.read_file(Path::new("/proc/uptime")).ok()?;
        text.split_whitespace().next()?.parse().ok()
    }

    /// The kernel's own words on a mount that just failed (what `mount` itself only points to
    /// with "see dmesg"): the latest kernel log line since `since` (uptime seconds) that names
    /// the filesystem, e.g. `ext4: Unknown parameter 'bogus'` or `XFS (loop3): ...`.
    fn kernel_reason(&self, since: Option<f64>) -> Option<String> {
        let out = self.sys.run(&Cmd::new("dmesg")).ok()?;
        if !out.success() {
            return None;
        }
        let name = self.spec.fs.mount_type().to_lowercase();
        out.stdout
            .lines()
            .rev()
            .take(50)
            .map(|line| {
                // "[ 1234.567890] EXT4-fs (loop3): ..." -> (1234.56789, "EXT4-fs (loop3): ...")
                let line = line.trim();
                match line.strip_prefix('[').and_then(|l| l.split_once(']')) {
                    Some((stamp, rest)) => (stamp.trim().parse::<f64>().ok(), rest.trim()),
                    None => (None, line),
                }
            })
            .take_while(|(stamp, _)| match (stamp, since) {
                (Some(stamp), Some(since)) => *stamp + 0.5 >= since,
                _ => true,
            })
            .find(|(_, text)| text.to_lowercase().contains(&name))
            .map(|(_, text)| text.to_string())
    }

    /// `mount -t TYPE [-o EXTRA,OPTIONS] SOURCE MOUNTPOINT`.
    fn mount_command(&self, extra: &[String], options: Option<&str>) -> Cmd {
        let mut cmd = Cmd::new("mount").arg("-t").arg(self.spec.fs.mount_type());
        let mut all = extra.to_vec();
        all.extend(options.map(str::to_string));
        if !all.is_empty() {
            cmd = cmd.arg("-o").arg(all.join(","));
        }
        cmd.arg(self.mount_source())
            .arg(self.info.mountpoint.display().to_string())
    }

    /// What is mounted: the device unless a hook named something else.
    fn mount_source(&self) -> String {
        match &self.mount_source {
            Some(source) => source.clone(),
            None => self.device_path().display().to_string(),
        }
    }

    /// mount(8) with `extra` options before the user's; on failure, says whether the kernel
    /// rejected the user's options.
    fn mount(&mut self, extra: &[String]) -> Result<(), TargetError> {
        let options = self.spec.mount_options.clone();
        let cmd = self.mount_command(extra, options.as_deref());
        let since = self.uptime_s();
        // On record before it exists: a SIGKILL right after mount(8) returns must not leave a
        // mount no ledger knows of (undoing one that never came is a no-op).
        let record = Resource::Mount {
            mountpoint: self.info.mountpoint.clone(),
            source: self.mount_source(),
        };
        self.ledger.push(self.sys, record.clone());
        let out = match self.sys.run(&cmd) {
            Ok(out) => out,
            Err(e) => {
                self.ledger.forget(self.sys, &record);
                return Err(missing_tool(&cmd, e));
            }
        };
        if !out.success() {
            self.ledger.forget(self.sys, &record);
            // mount(8)'s last line often only says "dmesg(1) may have more information".
            let said = match (self.kernel_reason(since), out.last_line()) {
                (Some(kernel), last) if last.contains("dmesg") => {
                    format!("the kernel said: {kernel}")
                }
                (Some(kernel), last) => format!("{last}; the kernel said: {kernel}"),
                (None, last) => last,
            };
            if let Some(options) = options.filter(|o| !o.is_empty()) {
                // Does it mount without the user's options? Then the kernel rejected them.
                let plain = self.mount_command(extra, None);
                let retry = self.sys.run(&plain).map_err(|e| missing_tool(&plain, e))?;
                if retry.success() {
                    let _ = self
                        .sys
                        .run(&Cmd::new("umount").arg(self.info.mountpoint.display().to_string()));
                    return Err(TargetError::Unsupported(format!(
                        "the kernel rejected the mount options '{options}' for {}: {said}",
                        self.spec.fs.name(),
                    )));
                }
            }
            let mut error =
                TargetError::command("mount", &cmd, &out, "see `dmesg` for the kernel's reason");
            if let TargetError::Command { detail, .. } = &mut error {
                *detail = said;
            }
            return Err(error);
        }
        self.info.mount = Some(MountReadBack::new(
            cmd.to_string(),
            out.elapsed_ns,
            self.spec.mount_options.clone(),
        ));
        self.mount_cmd = Some(cmd);
        self.filesystem = Some(record);
        Ok(())
    }

    /// Waits for a host lock (another fsbench process may hold it), at most `wait`, and holds
    /// it until teardown ends; stop requests end the wait. `why` tells the user why they wait.
    fn hold_host_lock(
        &mut self,
        path: &Path,
        wait: std::time::Duration,
        stop: &dyn Fn() -> bool,
        why: &str,
    ) -> Result<(), TargetError> {
        let started = std::time::Instant::now();
        loop {
            match self.sys.try_lock(path) {
                Ok(Some(lock)) => {
                    self.held.push(lock);
                    return Ok(());
                }
                Ok(None) => {}
                Err(e) => return Err(TargetError::io("lock", path, e)),
            }
            check_stop(stop)?;
            if started.elapsed() >= wait {
                return Err(TargetError::Invalid(format!(
                    "another fsbench process held {} for {} min; {why}: wait for it, or run again later",
                    path.display(),
                    wait.as_secs() / 60,
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }

    /// Reads the mount back from /proc/self/mountinfo and compares it with the request.
    fn read_mount_back(&mut self) -> Result<(), TargetError> {
        let text = self
            .sys
            .read_file(Path::new("/proc/self/mountinfo"))
            .map_err(|e| TargetError::io("read", "/proc/self/mountinfo", e))?;
        let entry = parse_mountinfo(&text)
            .into_iter()
            .rfind(|m| m.mount_point == self.info.mountpoint)
            .ok_or_else(|| {
                TargetError::Unsupported(format!(
                    "{} is not in /proc/self/mountinfo after mounting",
                    self.info.mountpoint.display()
                ))
            })?;
        let compare = self.spec.fs.capabilities().mount_options_in_mountinfo;
        let Some(mount) = self.info.mount.as_mut() else {
            return Ok(());
        };
        mount.fs_type = entry.fs_type.clone();
        mount.mount_options = entry.mount_options.clone();
        mount.super_options = entry.super_options.clone();
        if compare {
            let (changed, not_shown) = compare_options(
                self.spec.mount_options.as_deref().unwrap_or(""),
                &entry.mount_options,
                &entry.super_options,
            );
            mount.changed = changed;
            mount.not_shown = not_shown;
        }
        Ok(())
    }

    /// Sets the scheduler on the device, or on each member of an array (md has none of its
    /// own: its members' queues are where requests wait), and reads it back.
    fn set_scheduler(&mut self) -> Result<(), TargetError> {
        let sys = self.sys;
        let members = self.devices.paths();
        for (i, device) in members.iter().enumerate() {
            let Some(sysfs) = scheduler::sysfs_path(sys, device) else {
                if let Some(requested) = &self.spec.scheduler {
                    return Err(TargetError::Unsupported(format!(
                        "{} has no I/O scheduler to set to {requested}",
                        device.display()
                    )));
                }
                continue;
            };
            let read = |p: &Path| sys.read_file(p).map(|t| scheduler::parse(&t));
            let before = read(&sysfs).map_err(|e| TargetError::io("read", &sysfs, e))?;
            let mut note = None;
            if let Some(requested) = &self.spec.scheduler {
                let resolved =
                    scheduler::resolve(requested, &before).map_err(TargetError::Unsupported)?;
                note = resolved.note;
                if resolved.name != before.current {
                    sys.write_file(&sysfs, &resolved.name)
                        .map_err(|e| TargetError::io("set the scheduler in", &sysfs, e))?;
                    self.ledger.push(
                        self.sys,
                        Resource::Scheduler {
                            sysfs: sysfs.clone(),
                            previous: before.current.clone(),
                        },
                    );
                }
            }
            let after = read(&sysfs).map_err(|e| TargetError::io("read", &sysfs, e))?;
            if i > 0 {
                continue;
            }
            if members.len() > 1 {
                let each = format!("on each of the {} members", members.len());
                note = Some(note.map_or(each.clone(), |n| format!("{n}; {each}")));
            }
            let backing_disk = self
                .info
                .device
                .image
                .as_deref()
                .and_then(scheduler::sysfs_path_of_file)
                .and_then(|p| read(&p).ok())
                .map(|s| s.current);
            self.info.scheduler = Some(SchedulerInfo {
                sysfs,
                available: before.available,
                previous: before.current,
                requested: self.spec.scheduler.clone(),
                in_force: after.current,
                note,
                backing_disk,
            });
        }
        Ok(())
    }

    /// Brings the page cache to the spec's policy before a workload; records what was reached.
    pub fn apply_cache_policy(&mut self) -> Result<CacheReached, TargetError> {
        let sys = self.sys;
        let meminfo = || {
            sys.read_file(Path::new("/proc/meminfo"))
                .ok()
                .map(|t| parse_meminfo(&t))
        };
        let policy = self.spec.cache;
        let reached = match policy {
            CachePolicy::Warm => CacheReached {
                policy,
                state: "warm".into(),
                before: None,
                after: None,
                note: None,
            },
            CachePolicy::Direct => CacheReached {
                policy,
                state: "direct".into(),
                before: None,
                after: None,
                note: Some("the workload bypasses the page cache with O_DIRECT".into()),
            },
            CachePolicy::Drop => {
                let before = meminfo();
                crate::cache::drop_all(sys).map_err(|e| {
                    TargetError::Unsupported(format!("{e}; use the cache policy remount or warm"))
                })?;
                let after = meminfo();
                let note = self
                    .spec
                    .fs
                    .capabilities()
                    .undroppable_cache
                    .map(str::to_string);
                CacheReached {
                    policy,
                    state: if note.is_some() {
                        "not dropped".into()
                    } else {
                        "dropped".into()
                    },
                    before,
                    after,
                    note,
                }
            }
            CachePolicy::Remount => {
                let before = meminfo();
                let fs = self.spec.fs;
                let note = fs.remount(&mut Building { target: self })?;
                CacheReached {
                    policy,
                    state: "remounted".into(),
                    before,
                    after: meminfo(),
                    note: note.map(str::to_string),
                }
            }
        };
        self.info.cache = Some(reached.clone());
        Ok(reached)
    }

    /// Remounts the filesystem (umount + mount, or its own way) so that what follows starts
    /// with a cold page cache, whatever the spec's policy; says how. For a workload's request
    /// between two of its steps (the task chain's read-all).
    pub fn remount_cold(&mut self) -> Result<String, TargetError> {
        let fs = self.spec.fs;
        let note = fs.remount(&mut Building { target: self })?;
        Ok(match note {
            Some(note) => format!("remounted ({note})"),
            None => "remounted".to_string(),
        })
    }

    /// Cuts the mounted filesystem as a crash of the system would ([`System::shutdown`]: what
    /// reached the device stays, the log is not written back), unmounts it and mounts it again
    /// (timed: the recovery, the log's replay included), then checks it read-only (unmounted)
    /// and mounts it for the workload. `Unsupported` where the filesystem has no shutdown
    /// ioctl (btrfs and tmpfs on this kernel, zfs through FUSE).
    pub fn cut(&mut self) -> Result<CutDone, TargetError> {
        let sys = self.sys;
        let fs = self.spec.fs;
        let point = self.info.mountpoint.clone();
        let Some(mount) = self.mount_cmd.clone() else {
            return Err(TargetError::Unsupported(format!(
                "{} is not mounted by mount(8) here, so fsbench cannot cut and mount it again",
                fs.name()
            )));
        };
        if let Err(e) = sys.shutdown(&point) {
            return Err(match e.raw_os_error() {
                Some(libc::ENOTTY | libc::EOPNOTSUPP | libc::ENOSYS) => {
                    TargetError::Unsupported(format!(
                        "{} has no shutdown ioctl on this kernel ({e}), so it cannot be cut \
                         by one here: cut it by power instead (--cut power, or cut = \"power\" \
                         in a plan: the recording device)",
                        fs.name()
                    ))
                }
                _ => TargetError::Io {
                    action: "shut down",
                    path: point,
                    source: e,
                },
            });
        }
        let mount_again = |sys: &dyn System| -> Result<u64, TargetError> {
            let out = sys.run(&mount).map_err(|e| missing_tool(&mount, e))?;
            if out.success() {
                Ok(out.elapsed_ns)
            } else {
                // The ledger still lists the mount; teardown will find it gone.
                Err(TargetError::command(
                    "mount after the cut",
                    &mount,
                    &out,
                    "the filesystem did not recover: see `dmesg`",
                ))
            }
        };
        self.unmount_here("cut")?;
        let recovery_ns = mount_again(sys)?;
        // Whether the filesystem has a check tool at all (the command is only built here).
        let fsck = match fs.fsck(Path::new("")).is_some() {
            true => {
                self.unmount_here("cut")?;
                let fsck = fs.check(&Building { target: self });
                mount_again(sys)?;
                fsck
            }
            false => None,
        };
        Ok(CutDone {
            how: "shutdown ioctl (FS_IOC_SHUTDOWN), log not flushed".into(),
            recovery_ns,
            fsck,
        })
    }

    /// umount(8) of the mount point (whatever is mounted there), for `action`, tried again
    /// for a while when busy (files the kernel has yet to let go of, such as those of the
    /// io_uring rings a workload just closed).
    fn unmount_here(&self, action: &'static str) -> Result<(), TargetError> {
        let (umount, out) = crate::system::umount_patiently(
            self.sys,
            &self.info.mountpoint,
            std::time::Duration::from_secs(3),
        )
        .map_err(|e| missing_tool(&Cmd::new("umount"), e))?;
        if out.success() {
            Ok(())
        } else {
            Err(TargetError::command(
                action,
                &umount,
                &out,
                "a process may still use the mount",
            ))
        }
    }

    /// umount(8), then the same mount(8) command as before.
    fn umount_and_mount(&mut self) -> Result<(), TargetError> {
        let sys = self.sys;
        self.unmount_here("remount")?;
        #[cfg(debug_assertions)]
        self.between_mounts()?;
        let mount = self.mount_cmd.clone().expect("mounted before");
        let out = sys.run(&mount).map_err(|e| missing_tool(&mount, e))?;
        if !out.success() {
            // The ledger still lists the mount; teardown will find it gone.
            return Err(TargetError::command("remount", &mount, &out, "see `dmesg`"));
        }
        Ok(())
    }

    /// Tests only (debug builds): the shell command in `FSBENCH_TEST_BETWEEN_MOUNTS`, if set, run
    /// while a remount has the filesystem unmounted, with `FSBENCH_DEVICE` (the device the
    /// filesystem is on), `FSBENCH_IMAGE` (its image, empty on a real device) and
    /// `FSBENCH_MOUNTPOINT` in its environment: a test changes the device behind the
    /// filesystem's back there (`--verify` must find it). A failing command fails the remount.
    #[cfg(debug_assertions)]
    fn between_mounts(&self) -> Result<(), TargetError> {
        const HOOK: &str = "run FSBENCH_TEST_BETWEEN_MOUNTS between the umount and the mount of";
        let Some(hook) = std::env::var_os("FSBENCH_TEST_BETWEEN_MOUNTS") else {
            return Ok(());
        };
        let image = self.info.device.image.clone().unwrap_or_default();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&hook)
            .env("FSBENCH_DEVICE", self.device_path())
            .env("FSBENCH_IMAGE", image)
            .env("FSBENCH_MOUNTPOINT", &self.info.mountpoint)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| TargetError::io(HOOK, &self.info.mountpoint, e))?;
        if out.status.success() {
            return Ok(());
        }
        let said = format!(
            "{}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
        Err(TargetError::io(
            HOOK,
            &self.info.mountpoint,
            std::io::Error::other(said),
        ))
    }

    /// Unmounts, checks, restores and removes everything; returns the full read-back with the
    /// fsck verdict and teardown notes.
    pub fn finish(mut self) -> TargetInfo {
        self.teardown();
        self.info.clone()
    }

    /// As [`Target::finish`], but the image is renamed to `image` (on the same filesystem)
    /// instead of removed, once unmounted, checked and detached: an aged image for the cache
    /// (`crate::images`), which must have put `image` on record first.
    pub fn finish_into(mut self, image: &Path) -> TargetInfo {
        self.keep_image = Some(image.to_path_buf());
        self.finish()
    }

    fn teardown(&mut self) {
        if self.torn_down {
            return;
        }
        self.torn_down = true;
        let sys = self.sys;
        // Newest first. What cannot be undone stays in the ledger (and its state file), so
        // `fsbench cleanup` can finish the job once the cause is gone.
        let resources: Vec<Resource> = self.ledger.resources().iter().rev().cloned().collect();
        let check_point = self.spec.fs.check_point();
        for resource in resources {
            let holds_fs = self.filesystem.as_ref() == Some(&resource);
            if holds_fs && check_point == CheckPoint::BeforeDestroy {
                self.check();
            }
            let result = match &resource {
                Resource::Loop { device: path, .. } => match self.devices.take_loop(path) {
                    Some(device) => {
                        let path = device.path.clone();
                        sys.detach_loop(device)
                            .map(|_| format!("detached {}", path.display()))
                            .map_err(|e| format!("cannot detach {}: {e}", path.display()))
                    }
                    None => undo::undo(sys, &resource),
                },
                Resource::Image { path } if self.keep_image.is_some() => {
                    let keep = self.keep_image.take().expect("checked");
                    sys.rename(path, &keep)
                        .map(|()| format!("kept {} as {}", path.display(), keep.display()))
                        .map_err(|e| format!("cannot keep {}: {e}", path.display()))
                }
                other => undo::undo(sys, other),
            };
            let unmounted = holds_fs && result.is_ok();
            match result {
                Ok(note) => {
                    self.info.teardown.push(note);
                    self.ledger.forget(sys, &resource);
                }
                Err(note) => self.info.teardown.push(format!("error: {note}")),
            }
            if unmounted && check_point == CheckPoint::AfterUnmount {
                self.check();
            }
        }
        // The next fsbench process may take its turn once ours is gone.
        self.held.clear();
    }

    /// The filesystem's read-only check, once, when the spec asks for it.
    fn check(&mut self) {
        if self.spec.fsck && self.info.fsck.is_none() {
            let fs = self.spec.fs;
            self.info.fsck = fs.check(&Building { target: self });
        }
    }
}

/// A target as the [`Filesystem`] hooks see it while it is made, remounted or checked
/// ([`fs::Build`]).
struct Building<'a, 's> {
    target: &'a mut Target<'s>,
}

impl<'s> fs::Build<'s> for Building<'_, 's> {
    fn sys(&self) -> &'s dyn System {
        self.target.sys
    }
    fn mkfs_options(&self) -> &[String] {
        &self.target.spec.mkfs_options
    }
    fn mount_options(&self) -> Option<&str> {
        self.target.spec.mount_options.as_deref()
    }
    fn array(&self) -> Option<&ArraySpec> {
        self.target.spec.array.as_ref()
    }
    fn work_dir(&self) -> &Path {
        &self.target.spec.work_dir
    }
    fn device(&self) -> Option<&Path> {
        self.target.devices.main()
    }
    fn members(&self) -> Vec<PathBuf> {
        self.target.devices.paths()
    }
    fn mountpoint(&self) -> &Path {
        &self.target.info.mountpoint
    }
    fn tag(&self) -> &str {
        &self.target.tag
    }
    fn info(&self) -> &TargetInfo {
        &self.target.info
    }
    fn info_mut(&mut self) -> &mut TargetInfo {
        &mut self.target.info
    }
    fn mount_source(&self) -> String {
        self.target.mount_source()
    }
    fn set_mount_source(&mut self, source: &str) {
        self.target.mount_source = Some(source.to_string());
    }
    fn record(&mut self, resource: Resource) {
        self.target.ledger.push(self.target.sys, resource);
    }
    fn record_filesystem(&mut self, resource: Resource) {
        self.record(resource.clone());
        self.target.filesystem = Some(resource);
    }
    fn mkfs(&mut self) -> Result<(), TargetError> {
        self.target.mkfs()
    }
    fn mount(&mut self, extra: &[String]) -> Result<(), TargetError> {
        self.target.mount(extra)
    }
    fn umount_and_mount(&mut self) -> Result<(), TargetError> {
        self.target.umount_and_mount()
    }
    fn hold_host_lock(
        &mut self,
        path: &Path,
        wait: std::time::Duration,
        stop: &dyn Fn() -> bool,
        why: &str,
    ) -> Result<(), TargetError> {
        self.target.hold_host_lock(path, wait, stop, why)
    }
}

/// The block devices under a filesystem, in one place: its device, or an array's members (each
/// a loop device fsbench attached and holds until teardown, or a real device), and the md array
/// over them when md makes the array.
#[derive(Default)]
struct Devices {
    members: Vec<MemberInfo>,
    /// The loop devices among the members, held open until teardown (autoclear).
    loops: Vec<LoopDevice>,
    md: Option<PathBuf>,
}

impl Devices {
    /// The device the filesystem goes on: the md array, or the (first) member.
    fn main(&self) -> Option<&Path> {
        self.md
            .as_deref()
            .or_else(|| self.members.first().map(|m| m.path.as_path()))
    }

    fn paths(&self) -> Vec<PathBuf> {
        self.members.iter().map(|m| m.path.clone()).collect()
    }

    /// The held loop device at `path`, to detach.
    fn take_loop(&mut self, path: &Path) -> Option<LoopDevice> {
        let i = self.loops.iter().position(|l| l.path == path)?;
        Some(self.loops.remove(i))
    }
}

impl Drop for Target<'_> {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// Compares requested mount options with what the kernel shows: (changed, not shown).
pub fn compare_options(
    requested: &str,
    mount_options: &str,
    super_options: &str,
) -> (Vec<(String, String)>, Vec<String>) {
    let shown: Vec<&str> = mount_options
        .split(',')
        .chain(super_options.split(','))
        .collect();
    let key = |o: &str| o.split('=').next().unwrap_or(o).to_string();
    let mut changed = Vec::new();
    let mut not_shown = Vec::new();
    for option in requested
        .split(',')
        .map(str::trim)
        .filter(|o| !o.is_empty())
    {
        if shown.contains(&option) {
            continue;
        }
        match shown
            .iter()
            .find(|s| key(s) == key(option) && s.contains('='))
        {
            Some(in_force) => changed.push((option.to_string(), in_force.to_string())),
            None => not_shown.push(option.to_string()),
        }
    }
    (changed, not_shown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::{CmdOutput, RecordingSystem};

    fn host() -> RecordingSystem {
        let sys = RecordingSystem::new();
        sys.set_file("/proc/filesystems", "nodev\ttmpfs\n\text4\n\txfs\n");
        sys.set_file(
            "/proc/self/mountinfo",
            "22 1 253:0 / / rw - ext4 /dev/vda rw\n",
        );
        sys.set_file(
            "/sys/class/block/loop40/queue/scheduler",
            "[none] mq-deadline kyber bfq\n",
        );
        sys
    }

    #[test]
    fn builder_sets_what_it_is_given_and_names_known_filesystems() {
        let spec = TargetSpec::builder("ext4", "/w")
            .mkfs_options("-b 4096  -O ^has_journal")
            .mount_options(Some(""))
            .scheduler(Some("none"))
            .cache(CachePolicy::Drop)
            .loop_direct_io(false)
            .fsck(false)
            .build()
            .unwrap();
        assert_eq!(spec.fs.name(), "ext4");
        assert_eq!(spec.mkfs_options, ["-b", "4096", "-O", "^has_journal"]);
        assert_eq!(spec.mount_options, None);
        assert_eq!(spec.scheduler.as_deref(), Some("none"));
        assert_eq!(spec.cache, CachePolicy::Drop);
        assert!(!spec.loop_direct_io && !spec.fsck);
        assert_eq!(spec.work_dir, PathBuf::from("/w"));
        let err = TargetSpec::builder("ntfs", "/w")
            .build()
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown filesystem 'ntfs'; use one of"),
            "{err}"
        );
        assert!(err.contains("ext4") && !err.contains("--fs"), "{err}");
    }

    fn spec(fs: &str) -> TargetSpec {
        let mut spec = TargetSpec::new(fs, "/w").unwrap();
        spec.device = DeviceSpec::Image {
            size_bytes: Some(512 << 20),
        };
        spec
    }

    /// The log without version and read-back queries, with generated names shortened.
    fn actions(sys: &RecordingSystem) -> Vec<String> {
        sys.log()
            .into_iter()
            .filter(|l| !l.ends_with(" -V") && !l.contains("dumpe2fs") && !l.contains("/state"))
            .map(|l| {
                l.split(' ')
                    .map(|w| {
                        if w.starts_with("/w/") && w.contains(&format!("-{}-", std::process::id()))
                        {
                            let (head, _) =
                                w.split_once(&format!("-{}-", std::process::id())).unwrap();
                            let ext = if w.ends_with(".img") { ".img" } else { "" };
                            format!("{head}{ext}")
                        } else {
                            w.to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    /// A default image takes the free space under the work directory over this host's targets
    /// at once: 4 ranks' images are each sized from a quarter of it.
    #[test]
    fn a_default_image_takes_its_share_of_the_hosts_free_space() {
        let dir = tempfile::tempdir().unwrap();
        let free = fsbench_measure::host::free_bytes(dir.path()).unwrap();
        for share in [1u32, 4] {
            let sys = host();
            let mut s = TargetSpec::new("ext4", dir.path()).unwrap();
            s.host_share = share;
            let target = Target::prepare(&sys, s, &|| false).unwrap();
            target.finish();
            let made: u64 = sys
                .log()
                .iter()
                .find_map(|l| l.strip_prefix("create ")?.rsplit(' ').next()?.parse().ok())
                .unwrap();
            let expected = device::default_image_bytes(free / u64::from(share))
                .max(fs::by_name("ext4").unwrap().min_device_bytes());
            // Free space may move by a few MiB while the test runs.
            assert!(
                made.abs_diff(expected) <= 64 << 20,
                "{share}: {made} vs {expected}"
            );
        }
    }

    #[test]
    fn prepares_and_tears_down_in_order() {
        let sys = host();
        let mut s = spec("ext4");
        s.mount_options = Some("noatime".into());
        s.scheduler = Some("deadline".into());
        let target = Target::prepare(&sys, s, &|| false).unwrap();
        let info = target.finish();
        assert_eq!(
            actions(&sys),
            [
                "mkdir /w",
                "mkdir /w/mnt-ext4",
                "create /w/ext4.img 536870912",
                "attach /dev/loop40 /w/ext4.img direct_io=true",
                "run mkfs.ext4 -F -E lazy_itable_init=0,lazy_journal_init=0 /dev/loop40",
                "run mount -t ext4 -o noatime /dev/loop40 /w/mnt-ext4",
                "write /sys/class/block/loop40/queue/scheduler mq-deadline",
                "write /sys/class/block/loop40/queue/scheduler none",
                "run umount /w/mnt-ext4",
                "run e2fsck -f -n /dev/loop40",
                "detach /dev/loop40",
                "rm /w/ext4.img",
                "rmdir /w/mnt-ext4",
            ]
        );
        let sched = info.scheduler.unwrap();
        assert_eq!(
            (sched.previous.as_str(), sched.in_force.as_str()),
            ("none", "mq-deadline")
        );
        assert!(sched.note.unwrap().contains("deadline -> mq-deadline"));
        assert!(info.fsck.unwrap().clean);
        assert_eq!(info.mount.unwrap().not_shown, Vec::<String>::new());
        assert!(
            info.teardown.iter().all(|n| !n.starts_with("error")),
            "{:?}",
            info.teardown
        );
    }

    /// A cut: the shutdown ioctl on the mount point, then umount, the timed mount (the
    /// recovery), the read-only check unmounted, and the mount the workload goes on with.
    #[test]
    fn a_cut_shuts_down_remounts_checks_and_mounts_again() {
        let sys = host();
        let mut target = Target::prepare(&sys, spec("ext4"), &|| false).unwrap();
        let before = actions(&sys).len();
        let done = target.cut().unwrap();
        assert!(done.how.contains("FS_IOC_SHUTDOWN"), "{}", done.how);
        assert!(done.fsck.unwrap().clean);
        assert_eq!(
            actions(&sys)[before..],
            [
                "shutdown /w/mnt-ext4",
                "run umount /w/mnt-ext4",
                "run mount -t ext4 /dev/loop40 /w/mnt-ext4",
                "run umount /w/mnt-ext4",
                "run e2fsck -f -n /dev/loop40",
                "run mount -t ext4 /dev/loop40 /w/mnt-ext4",
            ]
        );
        target.finish();
    }

    /// Mount points and images have names nobody can guess ahead (the old `mnt-<fs>-<pid>-<n>`
    /// could be planted), different for every target.
    #[test]
    fn mount_points_and_images_get_names_nobody_can_guess() {
        let sys = host();
        let names: Vec<(PathBuf, PathBuf)> = (0..2)
            .map(|_| {
                let target = Target::prepare(&sys, spec("ext4"), &|| false).unwrap();
                let info = target.finish();
                (info.mountpoint, info.device.image.unwrap())
            })
            .collect();
        let pid = std::process::id();
        for (point, image) in &names {
            let point = point.file_name().unwrap().to_str().unwrap();
            let image = image.file_name().unwrap().to_str().unwrap();
            let (tag, token) = point.rsplit_once('-').unwrap();
            assert!(tag.starts_with(&format!("mnt-ext4-{pid}-")), "{point}");
            assert!(
                token.len() == 8 && token.bytes().all(|b| b.is_ascii_hexdigit()),
                "{point}"
            );
            let (tag, token) = image.trim_end_matches(".img").rsplit_once('-').unwrap();
            assert!(tag.starts_with(&format!("ext4-{pid}-")), "{image}");
            assert_eq!(token.len(), 8, "{image}");
        }
        assert_ne!(names[0].0, names[1].0);
    }

    #[test]
    fn zfs_takes_its_turn_starts_the_daemon_and_scrubs_before_destroying() {
        let sys = host();
        sys.set_file("/proc/filesystems", "nodev\ttmpfs\n\text4\nnodev\tfuse\n");
        sys.set_file("/dev/fuse", "");
        let pid = std::process::id();
        let pidfile = format!("/w/run/zfs-fuse-{pid}.pid");
        // No daemon answers until ours is started; its pid names no running zfs-fuse here,
        // so teardown only removes the pid file (a real one would be sent SIGTERM).
        sys.respond_once(
            "zpool list",
            RecordingSystem::failure(1, "connect: refused"),
        );
        sys.set_file(&pidfile, "4242\n");
        sys.respond(
            "zpool status -x",
            CmdOutput {
                status: Some(0),
                stdout: "pool 'x' is healthy\n".into(),
                ..CmdOutput::default()
            },
        );
        let mut s = spec("zfs");
        s.mount_options = Some("atime=off".into());
        s.cache = CachePolicy::Remount;
        let mut target = Target::prepare(&sys, s, &|| false).unwrap();
        let reached = target.apply_cache_policy().unwrap();
        assert_eq!((reached.state.as_str(), reached.note), ("remounted", None));
        let info = target.finish();
        let pool = pool_name(&sys);
        let log: Vec<String> = actions(&sys)
            .into_iter()
            .filter(|l| !l.starts_with("run dpkg-query"))
            .map(|l| l.replace(&pool, "POOL"))
            .collect();
        assert_eq!(
            log,
            [
                "mkdir /w",
                "mkdir /w/mnt-zfs",
                "create /w/zfs.img 536870912",
                "attach /dev/loop40 /w/zfs.img direct_io=true",
                "lock /run/lock/fsbench-zfs-fuse.lock",
                "run zpool list",
                "mkdir /w/run",
                &format!("run zfs-fuse --pidfile {pidfile}"),
                "run zpool list",
                "run zpool create -f -m /w/mnt-zfs -O atime=off POOL /dev/loop40",
                "run zfs get -H -o property,value,source all POOL",
                "run zpool export POOL",
                "run zpool import -d /dev POOL",
                "run zpool scrub POOL",
                "run zpool status POOL",
                "run zpool status -x POOL",
                "run zpool list -H -o name POOL",
                "run zpool destroy -f POOL",
                &format!("rm {pidfile}"),
                "detach /dev/loop40",
                "rm /w/zfs.img",
                "rmdir /w/mnt-zfs",
            ]
        );
        assert!(info.fsck.unwrap().clean);
        assert_eq!(info.mount.unwrap().fs_type, "fuse.zfs");
    }

    /// The generated pool name (`fsbench-PID-N`) from the `zpool create` line.
    fn pool_name(sys: &RecordingSystem) -> String {
        let create = sys
            .log()
            .into_iter()
            .find(|l| l.starts_with("run zpool create"))
            .unwrap();
        create.split(' ').rev().nth(1).unwrap().to_string()
    }

    #[test]
    fn tmpfs_mounts_memory_of_the_image_size_and_cannot_go_cold() {
        let sys = host();
        let mut s = spec("tmpfs");
        s.mount_options = Some("noatime".into());
        s.cache = CachePolicy::Remount;
        let mut target = Target::prepare(&sys, s, &|| false).unwrap();
        let reached = target.apply_cache_policy().unwrap();
        assert!(reached.note.unwrap().contains("would lose its files"));
        let info = target.finish();
        assert_eq!(
            actions(&sys),
            [
                "mkdir /w",
                "mkdir /w/mnt-tmpfs",
                "run mount -t tmpfs -o size=536870912,noatime fsbench-tmpfs /w/mnt-tmpfs",
                "run umount /w/mnt-tmpfs",
                "rmdir /w/mnt-tmpfs",
            ]
        );
        assert_eq!(info.device.kind, "memory");
        assert!(info.fsck.is_none() && info.scheduler.is_none());
        let mut s = spec("tmpfs");
        s.device = DeviceSpec::Block {
            devices: vec![device::RealDevice {
                path: "/dev/sdz".into(),
                acknowledged_signature: None,
            }],
        };
        let err = Target::prepare(&sys, s, &|| false).err().unwrap();
        assert!(err.to_string().contains("tmpfs lives in memory"), "{err}");
    }

    /// A mount the kernel still holds for a moment (io_uring puts a closed ring's files from a
    /// worker) is unmounted on a later try: the remount succeeds, and umount(8) ran again.
    #[test]
    fn a_remount_waits_out_a_mount_busy_for_a_moment() {
        let sys = host();
        let mut target = Target::prepare(&sys, spec("ext4"), &|| false).unwrap();
        let umounts = |sys: &RecordingSystem| {
            sys.log()
                .iter()
                .filter(|l| l.starts_with("run umount "))
                .count()
        };
        let before = umounts(&sys);
        sys.respond_once(
            "umount",
            RecordingSystem::failure(32, "umount: /w/m: target is busy."),
        );
        assert_eq!(target.remount_cold().unwrap(), "remounted");
        assert_eq!(umounts(&sys) - before, 2, "{:?}", sys.log());
        target.finish();
    }

    #[test]
    fn what_cannot_be_undone_stays_on_record_for_cleanup() {
        let sys = host();
        let target = Target::prepare(&sys, spec("ext4"), &|| false).unwrap();
        sys.respond("umount", RecordingSystem::failure(32, "target is busy"));
        let info = target.finish();
        assert!(
            info.teardown
                .iter()
                .any(|n| n.starts_with("error: cannot unmount")),
            "{:?}",
            info.teardown
        );
        let last_record = sys
            .log()
            .into_iter()
            .rfind(|l| l.starts_with("write /w/state/"))
            .unwrap();
        assert!(
            last_record.contains("\"mount\""),
            "the mount was forgotten: {last_record}"
        );
        assert!(
            !sys.log().iter().any(|l| l.starts_with("rm /w/state/")),
            "the state file was removed"
        );
        // Kept, as docs/failures.md says, not detached lazily out of sight.
        assert!(
            !sys.log().iter().any(|l| l.contains("umount -l")),
            "{:?}",
            sys.log()
        );
    }

    #[test]
    fn a_rejected_mount_option_is_unsupported_and_nothing_stays() {
        let sys = host();
        sys.respond(
            "mount -t ext4 -o journal_async_commit",
            RecordingSystem::failure(32, "mount: fsconfig system call failed: ext4: Unknown parameter 'journal_async_commit'"),
        );
        sys.respond(
            "dmesg",
            CmdOutput {
                timed_out: false,
                status: Some(0),
                stdout: "[    1.0] EXT4-fs (loop7): mounted filesystem\n[   12.5] EXT4-fs (loop40): Unrecognized mount option \"journal_async_commit\" or missing value\n[   12.6] loop40: detected capacity change\n".into(),
                ..CmdOutput::default()
            },
        );
        let mut s = spec("ext4");
        s.mount_options = Some("journal_async_commit".into());
        let err = Target::prepare(&sys, s, &|| false).err().unwrap();
        assert_eq!(err.outcome(), Some(fsbench_model::Outcome::Unsupported));
        let text = err.to_string();
        assert!(
            text.contains("Unknown parameter 'journal_async_commit'"),
            "{text}"
        );
        // The kernel's own reason, once, and the prefix once.
        assert!(
            text.contains("the kernel said: EXT4-fs (loop40): Unrecognized mount option"),
            "{text}"
        );
        assert_eq!(text.matches("unsupported").count(), 1, "{text}");
        let log = actions(&sys);
        let tail: Vec<&str> = log.iter().rev().take(5).rev().map(String::as_str).collect();
        assert_eq!(
            tail,
            [
                "run mount -t ext4 /dev/loop40 /w/mnt-ext4",
                "run umount /w/mnt-ext4",
                "detach /dev/loop40",
                "rm /w/ext4.img",
                "rmdir /w/mnt-ext4",
            ]
        );
    }

    #[test]
    fn a_failing_mkfs_says_why_and_undoes_the_device() {
        let sys = host();
        sys.respond(
            "mkfs.ext4",
            RecordingSystem::failure(1, "mke2fs: invalid inode size 3"),
        );
        let mut s = spec("ext4");
        s.mkfs_options = split_options("-I 3");
        let err = Target::prepare(&sys, s, &|| false).err().unwrap();
        let text = err.to_string();
        assert!(
            text.contains("invalid inode size 3") && text.contains("--mkfs-options"),
            "{text}"
        );
        assert!(!actions(&sys).iter().any(|l| l.starts_with("run mount")));
        assert_eq!(actions(&sys).last().unwrap(), "rmdir /w/mnt-ext4");
    }

    #[test]
    fn a_missing_tool_or_kernel_support_stops_before_anything_is_made() {
        let sys = host();
        sys.hide_program("mkfs.xfs");
        let err = Target::prepare(&sys, spec("xfs"), &|| false).err().unwrap();
        assert_eq!(err.outcome(), Some(fsbench_model::Outcome::Unsupported));
        assert!(err.to_string().contains("xfsprogs"), "{err}");
        let err = Target::prepare(&sys, spec("btrfs"), &|| false)
            .err()
            .unwrap();
        assert!(err.to_string().contains("kernel lacks btrfs"), "{err}");
        assert!(actions(&sys)
            .iter()
            .all(|l| !l.starts_with("create") && !l.starts_with("mkdir")));
    }

    #[test]
    fn too_small_an_image_is_refused_before_mkfs() {
        let sys = host();
        let mut s = spec("xfs");
        s.device = DeviceSpec::Image {
            size_bytes: Some(16 << 20),
        };
        let err = Target::prepare(&sys, s, &|| false).err().unwrap();
        assert!(err.to_string().contains("too small for xfs"), "{err}");
        assert!(!actions(&sys).iter().any(|l| l.contains("mkfs.xfs -f")));
    }

    #[test]
    fn a_stop_request_undoes_what_was_made() {
        let sys = host();
        let calls = std::cell::Cell::new(0);
        let stop = || {
            calls.set(calls.get() + 1);
            calls.get() > 2
        };
        let err = Target::prepare(&sys, spec("ext4"), &stop).err().unwrap();
        assert!(matches!(err, TargetError::Interrupted));
        // The third check comes after mkfs: nothing is mounted, the device is undone.
        let log = actions(&sys);
        assert!(
            log.iter().any(|l| l.starts_with("run mkfs.ext4")),
            "{log:?}"
        );
        assert!(!log.iter().any(|l| l.starts_with("run mount")), "{log:?}");
        assert_eq!(
            log[log.len() - 3..],
            ["detach /dev/loop40", "rm /w/ext4.img", "rmdir /w/mnt-ext4"]
        );
    }

    /// A btrfs RAID 0 over two images: each image and loop device made and on record, mkfs
    /// given the layout and every member, the scheduler set on each member, the members read
    /// back, and each undone in reverse.
    #[test]
    fn a_btrfs_array_makes_checks_and_undoes_every_member() {
        let sys = host();
        sys.set_file("/proc/filesystems", "\tbtrfs\n");
        sys.set_file(
            "/sys/class/block/loop41/queue/scheduler",
            "[none] mq-deadline kyber bfq\n",
        );
        sys.respond(
            "btrfs filesystem show",
            CmdOutput {
                status: Some(0),
                stdout: "Label: none  uuid: 1\n\tdevid    1 size 512.00MiB path /dev/loop40\n\tdevid    2 size 512.00MiB path /dev/loop41\n".into(),
                ..CmdOutput::default()
            },
        );
        let mut s = spec("btrfs");
        s.array = Some("raid0:2,metadata=raid1".parse().unwrap());
        s.scheduler = Some("mq-deadline".into());
        let target = Target::prepare(&sys, s, &|| false).unwrap();
        let info = target.finish();
        let log: Vec<String> = actions(&sys)
            .into_iter()
            .filter(|l| !l.contains("--version") && !l.contains("dump-super"))
            .collect();
        assert_eq!(
            log,
            [
                "mkdir /w",
                "mkdir /w/mnt-btrfs",
                "create /w/btrfs.img 536870912",
                "attach /dev/loop40 /w/btrfs.img direct_io=true",
                "create /w/btrfs.img 536870912",
                "attach /dev/loop41 /w/btrfs.img direct_io=true",
                "run mkfs.btrfs -f -d raid0 -m raid1 /dev/loop40 /dev/loop41",
                "run mount -t btrfs /dev/loop40 /w/mnt-btrfs",
                "run btrfs filesystem show /w/mnt-btrfs",
                "write /sys/class/block/loop40/queue/scheduler mq-deadline",
                "write /sys/class/block/loop41/queue/scheduler mq-deadline",
                "write /sys/class/block/loop41/queue/scheduler none",
                "write /sys/class/block/loop40/queue/scheduler none",
                "run umount /w/mnt-btrfs",
                "run btrfs check --readonly /dev/loop40",
                "detach /dev/loop41",
                "rm /w/btrfs.img",
                "detach /dev/loop40",
                "rm /w/btrfs.img",
                "rmdir /w/mnt-btrfs",
            ]
        );
        let array = info.device.array.unwrap();
        assert_eq!(
            (array.layout.as_str(), array.made_by.as_str()),
            ("raid0:2,metadata=raid1", "btrfs")
        );
        assert_eq!(
            array.listed,
            [PathBuf::from("/dev/loop40"), PathBuf::from("/dev/loop41")]
        );
        assert_eq!(array.members.len(), 2);
        assert_eq!(info.device.size_bytes, 2 * (512 << 20));
        assert!(info
            .scheduler
            .unwrap()
            .note
            .unwrap()
            .contains("each of the 2 members"));
        // Each member's image is named apart (`-m1`, `-m2`).
        let images: Vec<String> = array
            .members
            .iter()
            .map(|m| m.image.as_ref().unwrap().display().to_string())
            .collect();
        assert!(
            images[0].contains("-m1-") && images[1].contains("-m2-"),
            "{images:?}"
        );
    }

    /// A member the filesystem does not list fails the target, which is undone.
    #[test]
    fn an_array_that_does_not_list_a_member_is_not_used() {
        let sys = host();
        sys.set_file("/proc/filesystems", "\tbtrfs\n");
        sys.respond(
            "btrfs filesystem show",
            CmdOutput {
                status: Some(0),
                stdout: "\tdevid    1 size 512.00MiB path /dev/loop40\n".into(),
                ..CmdOutput::default()
            },
        );
        let mut s = spec("btrfs");
        s.array = Some("raid0:2".parse().unwrap());
        let err = Target::prepare(&sys, s, &|| false)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("lists 1 of the 2 members made (not listed: /dev/loop41)"),
            "{err}"
        );
        let log = actions(&sys);
        assert_eq!(log.last().unwrap(), "rmdir /w/mnt-btrfs");
        assert!(log.iter().any(|l| l == "detach /dev/loop41"), "{log:?}");
    }

    /// md RAID under ext4 where the kernel has md: the array made over the members after they
    /// exist, the filesystem on it, and stopped after the unmount, before the members go. Where
    /// the kernel has none: unsupported, with its reason, before anything is made.
    #[test]
    fn md_goes_between_the_members_and_the_filesystem_where_the_kernel_has_it() {
        let sys = host();
        sys.set_file("/sys/class/block/loop41/queue/scheduler", "[none] bfq\n");
        let mut s = spec("ext4");
        s.array = Some("md-raid0:2,chunk=64k".parse().unwrap());
        let err = Target::prepare(&sys, s.clone(), &|| false).err().unwrap();
        assert_eq!(err.outcome(), Some(fsbench_model::Outcome::Unsupported));
        assert!(err.to_string().contains("/proc/mdstat is absent"), "{err}");
        assert!(actions(&sys).is_empty(), "{:?}", actions(&sys));

        sys.set_file("/proc/mdstat", "Personalities : [raid0]\n");
        let md = format!("/dev/md/fsbench-ext4-{}-", std::process::id());
        sys.respond(
            "mdadm --detail",
            CmdOutput {
                status: Some(0),
                stdout: "   0     7     40    0   active sync   /dev/loop40\n   1     7     41    1   active sync   /dev/loop41\n".into(),
                ..CmdOutput::default()
            },
        );
        let target = Target::prepare(&sys, s, &|| false).unwrap();
        let info = target.finish();
        let log: Vec<String> = actions(&sys)
            .into_iter()
            .map(|l| {
                l.split(' ')
                    .map(|w| {
                        if w.starts_with(&md) {
                            format!("{md}N")
                        } else {
                            w.to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert_eq!(
            log,
            [
                "mkdir /w",
                "mkdir /w/mnt-ext4",
                "create /w/ext4.img 536870912",
                "attach /dev/loop40 /w/ext4.img direct_io=true",
                "create /w/ext4.img 536870912",
                "attach /dev/loop41 /w/ext4.img direct_io=true",
                &format!("run mdadm --create {md}N --run --metadata=1.2 --level=0 --chunk=64 --raid-devices=2 /dev/loop40 /dev/loop41"),
                &format!("run mkfs.ext4 -F -E lazy_itable_init=0,lazy_journal_init=0 {md}N"),
                &format!("run mount -t ext4 {md}N /w/mnt-ext4"),
                &format!("run mdadm --detail {md}N"),
                "run umount /w/mnt-ext4",
                &format!("run e2fsck -f -n {md}N"),
                &format!("run mdadm --stop {md}N"),
                "detach /dev/loop41",
                "rm /w/ext4.img",
                "detach /dev/loop40",
                "rm /w/ext4.img",
                "rmdir /w/mnt-ext4",
            ]
        );
        let array = info.device.array.unwrap();
        assert_eq!(array.made_by, "md");
        assert!(array.made.unwrap().command.contains("--chunk=64"));
        assert!(info.device.path.unwrap().starts_with("/dev/md"));
    }

    /// What no host could make is refused before anything is made: ext4 laid over devices by
    /// itself, an array of tmpfs, and a count of real devices that is not the array's.
    #[test]
    fn an_array_a_filesystem_cannot_take_is_refused_before_anything_is_made() {
        let sys = host();
        for (fs, layout, says) in [
            ("ext4", "raid0:2", "put md under it (md-raid0:2)"),
            ("tmpfs", "md-raid0:2", "tmpfs lives in memory"),
        ] {
            let mut s = spec(fs);
            s.array = Some(layout.parse().unwrap());
            let err = Target::prepare(&sys, s, &|| false).err().unwrap();
            assert_eq!(err.outcome(), None, "{err}");
            assert!(err.to_string().contains(says), "{err}");
        }
        let mut s = spec("ext4");
        s.device = DeviceSpec::parse("/dev/vdb,/dev/vdc", Some("/dev/vdb,/dev/vdc")).unwrap();
        let err = Target::prepare(&sys, s.clone(), &|| false).err().unwrap();
        assert!(
            err.to_string().contains("2 real devices for one ext4"),
            "{err}"
        );
        s.array = Some("md-raid0:3".parse().unwrap());
        let err = Target::prepare(&sys, s, &|| false).err().unwrap();
        assert!(
            err.to_string()
                .contains("has 3 members, but 2 real devices are named"),
            "{err}"
        );
        assert!(actions(&sys).is_empty(), "{:?}", actions(&sys));
    }

    #[test]
    fn options_split_like_a_shell_and_compare_with_mountinfo() {
        assert_eq!(
            split_options("-I 256 -O 'a b' \"\""),
            ["-I", "256", "-O", "a b", ""]
        );
        let (changed, not_shown) = compare_options(
            "noatime,commit=30,bogus",
            "rw,noatime",
            "rw,commit=5,data=ordered",
        );
        assert_eq!(changed, [("commit=30".to_string(), "commit=5".to_string())]);
        assert_eq!(not_shown, ["bogus"]);
    }
}
