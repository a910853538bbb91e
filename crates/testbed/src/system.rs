//! The one seam between fsbench and the host: every command, sysfs write, file and loop device
//! goes through [`System`]. [`RealSystem`] acts; [`RecordingSystem`] records what would have
//! been done, so unit tests can check the order of operations without root.

use crate::loopdev;
use fsbench_measure::clock::now_ns;
use fsbench_model::target::StepInfo;
use std::fmt;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// A program and its arguments, and how long it may take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cmd {
    pub program: String,
    pub args: Vec<String>,
    /// Past this the program is killed and its output says so: no step of a target may hang
    /// fsbench for ever (zfs-fuse's `zpool create` did, on a pool too small for it).
    pub timeout: Duration,
}

/// The bound of a command that sets none: mkfs or fsck of a large real device may take long,
/// but not this long.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(30 * 60);

impl Cmd {
    pub fn new(program: impl Into<String>) -> Cmd {
        Cmd {
            program: program.into(),
            args: Vec::new(),
            timeout: DEFAULT_COMMAND_TIMEOUT,
        }
    }

    /// The same command with another time bound.
    pub fn timeout(mut self, timeout: Duration) -> Cmd {
        self.timeout = timeout;
        self
    }

    pub fn arg(mut self, arg: impl Into<String>) -> Cmd {
        self.args.push(arg.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }
}

impl fmt::Display for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.program)?;
        for arg in &self.args {
            if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || c == '\'') {
                write!(f, " '{}'", arg.replace('\'', "'\\''"))?;
            } else {
                write!(f, " {arg}")?;
            }
        }
        Ok(())
    }
}

/// What a finished command said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CmdOutput {
    /// Exit code; None when a signal ended it.
    pub status: Option<i32>,
    /// fsbench killed it when it ran past its [`Cmd::timeout`].
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    pub elapsed_ns: u64,
}

impl CmdOutput {
    /// The record of `cmd`, which said this: the command, how long it took, how it ended.
    pub fn step(&self, cmd: &Cmd) -> StepInfo {
        StepInfo {
            command: cmd.to_string(),
            elapsed_ns: self.elapsed_ns,
            exit_status: self.status,
        }
    }

    pub fn success(&self) -> bool {
        self.status == Some(0)
    }

    /// The last non-empty line of stderr (or stdout), for one-line error messages.
    pub fn last_line(&self) -> String {
        let pick = |s: &str| {
            s.lines()
                .map(str::trim)
                .rfind(|l| !l.is_empty())
                .map(str::to_string)
        };
        pick(&self.stderr)
            .or_else(|| pick(&self.stdout))
            .unwrap_or_else(|| format!("exit status {:?}", self.status))
    }
}

pub use crate::loopdev::LoopDevice;

