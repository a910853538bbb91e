//! One recorded call: which process and thread made it, when, how long it took, what it returned,
//! and the operation with its arguments. Paths are relative to the recorded root
//! ([`crate::path`]); descriptors are the numbers the application saw, per process.

use serde::{Deserialize, Serialize};

/// One call of the recorded application, in the order the calls began.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// The process (thread group) that made the call, as the recorded host numbered it.
    pub pid: u32,
    /// The thread that made the call.
    pub tid: u32,
    /// When the call began, in nanoseconds since the recording began.
    pub start_ns: u64,
    /// How long the call took, in nanoseconds.
    pub dur_ns: u64,
    /// Nanoseconds the thread spent waiting for I/O outside the recorded calls since its
    /// previous event, in page faults of the files it mapped from inside the root: part of the
    /// gap before this call that is the recording filesystem's, not the application's
    /// thinking (the replay takes those faults itself). Waits for pages of files outside the
    /// root (programs, libraries) are not counted: the replay cannot take them, so they stay
    /// think time. 0, and not written, when none (or in traces of recorders that do not
    /// measure it; traces of fsbench before 2026-11-28 counted every wait for I/O outside
    /// the calls, programs' page faults and waits with no fault before them too).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blocked_ns: u64,
    /// Nanoseconds the recorder's own probes took on the thread since its previous event
    /// (sending that call up, reading this call's arguments before its timestamp): part of
    /// the gap before this call that the application did not spend, as the recorder measured
    /// it. 0, and not written, when none (or in traces of recorders that do not measure it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recorder_ns: u64,
    /// The thread of a recorded process that last woke this one (a pipe it wrote, a child
    /// that exited, a lock it released) since this thread's previous event, and when: what
    /// the gap before this call waited for. Absent when none was seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub woken: Option<Woken>,
    /// What the call returned: a count, a descriptor or 0; a failed call `-errno`.
    pub ret: i64,
    /// The operation and its arguments.
    #[serde(flatten)]
    pub op: Op,
}

/// Which thread woke another, and when (ns since the recording began).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Woken {
    pub tid: u32,
    pub at_ns: u64,
}

/// A recorded operation. `fd` is the descriptor number in the recorded process; `path`, `from`
/// and `to` are relative to the recorded root ("." is the root itself), resolved against the
/// process's working directory and `*at` directory descriptors at recording time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// open, openat, openat2, creat (as `O_CREAT|O_WRONLY|O_TRUNC`). Returns the descriptor.
    Open { path: String, flags: i32, mode: u32 },
    /// close.
    Close { fd: i32 },
    /// dup, dup2, dup3, fcntl(F_DUPFD*): `new_fd` is the descriptor returned.
    Dup { fd: i32, new_fd: i32 },
    /// read. `len` is the count asked for; `ret` the bytes read.
    Read { fd: i32, len: u64 },
    /// pread64.
    Pread { fd: i32, len: u64, off: u64 },
    /// readv (`len`: the bytes asked for, the sum of the vector when known, else `ret`).
    Readv { fd: i32, len: u64 },
    /// preadv, preadv2.
    Preadv { fd: i32, len: u64, off: u64 },
    /// write.
    Write { fd: i32, len: u64 },
    /// pwrite64.
    Pwrite { fd: i32, len: u64, off: u64 },
    /// writev.
    Writev { fd: i32, len: u64 },
    /// pwritev, pwritev2.
    Pwritev { fd: i32, len: u64, off: u64 },
    /// lseek. Returns the new offset.
    Lseek { fd: i32, off: i64, whence: i32 },
    /// fsync.
    Fsync { fd: i32 },
    /// fdatasync.
    Fdatasync { fd: i32 },
    /// sync_file_range.
    SyncFileRange {
        fd: i32,
        off: u64,
        len: u64,
        flags: u32,
    },
    /// syncfs.
    Syncfs { fd: i32 },
    /// sync.
    Sync,
    /// ftruncate.
    Ftruncate { fd: i32, len: u64 },
    /// truncate.
    Truncate { path: String, len: u64 },
    /// fallocate.
    Fallocate {
        fd: i32,
        mode: i32,
        off: u64,
        len: u64,
    },
    /// stat, lstat, newfstatat, statx with a path (`follow`: false for lstat and
    /// `AT_SYMLINK_NOFOLLOW`).
    Stat { path: String, follow: bool },
    /// fstat, and statx/newfstatat of a descriptor (`AT_EMPTY_PATH`).
    Fstat { fd: i32 },
    /// access, faccessat, faccessat2.
    Access { path: String, mode: i32 },
    /// getdents64 (and getdents). `len` is the buffer; `ret` the bytes of entries returned.
    Getdents { fd: i32, len: u64 },
    /// mkdir, mkdirat.
    Mkdir { path: String, mode: u32 },
    /// rmdir, unlinkat(AT_REMOVEDIR).
    Rmdir { path: String },
    /// unlink, unlinkat.
    Unlink { path: String },
    /// rename, renameat, renameat2 (`flags`: RENAME_NOREPLACE, RENAME_EXCHANGE …).
    Rename {
        from: String,
        to: String,
        flags: u32,
    },
    /// link, linkat.
    Link { from: String, to: String },
    /// symlink, symlinkat: `target` is the link's contents, as given (never resolved).
    Symlink { target: String, path: String },
    /// readlink, readlinkat.
    Readlink { path: String },
    /// chmod, fchmodat.
    Chmod { path: String, mode: u32 },
    /// fchmod.
    Fchmod { fd: i32, mode: u32 },
    /// chown, lchown (`follow` false), fchownat: the owner and group asked for, `u32::MAX`
    /// for "unchanged" (-1 in the call). Since trace format version 2.
    Chown {
        path: String,
        uid: u32,
        gid: u32,
        follow: bool,
    },
    /// fchown, fchownat of a descriptor (`AT_EMPTY_PATH`). Since trace format version 2.
    Fchown { fd: i32, uid: u32, gid: u32 },
    /// utime, utimes, utimensat, futimesat with a path.
    Utimes { path: String },
    /// futimens (utimensat of a descriptor).
    Futimes { fd: i32 },
    /// mmap of a file descriptor (anonymous mappings are not recorded).
    Mmap {
        fd: i32,
        len: u64,
        off: u64,
        prot: i32,
        flags: i32,
    },
    /// msync of a range that a recorded file mapping covers (`fd`: the mapping's descriptor).
    Msync { fd: i32, len: u64, flags: i32 },
    /// The process forked: `child` is the new process, which starts with a copy of this one's
    /// descriptors. (Threads are not forks: they share the process's descriptors.)
    Fork { child: u32 },
    /// The process executed a program: its close-on-exec descriptors are closed.
    Exec,
}

