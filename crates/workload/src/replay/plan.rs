//! A trace turned, untimed, into what the replay's threads execute: every call resolved to
//! names (C strings made once), descriptor slots (a recorded process's descriptor, over its
//! life, is one slot of the replay's table: no map is looked up while replaying), mapping slots,
//! and its dependencies ([`super::deps`]). Everything a bad trace can be wrong in is found here,
//! before anything is touched: a path that escapes the root, a descriptor the trace never
//! opened, a name with a NUL.

use std::collections::HashMap;
use std::ffi::CString;

use fsbench_trace::{path, Event, Op, Trace};

use super::deps::{Dep, Resources};

/// The slot that is never open (a call the recording made on a descriptor it never had, which
/// failed with EBADF there, is issued on it and fails alike).
pub const BAD_SLOT: u32 = 0;
/// The mapping that never exists (an msync whose mapping the recording never made, which
/// failed there).
pub const NO_MAP: u32 = u32::MAX;

/// Every operation kind, in the trace format's names; a call's `kind` indexes it.
pub const KINDS: [&str; 41] = [
    "open",
    "close",
    "dup",
    "read",
    "pread",
    "readv",
    "preadv",
    "write",
    "pwrite",
    "writev",
    "pwritev",
    "lseek",
    "fsync",
    "fdatasync",
    "sync_file_range",
    "syncfs",
    "sync",
    "ftruncate",
    "truncate",
    "fallocate",
    "stat",
    "fstat",
    "access",
    "getdents",
    "mkdir",
    "rmdir",
    "unlink",
    "rename",
    "link",
    "symlink",
    "readlink",
    "chmod",
    "fchmod",
    "chown",
    "fchown",
    "utimes",
    "futimes",
    "mmap",
    "msync",
    "fork",
    "exec",
];

/// A root-relative name, made once: the whole path, and its directory and last component for
/// the calls that act on a name in a directory (`None`: the directory is the root).
#[derive(Debug)]
pub struct Name {
    pub full: CString,
    pub parent: Option<CString>,
    pub base: CString,
}

/// One call as the replay issues it: names are indexes into [`Plan::names`], descriptors
/// slots of the replay's table, mappings slots of its mappings.
#[derive(Debug, Clone, Copy)]
pub enum Act {
    Open {
        name: u32,
        flags: i32,
        mode: u32,
        slot: u32,
        /// A slot the call's descriptor number replaces in its process (closed first).
        replaces: Option<u32>,
    },
    Close {
        slot: u32,
    },
    Dup {
        from: u32,
        slot: u32,
        replaces: Option<u32>,
    },
    Read {
        slot: u32,
        len: u64,
        off: Option<u64>,
        vector: bool,
    },
    Write {
        slot: u32,
        len: u64,
        off: Option<u64>,
        vector: bool,
    },
    Lseek {
        slot: u32,
        off: i64,
        whence: i32,
    },
    Fsync {
        slot: u32,
    },
    Fdatasync {
        slot: u32,
    },
    SyncFileRange {
        slot: u32,
        off: u64,
        len: u64,
        flags: u32,
    },
    Syncfs {
        slot: u32,
    },
    Sync,
    Ftruncate {
        slot: u32,
        len: u64,
    },
    Truncate {
        name: u32,
        len: u64,
    },
    Fallocate {
        slot: u32,
        mode: i32,
        off: u64,
        len: u64,
    },
    Stat {
        name: u32,
        follow: bool,
    },
    Fstat {
        slot: u32,
    },
    Access {
        name: u32,
        mode: i32,
    },
    Getdents {
        slot: u32,
        len: u64,
    },
    Mkdir {
        name: u32,
        mode: u32,
    },
    Rmdir {
        name: u32,
    },
    Unlink {
        name: u32,
    },
    Rename {
        from: u32,
        to: u32,
        flags: u32,
    },
    Link {
        from: u32,
        to: u32,
    },
    Symlink {
        target: u32,
        name: u32,
    },
    Readlink {
        name: u32,
    },
    Chmod {
        name: u32,
        mode: u32,
    },
    Fchmod {
        slot: u32,
        mode: u32,
    },
    Chown {
        name: u32,
        uid: u32,
        gid: u32,
        follow: bool,
    },
    Fchown {
        slot: u32,
        uid: u32,
        gid: u32,
    },
    Utimes {
        name: u32,
    },
    Futimes {
        slot: u32,
    },
    Mmap {
        slot: u32,
        map: u32,
        len: u64,
        off: u64,
        prot: i32,
        flags: i32,
    },
    Msync {
        map: u32,
        len: u64,
        flags: i32,
    },
    /// The child's descriptors: `copies` indexes [`Plan::copies`] (parent slot, child slot).
    Fork {
        copies: (u32, u32),
    },
    /// The close-on-exec descriptors: `closes` indexes [`Plan::closes`].
    Exec {
        closes: (u32, u32),
    },
}

