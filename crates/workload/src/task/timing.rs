//! Timing a task as `time` does: real (wall) time, and user and system CPU time including the
//! children's. A tool runs as a child and its own rusage comes from wait4(2), which includes
//! every descendant it waited for (tar's bzip2, make's gcc); a native task runs in this
//! process and its CPU is the getrusage(RUSAGE_SELF) difference.
//!
//! A tool runs in a process group of its own, and in its sample's cgroup: a campaign's worker
//! is in it already and the tool inherits it; a workload command names it with
//! [`put_tools_in`]. What the group still holds when the tool ends is killed; what left the
//! group is ended with the sample's cgroup (`fsbench_testbed::cgroup`).

use crate::StopFlag;
use std::io::{self, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Real, user and system time of one timed part, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Times {
    pub real_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
}

impl std::ops::Add for Times {
    type Output = Times;
    fn add(self, o: Times) -> Times {
        Times {
            real_ns: self.real_ns + o.real_ns,
            user_ns: self.user_ns + o.user_ns,
            sys_ns: self.sys_ns + o.sys_ns,
        }
    }
}

fn tv_ns(tv: libc::timeval) -> u64 {
    tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000
}

fn self_cpu() -> (u64, u64) {
    // SAFETY: plain data, filled by getrusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    (tv_ns(ru.ru_utime), tv_ns(ru.ru_stime))
}

/// Times `work` in this process.
pub fn native<T>(work: impl FnOnce() -> T) -> (T, Times) {
    let (u0, s0) = self_cpu();
    let started = Instant::now();
    let out = work();
    let real_ns = started.elapsed().as_nanos() as u64;
    let (u1, s1) = self_cpu();
    (
        out,
        Times {
            real_ns,
            user_ns: u1.saturating_sub(u0),
            sys_ns: s1.saturating_sub(s0),
        },
    )
}

/// How a tool run ended.
#[derive(Debug)]
pub enum ToolEnd {
    /// Exit status 0.
    Ok(Times),
    /// Another exit status or a signal; the last lines of its standard error.
    Failed {
        status: String,
        stderr: String,
        times: Times,
    },
    /// Stopped by a stop request (its process group was sent SIGTERM).
    Stopped,
}

/// Bytes of a tool's standard error kept for the reason it failed.
const STDERR_KEPT: usize = 2048;

/// How long the end of a tool waits for the rest of its standard error: a process it left
/// outside its group may hold the pipe open until the sample ends.
const STDERR_WAIT: Duration = Duration::from_millis(500);

/// How long a stopped tool has to end after SIGTERM before its group is killed: a stop must
/// end even a tool that ignores SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// The `cgroup.procs` files every tool writes itself into as it starts, before it runs
/// anything (empty: it stays in this process's cgroup).
static TOOL_CGROUP: Mutex<Vec<std::ffi::CString>> = Mutex::new(Vec::new());

/// Every tool started from now on joins the cgroup whose `cgroup.procs` files are `procs` (a
/// workload command's sample's cgroup: the command itself stays out of it, so that ending the
/// cgroup ends the tools and not the command); empty: they stay in this process's cgroup.
pub fn put_tools_in(procs: &[std::path::PathBuf]) {
    use std::os::unix::ffi::OsStrExt;
    let files = procs
        .iter()
        .filter_map(|p| std::ffi::CString::new(p.as_os_str().as_bytes()).ok())
        .collect();
    *TOOL_CGROUP.lock().unwrap_or_else(|e| e.into_inner()) = files;
}

/// Runs `program args` in `cwd` (standard output discarded, standard error kept for a
/// failure's reason) in its own process group, and times it; a stop request sends the group
/// SIGTERM. A program that cannot start is an error (the caller says which tool is missing).
pub fn tool(program: &str, args: &[&str], cwd: &Path, stop: &StopFlag) -> io::Result<ToolEnd> {
    let mut command = Command::new(program);
    command.args(args);
    run(command, cwd, stop)
}

/// Runs `script` with `sh -c` in `cwd` with `env` added to its environment, timed as [`tool`].
pub fn shell(
    script: &str,
    cwd: &Path,
    env: &[(&str, &std::ffi::OsStr)],
    stop: &StopFlag,
) -> io::Result<ToolEnd> {
    let mut command = Command::new("sh");
    command.arg("-c").arg(script);
    command.envs(env.iter().copied());
    run(command, cwd, stop)
}

fn run(mut command: Command, cwd: &Path, stop: &StopFlag) -> io::Result<ToolEnd> {
    use std::os::unix::process::CommandExt;
    command
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    let cgroup = TOOL_CGROUP
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    if !cgroup.is_empty() {
        // SAFETY: between fork and exec only open, write and close (async-signal-safe), on
        // buffers made before the fork.
        unsafe {
            command.pre_exec(move || {
                for file in &cgroup {
                    let fd = libc::open(file.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if fd < 0 {
                        return Err(io::Error::last_os_error());
                    }
                    let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                    libc::close(fd);
                    if written != 1 {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }
    let started = Instant::now();
    let mut child = command.spawn()?;
    let pid = child.id() as libc::pid_t;
    // The reader keeps the last bytes where this function can take them even while a process
    // the tool left (out of its group) still holds the pipe open: that one ends with the
    // sample, not with the tool.
    let tail = Arc::new(Mutex::new(Vec::new()));
    let (closed, stderr_closed) = std::sync::mpsc::channel::<()>();
    if let Some(mut pipe) = child.stderr.take() {
        let tail = tail.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > STDERR_KEPT {
                    let extra = tail.len() - STDERR_KEPT;
                    tail.drain(..extra);
                }
            }
            drop(closed);
        });
    }
    // A watcher stops the group on request (SIGTERM, then SIGKILL after a grace); the wait
    // below blocks, so the real time is exact.
    let done = Arc::new(AtomicBool::new(false));
    let stopped = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (done, stopped, stop) = (done.clone(), stopped.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut grace_ends = None;
            while !done.load(Ordering::Acquire) {
                match grace_ends {
                    None if stop.is_requested() => {
                        stopped.store(true, Ordering::Release);
                        // SAFETY: signalling the process group this function made.
                        unsafe { libc::kill(-pid, libc::SIGTERM) };
                        grace_ends = Some(Instant::now() + STOP_GRACE);
                    }
                    Some(end) if Instant::now() >= end => {
                        // SAFETY: as above; the tool has not been waited for yet.
                        unsafe { libc::kill(-pid, libc::SIGKILL) };
                        return;
                    }
                    _ => {}
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let mut status = 0;
    // SAFETY: plain data, filled by wait4.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = loop {
        // SAFETY: waiting for our own child with valid pointers.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if rc == -1 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        break rc;
    };
    let real_ns = started.elapsed().as_nanos() as u64;
    done.store(true, Ordering::Release);
    let _ = watcher.join();
    // What the tool left running in its group (a daemon it started) is not ours to keep.
    // SAFETY: signalling the process group this function made; ESRCH when it is empty.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    // Its last words, once no process of its group holds the pipe (or a moment).
    let _ = stderr_closed.recv_timeout(STDERR_WAIT);
    let tail =
        String::from_utf8_lossy(&tail.lock().unwrap_or_else(|e| e.into_inner())).into_owned();
    // The child was reaped by wait4: std must not wait for it again.
    std::mem::forget(child);
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    let times = Times {
        real_ns,
        user_ns: tv_ns(ru.ru_utime),
        sys_ns: tv_ns(ru.ru_stime),
    };
    if stopped.load(Ordering::Acquire) {
        return Ok(ToolEnd::Stopped);
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        return Ok(ToolEnd::Ok(times));
    }
    let status = if libc::WIFEXITED(status) {
        format!("exited with {}", libc::WEXITSTATUS(status))
    } else {
        format!("was killed by signal {}", libc::WTERMSIG(status))
    };
    let lines: Vec<&str> = tail
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    Ok(ToolEnd::Failed {
        status,
        stderr: lines[lines.len().saturating_sub(3)..].join(" / "),
        times,
    })
}

/// syncfs(2) on the filesystem of `dir`, timed: what the studies' `&& sync` cost, for the
/// filesystem under test alone.
pub fn sync(dir: &Path) -> io::Result<Times> {
    let fd = std::fs::File::open(dir)?;
    let (rc, times) = native(|| {
        use std::os::fd::AsRawFd;
        // SAFETY: fd is open.
        unsafe { libc::syncfs(fd.as_raw_fd()) }
    });
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_is_timed_with_its_children_and_failures_say_why() {
        let dir = tempfile::tempdir().unwrap();
        let stop = StopFlag::new();
        // A child that burns CPU in a grandchild: counted in user time.
        let end = shell(
            "sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'",
            dir.path(),
            &[],
            &stop,
        )
        .unwrap();
        let ToolEnd::Ok(times) = end else {
            panic!("{end:?}")
        };
        assert!(times.user_ns + times.sys_ns > 10_000_000, "{times:?}");
        assert!(times.real_ns >= times.user_ns / 2, "{times:?}");
        let end = shell("echo no such thing >&2; exit 3", dir.path(), &[], &stop).unwrap();
        match end {
            ToolEnd::Failed { status, stderr, .. } => {
                assert_eq!(status, "exited with 3");
                assert_eq!(stderr, "no such thing");
            }
            other => panic!("{other:?}"),
        }
        assert!(tool("no-such-program-fsbench", &[], dir.path(), &stop).is_err());
        // A process it leaves out of its group keeps its standard error open: the tool's end
        // does not wait for that one (it ends with the sample).
        let started = Instant::now();
        let end = shell(
            "echo its words >&2; setsid sleep 5 & exit 4",
            dir.path(),
            &[],
            &stop,
        )
        .unwrap();
        assert!(started.elapsed() < Duration::from_secs(2), "{end:?}");
        match end {
            ToolEnd::Failed { status, stderr, .. } => {
                assert_eq!(status, "exited with 4");
                assert_eq!(stderr, "its words");
            }
            other => panic!("{other:?}"),
        }
    }

    /// Runs `script` and asks it to stop after 200 ms; how it ended and how long it took.
    fn stopped(script: &str) -> (ToolEnd, Duration) {
        let dir = tempfile::tempdir().unwrap();
        let stop = StopFlag::new();
        let requester = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                stop.request();
            })
        };
        let started = Instant::now();
        let end = shell(script, dir.path(), &[], &stop).unwrap();
        requester.join().unwrap();
        (end, started.elapsed())
    }

    #[test]
    fn a_stop_request_ends_the_tool_and_its_children() {
        let (end, took) = stopped("sleep 30 & sleep 30; wait");
        assert!(matches!(end, ToolEnd::Stopped), "{end:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
        // One that ignores SIGTERM is killed after the grace.
        let (end, took) = stopped("trap '' TERM; sleep 30 & sleep 30; wait");
        assert!(matches!(end, ToolEnd::Stopped), "{end:?}");
        assert!(took >= STOP_GRACE && took < STOP_GRACE * 2, "{took:?}");
    }
}
