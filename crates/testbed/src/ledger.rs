//! The ledger of what fsbench created on the host: every loop device, mount, image, pool,
//! daemon, directory and scheduler change, in order, persisted to a small state file the moment
//! it exists. Teardown undoes it in reverse; `fsbench cleanup` undoes what a killed process left,
//! touching only what the ledger names and only after checking it is still what fsbench made.

use crate::system::{Cmd, System};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One thing fsbench made or changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Resource {
    Dir {
        path: PathBuf,
    },
    Image {
        path: PathBuf,
    },
    Loop {
        device: PathBuf,
        backing_file: PathBuf,
    },
    Mount {
        mountpoint: PathBuf,
        source: String,
    },
    Scheduler {
        sysfs: PathBuf,
        previous: String,
    },
    ZfsDaemon {
        pid: u32,
        pidfile: PathBuf,
    },
    ZfsPool {
        pool: String,
    },
}

/// Resources of one target of an fsbench process, mirrored to `<state dir>/<tag>.json` (one
/// file per target, so several live targets never overwrite each other's record).
#[derive(Debug)]
pub struct Ledger {
    path: Option<PathBuf>,
    resources: Vec<Resource>,
}

#[derive(Serialize, Deserialize)]
struct StateFile {
    pid: u32,
    resources: Vec<Resource>,
}

impl Ledger {
    /// A ledger persisted as `<state_dir>/<tag>.json` (None: in memory only, for fakes).
    pub fn new(state_dir: Option<&Path>, tag: &str) -> Ledger {
        Ledger {
            path: state_dir.map(|d| d.join(format!("{tag}.json"))),
            resources: Vec::new(),
        }
    }

    /// Records a resource that now exists, and persists the record through `sys`.
    pub fn push(&mut self, sys: &dyn System, resource: Resource) {
        self.resources.push(resource);
        self.save(sys);
    }

    /// Forgets a resource that has been undone.
    pub fn forget(&mut self, sys: &dyn System, resource: &Resource) {
        if let Some(i) = self.resources.iter().rposition(|r| r == resource) {
            self.resources.remove(i);
        }
        self.save(sys);
    }

    pub fn resources(&self) -> &[Resource] {
        &self.resources
    }

    /// Mirrors the ledger to its state file (through the seam, like every host side effect).
    fn save(&self, sys: &dyn System) {
        let Some(path) = &self.path else { return };
        if self.resources.is_empty() {
            let _ = sys.remove_file(path);
            return;
        }
        if let Some(dir) = path.parent() {
            let _ = sys.create_dir(dir);
        }
        let state = StateFile {
            pid: std::process::id(),
            resources: self.resources.clone(),
        };
        // Write then rename, so a crash never leaves half a file.
        let tmp = path.with_extension("json.tmp");
        if let Ok(text) = serde_json::to_string_pretty(&state) {
            if sys.write_file(&tmp, &text).is_ok() {
                let _ = sys.rename(&tmp, path);
            }
        }
    }
}

