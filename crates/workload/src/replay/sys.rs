//! One call issued as the system call it was, inside the replay's root and never out of it:
//! every path is resolved from the root's descriptor by openat2(2) with RESOLVE_BENEATH (and no
//! magic links), so neither `..` nor a symbolic link — one the trace made included — leads
//! out. Calls that take no RESOLVE flags act on a name in a directory opened that way (mkdir,
//! unlink, rename, link, symlink, readlink: the last component, which they do not follow), or
//! on the file itself opened that way as O_PATH (stat, access, chmod, chown, utimes, truncate:
//! through its descriptor). A lookup that would leave the root fails with EXDEV, and is
//! counted as refused. Nothing here allocates: buffers and names were made before.

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};

use super::plan::{Act, Call, Name, Plan, NO_MAP};

/// Reads and writes move at most this much through one buffer; a longer one is one vectored
/// call of several pieces of it.
pub const PIECE: usize = 1 << 20;
/// The most pieces of one vectored call (IOV_MAX).
pub const MAX_PIECES: usize = 1024;

const RESOLVE: u64 = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;

/// What one thread of the replay issues calls with: its buffers.
pub struct Buffers {
    pub read: crate::fileio::AlignedBuf,
    pub data: crate::data::DataSource,
    pub iov: Vec<libc::iovec>,
}

// SAFETY: the iovecs point into the buffers' own memory and are rebuilt before every call;
// a lane (and its buffers) is used by one thread at a time.
unsafe impl Send for Buffers {}

impl Buffers {
    pub fn new(seed: u64) -> Buffers {
        Buffers {
            read: crate::fileio::AlignedBuf::new(PIECE),
            data: crate::data::DataSource::new(crate::data::DataKind::Random, seed, PIECE),
            iov: Vec::with_capacity(MAX_PIECES),
        }
    }
}

/// The replay's shared state that calls act on: the root, the descriptor table, the mappings.
pub struct Table {
    pub root: i32,
    pub slots: Vec<AtomicI32>,
    /// Each mapping's address and length (0: none).
    pub maps: Vec<(AtomicUsize, AtomicUsize)>,
    /// Mappings made and not yet unmapped, and how many there may be before the next
    /// [`Table::sweep`].
    live: AtomicUsize,
    sweep_at: AtomicUsize,
    /// Half of what a process may map at once (vm.max_map_count): the rest is fsbench's own,
    /// its threads' stacks and its libraries.
    cap: usize,
    sweeping: AtomicBool,
}

/// What a process may map at once where /proc does not say (the kernel's default).
const MAX_MAP_COUNT: usize = 65_530;

impl Table {
    pub fn new(root: i32, plan: &Plan) -> Table {
        let limit = std::fs::read_to_string("/proc/sys/vm/max_map_count")
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(MAX_MAP_COUNT);
        let cap = (limit / 2).max(1);
        Table {
            root,
            slots: (0..plan.slots).map(|_| AtomicI32::new(-1)).collect(),
            maps: (0..plan.maps)
                .map(|_| (AtomicUsize::new(0), AtomicUsize::new(0)))
                .collect(),
            live: AtomicUsize::new(0),
            sweep_at: AtomicUsize::new(cap),
            cap,
            sweeping: AtomicBool::new(false),
        }
    }

    /// Unmaps every mapping that no msync of the trace uses. Mappings are otherwise kept to the
    /// end, as the application's munmap is not replayed (its time is in the think time); a
    /// trace that maps more files over its life than a process may hold at once (git reading
    /// loose objects, a long build) would then fail its later mmaps with ENOMEM. One thread
    /// sweeps at a time (the others go on); nothing is allocated.
    fn sweep(&self, plan: &Plan) {
        if self.sweeping.swap(true, Ordering::AcqRel) {
            return;
        }
        for (i, (addr, len)) in self.maps.iter().enumerate() {
            if plan.synced[i] {
                continue;
            }
            let a = addr.swap(0, Ordering::AcqRel);
            if a != 0 {
                // SAFETY: a mapping this table made, of this length, taken out of the table
                // above so that it is unmapped once.
                unsafe { libc::munmap(a as *mut c_void, len.load(Ordering::Acquire)) };
                self.live.fetch_sub(1, Ordering::AcqRel);
            }
        }
        // The mappings kept (those an msync uses) do not make every later mmap sweep again.
        let kept = self.live.load(Ordering::Acquire);
        self.sweep_at
            .store(kept.max(self.cap / 2) + self.cap / 2, Ordering::Release);
        self.sweeping.store(false, Ordering::Release);
    }