/// One call: what to issue, and what the recording saw.
#[derive(Debug, Clone, Copy)]
pub struct Call {
    pub act: Act,
    /// Index into [`KINDS`].
    pub kind: u8,
    pub start_ns: u64,
    /// How long the recorded call took.
    pub dur_ns: u64,
    /// The time in the recorded gap before this call that was not the application's
    /// thinking: the thread blocked on I/O outside its calls in faults of the files it mapped
    /// from inside the root (the replay takes its own, on the mapped files) and the
    /// recorder's own probes (`recorder_ns`).
    pub blocked_ns: u64,
    /// The wakeup that ended the recorded thread's wait before this call, if one was seen.
    pub wake: Option<Wake>,
    /// What the recorded call returned (`-errno` on failure).
    pub ret: i64,
    /// The calls of other threads it waits for: a range of [`Plan::deps`].
    pub deps: (u32, u32),
}

/// The shortest wait for another thread, from the thread's previous call to its wakeup, that
/// recorded timing follows as a wait for the waker (see [`Wake`]).
pub const MIN_WAKE_WAIT_NS: u64 = 1_000_000;

/// A wakeup the recording saw before a call: another thread (`dep`, its last call before the
/// wakeup) woke the calling thread at `at_ns` — a pipe written, a child ended, a lock
/// released. With recorded timing the call waits for the waker to get that far here, then for
/// the time that followed the wakeup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wake {
    pub dep: Dep,
    pub at_ns: u64,
}

/// One recorded thread: its calls in order.
#[derive(Debug)]
pub struct Thread {
    pub tid: u32,
    pub pid: u32,
    /// Index into [`Plan::procs`].
    pub proc: u32,
    /// Indexes into [`Plan::calls`], in recorded order.
    pub calls: Vec<u32>,
    /// The call its first call waits for even without the dependency rule: the fork that
    /// made its process, or its process's call that began last before it (the thread was
    /// made after it).
    pub after: Option<Dep>,
}

/// One recorded process: its threads, and the slots its descriptors live in (closed when its
/// last thread ends).
#[derive(Debug, Default)]
pub struct Proc {
    pub pid: u32,
    pub threads: u32,
    pub slots: Vec<u32>,
}

/// The whole replay, resolved.
#[derive(Debug, Default)]
pub struct Plan {
    pub calls: Vec<Call>,
    pub threads: Vec<Thread>,
    /// Threads in the order their first calls began: the order they are started in.
    pub launch: Vec<u32>,
    pub procs: Vec<Proc>,
    pub names: Vec<Name>,
    pub deps: Vec<Dep>,
    pub copies: Vec<(u32, u32)>,
    pub closes: Vec<u32>,
    /// Descriptor slots (slot 0 is never open).
    pub slots: u32,
    pub maps: u32,
    /// Per mapping, whether an msync of the trace uses it (the others may be let go early:
    /// `sys::Table::sweep`).
    pub synced: Vec<bool>,
    /// The longest read, write or getdents buffer a call asks for.
    pub max_len: u64,
    /// Which kinds the trace has.
    pub kinds_used: Vec<bool>,
    /// The most recorded threads that were between their first call's start and their last
    /// call's end at once.
    pub concurrency: usize,
    /// Whether the dependency rule was resolved (false: only program and creation order).
    pub dependencies: bool,
}

