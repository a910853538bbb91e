//! The guard: a small process started beside one that prepares targets, in a session of its
//! own, that undoes what its parent's ledger still lists when the parent dies without tearing
//! down (kill -9, a rank that mpirun killed with its job, the OOM killer). A parent that ends
//! normally dismisses it, and it leaves without touching anything.

use crate::ledger;
use crate::system::System;
use crate::undo::{self, CleanupReport};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// What a parent that ended normally writes to its guard.
const DISMISS: &[u8] = b"dismissed\n";

/// The parent's side: the guard process and the pipe whose end tells it the parent is gone.
/// Dropping it dismisses the guard; keep it alive until every target is torn down.
#[derive(Debug)]
pub struct Guard {
    child: Child,
    pipe: Option<ChildStdin>,
}

impl Guard {
    /// Starts `command` — a program that runs [`watch`] on its standard input for this process's
    /// state files — in a session of its own (a launcher or a terminal signalling this
    /// process's group does not reach it), in `/` (it keeps no mount busy).
    pub fn start(mut command: Command) -> std::io::Result<Guard> {
        use std::os::unix::process::CommandExt;
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .current_dir("/");
        // SAFETY: setsid is async-signal-safe and touches nothing of the parent's.
        unsafe {
            command.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let mut child = command.spawn()?;
        // The parent's end is close-on-exec (std's pipes are): the targets' mkfs and mount
        // never hold it, so it closes exactly when this process ends.
        let pipe = child.stdin.take();
        Ok(Guard { child, pipe })
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(mut pipe) = self.pipe.take() {
            let _ = pipe.write_all(DISMISS);
        }
        let _ = self.child.wait();
    }
}

/// The guard's side: waits until its parent `pid` dismisses it (None) or dies — `input` ends
/// without the word — then, once the parent is gone (a zombie holds nothing), undoes what the
/// parent's state files in `work_dir` still list, as `fsbench cleanup` would.
pub fn watch(
    sys: &dyn System,
    input: &mut dyn Read,
    work_dir: &Path,
    pid: u32,
) -> Option<CleanupReport> {
    let mut said = Vec::new();
    let _ = input.read_to_end(&mut said);
    if said.starts_with(DISMISS) {
        return None;
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while ledger::running(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(undo::cleanup_of(sys, work_dir, pid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::RecordingSystem;

    /// A state file of a process that is gone (a child that has exited and been reaped).
    fn gone_pid() -> u32 {
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn a_dismissed_guard_touches_nothing_and_a_bereaved_one_undoes_its_parents_ledger() {
        let work = tempfile::tempdir().unwrap();
        let state_dir = crate::target::state_dir(work.path());
        std::fs::create_dir(&state_dir).unwrap();
        let pid = gone_pid();
        let state = format!(
            r#"{{"pid":{pid},"resources":[{{"kind":"dir","path":"{}"}}]}}"#,
            work.path().join("mnt-ext4-1-0").display()
        );
        std::fs::write(state_dir.join("ext4-1-0.json"), &state).unwrap();
        // Another process's state file is not the guard's business.
        let other = format!(r#"{{"pid":{},"resources":[]}}"#, pid + 1_000_000);
        std::fs::write(state_dir.join("xfs-2-0.json"), &other).unwrap();
        std::fs::create_dir(work.path().join("mnt-ext4-1-0")).unwrap();
        let sys = RecordingSystem::new();

        let mut dismissed: &[u8] = DISMISS;
        assert!(watch(&sys, &mut dismissed, work.path(), pid).is_none());
        assert!(state_dir.join("ext4-1-0.json").exists());

        // Another process holds its own file locked (its cleanup is undoing it), and a file
        // that is not a state file lies beside: the guard neither waits on the one nor reports
        // the other.
        let locked = std::fs::File::open(state_dir.join("xfs-2-0.json")).unwrap();
        // SAFETY: flock on a descriptor this test owns.
        let held = unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&locked), libc::LOCK_EX) };
        assert_eq!(held, 0);
        std::fs::write(state_dir.join("broken.json"), "{").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let work_dir = work.path().to_path_buf();
        std::thread::spawn(move || {
            let mut died: &[u8] = b"";
            let _ = tx.send(watch(&RecordingSystem::new(), &mut died, &work_dir, pid));
        });
        let report = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the guard waited on another process's locked state file")
            .unwrap();
        drop(locked);
        assert_eq!(report.failed, Vec::<String>::new());
        assert!(!state_dir.join("ext4-1-0.json").exists(), "{report:?}");
        assert!(state_dir.join("xfs-2-0.json").exists());
    }
}
