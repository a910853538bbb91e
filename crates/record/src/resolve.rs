//! From the kernel's calls to the trace's events, once the recording has ended: the calls are
//! sorted by the time they began, then replayed against a model of each process — its working
//! directory, its descriptor table (opens, dups, closes, close-on-exec, inherited across fork),
//! its file mappings — so that every path is made absolute, then relative to the root, and every
//! descriptor is known to name a file inside the root or not. Calls outside the root are
//! counted, not kept; calls the trace cannot express are counted by name.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use fsbench_trace::path::relative;
use fsbench_trace::{Event, Op, Woken};

use crate::raw::{
    Call, Calls, FLAG_EXTRA, FLAG_PATH1_FAULT, FLAG_PATH2_FAULT, KIND_EXEC, KIND_FAULT_WAIT,
};
use crate::syscalls::{self, Syscall, NO_ARG};

/// One open descriptor of a recorded process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fd {
    /// The absolute path it was opened as (`None`: a pipe, socket, or unknown).
    pub path: Option<PathBuf>,
    /// Its root-relative form, when inside the root.
    pub rel: Option<String>,
    pub cloexec: bool,
}

/// What the recorder knows of one process.
#[derive(Clone, Debug, Default)]
pub struct Process {
    pub cwd: Option<PathBuf>,
    pub fds: HashMap<i32, Fd>,
    /// File mappings: (address, length, descriptor at mmap time, inside the root).
    maps: Vec<(u64, u64, i32, bool)>,
}

impl Process {
    /// A process with this working directory and these descriptors (absolute path or none,
    /// close-on-exec), as found in /proc.
    pub fn new(
        root: &Path,
        cwd: Option<PathBuf>,
        fds: Vec<(i32, Option<PathBuf>, bool)>,
    ) -> Process {
        let fds = fds
            .into_iter()
            .map(|(fd, path, cloexec)| (fd, descriptor(root, path, cloexec)))
            .collect();
        Process {
            cwd,
            fds,
            maps: Vec::new(),
        }
    }

    /// Forgets what was mapped in `[start, start + len)` (the length rounded up to whole
    /// pages, as the kernel does): the parts of file mappings around the range stay.
    fn unmap(&mut self, start: u64, len: u64) {
        let end = start.saturating_add(len.next_multiple_of(PAGE));
        if !self
            .maps
            .iter()
            .any(|&(at, l, _, _)| at < end && at.saturating_add(l) > start)
        {
            return;
        }
        let mut kept = Vec::with_capacity(self.maps.len() + 1);
        for (at, l, fd, inside) in self.maps.drain(..) {
            let e = at.saturating_add(l);
            if e <= start || at >= end {
                kept.push((at, l, fd, inside));
                continue;
            }
            if at < start {
                kept.push((at, start - at, fd, inside));
            }
            if e > end {
                kept.push((end, e - end, fd, inside));
            }
        }
        self.maps = kept;
    }

    /// The latest file mapping holding `addr`: (descriptor at mmap time, inside the root).
    fn map_at(&self, addr: u64) -> Option<(i32, bool)> {
        self.maps
            .iter()
            .rev()
            .find(|&&(at, len, _, _)| addr >= at && addr < at.saturating_add(len))
            .map(|&(_, _, fd, inside)| (fd, inside))
    }
}

fn descriptor(root: &Path, path: Option<PathBuf>, cloexec: bool) -> Fd {
    let rel = path.as_deref().and_then(|p| relative(root, p));
    Fd { path, rel, cloexec }
}

/// The events and the counts of a recording.
#[derive(Debug, Default)]
pub struct Resolved {
    pub events: Vec<Event>,
    pub outside: u64,
    pub unsupported: BTreeMap<String, u64>,
    /// Calls that succeeded but could not be placed inside or outside the root: a path the
    /// kernel could not copy, a relative path against a directory or working directory the
    /// model does not know, an `openat2` whose `open_how` could not be read. A recording with
    /// any is refused (it would otherwise count them as outside, silently).
    pub unresolved: u64,
}

const AT_FDCWD: i32 = -100;
const AT_EMPTY_PATH: u64 = 0x1000;
const AT_SYMLINK_NOFOLLOW: u64 = 0x100;
const AT_REMOVEDIR: u64 = 0x200;
const CLONE_THREAD: u64 = 0x0001_0000;
const CLOSE_RANGE_CLOEXEC: u64 = 4;
const CLOSE_RANGE_UNSHARE: u64 = 2;
const MAP_ANONYMOUS: u64 = 0x20;
/// The page size of x86_64, whose system call numbering the recorder knows.
const PAGE: u64 = 4096;
const FIONCLEX: u64 = 0x5450;
const FIOCLEX: u64 = 0x5451;

/// Turns the calls into events: `start_ns` is the recording's start (the kernel's monotonic
/// clock), `processes` what was known of the traced processes when the recording began.
pub fn resolve(
    root: &Path,
    calls: Calls,
    start_ns: u64,
    processes: HashMap<u32, Process>,
) -> Resolved {
    resolve_with_links(root, calls, start_ns, processes, HashSet::new())
}

/// [`resolve`], knowing the symbolic links under the root (root-relative paths: the initial
/// tree's; those the calls create are added): a path that climbs out of one with `..` names
/// what the kernel finds beyond the link's target, which lexical resolution cannot know (it
/// may lie outside the root), so such a call is unresolved, never recorded under a wrong name.
pub fn resolve_with_links(
    root: &Path,
    mut calls: Calls,
    start_ns: u64,
    mut processes: HashMap<u32, Process>,
    symlinks: HashSet<String>,
) -> Resolved {
    calls.calls.sort_by_key(|c| c.enter_ns);
    let table = syscalls::table();
    let mut r = Resolver {
        root,
        arena: &calls.arena,
        out: Resolved::default(),
        start_ns,
        unknown_base: std::cell::Cell::new(false),
        unnameable: std::cell::Cell::new(false),
        symlinks,
        blocked: HashMap::new(),
        recorder_ns: HashMap::new(),
        wakes: HashMap::new(),
        starts: HashMap::new(),
    };
    for call in &calls.calls {
        if call.kind == KIND_FAULT_WAIT {
            // A wait in a fault of a file the process mapped from inside the root is the
            // recording filesystem's: the replay reads those pages itself, and leaves this
            // time out of the think time. A wait for a page of a program, a library or any
            // file outside the root stays think time: the replay cannot take it.
            let addr = call.args[0];
            let inside = processes
                .get(&call.pid)
                .and_then(|p| p.map_at(addr))
                .is_some_and(|(_, inside)| inside);
            if inside {
                r.blocked
                    .entry(call.tid)
                    .or_default()
                    .push((call.enter_ns, call.exit_ns.saturating_sub(call.enter_ns)));
            }
            continue;
        }
        if call.probe_ns > 0 {
            *r.recorder_ns.entry(call.tid).or_default() += u64::from(call.probe_ns);
        }
        if call.waker_tid != 0 {
            let seen = r.wakes.entry(call.tid).or_default();
            if seen.last() != Some(&(call.woken_ns, call.waker_tid)) {
                seen.push((call.woken_ns, call.waker_tid));
            }
        }
        // Interrupted and restarted by the kernel: the call is issued again.
        if call.kind != KIND_EXEC && (-516..=-512).contains(&call.ret) {
            continue;
        }
        let process = processes.entry(call.pid).or_default();
        if call.kind == KIND_EXEC {
            process.fds.retain(|_, fd| !fd.cloexec);
            process.maps.clear();
            r.push(call, Op::Exec);
            continue;
        }
        let Some(sys) = table.get(call.nr as usize).copied().flatten() else {
            continue;
        };
        r.unknown_base.set(false);
        r.unnameable.set(false);
        let child = r.call(sys, call, process);
        if (r.unknown_base.get() && call.ret >= 0) || r.unnameable.get() {
            r.out.unresolved += 1;
        }
        if let Some(child) = child {
            let copy = processes.get(&call.pid).cloned().unwrap_or_default();
            processes.insert(child, copy);
        }
    }
    r.out
}

