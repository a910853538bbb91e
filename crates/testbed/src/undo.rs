//! Undoing what a ledger names: one resource, after checking it is still what fsbench made
//! ([`undo`], on a target's teardown), and everything a killed process left (`fsbench cleanup`,
//! a guard's [`cleanup_of`]). `fsbench cleanup` obeys a state file only when it can trust it and
//! only for what it may name: the state file is root's in a directory only root can change, its
//! owner (pid, start time, boot) is gone, and each thing is fsbench's kind of thing in the work
//! directory (a mount point or image there, a loop device backed by such an image, a mount of
//! one of those), checked again on the host before it is undone. It sits above the modules of
//! the resources it undoes (loop devices, arrays, cgroups, sample directories, zfs), which
//! record them in the ledger below.

use crate::ledger::{running, state_dir, Resource, StateFile};
use crate::system::{umount_patiently, Cmd, System};
use fsbench_model::owner;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Undoes one resource, after checking it is still what fsbench made. Returns a note on what
/// was done or why it was left alone.
pub fn undo(sys: &dyn System, resource: &Resource) -> Result<String, String> {
    match resource {
        Resource::Mount { mountpoint, source } => {
            // A killed owner's mount(8) may still be running: undone before it ends, its mount
            // would come after the check and stay. Wait (a while) for every process that names
            // the mount point to end — mount(8), the workload — before looking.
            wait_while_named(mountpoint, std::time::Duration::from_secs(10));
            if !mounted(sys, mountpoint, source) {
                return Ok(format!("{} is no longer mounted", mountpoint.display()));
            }
            // A killed owner's workload process dies with it but may take moments to leave
            // the mount: wait a little for it.
            let (_, out) = umount_patiently(sys, mountpoint, std::time::Duration::from_secs(3))
                .map_err(|e| e.to_string())?;
            if out.success() {
                return Ok(format!("unmounted {}", mountpoint.display()));
            }
            // Kept, not detached lazily: a lazily detached filesystem lives on unseen, with
            // its loop device and image, for as long as the process inside does.
            Err(format!(
                "cannot unmount {}: {}; end what uses it (`fuser -vm {}` names it), then run \
                 `fsbench cleanup`",
                mountpoint.display(),
                out.last_line(),
                mountpoint.display()
            ))
        }
        Resource::Loop {
            device,
            backing_file,
        } => match sys.loop_backing_file(device) {
            Some(backing) if &backing == backing_file => {
                let out = sys
                    .run(
                        &Cmd::new("losetup")
                            .arg("-d")
                            .arg(device.display().to_string()),
                    )
                    .map_err(|e| e.to_string())?;
                if out.success() {
                    Ok(format!("detached {}", device.display()))
                } else {
                    Err(format!(
                        "cannot detach {}: {}",
                        device.display(),
                        out.last_line()
                    ))
                }
            }
            Some(other) => Ok(format!(
                "{} now belongs to {} (not ours): left alone",
                device.display(),
                other.display()
            )),
            None => Ok(format!("{} is already detached", device.display())),
        },
        Resource::Scheduler { sysfs, previous } => {
            if sys.read_file(sysfs).is_err() {
                return Ok(format!("{} is gone", sysfs.display()));
            }
            sys.write_file(sysfs, previous)
                .map(|_| format!("restored scheduler {previous}"))
                .map_err(|e| format!("cannot restore {}: {e}", sysfs.display()))
        }
        Resource::ZfsPool { pool } => {
            let listed = sys
                .run(&crate::fs::zfs::listed(pool))
                .is_ok_and(|o| o.success());
            if !listed {
                return Ok(format!("pool {pool} is gone"));
            }
            for _ in 0..20 {
                let out = sys
                    .run(&crate::fs::zfs::destroy(pool))
                    .map_err(|e| e.to_string())?;
                if out.success() {
                    return Ok(format!("destroyed pool {pool}"));
                }
                // "pool is busy" right after I/O: the daemon is still flushing.
                std::thread::sleep(std::time::Duration::from_millis(250));
            }
            Err(format!("cannot destroy pool {pool}: still busy"))
        }
        Resource::ZfsDaemon {
            pid,
            pidfile,
            process,
        } => {
            let named = sys
                .read_file(pidfile)
                .is_ok_and(|text| text.trim() == pid.to_string());
            let comm = sys
                .read_file(&PathBuf::from(format!("/proc/{pid}/comm")))
                .unwrap_or_default();
            // The very process fsbench started: its pid file, its name, and its start time and
            // boot — a name alone would match any zfs-fuse, and a pid alone any process.
            let ours = named
                && comm.trim() == "zfs-fuse"
                && process.as_deref().is_some_and(owner::is_alive);
            if !ours {
                let note = if named && process.is_none() && running(*pid) {
                    format!(
                        "zfs-fuse {pid} left alone: this older ledger does not say when it \
                         started, so it cannot be told from another process that took its pid; \
                         stop it yourself if it is the one fsbench started"
                    )
                } else {
                    format!("zfs-fuse {pid} is not running")
                };
                let _ = sys.remove_file(pidfile);
                return Ok(note);
            }
            // SAFETY: signalling the process fsbench started, identified above.
            unsafe { libc::kill(*pid as i32, libc::SIGTERM) };
            for _ in 0..100 {
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    let _ = sys.remove_file(pidfile);
                    // The run directory was made for the pid file; it goes when empty.
                    if let Some(dir) = pidfile.parent() {
                        let _ = sys.remove_dir(dir);
                    }
                    return Ok(format!("stopped zfs-fuse {pid}"));
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            // A daemon that ignores SIGTERM for 10 s is wedged (seen spinning in a pool
            // creation that never ended): it is ours, so it is killed.
            // SAFETY: as above.
            unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
            for _ in 0..50 {
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    let _ = sys.remove_file(pidfile);
                    if let Some(dir) = pidfile.parent() {
                        let _ = sys.remove_dir(dir);
                    }
                    return Ok(format!(
                        "killed zfs-fuse {pid} (it ignored SIGTERM for 10 s)"
                    ));
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(format!("zfs-fuse {pid} did not stop, even on SIGKILL"))
        }
        Resource::MdArray { device, .. } => {
            let out = sys
                .run(&crate::array::md_stop(device))
                .map_err(|e| e.to_string())?;
            if out.success() {
                Ok(format!("stopped md array {}", device.display()))
            } else if out.stderr.contains("No such file") || out.stderr.contains("not active") {
                Ok(format!("{} is gone", device.display()))
            } else {
                Err(format!(
                    "cannot stop md array {}: {}",
                    device.display(),
                    out.last_line()
                ))
            }
        }
        Resource::Image { path } => match sys.remove_file(path) {
            Ok(()) => Ok(format!("removed {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(format!("{} is gone", path.display()))
            }
            Err(e) => Err(format!("cannot remove {}: {e}", path.display())),
        },
        Resource::Cgroup { path } => crate::cgroup::undo(path),
        Resource::SampleDir {
            path,
            device,
            inode,
        } => crate::scratch::remove(path, *device, *inode),
        Resource::Dir { path } => match sys.remove_dir(path) {
            Ok(()) => Ok(format!("removed {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(format!("{} is gone", path.display()))
            }
            Err(e) => Err(format!("cannot remove {}: {e}", path.display())),
        },
    }
}

/// Whether `source` is mounted on `mountpoint` in this mount namespace.
pub(crate) fn mounted(sys: &dyn System, mountpoint: &Path, source: &str) -> bool {
    sys.read_file(Path::new("/proc/self/mountinfo"))
        .map(|text| {
            fsbench_measure::host::parse_mountinfo(&text)
                .iter()
                .any(|m| m.mount_point == mountpoint && m.source == source)
        })
        .unwrap_or(false)
}

/// What a ledger in a work directory may name, and nothing else: `fsbench cleanup` reads
/// files that a bug, an older version or a person may have written, and acts as root.
struct Scope {
    work_dir: PathBuf,
}

impl Scope {
    /// Why `resource` is not something fsbench makes for a target in this work directory, or
    /// something the process that wrote `state` may have left, or Ok. Looks at the host
    /// (inodes, sysfs, processes), not only at the names.
    fn check(
        &self,
        sys: &dyn System,
        resource: &Resource,
        state: &StateFile,
    ) -> Result<(), String> {
        match resource {
            Resource::Dir { path } => self.entry(path, "mnt-", ""),
            Resource::Image { path } => self.image(path),
            Resource::Loop {
                device,
                backing_file,
            } => {
                loop_name(device)?;
                self.image(backing_file)
                    .or_else(|why| self.served_image(backing_file).map_err(|_| why))
            }
            Resource::Mount { mountpoint, source } => {
                self.entry(mountpoint, "mnt-", "")?;
                // A loop device is fsbench's only when its image is (whatever the ledger says
                // its image was); tmpfs and a real device mount only on a mount point of ours.
                let device = Path::new(source);
                // Not mounted any more (a killed run's loop device cleared itself when its
                // filesystem was unmounted, and its number may back another's image now):
                // nothing to undo, nothing of anyone's to touch.
                if loop_name(device).is_ok() && mounted(sys, mountpoint, source) {
                    if let Some(backing) = sys.loop_backing_file(device) {
                        self.image(&backing).map_err(|why| {
                            format!("{source} is backed by {}: {why}", backing.display())
                        })?;
                    }
                }
                Ok(())
            }
            Resource::Cgroup { path } => {
                crate::cgroup::check_left_by(path, state.pid, state.owner.as_deref())
            }
            Resource::SampleDir { path, .. } => crate::scratch::check_ours(path),
            Resource::Scheduler { sysfs, previous } => {
                let path_ok = sysfs.starts_with("/sys/")
                    && sysfs.ends_with("queue/scheduler")
                    && sysfs.components().all(|c| {
                        matches!(
                            c,
                            std::path::Component::RootDir | std::path::Component::Normal(_)
                        )
                    });
                let word = !previous.is_empty()
                    && previous
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
                if path_ok && word {
                    Ok(())
                } else {
                    Err(format!(
                        "{} = {previous:?} is not an I/O scheduler setting",
                        sysfs.display()
                    ))
                }
            }
            Resource::ZfsPool { pool } => {
                let name = pool.strip_prefix("fsbench-").unwrap_or("");
                if !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
                    Ok(())
                } else {
                    Err(format!("pool {pool} is not named like fsbench's pools"))
                }
            }
            Resource::MdArray { device, members } => {
                let name = device
                    .to_str()
                    .and_then(|d| d.strip_prefix("/dev/md/fsbench-"))
                    .unwrap_or("");
                if name.is_empty() || name.contains('/') || name.contains("..") {
                    return Err(format!(
                        "{} is not named like fsbench's md arrays",
                        device.display()
                    ));
                }
                // A loop device member is fsbench's only when its image is (a real device
                // was the user's to give).
                for member in members.iter().filter(|m| loop_name(m).is_ok()) {
                    if let Some(backing) = sys.loop_backing_file(member) {
                        self.image(&backing).map_err(|why| {
                            format!(
                                "{} is backed by {}: {why}",
                                member.display(),
                                backing.display()
                            )
                        })?;
                    }
                }
                Ok(())
            }
            Resource::ZfsDaemon { pidfile, .. } => self
                .entry_in(&self.work_dir.join("run"), pidfile, "zfs-fuse-", ".pid")
                .map_err(|why| format!("its pid file {why}")),
        }
    }

    /// An image: in the work directory, or in memory (/dev/shm, a `ram` platform's).
    fn image(&self, path: &Path) -> Result<(), String> {
        self.entry(path, "", ".img")
            // A recording device's log of written bytes (`crate::recorder`).
            .or_else(|why| self.entry(path, "", ".log").map_err(|_| why))
            .or_else(|why| {
                self.entry_in(Path::new(crate::device::MEMORY_DIR), path, "", ".img")
                    .map_err(|_| why)
            })
    }

    /// The image a recording device serves: `image` in a mount point of the work directory
    /// (`crate::recorder`).
    fn served_image(&self, path: &Path) -> Result<(), String> {
        let named = path.file_name().and_then(|n| n.to_str()) == Some(crate::recorder::IMAGE);
        match (named, path.parent()) {
            (true, Some(dir)) => self.entry(dir, "mnt-", ""),
            _ => Err(format!("{} is not a name fsbench gives", path.display())),
        }
    }

    /// A name fsbench gives (`prefix...suffix`) directly in the work directory.
    fn entry(&self, path: &Path, prefix: &str, suffix: &str) -> Result<(), String> {
        self.entry_in(&self.work_dir, path, prefix, suffix)
    }

    /// `path` is `prefix...suffix` directly in `dir` — the same directory on the host (device
    /// and inode), whatever the spelling: no `..`, no symlink leads elsewhere.
    fn entry_in(&self, dir: &Path, path: &Path, prefix: &str, suffix: &str) -> Result<(), String> {
        use std::os::unix::fs::MetadataExt;
        let shown = path.display();
        let named = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
            n.starts_with(prefix) && n.ends_with(suffix) && n.len() > prefix.len()
        });
        if !named {
            return Err(format!("{shown} is not a name fsbench gives"));
        }
        let same = match (path.parent().map(std::fs::metadata), std::fs::metadata(dir)) {
            (Some(Ok(a)), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        };
        if same {
            Ok(())
        } else {
            Err(format!("{shown} is not in {}", dir.display()))
        }
    }
}

/// `/dev/loopN`.
fn loop_name(device: &Path) -> Result<(), String> {
    let number = device
        .to_str()
        .and_then(|d| d.strip_prefix("/dev/loop"))
        .unwrap_or("");
    if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
        Ok(())
    } else {
        Err(format!("{} is not a loop device", device.display()))
    }
}

/// Waits up to `limit` while a process other than this one has `path` as one of its arguments
/// (a mount(8) of it, a workload in it). Only looks; never signals anything.
fn wait_while_named(path: &Path, limit: std::time::Duration) {
    let wanted = path.as_os_str().as_encoded_bytes();
    let me = std::process::id().to_string();
    let named = || {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return false;
        };
        entries.flatten().any(|e| {
            let name = e.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            else {
                return false;
            };
            if pid == me {
                return false;
            }
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|argv| argv.split(|&b| b == 0).any(|arg| arg == wanted))
                && running(pid.parse().unwrap_or(0))
        })
    };
    let deadline = std::time::Instant::now() + limit;
    while named() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// What `fsbench cleanup` found and did.
