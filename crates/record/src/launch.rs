//! The recorded command, started so that its first call is already traced: forked, it waits on
//! a pipe until the recorder has added its pid to the traced set, then executes the command.
//! (`std::process::Command` cannot do this: its spawn returns only after the exec.)

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;

pub struct Child {
    pub pid: u32,
    /// The pipe's write end: closing it lets the child go on.
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
        // SAFETY: the child calls only async-signal-safe functions (close, read, execvp, write,
        // _exit) on memory prepared before the fork.
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
                let mut byte = 0u8;
                while libc::read(wait, (&mut byte as *mut u8).cast(), 1) < 0 {}
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
    pub fn release(&self) -> io::Result<()> {
        // SAFETY: our descriptor, closed once (ends the child's read with 0 bytes).
        unsafe { libc::close(self.go) };
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