struct Resolver<'a> {
    root: &'a Path,
    arena: &'a [u8],
    out: Resolved,
    start_ns: u64,
    /// Set when a relative path of the current call had no known base.
    unknown_base: std::cell::Cell<bool>,
    /// Set when a path of the current call lies inside the root but is not UTF-8, or climbs
    /// out of a symbolic link with `..`.
    unnameable: std::cell::Cell<bool>,
    /// Symbolic links under the root, root-relative.
    symlinks: HashSet<String>,
    /// Per thread: its waits in faults of mappings inside the root since its last event (when
    /// each began, how long it took), carried past the calls that are left out (outside the
    /// root, interrupted) to the next it has.
    blocked: HashMap<u32, Vec<(u64, u64)>>,
    /// Per thread: the time the recorder's probes took since its last event, carried as
    /// `blocked_ns` is.
    recorder_ns: HashMap<u32, u64>,
    /// Per thread: the wakeups by traced threads its calls reported, in order (kernel time,
    /// waker): the calls left out included.
    wakes: HashMap<u32, Vec<(u64, u32)>>,
    /// Per thread with events: when each of its events began (kernel time), in order.
    starts: HashMap<u32, Vec<u64>>,
}

impl Resolver<'_> {
    fn push(&mut self, c: &Call, op: Op) {
        let woken = self.woken(c);
        // Woken: the replay times the call from the wakeup (or from its previous call, when
        // the wakeup came before that ended), so only the waits after it are taken out; those
        // before it were in the time the thread waited to be woken.
        let since = woken.map_or(0, |w| w.at_ns + self.start_ns);
        let blocked_ns = self.blocked.remove(&c.tid).map_or(0, |waits| {
            waits
                .iter()
                .filter(|&&(at, _)| at >= since)
                .map(|&(_, ns)| ns)
                .sum()
        });
        self.out.events.push(Event {
            pid: c.pid,
            tid: c.tid,
            start_ns: c.enter_ns.saturating_sub(self.start_ns),
            dur_ns: c.exit_ns.saturating_sub(c.enter_ns),
            blocked_ns,
            recorder_ns: self.recorder_ns.remove(&c.tid).unwrap_or(0),
            woken,
            ret: c.ret,
            op,
        });
    }

    /// The wakeup that ended the thread's wait before call `c`: its latest, when it came after
    /// the thread's previous event began. A waker that made no call of the trace between its
    /// own wakeup and this one only passed data on (a process or thread relaying a pipe): it is
    /// followed back to what woke it, so the call waits for the thread whose calls the trace
    /// has.
    fn woken(&mut self, c: &Call) -> Option<Woken> {
        let starts = self.starts.entry(c.tid).or_default();
        let previous = starts.last().copied();
        starts.push(c.enter_ns);
        let &(mut at, mut waker) = self.wakes.get(&c.tid)?.last()?;
        if at > c.enter_ns || previous.is_some_and(|start| at < start) {
            return None;
        }
        for _ in 0..8 {
            let Some(seen) = self.wakes.get(&waker) else {
                break;
            };
            let i = seen.partition_point(|&(when, _)| when <= at);
            let Some(&(when, by)) = i.checked_sub(1).map(|i| &seen[i]) else {
                break;
            };
            let called_since = self.starts.get(&waker).is_some_and(|starts| {
                let k = starts.partition_point(|&start| start <= at);
                k > 0 && starts[k - 1] > when
            });
            if called_since || by == waker {
                break;
            }
            (at, waker) = (when, by);
        }
        Some(Woken {
            tid: waker,
            at_ns: at.saturating_sub(self.start_ns),
        })
    }

    fn path_bytes(&self, range: (u32, u32)) -> Option<&[u8]> {
        if range.1 == u32::MAX {
            return None;
        }
        let start = range.0 as usize;
        Some(&self.arena[start..start + range.1 as usize])
    }

    /// The absolute form of a path argument, against the working directory or `dirfd`.
    fn absolute(&self, p: &Process, path: &[u8], dirfd: Option<i32>) -> Option<PathBuf> {
        if path.is_empty() {
            return None;
        }
        let path = Path::new(OsStr::from_bytes(path));
        if path.is_absolute() {
            return Some(path.to_path_buf());
        }
        let base = match dirfd {
            None | Some(AT_FDCWD) => p.cwd.as_ref(),
            Some(fd) => p.fds.get(&fd).and_then(|f| f.path.as_ref()),
        };
        if base.is_none() {
            self.unknown_base.set(true);
        }
        Some(base?.join(path))
    }

    /// Path argument `which` (0: the first, 1: the second) made absolute.
    fn arg_path(&self, sys: &Syscall, c: &Call, p: &Process, which: usize) -> Option<PathBuf> {
        let (range, dir) = if which == 0 {
            (c.path1, sys.dirfd_a)
        } else {
            (c.path2, sys.dirfd_b)
        };
        let bytes = self.path_bytes(range)?;
        let dirfd = (dir != NO_ARG).then(|| c.args[dir as usize] as i32);
        self.absolute(p, bytes, dirfd)
    }

    fn rel(&self, path: Option<PathBuf>) -> Option<String> {
        let path = path?;
        if !self.symlinks.is_empty() {
            let mut at = PathBuf::new();
            for component in path.components() {
                if component == std::path::Component::ParentDir {
                    if relative(self.root, &at).is_some_and(|r| self.symlinks.contains(&r)) {
                        self.unnameable.set(true);
                        return None;
                    }
                    at.pop();
                } else {
                    at.push(component);
                }
            }
        }
        let rel = relative(self.root, &path);
        // Inside the root but not UTF-8: a trace cannot name it, and it is not outside.
        if rel.is_none() {
            let lossy = path.to_string_lossy();
            if lossy.contains('\u{fffd}') && relative(self.root, Path::new(&*lossy)).is_some() {
                self.unnameable.set(true);
            }
        }
        rel
    }

    /// An operation on a path: kept when the path is inside the root.
    fn on_path(&mut self, c: &Call, path: Option<PathBuf>, op: impl FnOnce(String) -> Op) {
        match self.rel(path) {
            Some(rel) => {
                let op = op(rel);
                self.push(c, op)
            }
            None => self.out.outside += 1,
        }
    }

    /// An operation on a descriptor: kept when it names a file inside the root.
    fn on_fd(&mut self, c: &Call, p: &Process, fd: i32, op: Op) {
        if p.fds.get(&fd).is_some_and(|f| f.rel.is_some()) {
            self.push(c, op)
        } else {
            self.out.outside += 1
        }
    }

    /// One call; returns the child's pid when the call made a new process.
    fn call(&mut self, sys: &Syscall, c: &Call, p: &mut Process) -> Option<u32> {
        let a = c.args;
        let fd = a[0] as i32;
        let ok = c.ret >= 0;
        let extra = (c.flags & FLAG_EXTRA != 0).then_some(c.extra);
        // A path the kernel could not copy (a null pointer is no path: utimensat, statx).
        let unreadable =
            |flag: u32, arg: u8| c.flags & flag != 0 && arg != NO_ARG && a[arg as usize] != 0;
        if (unreadable(FLAG_PATH1_FAULT, sys.path_a) || unreadable(FLAG_PATH2_FAULT, sys.path_b))
            && c.ret != -(libc::EFAULT as i64)
        {
            self.out.unresolved += 1;
            return None;
        }
        if sys.unsupported {
            // mremap moves a mapping (or grows it in place): the model follows it, and counts
            // it unsupported only when the mapping is of a file inside the root.
            let touches = if c.nr as i64 == libc::SYS_mremap {
                let moved = p.map_at(a[0]);
                if ok {
                    p.unmap(a[0], a[1]);
                    p.unmap(c.ret as u64, a[2]);
                    if let Some((mfd, inside)) = moved {
                        p.maps
                            .push((c.ret as u64, a[2].next_multiple_of(PAGE), mfd, inside));
                    }
                }
                moved.is_some_and(|(_, inside)| inside)
            } else if sys.path_a != NO_ARG {
                self.rel(self.arg_path(sys, c, p, 0)).is_some()
            } else if sys.fds.is_empty() {
                true
            } else {
                sys.fds.iter().any(|&i| {
                    p.fds
                        .get(&(a[i as usize] as i32))
                        .is_some_and(|f| f.rel.is_some())
                })
            };
            if touches {
                *self.out.unsupported.entry(sys.name.to_owned()).or_default() += 1;
            } else {
                self.out.outside += 1;
            }
            return None;
        }
        match c.nr as i64 {
            libc::SYS_read => self.on_fd(c, p, fd, Op::Read { fd, len: a[2] }),
            libc::SYS_write => self.on_fd(c, p, fd, Op::Write { fd, len: a[2] }),
            libc::SYS_pread64 => self.on_fd(
                c,
                p,
                fd,
                Op::Pread {
                    fd,
                    len: a[2],
                    off: a[3],
                },
            ),
            libc::SYS_pwrite64 => self.on_fd(
                c,
                p,
                fd,
                Op::Pwrite {
                    fd,
                    len: a[2],
                    off: a[3],
                },
            ),
            libc::SYS_readv
            | libc::SYS_writev
            | libc::SYS_preadv
            | libc::SYS_pwritev
            | libc::SYS_preadv2
            | libc::SYS_pwritev2 => {
                let len = extra.unwrap_or(c.ret.max(0) as u64);
                let off = a[3];
                let op = match c.nr as i64 {
                    libc::SYS_readv => Op::Readv { fd, len },
                    libc::SYS_writev => Op::Writev { fd, len },
                    libc::SYS_preadv | libc::SYS_preadv2 => Op::Preadv { fd, len, off },
                    _ => Op::Pwritev { fd, len, off },
                };
                self.on_fd(c, p, fd, op)
            }
            libc::SYS_open | libc::SYS_openat | libc::SYS_openat2 | libc::SYS_creat => {
                let (flags, mode) = match c.nr as i64 {
                    libc::SYS_open => (a[1], a[2]),
                    libc::SYS_openat => (a[2], a[3]),
                    libc::SYS_openat2 => {
                        if extra.is_none() {
                            if ok {
                                self.out.unresolved += 1;
                            } else {
                                self.out.outside += 1;
                            }
                            return None;
                        }
                        (c.extra, c.extra2)
                    }
                    _ => (
                        (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64,
                        a[1],
                    ),
                };
                let path = self.arg_path(sys, c, p, 0);
                if ok {
                    let cloexec = flags & libc::O_CLOEXEC as u64 != 0;
                    p.fds
                        .insert(c.ret as i32, descriptor(self.root, path.clone(), cloexec));
                }
                self.on_path(c, path, |path| Op::Open {
                    path,
                    flags: flags as i32,
                    mode: mode as u32,
                });
            }
            libc::SYS_close => {
                let was = p.fds.remove(&fd);
                if was.is_some_and(|f| f.rel.is_some()) {
                    self.push(c, Op::Close { fd })
                } else {
                    self.out.outside += 1
                }
            }
            // CLOSE_RANGE_UNSHARE from a thread other than the process's first: the thread
            // takes a copy of the table and closes in the copy (a helper thread leaving the
            // table, as fsbench's own do); the process's table, its other threads', is as it
            // was. From the first thread (a forked child before its exec, whose table is its
            // own) the descriptors close.
            libc::SYS_close_range if ok && a[2] & CLOSE_RANGE_UNSHARE != 0 && c.tid != c.pid => {}
            libc::SYS_close_range if ok => {
                let (first, last) = (a[0] as u32 as i64, a[1] as u32 as i64);
                let mut inside: Vec<i32> = Vec::new();
                p.fds.retain(|&n, f| {
                    if (n as i64) < first || (n as i64) > last {
                        return true;
                    }
                    if a[2] & CLOSE_RANGE_CLOEXEC != 0 {
                        f.cloexec = true;
                        return true;
                    }
                    if f.rel.is_some() {
                        inside.push(n);
                    }
                    false
                });
                inside.sort_unstable();
                for fd in inside {
                    self.push(c, Op::Close { fd });
                }
            }
            libc::SYS_dup | libc::SYS_dup2 | libc::SYS_dup3 => {
                let cloexec = c.nr as i64 == libc::SYS_dup3 && a[2] & libc::O_CLOEXEC as u64 != 0;
                self.dup(c, p, fd, cloexec)
            }
            libc::SYS_fcntl => match a[1] as i32 {
                libc::F_DUPFD => self.dup(c, p, fd, false),
                libc::F_DUPFD_CLOEXEC => self.dup(c, p, fd, true),
                libc::F_SETFD if ok => {
                    if let Some(f) = p.fds.get_mut(&fd) {
                        f.cloexec = a[2] & libc::FD_CLOEXEC as u64 != 0;
                    }
                }
                _ => {}
            },
            libc::SYS_ioctl if ok => {
                let cloexec = match a[1] as u32 as u64 {
                    FIOCLEX => true,
                    FIONCLEX => false,
                    _ => return None,
                };
                if let Some(f) = p.fds.get_mut(&fd) {
                    f.cloexec = cloexec;
                }
            }
            libc::SYS_lseek => self.on_fd(
                c,
                p,
                fd,
                Op::Lseek {
                    fd,
                    off: a[1] as i64,
                    whence: a[2] as i32,
                },
            ),
            libc::SYS_fsync => self.on_fd(c, p, fd, Op::Fsync { fd }),
            libc::SYS_fdatasync => self.on_fd(c, p, fd, Op::Fdatasync { fd }),
            libc::SYS_syncfs => self.on_fd(c, p, fd, Op::Syncfs { fd }),
            libc::SYS_sync => self.push(c, Op::Sync),
            libc::SYS_sync_file_range => self.on_fd(
                c,
                p,
                fd,
                Op::SyncFileRange {
                    fd,
                    off: a[1],
                    len: a[2],
                    flags: a[3] as u32,
                },
            ),
            libc::SYS_ftruncate => self.on_fd(c, p, fd, Op::Ftruncate { fd, len: a[1] }),
            libc::SYS_truncate => {
                let path = self.arg_path(sys, c, p, 0);
                self.on_path(c, path, |path| Op::Truncate { path, len: a[1] })
            }
            libc::SYS_fallocate => self.on_fd(
                c,
                p,
                fd,
                Op::Fallocate {
                    fd,
                    mode: a[1] as i32,
                    off: a[2],
                    len: a[3],
                },
            ),
            libc::SYS_stat | libc::SYS_lstat => {
                let follow = c.nr as i64 == libc::SYS_stat;
                let path = self.arg_path(sys, c, p, 0);
                self.on_path(c, path, |path| Op::Stat { path, follow })
            }
            libc::SYS_fstat => self.on_fd(c, p, fd, Op::Fstat { fd }),
            libc::SYS_newfstatat | libc::SYS_statx => {
                let flags = if c.nr as i64 == libc::SYS_statx {
                    a[2]
                } else {
                    a[3]
                };
                let empty = self.path_bytes(c.path1).is_none_or(|b| b.is_empty());
                if empty && flags & AT_EMPTY_PATH != 0 {
                    if fd == AT_FDCWD {
                        let cwd = p.cwd.clone();
                        self.on_path(c, cwd, |path| Op::Stat { path, follow: true })
                    } else {
                        self.on_fd(c, p, fd, Op::Fstat { fd })
                    }
                } else {
                    let follow = flags & AT_SYMLINK_NOFOLLOW == 0;
                    let path = self.arg_path(sys, c, p, 0);
                    self.on_path(c, path, |path| Op::Stat { path, follow })
                }
            }
            libc::SYS_access | libc::SYS_faccessat | libc::SYS_faccessat2 => {
                let mode = if c.nr as i64 == libc::SYS_access {
                    a[1]
                } else {
                    a[2]
                };
                let path = self.arg_path(sys, c, p, 0);
                self.on_path(c, path, |path| Op::Access {
                    path,
                    mode: mode as i32,
                })
            }
            libc::SYS_getdents | libc::SYS_getdents64 => {
                self.on_fd(c, p, fd, Op::Getdents { fd, len: a[2] })
            }
            libc::SYS_mkdir | libc::SYS_mkdirat => {
                let mode = if c.nr as i64 == libc::SYS_mkdir {
                    a[1]
                } else {
                    a[2]
                };
                let path = self.arg_path(sys, c, p, 0);
                self.on_path(c, path, |path| Op::Mkdir {
                    path,
                    mode: mode as u32,
                })
            }
            libc::SYS_rmdir => {
                let path = self.arg_path(sys, c, p, 0);
                self.on_path(c, path, |path| Op::Rmdir { path })
            }
            libc::SYS_unlink => {
                let path = self.arg_path(sys, c, p, 0);
                self.on_path(c, path, |path| Op::Unlink { path })
            }
            libc::SYS_unlinkat => {
                let path = self.arg_path(sys, c, p, 0);
                if a[2] & AT_REMOVEDIR != 0 {
                    self.on_path(c, path, |path| Op::Rmdir { path })
                } else {
                    self.on_path(c, path, |path| Op::Unlink { path })
                }
            }
            libc::SYS_rename
            | libc::SYS_renameat
            | libc::SYS_renameat2
            | libc::SYS_link
            | libc::SYS_linkat => {
                let from = self.rel(self.arg_path(sys, c, p, 0));
                let to = self.rel(self.arg_path(sys, c, p, 1));
                let (Some(from), Some(to)) = (from, to) else {
                    self.out.outside += 1;
                    return None;
                };
                let op = match c.nr as i64 {
                    libc::SYS_rename | libc::SYS_renameat => Op::Rename { from, to, flags: 0 },
                    libc::SYS_renameat2 => Op::Rename {
                        from,
                        to,
                        flags: a[4] as u32,
                    },
                    _ => Op::Link { from, to },
                };
                self.push(c, op)
            }
            libc::SYS_symlink | libc::SYS_symlinkat => {
                let target = self
                    .path_bytes(c.path1)
                    .map(|b| String::from_utf8_lossy(b).into_owned());
                let path = self.arg_path(sys, c, p, 1);
                match (target, self.rel(path)) {
                    (Some(target), Some(path)) => {
                        if ok {
                            self.symlinks.insert(path.clone());
                        }
                        self.push(c, Op::Symlink { target, path })
                    }
                    _ => self.out.outside += 1,
                }
            }
            libc::SYS_readlink | libc::SYS_readlinkat => {
                let path = self.arg_path(sys, c, p, 0);
                self.on_path(c, path, |path| Op::Readlink { path })
            }
            libc::SYS_chmod | libc::SYS_fchmodat | libc::SYS_fchmodat2 => {
                let mode = if c.nr as i64 == libc::SYS_chmod {
                    a[1]
                } else {
                    a[2]
                };
                let path = self.arg_path(sys, c, p, 0);
                self.on_path(c, path, |path| Op::Chmod {
                    path,
                    mode: mode as u32,
                })
            }
            libc::SYS_fchmod => self.on_fd(
                c,
                p,
                fd,
                Op::Fchmod {
                    fd,
                    mode: a[1] as u32,
                },
            ),
            libc::SYS_chown | libc::SYS_lchown => {
                let path = self.arg_path(sys, c, p, 0);
                let follow = c.nr as i64 == libc::SYS_chown;
                self.on_path(c, path, |path| Op::Chown {
                    path,
                    uid: a[1] as u32,
                    gid: a[2] as u32,
                    follow,
                })
            }
            libc::SYS_fchown => self.on_fd(
                c,
                p,
                fd,
                Op::Fchown {
                    fd,
                    uid: a[1] as u32,
                    gid: a[2] as u32,
                },
            ),
            libc::SYS_fchownat => {
                let (uid, gid, flags) = (a[2] as u32, a[3] as u32, a[4]);
                let empty = self.path_bytes(c.path1).is_none_or(|b| b.is_empty());
                if empty && flags & AT_EMPTY_PATH != 0 {
                    if fd == AT_FDCWD {
                        let cwd = p.cwd.clone();
                        self.on_path(c, cwd, |path| Op::Chown {
                            path,
                            uid,
                            gid,
                            follow: true,
                        })
                    } else {
                        self.on_fd(c, p, fd, Op::Fchown { fd, uid, gid })
                    }
                } else {
                    let path = self.arg_path(sys, c, p, 0);
                    self.on_path(c, path, |path| Op::Chown {
                        path,
                        uid,
                        gid,
                        follow: flags & AT_SYMLINK_NOFOLLOW == 0,
                    })
                }
            }
            libc::SYS_utime | libc::SYS_utimes => {
                let path = self.arg_path(sys, c, p, 0);
                self.on_path(c, path, |path| Op::Utimes { path })
            }
            libc::SYS_futimesat | libc::SYS_utimensat => {
                if self.path_bytes(c.path1).is_none() && fd != AT_FDCWD {
                    self.on_fd(c, p, fd, Op::Futimes { fd })
                } else {
                    let path = self.arg_path(sys, c, p, 0);
                    self.on_path(c, path, |path| Op::Utimes { path })
                }
            }
            libc::SYS_mmap => {
                let mfd = a[4] as i32;
                // Whatever was mapped there before is gone (a MAP_FIXED mapping replaces it;
                // any other lands where nothing is mapped).
                if ok {
                    p.unmap(c.ret as u64, a[1]);
                }
                if a[3] & MAP_ANONYMOUS != 0 || mfd < 0 {
                    return None;
                }
                let inside = p.fds.get(&mfd).is_some_and(|f| f.rel.is_some());
                if ok {
                    p.maps
                        .push((c.ret as u64, a[1].next_multiple_of(PAGE), mfd, inside));
                }
                self.on_fd(
                    c,
                    p,
                    mfd,
                    Op::Mmap {
                        fd: mfd,
                        len: a[1],
                        off: a[5],
                        prot: a[2] as i32,
                        flags: a[3] as i32,
                    },
                )
            }
            libc::SYS_munmap if ok => p.unmap(a[0], a[1]),
            libc::SYS_msync => match p.map_at(a[0]) {
                Some((mfd, true)) => self.push(
                    c,
                    Op::Msync {
                        fd: mfd,
                        len: a[1],
                        flags: a[2] as i32,
                    },
                ),
                _ => self.out.outside += 1,
            },
            libc::SYS_chdir if ok => {
                p.cwd = self.arg_path(sys, c, p, 0);
            }
            libc::SYS_fchdir if ok => {
                p.cwd = p.fds.get(&fd).and_then(|f| f.path.clone());
            }
            libc::SYS_clone | libc::SYS_clone3 | libc::SYS_fork | libc::SYS_vfork => {
                let flags = match c.nr as i64 {
                    libc::SYS_clone => a[0],
                    libc::SYS_clone3 => extra.unwrap_or(0),
                    _ => 0,
                };
                if c.ret > 0 && flags & CLONE_THREAD == 0 {
                    let child = c.ret as u32;
                    self.push(c, Op::Fork { child });
                    return Some(child);
                }
            }
            _ => {}
        }
        None
    }

    fn dup(&mut self, c: &Call, p: &mut Process, fd: i32, cloexec: bool) {
        let old = p.fds.get(&fd).cloned();
        if c.ret >= 0 {
            let mut new = old.clone().unwrap_or_default();
            new.cloexec = cloexec;
            p.fds.insert(c.ret as i32, new);
        }
        if old.is_some_and(|f| f.rel.is_some()) {
            self.push(
                c,
                Op::Dup {
                    fd,
                    new_fd: c.ret as i32,
                },
            )
        } else {
            self.out.outside += 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::{Calls, KIND_CALL, KIND_PATH_CALL};

    /// Builds calls as the kernel would send them.
    struct Script {
        calls: Calls,
        t: u64,
    }

    impl Script {
        fn new() -> Script {
            Script {
                calls: Calls::default(),
                t: 1_000,
            }
        }

        fn call(&mut self, pid: u32, nr: i64, args: &[u64], ret: i64, paths: &[&str]) {
            let mut a = [0u64; 6];
            a[..args.len()].copy_from_slice(args);
            let mut keep = |p: Option<&&str>| match p {
                Some(p) => {
                    let start = self.calls.arena.len() as u32;
                    self.calls.arena.extend_from_slice(p.as_bytes());
                    (start, p.len() as u32)
                }
                None => (0, u32::MAX),
            };
            let path1 = keep(paths.first());
            let path2 = keep(paths.get(1));
            self.t += 10;
            self.calls.calls.push(Call {
                kind: if paths.is_empty() {
                    KIND_CALL
                } else {
                    KIND_PATH_CALL
                },
                nr: nr as u32,
                pid,
                tid: pid,
                enter_ns: self.t,
                exit_ns: self.t + 5,
                ret,
                args: a,
                path1,
                path2,
                ..Call::default()
            });
        }

        fn exec(&mut self, pid: u32) {
            self.t += 10;
            self.calls.calls.push(Call {
                kind: KIND_EXEC,
                nr: 59,
                pid,
                tid: pid,
                enter_ns: self.t,
                exit_ns: self.t,
                ..Call::default()
            });
        }

        /// A successful read-only open of `path` as descriptor `fd`.
        fn open(&mut self, pid: u32, path: &str, fd: i64) {
            self.call(
                pid,
                libc::SYS_openat,
                &[AT, 0, libc::O_RDONLY as u64, 0],
                fd,
                &[path],
            );
        }

        /// A successful mmap or mremap (`nr`) with these arguments, at address `at`.
        fn map(&mut self, pid: u32, nr: i64, args: &[u64], at: u64) {
            self.call(pid, nr, args, at as i64, &[]);
        }

        /// A wait of `ns` for I/O in a fault at `addr`.
        fn fault_wait(&mut self, pid: u32, addr: u64, ns: u64) {
            self.t += 10;
            self.calls.calls.push(Call {
                kind: KIND_FAULT_WAIT,
                pid,
                tid: pid,
                enter_ns: self.t,
                exit_ns: self.t + ns,
                args: [addr, 0, 0, 0, 0, 0],
                ..Call::default()
            });
            self.t += ns;
        }
    }

    const AT: u64 = AT_FDCWD as u64;

    /// The replay reads the pages of the files mapped from inside the root itself: only a wait
    /// in a fault of such a mapping is the recording filesystem's time. A wait for a page of a
    /// file outside the root, or of no recorded mapping (a program's, loaded by exec), stays
    /// think time — and a mapping ends with its munmap and with exec.
    #[test]
    fn only_waits_in_faults_of_mappings_inside_the_root_are_blocked_time() {
        let root = Path::new("/srv/app");
        let mut s = Script::new();
        let (prot, private) = (libc::PROT_READ as u64, libc::MAP_PRIVATE as u64);
        s.open(10, "/srv/app/obj", 3);
        s.open(10, "/usr/lib/x.so", 4);
        s.map(10, libc::SYS_mmap, &[0, 8192, prot, private, 3, 0], 0x10000);
        s.map(10, libc::SYS_mmap, &[0, 8192, prot, private, 4, 0], 0x20000);
        s.fault_wait(10, 0x11000, 700);
        s.fault_wait(10, 0x20000, 5_000);
        s.fault_wait(10, 0x90000, 3_000);
        s.call(10, libc::SYS_fstat, &[3, 0], 0, &[]);
        // Unmapped: the same address is no longer the root's.
        s.call(10, libc::SYS_munmap, &[0x10000, 8192], 0, &[]);
        s.fault_wait(10, 0x10000, 900);
        s.call(10, libc::SYS_fstat, &[3, 0], 0, &[]);
        // Mapped again, carried past a call outside the root to the next in it; gone at exec.
        s.map(10, libc::SYS_mmap, &[0, 4096, prot, private, 3, 0], 0x10000);
        s.fault_wait(10, 0x10000, 400);
        s.call(10, libc::SYS_fstat, &[4, 0], 0, &[]);
        s.call(10, libc::SYS_fstat, &[3, 0], 0, &[]);
        s.exec(10);
        s.fault_wait(10, 0x10000, 800);
        s.open(10, "/srv/app/obj", 3);
        let processes = HashMap::from([(10, Process::new(root, Some(root.into()), vec![]))]);
        let r = resolve(root, s.calls, 1_000, processes);
        let blocked: Vec<(String, u64)> = r
            .events
            .iter()
            .map(|e| (e.op.name().to_string(), e.blocked_ns))
            .collect();
        assert_eq!(
            blocked,
            [
                ("open", 0),
                ("mmap", 0),
                ("fstat", 700),
                ("fstat", 0),
                ("mmap", 0),
                ("fstat", 400),
                ("exec", 0),
                ("open", 0)
            ]
            .map(|(n, b)| (n.to_string(), b))
        );
    }

    /// A call its thread was woken for is timed in the replay from the wakeup: only the waits
    /// in faults after the wakeup are its blocked time, not those before the thread slept.
    #[test]
    fn after_a_wakeup_only_the_waits_since_it_are_blocked_time() {
        let root = Path::new("/srv/app");
        let mut s = Script::new();
        let (prot, private) = (libc::PROT_READ as u64, libc::MAP_PRIVATE as u64);
        s.open(10, "/srv/app/obj", 3);
        s.map(10, libc::SYS_mmap, &[0, 8192, prot, private, 3, 0], 0x10000);
        s.fault_wait(10, 0x10000, 700);
        // Asleep until thread 20 wakes it; a fault after that.
        let woke = s.t + 5_000;
        s.t = woke + 100;
        s.fault_wait(10, 0x11000, 400);
        s.call(10, libc::SYS_fstat, &[3, 0], 0, &[]);
        let c = s.calls.calls.last_mut().unwrap();
        (c.waker_tid, c.woken_ns) = (20, woke);
        // Not woken: every wait since the previous call.
        s.fault_wait(10, 0x10000, 300);
        s.fault_wait(10, 0x11000, 20);
        s.call(10, libc::SYS_fstat, &[3, 0], 0, &[]);
        let processes = HashMap::from([(10, Process::new(root, Some(root.into()), vec![]))]);
        let r = resolve(root, s.calls, 0, processes);
        let blocked: Vec<(&str, u64, bool)> = r
            .events
            .iter()
            .map(|e| (e.op.name(), e.blocked_ns, e.woken.is_some()))
            .collect();
        assert_eq!(
            blocked,
            [
                ("open", 0, false),
                ("mmap", 0, false),
                ("fstat", 400, true),
                ("fstat", 320, false)
            ]
        );
    }

    /// The model of a process's mappings follows what the kernel does to them: a partial
    /// munmap keeps the rest, a mapping over one (anonymous included) replaces that part, mremap
    /// moves a mapping, and a child starts with its parent's.
    #[test]
    fn the_mappings_follow_munmap_mmap_over_them_mremap_and_fork() {
        let root = Path::new("/srv/app");
        let mut s = Script::new();
        let (prot, shared) = (libc::PROT_READ as u64, libc::MAP_SHARED as u64);
        let anon_fixed = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED) as u64;
        s.open(10, "/srv/app/obj", 3);
        // Four pages at 0x10000; the second unmapped, the fourth covered by an anonymous page.
        s.map(
            10,
            libc::SYS_mmap,
            &[0, 0x4000, prot, shared, 3, 0],
            0x10000,
        );
        s.call(10, libc::SYS_munmap, &[0x11000, 0x1000], 0, &[]);
        s.map(
            10,
            libc::SYS_mmap,
            &[0x13000, 100, prot, anon_fixed, u64::MAX, 0],
            0x13000,
        );
        s.fault_wait(10, 0x10000, 1);
        s.fault_wait(10, 0x11000, 10);
        s.fault_wait(10, 0x12fff, 100);
        s.fault_wait(10, 0x13000, 1_000);
        s.call(10, libc::SYS_fstat, &[3, 0], 0, &[]);
        // The third page moved (and grown) to 0x50000: waited for there, not where it was.
        s.map(10, libc::SYS_mremap, &[0x12000, 0x1000, 0x2000, 1], 0x50000);
        s.fault_wait(10, 0x12000, 10_000);
        s.fault_wait(10, 0x51000, 100_000);
        s.call(10, libc::SYS_fstat, &[3, 0], 0, &[]);
        // A child has its parent's mappings.
        s.call(10, libc::SYS_clone, &[libc::SIGCHLD as u64], 11, &[]);
        s.fault_wait(11, 0x10000, 1_000_000);
        s.call(11, libc::SYS_fstat, &[3, 0], 0, &[]);
        // Memory of no file moved (a growing heap): outside the root, not unsupported.
        s.map(10, libc::SYS_mremap, &[0x90000, 0x1000, 0x2000, 1], 0xa0000);
        let processes = HashMap::from([(10, Process::new(root, Some(root.into()), vec![]))]);
        let r = resolve(root, s.calls, 1_000, processes);
        let blocked: Vec<(u32, &str, u64)> = r
            .events
            .iter()
            .map(|e| (e.pid, e.op.name(), e.blocked_ns))
            .collect();
        assert_eq!(
            blocked,
            [
                (10, "open", 0),
                (10, "mmap", 0),
                (10, "fstat", 101),
                (10, "fstat", 100_000),
                (10, "fork", 0),
                (11, "fstat", 1_000_000)
            ]
        );
        // An mremap of a root file's mapping is unsupported (its pages move, the replay's do
        // not); the heap's is not counted so.
        assert_eq!(r.unsupported.get("mremap"), Some(&1));
    }

    #[test]
    fn descriptors_follow_dup_fork_exec_and_directories() {
        let root = Path::new("/srv/app");
        let mut s = Script::new();
        let initial = Process::new(
            root,
            Some("/srv/app/work".into()),
            vec![(0, None, false), (5, Some("/srv/app/log".into()), false)],
        );
        // openat relative to the working directory, then dup2 and a cloexec open.
        s.call(
            10,
            libc::SYS_openat,
            &[AT, 0, libc::O_RDWR as u64, 0],
            3,
            &["data"],
        );
        s.call(10, libc::SYS_dup2, &[3, 7], 7, &[]);
        let cloexec = (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_DIRECTORY) as u64;
        s.call(
            10,
            libc::SYS_openat,
            &[AT, 0, cloexec, 0],
            4,
            &["/srv/app/dir"],
        );
        // *at relative to a directory descriptor; a read on stdin (outside).
        s.call(10, libc::SYS_unlinkat, &[4, 0, 0], 0, &["old"]);
        s.call(10, libc::SYS_read, &[0, 0, 10], 10, &[]);
        // fork: the child inherits 3, 4, 5 and 7.
        s.call(10, libc::SYS_clone, &[libc::SIGCHLD as u64], 11, &[]);
        s.call(11, libc::SYS_write, &[7, 0, 4], 4, &[]);
        s.exec(11);
        // After exec the cloexec directory descriptor 4 is gone: an unknown descriptor.
        s.call(11, libc::SYS_getdents64, &[4, 0, 100], 0, &[]);
        s.call(11, libc::SYS_fchdir, &[7], -libc::ENOTDIR as i64, &[]);
        s.call(11, libc::SYS_chdir, &[0], 0, &["../other"]);
        s.call(11, libc::SYS_mkdir, &[0, 0o700], 0, &["sub"]);
        // A thread is not a process: no fork event.
        s.call(10, libc::SYS_clone, &[CLONE_THREAD | 0x100], 12, &[]);
        s.call(10, libc::SYS_close_range, &[3, u32::MAX as u64, 0], 0, &[]);
        s.call(10, libc::SYS_rename, &[0, 0], 0, &["/srv/app/a", "/tmp/b"]);
        let processes = HashMap::from([(10, initial)]);
        let r = resolve(root, s.calls, 1_000, processes);
        let ops: Vec<(u32, Op)> = r.events.iter().map(|e| (e.pid, e.op.clone())).collect();
        assert_eq!(
            ops,
            vec![
                (
                    10,
                    Op::Open {
                        path: "work/data".into(),
                        flags: libc::O_RDWR,
                        mode: 0
                    }
                ),
                (10, Op::Dup { fd: 3, new_fd: 7 }),
                (
                    10,
                    Op::Open {
                        path: "dir".into(),
                        flags: cloexec as i32,
                        mode: 0
                    }
                ),
                (
                    10,
                    Op::Unlink {
                        path: "dir/old".into()
                    }
                ),
                (10, Op::Fork { child: 11 }),
                (11, Op::Write { fd: 7, len: 4 }),
                (11, Op::Exec),
                (
                    11,
                    Op::Mkdir {
                        path: "other/sub".into(),
                        mode: 0o700
                    }
                ),
                (10, Op::Close { fd: 3 }),
                (10, Op::Close { fd: 4 }),
                (10, Op::Close { fd: 5 }),
                (10, Op::Close { fd: 7 }),
            ]
        );
        // The read on stdin, the getdents on a closed descriptor, the failed fchdir on a file
        // and the rename out of the root.
        assert_eq!(r.outside, 3, "{:?}", r.events);
        assert_eq!(r.events[0].start_ns, 10);
        assert_eq!(r.events[0].dur_ns, 5);
    }

    /// A helper thread that leaves the table (close_range with CLOSE_RANGE_UNSHARE) closes
    /// nothing of its process's; the same call from the process's first thread closes.
    #[test]
    fn a_thread_leaving_the_table_closes_nothing_of_its_process() {
        let root = Path::new("/srv/app");
        let mut s = Script::new();
        s.call(10, libc::SYS_clone, &[CLONE_THREAD | 0x100], 12, &[]);
        s.call(10, libc::SYS_close_range, &[3, u32::MAX as u64, 2], 0, &[]);
        s.calls.calls.last_mut().unwrap().tid = 12;
        s.call(10, libc::SYS_write, &[3, 0, 4], 4, &[]);
        s.call(10, libc::SYS_close_range, &[3, u32::MAX as u64, 2], 0, &[]);
        let processes = HashMap::from([(10, one_fd_inside_one_outside(root))]);
        let r = resolve(root, s.calls, 1_000, processes);
        let ops: Vec<Op> = r.events.iter().map(|e| e.op.clone()).collect();
        assert_eq!(ops, [Op::Write { fd: 3, len: 4 }, Op::Close { fd: 3 }]);
    }

    /// A process in /srv/app with descriptor 3 on a file inside it and 4 on one outside.
    fn one_fd_inside_one_outside(root: &Path) -> Process {
        Process::new(
            root,
            Some("/srv/app".into()),
            vec![
                (3, Some("/srv/app/f".into()), false),
                (4, Some("/etc/x".into()), false),
            ],
        )
    }

    #[test]
    fn unsupported_calls_are_counted_by_name_when_they_touch_the_root() {
        let root = Path::new("/srv/app");
        let mut s = Script::new();
        let p = one_fd_inside_one_outside(root);
        s.call(1, libc::SYS_copy_file_range, &[3, 0, 9, 0, 10, 0], 10, &[]);
        s.call(1, libc::SYS_fadvise64, &[4, 0, 0, 0], 0, &[]);
        s.call(1, libc::SYS_io_uring_enter, &[9, 1, 0, 0], 1, &[]);
        s.call(1, libc::SYS_setxattr, &[0, 0, 0, 0, 0], 0, &["f"]);
        let r = resolve(root, s.calls, 0, HashMap::from([(1, p)]));
        assert!(r.events.is_empty());
        let names: Vec<(&str, u64)> = r
            .unsupported
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        assert_eq!(
            names,
            [
                ("copy_file_range", 1),
                ("io_uring_enter", 1),
                ("setxattr", 1)
            ]
        );
        assert_eq!(r.outside, 1, "fadvise64 on a file outside the root");
    }

    /// chown, lchown, fchown and fchownat (of a name, not following it, and of a descriptor)
    /// are kept with the owner asked for (-1: unchanged); outside the root, counted as such.
    #[test]
    fn the_chown_family_is_kept_with_its_owner_and_whether_it_follows() {
        let root = Path::new("/srv/app");
        let mut s = Script::new();
        let p = one_fd_inside_one_outside(root);
        let unchanged = u32::MAX as u64;
        s.call(1, libc::SYS_chown, &[0, 1000, unchanged], 0, &["a"]);
        s.call(1, libc::SYS_lchown, &[0, 0, 0], 0, &["l"]);
        s.call(1, libc::SYS_fchown, &[3, 0, 1000], 0, &[]);
        s.call(1, libc::SYS_fchown, &[4, 0, 0], 0, &[]);
        s.call(1, libc::SYS_fchownat, &[AT, 0, 5, 6, 0x100], 0, &["d/b"]);
        s.call(1, libc::SYS_fchownat, &[3, 0, 7, 8, 0x1000], 0, &[""]);
        s.call(1, libc::SYS_chown, &[0, 0, 0], 0, &["/etc/passwd"]);
        let r = resolve(root, s.calls, 0, HashMap::from([(1, p)]));
        let ops: Vec<Op> = r.events.into_iter().map(|e| e.op).collect();
        let chown = |path: &str, uid: u32, gid: u32, follow: bool| Op::Chown {
            path: path.into(),
            uid,
            gid,
            follow,
        };
        assert_eq!(
            ops,
            [
                chown("a", 1000, u32::MAX, true),
                chown("l", 0, 0, false),
                Op::Fchown {
                    fd: 3,
                    uid: 0,
                    gid: 1000
                },
                chown("d/b", 5, 6, false),
                Op::Fchown {
                    fd: 3,
                    uid: 7,
                    gid: 8
                },
            ]
        );
        assert_eq!(r.outside, 2, "fchown of /etc/x and chown of /etc/passwd");
        assert!(r.unsupported.is_empty(), "{:?}", r.unsupported);
    }

    #[test]
    fn calls_that_cannot_be_placed_are_unresolved_never_outside() {
        let root = Path::new("/srv/app");
        let mut s = Script::new();
        let p = Process::new(root, Some("/srv/app".into()), vec![]);
        // An open whose path the kernel could not copy at entry (it succeeded: fd 3).
        s.call(1, libc::SYS_openat, &[AT, 0x7000, 0, 0], 3, &[]);
        s.calls.calls.last_mut().unwrap().flags = FLAG_PATH1_FAULT;
        // The same with a bad pointer: it failed with EFAULT, nothing to place.
        s.call(
            1,
            libc::SYS_openat,
            &[AT, 0x8000, 0, 0],
            -(libc::EFAULT as i64),
            &[],
        );
        s.calls.calls.last_mut().unwrap().flags = FLAG_PATH1_FAULT;
        // utimensat(fd, NULL): no path at all.
        s.call(
            1,
            libc::SYS_utimensat,
            &[9, 0, 0, 0],
            -(libc::EBADF as i64),
            &[],
        );
        s.calls.calls.last_mut().unwrap().flags = FLAG_PATH1_FAULT;
        // A relative path against descriptor 9, which the model does not know, succeeded.
        s.call(1, libc::SYS_mkdirat, &[9, 0, 0o755], 0, &["d"]);
        // The same call failing (EBADF): outside.
        s.call(
            1,
            libc::SYS_mkdirat,
            &[9, 0, 0o755],
            -(libc::EBADF as i64),
            &["d"],
        );
        let r = resolve(root, s.calls, 0, HashMap::from([(1, p)]));
        assert_eq!(r.unresolved, 2, "{r:?}");
        assert!(r.events.is_empty(), "{:?}", r.events);
    }

    #[test]
    fn a_name_that_is_not_utf8_inside_the_root_is_unresolved_never_outside() {
        let root = Path::new("/srv/app");
        let mut s = Script::new();
        let p = Process::new(root, Some("/srv/app".into()), vec![]);
        s.call(1, libc::SYS_mkdir, &[0, 0o755], 0, &["placeholder"]);
        // The path's bytes: "caf\xe9" (Latin-1), not UTF-8.
        let start = s.calls.arena.len() as u32;
        s.calls.arena.extend_from_slice(b"caf\xe9");
        s.calls.calls.last_mut().unwrap().path1 = (start, 4);
        // Outside the root, the same name is only outside.
        s.call(1, libc::SYS_mkdir, &[0, 0o755], 0, &["placeholder"]);
        let start = s.calls.arena.len() as u32;
        s.calls.arena.extend_from_slice(b"/tmp/caf\xe9");
        s.calls.calls.last_mut().unwrap().path1 = (start, 9);
        let r = resolve(root, s.calls, 0, HashMap::from([(1, p)]));
        assert_eq!((r.unresolved, r.outside), (1, 2), "{r:?}");
        assert!(r.events.is_empty());
    }

    #[test]
    fn climbing_out_of_a_symbolic_link_is_unresolved_never_a_lexical_guess() {
        let root = Path::new("/srv/app");
        let mut s = Script::new();
        let p = Process::new(root, Some("/srv/app".into()), vec![]);
        // l is a link in the initial tree; m is made by the application.
        s.call(1, libc::SYS_stat, &[0, 0], 0, &["l/../x"]);
        s.call(1, libc::SYS_symlink, &[0, 0], 0, &["/elsewhere", "m"]);
        s.call(1, libc::SYS_open, &[0, 0x241, 0o644], 3, &["m/../leak"]);
        // Through a link without `..`, and `..` through a directory: resolved as before.
        s.call(1, libc::SYS_stat, &[0, 0], 0, &["l/y"]);
        s.call(1, libc::SYS_stat, &[0, 0], 0, &["d/../z"]);
        let links = HashSet::from(["l".to_string()]);
        let r = resolve_with_links(root, s.calls, 0, HashMap::from([(1, p)]), links);
        assert_eq!(r.unresolved, 2, "{r:?}");
        let paths: Vec<Vec<&str>> = r.events.iter().map(|e| e.op.paths()).collect();
        assert_eq!(paths, [vec!["m"], vec!["l/y"], vec!["z"]]);
    }

    /// A wakeup goes with the woken thread's next event, once; a waker that made no call of the
    /// trace between its own wakeup and this one (it only passed data on) is followed back to
    /// the thread that woke it; one that did is not.
    #[test]
    fn a_wakeup_names_the_thread_the_call_waited_for_past_relays() {
        let root = Path::new("/srv/app");
        let stat = |s: &mut Script, pid: u32, path: &str| {
            s.call(pid, libc::SYS_newfstatat, &[AT, 0, 0, 0], 0, &[path]);
        };
        let woken = |s: &mut Script, waker: u32, at: u64| {
            let c = s.calls.calls.last_mut().unwrap();
            (c.waker_tid, c.woken_ns) = (waker, at);
        };
        let mut s = Script::new();
        // 10 calls in the root; 20 (a relay) calls only outside it, before it is woken.
        stat(&mut s, 10, "/srv/app/a");
        stat(&mut s, 20, "/etc/relay");
        // 30 is woken by 20 at 5,000, which was woken by 10 at 4,000; 40 by 10 directly.
        s.t = 6_000;
        stat(&mut s, 20, "/etc/relay");
        woken(&mut s, 10, 4_000);
        stat(&mut s, 30, "/srv/app/b");
        woken(&mut s, 20, 5_000);
        stat(&mut s, 40, "/srv/app/c");
        woken(&mut s, 10, 4_500);
        // 30's next call reports the same wakeup again: not a new one.
        stat(&mut s, 30, "/srv/app/d");
        woken(&mut s, 20, 5_000);
        // 50 is woken by 10 after 10 made a call in the root since 10's own wakeup: 10 is not a
        // relay.
        s.t = 8_000;
        stat(&mut s, 10, "/srv/app/e");
        woken(&mut s, 60, 7_000);
        stat(&mut s, 50, "/srv/app/f");
        woken(&mut s, 10, 8_015);
        let r = resolve(root, s.calls, 0, HashMap::new());
        let of = |path: &str| {
            r.events
                .iter()
                .find(|e| matches!(&e.op, Op::Stat { path: p, .. } if p == path))
                .unwrap()
                .woken
        };
        assert_eq!(of("a"), None);
        assert_eq!(
            of("b"),
            Some(Woken {
                tid: 10,
                at_ns: 4_000
            }),
            "past the relay"
        );
        assert_eq!(
            of("c"),
            Some(Woken {
                tid: 10,
                at_ns: 4_500
            })
        );
        assert_eq!(of("d"), None, "the same wakeup goes with one event");
        assert_eq!(
            of("f"),
            Some(Woken {
                tid: 10,
                at_ns: 8_015
            }),
            "10 called since"
        );
    }
}