/// umount(8) of `mountpoint`, tried again every 20 ms for up to `patience` while it says the
/// target is busy. The kernel lets go of some files moments after nothing in user space holds
/// them — io_uring puts the files of a closed ring's requests from a worker, a process that
/// just ended closes its own on the way out — and a mount is busy until it has. What the last
/// try said is returned with the command, for the caller's error.
pub fn umount_patiently(
    sys: &dyn System,
    mountpoint: &Path,
    patience: Duration,
) -> io::Result<(Cmd, CmdOutput)> {
    let cmd = Cmd::new("umount").arg(mountpoint.display().to_string());
    let until = std::time::Instant::now() + patience;
    loop {
        let out = sys.run(&cmd)?;
        if out.success() || !out.stderr.contains("busy") || std::time::Instant::now() >= until {
            return Ok((cmd, out));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The last `lines` non-empty lines of `text` (a command's output, for the record).
pub(crate) fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Every side effect fsbench has on the host.
pub trait System: Send + Sync {
    /// Runs a program to completion, capturing its output (never a shell).
    fn run(&self, cmd: &Cmd) -> io::Result<CmdOutput>;
    /// The full path of a program on PATH (or /sbin, /usr/sbin), if installed.
    fn find_program(&self, name: &str) -> Option<PathBuf>;
    fn read_file(&self, path: &Path) -> io::Result<String>;
    /// Writes a sysfs/procfs attribute or small file.
    fn write_file(&self, path: &Path, contents: &str) -> io::Result<()>;
    /// Creates directory `path` and any missing parent, and checks that nobody but root (or
    /// this user) can change it or a directory leading to it (`fsbench_measure::trust`); an
    /// untrusted component is an error of kind `PermissionDenied` saying how to fix it.
    fn create_trusted_dir(&self, path: &Path) -> io::Result<()>;
    /// mkdir(2): a new directory, never one already there (`AlreadyExists`, also for a symlink
    /// at `path`, which is not followed).
    fn create_new_dir(&self, path: &Path) -> io::Result<()>;
    fn remove_dir(&self, path: &Path) -> io::Result<()>;
    /// Creates a sparse file of `size` bytes (fails if it exists, or a symlink is at `path`).
    fn create_sparse_file(&self, path: &Path, size: u64) -> io::Result<()>;
    /// Copies the image `from` to a new file `to` (fails if something is at `to`): a reflink
    /// where the filesystem allows, else a sparse copy (`crate::copy::copy_image`).
    fn copy_image(&self, from: &Path, to: &Path) -> io::Result<crate::copy::CopyInfo>;
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// rename(2): replaces `to` atomically.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Attaches `image` to a free loop device (asked of the kernel), with direct I/O on the
    /// backing file when `direct_io`.
    fn attach_loop(&self, image: &Path, direct_io: bool) -> io::Result<LoopDevice>;
    /// Detaches a loop device this process attached.
    fn detach_loop(&self, device: LoopDevice) -> io::Result<()>;
    /// sync(2).
    fn sync(&self);
    /// Writes back and evicts from the page cache `len` bytes at `offset` of a file (0: to its
    /// end), or every file under a directory; never through a symlink (`cache::evict`).
    fn evict(&self, path: &Path, offset: u64, len: u64) -> io::Result<()>;
    /// The fraction of `len` bytes at `offset` of a file (0: to its end) in the page cache.
    fn resident(&self, path: &Path, offset: u64, len: u64) -> io::Result<f64>;
    /// Shuts the filesystem mounted at `mountpoint` down as a crash would: the shutdown ioctl
    /// ext4 and xfs share (`FS_IOC_SHUTDOWN`, xfs's `XFS_IOC_GOINGDOWN`), its log not written
    /// back first (NOLOGFLUSH). Every later operation on it fails until it is unmounted. ENOTTY
    /// or EOPNOTSUPP where the filesystem has no such ioctl.
    fn shutdown(&self, mountpoint: &Path) -> io::Result<()>;
    /// The device number (major, minor) when `path` is a block device node; None otherwise.
    fn block_device_number(&self, path: &Path) -> io::Result<Option<(u32, u32)>>;
    /// What loop device `path` is backed by ([`loopdev::backing`]), None when it is not attached.
    fn loop_backing(&self, path: &Path) -> io::Result<Option<loopdev::Backing>>;
    /// Entries of a directory (sysfs holders, partitions), by name.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>>;
    /// Opens block device `path` exclusively (O_EXCL) and closes it again: the kernel refuses
    /// (EBUSY) while the device is mounted — in any mount namespace — or held by anything
    /// (device mapper, RAID, a multi-device btrfs, another exclusive opener).
    fn open_exclusive(&self, path: &Path) -> io::Result<()>;
    /// Takes an exclusive lock on `path` (created when missing) without waiting: Some while
    /// held (released when dropped, or when the process dies, even by SIGKILL), None when
    /// another process holds it.
    fn try_lock(&self, path: &Path) -> io::Result<Option<HostLock>>;

    /// The backing file of a loop device, from sysfs (None when not attached).
    fn loop_backing_file(&self, device: &Path) -> Option<PathBuf> {
        let name = device.file_name()?.to_str()?;
        let path = PathBuf::from(format!("/sys/block/{name}/loop/backing_file"));
        let text = self.read_file(&path).ok()?;
        Some(PathBuf::from(text.trim().trim_end_matches(" (deleted)")))
    }

    /// Whether the loop device is attached with direct I/O, as the kernel reports it (sysfs).
    fn loop_direct_io(&self, device: &Path) -> Option<bool> {
        let name = device.file_name()?.to_str()?;
        let text = self
            .read_file(&PathBuf::from(format!("/sys/block/{name}/loop/dio")))
            .ok()?;
        Some(text.trim() == "1")
    }
}

/// A lock shared with the other processes of the host (flock(2)); released on drop.
#[derive(Debug)]
pub struct HostLock {
    _fd: Option<OwnedFd>,
}

/// The host itself.
#[derive(Debug, Default, Clone, Copy)]
pub struct RealSystem;

impl System for RealSystem {
    fn run(&self, cmd: &Cmd) -> io::Result<CmdOutput> {
        let program = self
            .find_program(&cmd.program)
            .unwrap_or_else(|| PathBuf::from(&cmd.program));
        let started = now_ns();
        let child = Command::new(program)
            .args(&cmd.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("LC_ALL", "C")
            .spawn()?;
        let pid = child.id();
        // A waiter thread collects the output, so the time bound costs the command nothing:
        // no polling delay is added to the steps whose durations fsbench reports.
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(child.wait_with_output());
        });
        let (output, timed_out) = match receiver.recv_timeout(cmd.timeout) {
            Ok(output) => (output?, false),
            Err(_) => {
                // The child this call spawned (not yet reaped: the waiter still waits for it)
                // and every process it started: a helper it forked (fsck's fsck.ext4, a mount
                // helper) would otherwise go on with the device, holding the output's pipes.
                fsbench_measure::procs::kill_tree(pid);
                // Its output is waited for a little; a daemon that left the tree before (its
                // parent ended) may hold the pipes.
                match receiver.recv_timeout(Duration::from_secs(5)) {
                    Ok(output) => (output?, true),
                    Err(_) => (
                        std::process::Output {
                            status: std::os::unix::process::ExitStatusExt::from_raw(9),
                            stdout: Vec::new(),
                            stderr: Vec::new(),
                        },
                        true,
                    ),
                }
            }
        };
        let mut stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if timed_out {
            stderr.push_str(&format!(
                "\nfsbench killed it: it ran past its {} s bound",
                cmd.timeout.as_secs()
            ));
        }
        Ok(CmdOutput {
            status: output.status.code(),
            timed_out,
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr,
            elapsed_ns: now_ns() - started,
        })
    }

    fn find_program(&self, name: &str) -> Option<PathBuf> {
        if name.contains('/') {
            return Some(PathBuf::from(name)).filter(|p| p.exists());
        }
        // PATH decides, as for a shell; only without any PATH the usual places are searched.
        let path = std::env::var_os("PATH").unwrap_or_else(|| {
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into()
        });
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| is_executable(candidate))
    }

    fn read_file(&self, path: &Path) -> io::Result<String> {
        std::fs::read_to_string(path)
    }

    fn write_file(&self, path: &Path, contents: &str) -> io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        // A new file (a ledger) is writable by root alone whatever the umask: `fsbench cleanup`
        // obeys no other.
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o644)
            .open(path)?
            .write_all(contents.as_bytes())
    }

    fn create_trusted_dir(&self, path: &Path) -> io::Result<()> {
        fsbench_measure::trust::ensure_dir(path)
    }

    fn create_new_dir(&self, path: &Path) -> io::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().mode(0o755).create(path)
    }

    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_dir(path)
    }

    fn create_sparse_file(&self, path: &Path, size: u64) -> io::Result<()> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)?;
        // A size the filesystem refuses (EFBIG) must not leave an empty image behind.
        file.set_len(size).inspect_err(|_| {
            let _ = std::fs::remove_file(path);
        })
    }

    fn copy_image(&self, from: &Path, to: &Path) -> io::Result<crate::copy::CopyInfo> {
        crate::copy::copy_image(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn attach_loop(&self, image: &Path, direct_io: bool) -> io::Result<LoopDevice> {
        loopdev::attach(image, direct_io)
    }

    fn detach_loop(&self, device: LoopDevice) -> io::Result<()> {
        loopdev::detach(device)
    }

    fn sync(&self) {
        // SAFETY: sync has no preconditions.
        unsafe { libc::sync() };
    }

    fn evict(&self, path: &Path, offset: u64, len: u64) -> io::Result<()> {
        crate::pagecache::evict(path, offset, len)
    }

    fn resident(&self, path: &Path, offset: u64, len: u64) -> io::Result<f64> {
        crate::pagecache::resident(path, offset, len)
    }

    fn shutdown(&self, mountpoint: &Path) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        /// `_IOR('X', 125, __u32)`: FS_IOC_SHUTDOWN, EXT4_IOC_SHUTDOWN, XFS_IOC_GOINGDOWN.
        const SHUTDOWN: libc::c_ulong = 0x8004_587d;
        /// EXT4_GOING_FLAGS_NOLOGFLUSH, XFS_FSOP_GOING_FLAGS_NOLOGFLUSH.
        const NOLOGFLUSH: u32 = 2;
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
            .open(mountpoint)?;
        let flags = NOLOGFLUSH;
        // SAFETY: the ioctl reads one u32 through the pointer, which outlives the call.
        let r = unsafe { libc::ioctl(dir.as_raw_fd(), SHUTDOWN as _, &flags as *const u32) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn block_device_number(&self, path: &Path) -> io::Result<Option<(u32, u32)>> {
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let meta = std::fs::metadata(path)?;
        Ok(meta
            .file_type()
            .is_block_device()
            .then(|| (libc::major(meta.rdev()), libc::minor(meta.rdev()))))
    }

    fn loop_backing(&self, path: &Path) -> io::Result<Option<loopdev::Backing>> {
        loopdev::backing(path)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut names: Vec<String> = std::fs::read_dir(path)?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        Ok(names)
    }

    fn open_exclusive(&self, path: &Path) -> io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        // Read-only: closing a device opened for writing makes udev probe it again.
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(path)
            .map(drop)
    }

    fn try_lock(&self, path: &Path) -> io::Result<Option<HostLock>> {
        use std::os::fd::AsRawFd;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EWOULDBLOCK) => Ok(None),
                _ => Err(e),
            };
        }
        Ok(Some(HostLock {
            _fd: Some(file.into()),
        }))
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A fake host that records every call, one line each, and answers from a script: commands
/// succeed with empty output unless `respond` was told otherwise; reads return what `files`
/// holds. For unit tests of the order of operations.
#[derive(Debug, Default)]
pub struct RecordingSystem {
    log: Mutex<Vec<String>>,
    /// (prefix, output, answered once only).
    responses: Mutex<Vec<(String, CmdOutput, bool)>>,
    files: Mutex<Vec<(PathBuf, String)>>,
    missing_programs: Mutex<Vec<String>>,
    next_loop: Mutex<u32>,
    block_devices: Mutex<Vec<(PathBuf, (u32, u32))>>,
    dirs: Mutex<Vec<(PathBuf, Vec<String>)>>,
    busy: Mutex<Vec<PathBuf>>,
    loop_backings: Mutex<Vec<(PathBuf, loopdev::Backing)>>,
}