/// Why a trace cannot be replayed: each names the call (its number in the trace, its thread)
/// and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("call {index} ({op} of thread {tid}): {source}; the trace may not name places outside its root")]
    Path {
        index: usize,
        op: &'static str,
        tid: u32,
        #[source]
        source: path::PathError,
    },
    #[error("call {index} ({op} of thread {tid}) uses descriptor {fd}, which the trace never opened in process {pid} nor inherited through a fork; the trace is incomplete — record it again")]
    UnknownFd {
        index: usize,
        op: &'static str,
        tid: u32,
        pid: u32,
        fd: i32,
    },
    #[error("call {index} ({op} of thread {tid}) syncs a mapping of descriptor {fd} that process {pid} never mapped; the trace is incomplete — record it again")]
    UnknownMap {
        index: usize,
        op: &'static str,
        tid: u32,
        pid: u32,
        fd: i32,
    },
    #[error("call {index} ({op} of thread {tid}): a name with a NUL byte ({text:?})")]
    Nul {
        index: usize,
        op: &'static str,
        tid: u32,
        text: String,
    },
    #[error("the trace lost {0} calls while it was recorded: a replay of it would not be the application's; record it again")]
    Lost(u64),
    #[error("the trace has no calls: nothing to replay")]
    Empty,
}

/// An open descriptor of a recorded process, at compile time.
#[derive(Debug, Clone, Copy)]
struct Open {
    slot: u32,
    cloexec: bool,
}

/// What the compilation keeps while it walks the calls.
#[derive(Default)]
struct Compiler {
    plan: Plan,
    names: HashMap<String, u32>,
    /// (pid, tid) -> thread: a thread number the host reused in another process is another
    /// thread.
    thread_of: HashMap<(u32, u32), u32>,
    /// tid -> the latest thread with that number (a wakeup names its waker by tid).
    thread_by_tid: HashMap<u32, u32>,
    proc_of: HashMap<u32, u32>,
    /// (pid, fd) -> the descriptor open under that number now.
    fds: HashMap<(u32, i32), Open>,
    /// (pid, fd) -> the latest mapping made through that descriptor.
    maps: HashMap<(u32, i32), u32>,
    /// A slot's name (what it was opened with) and the file that name stood for then, for
    /// the rule's resources.
    slot_name: Vec<Option<u32>>,
    slot_file: Vec<Option<u32>>,
    /// The slot a mapping was made from.
    map_slot: Vec<u32>,
    /// The fork call that made each process.
    forked_by: HashMap<u32, u32>,
    /// The latest call of each process.
    last_of_pid: HashMap<u32, u32>,
    /// The index and end (ns) of each process's last call in the whole trace.
    final_of_pid: HashMap<u32, (u32, u64)>,
    /// Each process's children not yet known to have ended.
    children: HashMap<u32, Vec<u32>>,
    /// (thread, seq) of each call.
    place: Vec<Dep>,
}

/// Resolves `trace` for replay; `dependencies`: whether the rule's waits are resolved.
pub fn compile(trace: &Trace, dependencies: bool) -> Result<Plan, PlanError> {
    if trace.end.lost_events > 0 {
        return Err(PlanError::Lost(trace.end.lost_events));
    }
    if trace.events.is_empty() {
        return Err(PlanError::Empty);
    }
    let mut c = Compiler {
        slot_name: vec![None],
        slot_file: vec![None],
        ..Compiler::default()
    };
    c.plan.kinds_used = vec![false; KINDS.len()];
    c.plan.slots = 1;
    c.plan.dependencies = dependencies;
    let mut resources = Resources::default();
    for (index, event) in trace.events.iter().enumerate() {
        let end = event.start_ns + event.dur_ns;
        c.final_of_pid.insert(event.pid, (index as u32, end));
    }
    for (index, event) in trace.events.iter().enumerate() {
        c.call(index, event, &mut resources)?;
    }
    let mut launch: Vec<u32> = (0..c.plan.threads.len() as u32).collect();
    launch.sort_by_key(|&t| c.plan.calls[c.plan.threads[t as usize].calls[0] as usize].start_ns);
    c.plan.launch = launch;
    c.plan.concurrency = concurrency(&trace.events, &c);
    Ok(c.plan)
}

/// The most threads alive at once in the recording (from a thread's first start to its last
/// call's end).
fn concurrency(events: &[Event], c: &Compiler) -> usize {
    let mut edges: Vec<(u64, i32)> = Vec::with_capacity(c.plan.threads.len() * 2);
    for thread in &c.plan.threads {
        let first = events[thread.calls[0] as usize].start_ns;
        let last = thread
            .calls
            .iter()
            .map(|&i| events[i as usize].start_ns + events[i as usize].dur_ns)
            .max()
            .unwrap_or(first);
        edges.push((first, 1));
        edges.push((last.max(first) + 1, -1));
    }
    edges.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, d) in edges {
        now += d;
        most = most.max(now);
    }
    most.max(1) as usize
}

