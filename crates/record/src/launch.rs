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
        // SAFETY: the child calls only async-signal-safe functions (close, read, execvp, write,
        // _exit) on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let e = io::Error::last_os_error();
            unsafe {
                libc::close(wait);
                libc::close(go);
            }
            return Err(e);
        }
        if pid == 0 {
            unsafe {
                libc::close(go);
                let mut byte = 0u8;
                while libc::read(wait, (&mut byte as *mut u8).cast(), 1) < 0 {}
                libc::execvp(ptrs[0], ptrs.as_ptr());
                libc::write(2, message.as_ptr().cast(), message.len());
                libc::_exit(127);
            }
        }
        // SAFETY: the read end belongs to the child now.
        unsafe { libc::close(wait) };
        Ok(Child {
            pid: pid as u32,
            go,
        })
    }

    /// Lets the child execute its command.
    pub fn release(&self) {
        // SAFETY: our descriptor, closed once (ends the child's read with 0 bytes).
        unsafe { libc::close(self.go) };
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