impl Op {
    /// The operation's name, as the trace format and the reports spell it.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Open { .. } => "open",
            Op::Close { .. } => "close",
            Op::Dup { .. } => "dup",
            Op::Read { .. } => "read",
            Op::Pread { .. } => "pread",
            Op::Readv { .. } => "readv",
            Op::Preadv { .. } => "preadv",
            Op::Write { .. } => "write",
            Op::Pwrite { .. } => "pwrite",
            Op::Writev { .. } => "writev",
            Op::Pwritev { .. } => "pwritev",
            Op::Lseek { .. } => "lseek",
            Op::Fsync { .. } => "fsync",
            Op::Fdatasync { .. } => "fdatasync",
            Op::SyncFileRange { .. } => "sync_file_range",
            Op::Syncfs { .. } => "syncfs",
            Op::Sync => "sync",
            Op::Ftruncate { .. } => "ftruncate",
            Op::Truncate { .. } => "truncate",
            Op::Fallocate { .. } => "fallocate",
            Op::Stat { .. } => "stat",
            Op::Fstat { .. } => "fstat",
            Op::Access { .. } => "access",
            Op::Getdents { .. } => "getdents",
            Op::Mkdir { .. } => "mkdir",
            Op::Rmdir { .. } => "rmdir",
            Op::Unlink { .. } => "unlink",
            Op::Rename { .. } => "rename",
            Op::Link { .. } => "link",
            Op::Symlink { .. } => "symlink",
            Op::Readlink { .. } => "readlink",
            Op::Chmod { .. } => "chmod",
            Op::Fchmod { .. } => "fchmod",
            Op::Chown { .. } => "chown",
            Op::Fchown { .. } => "fchown",
            Op::Utimes { .. } => "utimes",
            Op::Futimes { .. } => "futimes",
            Op::Mmap { .. } => "mmap",
            Op::Msync { .. } => "msync",
            Op::Fork { .. } => "fork",
            Op::Exec => "exec",
        }
    }

    /// The descriptor the operation acts on, if it acts on one.
    pub fn fd(&self) -> Option<i32> {
        match *self {
            Op::Close { fd }
            | Op::Dup { fd, .. }
            | Op::Read { fd, .. }
            | Op::Pread { fd, .. }
            | Op::Readv { fd, .. }
            | Op::Preadv { fd, .. }
            | Op::Write { fd, .. }
            | Op::Pwrite { fd, .. }
            | Op::Writev { fd, .. }
            | Op::Pwritev { fd, .. }
            | Op::Lseek { fd, .. }
            | Op::Fsync { fd }
            | Op::Fdatasync { fd }
            | Op::SyncFileRange { fd, .. }
            | Op::Syncfs { fd }
            | Op::Ftruncate { fd, .. }
            | Op::Fallocate { fd, .. }
            | Op::Fstat { fd }
            | Op::Getdents { fd, .. }
            | Op::Fchmod { fd, .. }
            | Op::Fchown { fd, .. }
            | Op::Futimes { fd }
            | Op::Mmap { fd, .. }
            | Op::Msync { fd, .. } => Some(fd),
            _ => None,
        }
    }

    /// The root-relative paths the operation names (one or two), in argument order.
    pub fn paths(&self) -> Vec<&str> {
        match self {
            Op::Open { path, .. }
            | Op::Truncate { path, .. }
            | Op::Stat { path, .. }
            | Op::Access { path, .. }
            | Op::Mkdir { path, .. }
            | Op::Rmdir { path }
            | Op::Unlink { path }
            | Op::Symlink { path, .. }
            | Op::Readlink { path }
            | Op::Chmod { path, .. }
            | Op::Chown { path, .. }
            | Op::Utimes { path } => vec![path.as_str()],
            Op::Rename { from, to, .. } | Op::Link { from, to } => vec![from.as_str(), to.as_str()],
            _ => Vec::new(),
        }
    }

    /// Bytes the operation moves from the file (reads) and to it (writes), given its return.
    pub fn bytes(&self, ret: i64) -> (u64, u64) {
        let moved = ret.max(0) as u64;
        match self {
            Op::Read { .. } | Op::Pread { .. } | Op::Readv { .. } | Op::Preadv { .. } => (moved, 0),
            Op::Write { .. } | Op::Pwrite { .. } | Op::Writev { .. } | Op::Pwritev { .. } => {
                (0, moved)
            }
            _ => (0, 0),
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