impl RecordingSystem {
    pub fn new() -> RecordingSystem {
        RecordingSystem::default()
    }

    /// Commands whose command line starts with `prefix` (`mount`, `mount -t ext4 -o bogus`)
    /// answer `output` from now on; the latest matching rule wins.
    pub fn respond(&self, prefix: &str, output: CmdOutput) {
        self.responses
            .lock()
            .unwrap()
            .push((prefix.to_string(), output, false));
    }

    /// Like [`RecordingSystem::respond`], for the next matching command only (a daemon that
    /// does not answer until it is started).
    pub fn respond_once(&self, prefix: &str, output: CmdOutput) {
        self.responses
            .lock()
            .unwrap()
            .push((prefix.to_string(), output, true));
    }

    /// A failed command's output.
    pub fn failure(status: i32, stderr: &str) -> CmdOutput {
        CmdOutput {
            status: Some(status),
            stderr: stderr.to_string(),
            ..CmdOutput::default()
        }
    }

    /// `read_file(path)` returns `contents`.
    pub fn set_file(&self, path: impl Into<PathBuf>, contents: &str) {
        self.files
            .lock()
            .unwrap()
            .push((path.into(), contents.to_string()));
    }

    /// `find_program(name)` answers None.
    pub fn hide_program(&self, name: &str) {
        self.missing_programs.lock().unwrap().push(name.to_string());
    }