    #[inline]
    fn fd(&self, slot: u32) -> i32 {
        self.slots[slot as usize].load(Ordering::Acquire)
    }

    fn set(&self, slot: u32, fd: i32) {
        let old = self.slots[slot as usize].swap(fd, Ordering::AcqRel);
        if old >= 0 {
            close(old);
        }
    }

    /// Closes the descriptor in `slot`, if one is open.
    pub fn close_slot(&self, slot: u32) -> i64 {
        let old = self.slots[slot as usize].swap(-1, Ordering::AcqRel);
        if old < 0 {
            return -(libc::EBADF as i64);
        }
        close(old)
    }

    /// Unmaps every mapping (the replay's end).
    pub fn unmap_all(&self) {
        for (addr, len) in &self.maps {
            let a = addr.swap(0, Ordering::AcqRel);
            if a != 0 {
                // SAFETY: a mapping this table made, of this length, unmapped once.
                unsafe { libc::munmap(a as *mut c_void, len.load(Ordering::Acquire)) };
            }
        }
    }
}

/// A system call's return as the trace spells it: the value, or `-errno`.
#[inline]
fn ret(r: libc::c_long) -> i64 {
    if r < 0 {
        -(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO) as i64)
    } else {
        r
    }
}

fn close(fd: i32) -> i64 {
    // SAFETY: a descriptor the replay opened and owns.
    ret(unsafe { libc::syscall(libc::SYS_close, fd) })
}

/// openat2 from `dir` with RESOLVE_BENEATH: the descriptor, or `-errno`.
#[inline]
fn openat2(dir: i32, name: &CStr, flags: i32, mode: u32) -> i64 {
    let creates = super::plan::creates(flags);
    // SAFETY: open_how is plain data (its fields are set below; zero is "nothing").
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.mode = if creates { (mode & 0o7777) as u64 } else { 0 };
    how.resolve = RESOLVE;
    // SAFETY: name is NUL-terminated; how is a valid open_how of the size passed.
    ret(unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            name.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    })
}

/// A directory descriptor that is the root (not closed) or one this call opened (closed).
struct Dir {
    fd: i32,
    owned: bool,
}

impl Drop for Dir {
    fn drop(&mut self) {
        if self.owned {
            close(self.fd);
        }
    }
}

/// The directory holding `name`, opened beneath the root.
#[inline]
fn parent(root: i32, name: &Name) -> Result<Dir, i64> {
    match &name.parent {
        None => Ok(Dir {
            fd: root,
            owned: false,
        }),
        Some(dir) => {
            let fd = openat2(root, dir, libc::O_PATH | libc::O_DIRECTORY, 0);
            if fd < 0 {
                Err(fd)
            } else {
                Ok(Dir {
                    fd: fd as i32,
                    owned: true,
                })
            }
        }
    }
}

/// The file `name` itself (or, `follow` false, a symbolic link itself), opened beneath the
/// root as O_PATH.
#[inline]
fn target(root: i32, name: &Name, follow: bool) -> Result<Dir, i64> {
    let flags = libc::O_PATH | if follow { 0 } else { libc::O_NOFOLLOW };
    let fd = openat2(root, &name.full, flags, 0);
    if fd < 0 {
        Err(fd)
    } else {
        Ok(Dir {
            fd: fd as i32,
            owned: true,
        })
    }
}

/// `/proc/self/fd/N` in `buf`: the file of a descriptor by a path that calls without a
/// descriptor form (chmod, truncate, utimes, access) follow to that very file.
fn proc_path(fd: i32, buf: &mut [u8; 32]) -> *const c_char {
    let prefix = b"/proc/self/fd/";
    buf[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 10];
    let (mut n, mut len) = (fd.max(0) as u32, 0);
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..len {
        buf[prefix.len() + i] = digits[len - 1 - i];
    }
    buf[prefix.len() + len] = 0;
    buf.as_ptr() as *const c_char
}