/// Whether open flags make a file (O_CREAT, or O_TMPFILE — whose bits include O_DIRECTORY's,
/// so a plain directory open is not one).
pub fn creates(flags: i32) -> bool {
    flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE
}

/// The index of an operation's kind in [`KINDS`].
pub fn kind_of(op: &Op) -> u8 {
    KINDS
        .iter()
        .position(|k| *k == op.name())
        .expect("every operation is in KINDS") as u8
}

impl Compiler {
    fn call(
        &mut self,
        index: usize,
        event: &Event,
        resources: &mut Resources,
    ) -> Result<(), PlanError> {
        let op_name = event.op.name();
        let (pid, tid) = (event.pid, event.tid);
        for p in event.op.paths() {
            path::check(p).map_err(|source| PlanError::Path {
                index,
                op: op_name,
                tid,
                source,
            })?;
        }
        // Its thread and process.
        let thread = match self.thread_of.get(&(pid, tid)) {
            Some(&t) => t,
            None => self.new_thread(tid, pid),
        };
        let seq = self.plan.threads[thread as usize].calls.len() as u32;
        let me = Dep { thread, seq };
        let call_index = self.plan.calls.len() as u32;
        self.plan.threads[thread as usize].calls.push(call_index);
        self.place.push(me);
        let proc = self.plan.threads[thread as usize].proc;

        let mut touched = resources.begin();
        let unknown_fd = |fd: i32| PlanError::UnknownFd {
            index,
            op: op_name,
            tid,
            pid,
            fd,
        };
        let ok = event.ret >= 0;
        let act = match &event.op {
            Op::Open { path, flags, mode } => {
                let name = self.name(path, index, op_name, tid)?;
                let file = touched.file_of(path);
                touched.name(path);
                if creates(*flags) {
                    touched.dir(path::parent(path));
                }
                let (slot, replaces) = if ok {
                    self.open_fd(
                        pid,
                        proc,
                        event.ret as i32,
                        (Some(name), Some(file)),
                        flags & libc::O_CLOEXEC != 0,
                    )
                } else {
                    (BAD_SLOT, None)
                };
                Act::Open {
                    name,
                    flags: *flags,
                    mode: *mode,
                    slot,
                    replaces,
                }
            }
            Op::Close { fd } => {
                let slot = self
                    .slot(pid, *fd, event.ret)
                    .ok_or_else(|| unknown_fd(*fd))?;
                self.touch_slot(&mut touched, slot);
                self.fds.remove(&(pid, *fd));
                Act::Close { slot }
            }
            Op::Dup { fd, new_fd } => {
                let from = self
                    .slot(pid, *fd, event.ret)
                    .ok_or_else(|| unknown_fd(*fd))?;
                self.touch_slot(&mut touched, from);
                let (slot, replaces) = if ok {
                    let number = if event.ret >= 0 {
                        event.ret as i32
                    } else {
                        *new_fd
                    };
                    let of = (self.slot_name[from as usize], self.slot_file[from as usize]);
                    self.open_fd(pid, proc, number, of, false)
                } else {
                    (BAD_SLOT, None)
                };
                Act::Dup {
                    from,
                    slot,
                    replaces,
                }
            }
            Op::Read { fd, len }
            | Op::Readv { fd, len }
            | Op::Pread { fd, len, .. }
            | Op::Preadv { fd, len, .. }
            | Op::Write { fd, len }
            | Op::Writev { fd, len }
            | Op::Pwrite { fd, len, .. }
            | Op::Pwritev { fd, len, .. } => {
                let slot = self
                    .slot(pid, *fd, event.ret)
                    .ok_or_else(|| unknown_fd(*fd))?;
                self.touch_slot(&mut touched, slot);
                self.plan.max_len = self.plan.max_len.max(*len);
                let (off, vector) = match &event.op {
                    Op::Pread { off, .. } | Op::Pwrite { off, .. } => (Some(*off), false),
                    Op::Preadv { off, .. } | Op::Pwritev { off, .. } => (Some(*off), true),
                    Op::Readv { .. } | Op::Writev { .. } => (None, true),
                    _ => (None, false),
                };
                let write = matches!(
                    event.op,
                    Op::Write { .. } | Op::Writev { .. } | Op::Pwrite { .. } | Op::Pwritev { .. }
                );
                if write {
                    Act::Write {
                        slot,
                        len: *len,
                        off,
                        vector,
                    }
                } else {
                    Act::Read {
                        slot,
                        len: *len,
                        off,
                        vector,
                    }
                }
            }
            Op::Lseek { fd, off, whence } => Act::Lseek {
                slot: self.fd_call(pid, *fd, event.ret, &mut touched, unknown_fd)?,
                off: *off,
                whence: *whence,
            },
            Op::Fsync { fd } => Act::Fsync {
                slot: self.fd_call(pid, *fd, event.ret, &mut touched, unknown_fd)?,
            },
            Op::Fdatasync { fd } => Act::Fdatasync {
                slot: self.fd_call(pid, *fd, event.ret, &mut touched, unknown_fd)?,
            },
            Op::SyncFileRange {
                fd,
                off,
                len,
                flags,
            } => Act::SyncFileRange {
                slot: self.fd_call(pid, *fd, event.ret, &mut touched, unknown_fd)?,
                off: *off,
                len: *len,
                flags: *flags,
            },
            Op::Syncfs { fd } => Act::Syncfs {
                slot: self.fd_call(pid, *fd, event.ret, &mut touched, unknown_fd)?,
            },
            Op::Sync => Act::Sync,
            Op::Ftruncate { fd, len } => Act::Ftruncate {
                slot: self.fd_call(pid, *fd, event.ret, &mut touched, unknown_fd)?,
                len: *len,
            },
            Op::Fallocate { fd, mode, off, len } => Act::Fallocate {
                slot: self.fd_call(pid, *fd, event.ret, &mut touched, unknown_fd)?,
                mode: *mode,
                off: *off,
                len: *len,
            },
            Op::Fstat { fd } => Act::Fstat {
                slot: self.fd_call(pid, *fd, event.ret, &mut touched, unknown_fd)?,
            },
            Op::Fchmod { fd, mode } => Act::Fchmod {
                slot: self.fd_call(pid, *fd, event.ret, &mut touched, unknown_fd)?,
                mode: *mode,
            },
            Op::Fchown { fd, uid, gid } => Act::Fchown {
                slot: self.fd_call(pid, *fd, event.ret, &mut touched, unknown_fd)?,
                uid: *uid,
                gid: *gid,
            },
            Op::Futimes { fd } => Act::Futimes {
                slot: self.fd_call(pid, *fd, event.ret, &mut touched, unknown_fd)?,
            },
            Op::Getdents { fd, len } => {
                let slot = self.fd_call(pid, *fd, event.ret, &mut touched, unknown_fd)?;
                // The listing of the directory the descriptor was opened on.
                if let Some(name) = self.slot_name[slot as usize] {
                    let dir = self.plan.names[name as usize]
                        .full
                        .to_string_lossy()
                        .into_owned();
                    touched.dir(&dir);
                }
                self.plan.max_len = self.plan.max_len.max(*len);
                Act::Getdents { slot, len: *len }
            }
            Op::Truncate { path, len } => {
                touched.name(path);
                Act::Truncate {
                    name: self.name(path, index, op_name, tid)?,
                    len: *len,
                }
            }
            Op::Stat { path, follow } => {
                touched.name(path);
                Act::Stat {
                    name: self.name(path, index, op_name, tid)?,
                    follow: *follow,
                }
            }
            Op::Access { path, mode } => {
                touched.name(path);
                Act::Access {
                    name: self.name(path, index, op_name, tid)?,
                    mode: *mode,
                }
            }
            Op::Readlink { path } => {
                touched.name(path);
                Act::Readlink {
                    name: self.name(path, index, op_name, tid)?,
                }
            }
            Op::Chmod { path, mode } => {
                touched.name(path);
                Act::Chmod {
                    name: self.name(path, index, op_name, tid)?,
                    mode: *mode,
                }
            }
            Op::Chown {
                path,
                uid,
                gid,
                follow,
            } => {
                touched.name(path);
                Act::Chown {
                    name: self.name(path, index, op_name, tid)?,
                    uid: *uid,
                    gid: *gid,
                    follow: *follow,
                }
            }
            Op::Utimes { path } => {
                touched.name(path);
                Act::Utimes {
                    name: self.name(path, index, op_name, tid)?,
                }
            }
            Op::Mkdir { path, mode } => {
                touched.name(path);
                touched.dir(path::parent(path));
                Act::Mkdir {
                    name: self.name(path, index, op_name, tid)?,
                    mode: *mode,
                }
            }
            Op::Rmdir { path } => {
                touched.name(path);
                touched.dir(path::parent(path));
                if ok {
                    touched.unlinked(path);
                }
                Act::Rmdir {
                    name: self.name(path, index, op_name, tid)?,
                }
            }
            Op::Unlink { path } => {
                touched.name(path);
                touched.dir(path::parent(path));
                if ok {
                    touched.unlinked(path);
                }
                Act::Unlink {
                    name: self.name(path, index, op_name, tid)?,
                }
            }
            Op::Rename { from, to, flags } => {
                touched.name(from);
                touched.name(to);
                touched.dir(path::parent(from));
                touched.dir(path::parent(to));
                if ok {
                    touched.renamed(from, to);
                }
                Act::Rename {
                    from: self.name(from, index, op_name, tid)?,
                    to: self.name(to, index, op_name, tid)?,
                    flags: *flags,
                }
            }
            Op::Link { from, to } => {
                touched.name(from);
                touched.name(to);
                touched.dir(path::parent(to));
                if ok {
                    touched.linked(from, to);
                }
                Act::Link {
                    from: self.name(from, index, op_name, tid)?,
                    to: self.name(to, index, op_name, tid)?,
                }
            }
            Op::Symlink { target, path } => {
                touched.name(path);
                touched.dir(path::parent(path));
                // The link's contents are text, never resolved here: any target is kept as
                // recorded, and the replay's lookups refuse to follow one out of the root.
                let target = self.text(target, index, op_name, tid)?;
                Act::Symlink {
                    target,
                    name: self.name(path, index, op_name, tid)?,
                }
            }
            Op::Mmap {
                fd,
                len,
                off,
                prot,
                flags,
            } => {
                let slot = self.fd_call(pid, *fd, event.ret, &mut touched, unknown_fd)?;
                let map = self.plan.maps;
                self.plan.maps += 1;
                self.plan.synced.push(false);
                self.map_slot.push(slot);
                if ok {
                    self.maps.insert((pid, *fd), map);
                }
                Act::Mmap {
                    slot,
                    map,
                    len: *len,
                    off: *off,
                    prot: *prot,
                    flags: *flags,
                }
            }
            Op::Msync { fd, len, flags } => {
                let map = match self.maps.get(&(pid, *fd)) {
                    Some(&map) => {
                        let slot = self.map_slot[map as usize];
                        self.touch_slot(&mut touched, slot);
                        self.plan.synced[map as usize] = true;
                        map
                    }
                    None if !ok => NO_MAP,
                    None => {
                        return Err(PlanError::UnknownMap {
                            index,
                            op: op_name,
                            tid,
                            pid,
                            fd: *fd,
                        })
                    }
                };
                Act::Msync {
                    map,
                    len: *len,
                    flags: *flags,
                }
            }
            Op::Fork { child } => {
                let begin = self.plan.copies.len() as u32;
                if ok {
                    // A process number the host reused: the new process is another one, with
                    // no descriptors of the old.
                    let reused = *child;
                    self.thread_of.retain(|(p, _), _| *p != reused);
                    self.proc_of.remove(&reused);
                    self.fds.retain(|(p, _), _| *p != reused);
                    self.maps.retain(|(p, _), _| *p != reused);
                    self.last_of_pid.remove(&reused);
                    let child_proc = self.proc(*child);
                    let mut inherited: Vec<(i32, Open)> = self
                        .fds
                        .iter()
                        .filter(|((p, _), _)| *p == pid)
                        .map(|((_, fd), open)| (*fd, *open))
                        .collect();
                    inherited.sort_by_key(|(fd, _)| *fd);
                    for (fd, open) in inherited {
                        let of = (
                            self.slot_name[open.slot as usize],
                            self.slot_file[open.slot as usize],
                        );
                        let (slot, _) = self.open_fd(*child, child_proc, fd, of, open.cloexec);
                        self.plan.copies.push((open.slot, slot));
                    }
                    let maps: Vec<(i32, u32)> = self
                        .maps
                        .iter()
                        .filter(|((p, _), _)| *p == pid)
                        .map(|((_, fd), map)| (*fd, *map))
                        .collect();
                    for (fd, map) in maps {
                        self.maps.insert((*child, fd), map);
                    }
                    self.forked_by.insert(*child, call_index);
                    self.children.entry(pid).or_default().push(*child);
                }
                Act::Fork {
                    copies: (begin, self.plan.copies.len() as u32),
                }
            }
            Op::Exec => {
                let begin = self.plan.closes.len() as u32;
                let mut closing: Vec<(i32, u32)> = self
                    .fds
                    .iter()
                    .filter(|((p, _), open)| *p == pid && open.cloexec)
                    .map(|((_, fd), open)| (*fd, open.slot))
                    .collect();
                closing.sort();
                for (fd, slot) in closing {
                    self.fds.remove(&(pid, fd));
                    self.plan.closes.push(slot);
                }
                self.maps.retain(|(p, _), _| *p != pid);
                Act::Exec {
                    closes: (begin, self.plan.closes.len() as u32),
                }
            }
        };
        // The rule's waits: the latest earlier call of another thread on each resource; for a
        // fork, the last calls of the process's children that had ended before it began (the
        // process waited for them: a `make -j2` forks its third compiler when one of the
        // first two is done).
        let begin = self.plan.deps.len() as u32;
        if self.plan.dependencies {
            let mut before = touched.finish(call_index);
            if let Op::Fork { .. } = event.op {
                before.extend(self.ended_children(pid, event.start_ns));
            }
            for last in before {
                let dep = self.place[last as usize];
                if dep.thread != thread {
                    // One wait per thread, for its latest call.
                    match self.plan.deps[begin as usize..]
                        .iter_mut()
                        .find(|d| d.thread == dep.thread)
                    {
                        Some(d) => d.seq = d.seq.max(dep.seq),
                        None => self.plan.deps.push(dep),
                    }
                }
            }
        } else {
            touched.finish(call_index);
        }
        // A thread's first call comes after what made it.
        if seq == 0 {
            let after = match self.forked_by.get(&pid) {
                Some(&fork) if self.plan.threads[thread as usize].tid == pid => {
                    Some(self.place[fork as usize])
                }
                _ => self
                    .last_of_pid
                    .get(&pid)
                    .map(|&j| self.place[j as usize])
                    .filter(|d| d.thread != thread),
            };
            self.plan.threads[thread as usize].after = after;
        }
        self.last_of_pid.insert(pid, call_index);
        self.plan.kinds_used[kind_of(&event.op) as usize] = true;
        self.plan.calls.push(Call {
            act,
            kind: kind_of(&event.op),
            start_ns: event.start_ns,
            dur_ns: event.dur_ns,
            blocked_ns: event.blocked_ns + event.recorder_ns,
            wake: self.wake(event, thread),
            ret: event.ret,
            deps: (begin, self.plan.deps.len() as u32),
        });
        Ok(())
    }