    /// `path` is a block device with this device number.
    pub fn set_block_device(&self, path: impl Into<PathBuf>, major: u32, minor: u32) {
        self.block_devices
            .lock()
            .unwrap()
            .push((path.into(), (major, minor)));
    }

    /// `list_dir(path)` returns `names`.
    pub fn set_dir(&self, path: impl Into<PathBuf>, names: &[&str]) {
        self.dirs
            .lock()
            .unwrap()
            .push((path.into(), names.iter().map(|n| n.to_string()).collect()));
    }

    /// `open_exclusive(path)` fails with EBUSY, as for a device mounted in another mount
    /// namespace.
    pub fn set_busy(&self, path: impl Into<PathBuf>) {
        self.busy.lock().unwrap().push(path.into());
    }

    /// `path` is a loop device backed by `backing` (sysfs's side of it is set with
    /// [`RecordingSystem::set_file`] and [`RecordingSystem::set_dir`]).
    pub fn set_loop_backing(&self, path: impl Into<PathBuf>, backing: loopdev::Backing) {
        self.loop_backings
            .lock()
            .unwrap()
            .push((path.into(), backing));
    }

    /// Every call so far, in order.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    fn record(&self, line: String) {
        self.log.lock().unwrap().push(line);
    }
}

impl System for RecordingSystem {
    fn run(&self, cmd: &Cmd) -> io::Result<CmdOutput> {
        let line = cmd.to_string();
        self.record(format!("run {line}"));
        let output = {
            let mut responses = self.responses.lock().unwrap();
            match responses
                .iter()
                .rposition(|(prefix, _, _)| line.starts_with(prefix.as_str()))
            {
                Some(i) if responses[i].2 => responses.remove(i).1,
                Some(i) => responses[i].1.clone(),
                None => CmdOutput {
                    timed_out: false,
                    status: Some(0),
                    ..CmdOutput::default()
                },
            }
        };
        // A zfs pool is mounted by `zpool create -m MOUNTPOINT ... POOL VDEV...`.
        if output.success()
            && cmd.program == "zpool"
            && cmd.args.first().is_some_and(|a| a == "create")
        {
            let arg =
                |i: Option<usize>| i.and_then(|i| cmd.args.get(i)).cloned().unwrap_or_default();
            let target = arg(cmd.args.iter().position(|a| a == "-m").map(|i| i + 1));
            // The pool is the first word that is neither an option nor an option's value.
            let mut words = cmd.args.iter().skip(1);
            let mut pool = String::new();
            while let Some(word) = words.next() {
                if ["-m", "-o", "-O"].contains(&word.as_str()) {
                    words.next();
                } else if !word.starts_with('-') {
                    pool = word.clone();
                    break;
                }
            }
            let current = self
                .read_file(Path::new("/proc/self/mountinfo"))
                .unwrap_or_default();
            self.set_file(
                "/proc/self/mountinfo",
                &format!("{current}91 1 0:50 / {target} rw,relatime - fuse.zfs {pool} rw\n"),
            );
        }
        // Successful mounts and unmounts show in the fake's /proc/self/mountinfo.
        if output.success() && (cmd.program == "mount" || cmd.program == "umount") {
            let mountinfo = Path::new("/proc/self/mountinfo");
            let current = self.read_file(mountinfo).unwrap_or_default();
            let target = cmd.args.last().cloned().unwrap_or_default();
            let updated = if cmd.program == "mount" {
                let source = cmd
                    .args
                    .get(cmd.args.len().saturating_sub(2))
                    .cloned()
                    .unwrap_or_default();
                let fstype = cmd.args.get(1).cloned().unwrap_or_default();
                let options = cmd
                    .args
                    .iter()
                    .position(|a| a == "-o")
                    .and_then(|i| cmd.args.get(i + 1))
                    .cloned()
                    .unwrap_or_default();
                format!(
                    "{current}90 1 7:40 / {target} rw,relatime - {fstype} {source} rw,{options}\n"
                )
            } else {
                current
                    .lines()
                    .filter(|l| l.split(' ').nth(4) != Some(target.as_str()))
                    .map(|l| format!("{l}\n"))
                    .collect()
            };
            self.set_file(mountinfo, &updated);
        }
        Ok(output)
    }

