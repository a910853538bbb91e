//! The processes of one sample, kept together so they end together: a cgroup made for the
//! sample (cgroup v2, or v1's freezer) holds every process the sample starts — a campaign's
//! worker and all it starts, a workload command's tools — and is killed as a whole on stop,
//! timeout and, through the ledger, a killed parent; where no cgroup can be made (not root, no
//! cgroup filesystem), a [`Reaper`] follows them as a process group and as orphans this process
//! adopts. The cgroup also carries a platform's CPU quota (v1's `cpu` controller or v2's
//! `cpu.max`): only the processes in it are slowed, not the kernel's own threads (writeback,
//! journal commits), unlike a lower CPU frequency (docs/plans.md, "platforms"). And it counts
//! its processes' I/O per device (v2's io.stat, or v1's blkio hierarchy beside it), so that
//! what the sample itself does outside its target (a copy's source on the host disk) is told
//! from another process's I/O.

use crate::error::TargetError;
use crate::ledger::{Ledger, Resource};
use crate::system::System;
use fsbench_model::owner;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const PERIOD_US: u64 = 100_000;

/// How every cgroup fsbench makes is named (`fsbench-<pid>-<start time>-<n>`, the start time
/// being field 22 of /proc/<pid>/stat; before, `fsbench-<pid>-<n>`): the ledger's undo ends
/// and removes no cgroup named otherwise, and `fsbench cleanup` only one its ledger's own
/// process made and is gone ([`check_left_by`]), so a pid reused since cannot lend it another
/// run's cgroup.
const PREFIX: &str = "fsbench-";

/// How long ending a sample's processes may take before what is left is reported: SIGKILL
/// ends a process at once unless it is inside the kernel (uninterruptible sleep on I/O).
const END_LIMIT: Duration = Duration::from_secs(10);

/// A CPU quota: the CPU time the cgroup's processes together get in each period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    pub quota_us: u64,
    pub period_us: u64,
}

/// A cgroup fsbench made for one sample, with its quota when the platform sets one. Dropping
/// it ends its processes and removes it.
#[derive(Debug)]
pub struct Cgroup {
    /// Where its processes are listed and ended: its cgroup v2 directory, else v1's freezer's
    /// (else, for a quota on a host with neither, v1's cpu directory).
    home: PathBuf,
    /// The v1 cpu controller's directory of a quota (on v2 the quota is set in `home`).
    cpu: Option<PathBuf>,
    /// Its v1 blkio directory, where the I/O of its processes is counted when `home` has no
    /// io.stat (a v2 hierarchy without the io controller, or v1 alone).
    blkio: Option<PathBuf>,
    pub quota: Option<Quota>,
}

/// What v1 blkio counts a cgroup's bytes in, per device.
const BLKIO_BYTES: &str = "blkio.throttle.io_service_bytes";
/// Where v1 takes a device's read limit: a rule of no limit turns the counting on.
const BLKIO_READ_LIMIT: &str = "blkio.throttle.read_bps_device";

/// The cgroup hierarchies mounted on this host.
#[derive(Debug, Default)]
struct Hierarchies {
    v2: Option<PathBuf>,
    freezer: Option<PathBuf>,
    cpu: Option<PathBuf>,
    blkio: Option<PathBuf>,
}

impl Hierarchies {
    fn of_this_host() -> Hierarchies {
        let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mut found = Hierarchies::default();
        for mount in fsbench_measure::host::parse_mountinfo(&text) {
            let has = |controller: &str| mount.super_options.split(',').any(|o| o == controller);
            let slot = match mount.fs_type.as_str() {
                "cgroup2" => &mut found.v2,
                "cgroup" if has("freezer") => &mut found.freezer,
                "cgroup" if has("cpu") => &mut found.cpu,
                "cgroup" if has("blkio") => &mut found.blkio,
                _ => continue,
            };
            slot.get_or_insert(mount.mount_point);
        }
        found
    }

    /// Whether `dir` is the root of a mounted cgroup hierarchy.
    fn is_root(dir: &Path) -> bool {
        let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        fsbench_measure::host::parse_mountinfo(&text)
            .iter()
            .any(|m| matches!(m.fs_type.as_str(), "cgroup" | "cgroup2") && m.mount_point == dir)
    }
}