/// What a call did: its return (`-errno` on failure) and the bytes it moved.
#[derive(Debug, Clone, Copy)]
pub struct Done {
    pub ret: i64,
    pub bytes: u64,
}

/// Fills `iov` with pieces of `buf` adding up to `len` (at most [`MAX_PIECES`] of them).
fn pieces(iov: &mut Vec<libc::iovec>, buf: *mut u8, len: u64) -> u64 {
    iov.clear();
    let mut left = len.min((PIECE * MAX_PIECES) as u64);
    let total = left;
    while left > 0 {
        let n = left.min(PIECE as u64) as usize;
        iov.push(libc::iovec {
            iov_base: buf as *mut c_void,
            iov_len: n,
        });
        left -= n as u64;
    }
    total
}

/// Issues `call`.
#[inline]
pub fn issue(call: &Call, plan: &Plan, table: &Table, buf: &mut Buffers) -> Done {
    let root = table.root;
    let name = |n: u32| &plan.names[n as usize];
    let plain = |r: i64| Done { ret: r, bytes: 0 };
    // SAFETY (every unsafe block below): the arguments are descriptors of the table (or -1,
    // which the kernel refuses), NUL-terminated names made by the plan, and buffers of the
    // lengths passed.
    match call.act {
        Act::Open {
            name: n,
            flags,
            mode,
            slot,
            replaces,
        } => {
            if let Some(old) = replaces {
                table.close_slot(old);
            }
            let fd = openat2(root, &name(n).full, flags, mode);
            if fd >= 0 {
                table.set(slot, fd as i32);
            }
            plain(fd)
        }
        Act::Close { slot } => plain(table.close_slot(slot)),
        Act::Dup {
            from,
            slot,
            replaces,
        } => {
            if let Some(old) = replaces {
                table.close_slot(old);
            }
            let fd = ret(unsafe {
                libc::syscall(libc::SYS_fcntl, table.fd(from), libc::F_DUPFD_CLOEXEC, 0)
            });
            if fd >= 0 {
                table.set(slot, fd as i32);
            }
            plain(fd)
        }
        Act::Read {
            slot,
            len,
            off,
            vector,
        } => {
            let fd = table.fd(slot);
            let base = buf.read.as_mut_slice().as_mut_ptr();
            let r = if !vector && len <= PIECE as u64 {
                match off {
                    None => ret(unsafe { libc::syscall(libc::SYS_read, fd, base, len) }),
                    Some(off) => {
                        ret(unsafe { libc::syscall(libc::SYS_pread64, fd, base, len, off) })
                    }
                }
            } else {
                pieces(&mut buf.iov, base, len);
                let (iov, n) = (buf.iov.as_ptr(), buf.iov.len());
                match off {
                    None => ret(unsafe { libc::syscall(libc::SYS_readv, fd, iov, n) }),
                    Some(off) => ret(unsafe {
                        libc::syscall(libc::SYS_preadv, fd, iov, n, off as i64, 0i64)
                    }),
                }
            };
            Done {
                ret: r,
                bytes: r.max(0) as u64,
            }
        }
        Act::Write {
            slot,
            len,
            off,
            vector,
        } => {
            let fd = table.fd(slot);
            let r = if !vector && len <= PIECE as u64 {
                let data = buf.data.next(len as usize).as_ptr();
                match off {
                    None => ret(unsafe { libc::syscall(libc::SYS_write, fd, data, len) }),
                    Some(off) => {
                        ret(unsafe { libc::syscall(libc::SYS_pwrite64, fd, data, len, off) })
                    }
                }
            } else {
                // Pieces of one fresh record (the kernel only reads them).
                let piece = len.min(PIECE as u64) as usize;
                let data = buf.data.next(piece).as_ptr() as *mut u8;
                pieces(&mut buf.iov, data, len);
                let (iov, n) = (buf.iov.as_ptr(), buf.iov.len());
                match off {
                    None => ret(unsafe { libc::syscall(libc::SYS_writev, fd, iov, n) }),
                    Some(off) => ret(unsafe {
                        libc::syscall(libc::SYS_pwritev, fd, iov, n, off as i64, 0i64)
                    }),
                }
            };
            Done {
                ret: r,
                bytes: r.max(0) as u64,
            }
        }
        Act::Lseek { slot, off, whence } => plain(ret(unsafe {
            libc::syscall(libc::SYS_lseek, table.fd(slot), off, whence)
        })),
        Act::Fsync { slot } => plain(ret(unsafe {
            libc::syscall(libc::SYS_fsync, table.fd(slot))
        })),
        Act::Fdatasync { slot } => plain(ret(unsafe {
            libc::syscall(libc::SYS_fdatasync, table.fd(slot))
        })),
        Act::SyncFileRange {
            slot,
            off,
            len,
            flags,
        } => plain(ret(unsafe {
            libc::syscall(libc::SYS_sync_file_range, table.fd(slot), off, len, flags)
        })),
        Act::Syncfs { slot } => plain(ret(unsafe {
            libc::syscall(libc::SYS_syncfs, table.fd(slot))
        })),
        // The filesystem under test, not every filesystem of the host.
        Act::Sync => plain(ret(unsafe { libc::syscall(libc::SYS_syncfs, root) })),
        Act::Ftruncate { slot, len } => plain(ret(unsafe {
            libc::syscall(libc::SYS_ftruncate, table.fd(slot), len)
        })),
        Act::Fallocate {
            slot,
            mode,
            off,
            len,
        } => plain(ret(unsafe {
            libc::syscall(libc::SYS_fallocate, table.fd(slot), mode, off, len)
        })),
        Act::Fstat { slot } => {
            let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
            plain(ret(unsafe {
                libc::syscall(libc::SYS_fstat, table.fd(slot), st.as_mut_ptr())
            }))
        }
        Act::Getdents { slot, len } => {
            let n = len.min(PIECE as u64);
            let base = buf.read.as_mut_slice().as_mut_ptr();
            plain(ret(unsafe {
                libc::syscall(libc::SYS_getdents64, table.fd(slot), base, n)
            }))
        }
        Act::Fchmod { slot, mode } => plain(ret(unsafe {
            libc::syscall(libc::SYS_fchmod, table.fd(slot), mode)
        })),
        Act::Fchown { slot, uid, gid } => plain(chown_fd(table.fd(slot), uid, gid)),
        Act::Futimes { slot } => plain(ret(unsafe {
            libc::syscall(
                libc::SYS_utimensat,
                table.fd(slot),
                std::ptr::null::<c_char>(),
                std::ptr::null::<libc::timespec>(),
                0,
            )
        })),
        Act::Stat { name: n, follow } => plain(match target(root, name(n), follow) {
            Err(e) => e,
            Ok(file) => {
                let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
                ret(unsafe {
                    libc::syscall(
                        libc::SYS_newfstatat,
                        file.fd,
                        c"".as_ptr(),
                        st.as_mut_ptr(),
                        libc::AT_EMPTY_PATH,
                    )
                })
            }
        }),
        Act::Access { name: n, mode } => plain(match target(root, name(n), true) {
            Err(e) => e,
            Ok(file) => {
                let mut p = [0u8; 32];
                let path = proc_path(file.fd, &mut p);
                ret(unsafe { libc::syscall(libc::SYS_faccessat, libc::AT_FDCWD, path, mode) })
            }
        }),
        // The name in its directory, not the file opened as O_PATH: readlinkat of an empty
        // path says ENOENT for a file that is not a symbolic link, where the call said EINVAL.
        Act::Readlink { name: n } => plain(match parent(root, name(n)) {
            Err(e) => e,
            Ok(dir) => {
                let base = buf.read.as_mut_slice().as_mut_ptr();
                ret(unsafe {
                    libc::syscall(
                        libc::SYS_readlinkat,
                        dir.fd,
                        name(n).base.as_ptr(),
                        base,
                        libc::PATH_MAX as usize,
                    )
                })
            }
        }),
        Act::Chmod { name: n, mode } => plain(match target(root, name(n), true) {
            Err(e) => e,
            Ok(file) => {
                let mut p = [0u8; 32];
                let path = proc_path(file.fd, &mut p);
                ret(unsafe {
                    libc::syscall(libc::SYS_fchmodat, libc::AT_FDCWD, path, mode & 0o7777)
                })
            }
        }),
        // The file itself, opened as O_PATH (following the name or not, as the call did).
        Act::Chown {
            name: n,
            uid,
            gid,
            follow,
        } => plain(match target(root, name(n), follow) {
            Err(e) => e,
            Ok(file) => chown_fd(file.fd, uid, gid),
        }),
        Act::Utimes { name: n } => plain(match target(root, name(n), true) {
            Err(e) => e,
            Ok(file) => {
                let mut p = [0u8; 32];
                let path = proc_path(file.fd, &mut p);
                ret(unsafe {
                    libc::syscall(
                        libc::SYS_utimensat,
                        libc::AT_FDCWD,
                        path,
                        std::ptr::null::<libc::timespec>(),
                        0,
                    )
                })
            }
        }),
        Act::Truncate { name: n, len } => plain(match target(root, name(n), true) {
            Err(e) => e,
            Ok(file) => {
                let mut p = [0u8; 32];
                let path = proc_path(file.fd, &mut p);
                ret(unsafe { libc::syscall(libc::SYS_truncate, path, len) })
            }
        }),
        Act::Mkdir { name: n, mode } => plain(match parent(root, name(n)) {
            Err(e) => e,
            Ok(dir) => ret(unsafe {
                libc::syscall(libc::SYS_mkdirat, dir.fd, name(n).base.as_ptr(), mode)
            }),
        }),
        Act::Rmdir { name: n } => plain(match parent(root, name(n)) {
            Err(e) => e,
            Ok(dir) => ret(unsafe {
                libc::syscall(
                    libc::SYS_unlinkat,
                    dir.fd,
                    name(n).base.as_ptr(),
                    libc::AT_REMOVEDIR,
                )
            }),
        }),
        Act::Unlink { name: n } => plain(match parent(root, name(n)) {
            Err(e) => e,
            Ok(dir) => {
                ret(unsafe { libc::syscall(libc::SYS_unlinkat, dir.fd, name(n).base.as_ptr(), 0) })
            }
        }),
        Act::Rename { from, to, flags } => {
            plain(match (parent(root, name(from)), parent(root, name(to))) {
                (Err(e), _) | (_, Err(e)) => e,
                (Ok(a), Ok(b)) => ret(unsafe {
                    libc::syscall(
                        libc::SYS_renameat2,
                        a.fd,
                        name(from).base.as_ptr(),
                        b.fd,
                        name(to).base.as_ptr(),
                        flags,
                    )
                }),
            })
        }
        Act::Link { from, to } => plain(match (parent(root, name(from)), parent(root, name(to))) {
            (Err(e), _) | (_, Err(e)) => e,
            (Ok(a), Ok(b)) => ret(unsafe {
                libc::syscall(
                    libc::SYS_linkat,
                    a.fd,
                    name(from).base.as_ptr(),
                    b.fd,
                    name(to).base.as_ptr(),
                    0,
                )
            }),
        }),
        Act::Symlink {
            target: text,
            name: n,
        } => plain(match parent(root, name(n)) {
            Err(e) => e,
            Ok(dir) => ret(unsafe {
                libc::syscall(
                    libc::SYS_symlinkat,
                    name(text).full.as_ptr(),
                    dir.fd,
                    name(n).base.as_ptr(),
                )
            }),
        }),
        Act::Mmap {
            slot,
            map,
            len,
            off,
            prot,
            flags,
        } => {
            // Never at a fixed address, never executable: the mapping's place is the kernel's.
            let prot = prot & (libc::PROT_READ | libc::PROT_WRITE);
            let flags = flags
                & (libc::MAP_SHARED
                    | libc::MAP_PRIVATE
                    | libc::MAP_SHARED_VALIDATE
                    | libc::MAP_POPULATE
                    | libc::MAP_NORESERVE);
            let addr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len as usize,
                    prot,
                    flags,
                    table.fd(slot),
                    off as libc::off_t,
                )
            };
            if addr == libc::MAP_FAILED {
                plain(ret(-1))
            } else {
                if prot & libc::PROT_READ != 0 {
                    touch(addr.cast(), len, off, table.fd(slot));
                }
                let (a, l) = &table.maps[map as usize];
                l.store(len as usize, Ordering::Release);
                a.store(addr as usize, Ordering::Release);
                let live = table.live.fetch_add(1, Ordering::AcqRel) + 1;
                if live >= table.sweep_at.load(Ordering::Acquire) {
                    table.sweep(plan);
                }
                plain(0)
            }
        }
        Act::Msync { map, len, flags } => {
            if map == NO_MAP {
                return plain(-(libc::ENOMEM as i64));
            }
            let (a, l) = &table.maps[map as usize];
            let addr = a.load(Ordering::Acquire);
            if addr == 0 {
                return plain(-(libc::ENOMEM as i64));
            }
            let len = (len as usize).min(l.load(Ordering::Acquire));
            plain(ret(unsafe {
                libc::syscall(libc::SYS_msync, addr, len, flags)
            }))
        }
        Act::Fork { copies: (a, b) } => {
            for &(from, to) in &plan.copies[a as usize..b as usize] {
                let fd = table.fd(from);
                if fd >= 0 {
                    let new = ret(unsafe {
                        libc::syscall(libc::SYS_fcntl, fd, libc::F_DUPFD_CLOEXEC, 0)
                    });
                    if new >= 0 {
                        table.set(to, new as i32);
                    }
                }
            }
            plain(0)
        }
        Act::Exec { closes: (a, b) } => {
            for &slot in &plan.closes[a as usize..b as usize] {
                table.close_slot(slot);
            }
            plain(0)
        }
    }
}

