//! The ledger of what fsbench created on the host: every loop device, mount, image, pool,
//! daemon, directory, sample cgroup and scheduler change ([`Resource`]), in order, persisted
//! to a small state file the moment it exists, and whether the process that wrote one still
//! runs. It knows the records, not how to undo them: `undo` (above every resource's module)
//! undoes a record, on teardown and for `fsbench cleanup`.

use crate::system::System;
use fsbench_model::owner;
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
        /// The daemon's [`owner`] text (boot, pid, start time): only that very process is ever
        /// signalled, never another that took its pid. None in ledgers of fsbench 0.1.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        process: Option<String>,
    },
    ZfsPool {
        pool: String,
    },
    /// An md array over `members` (`/dev/md/fsbench-...`), stopped when undone.
    MdArray {
        device: PathBuf,
        members: Vec<PathBuf>,
    },
    /// A cgroup made for one sample's processes (`cgroup.rs`): undoing it ends them all, so it
    /// is undone before any mount (`cleanup` takes the files that list one first).
    Cgroup {
        path: PathBuf,
    },
    /// A directory made fresh for one sample in a user's directory (`scratch.rs`), removed
    /// with everything in it: only while it is still that directory (device and inode), and
    /// never across a mount left in it.
    SampleDir {
        path: PathBuf,
        device: u64,
        inode: u64,
    },
}

/// Resources of one target of an fsbench process, mirrored to `<state dir>/<tag>.json` (one
/// file per target, so several live targets never overwrite each other's record).
#[derive(Debug)]
pub struct Ledger {
    path: Option<PathBuf>,
    resources: Vec<Resource>,
}

/// A ledger as its state file holds it.
#[derive(Serialize, Deserialize)]
pub(crate) struct StateFile {
    pub(crate) pid: u32,
    /// The writing process's [`owner`] text (boot, pid, start time): a process that took the
    /// pid later, or after a reboot, is not mistaken for it. None in ledgers of fsbench 0.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) owner: Option<String>,
    pub(crate) resources: Vec<Resource>,
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
        // Never written where another user could read it back to us changed.
        if let Some(dir) = path.parent() {
            if sys.create_trusted_dir(dir).is_err() {
                return;
            }
        }
        let state = StateFile {
            pid: std::process::id(),
            owner: Some(owner::current()),
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

/// The state directory under a work directory: where ledgers are mirrored.
pub fn state_dir(work_dir: &Path) -> PathBuf {
    work_dir.join("state")
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
        let state: StateFile = serde_json::from_str(&text).unwrap();
        assert_eq!(state.owner.as_deref(), Some(owner::current().as_str()));
        ledger.forget(&sys, &image);
        assert!(!file.exists(), "an empty ledger leaves no state file");
    }
}