    /// The recorded wakeup before `event` (of `thread`) as a call to wait for: the waker's last
    /// call that began before it woke this thread. None without one, or when the waker made
    /// no call before it.
    fn wake(&self, event: &Event, thread: u32) -> Option<Wake> {
        let woken = event.woken?;
        let waker = *self.thread_by_tid.get(&woken.tid)?;
        if waker == thread || woken.at_ns > event.start_ns {
            return None;
        }
        // A short wait (a lock handed over, a pipe's next few kilobytes) is left to the think
        // time: following every one would add a wakeup's latency here to each.
        let mine = &self.plan.threads[thread as usize].calls;
        if let Some(&p) = mine.len().checked_sub(2).map(|i| &mine[i]) {
            let p = &self.plan.calls[p as usize];
            if woken.at_ns < p.start_ns + p.dur_ns + MIN_WAKE_WAIT_NS {
                return None;
            }
        }
        let calls = &self.plan.threads[waker as usize].calls;
        let seq = calls.partition_point(|&ci| self.plan.calls[ci as usize].start_ns < woken.at_ns);
        let seq = seq.checked_sub(1)? as u32;
        Some(Wake {
            dep: Dep { thread: waker, seq },
            at_ns: woken.at_ns,
        })
    }

    /// The last calls of `pid`'s children that ended (in the whole trace) before `start_ns`,
    /// each given once.
    fn ended_children(&mut self, pid: u32, start_ns: u64) -> Vec<u32> {
        let Some(children) = self.children.get_mut(&pid) else {
            return Vec::new();
        };
        let mut ended = Vec::new();
        children.retain(|child| match self.final_of_pid.get(child) {
            Some(&(last, end)) if end <= start_ns && (last as usize) < self.place.len() => {
                ended.push(last);
                false
            }
            // A child that never made a call ends nothing.
            None => false,
            _ => true,
        });
        ended
    }