#[derive(Debug, Default, Serialize)]
pub struct CleanupReport {
    /// Why no state file was obeyed at all: the work or state directory is one another user
    /// could change (what to fix is in the text).
    pub refused: Option<String>,
    /// State files of processes still running (left alone).
    pub live: Vec<u32>,
    pub done: Vec<String>,
    pub failed: Vec<String>,
}

/// Undoes every resource recorded by fsbench processes that are no longer running, from the
/// state files in `work_dir`.
pub fn cleanup(sys: &dyn System, work_dir: &Path) -> CleanupReport {
    cleanup_where(sys, work_dir, None)
}

/// Undoes what the state files of process `pid` (no longer running) list: a guard's work.
pub fn cleanup_of(sys: &dyn System, work_dir: &Path, pid: u32) -> CleanupReport {
    cleanup_where(sys, work_dir, Some(pid))
}

/// Opens a state file without following a symlink (nor waiting on a FIFO); `None` when it is
/// gone, `Some(Err(why))` when it is not one to trust: not a regular file of root's that only
/// root may write.
fn open_state(path: &Path) -> Option<Result<std::fs::File, String>> {
    use std::os::unix::fs::OpenOptionsExt;
    let handle = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path);
    let handle = match handle {
        Ok(handle) => handle,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Some(Err(format!("{} is a symlink", path.display())))
        }
        Err(_) => return None,
    };
    let meta = handle.metadata().ok()?;
    Some(
        fsbench_measure::trust::check_file(path, &meta)
            .map(|()| handle)
            .map_err(|e| e.to_string()),
    )
}