impl Cgroup {
    /// A cgroup for one sample, with a CPU quota of `cpu_percent` % of the machine's CPU time
    /// (of all its CPUs) when given. Unsupported when none can be made here (not root, no
    /// cgroup filesystem) or, for a quota, when the host has no cpu controller.
    pub fn new(cpu_percent: Option<f64>) -> Result<Cgroup, TargetError> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let me = owner::current();
        let name = format!(
            "{PREFIX}{}-{}-{}",
            std::process::id(),
            owner::start(&me).unwrap_or(0),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let found = Hierarchies::of_this_host();
        let quota = cpu_percent.map(|percent| {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
            Quota {
                quota_us: ((PERIOD_US as f64 * cpus * percent / 100.0).round() as u64).max(1000),
                period_us: PERIOD_US,
            }
        });
        let v1_cpu = found
            .cpu
            .as_ref()
            .filter(|dir| dir.join("cpu.cfs_quota_us").exists());
        let v2_cpu = found.v2.as_ref().is_some_and(|v2| {
            std::fs::read_to_string(v2.join("cgroup.subtree_control"))
                .is_ok_and(|c| c.split_whitespace().any(|c| c == "cpu"))
        });
        if quota.is_some() && v1_cpu.is_none() && !v2_cpu {
            return Err(TargetError::Unsupported(
                "a CPU quota needs the cgroup cpu controller (cgroup v1's cpu hierarchy, or v2 with cpu in its root's cgroup.subtree_control); this host has neither".into(),
            ));
        }
        let home_root = match (found.v2.as_ref().or(found.freezer.as_ref()), v1_cpu) {
            (Some(root), _) => root,
            (None, Some(cpu)) if quota.is_some() => cpu,
            (None, _) => {
                return Err(TargetError::Unsupported(
                    "no cgroup v2 nor v1 freezer hierarchy is mounted".into(),
                ))
            }
        };
        let io = |what: &str, path: &Path, e: std::io::Error| {
            let why = if quota.is_some() {
                "a CPU quota needs a cgroup: "
            } else {
                ""
            };
            TargetError::Unsupported(format!("{why}cannot {what} {}: {e}", path.display()))
        };
        let home = home_root.join(&name);
        std::fs::create_dir(&home).map_err(|e| io("create the cgroup", &home, e))?;
        // From here on, dropping it removes what was made.
        let mut cgroup = Cgroup {
            home,
            cpu: None,
            blkio: None,
            quota,
        };
        // Its I/O is counted where its home cannot: v1's blkio beside v2 or the freezer (a
        // cgroup without it still holds and ends the sample's processes; their I/O is then
        // not told from another's, and the sample says so).
        if !cgroup.home.join("io.stat").exists() {
            if let Some(blkio) = found.blkio.as_ref().filter(|b| *b != home_root) {
                let dir = blkio.join(&name);
                if std::fs::create_dir(&dir).is_ok() {
                    cgroup.blkio = Some(dir);
                }
            }
        }
        let Some(quota) = quota else {
            return Ok(cgroup);
        };
        let mut writes = Vec::new();
        match v1_cpu {
            Some(cpu) if cpu != home_root => {
                let dir = cpu.join(&name);
                std::fs::create_dir(&dir).map_err(|e| io("create the cgroup", &dir, e))?;
                cgroup.cpu = Some(dir.clone());
                writes.push((dir.join("cpu.cfs_period_us"), quota.period_us.to_string()));
                writes.push((dir.join("cpu.cfs_quota_us"), quota.quota_us.to_string()));
            }
            Some(_) => {
                writes.push((
                    cgroup.home.join("cpu.cfs_period_us"),
                    quota.period_us.to_string(),
                ));
                writes.push((
                    cgroup.home.join("cpu.cfs_quota_us"),
                    quota.quota_us.to_string(),
                ));
            }
            None => writes.push((
                cgroup.home.join("cpu.max"),
                format!("{} {}", quota.quota_us, quota.period_us),
            )),
        }
        for (path, value) in writes {
            std::fs::write(&path, value).map_err(|e| io("write", &path, e))?;
        }
        Ok(cgroup)
    }

