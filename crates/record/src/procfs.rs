//! What /proc says of a process when its recording begins: its working directory, its open
//! descriptors (path and close-on-exec), its children, whether it still lives.

use std::path::{Path, PathBuf};

use crate::resolve::Process;

/// The process as /proc shows it now; `None` when it is gone.
pub fn process(root: &Path, pid: u32) -> Option<Process> {
    let base = PathBuf::from(format!("/proc/{pid}"));
    let cwd = std::fs::read_link(base.join("cwd")).ok();
    let mut fds = Vec::new();
    for entry in std::fs::read_dir(base.join("fd")).ok()?.flatten() {
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let target = std::fs::read_link(entry.path()).ok();
        // pipe:[…], socket:[…], anon_inode:… and deleted files name no path in the root.
        let path =
            target.filter(|t| t.is_absolute() && !t.to_string_lossy().ends_with(" (deleted)"));
        let cloexec = std::fs::read_to_string(base.join("fdinfo").join(fd.to_string()))
            .ok()
            .and_then(|info| {
                info.lines()
                    .find_map(|l| l.strip_prefix("flags:"))
                    .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
            })
            .is_some_and(|flags| flags & libc::O_CLOEXEC as u32 != 0);
        fds.push((fd, path, cloexec));
    }
    Some(Process::new(root, cwd, fds))
}

/// Whether the process still runs (a zombie counts as ended).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Whether this id is a process (a thread group's leader), not another thread of one.
pub fn is_process(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| {
        status
            .lines()
            .find_map(|l| l.strip_prefix("Tgid:"))
            .and_then(|t| t.trim().parse::<u32>().ok())
            == Some(pid)
    })
}

pub use fsbench_measure::procs::descendants;

/// The process's command line.
pub fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// A pidfd of the process — readable once it has ended, so that the recorder sees its end at
/// once rather than at its next poll; `None` where the kernel has none (before Linux 5.3) or
/// the process is gone.
pub fn pidfd(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let pid = libc::pid_t::try_from(pid).ok()?;
    // SAFETY: a plain system call with no pointer arguments.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: a new descriptor, owned by nothing else.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as libc::c_int) })
}