/// Whether the replay's return `got` differs from the recorded `call.ret` as the figure
/// `diverged` counts: success against failure, another errno, or fewer bytes read or written
/// than recorded. (Descriptor numbers, offsets, addresses and child pids are the host's, and
/// never compared.)
pub fn diverged(call: &Call, got: i64) -> bool {
    match (call.ret < 0, got < 0) {
        (true, true) => call.ret != got,
        (false, false) => {
            matches!(call.act, Act::Read { .. } | Act::Write { .. }) && got < call.ret
        }
        _ => true,
    }
}

/// Reads one byte of every page of a new readable mapping that lies within its file: the page
/// faults by which the application read what it mapped (the recording sees the mmap, never
/// the faults; git reads every loose object it maps, a cold cache makes each fault a read).
/// Pages past the file's end are left alone (touching them would be SIGBUS).
fn touch(addr: *const u8, len: u64, off: u64, fd: i32) {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes into a stat the size of one.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return;
    }
    let within = (st.st_size.max(0) as u64).saturating_sub(off).min(len) as usize;
    let mut at = 0;
    while at < within {
        // SAFETY: `at` is inside the mapping and inside the file, so the page is mapped and
        // backed; a volatile read is one the compiler keeps.
        unsafe { std::ptr::read_volatile(addr.add(at)) };
        at += 4096;
    }
}

/// chown of the file a descriptor is open on, as fchownat(fd, "", AT_EMPTY_PATH): an O_PATH
/// descriptor too, which fchown(2) refuses and a recorded fchownat accepted.
fn chown_fd(fd: i32, uid: u32, gid: u32) -> i64 {
    // SAFETY: an empty C string and plain integers; the descriptor is the replay's own.
    ret(unsafe {
        libc::syscall(
            libc::SYS_fchownat,
            fd,
            c"".as_ptr(),
            uid,
            gid,
            libc::AT_EMPTY_PATH,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_paths_name_the_descriptor() {
        let mut buf = [0u8; 32];
        for fd in [0, 7, 42, 1_000_000] {
            let p = proc_path(fd, &mut buf);
            // SAFETY: proc_path wrote a NUL-terminated string into buf.
            let text = unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_owned();
            assert_eq!(text, format!("/proc/self/fd/{fd}"));
        }
    }
}
