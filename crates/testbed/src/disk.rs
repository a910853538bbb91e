//! Which physical disk a device or an image file lives on, and what sysfs says about it (model,
//! vendor, rotational, size): provenance for results, and where a backing file's scheduler is.

use crate::system::System;
pub use fsbench_model::target::DiskIdentity;
use std::path::{Path, PathBuf};

/// The sysfs directory of the whole disk holding block device number `major:minor` (a
/// partition resolves to its disk).
fn disk_dir(major: u32, minor: u32) -> Option<PathBuf> {
    let resolved = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    if resolved.join("partition").exists() {
        resolved.parent().map(Path::to_path_buf)
    } else {
        Some(resolved)
    }
}

/// The sysfs directory of the disk under a block device node.
pub fn disk_of_device(sys: &dyn System, device: &Path) -> Option<PathBuf> {
    let (major, minor) = sys.block_device_number(device).ok()??;
    disk_dir(major, minor)
}

/// The sysfs directory of the disk holding a file (an image's backing disk).
pub fn disk_of_file(path: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    disk_dir(libc::major(dev), libc::minor(dev))
}

/// What sysfs says about the disk at `dir`.
pub fn identity(sys: &dyn System, dir: &Path) -> DiskIdentity {
    let read = |rel: &str| {
        sys.read_file(&dir.join(rel))
            .ok()
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
    };
    DiskIdentity {
        name: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        model: read("device/model"),
        vendor: read("device/vendor"),
        rotational: read("queue/rotational").map(|r| r == "1"),
        size_bytes: read("size")
            .and_then(|s| s.parse::<u64>().ok())
            .map(|s| s * 512),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::RecordingSystem;

    #[test]
    fn reads_what_sysfs_has_and_leaves_the_rest_empty() {
        let sys = RecordingSystem::new();
        sys.set_file("/sys/block/vdb/device/vendor", "0x1af4\n");
        sys.set_file("/sys/block/vdb/queue/rotational", "1\n");
        sys.set_file("/sys/block/vdb/size", "2048\n");
        let id = identity(&sys, Path::new("/sys/block/vdb"));
        assert_eq!(id.name, "vdb");
        assert_eq!(id.model, None);
        assert_eq!(id.vendor.as_deref(), Some("0x1af4"));
        assert_eq!(id.rotational, Some(true));
        assert_eq!(id.size_bytes, Some(1 << 20));
    }

    #[test]
    fn the_disk_under_a_real_file_is_found() {
        let dir = disk_of_file(Path::new("/var/tmp"));
        // Only on hosts whose /var/tmp is on a block device (not tmpfs or overlay).
        if let Some(dir) = dir {
            assert!(dir.join("queue").exists(), "{}", dir.display());
        }
    }
}
