//! Directories reached beneath the one an archive is extracted to, so that no entry of a
//! hostile archive is written outside it, at the cost of one open per directory.
//!
//! Entries are created with `*at` calls relative to their parent directory, and the parents
//! are kept open: an archive lists a directory's entries together, so most entries need no
//! lookup at all. A parent is opened component by component with `O_NOFOLLOW`; a component
//! that is a symlink (a real tree's `include/asm -> asm-x86`, which a later entry may use as a
//! path) is followed only under the kernel's `RESOLVE_BENEATH` (openat2, Linux 5.6), which
//! refuses absolute targets and `..` above the directory, or, where the kernel lacks openat2,
//! by reading the links here with the same rules. The last component of an entry is created,
//! never opened: files with `O_CREAT|O_EXCL`, which never follows a symlink.

use crate::fileio::at;
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// How a path through a symlink is followed without leaving the directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolver {
    /// openat2(2) with RESOLVE_BENEATH and RESOLVE_NO_MAGICLINKS: the kernel refuses what
    /// leaves. Falls back to [`Resolver::Walk`] where the kernel has no openat2 (ENOSYS, or
    /// EPERM from a seccomp filter that does not know it).
    Kernel,
    /// Component by component with O_NOFOLLOW, each symlink read and its target walked here.
    Walk,
}

/// Symlinks followed on one path before it is refused (the kernel's own limit).
const MAX_LINKS: u32 = 40;

/// The directories below `root` that entries are made in.
pub struct Beneath {
    root: RawFd,
    resolver: Resolver,
    /// The directory of the last lookup: its path below the root (components joined by '/'),
    /// where each component ends in it, and each component's directory, open (O_PATH).
    path: Vec<u8>,
    ends: Vec<usize>,
    dirs: Vec<OwnedFd>,
    /// Set when a name was replaced: what is open may no longer be what the path names.
    stale: bool,
    /// A name being looked up, NUL-terminated (reused: no allocation per lookup).
    name: Vec<u8>,
}

impl Beneath {
    pub fn new(root: RawFd, resolver: Resolver) -> Beneath {
        Beneath {
            root,
            resolver,
            path: Vec::with_capacity(4096),
            ends: Vec::with_capacity(64),
            dirs: Vec::with_capacity(64),
            stale: false,
            name: Vec::with_capacity(4096),
        }
    }

    /// The directory `dir` below the root (components joined by '/', none empty, `.` or
    /// `..`; empty for the root itself), made with its missing parents as `tar` makes them.
    /// The descriptor stays open until the next call.
    pub fn dir(&mut self, dir: &[u8]) -> io::Result<RawFd> {
        if self.stale {
            self.forget_now();
        }
        // Keep the directories this path shares with the last one.
        let (mut kept, mut at) = (0, 0);
        while at < dir.len() && kept < self.ends.len() {
            let end = component_end(dir, at);
            let start = if kept == 0 {
                0
            } else {
                self.ends[kept - 1] + 1
            };
            if self.path[start..self.ends[kept]] != dir[at..end] {
                break;
            }
            kept += 1;
            at = end + 1;
        }
        self.dirs.truncate(kept);
        self.ends.truncate(kept);
        self.path.truncate(self.ends.last().copied().unwrap_or(0));
        while at < dir.len() {
            let end = component_end(dir, at);
            let fd = self.open_below(&dir[at..end], &dir[..end])?;
            if !self.path.is_empty() {
                self.path.push(b'/');
            }
            self.path.extend_from_slice(&dir[at..end]);
            self.ends.push(self.path.len());
            self.dirs.push(fd);
            at = end + 1;
        }
        Ok(self.top())
    }

    /// Forgets the open directories before the next lookup (after an entry replaced a name,
    /// which may have been a symlink one of them was reached through).
    pub fn forget(&mut self) {
        self.stale = true;
    }

    fn forget_now(&mut self) {
        self.dirs.clear();
        self.ends.clear();
        self.path.clear();
        self.stale = false;
    }

    fn top(&self) -> RawFd {
        self.dirs.last().map_or(self.root, AsRawFd::as_raw_fd)
    }

