//! Where the io workload reads and writes: a fresh file per thread in a directory (fio's
//! default, a file per job), or a block device, each thread on a region of its own (the bare
//! device as a baseline). Laying the files out (untimed), probing O_DIRECT, opening them for
//! the timed phase, reading them back (`verify`), and removing what was made.

use super::settings::{IoPlan, Layout};
use super::worker::Written;
use super::NotRun;
use crate::data::DataSource;
use crate::fileio::{self, raw};
use crate::harness::Harness;
use crate::verify::Expect;
use crate::WorkloadError;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Where the workload works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IoTarget {
    /// A new file per thread in this directory, removed afterwards.
    Directory(PathBuf),
    /// This block device, thread t on bytes [t x size, (t+1) x size). The caller has made sure
    /// the device may be overwritten (it is held open exclusively for the run: a mounted device
    /// is refused by the kernel, but nothing here asks whether its data matters).
    Device(PathBuf),
}

impl IoTarget {
    /// What a workload is given as its directory: a block device (the `raw` baseline) is the
    /// device, anything else a directory.
    pub fn of(path: &Path) -> IoTarget {
        use std::os::unix::fs::FileTypeExt;
        match std::fs::metadata(path) {
            Ok(m) if m.file_type().is_block_device() => IoTarget::Device(path.to_path_buf()),
            _ => IoTarget::Directory(path.to_path_buf()),
        }
    }
}

/// Bytes written per call while laying a file out.
const LAYOUT_CHUNK: u64 = 1 << 20;

/// The files (or device regions) of a run: one per thread.
pub struct Files {
    pub paths: Vec<PathBuf>,
    /// Where each thread's bytes start (0 in a file of its own).
    pub bases: Vec<u64>,
    device: bool,
    /// A device target held open exclusively (O_EXCL) for the whole run, once: the kernel then
    /// refuses a mount or another exclusive opener, while the threads' own descriptors (opened
    /// without O_EXCL, which a second exclusive open of the same device would be refused) share
    /// it.
    hold: Option<File>,
    /// Files this run made, removed when dropped unless kept.
    made: Vec<PathBuf>,
    pub keep: bool,
}