/// Reads and parses an open state file from its start; `None` when unreadable, `Some(Err)`
/// when it is not a state file.
fn read_state(handle: &mut std::fs::File, path: &Path) -> Option<Result<StateFile, String>> {
    use std::io::{Read, Seek};
    let mut text = String::new();
    handle.rewind().ok()?;
    handle.read_to_string(&mut text).ok()?;
    Some(
        serde_json::from_str::<StateFile>(&text)
            .map_err(|_| format!("{} is not a state file", path.display())),
    )
}

/// Whether `handle` is still the file at `path` (not removed, nor replaced by another).
fn still_at(handle: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (handle.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(open), Ok(now)) => open.dev() == now.dev() && open.ino() == now.ino(),
        _ => false,
    }
}

/// Whether the process that wrote `state` (last modified at `written`) still runs: the same
/// boot, pid and start time — or, for a ledger of fsbench 0.1 that names only a pid, a process
/// with that pid that had started by the time the file was last written.
fn owner_runs(state: &StateFile, written: Option<std::time::SystemTime>) -> bool {
    if state.pid == std::process::id() || !running(state.pid) {
        return false;
    }
    match (&state.owner, written) {
        (Some(owner), _) => owner::is_alive(owner),
        (None, Some(written)) => owner::started_at(state.pid).is_none_or(|started| {
            // Both clocks count whole seconds at best.
            started <= written + std::time::Duration::from_secs(2)
        }),
        (None, None) => true,
    }
}