    /// The directories of the cgroup, one per hierarchy.
    fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.home)
            .chain(self.cpu.as_ref())
            .chain(self.blkio.as_ref())
    }

    /// The file that counts its processes' bytes per device (v2's io.stat, v1's
    /// blkio.throttle.io_service_bytes; read by `fsbench_measure::monitor::cgroup_io_bytes`),
    /// once [`Cgroup::count_io_on`] the devices; None where the host has neither.
    pub fn io_stat(&self) -> Option<PathBuf> {
        let v2 = self.home.join("io.stat");
        if v2.exists() {
            return Some(v2);
        }
        self.blkio.as_ref().map(|dir| dir.join(BLKIO_BYTES))
    }

    /// Makes the kernel count its processes' I/O on `devices` (names: `vda`, `loop3`). v2
    /// counts every device already. v1's blkio counts only on a device whose throttling was
    /// configured once (Linux 6.18 here: its io_service_bytes said 0 for 40 MiB of a
    /// cgroup's I/O before, every byte after): a read limit of "no limit" (u64::MAX) on each
    /// turns it on without limiting anything — every I/O of the device then passes the
    /// throttling's check (no rule: none is held back), until it is detached or the host
    /// reboots. A partition is refused: the kernel counts a cgroup's I/O per whole disk.
    pub fn count_io_on(&self, devices: &[String]) -> Result<(), String> {
        if let Some(part) = devices.iter().find(|name| {
            Path::new("/sys/class/block")
                .join(name)
                .join("partition")
                .exists()
        }) {
            return Err(format!(
                "{part} is a partition, and a cgroup's I/O is counted per whole disk"
            ));
        }
        let Some(dir) = &self.blkio else {
            return Ok(());
        };
        let file = dir.join(BLKIO_READ_LIMIT);
        for name in devices {
            let number = fsbench_measure::monitor::device_number(name)
                .ok_or_else(|| format!("{name} has no device number in /sys/class/block"))?;
            std::fs::write(&file, format!("{number} {}", u64::MAX))
                .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        }
        Ok(())
    }

    /// Moves a process (and the threads and children it makes from then on) into the cgroup.
    pub fn add(&self, pid: u32) -> std::io::Result<()> {
        for file in self.procs_files() {
            std::fs::write(file, pid.to_string())?;
        }
        Ok(())
    }

    /// The `cgroup.procs` files a process writes "0" to, to move itself in (a tool as it
    /// starts).
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs().map(|d| d.join("cgroup.procs")).collect()
    }

    /// The cgroup's main directory (where its processes are listed).
    pub fn dir(&self) -> &Path {
        &self.home
    }

    /// Ends every process in it, and checks that none is left.
    pub fn end(&self) -> Result<usize, String> {
        let mut ended = 0;
        for dir in self.dirs() {
            ended += end_processes(dir)?;
        }
        Ok(ended)
    }

    /// The ledger's record of it: the directory its processes are ended in last, so that
    /// undoing the ledger (newest first) ends them before anything else is removed.
    fn records(&self) -> Vec<Resource> {
        self.cpu
            .iter()
            .chain(self.blkio.iter())
            .chain(std::iter::once(&self.home))
            .map(|path| Resource::Cgroup { path: path.clone() })
            .collect()
    }

    /// CPU time its processes were throttled for, in nanoseconds (v1 `cpu.stat`
    /// throttled_time, v2 throttled_usec), when the kernel says.
    pub fn throttled_ns(&self) -> Option<u64> {
        let dir = self.cpu.as_ref().unwrap_or(&self.home);
        let stat = std::fs::read_to_string(dir.join("cpu.stat")).ok()?;
        stat.lines().find_map(|line| {
            let (key, value) = line.split_once(' ')?;
            let value: u64 = value.trim().parse().ok()?;
            match key {
                "throttled_time" => Some(value),
                "throttled_usec" => Some(value * 1000),
                _ => None,
            }
        })
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if self.end().is_ok() {
            for dir in self.dirs() {
                let _ = remove(dir);
            }
        }
    }
}

/// Removes an emptied cgroup directory (its files are the kernel's: rmdir, not a recursive
/// removal); the kernel may take a moment to notice that its last process is gone.
fn remove(dir: &Path) -> std::io::Result<()> {
    let mut tries = 0;
    loop {
        match std::fs::remove_dir(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(_) if tries < 50 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            done => return done,
        }
    }
}

