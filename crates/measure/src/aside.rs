//! Helper threads that stand aside from the descriptor table, so the thread that times system
//! calls pays nothing for them.
//!
//! Every `read`, `write`, `pread`, `pwrite` ... looks its descriptor up in the calling thread's
//! descriptor table. While that table is the calling thread's alone the kernel borrows the file;
//! while other threads share it, each call takes a reference on the file and drops it again (two
//! atomic operations on a shared cache line, `fdget`/`fput`). A bare C loop of 4 KiB `pwrite`s
//! on tmpfs ran at 0.92 to 1.00 of itself (four runs) with a sleeping thread beside it
//! (bench/README.md, "The price of a second thread"): a harness cost that decides a per-call
//! benchmark. fio's jobs are
//! processes of their own; fsbench's workloads run in threads of one process beside its helper
//! threads (the sampler of the phase's series, the host monitor, the run's watchdog), so each of
//! those helpers is started by [`spawn_helper`] (or [`spawn_scoped_helper`]): before its work it
//! calls [`leave_descriptor_table`], taking a table of its own holding only standard input,
//! output and error, and the spawner goes on only once it has; the workload's table is then
//! its own again.
//!
//! What a helper may do after: use descriptors 0-2 (a campaign child's events go to standard
//! output) and files it opens itself; never a descriptor another thread opened (its number
//! means nothing in the helper's table), and never hand one of its own to another thread.

use std::io;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::{JoinHandle, Scope, ScopedJoinHandle};

/// `close_range` flag: give the calling thread a copy of the table first, and close in the copy.
const CLOSE_RANGE_UNSHARE: libc::c_uint = 1 << 1;

/// Gives the calling thread a descriptor table of its own, holding only descriptors 0, 1 and 2
/// of the process's (the others are closed in the copy, never in the process's table, so no
/// file, lock or mount is held longer by the copy). Called first thing in a helper thread: the
/// table it leaves is then shared by fewer threads, and the workload's thread, once the last
/// helper has left, looks its descriptors up without taking references.
///
/// An error (a kernel before 5.9 has no `close_range`) leaves the thread in the shared table:
/// nothing is wrong then, only the workload's calls cost what they did before.
pub fn leave_descriptor_table() -> io::Result<()> {
    // SAFETY: close_range touches only this thread's (new, private) table; descriptors 3 and up
    // are closed in the copy, which no other thread can reach.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            CLOSE_RANGE_UNSHARE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Starts a helper thread that leaves the descriptor table before it runs `f`, and returns once
/// it has: the workload that starts next already has its table alone.
pub fn spawn_helper<F, T>(builder: std::thread::Builder, f: F) -> io::Result<JoinHandle<T>>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let (left, has_left) = sync_channel(1);
    let handle = builder.spawn(leaving_first(left, f))?;
    let _ = has_left.recv();
    Ok(handle)
}

/// As [`spawn_helper`], in a scope (panics when the thread cannot be started, as
/// `Scope::spawn` does).
pub fn spawn_scoped_helper<'scope, F, T>(
    scope: &'scope Scope<'scope, '_>,
    f: F,
) -> ScopedJoinHandle<'scope, T>
where
    F: FnOnce() -> T + Send + 'scope,
    T: Send + 'scope,
{
    let (left, has_left) = sync_channel(1);
    let handle = scope.spawn(leaving_first(left, f));
    let _ = has_left.recv();
    handle
}

/// A helper's body: it leaves the descriptor table, says so on `left`, then runs `f`.
fn leaving_first<T>(left: SyncSender<()>, f: impl FnOnce() -> T) -> impl FnOnce() -> T {
    move || {
        let _ = leave_descriptor_table();
        let _ = left.send(());
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// kcmp(2) KCMP_FILES: 0 when two threads share one descriptor table.
    fn same_table(a: libc::pid_t, b: libc::pid_t) -> bool {
        // SAFETY: kcmp only compares the two tasks' kernel objects.
        let rc = unsafe { libc::syscall(libc::SYS_kcmp, a, b, 2, 0, 0) };
        assert!(rc >= 0, "kcmp: {}", io::Error::last_os_error());
        rc == 0
    }

    fn gettid() -> libc::pid_t {
        // SAFETY: no arguments, no preconditions.
        unsafe { libc::gettid() }
    }

    /// A helper that left the table shares it no more (the workload's thread has it alone
    /// again), holds none of the process's descriptors above 2 (a pipe's write end it had when
    /// it started does not keep the reader from its end of file), and can still write to
    /// standard error and open files of its own.
    #[test]
    fn a_helper_that_leaves_holds_nothing_of_the_workloads_and_shares_no_table() {
        let mut fds = [0; 2];
        // SAFETY: a valid array of two descriptors.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: both descriptors are new and ours.
        let (read_end, write_end) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let main = gettid();
        let (tell, told) = std::sync::mpsc::channel();
        let (finish, finished) = std::sync::mpsc::channel::<()>();
        let helper = std::thread::spawn(move || {
            let before = same_table(main, gettid());
            leave_descriptor_table().unwrap();
            let after = same_table(main, gettid());
            let own = std::fs::File::open("/proc/self/status").is_ok();
            // SAFETY: fcntl on a descriptor number; EBADF when this table does not have it.
            let has_write_end = unsafe { libc::fcntl(fds[1], libc::F_GETFD) } >= 0;
            // SAFETY: writing a buffer of ours to standard error.
            let stderr = unsafe { libc::write(2, b"".as_ptr().cast(), 0) } == 0;
            tell.send((gettid(), before, after, own, has_write_end, stderr))
                .unwrap();
            // Still alive while the main thread reads to the end of the pipe.
            let _ = finished.recv();
        });
        let (tid, before, after, own, has_write_end, stderr) = told.recv().unwrap();
        assert!(before, "a new thread shares the process's table");
        assert!(!after, "the helper still shares the table");
        assert!(!same_table(main, tid));
        assert!(
            !has_write_end,
            "the helper's table kept a descriptor above 2"
        );
        assert!(own && stderr);
        // The only write end is the main thread's: closing it ends the reader's file, while
        // the helper still runs.
        drop(write_end);
        let mut reader = std::fs::File::from(read_end);
        let mut rest = Vec::new();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done_tx.send(reader.read_to_end(&mut rest).map(|_| rest.len()));
        });
        let read = done_rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the helper's table held the pipe's write end open");
        assert_eq!(read.unwrap(), 0);
        finish.send(()).unwrap();
        helper.join().unwrap();
    }

    /// The descriptor the workload opened after a helper left is the workload's alone.
    #[test]
    fn a_file_opened_after_the_helper_left_is_not_in_its_table() {
        let (tell, told) = std::sync::mpsc::channel();
        let (go, went) = std::sync::mpsc::channel::<i32>();
        let helper = std::thread::spawn(move || {
            leave_descriptor_table().unwrap();
            tell.send(()).unwrap();
            let fd = went.recv().unwrap();
            // SAFETY: fcntl on a descriptor number; EBADF when this table does not have it.
            unsafe { libc::fcntl(fd, libc::F_GETFD) < 0 }
        });
        told.recv().unwrap();
        let file = std::fs::File::open("/proc/self/status").unwrap();
        go.send(file.as_raw_fd()).unwrap();
        assert!(
            helper.join().unwrap(),
            "the helper's table has the workload's new file"
        );
    }
}
