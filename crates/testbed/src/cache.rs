//! The page cache, in one place: the state a workload starts from as an explicit setting —
//! warm (as left), drop (sync + drop_caches, checked in /proc/meminfo), remount (umount +
//! mount, on the target), or direct (the workload bypasses the cache with O_DIRECT) — and what
//! a running workload asks for between its steps: every cache dropped, one file (or a tree)
//! written back and evicted, its residency measured. Every action goes through [`System`], so
//! the recording fake sees each drop and eviction; what was actually reached is recorded.
//!
//! Eviction is per file: write back dirty pages (fdatasync), then POSIX_FADV_DONTNEED; it needs
//! no root and leaves the rest of the system's cache alone. Residency is then *checked* with
//! mincore(2) instead of assumed, because some filesystems cannot drop their pages (on tmpfs
//! the page cache is the storage).

use crate::system::System;
use std::path::Path;

pub use fsbench_model::target::{CacheReached, MemInfo};
pub use fsbench_model::CachePolicy;

pub fn parse_meminfo(text: &str) -> MemInfo {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024)
    };
    MemInfo {
        cached_bytes: field("Cached:"),
        dirty_bytes: field("Dirty:"),
        writeback_bytes: field("Writeback:"),
    }
}

/// Drops the page, dentry and inode caches of every filesystem (after a sync): "dropped", or
/// why it cannot be done (it needs root).
pub fn drop_all(sys: &dyn System) -> Result<String, String> {
    sys.sync();
    sys.write_file(Path::new("/proc/sys/vm/drop_caches"), "3")
        .map(|()| "dropped".to_string())
        .map_err(|e| format!("cannot drop caches ({e}): that needs root"))
}

/// Writes back and evicts the `len` bytes at `offset` of the file at `path` (`len` 0: to its
/// end; a directory: every file under it, whole), then measures what stays resident: Some
/// fraction (0..=1), or None when residency cannot be measured there (FUSE, a directory).
pub fn evict(sys: &dyn System, path: &Path, offset: u64, len: u64) -> Result<Option<f64>, String> {
    sys.evict(path, offset, len)
        .map_err(|e| format!("cannot evict {} from the page cache: {e}", path.display()))?;
    Ok(sys.resident(path, offset, len).ok())
}

/// The fraction (0..=1) of the `len` bytes at `offset` of the file at `path` (`len` 0: to its
/// end) that is in the page cache, or why it cannot be measured.
pub fn resident(sys: &dyn System, path: &Path, offset: u64, len: u64) -> Result<f64, String> {
    sys.resident(path, offset, len)
        .map_err(|e| format!("cannot measure what of {} is cached: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields_in_bytes() {
        let m =
            parse_meminfo("MemTotal: 100 kB\nCached:  2048 kB\nDirty:  4 kB\nWriteback: 0 kB\n");
        assert_eq!(m.cached_bytes, 2048 * 1024);
        assert_eq!(m.dirty_bytes, 4096);
        assert_eq!("cold".parse(), Ok(CachePolicy::Drop));
        assert!("hot".parse::<CachePolicy>().is_err());
    }

    #[test]
    fn a_freshly_written_file_is_resident_and_eviction_is_measured() {
        use std::io::Write;
        let sys = crate::RealSystem;
        // /var/tmp is on a disk-backed filesystem on usual hosts, where eviction works; on tmpfs
        // the pages stay, and the measurement must say so rather than claim "cold".
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let path = dir.path().join("f");
        let mut file = std::fs::File::create(&path).unwrap();
        file.write_all(&vec![1u8; 1 << 20]).unwrap();
        assert_eq!(resident(&sys, &path, 0, 0).unwrap(), 1.0);
        let after = evict(&sys, &path, 0, 0).unwrap().unwrap();
        let fs = fsbench_measure::host::mount_of(dir.path()).unwrap().fs_type;
        if fs == "tmpfs" {
            assert_eq!(after, 1.0);
        } else {
            assert!(after < 0.1, "{after} resident after eviction on {fs}");
        }
        // A directory: every file under it; its residency is not a figure.
        assert_eq!(evict(&sys, dir.path(), 0, 0), Ok(None));
        // Never through a symlink.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(evict(&sys, &link, 0, 0).is_err());
    }

    #[test]
    fn the_recording_fake_sees_every_drop_and_eviction() {
        let sys = crate::RecordingSystem::new();
        assert_eq!(drop_all(&sys), Ok("dropped".into()));
        let _ = evict(&sys, Path::new("/mnt/f"), 4096, 8192);
        assert_eq!(
            sys.log(),
            [
                "sync",
                "write /proc/sys/vm/drop_caches 3",
                "evict /mnt/f 4096 8192",
                "resident /mnt/f 4096 8192"
            ]
        );
    }
}
