//! Timing a task as `time` does: real (wall) time, and user and system CPU time including the
//! children's. A tool runs as a child and its own rusage comes from wait4(2), which includes
//! every descendant it waited for (tar's bzip2, make's gcc); a native task runs in this
//! process and its CPU is the getrusage(RUSAGE_SELF) difference.

use crate::StopFlag;
use std::io::{self, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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
    let started = Instant::now();
    let mut child = command.spawn()?;
    let pid = child.id() as libc::pid_t;
    let stderr = child.stderr.take().map(|mut pipe| {
        std::thread::spawn(move || {
            let mut tail = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > STDERR_KEPT {
                    tail.drain(..tail.len() - STDERR_KEPT);
                }
            }
            String::from_utf8_lossy(&tail).into_owned()
        })
    });
    // A watcher stops the group on request; the wait below blocks, so the real time is exact.
    let done = Arc::new(AtomicBool::new(false));
    let stopped = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (done, stopped, stop) = (done.clone(), stopped.clone(), stop.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Acquire) {
                if stop.is_requested() {
                    stopped.store(true, Ordering::Release);
                    // SAFETY: signalling the process group this function made.
                    unsafe { libc::kill(-pid, libc::SIGTERM) };
                    return;
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
    let tail = stderr.and_then(|t| t.join().ok()).unwrap_or_default();
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
    }

    #[test]
    fn a_stop_request_ends_the_tool_and_its_children() {
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
        let end = shell("sleep 30 & sleep 30; wait", dir.path(), &[], &stop).unwrap();
        requester.join().unwrap();
        assert!(matches!(end, ToolEnd::Stopped), "{end:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