/// Cleans up after every dead owner (`None`) or only after `only` (a guard's owner).
fn cleanup_where(sys: &dyn System, work_dir: &Path, only: Option<u32>) -> CleanupReport {
    let mut report = CleanupReport::default();
    let work_dir = std::path::absolute(work_dir).unwrap_or_else(|_| work_dir.to_path_buf());
    let state_dir = state_dir(&work_dir);
    // Only ledgers nobody else could have written or swapped are obeyed.
    for dir in [&work_dir, &state_dir] {
        match fsbench_measure::trust::check_dir(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return report,
            Err(e) => {
                report.refused = Some(format!(
                    "work directory {}: {e}; no state file there is obeyed until this is fixed",
                    work_dir.display()
                ));
                return report;
            }
        }
    }
    let scope = Scope {
        work_dir: work_dir.clone(),
    };
    finish_interrupted_saves(&state_dir, only, &mut report);
    let Ok(entries) = std::fs::read_dir(&state_dir) else {
        return report;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    // The files that list a sample's processes first: they end before any mount is undone.
    files.sort_by_key(|file| !lists_processes(file));
    for file in files {
        // First a look without a lock: whose is it, and is its owner gone? A guard must not
        // wait on other processes' files, nor report them.
        let Some(opened) = open_state(&file) else {
            continue;
        };
        let first = opened.and_then(|mut handle| {
            read_state(&mut handle, &file)
                .unwrap_or_else(|| Err(format!("{} cannot be read", file.display())))
                .map(|state| (handle, state))
        });
        let (mut handle, first) = match first {
            Ok(first) => first,
            Err(why) => {
                if only.is_none() {
                    report.failed.push(format!("{why}: left alone"));
                }
                continue;
            }
        };
        if only.is_some_and(|pid| pid != first.pid) {
            continue;
        }
        let written = handle.metadata().and_then(|m| m.modified()).ok();
        if owner_runs(&first, written) {
            report.live.push(first.pid);
            continue;
        }
        // A guard and `fsbench cleanup` may work at once: each holds the state file locked
        // while it undoes what it lists, and the second then finds it gone or shortened.
        // SAFETY: flock on a descriptor this function owns; released when `handle` closes.
        if unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&handle), libc::LOCK_EX) } != 0
            || !still_at(&handle, &file)
        {
            continue;
        }
        let Some(Ok(state)) = read_state(&mut handle, &file) else {
            continue;
        };
        let mut remaining = Vec::new();
        for resource in state.resources.iter().rev() {
            let result = scope
                .check(sys, resource, &state)
                .map_err(|why| format!("{}: {why}: left alone", file.display()))
                .and_then(|()| undo(sys, resource));
            match result {
                Ok(note) => report.done.push(note),
                Err(note) => {
                    report.failed.push(note);
                    remaining.push(resource.clone());
                }
            }
        }
        if remaining.is_empty() {
            let _ = std::fs::remove_file(&file);
        } else {
            remaining.reverse();
            let state = StateFile {
                resources: remaining,
                ..state
            };
            if let Ok(text) = serde_json::to_string_pretty(&state) {
                let _ = std::fs::write(&file, text);
            }
        }
    }
    report
}