    fn new_thread(&mut self, tid: u32, pid: u32) -> u32 {
        let proc = self.proc(pid);
        self.plan.procs[proc as usize].threads += 1;
        let t = self.plan.threads.len() as u32;
        self.plan.threads.push(Thread {
            tid,
            pid,
            proc,
            calls: Vec::new(),
            after: None,
        });
        self.thread_of.insert((pid, tid), t);
        self.thread_by_tid.insert(tid, t);
        t
    }

    fn proc(&mut self, pid: u32) -> u32 {
        if let Some(&p) = self.proc_of.get(&pid) {
            return p;
        }
        let p = self.plan.procs.len() as u32;
        self.plan.procs.push(Proc {
            pid,
            ..Proc::default()
        });
        self.proc_of.insert(pid, p);
        p
    }

    /// A new slot for descriptor `fd` of `pid`, and the slot it replaces there (dup2 onto an
    /// open number closes it).
    fn open_fd(
        &mut self,
        pid: u32,
        proc: u32,
        fd: i32,
        (name, file): (Option<u32>, Option<u32>),
        cloexec: bool,
    ) -> (u32, Option<u32>) {
        let slot = self.plan.slots;
        self.plan.slots += 1;
        self.slot_name.push(name);
        self.slot_file.push(file);
        self.plan.procs[proc as usize].slots.push(slot);
        let replaced = self.fds.insert((pid, fd), Open { slot, cloexec });
        (slot, replaced.map(|o| o.slot))
    }

