//! File primitives for workloads: page-aligned buffers (as O_DIRECT needs), opening files
//! with the flags a test asks for (never through a symlink), and names of fsbench's own files
//! that no existing file has.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Alignment of every buffer: a page, which satisfies O_DIRECT on every Linux filesystem.
pub const BUFFER_ALIGN: usize = 4096;

/// A zero-initialised heap buffer whose start is aligned to [`BUFFER_ALIGN`].
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` zero bytes (at least one page).
    pub fn new(len: usize) -> AlignedBuf {
        let layout = Self::layout(len);
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, len }
    }

    fn layout(len: usize) -> Layout {
        Layout::from_size_align(len.max(BUFFER_ALIGN), BUFFER_ALIGN).expect("buffer size overflow")
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes for the lifetime of self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr was allocated with exactly this layout.
        unsafe { dealloc(self.ptr, Self::layout(self.len)) }
    }
}

/// How a test file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Create a new file; fail if it exists.
    CreateNew,
    /// Open an existing file for writing (no truncation).
    Write,
    /// Open a file for writing, creating it when missing, never truncating it (a file other
    /// processes write at once).
    Create,
    /// Open an existing file for reading.
    Read,
    /// Open an existing file for reading and writing.
    ReadWrite,
}

/// Opens `path`, never through a symlink (O_NOFOLLOW: these are fsbench's own files, and a
/// symlink at their name is someone else's); with `direct` the page cache is bypassed
/// (O_DIRECT).
pub fn open(path: &Path, mode: OpenMode, direct: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    match mode {
        OpenMode::CreateNew => options.write(true).create_new(true),
        OpenMode::Write => options.write(true),
        OpenMode::Create => options.write(true).create(true),
        OpenMode::Read => options.read(true),
        OpenMode::ReadWrite => options.read(true).write(true),
    };
    let mut flags = libc::O_NOFOLLOW;
    if direct {
        flags |= libc::O_DIRECT;
    }
    options.custom_flags(flags);
    options.open(path)
}

/// Makes something new in `dir` under a name nothing there has: `<stem>-<pid>-<n><ext>`, `n`
/// counting up past names that exist (a user's file, a leftover of a process that had the
/// same pid), so fsbench never opens, truncates or later removes what it did not make.
/// `make` creates the path and must fail with `AlreadyExists` when anything is there
/// ([`OpenMode::CreateNew`]: O_CREAT|O_EXCL, which never follows a symlink; mkdir).
pub fn create_unique<T>(
    dir: &Path,
    stem: &str,
    ext: &str,
    make: impl FnMut(&Path) -> io::Result<T>,
) -> io::Result<(T, PathBuf)> {
    // One counter per process: threads and runs in one process never race for a name.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    unique(dir, stem, ext, &NEXT, make)
}

fn unique<T>(
    dir: &Path,
    stem: &str,
    ext: &str,
    next: &AtomicU64,
    mut make: impl FnMut(&Path) -> io::Result<T>,
) -> io::Result<(T, PathBuf)> {
    let pid = std::process::id();
    for _ in 0..TRIES {
        let n = next.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{stem}-{pid}-{n}{ext}"));
        match make(&path) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            made => return made.map(|t| (t, path)),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "{TRIES} names {stem}-{pid}-N{ext} in {} are taken: remove the ones no run needs",
            dir.display()
        ),
    ))
}

/// How many names [`create_unique`] tries before it gives up.
const TRIES: u32 = 1000;

/// A new, empty file in `dir` under a name no file has ([`create_unique`]), open for writing.
pub fn create_new_file(
    dir: &Path,
    stem: &str,
    ext: &str,
    direct: bool,
) -> io::Result<(File, PathBuf)> {
    create_unique(dir, stem, ext, |path| {
        open(path, OpenMode::CreateNew, direct)
    })
}

/// Makes the file `path` once: unless a regular file is there already (what is there is not
/// followed: a symlink at the name is no file of fsbench's and is replaced), `fill` writes it
/// under a name no file has in the same directory ([`create_new_file`]); it is synced and
/// renamed over `path` (rename(2) replaces the name, never writing through it), or removed
/// when anything fails. Returns whether it was made now. So a file of the data directory is
/// made by one run and read by the later ones, and a killed run leaves no half-written file at
/// the name.
pub fn create_once(
    path: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<bool> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file()) {
        return Ok(false);
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let stem = format!(
        "{}.partial",
        path.file_name().unwrap_or_default().to_string_lossy()
    );
    let (mut file, tmp) = create_new_file(dir, &stem, "", false)?;
    let made = fill(&mut file)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if made.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    made.map(|()| true)
}

/// Transfers on a raw descriptor for timed loops: one system call per record in the common
/// case, retrying short transfers and EINTR, with no allocation and no `Option` to unwrap.
///
/// The calls go to the kernel through `syscall(2)`, not glibc's `read`/`write` wrappers: those
/// are thread-cancellation points, and in a process with more than one thread (fsbench has a
/// signal-handling thread) glibc wraps each call in `__pthread_enable_asynccancel` and
/// `__pthread_disable_asynccancel`, two atomic updates and ~45 instructions that a
/// single-threaded C loop does not pay (bench/README.md). The kernel does the same work.
pub mod raw {
    use std::io;
    use std::os::fd::RawFd;

    /// `syscall(number, fd, buffer, length[, offset])`, as the wrappers' signed result.
    #[inline(always)]
    unsafe fn transfer(
        number: libc::c_long,
        fd: RawFd,
        buf: *const u8,
        len: usize,
        offset: u64,
    ) -> isize {
        // SAFETY: the caller passes a buffer valid for `len` bytes, and the read numbers only
        // write within it; syscall(2) takes its arguments as machine words.
        unsafe {
            libc::syscall(number, fd as libc::c_long, buf, len, offset as libc::c_long) as isize
        }
    }

    fn check(n: isize) -> io::Result<usize> {
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    fn eof() -> io::Error {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "file ended before the record was read",
        )
    }

    macro_rules! retry {
        ($call:expr) => {
            loop {
                match check($call) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    other => break other,
                }
            }
        };
    }

    /// Writes all of `buf` at the file position (write(2)).
    #[inline]
    pub fn write_all(fd: RawFd, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            // SAFETY: buf is valid for buf.len() bytes.
            let n = retry!(unsafe { transfer(libc::SYS_write, fd, buf.as_ptr(), buf.len(), 0) })?;
            if n == 0 {
                return Err(io::Error::from(io::ErrorKind::WriteZero));
            }
            buf = &buf[n..];
        }
        Ok(())
    }

    /// Writes all of `buf` at `offset` (pwrite(2)).
    #[inline]
    pub fn pwrite_all(fd: RawFd, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            // SAFETY: buf is valid for buf.len() bytes.
            let n = retry!(unsafe {
                transfer(libc::SYS_pwrite64, fd, buf.as_ptr(), buf.len(), offset)
            })?;
            if n == 0 {
                return Err(io::Error::from(io::ErrorKind::WriteZero));
            }
            buf = &buf[n..];
            offset += n as u64;
        }
        Ok(())
    }

    /// Fills `buf` from the file position (read(2)); a file that ends first is `UnexpectedEof`.
    #[inline]
    pub fn read_exact(fd: RawFd, mut buf: &mut [u8]) -> io::Result<()> {
        while !buf.is_empty() {
            // SAFETY: buf is valid and writable for buf.len() bytes.
            let n =
                retry!(unsafe { transfer(libc::SYS_read, fd, buf.as_mut_ptr(), buf.len(), 0) })?;
            if n == 0 {
                return Err(eof());
            }
            buf = &mut buf[n..];
        }
        Ok(())
    }

    /// Reads up to `buf.len()` bytes from the file position; 0 means end of file.
    #[inline]
    pub fn read_some(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: buf is valid and writable for buf.len() bytes.
        retry!(unsafe { transfer(libc::SYS_read, fd, buf.as_mut_ptr(), buf.len(), 0) })
    }

    /// Fills `buf` from `offset` (pread(2)); a file that ends first is `UnexpectedEof`.
    #[inline]
    pub fn pread_exact(fd: RawFd, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            // SAFETY: buf is valid and writable for buf.len() bytes.
            let n = retry!(unsafe {
                transfer(libc::SYS_pread64, fd, buf.as_mut_ptr(), buf.len(), offset)
            })?;
            if n == 0 {
                return Err(eof());
            }
            buf = &mut buf[n..];
            offset += n as u64;
        }
        Ok(())
    }
}

/// The directory-relative calls (`openat`, `mkdirat`, `unlinkat`, ...) through syscall(2), as
/// [`raw`] issues transfers, for the metadata and small-file workloads: names are made before
/// the timed loops, so a timed call passes a ready `CStr`.
pub mod at {
    use std::ffi::CStr;
    use std::io;
    use std::os::fd::RawFd;

    fn check(ret: libc::c_long) -> io::Result<libc::c_long> {
        if ret < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(ret)
        }
    }

    #[inline]
    pub fn openat(
        dir: RawFd,
        name: &CStr,
        flags: libc::c_int,
        mode: libc::mode_t,
    ) -> io::Result<RawFd> {
        // SAFETY: name is NUL-terminated; the kernel reads it only.
        check(unsafe {
            libc::syscall(
                libc::SYS_openat,
                dir,
                name.as_ptr(),
                flags | libc::O_CLOEXEC,
                mode,
            )
        })
        .map(|fd| fd as RawFd)
    }

    #[inline]
    pub fn close(fd: RawFd) -> io::Result<()> {
        // SAFETY: fd was opened by this module and is closed once.
        check(unsafe { libc::syscall(libc::SYS_close, fd) }).map(drop)
    }

    #[inline]
    pub fn fsync(fd: RawFd) -> io::Result<()> {
        // SAFETY: plain descriptor argument.
        check(unsafe { libc::syscall(libc::SYS_fsync, fd) }).map(drop)
    }

    #[inline]
    pub fn mkdirat(dir: RawFd, name: &CStr) -> io::Result<()> {
        // SAFETY: name is NUL-terminated.
        check(unsafe { libc::syscall(libc::SYS_mkdirat, dir, name.as_ptr(), 0o755) }).map(drop)
    }

    #[inline]
    pub fn unlinkat(dir: RawFd, name: &CStr, flags: libc::c_int) -> io::Result<()> {
        // SAFETY: name is NUL-terminated.
        check(unsafe { libc::syscall(libc::SYS_unlinkat, dir, name.as_ptr(), flags) }).map(drop)
    }

    #[inline]
    pub fn renameat(dir: RawFd, from: &CStr, to: &CStr) -> io::Result<()> {
        // SAFETY: both names are NUL-terminated.
        check(unsafe { libc::syscall(libc::SYS_renameat, dir, from.as_ptr(), dir, to.as_ptr()) })
            .map(drop)
    }

    /// rename(2) from one directory to another.
    #[inline]
    pub fn rename_between(
        from_dir: RawFd,
        from: &CStr,
        to_dir: RawFd,
        to: &CStr,
    ) -> io::Result<()> {
        // SAFETY: both names are NUL-terminated.
        check(unsafe {
            libc::syscall(
                libc::SYS_renameat,
                from_dir,
                from.as_ptr(),
                to_dir,
                to.as_ptr(),
            )
        })
        .map(drop)
    }

    #[inline]
    pub fn fstatat(dir: RawFd, name: &CStr, stat: &mut libc::stat) -> io::Result<()> {
        // SAFETY: name is NUL-terminated; stat is a valid, writable struct stat.
        check(unsafe {
            libc::syscall(
                libc::SYS_newfstatat,
                dir,
                name.as_ptr(),
                stat as *mut libc::stat,
                0,
            )
        })
        .map(drop)
    }

    /// openat2(2) with `resolve` (RESOLVE_BENEATH, ...): how a name is kept inside a directory.
    pub fn openat2(dir: RawFd, name: &CStr, flags: libc::c_int, resolve: u64) -> io::Result<RawFd> {
        // SAFETY: open_how is plain data (its fields are set below; zero is "nothing").
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = (flags | libc::O_CLOEXEC) as u64;
        how.resolve = resolve;
        // SAFETY: name is NUL-terminated; how is a valid open_how of the size passed.
        check(unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir,
                name.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        })
        .map(|fd| fd as RawFd)
    }

    /// The target of the symlink `name`, in `buf`; EINVAL when it is not a symlink.
    pub fn readlinkat<'b>(dir: RawFd, name: &CStr, buf: &'b mut [u8]) -> io::Result<&'b [u8]> {
        // SAFETY: name is NUL-terminated; buf is valid and writable for buf.len() bytes.
        let n = check(unsafe {
            libc::syscall(
                libc::SYS_readlinkat,
                dir,
                name.as_ptr(),
                buf.as_mut_ptr(),
                buf.len(),
            )
        })? as usize;
        if n == buf.len() {
            return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
        }
        Ok(&buf[..n])
    }

    #[inline]
    pub fn symlinkat(target: &CStr, dir: RawFd, name: &CStr) -> io::Result<()> {
        // SAFETY: both strings are NUL-terminated; the kernel reads them only.
        check(unsafe { libc::syscall(libc::SYS_symlinkat, target.as_ptr(), dir, name.as_ptr()) })
            .map(drop)
    }

    /// A hard link `to_dir/to` to `from_dir/from` (never following `from` if it is a symlink).
    #[inline]
    pub fn linkat(from_dir: RawFd, from: &CStr, to_dir: RawFd, to: &CStr) -> io::Result<()> {
        // SAFETY: both names are NUL-terminated.
        check(unsafe {
            libc::syscall(
                libc::SYS_linkat,
                from_dir,
                from.as_ptr(),
                to_dir,
                to.as_ptr(),
                0,
            )
        })
        .map(drop)
    }

    /// Bytes of directory entries read into `buf`; 0 at the end of the directory.
    #[inline]
    pub fn getdents64(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: buf is valid and writable for buf.len() bytes.
        check(unsafe { libc::syscall(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len()) })
            .map(|n| n as usize)
    }

    /// Opens a directory by path (set-up, not a timed call).
    pub fn open_dir(path: &std::path::Path) -> io::Result<std::os::fd::OwnedFd> {
        use std::os::fd::FromRawFd;
        let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let fd = openat(libc::AT_FDCWD, &name, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
        // SAFETY: fd was just opened and is owned here alone.
        Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
    }

    /// Entries in a getdents64 buffer of `len` bytes.
    pub fn count_entries(buf: &[u8], len: usize) -> u64 {
        let (mut at, mut entries) = (0usize, 0u64);
        // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name.
        while at + 18 < len {
            let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
            if reclen == 0 {
                break;
            }
            entries += 1;
            at += reclen;
        }
        entries
    }
}

/// Free bytes and inodes of the filesystem of `path`, for an unprivileged writer (statvfs
/// f_bavail, f_favail); inodes are `u64::MAX` where the filesystem makes them on demand.
pub fn free_space(path: &Path) -> Option<(u64, u64)> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: plain data; statvfs fills it for a NUL-terminated path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    let inodes = if st.f_files == 0 {
        u64::MAX // btrfs and others allocate inodes on demand
    } else {
        st.f_favail as u64
    };
    Some((st.f_bavail as u64 * st.f_frsize as u64, inodes))
}

/// The preferred I/O size of an open file (st_blksize), as stdio uses for its buffer.
pub fn preferred_block_size(file: &File) -> usize {
    use std::os::unix::fs::MetadataExt;
    file.metadata()
        .map(|m| m.blksize() as usize)
        .ok()
        .filter(|&b| b > 0)
        .unwrap_or(BUFFER_ALIGN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_zeroed() {
        for len in [1, 4096, 5000, 1 << 20] {
            let mut b = AlignedBuf::new(len);
            assert_eq!(b.as_slice().as_ptr() as usize % BUFFER_ALIGN, 0);
            assert_eq!(b.len(), len);
            assert!(b.as_slice().iter().all(|&x| x == 0));
            b.as_mut_slice()[len - 1] = 7;
            assert_eq!(b.as_slice()[len - 1], 7);
        }
    }

    #[test]
    fn raw_transfers_round_trip_and_report_short_files() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let file = open(&path, OpenMode::CreateNew, false).unwrap();
        raw::write_all(file.as_raw_fd(), &[1u8; 3000]).unwrap();
        raw::pwrite_all(file.as_raw_fd(), &[2u8; 1000], 3000).unwrap();
        let file = open(&path, OpenMode::Read, false).unwrap();
        let mut buf = [0u8; 4000];
        raw::pread_exact(file.as_raw_fd(), &mut buf, 0).unwrap();
        assert!(buf[..3000].iter().all(|&b| b == 1) && buf[3000..].iter().all(|&b| b == 2));
        let err = raw::pread_exact(file.as_raw_fd(), &mut buf, 1).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        raw::read_exact(file.as_raw_fd(), &mut buf).unwrap();
        assert_eq!(raw::read_some(file.as_raw_fd(), &mut buf).unwrap(), 0);
        assert_eq!(
            raw::read_exact(file.as_raw_fd(), &mut buf)
                .unwrap_err()
                .kind(),
            io::ErrorKind::UnexpectedEof
        );
    }

    #[test]
    fn unique_names_pass_over_what_exists_and_never_follow_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        // A user's file and a symlink at the first names this counter gives.
        let pid = std::process::id();
        let planted_file = dir.path().join(format!("x-{pid}-0.dat"));
        let planted_link = dir.path().join(format!("x-{pid}-1.dat"));
        std::fs::write(&planted_file, b"user data").unwrap();
        std::os::unix::fs::symlink(&victim, &planted_link).unwrap();
        let next = AtomicU64::new(0);
        let (mut file, path) = unique(dir.path(), "x", ".dat", &next, |p| {
            open(p, OpenMode::CreateNew, false)
        })
        .unwrap();
        use std::io::Write;
        file.write_all(b"fsbench").unwrap();
        assert_eq!(path, dir.path().join(format!("x-{pid}-2.dat")));
        assert_eq!(std::fs::read(&planted_file).unwrap(), b"user data");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read(&path).unwrap(), b"fsbench");
        // Opening an existing name never goes through a symlink either.
        let err = open(&planted_link, OpenMode::Write, false).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ELOOP));
        // Directories too (mkdir), and the process-wide counter gives a fresh name.
        let ((), made) = create_unique(dir.path(), "d", "", |p| std::fs::create_dir(p)).unwrap();
        assert!(made.is_dir());
    }

    #[test]
    fn create_new_refuses_an_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        open(&path, OpenMode::CreateNew, false).unwrap();
        let err = open(&path, OpenMode::CreateNew, false).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        open(&path, OpenMode::Write, false).unwrap();
    }
}