/// Undoes one resource, after checking it is still what fsbench made. Returns a note on what
/// was done or why it was left alone.
pub fn undo(sys: &dyn System, resource: &Resource) -> Result<String, String> {
    match resource {
        Resource::Mount { mountpoint, source } => {
            // A killed owner's mount(8) may still be running: undone before it ends, its mount
            // would come after the check and stay. Wait (a while) for every process that names
            // the mount point to end — mount(8), the workload — before looking.
            wait_while_named(mountpoint, std::time::Duration::from_secs(10));
            let mounted = sys
                .read_file(Path::new("/proc/self/mountinfo"))
                .map(|text| {
                    fsbench_measure::host::parse_mountinfo(&text)
                        .iter()
                        .any(|m| &m.mount_point == mountpoint && &m.source == source)
                })
                .unwrap_or(false);
            if !mounted {
                return Ok(format!("{} is no longer mounted", mountpoint.display()));
            }
            // A killed owner's workload process dies with it but may take moments to leave
            // the mount: wait a little for it before detaching the mount lazily.
            let cmd = Cmd::new("umount").arg(mountpoint.display().to_string());
            let patience = std::time::Instant::now() + std::time::Duration::from_secs(3);
            loop {
                let out = sys.run(&cmd).map_err(|e| e.to_string())?;
                if out.success() {
                    return Ok(format!("unmounted {}", mountpoint.display()));
                }
                if !out.stderr.contains("busy") || std::time::Instant::now() >= patience {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            // Busy (a process still inside): detach it from the tree; the kernel finishes when
            // the last user leaves.
            let lazy = Cmd::new("umount")
                .arg("-l")
                .arg(mountpoint.display().to_string());
            let out = sys.run(&lazy).map_err(|e| e.to_string())?;
            if out.success() {
                Ok(format!("lazily unmounted busy {}", mountpoint.display()))
            } else {
                Err(format!(
                    "cannot unmount {}: {}",
                    mountpoint.display(),
                    out.last_line()
                ))
            }
        }
        Resource::Loop {
            device,
            backing_file,
        } => match crate::loopdev::backing_file(sys, device) {
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
        Resource::ZfsDaemon { pid, pidfile } => {
            let ours = sys
                .read_file(pidfile)
                .is_ok_and(|text| text.trim() == pid.to_string());
            let comm = sys
                .read_file(&PathBuf::from(format!("/proc/{pid}/comm")))
                .unwrap_or_default();
            if !ours || comm.trim() != "zfs-fuse" {
                let _ = sys.remove_file(pidfile);
                return Ok(format!("zfs-fuse {pid} is not running"));
            }
            // SAFETY: signalling a process fsbench started, identified by its pid file and name.
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
        Resource::Image { path } => match sys.remove_file(path) {
            Ok(()) => Ok(format!("removed {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(format!("{} is gone", path.display()))
            }
            Err(e) => Err(format!("cannot remove {}: {e}", path.display())),
        },
        Resource::Dir { path } => match sys.remove_dir(path) {
            Ok(()) => Ok(format!("removed {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Ok(format!("{} is gone", path.display()))
            }
            Err(e) => Err(format!("cannot remove {}: {e}", path.display())),
        },
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
    /// State files of processes still running (left alone).
    pub live: Vec<u32>,
    pub done: Vec<String>,
    pub failed: Vec<String>,
}

/// Undoes every resource recorded by fsbench processes that are no longer running.
pub fn cleanup(sys: &dyn System, state_dir: &Path) -> CleanupReport {
    cleanup_where(sys, state_dir, None)
}

/// Undoes what the state files of process `pid` (no longer running) list: a guard's work.
pub fn cleanup_of(sys: &dyn System, state_dir: &Path, pid: u32) -> CleanupReport {
    cleanup_where(sys, state_dir, Some(pid))
}

/// Reads and parses a state file; `None` when it is gone or unreadable, `Some(Err)` when it is
/// not a state file.
fn read_state(handle: &mut std::fs::File) -> Option<Result<StateFile, ()>> {
    let mut text = String::new();
    std::io::Read::read_to_string(handle, &mut text).ok()?;
    Some(serde_json::from_str::<StateFile>(&text).map_err(|_| ()))
}

/// Whether `handle` is still the file at `path` (not removed, nor replaced by another).
fn still_at(handle: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (handle.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(now)) => open.dev() == now.dev() && open.ino() == now.ino(),
        _ => false,
    }
}

/// Cleans up after every dead owner (`None`) or only after `only` (a guard's owner).
fn cleanup_where(sys: &dyn System, state_dir: &Path, only: Option<u32>) -> CleanupReport {
    let mut report = CleanupReport::default();
    let Ok(entries) = std::fs::read_dir(state_dir) else {
        return report;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for file in files {
        // First a look without a lock: whose is it, and is its owner gone? A guard must not
        // wait on other processes' files, nor report them.
        let Some(first) = std::fs::File::open(&file)
            .ok()
            .as_mut()
            .and_then(read_state)
        else {
            continue;
        };
        let Ok(first) = first else {
            if only.is_none() {
                report.failed.push(format!(
                    "{} is not a state file: left alone",
                    file.display()
                ));
            }
            continue;
        };
        if only.is_some_and(|pid| pid != first.pid) {
            continue;
        }
        if first.pid != std::process::id() && running(first.pid) {
            report.live.push(first.pid);
            continue;
        }
        // A guard and `fsbench cleanup` may work at once: each holds the state file locked
        // while it undoes what it lists, and the second then finds it gone or shortened.
        let Ok(mut handle) = std::fs::File::open(&file) else {
            continue;
        };
        // SAFETY: flock on a descriptor this function owns; released when `handle` closes.
        if unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&handle), libc::LOCK_EX) } != 0
            || !still_at(&handle, &file)
        {
            continue;
        }
        let Some(Ok(state)) = read_state(&mut handle) else {
            continue;
        };
        let mut remaining = Vec::new();
        for resource in state.resources.iter().rev() {
            match undo(sys, resource) {
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
                pid: state.pid,
                resources: remaining,
            };
            if let Ok(text) = serde_json::to_string_pretty(&state) {
                let _ = std::fs::write(&file, text);
            }
        }
    }
    report
}

/// Whether process `pid` runs: it exists and is not a zombie (one that has exited and whose
/// parent has not yet reaped it holds no file, mount or device).
pub fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command's closing parenthesis: "pid (comm) S ...".
        Ok(stat) => stat
            .rsplit_once(')')
            .is_none_or(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => process_alive(pid),
    }
}

/// Whether process `pid` exists (signal 0: existence and permission only).
pub fn process_alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    let rc = unsafe { libc::kill(pid as i32, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::RecordingSystem;

    #[test]
    fn state_file_mirrors_the_ledger() {
        let dir = tempfile::tempdir().unwrap();
        let sys = crate::system::RealSystem;
        let mut ledger = Ledger::new(Some(dir.path()), "ext4-1-0");
        let image = Resource::Image {
            path: "/w/a.img".into(),
        };
        ledger.push(&sys, image.clone());
        let file = dir.path().join("ext4-1-0.json");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains("\"kind\": \"image\"") && text.contains("/w/a.img"),
            "{text}"
        );
        ledger.forget(&sys, &image);
        assert!(!file.exists(), "an empty ledger leaves no state file");
    }

    #[test]
    fn cleanup_undoes_a_dead_process_in_reverse_and_skips_live_ones() {
        let dir = tempfile::tempdir().unwrap();
        let dead = StateFile {
            pid: 999_999_999,
            resources: vec![
                Resource::Dir {
                    path: "/w/mnt".into(),
                },
                Resource::Image {
                    path: "/w/a.img".into(),
                },
                Resource::Mount {
                    mountpoint: "/w/mnt".into(),
                    source: "/dev/loop40".into(),
                },
            ],
        };
        std::fs::write(
            dir.path().join("999999999.json"),
            serde_json::to_string(&dead).unwrap(),
        )
        .unwrap();
        let live = StateFile {
            pid: 1,
            resources: vec![Resource::Image {
                path: "/w/b.img".into(),
            }],
        };
        std::fs::write(
            dir.path().join("1.json"),
            serde_json::to_string(&live).unwrap(),
        )
        .unwrap();

        let sys = RecordingSystem::new();
        sys.set_file(
            "/proc/self/mountinfo",
            "50 1 7:40 / /w/mnt rw,relatime - ext4 /dev/loop40 rw\n",
        );
        let report = cleanup(&sys, dir.path());
        assert_eq!(report.live, [1]);
        assert!(report.failed.is_empty(), "{:?}", report.failed);
        assert_eq!(
            sys.log(),
            ["run umount /w/mnt", "rm /w/a.img", "rmdir /w/mnt"]
        );
        assert!(!dir.path().join("999999999.json").exists());
        assert!(dir.path().join("1.json").exists());
    }

    /// Undoing a mount waits for a process that names its mount point (a mount(8) a killed
    /// owner left running) to end before it looks, and not forever.
    #[test]
    fn a_mount_is_undone_after_the_processes_that_name_it() {
        let point = Path::new("/fsbench-test-not-a-mount-point");
        let start = std::time::Instant::now();
        wait_while_named(point, std::time::Duration::from_secs(5));
        assert!(start.elapsed() < std::time::Duration::from_millis(500));
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 0.6"])
            .arg(point)
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let start = std::time::Instant::now();
        wait_while_named(point, std::time::Duration::from_secs(5));
        let waited = start.elapsed();
        let _ = child.wait();
        assert!(
            waited >= std::time::Duration::from_millis(300),
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