    /// The slot of `fd` in `pid` now; [`BAD_SLOT`] for one never opened whose call failed
    /// with EBADF in the recording too; None for one never opened.
    fn slot(&self, pid: u32, fd: i32, ret: i64) -> Option<u32> {
        match self.fds.get(&(pid, fd)) {
            Some(open) => Some(open.slot),
            None if ret == -(libc::EBADF as i64) => Some(BAD_SLOT),
            None => None,
        }
    }

    fn fd_call(
        &mut self,
        pid: u32,
        fd: i32,
        ret: i64,
        touched: &mut super::deps::Touched<'_>,
        unknown: impl Fn(i32) -> PlanError,
    ) -> Result<u32, PlanError> {
        let slot = self.slot(pid, fd, ret).ok_or_else(|| unknown(fd))?;
        self.touch_slot(touched, slot);
        Ok(slot)
    }

    fn touch_slot(&self, touched: &mut super::deps::Touched<'_>, slot: u32) {
        if let Some(file) = self.slot_file[slot as usize] {
            touched.file(file);
        }
    }

    /// The name of a checked path, made once.
    fn name(
        &mut self,
        path: &str,
        index: usize,
        op: &'static str,
        tid: u32,
    ) -> Result<u32, PlanError> {
        if let Some(&n) = self.names.get(path) {
            return Ok(n);
        }
        let nul = || PlanError::Nul {
            index,
            op,
            tid,
            text: path.to_owned(),
        };
        let full = CString::new(path).map_err(|_| nul())?;
        let (parent, base) = match path.rsplit_once('/') {
            Some((dir, base)) => (
                Some(CString::new(dir).map_err(|_| nul())?),
                CString::new(base).map_err(|_| nul())?,
            ),
            None => (None, full.clone()),
        };
        let n = self.plan.names.len() as u32;
        self.plan.names.push(Name { full, parent, base });
        self.names.insert(path.to_owned(), n);
        Ok(n)
    }

    /// A symbolic link's contents, kept as text (not a path of the trace: never checked, never
    /// resolved by the replay).
    fn text(
        &mut self,
        text: &str,
        index: usize,
        op: &'static str,
        tid: u32,
    ) -> Result<u32, PlanError> {
        let key = format!("\0{text}");
        if let Some(&n) = self.names.get(&key) {
            return Ok(n);
        }
        let full = CString::new(text).map_err(|_| PlanError::Nul {
            index,
            op,
            tid,
            text: text.to_owned(),
        })?;
        let n = self.plan.names.len() as u32;
        self.plan.names.push(Name {
            base: full.clone(),
            full,
            parent: None,
        });
        self.names.insert(key, n);
        Ok(n)
    }
}

impl Plan {
    /// A name's text, for messages.
    pub fn name_text(&self, name: u32) -> std::borrow::Cow<'_, str> {
        self.names[name as usize].full.to_string_lossy()
    }
}