    fn find_program(&self, name: &str) -> Option<PathBuf> {
        let hidden = self
            .missing_programs
            .lock()
            .unwrap()
            .iter()
            .any(|p| p == name);
        (!hidden).then(|| PathBuf::from("/usr/sbin").join(name))
    }

    fn read_file(&self, path: &Path) -> io::Result<String> {
        self.files
            .lock()
            .unwrap()
            .iter()
            .rev()
            .find(|(p, _)| p == path)
            .map(|(_, c)| c.clone())
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }

    fn write_file(&self, path: &Path, contents: &str) -> io::Result<()> {
        self.record(format!("write {} {}", path.display(), contents.trim()));
        // Like the kernel, a scheduler attribute shows the choice in brackets among the others.
        let stored = if path.ends_with("queue/scheduler") {
            let chosen = contents.trim();
            self.read_file(path)
                .unwrap_or_default()
                .split_whitespace()
                .map(|w| w.trim_matches(|c| c == '[' || c == ']'))
                .map(|w| {
                    if w == chosen {
                        format!("[{w}]")
                    } else {
                        w.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            contents.to_string()
        };
        self.set_file(path, &stored);
        Ok(())
    }

    fn create_trusted_dir(&self, path: &Path) -> io::Result<()> {
        self.record(format!("mkdir {}", path.display()));
        Ok(())
    }

    fn create_new_dir(&self, path: &Path) -> io::Result<()> {
        self.record(format!("mkdir {}", path.display()));
        Ok(())
    }

    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        self.record(format!("rmdir {}", path.display()));
        Ok(())
    }

    fn create_sparse_file(&self, path: &Path, size: u64) -> io::Result<()> {
        self.record(format!("create {} {size}", path.display()));
        Ok(())
    }

    fn copy_image(&self, from: &Path, to: &Path) -> io::Result<crate::copy::CopyInfo> {
        self.record(format!("copy {} {}", from.display(), to.display()));
        Ok(crate::copy::CopyInfo {
            method: "reflink".into(),
            elapsed_ns: 0,
            data_bytes: 0,
        })
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.record(format!("rm {}", path.display()));
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.record(format!("rename {} {}", from.display(), to.display()));
        Ok(())
    }

    fn attach_loop(&self, image: &Path, direct_io: bool) -> io::Result<LoopDevice> {
        let mut next = self.next_loop.lock().unwrap();
        let path = PathBuf::from(format!("/dev/loop{}", 40 + *next));
        *next += 1;
        self.record(format!(
            "attach {} {} direct_io={direct_io}",
            path.display(),
            image.display()
        ));
        Ok(LoopDevice {
            path,
            backing_file: image.to_path_buf(),
            direct_io,
            holder: None,
        })
    }

    fn detach_loop(&self, device: LoopDevice) -> io::Result<()> {
        self.record(format!("detach {}", device.path.display()));
        Ok(())
    }

    fn sync(&self) {
        self.record("sync".to_string());
    }

    fn evict(&self, path: &Path, offset: u64, len: u64) -> io::Result<()> {
        self.record(format!("evict {} {offset} {len}", path.display()));
        Ok(())
    }

    fn resident(&self, path: &Path, offset: u64, len: u64) -> io::Result<f64> {
        self.record(format!("resident {} {offset} {len}", path.display()));
        Ok(0.0)
    }

    fn shutdown(&self, mountpoint: &Path) -> io::Result<()> {
        self.record(format!("shutdown {}", mountpoint.display()));
        Ok(())
    }

    fn block_device_number(&self, path: &Path) -> io::Result<Option<(u32, u32)>> {
        Ok(self
            .block_devices
            .lock()
            .unwrap()
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, n)| *n))
    }