/// The processes in the cgroup at `dir` (none once it is gone).
fn members(dir: &Path) -> Result<Vec<u32>, String> {
    match std::fs::read_to_string(dir.join("cgroup.procs")) {
        Ok(text) => Ok(text.lines().filter_map(|l| l.trim().parse().ok()).collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(format!(
            "cannot list the processes of {}: {e}",
            dir.display()
        )),
    }
}

/// Ends every process in the cgroup at `dir` and checks that none is left; returns how many
/// there were. cgroup.kill where the kernel has it (v2, Linux 5.14) kills them all at once;
/// otherwise the cgroup is frozen (v2's cgroup.freeze, v1's freezer.state) so that none can
/// fork, every member is SIGKILLed and it is thawed, until it is empty (without a freezer,
/// plain rounds of SIGKILL).
fn end_processes(dir: &Path) -> Result<usize, String> {
    let first = members(dir)?.len();
    let deadline = Instant::now() + END_LIMIT;
    loop {
        let left = members(dir)?;
        if left.is_empty() {
            return Ok(first);
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "processes {left:?} of cgroup {} were still there {} s after they were killed \
                 (stuck inside the kernel)",
                dir.display(),
                END_LIMIT.as_secs()
            ));
        }
        let kill = dir.join("cgroup.kill");
        if kill.exists() {
            let _ = std::fs::write(&kill, "1");
        } else {
            let thaw = freeze(dir);
            for pid in members(dir)? {
                // SAFETY: signalling a process in a cgroup fsbench made for one sample (frozen:
                // none of them can exit, so no pid is reused meanwhile).
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
            if let Some((file, value)) = thaw {
                let _ = std::fs::write(file, value);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Freezes the cgroup at `dir`, when it has a freezer, and waits (a little) until it is
/// frozen; returns the file and value that thaw it.
fn freeze(dir: &Path) -> Option<(PathBuf, &'static str)> {
    let v2 = dir.join("cgroup.freeze");
    let v1 = dir.join("freezer.state");
    let (file, on, off) = if v2.exists() {
        (v2, "1", "0")
    } else if v1.exists() {
        (v1, "FROZEN", "THAWED")
    } else {
        return None;
    };
    std::fs::write(&file, on).ok()?;
    let frozen = || match off {
        "0" => std::fs::read_to_string(dir.join("cgroup.events"))
            .is_ok_and(|e| e.lines().any(|l| l == "frozen 1")),
        _ => std::fs::read_to_string(&file).is_ok_and(|s| s.trim() == "FROZEN"),
    };
    let until = Instant::now() + Duration::from_secs(1);
    while !frozen() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(5));
    }
    Some((file, off))
}

/// The process a cgroup's name says made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Maker {
    /// `fsbench-<pid>-<start time>-<n>`.
    Process { pid: u32, start: u64 },
    /// `fsbench-<pid>-<n>`, as fsbench named them before: the pid alone.
    Pid(u32),
}

/// The maker named by `path`'s last component, when it is named as fsbench names cgroups.
fn maker(path: &Path) -> Option<Maker> {
    let name = path.file_name()?.to_str()?.strip_prefix(PREFIX)?;
    let numbers = name
        .split('-')
        .map(|n| {
            n.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| n.parse::<u64>().ok())
                .flatten()
        })
        .collect::<Option<Vec<u64>>>()?;
    match numbers[..] {
        [pid, start, _] => Some(Maker::Process {
            pid: u32::try_from(pid).ok()?,
            start,
        }),
        [pid, _] => Some(Maker::Pid(u32::try_from(pid).ok()?)),
        _ => None,
    }
}

/// Why `path` is not a cgroup fsbench makes, or Ok: fsbench's are named as [`PREFIX`] says and
/// sit directly under a mounted cgroup hierarchy's root (a ledger may name nothing else).
pub fn check_ours(path: &Path) -> Result<(), String> {
    let ours = maker(path).is_some() && path.parent().is_some_and(Hierarchies::is_root);
    if ours {
        Ok(())
    } else {
        Err(format!("{} is not a cgroup fsbench makes", path.display()))
    }
}

/// Why the ledger of process `pid` (`owner`: its owner text, None in older ledgers) may not
/// end the cgroup at `path`, or Ok: the cgroup must be one fsbench makes ([`check_ours`]),
/// made by that very process (the pid and start time in its name are the ledger's owner's,
/// in this boot), and that process gone. A cgroup that no longer exists is Ok (its undo says
/// it is gone). A name of the older form carries only a pid: Ok only while no process has it.
pub fn check_left_by(path: &Path, pid: u32, owner: Option<&str>) -> Result<(), String> {
    check_ours(path)?;
    if !path.exists() {
        return Ok(());
    }
    let shown = path.display();
    match maker(path) {
        Some(Maker::Process {
            pid: named,
            start: started,
        }) => {
            let writer = owner.filter(|o| owner::pid(o) == Some(pid) && owner::is_this_boot(o));
            if named != pid || writer.and_then(owner::start) != Some(started) {
                return Err(format!(
                    "{shown} was made by process {named} (start time {started}), not by the \
                     process whose ledger names it ({})",
                    owner.unwrap_or(&pid.to_string())
                ));
            }
            let alive = crate::ledger::running(named)
                && owner::of(named).and_then(|o| owner::start(&o)) == Some(started);
            if alive {
                return Err(format!(
                    "{shown}: process {named}, which made it, still runs"
                ));
            }
            Ok(())
        }
        Some(Maker::Pid(named)) if named != pid => Err(format!(
            "{shown} was made by process {named}, not by process {pid} whose ledger names it"
        )),
        Some(Maker::Pid(named)) if crate::ledger::running(named) => Err(format!(
            "{shown} names process {named}, which runs (the name has no start time to tell \
             another process that took the pid from the one that made it); end that process \
             first if it is a run of fsbench"
        )),
        Some(Maker::Pid(_)) => Ok(()),
        None => unreachable!("check_ours passed"),
    }
}