/// How long a save's temporary file may take to be renamed over its ledger by a live process:
/// an unreadable one older than this, with no ledger beside it, was left by a killed one.
const SAVE_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// A ledger is saved by writing `X.json.tmp` and renaming it over `X.json`; a process killed
/// between the two leaves the temporary file, which holds the ledger's newest state (a
/// resource `X.json` may not list yet). Of dead owners: a whole one is put in place, to be
/// undone with the others; a torn one (the kill came mid-write, before the change it carried
/// was made) is removed. A live owner's is left alone: it is being saved now.
fn finish_interrupted_saves(state_dir: &Path, only: Option<u32>, report: &mut CleanupReport) {
    let Ok(entries) = std::fs::read_dir(state_dir) else {
        return;
    };
    let mut saves: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_str().is_some_and(|s| s.ends_with(".json.tmp")))
        .collect();
    saves.sort();
    for tmp in saves {
        let ledger = tmp.with_extension("");
        let Some(Ok(mut handle)) = open_state(&tmp) else {
            // Untrusted (another user's, a symlink) or gone: never obeyed, never removed.
            continue;
        };
        let written = handle.metadata().and_then(|m| m.modified()).ok();
        match read_state(&mut handle, &tmp) {
            Some(Ok(state)) => {
                if only.is_some_and(|pid| pid != state.pid) || owner_runs(&state, written) {
                    continue;
                }
                if std::fs::rename(&tmp, &ledger).is_ok() {
                    report.done.push(format!(
                        "finished the save of {} its process was killed in",
                        ledger.display()
                    ));
                }
            }
            _ => {
                // Torn: whose it was, the ledger beside it says; with none, its age.
                let owner = open_state(&ledger).and_then(Result::ok).and_then(|mut h| {
                    let at = h.metadata().and_then(|m| m.modified()).ok();
                    read_state(&mut h, &ledger)
                        .and_then(Result::ok)
                        .map(|s| (s, at))
                });
                let dead = match &owner {
                    Some((state, at)) => {
                        only.is_none_or(|pid| pid == state.pid) && !owner_runs(state, *at)
                    }
                    None => {
                        only.is_none()
                            && written
                                .and_then(|w| w.elapsed().ok())
                                .is_some_and(|age| age > SAVE_GRACE)
                    }
                };
                if dead && std::fs::remove_file(&tmp).is_ok() {
                    report.done.push(format!(
                        "removed {}, a save cut short by its process's kill",
                        tmp.display()
                    ));
                }
            }
        }
    }
}