    fn loop_backing(&self, path: &Path) -> io::Result<Option<loopdev::Backing>> {
        Ok(self
            .loop_backings
            .lock()
            .unwrap()
            .iter()
            .rev()
            .find(|(p, _)| p == path)
            .map(|(_, b)| *b))
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        self.dirs
            .lock()
            .unwrap()
            .iter()
            .rev()
            .find(|(p, _)| p == path)
            .map(|(_, n)| n.clone())
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }

    fn open_exclusive(&self, path: &Path) -> io::Result<()> {
        if self.busy.lock().unwrap().iter().any(|p| p == path) {
            return Err(io::Error::from_raw_os_error(libc::EBUSY));
        }
        Ok(())
    }

    fn try_lock(&self, path: &Path) -> io::Result<Option<HostLock>> {
        self.record(format!("lock {}", path.display()));
        Ok(Some(HostLock { _fd: None }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_display_like_a_shell_line() {
        let cmd = Cmd::new("mkfs.ext4")
            .args(["-F", "-E", "lazy_itable_init=0"])
            .arg("/dev/loop7")
            .arg("has space");
        assert_eq!(
            cmd.to_string(),
            "mkfs.ext4 -F -E lazy_itable_init=0 /dev/loop7 'has space'"
        );
    }

    #[test]
    fn real_system_runs_programs_and_captures_output() {
        let out = RealSystem
            .run(&Cmd::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]))
            .unwrap();
        assert_eq!(out.status, Some(3));
        assert_eq!(out.stdout.trim(), "out");
        assert_eq!(out.last_line(), "err");
        assert!(RealSystem.find_program("sh").is_some());
        assert!(RealSystem.find_program("no-such-program-fsbench").is_none());
    }

    /// A command past its time bound is killed with what it started: a helper it forked in
    /// the background (holding the output's pipes) ends too, and the call returns at once
    /// with what was printed and the reason, not after waiting out the pipes.
    #[test]
    fn a_command_past_its_bound_is_killed_with_its_helpers() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("helper");
        let started = std::time::Instant::now();
        let out = RealSystem
            .run(
                &Cmd::new("sh")
                    .args([
                        "-c",
                        &format!(
                            "echo started; sleep 60 & echo $! > {}; wait",
                            pid_file.display()
                        ),
                    ])
                    .timeout(Duration::from_secs(1)),
            )
            .unwrap();
        let took = started.elapsed();
        assert!(out.timed_out);
        assert_eq!(out.status, None, "killed by a signal");
        assert_eq!(out.stdout.trim(), "started");
        assert!(
            out.stderr.contains("ran past its 1 s bound"),
            "{}",
            out.stderr
        );
        // Without the helper killed the pipes stay open, and the call gives up on them 5 s on.
        assert!(took < Duration::from_secs(4), "{took:?}");
        let helper: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let gone = || {
            std::fs::read_to_string(format!("/proc/{helper}/stat")).map_or(true, |s| {
                s.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().next())
                    .is_some_and(|state| state == "Z" || state == "X")
            })
        };
        while !gone() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "sleep 60 still runs"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// What fsbench makes in its directories is made new: a symlink planted at the name (to a
    /// directory, to a file) is neither followed nor taken over, nor is a directory already
    /// there.
    #[test]
    fn new_directories_and_images_never_go_through_what_is_planted() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let to_dir = dir.path().join("mnt-ext4-1-0");
        let to_file = dir.path().join("ext4-1-0.img");
        std::os::unix::fs::symlink(&elsewhere, &to_dir).unwrap();
        std::os::unix::fs::symlink(&victim, &to_file).unwrap();
        for planted in [&to_dir, &to_file, &elsewhere] {
            let e = RealSystem.create_new_dir(planted).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{planted:?}");
            let e = RealSystem.create_sparse_file(planted, 1 << 20).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::AlreadyExists, "{planted:?}");
        }
        assert!(std::fs::read_dir(&elsewhere).unwrap().next().is_none());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(to_dir.is_symlink() && to_file.is_symlink());
        let fresh = dir.path().join("mnt-ext4-1-1");
        RealSystem.create_new_dir(&fresh).unwrap();
        assert!(fresh.is_dir() && !fresh.is_symlink());
    }

    #[test]
    fn recording_system_records_and_answers() {
        let sys = RecordingSystem::new();
        sys.respond("mount", RecordingSystem::failure(32, "bad option"));
        assert!(!sys.run(&Cmd::new("mount").arg("x")).unwrap().success());
        assert!(sys.run(&Cmd::new("umount").arg("x")).unwrap().success());
        sys.write_file(Path::new("/sys/x"), "1\n").unwrap();
        assert_eq!(sys.read_file(Path::new("/sys/x")).unwrap(), "1\n");
        assert_eq!(sys.log(), ["run mount x", "run umount x", "write /sys/x 1"]);
    }
}
