//! The recorded command, started so that its first call is already traced: forked, it waits on
//! a pipe until the recorder has added its pid to the traced set, then executes the command.
//! (`std::process::Command` cannot do this: its spawn returns only after the exec.) It executes
//! only when the recorder says so (a byte on the pipe): a recorder that fails or dies before
//! that leaves it to end without running the command, and it dies with the recorder.

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;

pub struct Child {
    pub pid: u32,
    /// The pipe's write end: a byte written lets the child go on; closed without one, the child
    /// ends without executing the command. -1 once released.
    go: libc::c_int,
    /// The read end of a close-on-exec pipe: end of file when the exec succeeded, else the
    /// child's errno (4 bytes) when it could not execute the command.
    exec_errno: libc::c_int,
}

impl Child {
    pub fn fork(argv: &[OsString]) -> io::Result<Child> {
        if argv.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no command given",
            ));
        }
        let args: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "an argument holds a NUL byte")
            })?;
        let mut ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let message = format!(
            "fsbench record: cannot execute {}\n",
            argv[0].to_string_lossy()
        );
        let mut fds = [0; 2];
        // SAFETY: a valid array of two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let [wait, go] = fds;
        let mut report = [0; 2];
        // SAFETY: a valid array of two descriptors.
        if unsafe { libc::pipe2(report.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            let e = io::Error::last_os_error();
            unsafe {
                libc::close(wait);
                libc::close(go);
            }
            return Err(e);
        }
        let [exec_errno, report_errno] = report;
        // SAFETY: getpid has no memory effects.
        let recorder = unsafe { libc::getpid() };
        // SAFETY: the child calls only async-signal-safe functions (close, prctl, getppid,
        // read, execvp, write, _exit) on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let e = io::Error::last_os_error();
            unsafe {
                libc::close(wait);
                libc::close(go);
                libc::close(exec_errno);
                libc::close(report_errno);
            }
            return Err(e);
        }
        if pid == 0 {
            unsafe {
                libc::close(go);
                // Killed with the recorder (the thread that forked it) if that dies first: a
                // command nobody records, and nobody waits for, is not left running. (Its own
                // children are not: they are the command's to end.)
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
                if libc::getppid() != recorder {
                    libc::_exit(127);
                }
                let mut byte = 0u8;
                let n = loop {
                    let n = libc::read(wait, (&mut byte as *mut u8).cast(), 1);
                    if n >= 0 || *libc::__errno_location() != libc::EINTR {
                        break n;
                    }
                };
                if n != 1 {
                    // The recorder closed the pipe without a go: not traced, not run.
                    libc::_exit(127);
                }
                libc::execvp(ptrs[0], ptrs.as_ptr());
                let errno = *libc::__errno_location();
                libc::write(report_errno, (&errno as *const i32).cast(), 4);
                libc::write(2, message.as_ptr().cast(), message.len());
                libc::_exit(127);
            }
        }
        // SAFETY: the read end and the report's write end belong to the child now.
        unsafe {
            libc::close(wait);
            libc::close(report_errno);
        }
        Ok(Child {
            pid: pid as u32,
            go,
            exec_errno,
        })
    }

    /// Lets the child execute its command; the error when it could not (the child has then
    /// ended, and been waited for).
    pub fn release(&mut self) -> io::Result<()> {
        // SAFETY: our descriptor, written once and closed once (-1 after).
        unsafe {
            let go = 1u8;
            while libc::write(self.go, (&go as *const u8).cast(), 1) < 0
                && *libc::__errno_location() == libc::EINTR
            {}
            libc::close(self.go);
        }
        self.go = -1;
        let mut errno = 0i32;
        let n = loop {
            // SAFETY: our descriptor; 4 bytes into an i32.
            let n = unsafe { libc::read(self.exec_errno, (&mut errno as *mut i32).cast(), 4) };
            if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break n;
            }
        };
        // SAFETY: our descriptor, closed once.
        unsafe { libc::close(self.exec_errno) };
        if n == 4 {
            let mut status = 0;
            // SAFETY: our child; a valid status pointer.
            unsafe { libc::waitpid(self.pid as i32, &mut status, 0) };
            return Err(io::Error::from_raw_os_error(errno));
        }
        Ok(())
    }

    /// Asks the child to end (SIGTERM).
    pub fn terminate(&self) {
        // SAFETY: our child, not yet waited for.
        unsafe { libc::kill(self.pid as i32, libc::SIGTERM) };
    }

    /// The exit code once the child has ended (128 + signal when killed); `None` while it runs.
    pub fn try_wait(&self) -> Option<i32> {
        let mut status = 0;
        // SAFETY: our child; a valid status pointer.
        let rc = unsafe { libc::waitpid(self.pid as i32, &mut status, libc::WNOHANG) };
        if rc == 0 {
            return None;
        }
        if rc < 0 {
            return Some(1);
        }
        if libc::WIFEXITED(status) {
            Some(libc::WEXITSTATUS(status))
        } else if libc::WIFSIGNALED(status) {
            Some(128 + libc::WTERMSIG(status))
        } else {
            None
        }
    }
}

impl Drop for Child {
    /// Never released (the recorder failed before it traced the child): the child is told to
    /// end without running the command, and is waited for.
    fn drop(&mut self) {
        if self.go < 0 {
            return;
        }
        // SAFETY: our descriptors, closed once; our child, waited for once.
        unsafe {
            libc::close(self.go);
            libc::close(self.exec_errno);
            let mut status = 0;
            while libc::waitpid(self.pid as i32, &mut status, 0) < 0
                && *libc::__errno_location() == libc::EINTR
            {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child the recorder drops without releasing it (it could not trace it) never runs the
    /// command, and is waited for: before, it waited until fsbench exited and then ran the
    /// command unrecorded.
    #[test]
    fn a_child_never_released_never_runs_the_command_and_is_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let witness = dir.path().join("ran");
        let argv: Vec<OsString> = vec!["touch".into(), witness.clone().into()];
        let child = Child::fork(&argv).unwrap();
        let pid = child.pid;
        drop(child);
        // SAFETY: signal 0 only asks whether the process exists.
        let alive = unsafe { libc::kill(pid as i32, 0) } == 0;
        assert!(!alive, "the child was waited for");
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(!witness.exists(), "the command never ran");
    }

    /// Released, the child runs the command.
    #[test]
    fn a_released_child_runs_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let witness = dir.path().join("ran");
        let argv: Vec<OsString> = vec!["touch".into(), witness.clone().into()];
        let mut child = Child::fork(&argv).unwrap();
        child.release().unwrap();
        let code = loop {
            if let Some(code) = child.try_wait() {
                break code;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        assert_eq!(code, 0);
        assert!(witness.exists());
    }
}