    /// Opens `component` in the last open directory (`prefix` is its whole path below the
    /// root), making it when missing; a symlink is followed beneath the root.
    fn open_below(&mut self, component: &[u8], prefix: &[u8]) -> io::Result<OwnedFd> {
        let parent = self.top();
        let name = nul_terminated(&mut self.name, component)?;
        let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW;
        let opened = match at::openat(parent, name, flags, 0) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => match at::mkdirat(parent, name) {
                Err(e) if e.raw_os_error() != Some(libc::EEXIST) => return Err(e),
                _ => at::openat(parent, name, flags, 0),
            },
            other => other,
        };
        match opened {
            Ok(fd) => Ok(owned(fd)),
            // O_NOFOLLOW|O_PATH|O_DIRECTORY on a symlink: ENOTDIR (on a file too).
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => self.resolve(prefix),
            Err(e) => Err(e),
        }
    }

    /// Opens the directory `path` (below the root, may go through symlinks) from the root,
    /// refusing any way out of it; the open directories are left as they are.
    pub fn resolve(&mut self, path: &[u8]) -> io::Result<OwnedFd> {
        let path = if path.is_empty() { &b"."[..] } else { path };
        if self.resolver == Resolver::Kernel {
            let name = nul_terminated(&mut self.name, path)?;
            let resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
            let mut tries = 0;
            loop {
                match at::openat2(self.root, name, libc::O_PATH | libc::O_DIRECTORY, resolve) {
                    Ok(fd) => return Ok(owned(fd)),
                    Err(e) => match e.raw_os_error() {
                        Some(libc::EXDEV) => return Err(escapes(path)),
                        // A rename elsewhere raced a `..` lookup: the kernel asks to retry.
                        Some(libc::EAGAIN) if tries < 16 => tries += 1,
                        Some(libc::ENOSYS) | Some(libc::EPERM) => {
                            self.resolver = Resolver::Walk;
                            break;
                        }
                        _ => return Err(e),
                    },
                }
            }
        }
        self.walk(path)
    }

    /// [`Beneath::resolve`] without openat2: each component opened with O_NOFOLLOW, each
    /// symlink's target walked in its place, `..` going back up what was walked (so a
    /// directory's parent is where it really is, as the kernel resolves it). Allocates: it
    /// runs only for paths through symlinks, on kernels older than 5.6.
    fn walk(&mut self, path: &[u8]) -> io::Result<OwnedFd> {
        let mut below: Vec<OwnedFd> = Vec::new();
        let mut pending: Vec<Vec<u8>> = path
            .split(|&b| b == b'/')
            .rev()
            .map(<[u8]>::to_vec)
            .collect();
        let mut links = 0;
        let mut target = [0u8; libc::PATH_MAX as usize];
        while let Some(component) = pending.pop() {
            match &component[..] {
                b"" | b"." => continue,
                b".." => {
                    if below.pop().is_none() {
                        return Err(escapes(path));
                    }
                    continue;
                }
                _ => {}
            }
            let dir = below.last().map_or(self.root, AsRawFd::as_raw_fd);
            let name =
                CString::new(component).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
            let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW;
            match at::openat(dir, &name, flags, 0) {
                Ok(fd) => below.push(owned(fd)),
                Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
                    let link = match at::readlinkat(dir, &name, &mut target) {
                        Ok(link) => link,
                        // Not a symlink: a file where a directory is needed.
                        Err(l) if l.raw_os_error() == Some(libc::EINVAL) => return Err(e),
                        Err(l) => return Err(l),
                    };
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(io::Error::from_raw_os_error(libc::ELOOP));
                    }
                    if link.first() == Some(&b'/') {
                        return Err(escapes(path));
                    }
                    pending.extend(link.split(|&b| b == b'/').rev().map(<[u8]>::to_vec));
                }
                Err(e) => return Err(e),
            }
        }
        match below.pop() {
            Some(fd) => Ok(fd),
            None => at::openat(self.root, c".", libc::O_PATH | libc::O_DIRECTORY, 0).map(owned),
        }
    }
}

/// Where the component starting at `at` ends (the next '/' or the end).
fn component_end(path: &[u8], at: usize) -> usize {
    path[at..]
        .iter()
        .position(|&b| b == b'/')
        .map_or(path.len(), |p| at + p)
}

/// `bytes` with a NUL after them, in `buf` (reused).
fn nul_terminated<'b>(buf: &'b mut Vec<u8>, bytes: &[u8]) -> io::Result<&'b CStr> {
    buf.clear();
    buf.extend_from_slice(bytes);
    buf.push(0);
    CStr::from_bytes_with_nul(buf).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn owned(fd: RawFd) -> OwnedFd {
    // SAFETY: just opened, owned here alone.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// The refusal of a path that leaves the directory through a symlink on it.
fn escapes(path: &[u8]) -> io::Error {
    io::Error::other(format!(
        "{} leads outside the directory extracted to through a symlink: {REFUSED}",
        String::from_utf8_lossy(path)
    ))
}

/// How every refusal of an archive's entry ends.
pub const REFUSED: &str =
    "fsbench refuses archives that would write outside the directory they are extracted to";