impl Drop for Files {
    fn drop(&mut self) {
        if !self.keep {
            for path in &self.made {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// `fsbench-io-<pid>-<n>-<thread>.dat` for every thread: unique per process, run and thread.
fn file_names(threads: u64) -> Vec<String> {
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    (0..threads)
        .map(|t| format!("fsbench-io-{}-{n}-{t}.dat", std::process::id()))
        .collect()
}

impl Files {
    /// Makes every thread's file (or checks the device), probes O_DIRECT, and lays each out as
    /// the plan says, untimed. Nothing is left behind on an error.
    pub fn prepare(
        plan: &IoPlan,
        target: &IoTarget,
        data: &mut [DataSource],
    ) -> Result<Files, NotRun> {
        let files = match target {
            IoTarget::Directory(dir) => {
                let mut files = Files {
                    paths: Vec::new(),
                    bases: Vec::new(),
                    device: false,
                    hold: None,
                    made: Vec::new(),
                    keep: false,
                };
                for name in file_names(plan.threads) {
                    let path = dir.join(name);
                    create(&path, plan.direct)?;
                    files.made.push(path.clone());
                    files.paths.push(path);
                    files.bases.push(0);
                }
                files
            }
            IoTarget::Device(device) => {
                let hold = check_device(device, plan)?;
                Files {
                    paths: vec![device.clone(); plan.threads as usize],
                    bases: (0..plan.threads).map(|t| t * plan.size).collect(),
                    device: true,
                    hold: Some(hold),
                    made: Vec::new(),
                    keep: false,
                }
            }
        };
        for (t, data) in data.iter_mut().enumerate() {
            files
                .lay_out(t, plan, data)
                .map_err(|e| NotRun::Failed(e.during("the layout (untimed)")))?;
        }
        Ok(files)
    }

    /// Writes thread `t`'s file or region whole (Written) or sets its size (Sparse), then
    /// flushes it to the device, as fio's layout (create_fsync) does; for direct I/O, drops
    /// its pages from the cache.
    fn lay_out(&self, t: usize, plan: &IoPlan, data: &mut DataSource) -> Result<(), WorkloadError> {
        let path = &self.paths[t];
        let file = self
            .open(t, false)
            .map_err(|e| WorkloadError::io("open", path, e))?;
        match plan.layout {
            Layout::Sparse if !self.device => file
                .set_len(plan.size)
                .map_err(|e| WorkloadError::io("size", path, e))?,
            Layout::Sparse => {}
            Layout::Written => {
                let (base, mut at) = (self.bases[t], 0);
                while at < plan.size {
                    let len = LAYOUT_CHUNK.min(plan.size - at);
                    // Verified blocks say where they are: this thread's file, the byte.
                    let bytes = if plan.verify {
                        data.next_verified(len as usize, t as u32, base + at)
                    } else {
                        data.next(len as usize)
                    };
                    raw::pwrite_all(file.as_raw_fd(), bytes, base + at)
                        .map_err(|e| WorkloadError::io("write", path, e))?;
                    at += len;
                }
            }
        }
        file.sync_all()
            .map_err(|e| WorkloadError::io("flush", path, e))?;
        if plan.direct {
            // The layout went through the page cache: a direct write to a block still cached
            // must first drop its page (io_uring hands every such write to an io-wq worker,
            // since that cannot be done without blocking). Dropped now, written and clean, the
            // timed phase finds none, as after fio's layout with direct=1.
            // Whole pages (the kernel drops only those wholly inside the range): a region of a
            // device that starts or ends within one (bs 512) keeps no edge cached; what else
            // those pages hold is written and clean.
            // SAFETY: sysconf takes a constant and touches no memory.
            let page = (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as u64;
            let start = self.bases[t] / page * page;
            let len = (self.bases[t] + plan.size).next_multiple_of(page) - start;
            // SAFETY: the descriptor is open for the lifetime of `file`; no memory is passed.
            let rc = unsafe {
                libc::posix_fadvise(
                    file.as_raw_fd(),
                    start as libc::off_t,
                    len as libc::off_t,
                    libc::POSIX_FADV_DONTNEED,
                )
            };
            if rc != 0 {
                let e = io::Error::from_raw_os_error(rc);
                return Err(WorkloadError::io("drop the cached layout of", path, e));
            }
        }
        Ok(())
    }

    /// Opens thread `t`'s file or device for reading and writing (a device: beside the run's
    /// exclusive hold, which keeps everyone else out).
    pub fn open(&self, t: usize, direct: bool) -> io::Result<File> {
        debug_assert!(!self.device || self.hold.is_some());
        let mut options = OpenOptions::new();
        options.read(true).write(true);
        let mut flags = libc::O_CLOEXEC;
        if direct {
            flags |= libc::O_DIRECT;
        }
        options.custom_flags(flags).open(&self.paths[t])
    }

    /// Whether the block device under thread `t`'s file (or the device itself) completes
    /// polled I/O: its queue's `io_poll` in sysfs (1 only with poll queues, e.g. NVMe with
    /// nvme.poll_queues). None: no block device under it (tmpfs, a btrfs of several devices).
    pub fn device_polls(&self, t: usize) -> Option<bool> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(&self.paths[t]).ok()?;
        let dev = if self.device { meta.rdev() } else { meta.dev() };
        let wanted = format!("{}:{}", libc::major(dev), libc::minor(dev));
        for entry in std::fs::read_dir("/sys/class/block").ok()?.flatten() {
            let dir = entry.path();
            let Ok(number) = std::fs::read_to_string(dir.join("dev")) else {
                continue;
            };
            if number.trim() != wanted {
                continue;
            }
            // A partition has no queue of its own: its disk's is the parent directory.
            let real = std::fs::canonicalize(&dir).ok()?;
            let io_poll = [
                real.join("queue/io_poll"),
                real.parent()?.join("queue/io_poll"),
            ]
            .into_iter()
            .find_map(|p| std::fs::read_to_string(p).ok())?;
            return Some(io_poll.trim() == "1");
        }
        None
    }

    /// `verify`, after the timed phase (untimed): thread `t`'s file or region — unless the
    /// filesystem was remounted since (`cold`) — synced and evicted from the page cache
    /// (through the harness; without one, by fadvise), then read back, each
    /// block checked against what the run wrote there — a block the phase wrote (`written`)
    /// against the phase's writes (one older is a write that did not reach the file), one it
    /// did not against the layout's, and one neither wrote (a sparse file's hole, a device's
    /// earlier bytes) not at all. The blocks checked, or what was found instead
    /// ([`WorkloadError::Corrupt`]).
    pub fn verify(
        &self,
        t: usize,
        plan: &IoPlan,
        seed: u64,
        written: &Written,
        cold: bool,
        harness: &mut dyn Harness,
    ) -> Result<u64, WorkloadError> {
        let path = &self.paths[t];
        let (base, len) = (self.bases[t], plan.size);
        let io = |action: &str, e: io::Error| WorkloadError::io(action, path, e);
        // Never through a symlink: a name in the directory under test is not proof of a file.
        let file = fileio::open(path, fileio::OpenMode::Read, false)
            .map_err(|e| io("open for verifying", e))?;
        // Already cold (remounted): read from the device as it is. Else synced and evicted.
        if !cold {
            file.sync_data().map_err(|e| io("sync for verifying", e))?;
        }
        if !cold && harness.evict(path, base, len).is_err() {
            // SAFETY: advice on a descriptor `file` owns, over its own range.
            unsafe {
                libc::posix_fadvise(
                    file.as_raw_fd(),
                    base as libc::off_t,
                    len as libc::off_t,
                    libc::POSIX_FADV_DONTNEED,
                )
            };
        }
        let laid_out = plan.layout == Layout::Written;
        let expect = |at: u64| {
            let fresh = written.has((at - base) / plan.bs);
            (fresh || laid_out).then_some(Expect {
                file: t as u32,
                seed,
                fresh_from: fresh.then_some(written.first_write),
            })
        };
        match crate::verify::check_each(&file, path, base, len, expect) {
            Ok(Ok(checked)) => Ok(checked.blocks),
            Ok(Err(corruption)) => Err(WorkloadError::Corrupt(corruption.to_string())),
            Err(e) => Err(io("read back", e)),
        }
    }

    /// A file found corrupt is left for inspection (the others go as usual); false for a
    /// device's region, which no run removes.
    pub fn keep_for_inspection(&mut self, t: usize) -> bool {
        let path = &self.paths[t];
        let made = self.made.iter().position(|p| p == path);
        made.map(|at| self.made.remove(at)).is_some()
    }

    /// The files made, to be left in place (`keep`).
    pub fn kept(&mut self) -> Vec<PathBuf> {
        self.keep = true;
        self.made.clone()
    }
}

/// Creates a new file; with `direct`, created with O_DIRECT, so a filesystem that refuses
/// direct I/O says so now, before anything is written.
fn create(path: &Path, direct: bool) -> Result<(), NotRun> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    if direct {
        options.custom_flags(libc::O_DIRECT);
    }
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if direct && e.raw_os_error() == Some(libc::EINVAL) => {
            let _ = std::fs::remove_file(path);
            let dir = path.parent().unwrap_or(path);
            let fs = fsbench_measure::host::mount_of(dir)
                .map(|m| format!("{} ", m.fs_type))
                .unwrap_or_default();
            Err(NotRun::Unsupported(WorkloadError::invalid(
                "direct",
                format!(
                    "the {fs}filesystem of {} refuses O_DIRECT (EINVAL): run without direct I/O, or on a filesystem that supports it",
                    dir.display()
                ),
            )))
        }
        Err(e) => Err(NotRun::Failed(WorkloadError::io("create", path, e))),
    }
}

/// A device target must be a block device large enough for every thread's region, and nobody
/// else's: it is opened exclusively (O_EXCL, refused by the kernel while the device is mounted
/// or held by anything), and that descriptor, the run's hold, is returned.
fn check_device(device: &Path, plan: &IoPlan) -> Result<File, NotRun> {
    let meta = std::fs::metadata(device)
        .map_err(|e| NotRun::Failed(WorkloadError::io("examine", device, e)))?;
    if !meta.file_type().is_block_device() {
        return Err(NotRun::Failed(WorkloadError::Directory(format!(
            "{} is not a block device",
            device.display()
        ))));
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
        .open(device)
        .map_err(|e| NotRun::Failed(WorkloadError::io("open (exclusively)", device, e)))?;
    let bytes =
        device_bytes(&file).map_err(|e| NotRun::Failed(WorkloadError::io("size", device, e)))?;
    let needed = plan.size * plan.threads;
    if bytes < needed {
        return Err(NotRun::Failed(WorkloadError::invalid(
            "size",
            format!(
                "{} threads x {} need {}, and {} has {}: lower size or threads",
                plan.threads,
                fsbench_measure::units::human_bytes(plan.size),
                fsbench_measure::units::human_bytes(needed),
                device.display(),
                fsbench_measure::units::human_bytes(bytes)
            ),
        )));
    }
    Ok(file)
}

/// The size of a block device in bytes (BLKGETSIZE64).
fn device_bytes(file: &File) -> io::Result<u64> {
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    let mut bytes = 0u64;
    // SAFETY: BLKGETSIZE64 writes one u64 into `bytes`.
    if unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64, &mut bytes) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(bytes)
}