/// Whether the state file at `path` lists a cgroup of a sample's processes.
fn lists_processes(path: &Path) -> bool {
    open_state(path)
        .and_then(Result::ok)
        .as_mut()
        .and_then(|handle| read_state(handle, path))
        .and_then(Result::ok)
        .is_some_and(|state| {
            state
                .resources
                .iter()
                .any(|r| matches!(r, Resource::Cgroup { .. }))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::RecordingSystem;

    /// A work directory of root's (in /var/tmp, like the tests' own) with its state directory.
    fn work_dir() -> tempfile::TempDir {
        let work = tempfile::tempdir_in("/var/tmp").unwrap();
        std::fs::create_dir(work.path().join("state")).unwrap();
        work
    }

    fn write_state(work: &Path, name: &str, state: &StateFile) -> PathBuf {
        let file = work.join("state").join(name);
        std::fs::write(&file, serde_json::to_string(state).unwrap()).unwrap();
        file
    }

    /// A process that lives while the test looks (a `sleep` of its own).
    struct Sleeper(std::process::Child);

    impl Sleeper {
        fn new() -> Sleeper {
            Sleeper(
                std::process::Command::new("sleep")
                    .arg("30")
                    .spawn()
                    .unwrap(),
            )
        }
        fn pid(&self) -> u32 {
            self.0.id()
        }
    }

    impl Drop for Sleeper {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    #[test]
    fn cleanup_undoes_a_dead_process_in_reverse_and_skips_live_ones() {
        let work = work_dir();
        let w = work.path();
        let point = w.join("mnt-ext4-1-0-0badcafe");
        let dead = StateFile {
            pid: 999_999_999,
            owner: None,
            resources: vec![
                Resource::Dir {
                    path: point.clone(),
                },
                Resource::Image {
                    path: w.join("ext4-1-0-0badcafe.img"),
                },
                Resource::Mount {
                    mountpoint: point.clone(),
                    source: "/dev/loop40".into(),
                },
            ],
        };
        write_state(w, "999999999.json", &dead);
        // Alive: pid 1, in a ledger of fsbench 0.1 (no owner; it ran before the file was
        // written), and a live process named with its start time.
        let sleeper = Sleeper::new();
        for (name, pid, owner) in [
            ("1.json", 1, None),
            ("2.json", sleeper.pid(), owner::of(sleeper.pid())),
        ] {
            let state = StateFile {
                pid,
                owner,
                resources: vec![Resource::Image {
                    path: w.join("b.img"),
                }],
            };
            write_state(w, name, &state);
        }

        let sys = RecordingSystem::new();
        sys.set_file(
            "/proc/self/mountinfo",
            &format!(
                "50 1 7:40 / {} rw,relatime - ext4 /dev/loop40 rw\n",
                point.display()
            ),
        );
        sys.set_file(
            "/sys/block/loop40/loop/backing_file",
            &format!("{}/ext4-1-0-0badcafe.img (deleted)\n", w.display()),
        );
        let report = cleanup(&sys, w);
        assert_eq!(report.live, [1, sleeper.pid()]);
        assert!(report.failed.is_empty(), "{:?}", report.failed);
        let shown = |p: &Path| p.display().to_string();
        assert_eq!(
            sys.log(),
            [
                format!("run umount {}", shown(&point)),
                format!("rm {}/ext4-1-0-0badcafe.img", shown(w)),
                format!("rmdir {}", shown(&point)),
            ]
        );
        assert!(!w.join("state/999999999.json").exists());
        assert!(w.join("state/1.json").exists() && w.join("state/2.json").exists());
    }

    /// A process killed between writing its ledger's temporary file and renaming it leaves the
    /// newest state there: cleanup undoes what it lists (here a directory the older ledger
    /// does not have yet) and removes a torn one; a live owner's is left alone.
    #[test]
    fn a_ledger_save_cut_short_by_a_kill_is_finished_or_removed() {
        let work = work_dir();
        let w = work.path();
        let (a, b) = (w.join("mnt-a"), w.join("mnt-b"));
        let dir = |p: &Path| Resource::Dir {
            path: p.to_path_buf(),
        };
        let older = StateFile {
            pid: 999_999_999,
            owner: None,
            resources: vec![dir(&a)],
        };
        write_state(w, "sample-1-0.json", &older);
        let newer = StateFile {
            resources: vec![dir(&a), dir(&b)],
            ..older
        };
        write_state(w, "sample-1-0.json.tmp", &newer);
        // Torn, beside its dead owner's ledger.
        write_state(
            w,
            "sample-2-0.json",
            &StateFile {
                pid: 999_999_998,
                owner: None,
                resources: vec![],
            },
        );
        std::fs::write(w.join("state/sample-2-0.json.tmp"), "{\"pid\": 99").unwrap();
        // A live owner's, being saved.
        let sleeper = Sleeper::new();
        let live = StateFile {
            pid: sleeper.pid(),
            owner: owner::of(sleeper.pid()),
            resources: vec![dir(&w.join("mnt-c"))],
        };
        write_state(w, "sample-3-0.json.tmp", &live);

        let sys = RecordingSystem::new();
        let report = cleanup(&sys, w);
        assert!(report.failed.is_empty(), "{:?}", report.failed);
        let shown = |p: &Path| p.display().to_string();
        assert_eq!(
            sys.log(),
            [
                format!("rmdir {}", shown(&b)),
                format!("rmdir {}", shown(&a))
            ]
        );
        let mut left: Vec<_> = std::fs::read_dir(w.join("state"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["sample-3-0.json.tmp"]);
    }

    /// A pid taken by another process — after a reboot, or once pids wrapped — does not keep
    /// a dead owner's ledger alive: the owner is told apart by its start time and boot, and a
    /// ledger of fsbench 0.1 (a pid only) by a process that started after it was written.
    #[test]
    fn a_reused_pid_is_not_the_owner() {
        let work = work_dir();
        let w = work.path();
        let sleeper = Sleeper::new();
        let pid = sleeper.pid();
        let boot = owner::current().split(' ').next().unwrap().to_string();
        let image = |n: &str| Resource::Image {
            path: w.join(format!("ext4-{n}.img")),
        };
        for (name, owner) in [
            ("earlier.json", Some(format!("{boot} {pid} 1"))),
            (
                "other-boot.json",
                owner::of(pid).map(|o| o.replacen(&boot, "another-boot", 1)),
            ),
        ] {
            let state = StateFile {
                pid,
                owner,
                resources: vec![image(name)],
            };
            write_state(w, name, &state);
        }
        let old = write_state(
            w,
            "old.json",
            &StateFile {
                pid,
                owner: None,
                resources: vec![image("old")],
            },
        );
        let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(an_hour_ago)
            .unwrap();
        let sys = RecordingSystem::new();
        let report = cleanup(&sys, w);
        assert!(report.live.is_empty(), "{report:?}");
        assert_eq!(report.done.len(), 3, "{report:?}");
        assert!(std::fs::read_dir(w.join("state")).unwrap().next().is_none());
    }

    /// What a ledger may not name is left alone, said, and kept on record: a file outside the
    /// work directory (also through `..`), a loop device whose image is elsewhere, a mount of
    /// one, a mount point of another name, a pool, md array or scheduler fsbench does not make
    /// (an md array of fsbench's name over a loop device backed by an image elsewhere).
    #[test]
    fn cleanup_touches_only_what_a_ledger_may_name() {
        let work = work_dir();
        let w = work.path();
        let outside = tempfile::tempdir_in("/var/tmp").unwrap();
        let victim = outside.path().join("victim.img");
        std::fs::write(&victim, "keep").unwrap();
        let forged = StateFile {
            pid: 999_999_999,
            owner: None,
            resources: vec![
                Resource::Image {
                    path: victim.clone(),
                },
                Resource::Image {
                    path: w
                        .join("..")
                        .join(outside.path().file_name().unwrap())
                        .join("victim.img"),
                },
                Resource::Dir {
                    path: w.join("state"),
                },
                Resource::Loop {
                    device: "/dev/loop41".into(),
                    backing_file: victim.clone(),
                },
                Resource::Loop {
                    device: "/dev/sda".into(),
                    backing_file: w.join("a.img"),
                },
                Resource::Mount {
                    mountpoint: w.join("mnt-x"),
                    source: "/dev/loop41".into(),
                },
                Resource::Mount {
                    mountpoint: "/srv".into(),
                    source: "/dev/sdb1".into(),
                },
                Resource::ZfsPool {
                    pool: "tank".into(),
                },
                Resource::MdArray {
                    device: "/dev/md127".into(),
                    members: Vec::new(),
                },
                Resource::MdArray {
                    device: "/dev/md/fsbench-ext4-1-0".into(),
                    members: vec!["/dev/loop41".into()],
                },
                Resource::Scheduler {
                    sysfs: "/etc/passwd".into(),
                    previous: "none".into(),
                },
                Resource::Cgroup {
                    path: "/tmp/fsbench-1-2-3".into(),
                },
                Resource::SampleDir {
                    path: outside.path().to_path_buf(),
                    device: 0,
                    inode: 0,
                },
            ],
        };
        let file = write_state(w, "forged.json", &forged);
        let sys = RecordingSystem::new();
        sys.set_file(
            "/sys/block/loop41/loop/backing_file",
            &format!("{}\n", victim.display()),
        );
        // The forged mount is there: its device's image is not ours, so it is left alone.
        sys.set_file(
            "/proc/self/mountinfo",
            &format!(
                "36 35 7:41 / {} rw,relatime - ext4 /dev/loop41 rw\n",
                w.join("mnt-x").display()
            ),
        );
        let report = cleanup(&sys, w);
        assert_eq!(sys.log(), Vec::<String>::new(), "{report:?}");
        assert!(report.done.is_empty(), "{report:?}");
        assert_eq!(report.failed.len(), forged.resources.len(), "{report:?}");
        // Said once each, not "left alone: left alone".
        assert!(
            report
                .failed
                .iter()
                .all(|f| f.matches("left alone").count() == 1),
            "{report:?}"
        );
        assert!(victim.exists());
        let kept: StateFile =
            serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        assert_eq!(kept.resources, forged.resources);
    }

    /// A killed run's mount that is gone, whose loop device cleared itself and now backs
    /// another run's image: nothing of it is left, so cleanup ends it (its record goes) and
    /// touches nothing — it said "could not undo everything" for ever before.
    #[test]
    fn a_mount_gone_whose_loop_device_backs_another_image_now_is_done() {
        let work = work_dir();
        let w = work.path();
        let outside = tempfile::tempdir_in("/var/tmp").unwrap();
        let theirs = outside.path().join("theirs.img");
        std::fs::write(&theirs, "theirs").unwrap();
        let ours = w.join("ext4-1-0-ab.img");
        std::fs::write(&ours, "").unwrap();
        let state = StateFile {
            pid: 999_999_999,
            owner: None,
            resources: vec![
                Resource::Loop {
                    device: "/dev/loop42".into(),
                    backing_file: ours.clone(),
                },
                Resource::Mount {
                    mountpoint: w.join("mnt-ext4-1-0-cd"),
                    source: "/dev/loop42".into(),
                },
            ],
        };
        let file = write_state(w, "gone.json", &state);
        let sys = RecordingSystem::new();
        sys.set_file(
            "/sys/block/loop42/loop/backing_file",
            &format!("{}\n", theirs.display()),
        );
        sys.set_file("/proc/self/mountinfo", "");
        let report = cleanup(&sys, w);
        assert!(report.failed.is_empty(), "{report:?}");
        assert!(
            report
                .done
                .iter()
                .any(|d| d.contains("is no longer mounted"))
                && report
                    .done
                    .iter()
                    .any(|d| d.contains("(not ours): left alone")),
            "{report:?}"
        );
        assert!(!sys
            .log()
            .iter()
            .any(|l| l.contains("losetup") || l.contains("umount")));
        assert!(theirs.exists() && !file.exists());
    }

    /// State files are obeyed only when root's, in directories only root can change.
    #[test]
    fn a_state_file_another_user_could_write_is_not_obeyed() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: needs root (chown)");
            return;
        }
        let nobody = 65534;
        let work = work_dir();
        let w = work.path();
        let state = StateFile {
            pid: 999_999_999,
            owner: None,
            resources: vec![Resource::Image {
                path: w.join("ext4-1-0.img"),
            }],
        };
        let file = write_state(w, "x.json", &state);
        std::os::unix::fs::chown(&file, Some(nobody), None).unwrap();
        let sys = RecordingSystem::new();
        let report = cleanup(&sys, w);
        assert!(report.failed[0].contains("belongs to nobody"), "{report:?}");
        assert!(sys.log().is_empty());
        std::os::unix::fs::chown(&file, Some(0), None).unwrap();
        std::os::unix::fs::chown(w.join("state"), Some(nobody), None).unwrap();
        let report = cleanup(&sys, w);
        assert!(
            report
                .refused
                .as_deref()
                .is_some_and(|r| r.contains("state belongs to nobody")),
            "{report:?}"
        );
        assert!(sys.log().is_empty());
        assert!(file.exists());
    }

    /// Undoing a mount waits for a process that names its mount point (a mount(8) a killed
    /// owner left running) to end before it looks, and not forever.
    #[test]
    fn a_mount_is_undone_after_the_processes_that_name_it() {
        let point = Path::new("/fsbench-test-not-a-mount-point");
        let start = std::time::Instant::now();
        wait_while_named(point, std::time::Duration::from_secs(5));
        assert!(start.elapsed() < std::time::Duration::from_millis(500));
        // The shell's sleep begins after the spawn returns: the wait ends 0.6 s after it at
        // the earliest, however slowly the host ran the test in between.
        let spawned = std::time::Instant::now();
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 0.6"])
            .arg(point)
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        wait_while_named(point, std::time::Duration::from_secs(5));
        let waited = spawned.elapsed();
        let _ = child.wait();
        assert!(
            waited >= std::time::Duration::from_millis(600),
            "{waited:?}"
        );
        let mut stuck = std::process::Command::new("sh")
            .args(["-c", "sleep 5"])
            .arg(point)
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let start = std::time::Instant::now();
        wait_while_named(point, std::time::Duration::from_millis(300));
        let waited = start.elapsed();
        let _ = stuck.kill();
        let _ = stuck.wait();
        assert!(waited < std::time::Duration::from_secs(2), "{waited:?}");
    }
}
