//! ZFS through zfs-fuse: a pool on the block device, created and mounted by `zpool create`
//! (the user-space daemon serves it over FUSE). "mkfs options" are `zpool create` options
//! (`-o ashift=12`); "mount options" are dataset properties (`atime=off,compression=lz4`),
//! given as `-O key=value`. The check is a scrub followed by `zpool status`.
//!
//! The ARC cache lives in the daemon's memory, so `drop_caches` does not empty it; a cold cache
//! needs `--cache remount` (export and import).

use super::{Filesystem, Lifecycle, Tool};
use crate::system::{Cmd, CmdOutput};
use std::path::Path;

pub struct Zfs;

impl Filesystem for Zfs {
    fn name(&self) -> &'static str {
        "zfs"
    }
    /// zfs-fuse needs FUSE in the kernel, not zfs.
    fn kernel_name(&self) -> &'static str {
        "fuse"
    }
    fn tools(&self) -> Vec<Tool> {
        ["zfs-fuse", "zpool", "zfs"]
            .map(|program| Tool {
                program,
                package: "zfs-fuse",
            })
            .to_vec()
    }
    fn lifecycle(&self) -> Lifecycle {
        Lifecycle::ZfsPool
    }
    fn min_device_bytes(&self) -> u64 {
        // zpool accepts 64 MiB, but zfs-fuse 0.7 then spins at full CPU in `zpool create` and
        // never returns (seen at 64 and 96 MiB; 128 MiB works).
        128 << 20
    }
    fn mkfs(&self, device: &Path, user_options: &[String]) -> Cmd {
        // The pool name and mount point are filled in by `create_pool`; this form is what the
        // read-back shows when no pool exists yet.
        create_pool("POOL", Path::new("MOUNTPOINT"), device, user_options, &[])
    }
    fn mount_type(&self) -> &'static str {
        "fuse.zfs"
    }
    fn fsck(&self, _device: &Path) -> Option<Cmd> {
        None
    }
    fn fsck_clean(&self, output: &CmdOutput) -> bool {
        output.success() && output.stdout.contains("is healthy")
    }
    fn versions(&self) -> Vec<Cmd> {
        vec![Cmd::new("dpkg-query").args(["-W", "-f", "zfs-fuse ${Version}\n", "zfs-fuse"])]
    }
    fn readback(&self, _device: &Path) -> Option<Cmd> {
        None
    }
}

/// `zpool create -f -m MOUNTPOINT [pool options] [-O property=value ...] POOL DEVICE`.
pub fn create_pool(
    pool: &str,
    mountpoint: &Path,
    device: &Path,
    pool_options: &[String],
    properties: &[String],
) -> Cmd {
    let mut cmd = zpool()
        .args(["create", "-f", "-m"])
        .arg(mountpoint.display().to_string())
        .args(pool_options.iter().cloned());
    for property in properties {
        cmd = cmd.arg("-O").arg(property.clone());
    }
    cmd.arg(pool).arg(device.display().to_string())
}

/// How long a zpool or zfs command may take: zfs-fuse has been seen to spin for ever in
/// `zpool create`; a bounded wait turns that into a failed sample instead of a hung campaign.
pub const ZFS_COMMAND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// `zpool ARGS`, bounded by [`ZFS_COMMAND_TIMEOUT`].
fn zpool() -> Cmd {
    Cmd::new("zpool").timeout(ZFS_COMMAND_TIMEOUT)
}

/// Where fsbench processes take turns with zfs-fuse: it runs one daemon per host, and a second
/// fsbench would adopt the first one's daemon (which the first then stops under it).
pub const HOST_LOCK: &str = "/run/lock/fsbench-zfs-fuse.lock";

/// Starts the daemon with a pid file of ours.
pub fn start_daemon(pidfile: &Path) -> Cmd {
    Cmd::new("zfs-fuse")
        .arg("--pidfile")
        .arg(pidfile.display().to_string())
}

/// Succeeds when a daemon answers.
pub fn ping() -> Cmd {
    zpool()
        .arg("list")
        .timeout(std::time::Duration::from_secs(20))
}

pub fn destroy(pool: &str) -> Cmd {
    zpool().args(["destroy", "-f", pool])
}

pub fn export(pool: &str) -> Cmd {
    zpool().args(["export", pool])
}

pub fn import(pool: &str, device_dir: &Path) -> Cmd {
    zpool()
        .args(["import", "-d"])
        .arg(device_dir.display().to_string())
        .arg(pool)
}

pub fn scrub(pool: &str) -> Cmd {
    zpool().args(["scrub", pool])
}

pub fn status(pool: &str) -> Cmd {
    zpool().args(["status", pool])
}

pub fn healthy(pool: &str) -> Cmd {
    zpool().args(["status", "-x", pool])
}

/// Effective pool and dataset properties that differ from the defaults.
pub fn readback(pool: &str) -> Cmd {
    Cmd::new("zfs").timeout(ZFS_COMMAND_TIMEOUT).args([
        "get",
        "-H",
        "-o",
        "property,value,source",
        "all",
        pool,
    ])
}

/// Splits "atime=off,compression=lz4" into dataset properties.
pub fn properties(mount_options: Option<&str>) -> Vec<String> {
    mount_options
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}
