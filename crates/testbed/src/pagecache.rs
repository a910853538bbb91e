//! The page cache as the kernel is asked directly, for `RealSystem`: a file (or every file of
//! a tree) written back and evicted (fdatasync, POSIX_FADV_DONTNEED), and the fraction of it
//! still resident (mincore). `cache` decides what to ask, through `System`.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens `path` to read it, never through a symlink at its last component nor waiting
/// on a FIFO.
fn open(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

pub fn evict(path: &Path, offset: u64, len: u64) -> io::Result<()> {
    let file = open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return evict_tree(path);
    }
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file or directory",
        ));
    }
    evict_file(&file, offset, len)
}

fn evict_file(file: &File, offset: u64, len: u64) -> io::Result<()> {
    file.sync_data()?;
    // SAFETY: the descriptor is open for the lifetime of `file`; a length of 0 means to
    // the end.
    let rc = unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            offset as libc::off_t,
            len as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        )
    };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Every regular file under `dir` (symlinks are not followed), as well as it goes: a file
/// that vanished or cannot be opened is skipped.
fn evict_tree(dir: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)?.flatten() {
        match entry.file_type() {
            Ok(t) if t.is_dir() => {
                let _ = evict_tree(&entry.path());
            }
            Ok(t) if t.is_file() => {
                if let Ok(file) = open(&entry.path()) {
                    let _ = evict_file(&file, 0, 0);
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// By mincore(2) on a read-only mapping (so it works whatever mode the workload opened the
/// file in). An empty range counts as fully resident. On FUSE the answer would be wrong,
/// not missing: the kernel's page cache may hold nothing while the daemon serves reads from
/// its own cache (zfs-fuse's ARC at memory speed), so residency is not measurable there.
pub fn resident(path: &Path, offset: u64, len: u64) -> io::Result<f64> {
    let file = open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "residency is measured on regular files",
        ));
    }
    if is_fuse(&file) {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "page-cache residency cannot be measured on FUSE (the daemon caches by itself)",
        ));
    }
    let end = file.metadata()?.len();
    let len = if len == 0 {
        end.saturating_sub(offset)
    } else {
        len.min(end.saturating_sub(offset))
    };
    let len = if offset >= end { 0 } else { len as usize };
    if len == 0 {
        return Ok(1.0);
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    let pages = len.div_ceil(page);
    // SAFETY: mapping a regular file read-only and shared; the result is checked before use.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            offset as libc::off_t,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let mut vec = vec![0u8; pages];
    // SAFETY: addr..addr+len is our mapping, and vec has one byte per page of it.
    let rc = unsafe { libc::mincore(addr, len, vec.as_mut_ptr()) };
    let result = if rc == 0 {
        Ok(vec.iter().filter(|&&b| b & 1 == 1).count() as f64 / pages as f64)
    } else {
        Err(io::Error::last_os_error())
    };
    // SAFETY: unmapping exactly the mapping created above.
    unsafe { libc::munmap(addr, len) };
    result
}

/// FUSE_SUPER_MAGIC, as statfs(2) reports it for every FUSE filesystem.
const FUSE_SUPER_MAGIC: i64 = 0x6573_5546;

fn is_fuse(file: &File) -> bool {
    // SAFETY: statfs is plain data; fstatfs fills it for an open descriptor.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open for the lifetime of `file`; `st` is writable.
    let rc = unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) };
    rc == 0 && st.f_type as i64 == FUSE_SUPER_MAGIC
}