/// Undoes a ledger's [`Resource::Cgroup`]: ends its processes and removes it (only one that
/// [`check_ours`] passes).
pub fn undo(path: &Path) -> Result<String, String> {
    check_ours(path).map_err(|why| format!("{why}: left alone"))?;
    if !path.exists() {
        return Ok(format!("cgroup {} is gone", path.display()));
    }
    let ended = end_processes(path)?;
    remove(path).map_err(|e| format!("cannot remove cgroup {}: {e}", path.display()))?;
    Ok(match ended {
        0 => format!("removed cgroup {}", path.display()),
        n => format!(
            "killed {n} process{} of the sample and removed cgroup {}",
            if n == 1 { "" } else { "es" },
            path.display()
        ),
    })
}

/// Where no cgroup can be made: from [`Reaper::start`] on, this process is the subreaper of
/// what it starts (PR_SET_CHILD_SUBREAPER), so the sample's orphans become its children rather
/// than init's, and [`Reaper::end`] kills the process groups it was given and every child that
/// came since, round after round as their orphans come to it. A killed parent's guard cannot
/// do this: only a cgroup survives its parent.
#[derive(Debug)]
pub struct Reaper {
    /// This process's children before the sample (a guard): not the sample's.
    before: HashSet<u32>,
    groups: Vec<u32>,
}

