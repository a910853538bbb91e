//! The page-cache state of a test file: evicting it, and measuring how much of it is resident.
//!
//! Eviction is per file: write back dirty pages (fdatasync), then POSIX_FADV_DONTNEED. Residency
//! is then *checked* with mincore(2) instead of assumed, because some filesystems cannot drop
//! their pages (on tmpfs the page cache is the storage). The per-file method needs no root and
//! leaves the rest of the system's cache alone; dropping every cache (`drop_caches`) belongs to
//! the target layer.

use serde::Serialize;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// The cache state a measurement started from, as recorded with each result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheState {
    /// Every page of the file was in the page cache.
    Warm,
    /// No page of the file was in the page cache.
    Cold,
    /// Some pages were cached (see the resident percentage).
    Partial,
    /// The page cache was bypassed (O_DIRECT).
    Direct,
    /// The pass created a new file: there was nothing to cache.
    NewFile,
    /// Residency could not be measured (mincore refused the file).
    Unknown,
}

impl CacheState {
    /// The state implied by the resident fraction (0.0 ..= 1.0) of a file's pages.
    pub fn from_resident(fraction: f64) -> CacheState {
        if fraction >= 1.0 {
            CacheState::Warm
        } else if fraction <= 0.0 {
            CacheState::Cold
        } else {
            CacheState::Partial
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CacheState::Warm => "warm",
            CacheState::Cold => "cold",
            CacheState::Partial => "partial",
            CacheState::Direct => "direct",
            CacheState::NewFile => "new-file",
            CacheState::Unknown => "unknown",
        }
    }
}

/// Writes back and evicts the file's pages from the page cache.
pub fn evict(file: &File) -> io::Result<()> {
    evict_range(file, 0, 0)
}

/// [`evict`] for `len` bytes from `offset` (0: to the end), leaving the rest of the file —
/// other ranks' segments of a shared file — as it is.
pub fn evict_range(file: &File, offset: u64, len: u64) -> io::Result<()> {
    file.sync_data()?;
    // SAFETY: the descriptor is open for the lifetime of `file`; a length of 0 means to the end.
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

/// The fraction (0.0 ..= 1.0) of the pages of the file at `path` resident in the page cache,
/// by mincore(2) on a read-only mapping (so it works whatever mode the test opened the file in).
/// An empty file counts as fully resident.
/// On FUSE the answer would be wrong, not missing: the kernel's page cache may hold nothing
/// while the daemon serves reads from its own cache (zfs-fuse's ARC at memory speed), so
/// residency is reported as not measurable there (the caller records `unknown`).
pub fn resident_fraction(path: &std::path::Path) -> io::Result<f64> {
    resident_fraction_range(path, 0, None)
}

/// [`resident_fraction`] of `len` bytes from `offset` (a page boundary); `None`: to the end.
pub fn resident_fraction_range(
    path: &std::path::Path,
    offset: u64,
    len: Option<u64>,
) -> io::Result<f64> {
    let file = File::open(path)?;
    if is_fuse(&file) {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "page-cache residency cannot be measured on FUSE (the daemon caches by itself)",
        ));
    }
    let end = file.metadata()?.len();
    let len = len.map_or(end, |l| l.min(end.saturating_sub(offset)));
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn states_from_residency() {
        assert_eq!(CacheState::from_resident(1.0), CacheState::Warm);
        assert_eq!(CacheState::from_resident(0.0), CacheState::Cold);
        assert_eq!(CacheState::from_resident(0.5), CacheState::Partial);
    }

    #[test]
    fn a_freshly_written_file_is_resident_and_eviction_is_measured() {
        // /var/tmp is on a disk-backed filesystem on usual hosts, where eviction works; on tmpfs
        // the pages stay, and the measurement must say so rather than claim "cold".
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let path = dir.path().join("f");
        let mut file = File::create(&path).unwrap();
        file.write_all(&vec![1u8; 1 << 20]).unwrap();
        assert_eq!(resident_fraction(&path).unwrap(), 1.0);
        evict(&file).unwrap();
        let after = resident_fraction(&path).unwrap();
        let fs = fsbench_measure::host::mount_of(dir.path()).unwrap().fs_type;
        if fs == "tmpfs" {
            assert_eq!(after, 1.0);
        } else {
            assert!(after < 0.1, "{after} resident after eviction on {fs}");
        }
    }
}