impl Reaper {
    /// Call right before the sample starts its first process: anything started earlier that
    /// daemonized (zfs-fuse) stays init's.
    pub fn start() -> Reaper {
        // SAFETY: prctl with an integer argument.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        Reaper {
            before: children_of(std::process::id()).into_iter().collect(),
            groups: Vec::new(),
        }
    }

    /// Follows `pid`'s process group (a process started in a group of its own).
    pub fn add(&mut self, pid: u32) {
        self.groups.push(pid);
    }

    /// Kills the groups and every child that came since the start, reaps them, and checks
    /// that none is left; returns how many there were.
    pub fn end(&self) -> Result<usize, String> {
        for group in &self.groups {
            // SAFETY: a process group this process made (ESRCH once it is empty).
            unsafe { libc::kill(-(*group as i32), libc::SIGKILL) };
        }
        let deadline = Instant::now() + END_LIMIT;
        let mut ended = HashSet::new();
        let result = loop {
            let new: Vec<u32> = children_of(std::process::id())
                .into_iter()
                .filter(|pid| !self.before.contains(pid))
                .collect();
            if new.is_empty() {
                break Ok(ended.len());
            }
            if Instant::now() >= deadline {
                break Err(format!(
                    "processes {new:?} of the sample were still there {} s after they were \
                     killed (stuck inside the kernel)",
                    END_LIMIT.as_secs()
                ));
            }
            for pid in new {
                ended.insert(pid);
                // SAFETY: a child of this process that the sample started; its own group too
                // when it leads one (a group's id is its leader's pid, not reused meanwhile).
                unsafe {
                    libc::kill(-(pid as i32), libc::SIGKILL);
                    libc::kill(pid as i32, libc::SIGKILL);
                    libc::waitpid(pid as i32, std::ptr::null_mut(), libc::WNOHANG);
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        // SAFETY: prctl with an integer argument.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) };
        result
    }
}

pub use fsbench_measure::procs::children_of;

/// The processes of one sample: in a cgroup made for it, or followed by a [`Reaper`].
#[derive(Debug)]
pub enum SampleProcesses {
    Cgroup(Cgroup),
    Reaper(Reaper),
}

impl SampleProcesses {
    /// The sample's cgroup when one could be made (`cgroup`), else a reaper started now, right
    /// before the sample starts its first process. A cgroup goes on record in `ledger` (a
    /// killed parent's guard, or `fsbench cleanup`, ends it before undoing any mount).
    pub fn start(sys: &dyn System, ledger: &mut Ledger, cgroup: Option<Cgroup>) -> SampleProcesses {
        match cgroup {
            Some(cgroup) => {
                for record in cgroup.records() {
                    ledger.push(sys, record);
                }
                SampleProcesses::Cgroup(cgroup)
            }
            None => SampleProcesses::Reaper(Reaper::start()),
        }
    }

    /// The sample's cgroup, when it has one.
    pub fn cgroup(&self) -> Option<&Cgroup> {
        match self {
            SampleProcesses::Cgroup(cgroup) => Some(cgroup),
            SampleProcesses::Reaper(_) => None,
        }
    }

    /// Takes in a process this one started for the sample: into the cgroup, or its process
    /// group (it must have been started in one of its own) followed by the reaper.
    pub fn add(&mut self, pid: u32) -> std::io::Result<()> {
        match self {
            SampleProcesses::Cgroup(cgroup) => cgroup.add(pid),
            SampleProcesses::Reaper(reaper) => {
                reaper.add(pid);
                Ok(())
            }
        }
    }

    /// Ends every process of the sample and checks that none is left (before anything they
    /// may hold is unmounted or removed); the cgroup is removed and leaves the ledger.
    pub fn end(self, sys: &dyn System, ledger: &mut Ledger) -> Result<usize, String> {
        match self {
            SampleProcesses::Cgroup(cgroup) => {
                let records = cgroup.records();
                let ended = match cgroup.end() {
                    Ok(ended) => ended,
                    Err(e) => {
                        // It stays on record, for `fsbench cleanup` once they are gone;
                        // dropping it would only wait for them again.
                        std::mem::forget(cgroup);
                        return Err(e);
                    }
                };
                drop(cgroup);
                for record in records.iter().rev() {
                    ledger.forget(sys, record);
                }
                Ok(ended)
            }
            SampleProcesses::Reaper(reaper) => reaper.end(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real: needs root and a cpu controller (CI has both); skipped elsewhere with a note.
    #[test]
    fn a_quota_slows_a_busy_process_and_its_cgroup_goes_away() {
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: needs root");
            return;
        }
        let quota = match Cgroup::new(Some(10.0)) {
            Ok(q) => q,
            Err(e) => {
                eprintln!("skipped: {e}");
                return;
            }
        };
        let dirs: Vec<PathBuf> = quota.dirs().cloned().collect();
        // A shell spinning until it is stopped: under a 10 % quota it is throttled as soon as
        // it has had its share of a period, however loaded the host (a fixed spin of 0.5 s of
        // wall time could get less than its share on a busy machine, and never be throttled).
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg("read go; while :; do :; done")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        quota.add(child.id()).unwrap();
        {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"go\n").unwrap();
        }
        let began = std::time::Instant::now();
        let mut throttled = 0;
        while throttled == 0 && began.elapsed() < std::time::Duration::from_secs(20) {
            std::thread::sleep(std::time::Duration::from_millis(50));
            throttled = quota.throttled_ns().unwrap_or(0);
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            throttled > 0,
            "a 10 % quota never throttled a spinning shell in 20 s"
        );
        drop(quota);
        for dir in dirs {
            assert!(!dir.exists(), "{} left behind", dir.display());
        }
    }

    /// Processes carrying `mark` in their environment (how these tests find theirs).
    fn marked(mark: &str) -> Vec<u32> {
        let wanted = format!("FSBENCH_TEST_MARK={mark}").into_bytes();
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
            if environ.split(|&b| b == 0).any(|v| v == wanted.as_slice()) {
                found.push(pid);
            }
        }
        found
    }

    /// A shell in a group of its own that ignores SIGTERM and, once told to go, leaves a
    /// child in a session of its own (out of its group) and one in its group, all marked.
    fn hostile(mark: &str) -> std::process::Child {
        use std::os::unix::process::CommandExt;
        std::process::Command::new("sh")
            .arg("-c")
            .arg("read go; trap '' TERM; setsid sleep 30 & sleep 30 & echo go; wait")
            .env("FSBENCH_TEST_MARK", mark)
            .process_group(0)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Tells the shell to go and waits until its three processes run; returns its pid (the
    /// sample's end reaps it, not the test's handle).
    fn go(mut child: std::process::Child, mark: &str) -> u32 {
        use std::io::{Read, Write};
        child.stdin.take().unwrap().write_all(b"go\n").unwrap();
        let mut said = [0u8; 3];
        child.stdout.take().unwrap().read_exact(&mut said).unwrap();
        let start = Instant::now();
        // Three marked processes, both children past their exec of `sleep`: a process in the
        // middle of an exec shows no environment for a moment, so counting earlier may see 3
        // and then 2.
        let settled = |mark: &str| {
            let pids = marked(mark);
            let sleeping = pids
                .iter()
                .filter(|pid| {
                    std::fs::read_to_string(format!("/proc/{pid}/comm"))
                        .is_ok_and(|comm| comm.trim() == "sleep")
                })
                .count();
            pids.len() == 3 && sleeping == 2
        };
        while !settled(mark) && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let pid = child.id();
        std::mem::forget(child);
        pid
    }

    /// A cgroup for a real test; None, said, where none can be made (not root, no hierarchy).
    fn cgroup_or_skip() -> Option<Cgroup> {
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: needs root");
            return None;
        }
        Cgroup::new(None)
            .map_err(|e| eprintln!("skipped: {e}"))
            .ok()
    }

    /// Real: a process in the cgroup writes 8 MiB to the disk of /var/tmp and syncs it, while
    /// this process (outside it) writes 8 MiB more there: the cgroup's counters have the 8 MiB
    /// its process wrote, not this one's. Needs root and io.stat or a blkio hierarchy.
    #[test]
    fn a_cgroup_counts_what_its_processes_write_on_a_disk_and_no_more() {
        let Some(cgroup) = cgroup_or_skip() else {
            return;
        };
        let Some(stat) = cgroup.io_stat() else {
            eprintln!("skipped: no io.stat nor blkio hierarchy");
            return;
        };
        let dir = tempfile::Builder::new()
            .prefix("fsbench-test-cgroup-io")
            .tempdir_in("/var/tmp")
            .unwrap();
        let disk = crate::disk::disk_of_file(dir.path())
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .expect("/var/tmp is on a disk");
        cgroup.count_io_on(std::slice::from_ref(&disk)).unwrap();
        let number = fsbench_measure::monitor::device_number(&disk).unwrap();
        let before = fsbench_measure::monitor::cgroup_io_bytes(&stat, &number).unwrap();
        let mine = dir.path().join("outside");
        let theirs = dir.path().join("inside");
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "read go; dd if=/dev/zero of={} bs=1M count=8 conv=fsync status=none",
                theirs.display()
            ))
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        cgroup.add(child.id()).unwrap();
        {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"go\n").unwrap();
            let mut file = std::fs::File::create(&mine).unwrap();
            file.write_all(&vec![1u8; 8 << 20]).unwrap();
            file.sync_all().unwrap();
        }
        assert!(child.wait().unwrap().success());
        let after = fsbench_measure::monitor::cgroup_io_bytes(&stat, &number).unwrap();
        let written = after.1 - before.1;
        assert!(
            ((8 << 20)..(12 << 20)).contains(&written),
            "the cgroup wrote {written} bytes on {disk} ({})",
            stat.display()
        );
        // A partition is refused: its I/O is counted at its disk.
        let parts: Vec<String> = std::fs::read_dir("/sys/class/block")
            .unwrap()
            .flatten()
            .filter(|e| e.path().join("partition").exists())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .take(1)
            .collect();
        if let Some(part) = parts.first() {
            let err = cgroup.count_io_on(&parts).unwrap_err();
            assert!(err.contains(part) && err.contains("whole disk"), "{err}");
        }
    }

    /// Real: needs root and a cgroup hierarchy; skipped elsewhere with a note.
    #[test]
    fn ending_a_cgroup_ends_what_left_the_group_and_its_undo_touches_only_ours() {
        let Some(cgroup) = cgroup_or_skip() else {
            return;
        };
        let mark = format!("cgroup-{}", std::process::id());
        let child = hostile(&mark);
        cgroup.add(child.id()).unwrap();
        let pid = go(child, &mark);
        assert_eq!(marked(&mark).len(), 3, "the shell and its two children");
        // The undo of a ledger entry: the same ending, then the directory goes.
        let dir = cgroup.dir().to_path_buf();
        let note = undo(&dir).unwrap();
        assert!(note.starts_with("killed 3 processes"), "{note}");
        // SAFETY: reaping the test's own child.
        unsafe { libc::waitpid(pid as i32, std::ptr::null_mut(), 0) };
        assert_eq!(marked(&mark), Vec::<u32>::new());
        assert!(!dir.exists());
        drop(cgroup);
        // Nothing fsbench did not make, however the ledger names it.
        let root = dir.parent().unwrap();
        for other in [
            root.to_path_buf(),
            root.join("system.slice"),
            "/tmp/fsbench-1-0".into(),
        ] {
            let said = undo(&other).unwrap_err();
            assert!(said.contains("left alone"), "{said}");
        }
    }

    /// A cgroup's name carries its maker's pid and start time; a ledger may end only one its
    /// own process made and is gone. This process's cgroup is refused to a ledger of this
    /// process and to a ledger of an earlier process that had this pid (the recycled pid);
    /// one named for a finished process is given to that process's ledger alone; names of
    /// the older form only while no process has the pid. Real: needs root and a cgroup
    /// hierarchy; skipped elsewhere with a note.
    #[test]
    fn only_the_ledger_of_the_gone_process_that_made_a_cgroup_may_end_it() {
        let Some(cgroup) = cgroup_or_skip() else {
            return;
        };
        let me = owner::current();
        let pid = std::process::id();
        let start = owner::start(&me).unwrap();
        let dir = cgroup.dir().to_path_buf();
        let name = dir.file_name().unwrap().to_str().unwrap().to_string();
        assert!(
            name.starts_with(&format!("fsbench-{pid}-{start}-")),
            "{name}"
        );
        let said = check_left_by(&dir, pid, Some(&me)).unwrap_err();
        assert!(said.contains("still runs"), "{said}");
        let boot = me.split(' ').next().unwrap();
        let earlier = format!("{boot} {pid} 1");
        let said = check_left_by(&dir, pid, Some(&earlier)).unwrap_err();
        assert!(said.contains("not by the process whose ledger"), "{said}");
        assert!(check_left_by(&dir, pid, None).is_err());
        assert!(check_left_by(&dir, pid + 1, Some(&me)).is_err());

        // A finished process's: its ledger's, in this boot only.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        let gone_owner = owner::of(gone);
        child.wait().unwrap();
        let Some(gone_owner) = gone_owner else {
            eprintln!("skipped the finished process's cases: it ended before it was seen");
            return;
        };
        let gone_start = owner::start(&gone_owner).unwrap();
        let root = dir.parent().unwrap();
        let left = root.join(format!("fsbench-{gone}-{gone_start}-0"));
        let old = root.join(format!("fsbench-{gone}-0"));
        let old_mine = root.join(format!("fsbench-{pid}-999"));
        for made in [&left, &old, &old_mine] {
            std::fs::create_dir(made).unwrap();
        }
        let checked = (
            check_left_by(&left, gone, Some(&gone_owner)),
            check_left_by(&left, gone, Some(&gone_owner.replacen(boot, "another", 1))),
            check_left_by(&old, gone, None),
            check_left_by(&old, pid, Some(&me)),
            check_left_by(&old_mine, pid, None),
        );
        for made in [&left, &old, &old_mine] {
            undo(made).unwrap();
        }
        assert_eq!(checked.0, Ok(()));
        assert!(checked.1.is_err(), "another boot's ledger");
        assert_eq!(checked.2, Ok(()));
        assert!(checked.3.is_err(), "another process's ledger");
        let said = checked.4.unwrap_err();
        assert!(said.contains("which runs"), "{said}");
        // Gone: nothing to refuse.
        assert_eq!(check_left_by(&left, pid, Some(&me)), Ok(()));
    }

    /// Without a cgroup (runs without root): the reaper ends the group it was given and the
    /// orphans that come to it, whatever session they are in. In a process of its own (the
    /// test binary again): a reaper takes every child of its process, and other tests' run
    /// in this one.
    #[test]
    fn a_reaper_ends_the_group_and_the_orphans_that_left_it() {
        const ALONE: &str = "FSBENCH_TEST_REAPER_ALONE";
        let mark = format!("reaper-{}", std::process::id());
        if std::env::var_os(ALONE).is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "cgroup::tests::a_reaper_ends_the_group_and_the_orphans_that_left_it",
                    "--nocapture",
                ])
                .env(ALONE, &mark)
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success() && said.contains("1 passed"), "{said}");
            assert_eq!(marked(&mark), Vec::<u32>::new());
            return;
        }
        let mark = std::env::var(ALONE).unwrap();
        let mut reaper = Reaper::start();
        let child = hostile(&mark);
        reaper.add(child.id());
        let pid = go(child, &mark);
        // The shell goes first (a killed workload): its children are orphans now.
        // SAFETY: signalling and reaping the test's own child.
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
            libc::waitpid(pid as i32, std::ptr::null_mut(), 0);
        }
        let ended = reaper.end().unwrap();
        assert!(ended >= 1, "{ended}");
        assert_eq!(marked(&mark), Vec::<u32>::new());
    }
}
